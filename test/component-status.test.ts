/** ComponentStatus: computed at each read, get and list only, deprecated as in the reference. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';

let srv: Server;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv?.stop();
});

test('kubectl get cs: scheduler, controller-manager and the store, with the deprecation warning', () => {
  const r = srv.kubectl(['get', 'componentstatuses']);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('Warning: v1 ComponentStatus is deprecated in v1.19+');
  expect(r.stdout).toMatch(/NAME\s+STATUS\s+MESSAGE\s+ERROR/);
  expect(r.stdout).toMatch(/scheduler\s+Healthy\s+ok/);
  expect(r.stdout).toMatch(/controller-manager\s+Healthy\s+ok/);
  expect(r.stdout).toMatch(/etcd-0\s+Healthy\s+ok/);
});

test('get one, 404 for another name, 405 for writes; discovery says get and list', async () => {
  const g = await srv.json('GET', '/api/v1/componentstatuses/etcd-0');
  expect(g.status).toBe(200);
  expect(g.body).toMatchObject({ kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: 'etcd-0' } });
  expect(g.body.conditions).toEqual([{ type: 'Healthy', status: 'True', message: 'ok' }]);
  expect((await srv.json('GET', '/api/v1/componentstatuses/nope')).status).toBe(404);
  const l = await srv.json('GET', '/api/v1/componentstatuses');
  expect(l.body.kind).toBe('ComponentStatusList');
  expect(l.body.items.map((i: any) => i.metadata.name)).toEqual(['scheduler', 'controller-manager', 'etcd-0']);
  expect((await srv.json('POST', '/api/v1/componentstatuses', { metadata: { name: 'x' } })).status).toBe(405);
  expect((await srv.json('DELETE', '/api/v1/componentstatuses/etcd-0')).status).toBe(405);
  const d = await srv.json('GET', '/api/v1');
  const cs = d.body.resources.find((r: any) => r.name === 'componentstatuses');
  expect(cs).toMatchObject({ kind: 'ComponentStatus', namespaced: false, shortNames: ['cs'], verbs: ['get', 'list'] });
});
