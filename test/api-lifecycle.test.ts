/**
 * Graceful shutdown: on SIGTERM with --shutdown-delay-duration=2s, /readyz fails at once while
 * requests are still served; then the process exits 0 and a restart on the same data dir serves
 * the data written before. (The server is started twice, one after the other.)
 */
import { afterAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lifecycle-'));
let srv: Server | undefined;

afterAll(async () => {
  if (srv && srv.proc.exitCode === null) srv.proc.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('SIGTERM: /readyz fails at once, requests are still served, exit 0, data persists', async () => {
  srv = await startServer({ dataDir, args: ['--shutdown-delay-duration=2s'] });
  const s = srv;
  const c = await s.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'persisted' }, data: { k: 'v' } });
  expect(c.status).toBe(201);
  expect(await (await s.fetch('/readyz', { token: null })).text()).toBe('ok');

  const t0 = Date.now();
  s.proc.kill('SIGTERM');
  // /readyz fails at once.
  let ready: Response | undefined;
  for (let i = 0; i < 20; i++) {
    ready = await s.fetch('/readyz?verbose', { token: null });
    if (ready.status === 500) break;
    await ready.text();
    await Bun.sleep(50);
  }
  expect(ready?.status).toBe(500);
  const text = await (ready as Response).text();
  expect(text).toContain('[-]shutdown failed: reason withheld');
  expect(text).toContain('[+]ping ok');
  expect(text).toEndWith('readyz check failed\n');
  expect(Date.now() - t0).toBeLessThan(1500);
  // Without verbose the failure lists the checks as well.
  const quiet = await s.fetch('/readyz', { token: null });
  expect(quiet.status).toBe(500);
  expect(await quiet.text()).toContain('[-]shutdown failed: reason withheld');
  expect((await s.fetch('/readyz/shutdown', { token: null })).status).toBe(500);
  // Liveness is unaffected.
  const live = await s.fetch('/livez', { token: null });
  expect(live.status).toBe(200);
  expect(await live.text()).toBe('ok');
  // Requests are still served during the delay, writes included.
  const g = await s.json('GET', '/api/v1/namespaces/default/configmaps/persisted');
  expect(g.status).toBe(200);
  const w = await s.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'written-during-delay' } });
  expect(w.status).toBe(201);
  expect(s.proc.exitCode).toBeNull();

  const code = await s.proc.exited;
  expect(code).toBe(0);
  const elapsed = Date.now() - t0;
  expect(elapsed).toBeGreaterThanOrEqual(1900);
  expect(elapsed).toBeLessThan(10_000);
  expect(s.logs()).toContain('shut down cleanly');

  // Restart on the same data dir: everything is there.
  srv = await startServer({ dataDir });
  const r = srv;
  const a = await r.json('GET', '/api/v1/namespaces/default/configmaps/persisted');
  expect(a.status).toBe(200);
  expect(a.body.data).toEqual({ k: 'v' });
  expect(a.body.metadata.uid).toBe(c.body.metadata.uid);
  expect(a.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
  expect((await r.json('GET', '/api/v1/namespaces/default/configmaps/written-during-delay')).status).toBe(200);
  // The admin token and kubeconfig are reused.
  expect(r.token).toBe(s.token);
  expect(r.kubectl(['get', 'configmap', 'persisted', '-o', 'jsonpath={.data.k}']).stdout).toBe('v');
  // New writes continue after the old revisions.
  const n = await r.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'after-restart' } });
  expect(Number(n.body.metadata.resourceVersion)).toBeGreaterThan(Number(w.body.metadata.resourceVersion));
  expect(await r.stop()).toBe(0);
}, 45_000);

test('a stray failure outside any request (an unhandled rejection, an uncaught exception) is logged and the server goes on', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-stray-'));
  const preload = path.join(dir, 'stray.ts');
  // Loaded before src/main.ts: fails twice once the server is up.
  fs.writeFileSync(
    preload,
    `setTimeout(() => { Promise.reject(new Error('stray rejection')); }, 1500);
setTimeout(() => { throw new Error('stray exception'); }, 1700);
`,
  );
  const before = process.env.SVC_SERVER_BUN_ARGS;
  process.env.SVC_SERVER_BUN_ARGS = `--preload ${preload}`;
  let s: Server | undefined;
  try {
    s = await startServer({ dataDir: path.join(dir, 'data') });
    await Bun.sleep(2200);
    expect((await s.fetch('/livez')).status).toBe(200);
    expect(
      (await s.json('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } }))
        .status,
    ).toBe(201);
    expect(s.logs()).toContain('unhandled rejection: Error: stray rejection');
    expect(s.logs()).toContain('uncaught exception: Error: stray exception');
    expect(s.proc.exitCode).toBeNull();
  } finally {
    if (before === undefined) delete process.env.SVC_SERVER_BUN_ARGS;
    else process.env.SVC_SERVER_BUN_ARGS = before;
    await s?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
