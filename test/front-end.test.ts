/**
 * The Elysia front end (issue 9 item 8): its own routes (health, version, metrics, debug) and the
 * one route into the request chain, against a real server process.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

const srv = serverForFile();

describe('front-end routes', () => {
  test.each(['/livez', '/readyz', '/healthz', '/livez/ping', '/readyz/ping'])('%s answers ok without credentials', async (p) => {
    const r = await srv.fetch(p, { token: null });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('ok');
  });

  test('an unknown health check is 404 from the chain (a Status), not a route miss', async () => {
    const r = await srv.fetch('/livez/nope');
    expect(r.status).toBe(404);
  });

  test.each([
    ['/version', 'application/json'],
    ['/metrics', 'text/plain; version=0.0.4; charset=utf-8'],
    ['/debug/runtime', 'application/json'],
  ])('%s: 401 Status without credentials, %s with them', async (p, type) => {
    const anon = await srv.fetch(p, { token: null });
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { kind: string }).kind).toBe('Status');
    const r = await srv.fetch(p);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(type);
  });

  test('/debug/runtime reports the store revision and memory', async () => {
    await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'fe' } });
    const body = (await (await srv.fetch('/debug/runtime')).json()) as { store: { revision: number }; memory: { rss: number } };
    expect(body.store.revision).toBeGreaterThan(0);
    expect(body.memory.rss).toBeGreaterThan(0);
  });

  test('an unknown debug endpoint and the root path reach the chain: 404 Status', async () => {
    for (const p of ['/debug/nope', '/nothing/here']) {
      const r = await srv.fetch(p);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { reason: string }).reason).toBe('NotFound');
    }
  });

  test('request bodies reach the chain unread: create, then PUT with YAML', async () => {
    const c = await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'fe-body' }, data: { a: '1' } });
    expect(c.status).toBe(201);
    const r = await srv.fetch('/api/v1/namespaces/default/configmaps/fe-body', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fe-body\n  resourceVersion: "${c.body.metadata.resourceVersion}"\ndata:\n  a: "2"\n`,
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: Record<string, string> }).data).toEqual({ a: '2' });
  });
});
