/**
 * pods/binding (issue 35 item 1, the scheduler's way to bind): a Binding sets spec.nodeName once
 * with PodScheduled=True and the Binding's annotations; a second binding, a bad target, a
 * mismatched name or uid are refused with the reference's Status; a pod being deleted cannot be
 * bound. Discovery lists the subresource.
 */
import { expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

const srv = serverForFile();
let n = 0;

async function pod(): Promise<{ ns: string; name: string; uid: string }> {
  const ns = `bind-${++n}`;
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
  const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  expect(r.status).toBe(201);
  return { ns, name: 'p', uid: r.body.metadata.uid };
}

const bind = (ns: string, name: string, body: unknown) => srv.json('POST', `/api/v1/namespaces/${ns}/pods/${name}/binding`, body);

test('a binding sets spec.nodeName, PodScheduled=True and its annotations; a second one is 409', async () => {
  const p = await pod();
  const r = await bind(p.ns, p.name, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: p.name, annotations: { 'scheduler.example/why': 'fits' } },
    target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
  });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
  const got = (await srv.json('GET', `/api/v1/namespaces/${p.ns}/pods/${p.name}`)).body;
  expect(got.spec.nodeName).toBe('node-1');
  expect(got.metadata.annotations['scheduler.example/why']).toBe('fits');
  const cond = got.status.conditions.find((c: { type: string }) => c.type === 'PodScheduled');
  expect(cond.status).toBe('True');
  expect(cond.lastTransitionTime).toMatch(/Z$/);
  const again = await bind(p.ns, p.name, { metadata: { name: p.name }, target: { name: 'node-2' } });
  expect(again.status).toBe(409);
  expect(again.body.reason).toBe('Conflict');
  expect(again.body.message).toBe(
    `Operation cannot be fulfilled on pods/binding "${p.name}": pod ${p.name} is already assigned to node "node-1"`,
  );
  expect((await srv.json('GET', `/api/v1/namespaces/${p.ns}/pods/${p.name}`)).body.spec.nodeName).toBe('node-1');
});

test('bad bindings: target, name, uid, a missing pod', async () => {
  const p = await pod();
  const noTarget = await bind(p.ns, p.name, { metadata: { name: p.name }, target: {} });
  expect(noTarget.status).toBe(422);
  expect(noTarget.body.details.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' }]);
  const badKind = await bind(p.ns, p.name, { metadata: { name: p.name }, target: { kind: 'Pod', name: 'n' } });
  expect(badKind.status).toBe(422);
  expect(badKind.body.details.causes[0].field).toBe('target.kind');
  const otherName = await bind(p.ns, p.name, { metadata: { name: 'q' }, target: { name: 'n' } });
  expect(otherName.status).toBe(400);
  expect(otherName.body.message).toBe('name in URL does not match name in Binding object');
  const otherUid = await bind(p.ns, p.name, { metadata: { name: p.name, uid: 'not-it' }, target: { name: 'n' } });
  expect(otherUid.status).toBe(409);
  expect(otherUid.body.message).toContain('Precondition failed: UID in precondition: not-it');
  const missing = await bind(p.ns, 'nope', { metadata: { name: 'nope' }, target: { name: 'n' } });
  expect(missing.status).toBe(404);
  expect(missing.body.message).toBe('pods "nope" not found');
  // None of these bound the pod.
  expect((await srv.json('GET', `/api/v1/namespaces/${p.ns}/pods/${p.name}`)).body.spec.nodeName).toBeUndefined();
});

test('a pod with a finalizer being deleted cannot be bound; discovery lists pods/binding', async () => {
  const p = await pod();
  await srv.json(
    'PATCH',
    `/api/v1/namespaces/${p.ns}/pods/${p.name}`,
    { metadata: { finalizers: ['example.com/hold'] } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  expect((await srv.json('DELETE', `/api/v1/namespaces/${p.ns}/pods/${p.name}`)).status).toBe(200);
  const r = await bind(p.ns, p.name, { metadata: { name: p.name }, target: { name: 'n' } });
  expect(r.status).toBe(409);
  expect(r.body.message).toContain(`pod ${p.name} is being deleted, cannot be assigned to a host`);
  const d = (await srv.json('GET', '/api/v1')).body;
  expect(d.resources.find((x: { name: string }) => x.name === 'pods/binding')).toEqual({
    name: 'pods/binding',
    singularName: '',
    namespaced: true,
    kind: 'Binding',
    verbs: ['create'],
  });
});

test('POST .../bindings binds the pod the Binding names (the older form of pods/binding)', async () => {
  const p = await pod();
  const r = await srv.json('POST', `/api/v1/namespaces/${p.ns}/bindings`, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: p.name },
    target: { apiVersion: 'v1', kind: 'Node', name: 'node-7' },
  });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
  expect((await srv.json('GET', `/api/v1/namespaces/${p.ns}/pods/${p.name}`)).body.spec.nodeName).toBe('node-7');
  const bad = await srv.json('POST', `/api/v1/namespaces/${p.ns}/bindings`, {
    metadata: { name: p.name },
    target: { kind: 'Pod', name: 'x' },
  });
  expect(bad.status).toBe(422);
  expect((await srv.json('GET', `/api/v1/namespaces/${p.ns}/bindings`)).status).toBe(405);
});
