/**
 * The floors bench/api.ts measures the server against (issue 42): the durable create floor
 * answers 201 and refuses a name it holds with 409; the durable apply floor does what the
 * server does to the same object, the same apply giving the same fields and the same
 * managedFields (the floor is the server's mechanism with everything else left out, so that its
 * cost is a floor of the server's); the contract floor answers a create as the server does (the
 * same object, Status codes, causes and warnings); the watch fan-out floor sends every write to every open watch
 * as the server's watch event lines.
 */
import { afterAll, expect, test } from 'bun:test';
import { applyFloorServer, createFloorServer, watchFloorServer } from '../bench/harness';
import { serverForFile } from './helpers/server';

const srv = serverForFile();
const floors: { stop: () => void }[] = [];
afterAll(() => {
  for (const f of floors) f.stop();
});

const ns = '/api/v1/namespaces/default/configmaps';
// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Any = any;

async function call(url: string, ca: string, init: RequestInit): Promise<{ status: number; body: Any }> {
  const r = await fetch(url, { ...init, tls: { ca } } as RequestInit);
  return { status: r.status, body: await r.json() };
}

test('the create floor: 201 with the server-set metadata, then 409 for the same name', async () => {
  const floor = await createFloorServer();
  floors.push(floor);
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { v: 'x' } });
  const first = await call(`${floor.url}${ns.slice(1)}`, floor.ca, { method: 'POST', body });
  expect(first.status).toBe(201);
  expect(first.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
  expect(Number(first.body.metadata.resourceVersion)).toBeGreaterThan(0);
  expect(first.body.data).toEqual({ v: 'x' });
  expect((await call(`${floor.url}${ns.slice(1)}`, floor.ca, { method: 'POST', body })).status).toBe(409);
});

test('the contract floor: a create answered as the server answers it', async () => {
  const token = 'floor-test-token';
  const floor = await createFloorServer('bench/contract-floor.ts', { TOKEN: token });
  floors.push(floor);
  const post = async (to: 'floor' | 'server', body: string, auth = token) => {
    const init = { method: 'POST', body, headers: { 'content-type': 'application/json', 'user-agent': 'floor-test/1.0' } };
    const r =
      to === 'floor'
        ? await fetch(`${floor.url}${ns.slice(1)}`, {
            ...init,
            headers: { ...init.headers, authorization: `Bearer ${auth}` },
            tls: { ca: floor.ca },
          } as RequestInit)
        : await srv.fetch(ns, init);
    return { status: r.status, warning: r.headers.get('warning'), auditId: r.headers.get('audit-id'), body: (await r.json()) as Any };
  };
  const same = (o: Any) => ({
    ...o,
    metadata: {
      ...o.metadata,
      uid: undefined,
      resourceVersion: undefined,
      creationTimestamp: undefined,
      managedFields: o.metadata.managedFields.map((m: Any) => ({ ...m, time: undefined })),
    },
  });
  const cm = (name: string, extra = '') =>
    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","labels":{"app":"x"}},"data":{"a":"1"}${extra}}`;
  const f = await post('floor', cm('floor-a'));
  const s = await post('server', cm('floor-a'));
  expect([f.status, s.status]).toEqual([201, 201]);
  expect(same(f.body)).toEqual(same(s.body));
  expect(f.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
  expect(f.auditId).toMatch(/^[0-9a-f-]{36}$/);
  // The name in use, a bad name, a body with a duplicate and an unknown field, an unknown token.
  expect((await post('floor', cm('floor-a'))).body).toEqual((await post('server', cm('floor-a'))).body);
  const fb = await post('floor', cm('Bad_Name'));
  const sb = await post('server', cm('Bad_Name'));
  expect([fb.status, sb.status]).toEqual([422, 422]);
  expect(fb.body.details.causes.map((c: Any) => c.field)).toEqual(sb.body.details.causes.map((c: Any) => c.field));
  const extra = ',"data":{"b":"2"},"junk":1';
  const fw = await post('floor', cm('floor-w', extra));
  const sw = await post('server', cm('floor-w', extra));
  expect([fw.status, sw.status]).toEqual([201, 201]);
  expect(fw.warning).toBe(sw.warning);
  expect(fw.warning).toContain('unknown field');
  expect(same(fw.body)).toEqual(same(sw.body));
  expect((await post('floor', cm('floor-b'), 'wrong')).status).toBe(401);
});

test('the apply floor: the same apply to the same object gives what the server gives', async () => {
  // cm-3 as api.ts's apply phase finds its objects: created, then labelled by a strategic merge patch.
  const created = await srv.json('POST', `${ns}?fieldManager=creator`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-3' },
    data: { v: 'y'.repeat(100), w: 'kept' },
  });
  expect(created.status).toBe(201);
  const patched = await srv.fetch(`${ns}/cm-3?fieldManager=patcher`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/strategic-merge-patch+json' },
    body: '{"metadata":{"labels":{"patched":"yes-3"}}}',
  });
  expect(patched.status).toBe(200);
  const template = await (await srv.fetch(`${ns}/cm-3`)).text();
  const floor = await applyFloorServer(template, { PREBUILD: '8' });
  floors.push(floor);

  const applied = (name: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { applied: 'x' } }, data: { v: 'z' } });
  const init = (name: string): RequestInit => ({
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: applied(name),
  });
  const server = await srv.fetch(`${ns}/cm-3?fieldManager=bench&force=true`, init('cm-3'));
  expect(server.status).toBe(200);
  const s = (await server.json()) as Any;
  const f = await call(`${floor.url}${ns.slice(1)}/cm-3?fieldManager=bench&force=true`, floor.ca, init('cm-3'));
  expect(f.status).toBe(200);

  // The same object but for what differs by nature (uid, times, revision).
  const comparable = (o: Any) => ({
    name: o.metadata.name,
    labels: o.metadata.labels,
    data: o.data,
    managedFields: o.metadata.managedFields.map((m: Any) => ({ ...m, time: undefined })),
  });
  expect(comparable(f.body)).toEqual(comparable(s));
  expect(s.metadata.managedFields.map((m: Any) => m.manager)).toEqual(['bench', 'creator', 'patcher']);
  expect(s.data).toEqual({ v: 'z', w: 'kept' });

  // Another object of the phase: its own name and label, made from the same template; a second
  // apply of it changes nothing but its revision.
  const other = await call(`${floor.url}${ns.slice(1)}/cm-7?fieldManager=bench&force=true`, floor.ca, init('cm-7'));
  expect(other.status).toBe(200);
  expect(other.body.metadata.name).toBe('cm-7');
  expect(other.body.metadata.labels).toEqual({ patched: 'yes-7', applied: 'x' });
  expect(other.body.metadata.uid).not.toBe(s.metadata.uid);
  const again = await call(`${floor.url}${ns.slice(1)}/cm-7?fieldManager=bench&force=true`, floor.ca, init('cm-7'));
  expect(Number(again.body.metadata.resourceVersion)).toBeGreaterThan(Number(other.body.metadata.resourceVersion));
  expect(comparable(again.body)).toEqual(comparable(other.body));
});

test('the watch floor: every write reaches every open watch, in order, as a watch event line', async () => {
  const floor = await watchFloorServer();
  floors.push(floor);
  const url = `${floor.url}${ns.slice(1)}`;
  const opened = [0, 1].map(() => fetch(`${url}?watch=1`, { tls: { ca: floor.ca } } as RequestInit));
  const readers = (await Promise.all(opened)).map((r) => {
    expect(r.status).toBe(200);
    return (r.body as ReadableStream<Uint8Array>).getReader();
  });
  const rvs: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    const c = await call(url, floor.ca, {
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
    });
    expect(c.status).toBe(201);
    rvs.push(c.body.metadata.resourceVersion);
  }
  const dec = new TextDecoder();
  for (const reader of readers) {
    let text = '';
    while (text.split('\n').length < 5) {
      const r = await reader.read();
      if (r.done) break;
      text += dec.decode(r.value);
    }
    const events = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Any);
    // The seed each watch opens with, then the three writes.
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED']);
    expect(events.slice(1).map((e) => e.object.metadata.resourceVersion)).toEqual(rvs);
    expect(events.slice(1).map((e) => e.object.metadata.name)).toEqual(['a', 'b', 'c']);
    await reader.cancel();
  }
});
