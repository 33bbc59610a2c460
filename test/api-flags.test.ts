/**
 * Behaviour that needs non-default flags, on one server started with
 *   --etcd-compaction-interval=2s                     (continue tokens and history expire quickly)
 *   --feature-gates=APIResponseCompression=false      (no gzip)
 *   --token-auth-file=<csv>                           (extra users, quoted groups)
 * plus --help and bad flags (processes that exit at once).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, type Server, startServer } from './helpers/server';

const ROOT = path.resolve(import.meta.dir, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-flags-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(
  tokenFile,
  [
    '# token,user,uid,"groups"',
    'alice-token,alice,uid-alice,"system:masters,dev"',
    'bob-token,bob,uid-bob,"dev,qa"',
    'carol-token,carol,uid-carol',
    '',
  ].join('\n'),
);

let srv: Server;
// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const NS = 'flags';
const P = `/api/v1/namespaces/${NS}/configmaps`;

beforeAll(async () => {
  srv = await startServer({
    args: ['--etcd-compaction-interval=2s', '--feature-gates=APIResponseCompression=false', `--token-auth-file=${tokenFile}`],
  });
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  for (let i = 0; i < 6; i++) expect((await srv.json('POST', P, { metadata: { name: `c${i}` } })).status).toBe(201);
}, 30_000);
afterAll(async () => {
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Wait until the store has compacted past `rv` (writes keep the revision moving). */
async function waitCompactedPast(rv: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  let i = 0;
  while (Date.now() < deadline) {
    await srv.json('POST', P, { metadata: { name: `filler-${Date.now()}-${i++}` } });
    const m = await (await srv.fetch('/metrics')).text();
    const c = /^svc_store_compacted_revision (\d+)/m.exec(m);
    if (c && Number(c[1]) > rv) return;
    await Bun.sleep(250);
  }
  throw new Error(`store not compacted past ${rv}`);
}

describe('expiry (compaction every 2 s)', () => {
  test('an expired continue token: 410 Expired, with a continue token to resume inconsistently', async () => {
    const first = await srv.json('GET', `${P}?limit=2`);
    expect(first.status).toBe(200);
    const token = first.body.metadata.continue as string;
    expect(token).toBeString();
    await waitCompactedPast(Number(first.body.metadata.resourceVersion));
    const r = await srv.json('GET', `${P}?limit=2&continue=${encodeURIComponent(token)}`);
    expect(r.status).toBe(410);
    expect(r.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message:
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    });
    // The reference puts a fresh token (resume at the newest version) into the Status.
    const next = r.body.metadata?.continue;
    expect(next).toBeString();
    const resumed = await srv.json('GET', `${P}?limit=2&continue=${encodeURIComponent(next)}`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['c2', 'c3']);
  }, 30_000);

  test('Exact on a compacted revision: 410 Expired', async () => {
    const old = Number((await srv.json('GET', P)).body.metadata.resourceVersion);
    await waitCompactedPast(old);
    for (const q of [`resourceVersion=${old}&resourceVersionMatch=Exact`, `resourceVersion=${old}&limit=2`]) {
      const r = await srv.json('GET', `${P}?${q}`);
      expect([q, r.status]).toEqual([q, 410]);
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
      expect(r.body.message).toBe('The resourceVersion for the provided list is too old.');
    }
    // Not older than an old version is still served (newest data).
    const nol = await srv.json('GET', `${P}?resourceVersion=${old}`);
    expect(nol.status).toBe(200);
  }, 30_000);
});

describe('APIResponseCompression=false', () => {
  test('a large list is not gzipped although the client accepts gzip', async () => {
    const big = 'x'.repeat(100 * 1024);
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'gz' } });
    for (const n of ['b1', 'b2'])
      expect((await srv.json('POST', '/api/v1/namespaces/gz/configmaps', { metadata: { name: n }, data: { big } })).status).toBe(201);
    const r = await srv.fetch('/api/v1/namespaces/gz/configmaps', {
      headers: { 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBeNull();
    const body = await r.text();
    expect(body.length).toBeGreaterThan(200 * 1024);
    expect(JSON.parse(body).items).toHaveLength(2);
  });
});

describe('authentication and authorization', () => {
  const as = (token: string | null, p: string, init: RequestInit = {}) => srv.fetch(p, { ...init, token });

  test('no token or a wrong token: 401 Unauthorized', async () => {
    for (const t of [null, 'wrong-token', '']) {
      const r = await as(t, '/api/v1/namespaces');
      expect(r.status).toBe(401);
      expect((await r.json()) as Json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
    // Basic auth is not accepted.
    const basic = await srv.fetch('/api/v1/namespaces', { headers: { authorization: `Basic ${btoa('alice:alice-token')}` } });
    expect(basic.status).toBe(401);
    await basic.text();
  });

  test('a system:masters user from the token file (quoted groups) may act', async () => {
    const r = await as('alice-token', P, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'by-alice' } }),
    });
    expect(r.status).toBe(201);
    await r.text();
    const l = await as('alice-token', '/api/v1/namespaces');
    expect(l.status).toBe(200);
    await l.text();
  });

  test('another user: 403 Forbidden with the reference message', async () => {
    const list = await as('bob-token', P);
    expect(list.status).toBe(403);
    expect((await list.json()) as Json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${NS}"`,
      reason: 'Forbidden',
      details: { kind: 'configmaps' },
      code: 403,
    });
    const get = await as('carol-token', '/apis/apps/v1/namespaces/default/deployments/web');
    expect(get.status).toBe(403);
    expect((await get.json()) as Json).toMatchObject({
      message:
        'deployments.apps "web" is forbidden: User "carol" cannot get resource "deployments" in API group "apps" in the namespace "default"',
      reason: 'Forbidden',
      details: { name: 'web', group: 'apps', kind: 'deployments' },
      code: 403,
    });
    const nodes = await as('bob-token', '/api/v1/nodes');
    expect(((await nodes.json()) as Json).message).toBe(
      'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    const status = await as('bob-token', '/apis/apps/v1/namespaces/default/deployments/web/status', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(((await status.json()) as Json).message).toBe(
      'deployments.apps "web" is forbidden: User "bob" cannot update resource "deployments/status" in API group "apps" in the namespace "default"',
    );
    const create = await as('bob-token', P, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"metadata":{"name":"x"}}',
    });
    expect(create.status).toBe(403);
    expect(((await create.json()) as Json).message).toBe(
      `configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "${NS}"`,
    );
  });

  test('any authenticated user may read discovery (system:discovery); /metrics is forbidden', async () => {
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/version']) {
      const r = await as('bob-token', p);
      expect([p, r.status]).toEqual([p, 200]);
      await r.text();
    }
    const m = await as('bob-token', '/metrics');
    expect(m.status).toBe(403);
    expect((await m.json()) as Json).toMatchObject({
      reason: 'Forbidden',
      code: 403,
      message: 'forbidden: User "bob" cannot get path "/metrics"',
    });
  });

  test('kubectl with the admin kubeconfig works; as another user it reports Forbidden', () => {
    const ok = srv.kubectl(['get', 'configmaps', '-n', NS, '-o', 'name']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('configmap/c0');
    const bob = srv.kubectl(['--token=bob-token', 'get', 'configmaps', '-n', NS]);
    expect(bob.code).not.toBe(0);
    expect(bob.stderr).toContain(
      `Error from server (Forbidden): configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${NS}"`,
    );
  });
});

describe('command line', () => {
  // Each of these processes should exit by itself: one that starts serving instead is stopped after
  // 20 s (its exit code then null) rather than hanging the file (spawnSync holds the event loop).
  const run = (args: string[]) => {
    const r = Bun.spawnSync([process.execPath, path.join(ROOT, 'src/main.ts'), ...args], {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 20_000,
    });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  test('--help lists every flag and exits 0', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    for (const f of [
      'bind-address',
      'port',
      'secure-port',
      'data-dir',
      'feature-gates',
      'runtime-config',
      'token-auth-file',
      'livez-grace-period',
      'shutdown-delay-duration',
      'max-requests-inflight',
      'max-mutating-requests-inflight',
      'request-timeout',
      'min-request-timeout',
      'tls-cert-file',
      'tls-private-key-file',
      'etcd-compaction-interval',
    ])
      expect(r.stdout).toContain(`--${f}`);
    expect(r.stdout).toContain('APIResponseCompression');
    // Every flag the help names is accepted by the parser (-h as well).
    expect(run(['-h']).code).toBe(0);
  });

  test('--etcd-compaction-interval=0 turns compaction off: old revisions and continue tokens stay valid', async () => {
    const s = await startServer({ args: ['--etcd-compaction-interval=0'] });
    try {
      const cms = '/api/v1/namespaces/default/configmaps';
      for (const n of ['z1', 'z2', 'z3']) expect((await s.json('POST', cms, { metadata: { name: n } })).status).toBe(201);
      const page = await s.json('GET', `${cms}?limit=1`);
      const rv = page.body.metadata.resourceVersion as string;
      // More writes, then time: a compactor running on a 0 interval compacted past rv at once,
      // and a continue token's lifetime (the interval) was 0.
      for (const n of ['z4', 'z5']) await s.json('POST', cms, { metadata: { name: n } });
      await Bun.sleep(1500);
      const exact = await s.json('GET', `${cms}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(exact.status).toBe(200);
      expect(exact.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['z1', 'z2', 'z3']);
      const next = await s.json('GET', `${cms}?limit=5&continue=${encodeURIComponent(page.body.metadata.continue)}`);
      expect(next.status).toBe(200);
      expect(next.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['z2', 'z3']);
    } finally {
      await s.stop();
    }
  }, 30_000);

  test('a deprecated feature gate is warned about at start; the declarative validation counters are registered', async () => {
    const s = await startServer({ args: ['--feature-gates=DeclarativeValidationTakeover=true'] });
    try {
      expect(s.logs()).toContain(
        'W Setting deprecated feature gate DeclarativeValidationTakeover=true. It will be removed in a future release.',
      );
      const m = await (await s.fetch('/metrics')).text();
      expect(m).toContain(
        '# TYPE apiserver_validation_declarative_validation_mismatch_total counter\napiserver_validation_declarative_validation_mismatch_total 0',
      );
      expect(m).toContain('apiserver_validation_declarative_validation_panic_total 0');
    } finally {
      await s.stop();
    }
    // Gates that are not deprecated are not warned about.
    expect(srv.logs()).not.toContain('Setting deprecated feature gate');
  });

  test('a bad flag exits non-zero with a message', async () => {
    const unknown = run(['--no-such-flag']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown flag: --no-such-flag');
    const gate = run(['--feature-gates=NoSuchGate=true']);
    expect(gate.code).not.toBe(0);
    expect(gate.stderr).toContain('NoSuchGate');
    const dur = run(['--shutdown-delay-duration=soon']);
    expect(dur.code).not.toBe(0);
    expect(dur.stderr).toContain('--shutdown-delay-duration');
    expect(dur.stderr).toContain('soon');
    const port = run(['--port=http']);
    expect(port.code).not.toBe(0);
    expect(port.stderr).toContain('--port');
    const missing = run([`--data-dir=${path.join(dir, 'd2')}`, `--port=${await freePort()}`, '--token-auth-file=/no/such/file.csv']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('/no/such/file.csv');
    // Five server processes, one after another (about 2 s each on a loaded 2-core machine).
  }, 30_000);

  test('a second server on a data directory in use, or on a port in use, exits non-zero and changes nothing', async () => {
    const first = await startServer({ dataDir: path.join(dir, 'held') });
    try {
      // (Each refused server exits in ~1 s; one that served instead would be stopped at 20 s.)
      const cms = '/api/v1/namespaces/default/configmaps';
      expect((await first.json('POST', cms, { metadata: { name: 'before' } })).status).toBe(201);
      // The same data directory on another port: the store's lock is held.
      const sameDir = run([`--data-dir=${first.dataDir}`, `--port=${await freePort()}`]);
      expect(sameDir.code).toBe(1);
      expect(sameDir.stderr).toContain(`the store's directory ${path.join(first.dataDir, 'store')} is in use by another process`);
      // Another data directory on the same port: the bind fails (no second listener beside the first).
      const samePort = run([`--data-dir=${path.join(dir, 'other')}`, `--port=${first.port}`]);
      expect(samePort.code).toBe(1);
      expect(samePort.stderr).toContain(`failed to listen on 127.0.0.1:${first.port}`);
      // Every connection still reaches the first server, whose store is as it was.
      for (let i = 0; i < 20; i++) {
        const r = await first.json('GET', `${cms}/before`);
        expect(r.status).toBe(200);
      }
      expect((await first.json('POST', cms, { metadata: { name: 'after' } })).status).toBe(201);
    } finally {
      await first.stop();
    }
    // Stopped, the directory is free again, and holds both writes.
    const again = await startServer({ dataDir: path.join(dir, 'held') });
    try {
      const names = (await again.json('GET', '/api/v1/namespaces/default/configmaps')).body.items.map(
        (o: { metadata: { name: string } }) => o.metadata.name,
      );
      expect(names).toEqual(expect.arrayContaining(['before', 'after']));
    } finally {
      await again.stop();
    }
  }, 90_000);
});
