/**
 * Cold objects packed by the watch cache (and the embedded store under it): every read after
 * packing sees what it saw before (gets, lists, watches from the history, updates and deletes of
 * packed objects with their previous versions, a cache loaded again from the store), and a
 * store restart loads the packed keys' bytes unchanged.
 */
import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Obj } from '../api/meta';
import { encodeStored } from '../codec/stored';
import { MvccStore } from '../store/mvcc';
import { create, remove, update } from '../store/ops';
import { PackedKeyValue, valuePacker } from '../store/packed';
import { WatchCache } from './cache';

const P = '/registry/core/pods/';
const pod = (name: string, phase: string): Obj =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', labels: { app: 'web' }, uid: `uid-${name}` },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'registry.example/app:1', imagePullPolicy: 'IfNotPresent' }] },
    status: { phase, conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True' })) },
  }) as Obj;

const AFTER_MS = 30;

async function packedAll(cache: WatchCache, keys: string[]): Promise<void> {
  const deadline = Date.now() + 5000;
  while (keys.some((k) => cache.get(k)?.rawIfHeld !== undefined)) {
    if (Date.now() > deadline) throw new Error('not packed within 5 s');
    await Bun.sleep(10);
  }
}

test('packed objects read as before: gets, lists, history, updates and deletes, a cache loaded again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cold-'));
  try {
    const kv = await MvccStore.open({ dir, fsync: 'none' });
    const cache = new WatchCache(kv, P, { packAfterMs: AFTER_MS });
    await cache.start();
    const start = kv.currentRevision();
    const keys = Array.from({ length: 50 }, (_, i) => `${P}ns/web-${i}`);
    const revs: number[] = [];
    for (const [i, k] of keys.entries()) revs.push(await create(kv, k, encodeStored(pod(`web-${i}`, 'Running'))));
    expect(await cache.waitFresh(revs.at(-1) as number, 2000)).toBe(true);
    const textsBefore = cache.list().map((c) => c.text);
    const watchAll = { keyPrefix: '', match: () => true, key: 'all' };
    await packedAll(cache, keys);

    // The store holds the same packed form (the cache's bytes were the store's).
    for (const k of keys) expect(kv.latest(k)).toBeInstanceOf(PackedKeyValue);
    expect(cache.list().map((c) => c.text)).toEqual(textsBefore);
    const got = await kv.range(P, { end: `${P}\uffff` });
    expect(got.kvs.map((x) => new TextDecoder().decode(x.value))).toEqual(cache.list().map((c) => new TextDecoder().decode(c.value)));
    // A watch from before the creates replays them from the history.
    const replay = cache.watch(watchAll, start).watcher.take();
    expect(replay.map((e) => e.type)).toEqual(keys.map(() => 'ADDED'));
    expect(replay.map((e) => e.text).sort()).toEqual([...textsBefore].sort());

    // An update and a delete of packed objects carry the previous (packed) version.
    const w = cache.watch(watchAll, 'now').watcher;
    const r1 = await update(kv, keys[0] as string, encodeStored(pod('web-0', 'Succeeded')), revs[0] as number);
    const r2 = (await remove(kv, keys[1] as string, revs[1] as number)).revision;
    expect(await cache.waitFresh(r2, 2000)).toBe(true);
    const evs = w.take();
    expect(evs.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    const phase = (o: Obj | undefined) => (o as unknown as { status: { phase: string } }).status.phase;
    expect(phase(evs[0]?.event.prev)).toBe('Running');
    expect(phase(evs[0]?.obj)).toBe('Succeeded');
    expect(evs[0]?.event.rv).toBe(r1);
    expect(evs[1]?.obj.metadata.name).toBe('web-1');
    expect(JSON.parse(evs[1]?.text as string).status.phase).toBe('Running');
    // Written again: raw until cold again; the store's old version is history, as written.
    expect(cache.get(keys[0] as string)?.rawIfHeld).toBeDefined();
    const old = await kv.range(keys[0] as string, { revision: revs[0] as number });
    expect(JSON.parse(new TextDecoder().decode(old.kvs[0]?.value)).status.phase).toBe('Running');
    await packedAll(cache, [keys[0] as string]);
    expect(JSON.parse(cache.get(keys[0] as string)?.text as string).status.phase).toBe('Succeeded');

    // Another cache over the same store takes the packed values as they are (no inflating).
    const again = new WatchCache(kv, P, { packAfterMs: AFTER_MS });
    await again.start();
    expect(again.list().map((c) => c.text)).toEqual(cache.list().map((c) => c.text));
    expect(again.get(keys[2] as string)?.rawIfHeld).toBeUndefined();
    cache.stop();
    again.stop();
    const want = cache.list().map((c) => c.text);
    await kv.close();

    // A restart reads the log and snapshot: the bytes written, whatever was held packed.
    const kv2 = await MvccStore.open({ dir, fsync: 'none' });
    const reopened = new WatchCache(kv2, P, {});
    await reopened.start();
    expect(reopened.list().map((c) => c.text)).toEqual(want);
    reopened.stop();
    await kv2.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('packing off (0): values stay as written', async () => {
  const kv = await MvccStore.open({});
  const cache = new WatchCache(kv, P, { packAfterMs: 0 });
  await cache.start();
  const r = await create(kv, `${P}ns/a`, encodeStored(pod('a', 'Running')));
  expect(await cache.waitFresh(r, 2000)).toBe(true);
  await Bun.sleep(AFTER_MS * 3);
  expect(cache.get(`${P}ns/a`)?.rawIfHeld).toBeDefined();
  expect(kv.latest(`${P}ns/a`)).not.toBeInstanceOf(PackedKeyValue);
  cache.stop();
  await kv.close();
});

/** A store and a cache on a clock the test moves (`later`), with pods `names` created and packed. */
async function packedOnClock(names: string[]) {
  const kv = await MvccStore.open({});
  const clock = { now: 1_000_000 };
  const cache = new WatchCache(kv, P, { packAfterMs: AFTER_MS, clock: () => clock.now });
  await cache.start();
  const keys = names.map((n) => `${P}ns/${n}`);
  let last = 0;
  for (const k of keys) last = await create(kv, k, encodeStored(pod(k.slice(-1), 'Running')));
  expect(await cache.waitFresh(last, 2000)).toBe(true);
  const want = keys.map((k) => new TextDecoder().decode(cache.get(k)?.value));
  const later = (ms: number) => {
    clock.now += ms;
  };
  later(AFTER_MS + 1);
  await packedAll(cache, keys);
  return { kv, cache, keys, want, later };
}

test("clients' reads: a packed object read twice within the window is held raw, then packed again as it was", async () => {
  const { kv, cache, keys, want, later } = await packedOnClock(['a', 'b', 'c']);
  const bytes = (k: string) => new TextDecoder().decode(cache.get(k)?.value);
  const [wantA, wantB] = want as [string, string, string];
  const [a, b, c] = keys as [string, string, string];
  const packedA = cache.get(a)?.heldValue;
  const reheated = () => valuePacker.stats.reheated;
  const before = reheated();

  // One read, then another after the window: still packed (each read only notes its time).
  expect(new TextDecoder().decode(cache.get(a)?.served)).toBe(wantA);
  expect(cache.get(a)?.rawIfHeld).toBeUndefined();
  later(AFTER_MS + 1);
  expect(new TextDecoder().decode(cache.get(a)?.served)).toBe(wantA);
  expect(cache.get(a)?.rawIfHeld).toBeUndefined();
  // The server's own reads (`value`) never make an object hot.
  for (let i = 0; i < 5; i++) expect(bytes(b)).toBe(wantB);
  expect(cache.get(b)?.rawIfHeld).toBeUndefined();
  // A second client read within the window: raw again, the same bytes; the store keeps the packed form.
  later(AFTER_MS - 1);
  expect(new TextDecoder().decode(cache.get(a)?.served)).toBe(wantA);
  expect(new TextDecoder().decode(cache.get(a)?.rawIfHeld)).toBe(wantA);
  expect(reheated()).toBe(before + 1);
  expect(kv.latest(a)).toBeInstanceOf(PackedKeyValue);
  const packedRuns = valuePacker.stats.values;
  // Unread for the window: packed again, as the very packed form it had (not deflated anew).
  later(AFTER_MS + 1);
  await packedAll(cache, [a]);
  expect(cache.get(a)?.heldValue).toBe(packedA);
  expect(valuePacker.stats.values).toBe(packedRuns);
  expect(bytes(a)).toBe(wantA);

  // A reader holding a version written over since: its reads do not bring the old packed form back.
  const stale = cache.get(c);
  const r = await update(kv, c, encodeStored(pod('c', 'Succeeded')), stale?.rv as number);
  expect(await cache.waitFresh(r, 2000)).toBe(true);
  stale?.served;
  stale?.served;
  expect(reheated()).toBe(before + 1);
  later(AFTER_MS + 1);
  await packedAll(cache, [c]);
  expect(JSON.parse(bytes(c)).status.phase).toBe('Succeeded');
  cache.stop();
  await kv.close();
});

test('objects held raw again by reads stay within the budget, freed as they are packed again', async () => {
  const { kv, cache, keys, later } = await packedOnClock(['a', 'b']);
  const [a, b] = keys as [string, string];
  const budget = valuePacker.warm;
  const { limit, bytes } = budget;
  try {
    // Room for one of the two.
    budget.limit = bytes + (cache.get(a)?.size as number) + 10;
    const twice = (k: string) => {
      cache.get(k)?.servedHeld;
      return cache.get(k)?.servedHeld;
    };
    expect(twice(a)).toBeInstanceOf(Uint8Array);
    expect(cache.get(a)?.rawIfHeld).toBeDefined();
    expect(budget.bytes).toBe(bytes + (cache.get(a)?.size as number));
    // Over the budget: read raw, held packed.
    expect(new TextDecoder().decode(twice(b) as Uint8Array)).toBe(new TextDecoder().decode(cache.get(b)?.value));
    expect(cache.get(b)?.rawIfHeld).toBeUndefined();
    // Once the first is packed again, its bytes are off the budget and the second may go raw.
    later(AFTER_MS + 1);
    await packedAll(cache, [a]);
    expect(budget.bytes).toBe(bytes);
    twice(b);
    expect(cache.get(b)?.rawIfHeld).toBeDefined();
    // A cache stopped gives its bytes back.
    cache.stop();
    expect(budget.bytes).toBe(bytes);
  } finally {
    budget.limit = limit;
    cache.stop();
    await kv.close();
  }
});
