/**
 * A watch cache's object indexes: the keys of its current objects by the value of a selector
 * field (field → value → keys). One is built on the first list that selects by its field (list,
 * WatchCache.listWhere), then kept up to date by every change, so that a kubelet's list of its
 * node's pods reads its own pods, not all of them (the reference's watch cache indexes pods by
 * spec.nodeName). At most MAX_OBJECT_INDEXES fields.
 *
 * They are a view of the cache's state, not part of it, so they are apart from the cache's core
 * (cache.ts): they read the state (CacheState) and are told each change of a key (update), and
 * nothing in loading, following or evicting needs them. The cache asks `size` before telling
 * them a change, so a resource listed by no field pays nothing per event. The counts of lists
 * served from the cache, by the index they read, are kept here too (apiserver_cache_list_total).
 */
import { type CachedObject, viewField } from './events';
import { addTo, removeFrom } from './sets';
import type { CacheState } from './state';

/** Fields a watch cache indexes its objects by at most (see ObjectIndexes.list). */
const MAX_OBJECT_INDEXES = 4;

export class ObjectIndexes {
  /** Keys by field and value: one entry per indexed field. */
  private readonly byField = new Map<string, Map<string, Set<string>>>();
  /** Lists served from the cache, by the index they read ('' none, `f:<field>` a field's). */
  readonly served = new Map<string, number>();

  constructor(private readonly state: CacheState) {}

  /** Fields indexed: 0 when no change needs to be told (update). */
  get size(): number {
    return this.byField.size;
  }

  /** Forget every index (the state is loaded again; the next lists build them anew). */
  clear(): void {
    this.byField.clear();
  }

  /** Count a list served from the cache (apiserver_cache_list_total). */
  note(index: string): void {
    this.served.set(index, (this.served.get(index) ?? 0) + 1);
  }

  /**
   * The current objects with keys starting with `from` whose selector field `field` has `value`,
   * in key order, read from the field's index (built now, in one pass over the state, if this is
   * the first list by `field`); undefined when there are already MAX_OBJECT_INDEXES other
   * indexes or most objects have `value` (the caller then filters a list of the state).
   */
  list(from: string, field: string, value: string): CachedObject[] | undefined {
    let byValue = this.byField.get(field);
    if (byValue === undefined) {
      if (this.byField.size >= MAX_OBJECT_INDEXES) return undefined;
      byValue = new Map();
      this.state.forEach((key, c) => {
        addTo(byValue as Map<string, Set<string>>, viewField(c.view, field), key);
      });
      this.byField.set(field, byValue);
    }
    const keys = byValue.get(value);
    if (keys === undefined) return [];
    // A value most objects have (the unscheduled pods of a large cluster) is cheaper to filter
    // the state for (in key order already) than to sort the index's keys for.
    if (keys.size > 1024 && keys.size * 8 > this.state.size) return undefined;
    const out: CachedObject[] = [];
    for (const k of [...keys].sort()) {
      if (!k.startsWith(from)) continue;
      const c = this.state.get(k);
      if (c !== undefined) out.push(c);
    }
    return out;
  }

  /** Move `key` in the indexes from `before`'s values to `after`'s (either absent). */
  update(key: string, before: CachedObject | undefined, after: CachedObject | undefined): void {
    for (const [field, byValue] of this.byField) {
      const was = before === undefined ? undefined : viewField(before.view, field);
      const now = after === undefined ? undefined : viewField(after.view, field);
      if (was === now) continue;
      if (was !== undefined) removeFrom(byValue, was, key);
      if (now !== undefined) addTo(byValue, now, key);
    }
  }
}
