/**
 * The controllers' watch-following loop: every follower of one cache gets the same parsed objects
 * for the objects present at its start (one parse each, not one per controller: a restart with
 * 100k pods and a dozen followers spent 24 s parsing), and a follower that needs none parses none.
 */
import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { encodeStored } from '../codec/stored';
import { MvccStore } from '../store/mvcc';
import { create } from '../store/ops';
import { WatchCache } from '../watch/cache';
import { follow, followChanges } from './workqueue';

const P = '/registry/pods/';
const pod = (name: string): Obj =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [] } }) as Obj;

async function loadedCache(names: string[]): Promise<{ cache: WatchCache; kv: MvccStore }> {
  const kv = await MvccStore.open({});
  // Written before the cache starts: the objects a restarted server loads, held as bytes only.
  for (const n of names) await create(kv, `${P}ns/${n}`, encodeStored(pod(n)));
  const cache = new WatchCache(kv, P);
  await cache.start();
  return { cache, kv };
}

const firstBatch = (start: (got: (objs: Obj[]) => void) => { stop(): void }): Promise<{ objs: Obj[]; stop(): void }> =>
  new Promise((resolve) => {
    const f = start((objs) => resolve({ objs, stop: () => f.stop() }));
  });

test('followers of one cache share the parsed objects present at their start', async () => {
  const { cache } = await loadedCache(['a', 'b', 'c']);
  const one = await firstBatch((got) => follow(cache, got, () => {}));
  const two = await firstBatch((got) => follow(cache, got, () => {}));
  expect(one.objs.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
  expect(two.objs).toHaveLength(3);
  for (let i = 0; i < 3; i++) expect(two.objs[i]).toBe(one.objs[i] as Obj);
  // The parse is the cache's shared one, as a controller reading a pod later gets it.
  expect(cache.get(`${P}ns/b`)?.shared).toBe(one.objs[1] as Obj);
  one.stop();
  two.stop();
});

test('a follower without initial objects parses none, and still sees every change', async () => {
  const { cache, kv } = await loadedCache(['a', 'b']);
  let resets = 0;
  const changes: string[] = [];
  const f = followChanges(
    cache,
    () => resets++,
    (o, type) => changes.push(`${type} ${o.metadata.name}`),
  );
  await Bun.sleep(0);
  expect(resets).toBe(1);
  for (const n of ['a', 'b']) expect((cache.get(`${P}ns/${n}`) as unknown as { memo?: WeakRef<Obj> }).memo).toBeUndefined();
  const r = await create(kv, `${P}ns/d`, encodeStored(pod('d')));
  expect(await cache.waitFresh(r, 2000)).toBe(true);
  for (let i = 0; i < 50 && changes.length === 0; i++) await Bun.sleep(5);
  expect(changes).toEqual(['ADDED d']);
  f.stop();
});
