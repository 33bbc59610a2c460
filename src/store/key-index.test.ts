import { describe, expect, test } from 'bun:test';
import { KeyIndex, tombstone } from './key-index';
import type { KeyValue } from './types';

const v = (key: string, mod: number, create: number, version: number): KeyValue => ({
  key,
  value: new TextEncoder().encode(`${key}@${mod}`),
  createRevision: create,
  modRevision: mod,
  version,
});

/** The worked example of key-index.ts: put a@1, put a@3, delete a@5, put a@7. */
function example(): KeyIndex {
  const ix = new KeyIndex();
  ix.append(v('a', 1, 1, 1));
  ix.append(v('a', 3, 1, 2));
  ix.append(tombstone('a', 5));
  ix.append(v('a', 7, 7, 1));
  return ix;
}

describe('KeyIndex', () => {
  test.each([
    [0, undefined],
    [1, 1],
    [2, 1],
    [4, 3],
    [5, undefined],
    [6, undefined],
    [7, 7],
    [100, 7],
  ])('at(a, %p) is the version of revision %p', (rev, want) => {
    expect(example().at('a', rev)?.modRevision).toBe(want);
  });

  test('compact drops versions older than the newest one at or below the revision, and leading tombstones', () => {
    const ix = example();
    ix.compact(4);
    expect(ix.at('a', 3)?.modRevision).toBe(3);
    expect(ix.at('a', 1)).toBeUndefined(); // version 1 is gone; 3 is the oldest kept
    ix.compact(6);
    expect(ix.at('a', 6)).toBeUndefined();
    expect(ix.at('a', 5)).toBeUndefined();
    expect(ix.at('a', 7)?.modRevision).toBe(7);
    expect(ix.size).toBe(1);
  });

  test('compactInSteps gives the event loop back between steps, and ends as compact() with writes in between', async () => {
    const build = () => {
      const ix = new KeyIndex();
      let rev = 0;
      for (let round = 0; round < 3; round++) for (let k = 0; k < 10; k++) ix.append(v(`k${k}`, ++rev, k + 1, round + 1));
      ix.append(tombstone('k0', ++rev));
      return { ix, rev };
    };
    const stepped = build();
    const whole = build();
    const done = stepped.ix.compactInSteps(25, 2);
    // A step of 2 keys ran before the call returned; the last key waits for a later turn.
    expect(stepped.ix.versions('k0')).toHaveLength(2); // 1, 11, 21, tombstone@31 -> 21, 31
    expect(stepped.ix.versions('k1')).toHaveLength(1); // 2, 12, 22 -> 22
    expect(stepped.ix.versions('k9')).toHaveLength(3); // 10, 20, 30: not yet
    // Writes while it runs: newer than the compacted revision, kept by both.
    for (let k = 0; k < 10; k++) {
      stepped.ix.append(v(`k${k}`, 100 + k, k + 1, 9));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await done;
    for (let k = 0; k < 10; k++) whole.ix.append(v(`k${k}`, 100 + k, k + 1, 9));
    whole.ix.compact(25);
    for (let k = 0; k < 10; k++) {
      const key = `k${k}`;
      expect(stepped.ix.versions(key)?.map((e) => stepped.ix.modOf(e))).toEqual(whole.ix.versions(key)?.map((e) => whole.ix.modOf(e)));
    }
    // The newest version at or below 25 stays, the ones before it go.
    expect(stepped.ix.versions('k9')?.map((e) => stepped.ix.modOf(e))).toEqual([20, 30, 109]);
    expect(stepped.ix.versions('k0')?.map((e) => stepped.ix.modOf(e))).toEqual([21, 31, 100]);
  });

  test('a key whose newest version is a compacted tombstone disappears from the tree', () => {
    const ix = new KeyIndex();
    ix.append(v('b', 1, 1, 1));
    ix.append(tombstone('b', 2));
    ix.append(v('c', 3, 3, 1));
    expect(ix.size).toBe(2);
    ix.compact(2);
    expect(ix.size).toBe(1);
    expect(ix.latest('b')).toBeUndefined();
    expect(ix.latest('c')?.modRevision).toBe(3);
  });

  test('scan visits live keys in order within [key, end) at a revision and can stop early', () => {
    const ix = new KeyIndex();
    for (const [k, r] of [
      ['/x/b', 1],
      ['/x/a', 2],
      ['/y/a', 3],
      ['/x/c', 4],
    ] as const)
      ix.append(v(k, r, r, 1));
    ix.append(tombstone('/x/b', 5));
    const seen = (rev: number, end = '/x0', max = 99) => {
      const out: string[] = [];
      ix.scan('/x/', end, rev, (kv) => out.push(kv.key) < max);
      return out;
    };
    expect(seen(4)).toEqual(['/x/a', '/x/b', '/x/c']);
    expect(seen(5)).toEqual(['/x/a', '/x/c']);
    expect(seen(2)).toEqual(['/x/a', '/x/b']);
    expect(seen(4, '\0')).toEqual(['/x/a', '/x/b', '/x/c', '/y/a']);
    expect(seen(4, '/x0', 2)).toEqual(['/x/a', '/x/b']);
  });

  test('appending a version not after the last one is a bug', () => {
    const ix = new KeyIndex();
    ix.append(v('k', 5, 5, 1));
    expect(() => ix.append(v('k', 5, 5, 2))).toThrow(/bug/);
  });

  test('liveReader walks the live keys at a revision in chunks, each after the last key of the one before', () => {
    const ix = new KeyIndex();
    // k00..k49 put at 1..50; every fifth deleted at 51..60; k07 put again at 61.
    for (let i = 0; i < 50; i++) ix.append(v(`k${String(i).padStart(2, '0')}`, i + 1, i + 1, 1));
    for (let i = 0; i < 50; i += 5) ix.append(tombstone(`k${String(i).padStart(2, '0')}`, 51 + i / 5));
    ix.append(v('k07', 61, 8, 2));
    const walk = (rev: number, max: number): string[] => {
      const seen: string[] = [];
      let after: string | undefined;
      const read = ix.liveReader(rev);
      for (;;) {
        const chunk = read(after, max);
        if (chunk.length === 0) return seen;
        expect(chunk.length).toBeLessThanOrEqual(max);
        for (const kv of chunk) seen.push(`${kv.key}@${kv.modRevision}`);
        after = (chunk[chunk.length - 1] as KeyValue).key;
      }
    };
    const live = (rev: number): string[] => {
      const out: string[] = [];
      ix.scan('', '\0', rev, (kv) => {
        out.push(`${kv.key}@${kv.modRevision}`);
        return true;
      });
      return out;
    };
    for (const rev of [10, 50, 55, 61]) for (const max of [1, 3, 7, 100]) expect(walk(rev, max)).toEqual(live(rev));
    expect(walk(61, 7)).toHaveLength(40);
    expect(walk(61, 7)).toContain('k07@61');
    expect(walk(50, 4)).toHaveLength(50);
    expect(new KeyIndex().liveReader(1)(undefined, 10)).toEqual([]);

    // Writes after the reader was made (the snapshot's chunks are read while writes go on): new
    // keys before, between and after the old ones, new versions of old keys, a delete: the reader
    // still reads the keys as they were at its revision.
    const before = live(61);
    const read = ix.liveReader(61);
    const first = read(undefined, 5);
    ix.append(v('a-new', 62, 62, 1));
    ix.append(v('k03x', 63, 63, 1));
    ix.append(v('k01', 64, 2, 2));
    ix.append(tombstone('k09', 65));
    ix.append(v('z-new', 66, 66, 1));
    const seen = first.map((kv) => `${kv.key}@${kv.modRevision}`);
    for (let after = first[first.length - 1]?.key; ; ) {
      const chunk = read(after, 5);
      if (chunk.length === 0) break;
      for (const kv of chunk) seen.push(`${kv.key}@${kv.modRevision}`);
      after = (chunk[chunk.length - 1] as KeyValue).key;
    }
    expect(seen).toEqual(before);
  });
});

test('KeyIndex: a key looked up, written, compacted away and written again reads as it is at each step', () => {
  const ix = new KeyIndex();
  expect(ix.latest('k')).toBeUndefined();
  expect(ix.versions('k')).toBeUndefined();
  ix.append(v('k', 1, 1, 1));
  expect(ix.latest('k')).toEqual(v('k', 1, 1, 1));
  ix.append(tombstone('k', 2));
  expect(ix.latest('k')).toBeUndefined();
  expect(ix.at('k', 1)).toEqual(v('k', 1, 1, 1));
  // Compaction drops the key altogether (its last version is a tombstone).
  ix.compact(2);
  expect(ix.versions('k')).toBeUndefined();
  expect(ix.size).toBe(0);
  ix.append(v('k', 3, 3, 1));
  expect(ix.latest('k')).toEqual(v('k', 3, 3, 1));
  expect(ix.versions('k')).toHaveLength(1);
  // Another key between two lookups of the first.
  expect(ix.latest('other')).toBeUndefined();
  expect(ix.latest('k')?.modRevision).toBe(3);
});
