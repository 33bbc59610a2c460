/**
 * The deletion lifecycle, end to end over HTTPS against the real server (spec 1 "Deletion of a
 * resource", "Forced deletion (unsafe)"):
 *
 *   - finalizers: Terminating objects, idempotent repeated deletes, removal with the last
 *     finalizer, as a watch sees it; preconditions;
 *   - the garbage collector in the Background, Foreground and Orphan modes, and after a restart;
 *   - the namespace controller: cascade, creation forbidden while Terminating, conditions while
 *     content with finalizers remains;
 *   - graceful pod deletion;
 *   - forced deletion of an undecodable object (gate AllowUnsafeMalformedObjectDeletion).
 *
 * One data dir, two server processes one after the other: the second starts after a SIGTERM
 * right behind a Background delete, with a store changed while the server was down (an owner
 * removed, a corrupt value planted).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from '../src/store/mvcc';
import { type Server, STATIC_WORKLOADS, startServer } from './helpers/server';
import { openWatch } from './helpers/watch';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-deletion-'));
const ARGS = ['--feature-gates=AllowUnsafeMalformedObjectDeletion=true', STATIC_WORKLOADS];
let srv: Server;

beforeAll(async () => {
  srv = await startServer({ dataDir, args: ARGS });
}, 30_000);
afterAll(async () => {
  if (srv && srv.proc.exitCode === null) await srv.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

async function namespace(name: string): Promise<void> {
  const r = await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  expect(r.status).toBe(201);
}

async function ok(p: Promise<{ status: number; body: Json }>, status = [200, 201]): Promise<Json> {
  const r = await p;
  if (!status.includes(r.status)) throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

function cm(name: string, meta: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { k: 'v' } };
}

function ownerRef(o: Json, extra: Record<string, unknown> = {}) {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, ...extra };
}

/** Poll `f` until it returns a truthy value (bounded). */
async function eventually<T>(what: string, f: () => Promise<T>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await f();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const status = async (p: string) => (await srv.json('GET', p)).status;
const gone = (p: string) => eventually(`${p} to be gone`, async () => (await status(p)) === 404);

/** Remove one finalizer from an object with a fresh read (others, e.g. the GC's, may change it meanwhile). */
async function dropFinalizer(p: string, f: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const cur = await ok(srv.json('GET', p));
    cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((x: string) => x !== f);
    const r = await srv.json('PUT', p, cur);
    if (r.status === 200) return;
    if (r.status !== 409) throw new Error(`PUT ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  throw new Error(`could not remove ${f} from ${p}`);
}

describe('finalizers and preconditions', () => {
  const NS = 'd-fin';

  test('delete → Terminating (still readable); delete again 200; last finalizer removed → gone; a watch sees MODIFIED then DELETED', async () => {
    await namespace(NS);
    const p = `${cms(NS)}/held`;
    const c = await ok(srv.json('POST', cms(NS), cm('held', { finalizers: ['example.com/keep'] })));
    const w = await openWatch(srv, `${cms(NS)}?watch=1&resourceVersion=${c.metadata.resourceVersion}`);
    try {
      const d1 = await srv.json('DELETE', p);
      expect(d1.status).toBe(200);
      expect(d1.body.kind).toBe('ConfigMap');
      expect(d1.body.metadata.deletionTimestamp).toMatch(RFC3339);
      expect(d1.body.metadata.deletionGracePeriodSeconds).toBe(0);
      expect(d1.body.metadata.finalizers).toEqual(['example.com/keep']);
      expect(Number(d1.body.metadata.resourceVersion)).toBeGreaterThan(Number(c.metadata.resourceVersion));

      const g = await ok(srv.json('GET', p));
      expect(g).toEqual(d1.body);

      // Deleting a Terminating object again changes nothing and answers 200 with it.
      const d2 = await srv.json('DELETE', p);
      expect(d2.status).toBe(200);
      expect(d2.body).toEqual(d1.body);

      // No new finalizers on a Terminating object.
      const add = await srv.json('PUT', p, { ...g, metadata: { ...g.metadata, finalizers: ['example.com/keep', 'example.com/more'] } });
      expect(add.status).toBe(422);
      expect(add.body.message).toContain('no new finalizers can be added if the object is being deleted');

      // An update that keeps the finalizer keeps the object (and its deletionTimestamp).
      const u = await ok(srv.json('PUT', p, { ...g, data: { k: 'changed' }, metadata: { ...g.metadata, deletionTimestamp: undefined } }));
      expect(u.metadata.deletionTimestamp).toBe(g.metadata.deletionTimestamp);
      expect(u.data).toEqual({ k: 'changed' });

      const last = await srv.json('PUT', p, { ...u, metadata: { ...u.metadata, finalizers: [] } });
      expect(last.status).toBe(200);
      expect((await srv.json('GET', p)).status).toBe(404);

      const evs = await w.take(3, 5000);
      expect(evs.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
      expect(evs[0]?.object).toEqual(d1.body);
      expect(evs[1]?.object).toEqual(u);
      expect(evs[2]?.object.metadata.name).toBe('held');
      expect(Number(evs[2]?.object.metadata.resourceVersion)).toBeGreaterThan(Number(u.metadata.resourceVersion));
      expect(await w.drain(200)).toEqual([]);
    } finally {
      await w.close();
    }
  }, 30_000);

  test('an object without finalizers is removed at once and a second delete is 404', async () => {
    const p = `${cms(NS)}/plain`;
    await ok(srv.json('POST', cms(NS), cm('plain')));
    const d = await srv.json('DELETE', p);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'plain', kind: 'configmaps' } });
    expect((await srv.json('GET', p)).status).toBe(404);
    const again = await srv.json('DELETE', p);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  test('preconditions: uid or resourceVersion mismatch → 409 Conflict, the object stays; matching ones delete', async () => {
    const p = `${cms(NS)}/pre`;
    const c = await ok(srv.json('POST', cms(NS), cm('pre')));
    const badUid = await srv.json('DELETE', p, { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } });
    expect(badUid.status).toBe(409);
    expect(badUid.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409 });
    expect(badUid.body.message).toContain('Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000');
    const badRv = await srv.json('DELETE', p, { preconditions: { resourceVersion: '1' } });
    expect(badRv.status).toBe(409);
    expect(badRv.body.reason).toBe('Conflict');
    expect(badRv.body.message).toContain('Precondition failed: ResourceVersion in precondition: 1');
    expect((await srv.json('GET', p)).status).toBe(200);
    const good = await srv.json('DELETE', p, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion },
    });
    expect(good.status).toBe(200);
    expect((await srv.json('GET', p)).status).toBe(404);
  });
});

describe('garbage collector', () => {
  const NS = 'd-gc';

  beforeAll(async () => {
    await namespace(NS);
  });

  test.each([
    ['propagationPolicy=Background', '?propagationPolicy=Background'],
    ['the default policy', ''],
  ])(
    '%s: the owner goes at once, its dependents (Json kind) shortly after',
    async (label, q) => {
      const tag = q ? 'bg' : 'def';
      const owner = await ok(srv.json('POST', cms(NS), cm(`owner-${tag}`)));
      const deps = [];
      for (let i = 0; i < 3; i++)
        deps.push(await ok(srv.json('POST', cms(NS), cm(`dep-${tag}-${i}`, { ownerReferences: [ownerRef(owner)] }))));
      const secret = await ok(
        srv.json('POST', `/api/v1/namespaces/${NS}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `secret-${tag}`, ownerReferences: [ownerRef(owner)] },
          stringData: { a: 'b' },
        }),
      );
      // Not a dependent: another owner.
      const other = await ok(srv.json('POST', cms(NS), cm(`other-${tag}`)));
      const keep = await ok(srv.json('POST', cms(NS), cm(`keep-${tag}`, { ownerReferences: [ownerRef(other)] })));
      // Two owners, one of which stays: only the dangling reference goes.
      const both = await ok(srv.json('POST', cms(NS), cm(`both-${tag}`, { ownerReferences: [ownerRef(owner), ownerRef(other)] })));

      const d = await srv.json('DELETE', `${cms(NS)}/${owner.metadata.name}${q}`);
      expect({ label, status: d.status }).toEqual({ label, status: 200 });
      expect((await srv.json('GET', `${cms(NS)}/${owner.metadata.name}`)).status).toBe(404);
      for (const dep of deps) await gone(`${cms(NS)}/${dep.metadata.name}`);
      await gone(`/api/v1/namespaces/${NS}/secrets/${secret.metadata.name}`);
      const b = await eventually('the dangling owner reference to go', async () => {
        const r = await ok(srv.json('GET', `${cms(NS)}/${both.metadata.name}`));
        return r.metadata.ownerReferences?.length === 1 ? r : undefined;
      });
      expect(b.metadata.ownerReferences).toEqual([ownerRef(other)]);
      expect((await srv.json('GET', `${cms(NS)}/${keep.metadata.name}`)).status).toBe(200);
    },
    30_000,
  );

  test('an owner reference removed by an update no longer makes a dependent; one added by an update does', async () => {
    const owner = await ok(srv.json('POST', cms(NS), cm('upd-owner')));
    const freed = await ok(srv.json('POST', cms(NS), cm('upd-freed', { ownerReferences: [ownerRef(owner)] })));
    const adopted = await ok(srv.json('POST', cms(NS), cm('upd-adopted')));
    // Updates by PUT: the reference goes from one, comes to the other (the collector follows both).
    const { ownerReferences: _, ...meta } = freed.metadata;
    await ok(srv.json('PUT', `${cms(NS)}/upd-freed`, { ...freed, metadata: meta }));
    await ok(
      srv.json('PUT', `${cms(NS)}/upd-adopted`, { ...adopted, metadata: { ...adopted.metadata, ownerReferences: [ownerRef(owner)] } }),
    );
    // Another update of the freed one that names none of owners, finalizers or deletion.
    const again = await ok(srv.json('GET', `${cms(NS)}/upd-freed`));
    await ok(srv.json('PUT', `${cms(NS)}/upd-freed`, { ...again, data: { changed: 'yes' } }));
    expect((await srv.json('DELETE', `${cms(NS)}/upd-owner`)).status).toBe(200);
    await gone(`${cms(NS)}/upd-adopted`);
    // The collector had its turn (the adopted one is gone): the freed one stays.
    expect((await srv.json('GET', `${cms(NS)}/upd-freed`)).status).toBe(200);
  }, 30_000);

  test('Background across kinds: a Deployment owning a ReplicaSet that owns a ConfigMap', async () => {
    const d = await ok(
      srv.json('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
        },
      }),
    );
    const rs = await ok(
      srv.json('POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web-1', ownerReferences: [ownerRef(d, { controller: true, blockOwnerDeletion: true })] },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
        },
      }),
    );
    await ok(srv.json('POST', cms(NS), cm('web-config', { ownerReferences: [ownerRef(rs)] })));
    expect((await srv.json('DELETE', `/apis/apps/v1/namespaces/${NS}/deployments/web`)).status).toBe(200);
    await gone(`/apis/apps/v1/namespaces/${NS}/replicasets/web-1`);
    await gone(`${cms(NS)}/web-config`);
  }, 30_000);

  test('Foreground: the owner stays with the foregroundDeletion finalizer until its blocking dependents are gone', async () => {
    const owner = await ok(srv.json('POST', cms(NS), cm('owner-fg')));
    const held = await ok(
      srv.json(
        'POST',
        cms(NS),
        cm('fg-held', { finalizers: ['example.com/hold'], ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] }),
      ),
    );
    await ok(srv.json('POST', cms(NS), cm('fg-block', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] })));
    await ok(srv.json('POST', cms(NS), cm('fg-free', { ownerReferences: [ownerRef(owner)] })));
    const op = `${cms(NS)}/owner-fg`;

    const d = await srv.json('DELETE', `${op}?propagationPolicy=Foreground`);
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('ConfigMap');
    expect(d.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);

    await gone(`${cms(NS)}/fg-block`);
    await gone(`${cms(NS)}/fg-free`);
    // The held dependent is Terminating; the owner waits for it.
    const h = await eventually('the held dependent to be Terminating', async () => {
      const r = await ok(srv.json('GET', `${cms(NS)}/fg-held`));
      return r.metadata.deletionTimestamp ? r : undefined;
    });
    expect(h.metadata.uid).toBe(held.metadata.uid);
    expect(h.metadata.finalizers).toContain('example.com/hold');
    await Bun.sleep(1500);
    const o = await ok(srv.json('GET', op));
    expect(o.metadata.deletionTimestamp).toBe(d.body.metadata.deletionTimestamp);
    expect(o.metadata.finalizers).toEqual(['foregroundDeletion']);

    await dropFinalizer(`${cms(NS)}/fg-held`, 'example.com/hold');
    await gone(`${cms(NS)}/fg-held`);
    await gone(op);
  }, 40_000);

  test('Foreground through a chain: grandchild, then child, then owner are removed, in that order', async () => {
    const owner = await ok(srv.json('POST', cms(NS), cm('chain-owner')));
    const child = await ok(
      srv.json('POST', cms(NS), cm('chain-child', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] })),
    );
    await ok(srv.json('POST', cms(NS), cm('chain-grandchild', { ownerReferences: [ownerRef(child, { blockOwnerDeletion: true })] })));
    const lone = await ok(srv.json('POST', cms(NS), cm('chain-lone')));
    const w = await openWatch(srv, `${cms(NS)}?watch=1&resourceVersion=${lone.metadata.resourceVersion}`);
    try {
      expect((await srv.json('DELETE', `${cms(NS)}/chain-owner?propagationPolicy=Foreground`)).status).toBe(200);
      // Without dependents, Foreground is as quick as Background.
      expect((await srv.json('DELETE', `${cms(NS)}/chain-lone?propagationPolicy=Foreground`)).status).toBe(200);
      await gone(`${cms(NS)}/chain-owner`);
      await gone(`${cms(NS)}/chain-lone`);
      const evs = await w.until((e) => e.type === 'DELETED' && e.object.metadata.name === 'chain-owner', 5000);
      const deleted = evs.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
      expect(deleted.filter((n) => n !== 'chain-lone')).toEqual(['chain-grandchild', 'chain-child', 'chain-owner']);
    } finally {
      await w.close();
    }
  }, 30_000);

  test('Orphan: the owner goes once its dependents no longer reference it; the dependents stay', async () => {
    const owner = await ok(srv.json('POST', cms(NS), cm('owner-or')));
    const other = await ok(srv.json('POST', cms(NS), cm('owner-or-other')));
    await ok(srv.json('POST', cms(NS), cm('or-1', { ownerReferences: [ownerRef(owner)] })));
    await ok(srv.json('POST', cms(NS), cm('or-2', { ownerReferences: [ownerRef(owner), ownerRef(other)] })));
    const d = await srv.json('DELETE', `${cms(NS)}/owner-or?propagationPolicy=Orphan`);
    expect(d.status).toBe(200);
    expect(d.body.metadata.finalizers).toEqual(['orphan']);
    expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);
    await gone(`${cms(NS)}/owner-or`);
    const o1 = await ok(srv.json('GET', `${cms(NS)}/or-1`));
    expect(o1.metadata.ownerReferences).toBeUndefined();
    const o2 = await ok(srv.json('GET', `${cms(NS)}/or-2`));
    expect(o2.metadata.ownerReferences).toEqual([ownerRef(other)]);
    // Still there a while later.
    await Bun.sleep(1000);
    expect(await status(`${cms(NS)}/or-1`)).toBe(200);
  }, 30_000);

  test('orphanDependents: true in the body (the deprecated form of Orphan) orphans too', async () => {
    const owner = await ok(srv.json('POST', cms(NS), cm('owner-od')));
    await ok(srv.json('POST', cms(NS), cm('od-1', { ownerReferences: [ownerRef(owner)] })));
    const d = await srv.json('DELETE', `${cms(NS)}/owner-od`, { orphanDependents: true });
    expect(d.status).toBe(200);
    await gone(`${cms(NS)}/owner-od`);
    await Bun.sleep(1000);
    const o = await srv.json('GET', `${cms(NS)}/od-1`);
    expect(o.status).toBe(200);
    expect(o.body.metadata.ownerReferences).toBeUndefined();
  }, 30_000);
});

test('orphanDependents together with propagationPolicy → 422; orphanDependents=true as a query parameter orphans', async () => {
  const NS = 'd-gc';
  const owner = await ok(srv.json('POST', cms(NS), cm('owner-oq')));
  await ok(srv.json('POST', cms(NS), cm('oq-1', { ownerReferences: [ownerRef(owner)] })));
  const both = await srv.json('DELETE', `${cms(NS)}/owner-oq?propagationPolicy=Background`, { orphanDependents: true });
  expect(both.status).toBe(422);
  expect(both.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
  expect(both.body.message).toContain('orphanDependents and deletionPropagation cannot be both set');
  expect(await status(`${cms(NS)}/owner-oq`)).toBe(200);
  expect((await srv.json('DELETE', `${cms(NS)}/owner-oq?orphanDependents=true`)).status).toBe(200);
  await gone(`${cms(NS)}/owner-oq`);
  await Bun.sleep(1000);
  const o = await srv.json('GET', `${cms(NS)}/oq-1`);
  expect(o.status).toBe(200);
  expect(o.body.metadata.ownerReferences).toBeUndefined();
}, 30_000);

describe('namespaces', () => {
  test('DELETE namespace: Terminating, creation in it 403, all content deleted, then the namespace is gone', async () => {
    const NS = 'd-doomed';
    await namespace(NS);
    for (let i = 0; i < 3; i++) await ok(srv.json('POST', cms(NS), cm(`c${i}`)));
    for (let i = 0; i < 2; i++)
      await ok(
        srv.json('POST', `/api/v1/namespaces/${NS}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `s${i}` },
          stringData: { a: 'b' },
        }),
      );
    await ok(
      srv.json('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app' },
        spec: {
          selector: { matchLabels: { app: 'a' } },
          template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
        },
      }),
    );
    const nsRv = (await ok(srv.json('GET', `/api/v1/namespaces/${NS}`))).metadata.resourceVersion;
    const w = await openWatch(srv, `/api/v1/namespaces?watch=1&resourceVersion=${nsRv}&fieldSelector=metadata.name%3D${NS}`);
    try {
      const d = await srv.json('DELETE', `/api/v1/namespaces/${NS}`);
      expect(d.status).toBe(200);
      expect(d.body.kind).toBe('Namespace');
      expect(d.body.status.phase).toBe('Terminating');
      expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);
      expect(d.body.spec.finalizers).toEqual(['kubernetes']);

      const create = await srv.json('POST', cms(NS), cm('late'));
      if (create.status !== 404) {
        // (404 only if the controller was already done)
        expect(create.status).toBe(403);
        expect(create.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
        expect(create.body.message).toContain(`unable to create new content in namespace ${NS} because it is being terminated`);
      }
      await gone(`/api/v1/namespaces/${NS}`);
      for (const p of [cms(NS), `/api/v1/namespaces/${NS}/secrets`, `/apis/apps/v1/namespaces/${NS}/deployments`]) {
        expect((await ok(srv.json('GET', p))).items).toEqual([]);
      }
      const after = await srv.json('POST', cms(NS), cm('after'));
      expect(after.status).toBe(404);
      expect(after.body.message).toBe(`namespaces "${NS}" not found`);
      const evs = await w.until((e) => e.type === 'DELETED', 10_000);
      expect(evs[0]?.type).toBe('MODIFIED');
      expect(evs[0]?.object.status.phase).toBe('Terminating');
    } finally {
      await w.close();
    }
  }, 40_000);

  test('content with a finalizer keeps the namespace Terminating, with conditions saying so, until it goes', async () => {
    const NS = 'd-stuck';
    await namespace(NS);
    await ok(srv.json('POST', cms(NS), cm('held', { finalizers: ['example.com/hold'] })));
    await ok(srv.json('POST', cms(NS), cm('free')));
    expect((await srv.json('DELETE', `/api/v1/namespaces/${NS}`)).status).toBe(200);
    const ns = await eventually('the namespace conditions', async () => {
      const r = await ok(srv.json('GET', `/api/v1/namespaces/${NS}`));
      const c = r.status?.conditions ?? [];
      return c.some((x: Json) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True') ? r : undefined;
    });
    const cond = (t: string) => ns.status.conditions.find((c: Json) => c.type === t);
    expect(ns.status.phase).toBe('Terminating');
    expect(cond('NamespaceContentRemaining')).toMatchObject({ status: 'True', reason: 'SomeResourcesRemain' });
    expect(cond('NamespaceContentRemaining').message).toContain('configmaps has 1 resource instances');
    expect(cond('NamespaceFinalizersRemaining')).toMatchObject({ status: 'True', reason: 'SomeFinalizersRemain' });
    expect(cond('NamespaceFinalizersRemaining').message).toContain('example.com/hold in 1 resource instances');
    for (const c of ns.status.conditions) expect(c.lastTransitionTime).toMatch(RFC3339);
    expect(await status(`${cms(NS)}/free`)).toBe(404);
    const late = await srv.json('POST', cms(NS), cm('late'));
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403 });
    expect(late.body.message).toBe(
      `configmaps "late" is forbidden: unable to create new content in namespace ${NS} because it is being terminated`,
    );
    const held = await ok(srv.json('GET', `${cms(NS)}/held`));
    expect(held.metadata.deletionTimestamp).toMatch(RFC3339);
    // Still there after the controller had time for more passes.
    await Bun.sleep(2500);
    expect((await ok(srv.json('GET', `/api/v1/namespaces/${NS}`))).status.phase).toBe('Terminating');

    await dropFinalizer(`${cms(NS)}/held`, 'example.com/hold');
    await gone(`${cms(NS)}/held`);
    await gone(`/api/v1/namespaces/${NS}`);
  }, 40_000);
});

describe('pods', () => {
  const NS = 'd-pods';
  const pods = `/api/v1/namespaces/${NS}/pods`;
  const pod = (name: string, nodeName?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'nginx:1.27' }] },
  });

  beforeAll(async () => {
    await namespace(NS);
  });

  test('a pod on a node: gracePeriodSeconds=30 → Terminating with deletionGracePeriodSeconds 30; then gracePeriodSeconds=0 removes it', async () => {
    await ok(srv.json('POST', pods, pod('bound', 'node-1')));
    const t0 = Date.now();
    const d = await srv.json('DELETE', `${pods}/bound?gracePeriodSeconds=30`);
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('Pod');
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(30);
    const at = Date.parse(d.body.metadata.deletionTimestamp);
    expect(at).toBeGreaterThan(t0 + 25_000);
    expect(at).toBeLessThan(t0 + 35_000);
    await Bun.sleep(500);
    const g = await ok(srv.json('GET', `${pods}/bound`));
    expect(g.metadata.deletionGracePeriodSeconds).toBe(30);
    expect(g.metadata.deletionTimestamp).toBe(d.body.metadata.deletionTimestamp);
    // Deleting again with the same grace changes nothing.
    const again = await srv.json('DELETE', `${pods}/bound?gracePeriodSeconds=30`);
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(g.metadata.resourceVersion);
    const now = await srv.json('DELETE', `${pods}/bound?gracePeriodSeconds=0`);
    expect(now.status).toBe(200);
    expect(now.body.kind).toBe('Pod');
    expect(await status(`${pods}/bound`)).toBe(404);
  }, 30_000);

  test('a bound pod without gracePeriodSeconds uses its terminationGracePeriodSeconds', async () => {
    const p = await ok(
      srv.json('POST', pods, { ...pod('own-grace', 'node-1'), spec: { ...pod('x', 'node-1').spec, terminationGracePeriodSeconds: 7 } }),
    );
    expect(p.spec.terminationGracePeriodSeconds).toBe(7);
    const d = await ok(srv.json('DELETE', `${pods}/own-grace`));
    expect(d.metadata.deletionGracePeriodSeconds).toBe(7);
    expect((await srv.json('DELETE', `${pods}/own-grace?gracePeriodSeconds=0`)).status).toBe(200);
    expect(await status(`${pods}/own-grace`)).toBe(404);
  });

  test('a negative gracePeriodSeconds on a bound pod means 1 s', async () => {
    await ok(srv.json('POST', pods, pod('negative', 'node-1')));
    const d = await ok(srv.json('DELETE', `${pods}/negative?gracePeriodSeconds=-5`));
    expect(d.metadata.deletionGracePeriodSeconds).toBe(1);
    expect(await status(`${pods}/negative`)).toBe(200);
    expect((await srv.json('DELETE', `${pods}/negative?gracePeriodSeconds=0`)).status).toBe(200);
    expect(await status(`${pods}/negative`)).toBe(404);
  });

  test('a pod not bound to a node is deleted at once (the response is the deleted Pod)', async () => {
    const c = await ok(srv.json('POST', pods, pod('free')));
    const d = await srv.json('DELETE', `${pods}/free?gracePeriodSeconds=30`);
    expect(d.status).toBe(200);
    expect(await status(`${pods}/free`)).toBe(404);
    // As the reference's pod storage (ReturnDeletedObject): the Pod, not a Status.
    expect(d.body.kind).toBe('Pod');
    expect(d.body.metadata.uid).toBe(c.metadata.uid);
  });
});

// These change the embedded store's files while the server is down: not a thing on etcd.
describe.skipIf(process.env.SVC_TEST_STORE === 'etcd')('after a restart', () => {
  const NS = 'd-restart';
  const owners: Record<string, Json> = {};
  let leftAtRestart = -1;

  test('GC: dependents of owners deleted right before a SIGTERM, or while the server was down, are deleted after the restart', async () => {
    await namespace(NS);
    owners.bg = await ok(srv.json('POST', cms(NS), cm('owner-bg')));
    owners.down = await ok(srv.json('POST', cms(NS), cm('owner-down')));
    for (let i = 0; i < 100; i++) await ok(srv.json('POST', cms(NS), cm(`bg-${i}`, { ownerReferences: [ownerRef(owners.bg)] })));
    for (let i = 0; i < 3; i++) await ok(srv.json('POST', cms(NS), cm(`down-${i}`, { ownerReferences: [ownerRef(owners.down)] })));
    await ok(srv.json('POST', cms(NS), cm('bystander')));
    expect((await srv.json('DELETE', `${cms(NS)}/owner-bg?propagationPolicy=Background`)).status).toBe(200);
    expect(await srv.stop('SIGTERM')).toBe(0);

    // While it is down: the other owner goes from the store directly, and a value nothing can decode appears.
    const kv = await MvccStore.open({ dir: path.join(dataDir, 'store') });
    try {
      const r = await kv.range(`/registry/core/configmaps/${NS}/bg-`, { end: `/registry/core/configmaps/${NS}/bg.` });
      leftAtRestart = r.kvs.length;
      await kv.txn({
        success: [
          { op: 'delete', key: `/registry/core/configmaps/${NS}/owner-down` },
          { op: 'put', key: `/registry/core/configmaps/${NS}/broken`, value: new Uint8Array([0xff, 0x00, 0x13, 0x37, 0x80, 0x7b]) },
        ],
      });
    } finally {
      await kv.close();
    }
    console.log(`dependents of the Background-deleted owner left at the SIGTERM: ${leftAtRestart} of 100`);

    srv = await startServer({ dataDir, args: ARGS });
    const left = async () => {
      const names: string[] = [];
      // The corrupt value makes lists of the namespace fail; read the dependents one by one.
      for (let i = 0; i < 100; i++) if ((await status(`${cms(NS)}/bg-${i}`)) === 200) names.push(`bg-${i}`);
      for (let i = 0; i < 3; i++) if ((await status(`${cms(NS)}/down-${i}`)) === 200) names.push(`down-${i}`);
      return names;
    };
    await eventually('every dependent to be deleted', async () => (await left()).length === 0, 30_000);
    expect(await status(`${cms(NS)}/bystander`)).toBe(200);
  }, 90_000);

  describe('forced deletion of an undecodable object', () => {
    const p = `${cms(NS)}/broken`;

    test('GET and lists answer 500 naming it; a normal DELETE fails with 500', async () => {
      const g = await srv.json('GET', p);
      expect(g.status).toBe(500);
      expect(g.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
      expect(JSON.stringify(g.body)).toContain(`/registry/core/configmaps/${NS}/broken`);
      for (const q of ['', '?resourceVersion=0', '?limit=10']) {
        const l = await srv.json('GET', `${cms(NS)}${q}`);
        expect({ q, status: l.status }).toEqual({ q, status: 500 });
        expect(JSON.stringify(l.body)).toContain(`/registry/core/configmaps/${NS}/broken`);
      }
      // Other namespaces are not affected.
      expect((await srv.json('GET', cms('default'))).status).toBe(200);
      const d = await srv.json('DELETE', p);
      expect(d.status).toBe(500);
      expect(JSON.stringify(d.body)).toContain('broken');
    });

    test('with other delete options → 422 Invalid', async () => {
      const base = `${p}?ignoreStoreReadErrorWithClusterBreakingPotential=true`;
      for (const q of ['&dryRun=All', '&gracePeriodSeconds=0', '&propagationPolicy=Background']) {
        const r = await srv.json('DELETE', `${base}${q}`);
        expect({ q, status: r.status }).toEqual({ q, status: 422 });
        expect(r.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
        expect(r.body.message).toContain('ignoreStoreReadErrorWithClusterBreakingPotential');
      }
      const pre = await srv.json('DELETE', base, { preconditions: { uid: 'x' } });
      expect(pre.status).toBe(422);
      expect(await srv.json('GET', p).then((r) => r.status)).toBe(500);
    });

    test('on a readable object → 400, the object stays', async () => {
      const r = await srv.json('DELETE', `${cms(NS)}/bystander?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect(await status(`${cms(NS)}/bystander`)).toBe(200);
    });

    test('ignoreStoreReadErrorWithClusterBreakingPotential=true (gate on) removes it; reads and watches work again', async () => {
      const rv = (await ok(srv.json('GET', `${cms('default')}`))).metadata.resourceVersion;
      const w = await openWatch(srv, `${cms(NS)}?watch=1&resourceVersion=${rv}`);
      try {
        const r = await srv.json('DELETE', `${p}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'broken', kind: 'configmaps' } });
        expect(await status(p)).toBe(404);
        const l = await ok(srv.json('GET', cms(NS)));
        expect(l.items.map((i: Json) => i.metadata.name)).toEqual(['bystander']);
        expect((await ok(srv.json('GET', `${cms(NS)}?resourceVersion=0`))).items.map((i: Json) => i.metadata.name)).toEqual(['bystander']);
        // Nothing could be decoded, so there is no object to send a DELETED event with; the stream stays healthy.
        await ok(srv.json('PUT', `${cms(NS)}/bystander`, { ...cm('bystander'), data: { k: 'after' } }));
        const evs = await w.until((e) => e.object?.metadata?.name === 'bystander', 5000);
        expect(evs.every((e) => e.type !== 'ERROR')).toBe(true);
      } finally {
        await w.close();
      }
      // The store no longer has the key.
      const again = await srv.json('DELETE', `${p}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
      expect(again.status).toBe(404);
    }, 20_000);
  });
});
