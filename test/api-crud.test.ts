/**
 * Black-box CRUD over HTTPS against the real server: create/get/update/delete, Status errors as
 * the reference API server renders them, the status subresource, metadata.generation, finalizers,
 * deletecollection.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });

const CM = '/api/v1/namespaces/default/configmaps';
const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

function cm(name: string, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' }, ...extra };
}

function deployment(name: string, replicas = 1) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
    },
  };
}

/** A Status failure body as the reference renders it. */
function failure(code: number, reason: string, message: string, details?: Record<string, unknown>) {
  const b: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) b.details = details;
  return b;
}

describe('create', () => {
  test('201 with server-set uid, creationTimestamp, resourceVersion; no generation on a kind without spec', async () => {
    const r = await srv.json('POST', CM, cm('c-create'));
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.kind).toBe('ConfigMap');
    expect(r.body.apiVersion).toBe('v1');
    const m = r.body.metadata;
    expect(m.name).toBe('c-create');
    expect(m.namespace).toBe('default');
    expect(m.uid).toMatch(UUID);
    expect(m.creationTimestamp).toMatch(RFC3339);
    expect(m.resourceVersion).toMatch(/^\d+$/);
    expect(m.generation).toBeUndefined();
    expect(r.body.data).toEqual({ k: 'v' });
    // The stored object is what a get returns.
    const g = await srv.json('GET', `${CM}/c-create`);
    expect(g.status).toBe(200);
    expect(g.body.metadata).toEqual(m);
  });

  test('the answers of create, update, get, list and watch carry the same object, byte for byte where the text is served', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const text = async (p: string, init?: RequestInit) => {
      const r = await srv.fetch(p, init);
      return { status: r.status, body: await r.text() };
    };
    const w = await srv.fetch(`${path}?watch=1&fieldSelector=metadata.name%3Dc-same&resourceVersion=0`);
    const reader = (w.body as ReadableStream<Uint8Array>).getReader();
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c-same', labels: { a: 'b' } }, data: { k: 'v', 'x.y': 'ü €' } };
    const created = await text(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    const got = await text(`${path}/c-same`);
    expect(got.body).toBe(created.body);
    const obj = JSON.parse(created.body);
    const updated = await text(`${path}/c-same`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...obj, data: { k: 'w' } }),
    });
    expect(updated.status).toBe(200);
    expect(JSON.parse(updated.body).metadata.resourceVersion).not.toBe(obj.metadata.resourceVersion);
    expect((await text(`${path}/c-same`)).body).toBe(updated.body);
    const list = JSON.parse((await text(`${path}?fieldSelector=metadata.name%3Dc-same`)).body);
    expect(list.items).toEqual([JSON.parse(updated.body)]);
    // The watch saw both versions, as answered.
    let lines = '';
    const dec = new TextDecoder();
    const deadline = Date.now() + 5000;
    while (lines.split('\n').filter((l) => l.trim()).length < 2 && Date.now() < deadline) {
      const r = await Promise.race([reader.read(), Bun.sleep(500).then(() => undefined)]);
      if (r?.value) lines += dec.decode(r.value, { stream: true });
    }
    await reader.cancel();
    const events = lines
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(events[0].object).toEqual(obj);
    expect(events[1].object).toEqual(JSON.parse(updated.body));
  });

  test('kinds with a spec start at metadata.generation 1', async () => {
    const r = await srv.json('POST', DEPLOY, deployment('d-gen1'));
    expect(r.status).toBe(201);
    expect(r.body.metadata.generation).toBe(1);
    expect(r.body.metadata.uid).toMatch(UUID);
  });

  test('server-owned metadata in the body is replaced (uid, creationTimestamp, generation)', async () => {
    const body = deployment('d-owned');
    (body.metadata as Record<string, unknown>).uid = 'not-a-real-uid';
    (body.metadata as Record<string, unknown>).creationTimestamp = '2001-01-01T00:00:00Z';
    (body.metadata as Record<string, unknown>).generation = 17;
    const r = await srv.json('POST', DEPLOY, body);
    expect(r.status).toBe(201);
    expect(r.body.metadata.uid).toMatch(UUID);
    expect(r.body.metadata.creationTimestamp).not.toBe('2001-01-01T00:00:00Z');
    expect(r.body.metadata.generation).toBe(1);
  });

  test('generateName adds a random 5-character suffix (no vowels); two creates get different names', async () => {
    const a = await srv.json('POST', CM, { metadata: { generateName: 'gen-' } });
    const b = await srv.json('POST', CM, { metadata: { generateName: 'gen-' } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(b.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(a.body.metadata.name).not.toBe(b.body.metadata.name);
    expect(a.body.metadata.generateName).toBe('gen-');
    expect((await srv.json('GET', `${CM}/${a.body.metadata.name}`)).status).toBe(200);
  });

  test('create in a missing namespace: 404 namespaces "x" not found', async () => {
    const r = await srv.json('POST', '/api/v1/namespaces/no-such-ns/configmaps', cm('x'));
    expect(r.status).toBe(404);
    expect(r.body).toEqual(failure(404, 'NotFound', 'namespaces "no-such-ns" not found', { name: 'no-such-ns', kind: 'namespaces' }));
  });

  test('create of an existing name: 409 AlreadyExists', async () => {
    expect((await srv.json('POST', CM, cm('c-dup'))).status).toBe(201);
    const r = await srv.json('POST', CM, cm('c-dup'));
    expect(r.status).toBe(409);
    expect(r.body).toEqual(failure(409, 'AlreadyExists', 'configmaps "c-dup" already exists', { name: 'c-dup', kind: 'configmaps' }));
  });

  test('AlreadyExists of a named-group kind qualifies the resource with its group', async () => {
    expect((await srv.json('POST', DEPLOY, deployment('d-dup'))).status).toBe(201);
    const r = await srv.json('POST', DEPLOY, deployment('d-dup'));
    expect(r.status).toBe(409);
    expect(r.body).toEqual(
      failure(409, 'AlreadyExists', 'deployments.apps "d-dup" already exists', { name: 'd-dup', group: 'apps', kind: 'deployments' }),
    );
  });

  test('namespace in the body different from the URL: 400 BadRequest', async () => {
    const r = await srv.json('POST', CM, { metadata: { name: 'c-ns', namespace: 'kube-system' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(
      failure(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'),
    );
  });

  test('resourceVersion set on create: 400 BadRequest', async () => {
    const r = await srv.json('POST', CM, { metadata: { name: 'c-rv', resourceVersion: '5' } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(r.body.message).toBe('resourceVersion should not be set on objects to be created');
  });

  test('malformed JSON body: 400 BadRequest', async () => {
    const r = await srv.json('POST', CM, '{"metadata": {"name": ');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
  });

  test('POST to a single-object path: 405 MethodNotAllowed', async () => {
    const r = await srv.json('POST', `${CM}/c-create`, cm('c-create'));
    expect(r.status).toBe(405);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  });

  test('unknown resource: 404 with the reference text', async () => {
    const r = await srv.json('GET', '/api/v1/namespaces/default/nothings');
    expect(r.status).toBe(404);
    expect(r.body).toEqual(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
    expect((await srv.json('GET', '/apis/nogroup.example.com/v1/things')).status).toBe(404);
  });
});

describe('get', () => {
  test('404 NotFound Status text', async () => {
    const r = await srv.json('GET', `${CM}/does-not-exist`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual(
      failure(404, 'NotFound', 'configmaps "does-not-exist" not found', { name: 'does-not-exist', kind: 'configmaps' }),
    );
  });

  test('404 of a named-group kind: deployments.apps "x" not found', async () => {
    const r = await srv.json('GET', `${DEPLOY}/nope`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual(
      failure(404, 'NotFound', 'deployments.apps "nope" not found', { name: 'nope', group: 'apps', kind: 'deployments' }),
    );
  });

  test('cluster-scoped object: GET /api/v1/namespaces/default', async () => {
    const r = await srv.json('GET', '/api/v1/namespaces/default');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'default' }, status: { phase: 'Active' } });
    expect(r.body.metadata.namespace).toBeUndefined();
  });
});

describe('update (PUT)', () => {
  test('stale resourceVersion: 409 Conflict with the reference message', async () => {
    const c = await srv.json('POST', CM, cm('c-stale'));
    const rv1 = c.body.metadata.resourceVersion;
    const u = await srv.json('PUT', `${CM}/c-stale`, { ...c.body, data: { k: 'v2' } });
    expect(u.status).toBe(200);
    expect(u.body.metadata.resourceVersion).not.toBe(rv1);
    const stale = await srv.json('PUT', `${CM}/c-stale`, { ...c.body, data: { k: 'v3' } });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual(
      failure(
        409,
        'Conflict',
        'Operation cannot be fulfilled on configmaps "c-stale": the object has been modified; please apply your changes to the latest version and try again',
        { name: 'c-stale', kind: 'configmaps' },
      ),
    );
    expect((await srv.json('GET', `${CM}/c-stale`)).body.data).toEqual({ k: 'v2' });
  });

  test('without resourceVersion the update is unconditional', async () => {
    await srv.json('POST', CM, cm('c-uncond'));
    const u = await srv.json('PUT', `${CM}/c-uncond`, { metadata: { name: 'c-uncond' }, data: { k: 'new' } });
    expect(u.status).toBe(200);
    expect(u.body.data).toEqual({ k: 'new' });
    expect(u.body.metadata.uid).toMatch(UUID);
  });

  test('name in the body different from the URL: 400', async () => {
    await srv.json('POST', CM, cm('c-name'));
    const r = await srv.json('PUT', `${CM}/c-name`, cm('other'));
    expect(r.status).toBe(400);
    expect(r.body).toEqual(failure(400, 'BadRequest', 'the name of the object (other) does not match the name on the URL (c-name)'));
  });

  test('PUT of a missing object: 404 (no create on update for ConfigMap)', async () => {
    const r = await srv.json('PUT', `${CM}/c-missing`, cm('c-missing'));
    expect(r.status).toBe(404);
    expect(r.body).toEqual(failure(404, 'NotFound', 'configmaps "c-missing" not found', { name: 'c-missing', kind: 'configmaps' }));
  });

  test('a no-op PUT keeps the resourceVersion', async () => {
    const c = await srv.json('POST', CM, cm('c-noop'));
    const u = await srv.json('PUT', `${CM}/c-noop`, c.body);
    expect(u.status).toBe(200);
    expect(u.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
    const u2 = await srv.json('PUT', `${CM}/c-noop`, { metadata: { name: 'c-noop' }, data: { k: 'v' } });
    expect(u2.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
  });

  test('server-owned metadata is kept: uid, creationTimestamp', async () => {
    const c = await srv.json('POST', CM, cm('c-keep'));
    const body = { ...c.body, metadata: { ...c.body.metadata, uid: 'x', creationTimestamp: '2001-01-01T00:00:00Z' }, data: { k: 'z' } };
    const u = await srv.json('PUT', `${CM}/c-keep`, body);
    expect(u.status).toBe(200);
    expect(u.body.metadata.uid).toBe(c.body.metadata.uid);
    expect(u.body.metadata.creationTimestamp).toBe(c.body.metadata.creationTimestamp);
  });

  test('metadata.generation increments on spec changes only (Deployment)', async () => {
    const c = await srv.json('POST', DEPLOY, deployment('d-gen'));
    expect(c.body.metadata.generation).toBe(1);
    // Labels: no bump.
    const l0 = await srv.json('PUT', `${DEPLOY}/d-gen`, { ...c.body, metadata: { ...c.body.metadata, labels: { a: 'b' } } });
    expect(l0.status).toBe(200);
    expect(l0.body.metadata.generation).toBe(1);
    expect(l0.body.metadata.resourceVersion).not.toBe(c.body.metadata.resourceVersion);
    // Annotations: a Deployment's bump it (the reference's strategy: they are copied to its ReplicaSets).
    const l = await srv.json('PUT', `${DEPLOY}/d-gen`, { ...l0.body, metadata: { ...l0.body.metadata, annotations: { x: 'y' } } });
    expect(l.status).toBe(200);
    expect(l.body.metadata.generation).toBe(2);
    // Spec: bump.
    const s = await srv.json('PUT', `${DEPLOY}/d-gen`, { ...l.body, spec: { ...l.body.spec, replicas: 3 } });
    expect(s.status).toBe(200);
    expect(s.body.metadata.generation).toBe(3);
    expect(s.body.spec.replicas).toBe(3);
    // No-op: no bump, same resourceVersion.
    const n = await srv.json('PUT', `${DEPLOY}/d-gen`, s.body);
    expect(n.body.metadata.generation).toBe(3);
    expect(n.body.metadata.resourceVersion).toBe(s.body.metadata.resourceVersion);
    // A client-set generation is ignored.
    const g = await srv.json('PUT', `${DEPLOY}/d-gen`, { ...n.body, metadata: { ...n.body.metadata, generation: 40 } });
    expect(g.body.metadata.generation).toBe(3);
  });
});

describe('status subresource', () => {
  test('discovery-listed status: PUT /status changes only status; main PUT ignores status', async () => {
    const c = await srv.json('POST', DEPLOY, deployment('d-status'));
    expect(c.status).toBe(201);
    // Main resource: status in the body is ignored.
    const main = await srv.json('PUT', `${DEPLOY}/d-status`, { ...c.body, status: { replicas: 5, observedGeneration: 9 } });
    expect(main.status).toBe(200);
    expect(main.body.status?.replicas).toBeUndefined();
    expect(main.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
    // Status: spec changes are ignored, status is taken.
    const st = await srv.json('PUT', `${DEPLOY}/d-status/status`, {
      ...c.body,
      spec: { ...c.body.spec, replicas: 7 },
      status: { replicas: 2, observedGeneration: 1 },
    });
    expect(st.status).toBe(200);
    expect(st.body.status).toEqual({ replicas: 2, observedGeneration: 1 });
    expect(st.body.spec.replicas).toBe(1);
    expect(st.body.metadata.generation).toBe(1);
    const g = await srv.json('GET', `${DEPLOY}/d-status`);
    expect(g.body.status).toEqual({ replicas: 2, observedGeneration: 1 });
    expect(g.body.spec.replicas).toBe(1);
    // GET /status returns the whole object.
    const gs = await srv.json('GET', `${DEPLOY}/d-status/status`);
    expect(gs.status).toBe(200);
    expect(gs.body.kind).toBe('Deployment');
    expect(gs.body.status).toEqual({ replicas: 2, observedGeneration: 1 });
  });

  test('PUT /status with a stale resourceVersion: 409 Conflict', async () => {
    const c = await srv.json('POST', DEPLOY, deployment('d-status-stale'));
    await srv.json('PUT', `${DEPLOY}/d-status-stale/status`, { ...c.body, status: { replicas: 1 } });
    const r = await srv.json('PUT', `${DEPLOY}/d-status-stale/status`, { ...c.body, status: { replicas: 4 } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('Conflict');
    expect(r.body.message).toBe(
      'Operation cannot be fulfilled on deployments.apps "d-status-stale": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  test('a kind without a status subresource: /status is 404', async () => {
    await srv.json('POST', CM, cm('c-nostatus'));
    const r = await srv.json('GET', `${CM}/c-nostatus/status`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });
});

describe('delete', () => {
  test('200 Status Success with details {name, kind: plural, uid}', async () => {
    const c = await srv.json('POST', CM, cm('c-del'));
    const d = await srv.json('DELETE', `${CM}/c-del`);
    expect(d.status).toBe(200);
    expect(d.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'c-del', kind: 'configmaps', uid: c.body.metadata.uid },
    });
    expect((await srv.json('GET', `${CM}/c-del`)).status).toBe(404);
    const again = await srv.json('DELETE', `${CM}/c-del`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual(failure(404, 'NotFound', 'configmaps "c-del" not found', { name: 'c-del', kind: 'configmaps' }));
  });

  test('named-group delete details carry the group', async () => {
    const c = await srv.json('POST', DEPLOY, deployment('d-del'));
    const d = await srv.json('DELETE', `${DEPLOY}/d-del`);
    expect(d.status).toBe(200);
    expect(d.body.details).toEqual({ name: 'd-del', group: 'apps', kind: 'deployments', uid: c.body.metadata.uid });
  });

  test('ResourceQuota delete returns the deleted object', async () => {
    const q = await srv.json('POST', '/api/v1/namespaces/default/resourcequotas', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q1' },
      spec: { hard: { pods: '10' } },
    });
    expect(q.status).toBe(201);
    const d = await srv.json('DELETE', '/api/v1/namespaces/default/resourcequotas/q1');
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('ResourceQuota');
    expect(d.body.metadata.name).toBe('q1');
    expect(d.body.metadata.uid).toBe(q.body.metadata.uid);
    expect((await srv.json('GET', '/api/v1/namespaces/default/resourcequotas/q1')).status).toBe(404);
  });

  test('preconditions: a wrong uid gives 409 Conflict with the reference message', async () => {
    const c = await srv.json('POST', CM, cm('c-pre'));
    const r = await srv.json('DELETE', `${CM}/c-pre`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'wrong' } });
    expect(r.status).toBe(409);
    expect(r.body).toEqual(
      failure(
        409,
        'Conflict',
        `Operation cannot be fulfilled on configmaps "c-pre": Precondition failed: UID in precondition: wrong, UID in object meta: ${c.body.metadata.uid}`,
        {
          name: 'c-pre',
          kind: 'configmaps',
        },
      ),
    );
    const ok = await srv.json('DELETE', `${CM}/c-pre`, { preconditions: { uid: c.body.metadata.uid } });
    expect(ok.status).toBe(200);
  });

  test('dryRun=All deletes nothing', async () => {
    await srv.json('POST', CM, cm('c-dry'));
    const d = await srv.json('DELETE', `${CM}/c-dry?dryRun=All`);
    expect(d.status).toBe(200);
    expect((await srv.json('GET', `${CM}/c-dry`)).status).toBe(200);
  });

  test('deletecollection with a labelSelector deletes only the matching objects and returns them', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'dc' } });
    const P = '/api/v1/namespaces/dc/configmaps';
    for (const [n, t] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ])
      expect((await srv.json('POST', P, { metadata: { name: n, labels: { tier: t } } })).status).toBe(201);
    const d = await srv.json('DELETE', `${P}?labelSelector=tier%3Dx`);
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('ConfigMapList');
    expect(d.body.apiVersion).toBe('v1');
    expect(d.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort()).toEqual(['a', 'b']);
    const l = await srv.json('GET', P);
    expect(l.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['c']);
    // Other namespaces are untouched.
    expect((await srv.json('GET', `${CM}/c-create`)).status).toBe(200);
  });
});

describe('finalizers', () => {
  test('delete sets deletionTimestamp; the object stays until a PUT removes the finalizers, then it is gone', async () => {
    const c = await srv.json('POST', CM, cm('c-fin', { metadata: { name: 'c-fin', finalizers: ['example.com/hold'] } }));
    expect(c.status).toBe(201);
    const d = await srv.json('DELETE', `${CM}/c-fin`);
    expect(d.status).toBe(200);
    // Not deleted yet: the object is returned, Terminating.
    expect(d.body.kind).toBe('ConfigMap');
    expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(d.body.metadata.finalizers).toEqual(['example.com/hold']);
    const g = await srv.json('GET', `${CM}/c-fin`);
    expect(g.status).toBe(200);
    expect(g.body.metadata.deletionTimestamp).toBe(d.body.metadata.deletionTimestamp);
    // A second delete changes nothing.
    const d2 = await srv.json('DELETE', `${CM}/c-fin`);
    expect(d2.status).toBe(200);
    expect(d2.body.metadata.resourceVersion).toBe(g.body.metadata.resourceVersion);
    // Updates other than finalizers keep it Terminating.
    const u = await srv.json('PUT', `${CM}/c-fin`, { ...g.body, data: { k: 'changed' } });
    expect(u.status).toBe(200);
    expect(u.body.metadata.deletionTimestamp).toBe(d.body.metadata.deletionTimestamp);
    // Removing the last finalizer removes the object.
    const f = await srv.json('PUT', `${CM}/c-fin`, { ...u.body, metadata: { ...u.body.metadata, finalizers: [] } });
    expect(f.status).toBe(200);
    expect(f.body.metadata.name).toBe('c-fin');
    expect((await srv.json('GET', `${CM}/c-fin`)).status).toBe(404);
  });

  test('no new finalizers may be added to a Terminating object (422 Invalid)', async () => {
    await srv.json('POST', CM, cm('c-fin2', { metadata: { name: 'c-fin2', finalizers: ['example.com/a'] } }));
    const d = await srv.json('DELETE', `${CM}/c-fin2`);
    const r = await srv.json('PUT', `${CM}/c-fin2`, {
      ...d.body,
      metadata: { ...d.body.metadata, finalizers: ['example.com/a', 'example.com/b'] },
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}',
        field: 'metadata.finalizers',
      },
    ]);
  });

  test('deleting a Deployment with finalizers bumps metadata.generation (markAsDeleting)', async () => {
    const body = deployment('d-fin');
    (body.metadata as Record<string, unknown>).finalizers = ['example.com/hold'];
    const c = await srv.json('POST', DEPLOY, body);
    expect(c.body.metadata.generation).toBe(1);
    const d = await srv.json('DELETE', `${DEPLOY}/d-fin`);
    expect(d.status).toBe(200);
    expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);
    expect(d.body.metadata.generation).toBe(2);
  });
});

describe('namespaces', () => {
  test('the system namespaces exist and a new namespace starts Active', async () => {
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      expect((await srv.json('GET', `/api/v1/namespaces/${n}`)).status).toBe(200);
    const c = await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns-new' } });
    expect(c.status).toBe(201);
    expect(c.body.status).toEqual({ phase: 'Active' });
    expect(c.body.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(c.body.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'ns-new' });
  });

  test('a namespace without a name: 422 name required (its name label is built before validation)', async () => {
    for (const body of [
      { apiVersion: 'v1', kind: 'Namespace' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: {}, spec: { finalizers: ['example.com/x'] } },
    ]) {
      const r = await srv.json('POST', '/api/v1/namespaces', body);
      expect(r.status).toBe(422);
      expect(r.body.details.causes).toEqual([
        { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
      ]);
    }
  });

  test('a namespaced path names the namespace object: GET /api/v1/namespaces/x/configmaps/y needs namespace x', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'ns-a' } });
    await srv.json('POST', '/api/v1/namespaces/ns-a/configmaps', cm('same'));
    await srv.json('POST', CM, cm('same'));
    const a = await srv.json('GET', '/api/v1/namespaces/ns-a/configmaps/same');
    const b = await srv.json('GET', `${CM}/same`);
    expect(a.body.metadata.namespace).toBe('ns-a');
    expect(b.body.metadata.namespace).toBe('default');
    expect(a.body.metadata.uid).not.toBe(b.body.metadata.uid);
  });

  test('deleting a namespace makes it Terminating; creating content in it is 403 Forbidden', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'ns-term' } });
    await srv.json('POST', '/api/v1/namespaces/ns-term/configmaps', cm('inside'));
    const d = await srv.json('DELETE', '/api/v1/namespaces/ns-term');
    expect(d.status).toBe(200);
    expect(d.body.kind).toBe('Namespace');
    expect(d.body.status.phase).toBe('Terminating');
    expect(d.body.metadata.deletionTimestamp).toMatch(RFC3339);
    const r = await srv.json('POST', '/api/v1/namespaces/ns-term/configmaps', cm('late'));
    if (r.status !== 404) {
      // Still Terminating (the namespace controller has not finished): 403 with the reference text.
      expect(r.status).toBe(403);
      expect(r.body).toEqual(
        failure(
          403,
          'Forbidden',
          'configmaps "late" is forbidden: unable to create new content in namespace ns-term because it is being terminated',
          {
            name: 'late',
            kind: 'configmaps',
          },
        ),
      );
    }
  });
  test("creates racing a namespace's deletion: every one acknowledged was written before the namespace turned Terminating", async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'ns-race' } });
    await srv.json('POST', '/api/v1/namespaces/ns-race/configmaps', cm('first'));
    let stop = false;
    const created: number[] = [];
    const refused: number[] = [];
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const r = await srv.json('POST', '/api/v1/namespaces/ns-race/configmaps', cm(`w${w}-${i}`));
        if (r.status === 201) created.push(Number(r.body.metadata.resourceVersion));
        else {
          expect([403, 404]).toContain(r.status);
          refused.push(r.status);
          return;
        }
      }
    });
    await Bun.sleep(100);
    const d = await srv.json('DELETE', '/api/v1/namespaces/ns-race');
    expect(d.status).toBe(200);
    const terminating = Number(d.body.metadata.resourceVersion);
    await Promise.race([Promise.all(writers), Bun.sleep(10_000)]);
    stop = true;
    await Promise.all(writers);
    expect(created.length).toBeGreaterThan(0);
    expect(refused.length).toBe(8);
    // The create's transaction holds the namespace at the version it checked: none lands after.
    expect(created.filter((rv) => rv > terminating)).toEqual([]);
  });

  test('the immortal namespaces may not be deleted: 403 Forbidden (NamespaceLifecycle)', async () => {
    for (const n of ['default', 'kube-system', 'kube-public']) {
      const r = await srv.json('DELETE', `/api/v1/namespaces/${n}`);
      expect(r.status).toBe(403);
      expect(r.body).toEqual(
        failure(403, 'Forbidden', `namespaces "${n}" is forbidden: this namespace may not be deleted`, { name: n, kind: 'namespaces' }),
      );
      const g = await srv.json('GET', `/api/v1/namespaces/${n}`);
      expect(g.body.metadata.deletionTimestamp).toBeUndefined();
    }
  });

  test('deletecollection is not served for namespaces (405)', async () => {
    const r = await srv.json('DELETE', '/api/v1/namespaces');
    expect(r.status).toBe(405);
    expect((await srv.json('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });
});

describe('defaults and create-time status, as the reference', () => {
  test('conditional defaults show on create: pull policy, Pod-only defaults, service ports and policies, deployment strategy', async () => {
    const p = await srv.json('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'dflt' },
      spec: {
        containers: [
          { name: 'a', image: 'nginx', resources: { limits: { cpu: '1' } } },
          { name: 'b', image: 'nginx:1.25' },
        ],
      },
    });
    expect(p.status).toBe(201);
    expect(p.body.spec.containers.map((c: { imagePullPolicy: string }) => c.imagePullPolicy)).toEqual(['Always', 'IfNotPresent']);
    expect(p.body.spec.containers[0].resources.requests).toEqual({ cpu: '1' });
    expect(p.body.spec.enableServiceLinks).toBe(true);
    const s = await srv.json('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'dflt' },
      spec: { type: 'NodePort', ports: [{ port: 80 }] },
    });
    expect(s.status).toBe(201);
    expect(s.body.spec).toMatchObject({
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: 'None',
    });
    const d = await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'dflt' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
      },
    });
    expect(d.status).toBe(201);
    expect(d.body.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    expect(d.body.spec.template.spec.containers[0].imagePullPolicy).toBe('Always');
    expect(d.body.spec.template.spec.enableServiceLinks).toBeUndefined();
  });

  test('a Node keeps the status it is created with (kubelets register that way); other kinds drop it; updates keep the stored status', async () => {
    const status = { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] };
    const n = await srv.json('POST', '/api/v1/nodes', { metadata: { name: 'reg-node' }, status });
    expect(n.status).toBe(201);
    expect(n.body.status).toEqual({ ...status, allocatable: status.capacity });
    const u = await srv.json('PUT', '/api/v1/nodes/reg-node', { ...n.body, status: { capacity: { cpu: '1' } } });
    expect(u.status).toBe(200);
    expect(u.body.status).toEqual(n.body.status);
    const d = await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'with-status' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
      },
      status: { replicas: 5 },
    });
    expect(d.body.status).toEqual({});
  });
});
