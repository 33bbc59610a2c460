/**
 * Fault injection (issue 40), end to end over HTTP with kubectl and client-node: FaultInjection
 * objects (testing.svc.io/v1alpha1, gate FaultInjection) make requests they match fail, wait,
 * lose their watch, or read the past, as a client sees a real failure; a seed replays the same
 * injections; a fault acts within a second of its creation and stops when deleted; only users
 * with the verb `inject` may create one; with the gate off the kind is not served.
 *
 * Each test scopes its fault to configmaps of its own namespace, so the faults do not meet.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { mulberry32 } from '../src/faults/rng';
import { runClient } from './helpers/client-node';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const FI = '/apis/testing.svc.io/v1alpha1/faultinjections';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-faults-'));
const tokenFile = path.join(dir, 'tokens.csv');
const policyFile = path.join(dir, 'policy.yaml');
const logFile = path.join(dir, 'audit.log');
fs.writeFileSync(tokenFile, ['dev-token,dev,uid-dev,"developers"', 'ops-token,ops,uid-ops,"operators"', ''].join('\n'));
fs.writeFileSync(policyFile, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n');

let srv: Server;
beforeAll(async () => {
  srv = await startServer({
    args: [
      '--feature-gates=FaultInjection=true',
      `--token-auth-file=${tokenFile}`,
      `--audit-policy-file=${policyFile}`,
      `--audit-log-path=${logFile}`,
    ],
  });
  // dev may write faultinjections but not inject; ops may do both.
  const role = (name: string, verbs: string[]) =>
    srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: ['testing.svc.io'], resources: ['faultinjections'], verbs }],
    });
  const bind = (name: string, user: string) =>
    srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  await role('fault-writer', ['create', 'get', 'list', 'update', 'delete']);
  await role('fault-injector', ['create', 'get', 'list', 'update', 'delete', 'inject']);
  await bind('fault-writer', 'dev');
  await bind('fault-injector', 'ops');
  for (const ns of ['f-err', 'f-429', 'f-delay', 'f-seed', 'f-fast', 'f-watch', 'f-stale'])
    await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A fault on the configmaps of namespace `ns` for every authenticated user. */
const fault = (name: string, ns: string, actions: Json[], spec: Json = {}, verbs = ['*']): Json => ({
  apiVersion: 'testing.svc.io/v1alpha1',
  kind: 'FaultInjection',
  metadata: { name },
  spec: {
    match: [
      {
        subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }],
        resourceRules: [{ verbs, apiGroups: [''], resources: ['configmaps'], namespaces: [ns] }],
      },
    ],
    actions,
    ...spec,
  },
});
const create = async (o: Json, token?: string) => {
  const r = await srv.fetch(FI, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(o),
  });
  return { status: r.status, body: (await r.json()) as Json };
};
const remove = (name: string) => srv.json('DELETE', `${FI}/${name}`);
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const statusOf = async (name: string): Promise<Json> => (await srv.json('GET', `${FI}/${name}`)).body.status ?? {};

test('invalid specs are refused with one 422 naming each field', async () => {
  const bad = fault('bad', 'f-err', [{ error: { code: 418 } }, { delay: { fixedMs: 1 }, stale: { revisions: 1 } }, { watch: {} }], {
    probability: 1.5,
    limit: 0,
  });
  const r = await create(bad);
  expect(r.status).toBe(422);
  expect(r.body.reason).toBe('Invalid');
  const fields = r.body.details.causes.map((c: Json) => c.field).sort();
  expect(fields).toEqual(['spec.actions[0].error.code', 'spec.actions[1]', 'spec.actions[2].watch', 'spec.limit', 'spec.probability']);
  expect(r.body.message).toContain('spec.actions[0].error.code: Unsupported value: 418');
  const noRules = await create({ ...fault('bad', 'f-err', []), spec: { match: [{ subjects: [] }], actions: [] } });
  expect(noRules.status).toBe(422);
  expect(noRules.body.message).toContain('spec.match[0].subjects: Required value');
  expect(noRules.body.message).toContain('spec.actions: Required value');
});

test('only system:masters or a role with the verb inject may create faults', async () => {
  const o = fault('who-may', 'f-err', [{ delay: { fixedMs: 1 } }]);
  const dev = await create(o, 'dev-token');
  expect(dev.status).toBe(403);
  expect(dev.body.reason).toBe('Forbidden');
  expect(dev.body.message).toBe(
    'faultinjections.testing.svc.io "who-may" is forbidden: user "dev" (groups=["developers" "system:authenticated"]) is attempting to inject faults without the verb "inject" on faultinjections.testing.svc.io',
  );
  const ops = await create(o, 'ops-token');
  expect(ops.status).toBe(201);
  expect((await remove('who-may')).status).toBe(200);
});

test('an error fault is a real failure for kubectl, audited, counted and in /metrics', async () => {
  expect((await create(fault('cm-500', 'f-err', [{ error: { code: 500, message: 'disk on fire' } }], { warn: true }))).status).toBe(201);
  const r = await until(
    () => srv.fetch(`${cms('f-err')}`),
    (x) => x.status === 500,
  );
  expect(r.status).toBe(500);
  expect(r.headers.get('warning')).toContain('fault injected: cm-500:error');
  expect(await r.json()).toEqual({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Internal error occurred: disk on fire',
    reason: 'InternalError',
    details: { causes: [{ message: 'disk on fire' }] },
    code: 500,
  });
  const k = srv.kubectl(['get', 'configmaps', '-n', 'f-err']);
  expect(k.code).not.toBe(0);
  expect(k.stderr).toContain('Internal error occurred: disk on fire');
  // Other namespaces are untouched.
  expect(srv.kubectl(['get', 'configmaps', '-n', 'f-delay']).code).toBe(0);
  const audited = await until(
    async () =>
      fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Json)
        .filter((e) => e.annotations?.['faults.svc.io/injected']),
    (x) => x.length > 0,
  );
  expect(audited[0].annotations['faults.svc.io/injected']).toBe('cm-500:error');
  expect(audited[0].responseStatus.code).toBe(500);
  const st = await until(
    () => statusOf('cm-500'),
    (s) => (s.injected ?? 0) >= 2,
    3000,
  );
  expect(st.injected).toBeGreaterThanOrEqual(2);
  expect(st.matched).toBe(st.injected);
  expect(st.conditions.map((c: Json) => `${c.type}=${c.status}/${c.reason}`)).toEqual(['Accepted=True/Valid', 'Active=True/Active']);
  const metrics = await (await srv.fetch('/metrics')).text();
  expect(metrics).toMatch(/svc_fault_injections_total\{action="error",fault="cm-500"\} [1-9]/);
  await remove('cm-500');
});

test('429 with Retry-After: kubectl retries and succeeds once the limit is spent', async () => {
  expect((await create(fault('cm-429', 'f-429', [{ error: { code: 429, retryAfterSeconds: 1 } }], { limit: 2 }))).status).toBe(201);
  const r = await until(
    () => srv.fetch(cms('f-429')),
    (x) => x.status === 429,
  );
  expect(r.status).toBe(429);
  expect(r.headers.get('retry-after')).toBe('1');
  expect(await r.json()).toEqual({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Too many requests, please try again later.',
    reason: 'TooManyRequests',
    details: { retryAfterSeconds: 1 },
    code: 429,
  });
  const t0 = Date.now();
  const k = srv.kubectl(['get', 'configmaps', '-n', 'f-429', '-o', 'name']);
  expect(k.code).toBe(0);
  // The second injection made kubectl wait its Retry-After second before trying again.
  expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  const st = await until(
    () => statusOf('cm-429'),
    (s) => s.conditions?.some((c: Json) => c.reason === 'LimitReached'),
    3000,
  );
  expect(st.injected).toBe(2);
  expect(st.conditions.find((c: Json) => c.type === 'Active')).toMatchObject({ status: 'False', reason: 'LimitReached' });
  await remove('cm-429');
});

test('a delay holds the answer, with a Warning', async () => {
  expect((await create(fault('cm-delay', 'f-delay', [{ delay: { fixedMs: 300, jitterMs: 100 } }], { warn: true }))).status).toBe(201);
  await until(
    () => srv.fetch(cms('f-delay')).then((x) => x.headers.get('warning') ?? ''),
    (w) => w.includes('cm-delay'),
  );
  const t0 = performance.now();
  const r = await srv.fetch(cms('f-delay'));
  const took = performance.now() - t0;
  expect(r.status).toBe(200);
  expect(took).toBeGreaterThanOrEqual(295);
  expect(took).toBeLessThan(1500);
  expect(r.headers.get('warning')).toBe('299 - "fault injected: cm-delay:delay"');
  await remove('cm-delay');
});

test('the same seed gives the same injections', async () => {
  const spec = { probability: 0.5, seed: 1234 };
  const run = async (): Promise<number[]> => {
    expect((await create(fault('cm-seed', 'f-seed', [{ error: { code: 503 } }], spec))).status).toBe(201);
    // Until the fault acts (the first injection), then 24 requests in sequence.
    await until(
      () => srv.fetch(cms('f-seed')),
      (x) => x.status === 503,
    );
    const seq: number[] = [];
    for (let i = 0; i < 24; i++) seq.push((await srv.fetch(cms('f-seed'))).status);
    expect((await remove('cm-seed')).status).toBe(200);
    await until(
      () => srv.fetch(cms('f-seed')).then((x) => x.status),
      (s) => s === 200,
    );
    return seq;
  };
  const a = await run();
  const b = await run();
  expect(a).toEqual(b);
  // And it is the generator's sequence: before the first 503, draws ≥ 0.5 answered 200.
  const rng = mulberry32(1234);
  const draws = Array.from({ length: 200 }, () => (rng.next() < 0.5 ? 503 : 200));
  const first = draws.indexOf(503);
  expect(a).toEqual(draws.slice(first + 1, first + 25));
  expect(a).toContain(200);
  expect(a).toContain(503);
});

test('a fault acts within a second of its creation and stops when deleted', async () => {
  expect((await srv.fetch(cms('f-fast'))).status).toBe(200);
  const created = Date.now();
  expect((await create(fault('cm-fast', 'f-fast', [{ error: { code: 504 } }]))).status).toBe(201);
  const on = await until(
    () => srv.fetch(cms('f-fast')),
    (x) => x.status === 504,
    1000,
  );
  expect(on.status).toBe(504);
  expect(Date.now() - created).toBeLessThan(1000);
  expect(((await on.json()) as Json).reason).toBe('Timeout');
  const deleted = Date.now();
  await remove('cm-fast');
  const off = await until(
    () => srv.fetch(cms('f-fast')),
    (x) => x.status === 200,
    1000,
  );
  expect(off.status).toBe(200);
  expect(Date.now() - deleted).toBeLessThan(1000);
});

test('a watch closed with 410 Expired: a client-node informer relists and loses nothing', async () => {
  expect(
    (await create(fault('cm-watch', 'f-watch', [{ watch: { closeAfterEvents: 2, expire: true } }], { limit: 3 }, ['watch']))).status,
  ).toBe(201);
  await until(
    () => statusOf('cm-watch'),
    (s) => s.conditions !== undefined,
  );
  const r = await runClient(
    srv,
    `
const core = kc.makeApiClient(k8s.CoreV1Api);
const ns = 'f-watch';
let lists = 0;
let expired = 0;
const informer = k8s.makeInformer(kc, '/api/v1/namespaces/' + ns + '/configmaps', () => { lists++; return core.listNamespacedConfigMap({ namespace: ns }); });
informer.on('error', (e) => { expired++; setTimeout(() => informer.start(), 100); });
await informer.start();
for (let i = 0; i < 12; i++) {
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cm-' + i }, data: { i: String(i) } } });
  await new Promise((r) => setTimeout(r, 40));
}
const end = Date.now() + 15000;
while (Date.now() < end && informer.list().length < 12) await new Promise((r) => setTimeout(r, 50));
await informer.stop();
// The stopped informer may leave its last watch connection open: exit once the result is out.
setTimeout(() => process.exit(0), 200);
return { names: informer.list().map((o) => o.metadata.name).sort(), lists, errors: expired };
`,
  );
  expect(r.names).toEqual(Array.from({ length: 12 }, (_, i) => `cm-${i}`).sort());
  // The first list, then one per 410.
  expect(r.lists).toBeGreaterThanOrEqual(2);
  const st = await until(
    () => statusOf('cm-watch'),
    (s) => s.injected === 3,
    3000,
  );
  expect(st.injected).toBe(3);
  await remove('cm-watch');
}, 30_000);

test('a watch fault: the raw stream ends with the 410 ERROR event after N events', async () => {
  expect((await create(fault('cm-watch-raw', 'f-stale', [{ watch: { closeAfterEvents: 1, expire: true } }], {}, ['watch']))).status).toBe(
    201,
  );
  const list = (await srv.json('GET', cms('f-stale'))).body;
  const rv = list.metadata.resourceVersion;
  const res = await until(
    async () => {
      const w = srv.fetch(`${cms('f-stale')}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
      await srv.json('POST', cms('f-stale'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-' } });
      return (await (await w).text()).trim().split('\n');
    },
    (lines) => lines.length === 2,
    3000,
  );
  expect(res).toHaveLength(2);
  expect(JSON.parse(res[0] as string).type).toBe('ADDED');
  expect(JSON.parse(res[1] as string)).toEqual({
    type: 'ERROR',
    object: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version',
      reason: 'Expired',
      code: 410,
    },
  });
  await remove('cm-watch-raw');
});

test('a watch fault: events held, bookmarks withheld, the stream closed after T seconds', async () => {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'f-hold' } });
  const watchOf = async (timeoutSeconds: number) => {
    const rv = (await srv.json('GET', cms('f-hold'))).body.metadata.resourceVersion;
    const t0 = performance.now();
    const res = await srv.fetch(`${cms('f-hold')}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=${timeoutSeconds}`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const created = (async () => {
      await Bun.sleep(50);
      await srv.json('POST', cms('f-hold'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'h-' } });
      return performance.now();
    })();
    const lines: { type: string; at: number }[] = [];
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
        const l = text.slice(0, nl).trim();
        text = text.slice(nl + 1);
        if (l) lines.push({ type: JSON.parse(l).type, at: performance.now() });
      }
    }
    return { lines, createdAt: await created, ended: performance.now() - t0 };
  };
  // Without a fault: the event at once, a last bookmark at the 1 s timeout.
  const plain = await watchOf(1);
  expect(plain.lines.map((l) => l.type)).toEqual(['ADDED', 'BOOKMARK']);
  expect(
    (
      await create(
        fault('cm-hold', 'f-hold', [{ watch: { eventDelayMs: 400, withholdBookmarks: true, closeAfterSeconds: 1 } }], {}, ['watch']),
      )
    ).status,
  ).toBe(201);
  await until(
    () => statusOf('cm-hold'),
    (s) => s.conditions !== undefined,
  );
  // The fault closes it after 1 s, long before its own 5 s timeout.
  const held = await watchOf(5);
  expect(held.lines.map((l) => l.type)).toEqual(['ADDED']);
  expect(held.ended).toBeLessThan(2500);
  expect((held.lines[0]?.at ?? 0) - held.createdAt).toBeGreaterThanOrEqual(350);
  await remove('cm-hold');
});

test('a stale list reads the revision N below the newest', async () => {
  const a = await srv.json('POST', cms('f-stale'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stale-a' } });
  expect(a.status).toBe(201);
  expect((await create(fault('cm-stale', 'f-stale', [{ stale: { revisions: 1000000 } }], {}, ['list']))).status).toBe(201);
  // Far enough back the list is from before stale-a existed.
  const r = await until(
    () => srv.json('GET', cms('f-stale')),
    (x) => !x.body.items?.some((i: Json) => i.metadata.name === 'stale-a'),
  );
  expect(r.status).toBe(200);
  expect(r.body.items.map((i: Json) => i.metadata.name)).not.toContain('stale-a');
  expect(Number(r.body.metadata.resourceVersion)).toBeLessThan(Number(a.body.metadata.resourceVersion));
  await remove('cm-stale');
});

test('a fault on every resource leaves the faults themselves alone', async () => {
  const all = fault('everything', 'x', [{ error: { code: 500 } }]);
  all.spec.match = [
    {
      subjects: [{ kind: 'User', user: { name: 'ops' } }],
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    },
  ];
  expect((await create(all, 'ops-token')).status).toBe(201);
  const ops = (p: string, method = 'GET') => srv.fetch(p, { method, token: 'ops-token' }).then((r) => r.status);
  expect(
    await until(
      () => ops('/apis'),
      (s) => s === 500,
    ),
  ).toBe(500);
  expect(await ops(FI)).toBe(200);
  expect(await ops(`${FI}/everything`, 'DELETE')).toBe(200);
});

test('with the gate off the kind is not served', async () => {
  const off = await startServer({});
  try {
    expect((await off.fetch(FI)).status).toBe(404);
    const groups = (await off.json('GET', '/apis')).body.groups.map((g: Json) => g.name);
    expect(groups).not.toContain('testing.svc.io');
    expect(groups).toContain('apps');
  } finally {
    await off.stop();
  }
  const on = (await srv.json('GET', '/apis')).body.groups.map((g: Json) => g.name);
  expect(on).toContain('testing.svc.io');
}, 20_000);

test('store faults: a write fails as an unpersisted write does; compact now expires old continue tokens', async () => {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'f-store' } });
  for (const n of ['s-1', 's-2']) await srv.json('POST', cms('f-store'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } });
  expect((await create(fault('cm-store', 'f-store', [{ store: { failWrites: true } }], {}, ['create']))).status).toBe(201);
  const k = await until(
    async () => srv.kubectl(['create', 'configmap', 's-3', '-n', 'f-store']),
    (x) => x.code !== 0,
  );
  expect(k.stderr).toContain('Internal error occurred: wal: fdatasync: input/output error (fault injected)');
  // Reads are not writes: untouched.
  expect((await srv.json('GET', cms('f-store'))).status).toBe(200);
  await remove('cm-store');

  const page = (await srv.json('GET', `${cms('f-store')}?limit=1`)).body;
  expect(page.metadata.continue).toBeTruthy();
  await srv.json('POST', cms('f-store'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 's-4' } });
  const cont = `${cms('f-store')}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`;
  expect((await srv.json('GET', cont)).status).toBe(200);
  expect((await create(fault('cm-compact', 'f-store', [{ store: { compact: true } }], { limit: 1 }, ['get']))).status).toBe(201);
  await until(
    () => statusOf('cm-compact'),
    (s) => s.conditions !== undefined,
  );
  expect((await srv.json('GET', `${cms('f-store')}/s-1`)).status).toBe(200);
  const next = await srv.json('GET', cont);
  expect(next.status).toBe(410);
  expect(next.body.reason).toBe('Expired');
  await remove('cm-compact');
});

test('409 Conflict on a write: kubectl apply retries its patch as it does on a real conflict', async () => {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'f-409' } });
  const manifest = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: f-409\ndata:\n  v: "${v}"\n`;
  expect(srv.kubectl(['apply', '-f', '-'], manifest('1')).code).toBe(0);
  expect((await create(fault('cm-409', 'f-409', [{ error: { code: 409 } }], { limit: 1 }, ['patch']))).status).toBe(201);
  await until(
    () => statusOf('cm-409'),
    (s) => s.conditions !== undefined,
  );
  const k = srv.kubectl(['apply', '-f', '-'], manifest('2'));
  expect(k.stderr).toBe('');
  expect(k.code).toBe(0);
  expect((await srv.json('GET', `${cms('f-409')}/applied`)).body.data).toEqual({ v: '2' });
  const st = await until(
    () => statusOf('cm-409'),
    (s) => s.injected === 1,
    3000,
  );
  expect(st.injected).toBe(1);
  await remove('cm-409');
});

test('a slow disk: a write the fault matched holds the fsync, and a write by another user committed meanwhile waits too', async () => {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'f-slow' } });
  const grant = await srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/f-slow/rolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'ops-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ops' }],
  });
  expect(grant.status).toBe(201);
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  // The admin's writes: never matched by the fault (it names ops only).
  const timed = async (f: () => Promise<{ status: number }>) => {
    const t = performance.now();
    const r = await f();
    return { status: r.status, ms: performance.now() - t };
  };
  const adminCreate = (name: string) => timed(() => srv.json('POST', cms('f-slow'), cm(name)));
  const opsCreate = (name: string) =>
    timed(() =>
      srv.fetch(cms('f-slow'), {
        method: 'POST',
        token: 'ops-token',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ops-token' },
        body: JSON.stringify(cm(name)),
      }),
    );
  const before = await adminCreate('slow-0');
  expect(before.status).toBe(201);
  const slow = fault('cm-slow-disk', 'f-slow', [{ store: { slowFsyncMs: 1500 } }], {}, ['create']);
  slow.spec.match[0].subjects = [{ kind: 'User', user: { name: 'ops' } }];
  expect((await create(slow)).status).toBe(201);
  await until(
    () => statusOf('cm-slow-disk'),
    (s) => s.conditions !== undefined,
  );
  // ops' create holds the disk for 1.5 s; the admin's, 300 ms later, commits behind it.
  const matched = opsCreate('slow-ops');
  await Bun.sleep(300);
  const other = await adminCreate('slow-admin');
  const mine = await matched;
  expect(mine.status).toBe(201);
  expect(other.status).toBe(201);
  expect(mine.ms).toBeGreaterThanOrEqual(1400);
  // On etcd the disk is not ours: only the matched write's answer waits.
  if (process.env.SVC_TEST_STORE !== 'etcd') expect(other.ms).toBeGreaterThanOrEqual(700);
  const st = await until(
    () => statusOf('cm-slow-disk'),
    (s) => s.injected === 1,
    3000,
  );
  expect(st.injected).toBe(1);
  await remove('cm-slow-disk');
  // Deleted: the disk is fast again, for both.
  await until(
    () => opsCreate(`slow-after-${Date.now()}`),
    (r) => r.ms < 700,
  );
  expect((await adminCreate('slow-after')).ms).toBeLessThan(700);
}, 30_000);

test('a stale GET serves the object as it was N revisions ago, and 404 for one that did not exist then', async () => {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'f-staleget' } });
  const path1 = `${cms('f-staleget')}/lagging`;
  const created = await srv.json('POST', cms('f-staleget'), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'lagging' },
    data: { v: '0' },
  });
  expect(created.status).toBe(201);
  expect((await create(fault('cm-stale-get', 'f-staleget', [{ stale: { revisions: 8 } }], {}, ['get']))).status).toBe(201);
  await until(
    () => statusOf('cm-stale-get'),
    (s) => s.conditions !== undefined,
  );
  // Ten updates: each version's value is its number, so an answer says which version it is.
  const written = new Map<string, string>([[created.body.metadata.resourceVersion, '0']]);
  for (let v = 1; v <= 10; v++) {
    const r = await srv.json('PATCH', path1, { data: { v: String(v) } }, { 'content-type': 'application/merge-patch+json' });
    expect(r.status).toBe(200);
    written.set(r.body.metadata.resourceVersion, String(v));
  }
  const newest = await srv.json('POST', cms('f-staleget'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'newborn' } });
  expect(newest.status).toBe(201);
  const last = Number([...written.keys()].at(-1));
  const old = await srv.json('GET', path1);
  expect(old.status).toBe(200);
  // An older version, exactly as it was written at its resourceVersion.
  expect(Number(old.body.metadata.resourceVersion)).toBeLessThan(last);
  expect(old.body.data.v).toBe(written.get(old.body.metadata.resourceVersion) as string);
  expect(Number(old.body.data.v)).toBeLessThan(10);
  // Created at the newest revision: not there 8 revisions ago.
  const absent = await srv.json('GET', `${cms('f-staleget')}/newborn`);
  expect(absent.status).toBe(404);
  expect(absent.body.reason).toBe('NotFound');
  // kubectl sees the same lagging answer.
  const k = srv.kubectl(['get', 'configmap', 'newborn', '-n', 'f-staleget']);
  expect(k.code).not.toBe(0);
  expect(k.stderr).toContain('configmaps "newborn" not found');
  // Lists are not matched by this fault (verbs: get): the newborn is listed.
  const list = await srv.json('GET', cms('f-staleget'));
  expect(list.body.items.map((i: Json) => i.metadata.name)).toContain('newborn');
  await remove('cm-stale-get');
  const fresh = await until(
    () => srv.json('GET', path1),
    (r) => r.body.data?.v === '10',
  );
  expect(fresh.body.data.v).toBe('10');
  expect((await srv.json('GET', `${cms('f-staleget')}/newborn`)).status).toBe(200);
});

test('the load harness applies the faults of a scenario phase: the phases after it meet them', async () => {
  const file = path.join(dir, 'faulty.yaml');
  fs.writeFileSync(
    file,
    `name: faulty
nodes: 0
phases:
- name: ns
  create: { kind: Namespace, count: 1 }
- name: slow-configmaps
  faults:
  - apiVersion: testing.svc.io/v1alpha1
    kind: FaultInjection
    metadata: { name: load-delay }
    spec:
      match:
      - subjects: [{ kind: Group, group: { name: system:authenticated } }]
        resourceRules: [{ verbs: [create], apiGroups: [''], resources: [configmaps], namespaces: [load-0] }]
      actions: [{ delay: { fixedMs: 300 } }]
- name: configmaps
  create: { kind: ConfigMap, count: 3, qps: 50 }
`,
  );
  const root = path.resolve(import.meta.dir, '..');
  const out = path.join(dir, 'load-out');
  const p = Bun.spawn([process.execPath, path.join(root, 'src/load/main.ts'), file, `--kubeconfig=${srv.kubeconfig}`, `--out=${out}`], {
    cwd: dir,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  expect(stderr).toContain('phase configmaps: done');
  expect(code).toBe(0);
  // Each of the harness's creates met the fault: counted on the object and in its report's latencies.
  const st = await until(
    () => statusOf('load-delay'),
    (s) => s.injected === 3,
    3000,
  );
  expect(st.injected).toBe(3);
  const r = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
  const post = r.APIResponsivenessPrometheus.dataItems.find((d: Json) => d.labels.Verb === 'POST' && d.labels.Resource === 'configmaps');
  expect(post.data.Perc50).toBeGreaterThanOrEqual(300);
  await remove('load-delay');
}, 30_000);
