/**
 * Read-modify-write starts from the newest version even before it is durable (KV.latest), so
 * concurrent updates of one object chain in one log batch; but no answer built on a version
 * that is not durable may reach a client before it is. A KV wrapper holds durability back
 * until the test releases it.
 */
import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { builtinKinds } from '../kinds/builtin';
import { SchemaSet } from '../schema/engine';
import definitions from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions } from '../schema/types';
import { MvccStore } from '../store/mvcc';
import type { KV, Revision, Txn } from '../store/types';
import { ApiRegistry } from './api-registry';
import type { ResourceStore } from './generic';
import type { WriteOptions } from './options';

/** An in-memory store whose writes become durable only when release() is called. */
function heldBack(inner: MvccStore): { kv: KV; release: () => void } {
  let visible = inner.currentRevision();
  let waiters: { rev: Revision; resolve: () => void }[] = [];
  const settle = () => {
    const still: typeof waiters = [];
    for (const w of waiters) w.rev <= visible ? w.resolve() : still.push(w);
    waiters = still;
  };
  const durable = (rev: Revision) => (rev <= visible ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ rev, resolve })));
  const kv: KV = {
    currentRevision: () => visible,
    compactedRevision: () => inner.compactedRevision(),
    range: (key, opts) => inner.range(key, { ...opts, revision: opts?.revision || visible }),
    async txn(t: Txn) {
      const r = await inner.txn(t);
      await durable(r.revision);
      return r;
    },
    compact: (rev) => inner.compact(rev),
    watch: (from, opts) => inner.watch(from, opts),
    close: () => inner.close(),
    latest: (key) => inner.latest(key),
    durable,
  };
  return {
    kv,
    release: () => {
      visible = inner.currentRevision();
      settle();
    },
  };
}

const w = (o: Partial<WriteOptions> = {}): WriteOptions => ({
  dryRun: false,
  fieldValidation: 'Strict',
  warnings: [],
  fieldManager: 't',
  ...o,
});

test('updates chain on a version not yet durable; answers from it wait for it', async () => {
  const inner = await MvccStore.open({});
  const { kv, release } = heldBack(inner);
  const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
  const api = new ApiRegistry({ kv, schemas, kinds: builtinKinds(() => true) });
  const cms = api.lookup('', 'v1', 'configmaps') as ResourceStore;
  const nsStore = api.lookup('', 'v1', 'namespaces') as ResourceStore;
  /** Releases durability until `p` settles (set-up writes). */
  const done = async <T>(p: Promise<T>): Promise<T> => {
    let over = false;
    p.finally(() => {
      over = true;
    }).catch(() => {});
    while (!over) {
      release();
      await Bun.sleep(2);
    }
    return p;
  };
  await done(nsStore.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, w()));
  const created = await done(
    cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } }, w()),
  );

  const settled: string[] = [];
  const track = <T>(name: string, p: Promise<T>) =>
    p.then(
      (v) => {
        settled.push(name);
        return v;
      },
      (e) => {
        settled.push(name);
        throw e;
      },
    );
  const patch = (name: string, body: unknown, o: Partial<WriteOptions> = {}) =>
    track(name, cms.patch('default', 'x', 'merge-patch', body, w(o), '', false));

  // Two changes, neither durable: the second is computed on the first.
  const p1 = patch('p1', { data: { b: '2' } });
  const p2 = patch('p2', { data: { c: '3' } });
  // Answers that write nothing, built on p2's version: a no-op, a dry run, a failure.
  const noop = patch('noop', { data: { c: '3' } });
  const dry = patch('dry', { data: { d: '4' } }, { dryRun: true });
  const bad = patch('bad', { metadata: { name: 'other' } });
  const stale = track('stale', cms.update('default', 'x', { ...created, data: { z: '9' } } as Obj, w(), ''));
  await Bun.sleep(20);
  expect(settled).toEqual([]);
  expect(inner.currentRevision()).toBe(Number(created.metadata.resourceVersion) + 2); // both applied, in order

  release();
  const [r1, r2, rn, rd] = await Promise.all([p1, p2, noop, dry]);
  expect(r1.obj.data).toEqual({ a: '1', b: '2' });
  expect(r2.obj.data).toEqual({ a: '1', b: '2', c: '3' });
  expect(rn.obj.metadata.resourceVersion).toBe(r2.obj.metadata.resourceVersion);
  expect(rd.obj.data).toEqual({ a: '1', b: '2', c: '3', d: '4' });
  const e1 = await bad.catch((e) => e);
  expect(e1).toBeInstanceOf(StatusError);
  const e2 = await stale.catch((e) => e);
  expect((e2 as StatusError).code).toBe(409);
  expect(new Set(settled)).toEqual(new Set(['p1', 'p2', 'noop', 'dry', 'bad', 'stale']));
  await inner.close();
});
