/**
 * Events older than HOT_MS keep only their text: a watch resuming from far back must see exactly
 * what a watch that was there all along saw (types, objects, selector transitions), from the
 * texts alone.
 */
import { expect, test } from 'bun:test';
import { deepEqual, type Obj } from '../api/meta';
import { encodeStored } from '../codec/stored';
import { MvccStore } from '../store/mvcc';
import { create, remove, update } from '../store/ops';
import { WatchCache } from './cache';
import type { CacheEvent, SelectorView } from './events';
import type { Watcher } from './watcher';

const P = '/registry/configmaps/';
const cm = (name: string, labels: Record<string, string>, v: string): Obj =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', labels }, data: { v } }) as Obj;

async function settle(cache: WatchCache, rev: number): Promise<void> {
  expect(await cache.waitFresh(rev, 2000)).toBe(true);
}

const seen = (w: Watcher) =>
  w
    .take()
    .map(
      (e) =>
        `${e.type} ${e.event.rv} ${(e.obj.metadata as { name: string }).name} ${deepEqual(JSON.parse(e.text), e.obj) ? 'text=obj' : 'text!=obj'}`,
    );

test('an old event parses its text again, with the same result as when it was fresh', async () => {
  const kv = await MvccStore.open({});
  let now = 1_000_000;
  const cache = new WatchCache(kv, P, { clock: () => now });
  await cache.start();
  const start = kv.currentRevision();
  const app = (v: SelectorView) => v.labels?.app === 'web';
  const sel = { keyPrefix: `${P}ns/`, match: app, key: 'web' };
  const all = { keyPrefix: '', match: () => true, key: 'all' };
  const early = cache.watch(sel, start).watcher;
  const earlyAll = cache.watch(all, start).watcher;

  // a: created in the selection, moved out of it, back in, deleted; b: never in it.
  let r = await create(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'web' }, '1')));
  const ra = r;
  r = await create(kv, `${P}ns/b`, encodeStored(cm('b', { app: 'db' }, '1')));
  r = await update(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'db' }, '2')), ra);
  const ra2 = r;
  r = await update(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'web' }, '3')), ra2);
  r = (await remove(kv, `${P}ns/a`, r)).revision;
  await settle(cache, r);
  const fresh = seen(early);
  const freshAll = seen(earlyAll);
  expect(fresh.map((l) => l.split(' ')[0])).toEqual(['ADDED', 'DELETED', 'ADDED', 'DELETED']);
  expect(freshAll.map((l) => l.split(' ')[0])).toEqual(['ADDED', 'ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);

  // Past HOT_MS, the next batch releases them.
  const history = (cache as unknown as { history: { events: CacheEvent[] } }).history.events;
  now += 11_000;
  r = await create(kv, `${P}ns/c`, encodeStored(cm('c', { app: 'web' }, '1')));
  await settle(cache, r);
  const old = history.filter((e) => e.rv <= r - 1);
  expect(old.length).toBe(5);
  for (const e of old) {
    expect((e as unknown as { o?: Obj }).o).toBeUndefined();
    expect((e as unknown as { p?: Obj }).p).toBeUndefined();
  }
  // The newest is still whole.
  expect((history[history.length - 1] as unknown as { o?: Obj }).o).toBeDefined();

  // A watch resuming from the start now gets the same events, from the texts.
  const late = cache.watch(sel, start).watcher;
  const lateAll = cache.watch(all, start).watcher;
  expect(seen(late)).toEqual([...fresh, expect.stringMatching(/^ADDED \d+ c text=obj$/)]);
  expect(seen(lateAll)).toEqual([...freshAll, expect.stringMatching(/^ADDED \d+ c text=obj$/)]);
  // The early watches got c live, as usual.
  expect(seen(early)).toEqual([expect.stringMatching(/^ADDED \d+ c text=obj$/)]);
  cache.stop();
  await kv.close();
});

test('views are made only when a selector asks; a selector watch started later still sees transitions', async () => {
  const kv = await MvccStore.open({});
  const cache = new WatchCache(kv, P);
  await cache.start();
  const plain = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now').watcher;
  let r = await create(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'web' }, '1')));
  r = await create(kv, `${P}ns/b`, encodeStored(cm('b', { app: 'db' }, '1')));
  await settle(cache, r);
  expect(seen(plain).map((l) => l.split(' ')[0])).toEqual(['ADDED', 'ADDED']);
  const state = (cache as unknown as { state: { get(k: string): { viewIfMade: unknown } } }).state;
  // Only plain watches so far: no object and no event has a view.
  expect(state.get(`${P}ns/a`).viewIfMade).toBeUndefined();
  const history = (cache as unknown as { history: { events: CacheEvent[] } }).history.events;
  for (const e of history) expect((e as unknown as { v?: unknown }).v).toBeUndefined();

  // A selector watch from now: a's move out of the selection is a DELETED for it (its previous
  // view made from the stored bytes), b's move in an ADDED.
  const web = cache.watch({ keyPrefix: `${P}ns/`, match: (v) => v.labels?.app === 'web', key: 'web' }, 'now');
  expect(web.initial.map((c) => c.view.name)).toEqual(['a']);
  r = await update(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'db' }, '2')), r - 1);
  r = await update(kv, `${P}ns/b`, encodeStored(cm('b', { app: 'web' }, '2')), r - 1);
  await settle(cache, r);
  expect(
    seen(web.watcher)
      .map((l) => l.split(' ').slice(0, 3).join(' '))
      .map((l) => l.replace(/ \d+ /, ' ')),
  ).toEqual(['DELETED a', 'ADDED b']);
  // While it watches, changes make their views at once.
  expect(state.get(`${P}ns/b`).viewIfMade).toBeDefined();
  cache.stop();
  await kv.close();
});

test('indexed watchers get only the events of their value, now or before; the others are not signalled', async () => {
  const kv = await MvccStore.open({});
  const PP = '/registry/pods/';
  const pod = (name: string, node: string, v: string): Obj =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { nodeName: node, v } }) as Obj;
  const cache = new WatchCache(kv, PP, {
    selectableFields: (o) => ({ 'spec.nodeName': String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? '') }),
  });
  await cache.start();
  const onNode = (node: string) => ({
    keyPrefix: '',
    match: (v: SelectorView) => (v.fields?.['spec.nodeName'] ?? '') === node,
    key: `node=${node}`,
    index: { field: 'spec.nodeName', value: node },
  });
  const a = cache.watch(onNode('a'), 'now').watcher;
  const b = cache.watch(onNode('b'), 'now').watcher;
  const unscheduled = cache.watch(onNode(''), 'now').watcher;
  const byName = cache.watch(
    { keyPrefix: '', match: (v) => v.name === 'p', key: 'name=p', index: { field: 'metadata.name', value: 'p' } },
    'now',
  ).watcher;
  const everything = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now').watcher;
  const signals = new Map<Watcher, number>();
  for (const w of [a, b, unscheduled, byName, everything]) {
    signals.set(w, 0);
    w.onSignal = () => signals.set(w, (signals.get(w) ?? 0) + 1);
  }
  const types = (w: Watcher) => w.take().map((e) => `${e.type} ${e.obj.metadata.name}`);

  // p: unscheduled, bound to a, moved to b, deleted; q: on a only.
  let r = await create(kv, `${PP}ns/p`, encodeStored(pod('p', '', '1')));
  await settle(cache, r);
  expect(signals.get(a)).toBe(0);
  expect(signals.get(b)).toBe(0);
  r = await update(kv, `${PP}ns/p`, encodeStored(pod('p', 'a', '2')), r);
  r = await update(kv, `${PP}ns/p`, encodeStored(pod('p', 'b', '3')), r);
  r = await create(kv, `${PP}ns/q`, encodeStored(pod('q', 'a', '1')));
  const rq = r;
  r = (await remove(kv, `${PP}ns/p`, r - 1)).revision;
  await settle(cache, r);
  expect(types(a)).toEqual(['ADDED p', 'DELETED p', 'ADDED q']);
  expect(types(b)).toEqual(['ADDED p', 'DELETED p']);
  expect(types(unscheduled)).toEqual(['ADDED p', 'DELETED p']);
  expect(types(byName)).toEqual(['ADDED p', 'MODIFIED p', 'MODIFIED p', 'DELETED p']);
  expect(types(everything)).toEqual(['ADDED p', 'MODIFIED p', 'MODIFIED p', 'ADDED q', 'DELETED p']);

  // Only watchers that got events are signalled: a change of q on a leaves b alone.
  const before = signals.get(b);
  r = await update(kv, `${PP}ns/q`, encodeStored(pod('q', 'a', '2')), rq);
  await settle(cache, r);
  expect(types(a)).toEqual(['MODIFIED q']);
  expect(signals.get(b)).toBe(before);
  expect(types(b)).toEqual([]);

  // An ended watcher leaves the index: the next event on a reaches no one but the others.
  a.end('closed');
  expect(cache.watcherCount).toBe(4);
  r = await update(kv, `${PP}ns/q`, encodeStored(pod('q', 'a', '3')), r);
  await settle(cache, r);
  expect(types(a)).toEqual([]);
  expect(types(everything)).toEqual(['MODIFIED q', 'MODIFIED q']);
  const indexed = (cache as unknown as { watchers: { indexed: Map<string, Map<string, Set<Watcher>>> } }).watchers.indexed;
  expect([...(indexed.get('spec.nodeName')?.keys() ?? [])].sort()).toEqual(['', 'b']);
  cache.stop();
  await kv.close();
});

test('listWhere: an index by a selector field, built on first use, kept up to date, in key order', async () => {
  const kv = await MvccStore.open({});
  const PP = '/registry/pods/';
  const pod = (ns: string, name: string, node: string): Obj =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { nodeName: node } }) as Obj;
  const fields = (o: Obj) => ({
    'spec.nodeName': String((o.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
    'f.a': 'x',
    'f.b': 'x',
    'f.c': 'x',
    'f.d': 'x',
  });
  const cache = new WatchCache(kv, PP, { selectableFields: fields });
  await cache.start();
  const revs = new Map<string, number>();
  const put = async (ns: string, name: string, node: string) => {
    const key = `${PP}${ns}/${name}`;
    const prev = revs.get(key);
    const r =
      prev === undefined
        ? await create(kv, key, encodeStored(pod(ns, name, node)))
        : await update(kv, key, encodeStored(pod(ns, name, node)), prev);
    revs.set(key, r);
    return r;
  };
  let r = 0;
  for (const [ns, name, node] of [
    ['b', 'p2', 'n1'],
    ['a', 'p9', 'n1'],
    ['a', 'p1', 'n2'],
    ['a', 'p3', 'n1'],
  ] as const)
    r = await put(ns, name, node);
  await settle(cache, r);
  const names = (l: { key: string }[] | undefined) => l?.map((c) => c.key.slice(PP.length));
  // Built now, from the objects already there.
  expect(names(cache.listWhere('', 'spec.nodeName', 'n1'))).toEqual(['a/p3', 'a/p9', 'b/p2']);
  expect(names(cache.listWhere(`${PP}a/`, 'spec.nodeName', 'n1'))).toEqual(['a/p3', 'a/p9']);
  expect(names(cache.listWhere('', 'spec.nodeName', 'n3'))).toEqual([]);
  // Kept up to date: a new object, one moved to another value, one deleted.
  r = await put('a', 'p0', 'n1');
  r = await put('a', 'p9', 'n2');
  r = (await remove(kv, `${PP}b/p2`, revs.get(`${PP}b/p2`) as number)).revision;
  await settle(cache, r);
  expect(names(cache.listWhere('', 'spec.nodeName', 'n1'))).toEqual(['a/p0', 'a/p3']);
  expect(names(cache.listWhere('', 'spec.nodeName', 'n2'))).toEqual(['a/p1', 'a/p9']);
  // A watch from now with that index starts with the same objects.
  const n1 = cache.watch(
    { keyPrefix: '', match: (v) => v.fields?.['spec.nodeName'] === 'n1', index: { field: 'spec.nodeName', value: 'n1' } },
    'now',
  );
  expect(names(n1.initial)).toEqual(['a/p0', 'a/p3']);
  n1.watcher.end('closed');
  // At most four fields are indexed: the fifth is the caller's to filter.
  expect(cache.listWhere('', 'f.a', 'x')).toHaveLength(4);
  expect(cache.listWhere('', 'f.b', 'x')).toHaveLength(4);
  expect(cache.listWhere('', 'f.c', 'x')).toHaveLength(4);
  expect(cache.listWhere('', 'f.d', 'x')).toBeUndefined();
  cache.stop();
  await kv.close();
});

test('namespace watchers get only the events of their namespace and are signalled only for them', async () => {
  const kv = await MvccStore.open({});
  const cache = new WatchCache(kv, P);
  await cache.start();
  const inNs = (ns: string) => cache.watch({ keyPrefix: `${P}${ns}/`, match: () => true, all: true }, 'now').watcher;
  const a = inNs('a');
  const b = inNs('b');
  const signals = new Map<Watcher, number>([
    [a, 0],
    [b, 0],
  ]);
  for (const w of [a, b]) w.onSignal = () => signals.set(w, (signals.get(w) ?? 0) + 1);
  const inA = (name: string) => ({ ...cm(name, {}, '1'), metadata: { name, namespace: 'a' } }) as Obj;
  let r = await create(kv, `${P}a/x`, encodeStored(inA('x')));
  r = await create(kv, `${P}a/y`, encodeStored(inA('y')));
  // A namespace whose name starts like another's is not it.
  r = await create(kv, `${P}ab/z`, encodeStored({ ...inA('z'), metadata: { name: 'z', namespace: 'ab' } } as Obj));
  await settle(cache, r);
  expect(a.take().map((e) => e.obj.metadata.name)).toEqual(['x', 'y']);
  expect(b.take()).toEqual([]);
  expect(signals.get(b)).toBe(0);
  expect(signals.get(a)).toBeGreaterThan(0);
  b.end('closed');
  a.end('closed');
  expect((cache as unknown as { watchers: { byNamespace: Map<string, unknown> } }).watchers.byNamespace.size).toBe(0);
  cache.stop();
  await kv.close();
});

test('a cache first started for a watch from an earlier revision serves the history after it; a compacted one is 410', async () => {
  const kv = await MvccStore.open({});
  const ra = await create(kv, `${P}ns/a`, encodeStored(cm('a', {}, '1')));
  // Other writes after it: the store's revision moves on before the cache is ever used.
  const rb = await create(kv, `${P}ns/b`, encodeStored(cm('b', {}, '1')));
  await create(kv, '/registry/secrets/ns/s', encodeStored(cm('s', {}, '1')));
  const cache = new WatchCache(kv, P);
  await cache.start(ra);
  const all = { keyPrefix: '', match: () => true, key: 'all' };
  const w = cache.watch(all, ra).watcher;
  const rc = await update(kv, `${P}ns/a`, encodeStored(cm('a', {}, '2')), ra);
  await settle(cache, rc);
  expect(seen(w).map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([`ADDED ${rb} b`, `MODIFIED ${rc} a`]);
  // The state is the newest, as if the cache had been there all along.
  expect(cache.list().map((c) => c.rv)).toEqual([rc, rb]);
  cache.stop();

  // History the store no longer has: the cache starts at the newest state, and the watch is 410.
  await kv.compact(rc);
  const late = new WatchCache(kv, P);
  await late.start(ra);
  expect(() => late.watch(all, ra)).toThrow('too old resource version');
  late.stop();
});

test('lists by namespace: an empty namespace gives none, one with objects its own only, and emptied again none', async () => {
  const kv = await MvccStore.open({});
  const cache = new WatchCache(kv, P);
  await cache.start();
  const inNs = (ns: string, name: string) => encodeStored({ ...cm(name, {}, '1'), metadata: { name, namespace: ns } } as Obj);
  const names = (prefix: string) => cache.list(prefix).map((c) => c.key.slice(P.length));
  expect(names(`${P}a/`)).toEqual([]);
  let r = await create(kv, `${P}a/x`, inNs('a', 'x'));
  r = await create(kv, `${P}ab/y`, inNs('ab', 'y'));
  await settle(cache, r);
  expect(names(`${P}a/`)).toEqual(['a/x']);
  expect(names(`${P}ab/`)).toEqual(['ab/y']);
  expect(names(`${P}b/`)).toEqual([]);
  // A prefix that is not a namespace's (a name prefix) still walks the keys.
  expect(names(`${P}a`)).toEqual(['a/x', 'ab/y']);
  expect(names('')).toEqual(['a/x', 'ab/y']);
  r = (await remove(kv, `${P}a/x`, r - 1)).revision;
  await settle(cache, r);
  expect(names(`${P}a/`)).toEqual([]);
  expect(names(`${P}ab/`)).toEqual(['ab/y']);
  cache.stop();
  await kv.close();
});

test("a delete's object is parsed once and shared by its readers while recent, and not kept once released", async () => {
  const kv = await MvccStore.open({});
  let now = 1_000_000;
  const cache = new WatchCache(kv, P, { clock: () => now });
  await cache.start();
  const start = kv.currentRevision();
  const a = cache.watch({ keyPrefix: '', match: () => true, key: 'a' }, start).watcher;
  const b = cache.watch({ keyPrefix: '', match: () => true, key: 'b' }, start).watcher;
  let r = await create(kv, `${P}ns/x`, encodeStored(cm('x', { app: 'web' }, '1')));
  r = await update(kv, `${P}ns/x`, encodeStored(cm('x', { app: 'db' }, '2')), r);
  r = (await remove(kv, `${P}ns/x`, r)).revision;
  await settle(cache, r);
  const [, , delA] = a.take();
  const [, , delB] = b.take();
  expect(delA?.type).toBe('DELETED');
  // Both watchers' readers get the one parsed object (each of a dozen controllers parsed it again).
  expect(delA?.obj).toBe(delB?.obj as Obj);
  expect(delA?.obj.data).toEqual({ v: '2' });
  expect(delA?.event.prev).toBe(delB?.event.prev as Obj);
  // Released (past HOT_MS, at the next batch): read again, it is parsed again and not held.
  now += 11_000;
  r = await create(kv, `${P}ns/y`, encodeStored(cm('y', {}, '1')));
  await settle(cache, r);
  const e = delA?.event as CacheEvent;
  const first = e.obj;
  expect(first.data).toEqual({ v: '2' });
  expect(e.obj).not.toBe(first);
  expect((e as unknown as { o?: Obj }).o).toBeUndefined();
  expect((e as unknown as { p?: Obj }).p).toBeUndefined();
  cache.stop();
  await kv.close();
});

test('stateGeneration: the same while nothing changes, new after each create, update and delete', async () => {
  const kv = await MvccStore.open({});
  const cache = new WatchCache(kv, P);
  await cache.start();
  const seenGens = new Set([cache.stateGeneration]);
  const step = async (rev: number) => {
    expect(await cache.waitFresh(rev, 2000)).toBe(true);
    expect(seenGens.has(cache.stateGeneration)).toBe(false);
    seenGens.add(cache.stateGeneration);
  };
  const r1 = await create(kv, `${P}ns/a`, encodeStored(cm('a', {}, '1')));
  await step(r1);
  const unchanged = cache.stateGeneration;
  // Writes elsewhere in the store do not change this cache's state.
  await create(kv, '/registry/secrets/ns/s', encodeStored(cm('s', {}, '1')));
  await Bun.sleep(20);
  expect(cache.stateGeneration).toBe(unchanged);
  const r2 = await update(kv, `${P}ns/a`, encodeStored(cm('a', {}, '2')), r1);
  await step(r2);
  await step((await remove(kv, `${P}ns/a`, r2)).revision);
  cache.stop();
  await kv.close();
});

test('past PARSED_MS and before HOT_MS an event keeps its text and lines but not its parsed object: read again, parsed once and kept', async () => {
  const kv = await MvccStore.open({});
  let now = 2_000_000;
  const cache = new WatchCache(kv, P, { clock: () => now });
  await cache.start();
  const history = (cache as unknown as { history: { events: CacheEvent[] } }).history.events;
  const r1 = await create(kv, `${P}ns/a`, encodeStored(cm('a', { app: 'web' }, '1')));
  await settle(cache, r1);
  const e = history[history.length - 1] as CacheEvent;
  const inner = e as unknown as { o?: Obj; t?: string };
  const written = inner.o;
  expect(written).toBeDefined();
  const text = inner.t;
  expect(text).toBeDefined();
  // 50 ms later (past PARSED_MS = 20, before HOT_MS = 100), the next batch drops the object only.
  now += 50;
  const r2 = await create(kv, `${P}ns/b`, encodeStored(cm('b', { app: 'web' }, '1')));
  await settle(cache, r2);
  expect(inner.o).toBeUndefined();
  expect(inner.t).toBe(text);
  const again = e.obj;
  expect(again).not.toBe(written);
  expect(again).toEqual(written as Obj);
  // Parsed once, then kept until the event is released.
  expect(e.obj).toBe(again);
  // The newer event is whole.
  expect((history[history.length - 1] as unknown as { o?: Obj }).o).toBeDefined();
  // Past HOT_MS, released: nothing parsed is kept any more.
  now += 200;
  const r3 = await create(kv, `${P}ns/c`, encodeStored(cm('c', { app: 'web' }, '1')));
  await settle(cache, r3);
  expect(inner.o).toBeUndefined();
  expect(inner.t).toBeUndefined();
  expect(e.obj).toEqual(written as Obj);
  expect(inner.o).toBeUndefined();
  cache.stop();
  await kv.close();
});
