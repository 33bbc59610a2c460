/**
 * --event-ttl: an Event goes that long after its last write (the reference attaches an etcd
 * lease to each write); a write in between restarts its time; other kinds are left alone.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { lastWrittenAt } from '../src/controllers/event-ttl';
import { type Server, startServer } from './helpers/server';

let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: ['--event-ttl=3s'] });
});
afterAll(async () => {
  await srv?.stop();
});

const event = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
  reason: 'Tested',
  message: 'x',
  type: 'Normal',
});
const exists = async (name: string) => (await srv.json('GET', `/api/v1/namespaces/default/events/${name}`)).status === 200;

test('an Event is deleted its TTL after its last write; a write in between restarts the TTL', async () => {
  const t0 = Date.now();
  expect((await srv.json('POST', '/api/v1/namespaces/default/events', event('once'))).status).toBe(201);
  expect((await srv.json('POST', '/api/v1/namespaces/default/events', event('twice'))).status).toBe(201);
  expect((await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'stays' } })).status).toBe(201);
  await Bun.sleep(2000);
  const patched = await srv.json(
    'PATCH',
    '/api/v1/namespaces/default/events/twice',
    { count: 2 },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  expect(patched.status).toBe(200);
  const patchedAt = Date.now();
  // 'once' goes about 3 s after its create; 'twice' is still there then.
  while (await exists('once')) {
    expect(Date.now() - t0).toBeLessThan(6000);
    await Bun.sleep(100);
  }
  expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
  expect(await exists('twice')).toBe(true);
  // 'twice' goes about 3 s after its patch.
  while (await exists('twice')) {
    expect(Date.now() - patchedAt).toBeLessThan(6000);
    await Bun.sleep(100);
  }
  expect(Date.now() - patchedAt).toBeGreaterThanOrEqual(2900);
  // The same Events under events.k8s.io are gone too; a ConfigMap is not an Event.
  expect((await srv.json('GET', '/apis/events.k8s.io/v1/namespaces/default/events/once')).status).toBe(404);
  expect((await srv.json('GET', '/api/v1/namespaces/default/configmaps/stays')).status).toBe(200);
}, 20_000);

test('after a restart an Event expires by its newest timestamp', () => {
  const base = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', creationTimestamp: '2026-01-01T00:00:00Z' } };
  expect(lastWrittenAt(base)).toBe(Date.parse('2026-01-01T00:00:00Z'));
  expect(lastWrittenAt({ ...base, lastTimestamp: '2026-01-01T00:10:00Z' } as never)).toBe(Date.parse('2026-01-01T00:10:00Z'));
  expect(lastWrittenAt({ ...base, series: { lastObservedTime: '2026-01-01T00:20:00.000000Z' } } as never)).toBe(
    Date.parse('2026-01-01T00:20:00Z'),
  );
  expect(Number.isNaN(lastWrittenAt({ apiVersion: 'v1', kind: 'Event', metadata: {} }))).toBe(true);
});
