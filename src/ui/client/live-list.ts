/**
 * The objects page's list kept current from its change stream: a batch of changes is applied to
 * the list the browser holds (rows replaced, inserted in key order, removed), not answered by
 * reading the list again. No DOM here (its test runs outside the browser).
 *
 * The list holds the first `limit` objects in key order, of `total`. A change past the last row
 * of a list that does not hold every object is not shown (the rows between are not known); a row
 * removed from such a list leaves it short, which the caller fills by reading it again.
 */
import type { Change, ObjectRow, Objects } from './types';

/** Key order of the watch cache: namespace, '/', name, compared as strings. */
const keyOf = (x: { namespace: string; name: string }) => `${x.namespace}/${x.name}`;

export interface Applied {
  /** The list after the changes (the same object when nothing changed; `items` too when no row did). */
  data: Objects;
  /** A list that does not hold every object lost a row: read it again to fill the page. */
  short: boolean;
}

/**
 * Apply the changes of a batch at `revision` (where the selection has `total` objects). Changes
 * at or below the list's own revision are in it already and skipped, as is a whole batch older
 * than the list.
 */
export function applyChanges(o: Objects, revision: number, total: number, changes: readonly Change[]): Applied {
  if (revision <= o.revision) return { data: o, short: false };
  let items = o.items;
  let copied = false;
  const edit = () => {
    if (!copied) items = [...items];
    copied = true;
    return items;
  };
  // Objects exist after the last row (the page is cut).
  let beyond = o.total > o.items.length;
  let short = false;
  for (const c of changes) {
    if (Number(c.resourceVersion) <= o.revision) continue;
    const k = keyOf(c);
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keyOf(items[mid] as ObjectRow) < k) lo = mid + 1;
      else hi = mid;
    }
    const at = items[lo];
    const found = at !== undefined && keyOf(at) === k;
    if (c.deleted) {
      if (!found) continue;
      edit().splice(lo, 1);
      if (beyond) short = true;
      continue;
    }
    const row: ObjectRow = { namespace: c.namespace, name: c.name, created: c.created, resourceVersion: c.resourceVersion };
    if (found) {
      if (Number(at.resourceVersion) < Number(c.resourceVersion)) edit()[lo] = row;
    } else if (lo < items.length || !beyond) {
      edit().splice(lo, 0, row);
      if (items.length > o.limit) {
        items.pop();
        beyond = true;
      }
    }
  }
  return { data: { ...o, revision, total, items }, short };
}
