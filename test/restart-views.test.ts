/**
 * After a restart the watch caches load their objects without parsing them (issue 17: a restart
 * with 1M objects parsed every one to build its selector view); views are made when first asked
 * for. Selectors, initial watch events and the garbage collector's owner checks must see the
 * same objects as before the restart.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restart-views-'));
const NS = 'rv';
const P = `/api/v1/namespaces/${NS}/configmaps`;
let srv: Server;
let ownerUid = '';

beforeAll(async () => {
  srv = await startServer({ dataDir });
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  for (let i = 0; i < 30; i++) {
    const r = await srv.json('POST', P, { metadata: { name: `c-${i}`, labels: { parity: i % 2 ? 'odd' : 'even', i: String(i) } } });
    expect(r.status).toBe(201);
    if (i === 0) ownerUid = r.body.metadata.uid;
  }
  await srv.stop();
  srv = await startServer({ dataDir });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

type List = { items: { metadata: { name: string } }[] };

test('label and field selectors over objects loaded at start (from the cache and from the store)', async () => {
  for (const rv of ['0', '']) {
    const odd = (await srv.json('GET', `${P}?labelSelector=parity%3Dodd&resourceVersion=${rv}`)).body as List;
    expect(odd.items.map((o) => o.metadata.name).sort()).toEqual(Array.from({ length: 15 }, (_, k) => `c-${2 * k + 1}`).sort());
    const one = (await srv.json('GET', `${P}?fieldSelector=metadata.name%3Dc-4&resourceVersion=${rv}`)).body as List;
    expect(one.items.map((o) => o.metadata.name)).toEqual(['c-4']);
  }
});

test('a watch with a selector from resourceVersion 0 gets initial ADDED events of the matching objects only', async () => {
  const r = await srv.fetch(`${P}?watch=1&resourceVersion=0&labelSelector=i%20in%20(3,5,8)&timeoutSeconds=1`);
  const lines = (await r.text()).trim().split('\n').filter(Boolean);
  const names = lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
  expect(names.map((e) => `${e.type} ${e.object.metadata.name}`).sort()).toEqual(['ADDED c-3', 'ADDED c-5', 'ADDED c-8']);
});

test("the garbage collector finds an owner loaded at start in its kind's cache, and collects a dependent of a missing one", async () => {
  const ref = (uid: string) => [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c-0', uid }];
  expect((await srv.json('POST', P, { metadata: { name: 'kept', ownerReferences: ref(ownerUid) } })).status).toBe(201);
  expect(
    (await srv.json('POST', P, { metadata: { name: 'gone', ownerReferences: ref('00000000-0000-0000-0000-000000000000') } })).status,
  ).toBe(201);
  for (let t = 0; t < 100 && (await srv.json('GET', `${P}/gone`)).status !== 404; t++) await Bun.sleep(100);
  expect((await srv.json('GET', `${P}/gone`)).status).toBe(404);
  expect((await srv.json('GET', `${P}/kept`)).status).toBe(200);
  // And the owner's deletion still takes its dependent along (the collector learns of it from its DELETED event).
  expect((await srv.json('DELETE', `${P}/c-0`)).status).toBe(200);
  for (let t = 0; t < 100 && (await srv.json('GET', `${P}/kept`)).status !== 404; t++) await Bun.sleep(100);
  expect((await srv.json('GET', `${P}/kept`)).status).toBe(404);
}, 30_000);
