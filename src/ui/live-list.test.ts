/**
 * The objects page's live list: the server's batching of a watch's changes (change-batches.ts)
 * and the browser's application of a batch to the list it holds (client/live-list.ts).
 */
import { describe, expect, test } from 'bun:test';
import { ChangeBatcher } from './change-batches';
import { applyChanges } from './client/live-list';
import type { Change, Objects } from './client/types';

const change = (name: string, rv: number, deleted = false, namespace = 'ns'): Change => ({
  namespace,
  name,
  created: 'T',
  resourceVersion: String(rv),
  ...(deleted ? { deleted: true as const } : {}),
});
const pending = (c: Change) => ({ key: `${c.namespace}/${c.name}`, describe: () => c });

describe('ChangeBatcher', () => {
  test('a lone change goes at once; later ones wait for the interval, folded per object', () => {
    const b = new ChangeBatcher({ intervalMs: 300, maxChanges: 2 });
    expect(b.dueAt(0)).toBeUndefined();
    expect(b.take(0, 1, 0)).toBeUndefined();
    b.add(pending(change('a', 1)));
    expect(b.dueAt(0)).toBe(0);
    expect(b.take(0, 1, 1)).toEqual({ revision: 1, total: 1, changes: [change('a', 1)] });
    b.add(pending(change('b', 2)));
    b.add(pending(change('b', 3)));
    expect(b.dueAt(10)).toBe(300);
    expect(b.take(10, 3, 2)).toBeUndefined();
    expect(b.take(300, 3, 2)).toEqual({ revision: 3, total: 2, changes: [change('b', 3)] });
    expect(b.pending).toBe(false);
  });

  test('more objects in one interval than maxChanges: one resync, nothing described', () => {
    const b = new ChangeBatcher({ intervalMs: 300, maxChanges: 2 });
    let described = 0;
    for (const n of ['c', 'd', 'e', 'f']) {
      const c = change(n, 5);
      b.add({
        key: n,
        describe: () => {
          described++;
          return c;
        },
      });
    }
    expect(b.take(0, 9, 4)).toEqual({ revision: 9, total: 4, resync: true });
    expect(described).toBe(0);
    // The next interval starts afresh.
    b.add(pending(change('g', 10)));
    expect(b.take(100, 10, 5)).toBeUndefined();
    expect(b.take(300, 10, 5)).toEqual({ revision: 10, total: 5, changes: [change('g', 10)] });
  });
});

const row = (name: string, rv: number) => ({ namespace: 'ns', name, created: 'T', resourceVersion: String(rv) });
const list = (names: string[], total = names.length, limit = 3, revision = 10): Objects => ({
  revision,
  total,
  limit,
  items: names.map((n) => row(n, 1)),
});
const names = (o: Objects) => o.items.map((i) => i.name);

describe('applyChanges', () => {
  test.each([
    // [case, list, changes, total after, names after, short]
    ['insert in key order', list(['a', 'c']), [change('b', 11)], 3, ['a', 'b', 'c'], false],
    ['insert past a full page: the last row goes', list(['a', 'c', 'd']), [change('b', 11)], 4, ['a', 'b', 'c'], false],
    ['past the end of a cut page: not shown', list(['a', 'b', 'c'], 5), [change('x', 11)], 6, ['a', 'b', 'c'], false],
    ['past the end of a page holding all: shown', list(['a']), [change('x', 11)], 2, ['a', 'x'], false],
    ['two appended to a page of two: the second cut', list(['a', 'b']), [change('c', 11), change('d', 12)], 4, ['a', 'b', 'c'], false],
    ['delete', list(['a', 'b']), [change('a', 11, true)], 1, ['b'], false],
    ['delete from a cut page: short', list(['a', 'b', 'c'], 5), [change('b', 11, true)], 4, ['a', 'c'], true],
    ['delete of an object not shown', list(['a']), [change('z', 11, true)], 1, ['a'], false],
    ['a change the list holds already (rv <= its revision)', list(['a']), [change('b', 10)], 2, ['a'], false],
    ['namespace before name (key order)', list(['a']), [change('a', 11, false, 'n')], 2, ['a', 'a'], false],
  ] as const)('%s', (_case, o, changes, total, after, short) => {
    const r = applyChanges(o, 12, total, changes);
    expect(names(r.data)).toEqual([...after]);
    expect(r.data.total).toBe(total);
    expect(r.data.revision).toBe(12);
    expect(r.short).toBe(short);
  });

  test('a modification replaces the row; an older batch or an unchanged page keeps the same objects', () => {
    const o = list(['a', 'b']);
    const r = applyChanges(o, 11, 2, [change('b', 11)]);
    expect(r.data.items[1]).toEqual(row('b', 11));
    expect(o.items[1]).toEqual(row('b', 1));
    expect(applyChanges(o, 9, 2, [change('c', 9)]).data).toBe(o);
    const cut = list(['a', 'b', 'c'], 5);
    expect(applyChanges(cut, 11, 6, [change('x', 11)]).data.items).toBe(cut.items);
  });
});
