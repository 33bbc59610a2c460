/**
 * Passes in slices: a short pass ends in the caller's turn; a long one lets other work run
 * between its slices, keeps the items' order, and ends where it is when told to stop.
 */
import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { encodeStored } from '../codec/stored';
import { MvccStore } from '../store/mvcc';
import { create } from '../store/ops';
import { WatchCache } from './cache';
import { eachInSlices, sharedObjects } from './slices';

test('a pass done within its first slice ends in the same turn', () => {
  const seen: number[] = [];
  const r = eachInSlices([1, 2, 3], (x) => seen.push(x));
  expect(r).toBeUndefined();
  expect(seen).toEqual([1, 2, 3]);
});

test('a long pass lets other work in between its slices, in order', async () => {
  const items = Array.from({ length: 2000 }, (_, i) => i);
  const seen: number[] = [];
  const between: number[] = [];
  // Each item takes ~0.05 ms: a 1 ms slice holds ~20 (the clock is read every 32 items).
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const tick = setInterval(() => between.push(seen.length), 0);
  const r = eachInSlices(
    items,
    (x) => {
      busy(0.05);
      seen.push(x);
    },
    () => false,
    1,
  );
  expect(r).toBeInstanceOf(Promise);
  // The first slice ran in this turn, and only part of the items.
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.length).toBeLessThan(items.length);
  await r;
  clearInterval(tick);
  expect(seen).toEqual(items);
  // Timers ran while the pass was not done.
  expect(between.some((n) => n > 0 && n < items.length)).toBe(true);
});

test('a pass told to stop ends between slices', async () => {
  const items = Array.from({ length: 10_000 }, (_, i) => i);
  let n = 0;
  let stop = false;
  const r = eachInSlices(
    items,
    () => {
      n++;
      if (n === 40) stop = true;
    },
    () => stop,
    0,
  );
  await r;
  // The slice that saw the 40th item finished its 32-item stretch (64), then the pass stopped.
  expect(n).toBe(64);
});

test('sharedObjects gives the cache shared parses, the same for every caller', async () => {
  const kv = await MvccStore.open({});
  for (let i = 0; i < 300; i++)
    await create(
      kv,
      `/registry/configmaps/ns/c${i}`,
      encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'ns' } } as Obj),
    );
  const cache = new WatchCache(kv, '/registry/configmaps/');
  await cache.start();
  const cached = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now').initial;
  const a = await sharedObjects(cached);
  const b = await sharedObjects(cached);
  expect(a).toHaveLength(300);
  expect(a.map((o) => o.metadata.name)).toEqual(cached.map((c) => c.key.slice('/registry/configmaps/ns/'.length)));
  for (let i = 0; i < 300; i++) expect(b[i]).toBe(a[i] as Obj);
});
