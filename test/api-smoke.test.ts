/** A first end-to-end check over HTTPS against the real server process. */
import { expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

const srv = serverForFile();

test('create, get, list and delete a ConfigMap over HTTPS', async () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smoke' }, data: { a: 'b' } };
  const c = await srv.json('POST', '/api/v1/namespaces/default/configmaps', cm);
  expect(c.status).toBe(201);
  expect(c.body.metadata.uid).toBeString();
  const g = await srv.json('GET', '/api/v1/namespaces/default/configmaps/smoke');
  expect(g.status).toBe(200);
  expect(g.body.data).toEqual({ a: 'b' });
  expect(g.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
  const l = await srv.json('GET', '/api/v1/configmaps');
  expect(l.body.kind).toBe('ConfigMapList');
  expect(l.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('smoke');
  const d = await srv.json('DELETE', '/api/v1/namespaces/default/configmaps/smoke');
  expect(d.status).toBe(200);
  expect(d.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'smoke', kind: 'configmaps' } });
  expect((await srv.json('GET', '/api/v1/namespaces/default/configmaps/smoke')).status).toBe(404);
});

test('requests without a valid token get 401 Unauthorized', async () => {
  const r = await srv.fetch('/api/v1/namespaces', { token: null });
  expect(r.status).toBe(401);
  expect(await r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  const h = await srv.fetch('/livez', { token: null });
  expect(h.status).toBe(200);
});

test('kubectl sees the system namespaces', () => {
  const r = srv.kubectl(['get', 'namespaces', '-o', 'name']);
  expect(r.stderr).toBe('');
  expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([
    'namespace/default',
    'namespace/kube-node-lease',
    'namespace/kube-public',
    'namespace/kube-system',
  ]);
});
