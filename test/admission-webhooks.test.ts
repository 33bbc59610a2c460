/**
 * Admission webhooks (issue 38 item 1), end to end: real HTTPS webhook servers with their own CA,
 * configurations written through the API, requests by HTTP and kubectl. Denials, warnings,
 * JSONPatch mutations (on create and update), reinvocation, timeouts and an unreachable server
 * under both failure policies, matchConditions, dry run and sideEffects, a webhook reached
 * through a Service's EndpointSlice, the order with ValidatingAdmissionPolicy, the TLS check
 * against caBundle, and the apiserver_admission_webhook_* metrics.
 *
 * Each test works in its own namespace, labelled `wh-test: <n>`, and its webhooks select that
 * label, so one test's webhooks never see another's requests.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, STATIC_WORKLOADS, serverForFile } from './helpers/server';
import { until } from './helpers/until';
import { hostAddress, jsonPatch, startWebhookServer, type WebhookServer } from './helpers/webhook-server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
setDefaultTimeout(20_000);
const srv = serverForFile({ args: [STATIC_WORKLOADS, '--feature-gates=MutatingAdmissionPolicy=true'] });
const ADM = '/apis/admissionregistration.k8s.io/v1';
let hooks: WebhookServer;
let n = 0;

beforeAll(async () => {
  hooks = await startWebhookServer('webhook.wh-svc.svc');
});
afterAll(() => hooks?.stop());

interface Setup {
  ns: string;
  id: string;
}

async function namespace(): Promise<Setup> {
  const id = `${++n}`;
  const ns = `wh-${id}`;
  const r = await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'wh-test': id } } });
  expect(r.status).toBe(201);
  return { ns, id };
}

/** One webhook of a configuration, scoped to the setup's namespace. */
function webhook(s: Setup, name: string, path: string, extra: Json = {}): Json {
  return {
    name,
    clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { 'wh-test': s.id } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

async function configure(kind: 'validating' | 'mutating', name: string, webhooks: Json[]): Promise<void> {
  const plural = `${kind}webhookconfigurations`;
  const r = await srv.json('POST', `${ADM}/${plural}`, { metadata: { name }, webhooks });
  expect(r.status).toBe(201);
}

const createCm = (s: Setup, name: string, query = '', labels?: Record<string, string>) =>
  srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps${query}`, { metadata: { name, ...(labels && { labels }) }, data: { a: '1' } });

/** kubectl run without blocking this process (which serves the webhooks the server calls). */
async function kubectl(args: string[]): Promise<{ code: number; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${srv.kubeconfig}`, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, HOME: srv.dataDir },
  });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, stderr };
}

let cmN = 0;
/** Creates configmaps until `done` holds for the answer (the configuration takes effect within a second). */
const createUntil = (s: Setup, done: (r: Json) => boolean, query = '') =>
  until(
    () => createCm(s, `cm-${++cmN}`, query),
    (r) => done(r),
    3000,
  );

describe('validating webhooks', () => {
  test('a denial is the reference Status; kubectl prints it', async () => {
    const s = await namespace();
    hooks.handle(`/deny-${s.id}`, () => ({ allowed: false, status: { message: 'configmaps are not welcome here', code: 403 } }));
    const started = Date.now();
    await configure('validating', `deny-${s.id}`, [webhook(s, 'deny.example.com', `/deny-${s.id}`)]);
    const r = await createUntil(s, (r) => r.status === 403);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(r.body.reason).toBe('Forbidden');
    expect(r.body.message).toMatch(
      /^configmaps "cm-\d+" is forbidden: admission webhook "deny\.example\.com" denied the request: configmaps are not welcome here$/,
    );
    expect(r.body.details).toEqual({ name: expect.stringMatching(/^cm-/), kind: 'configmaps' });
    const k = await kubectl(['create', 'configmap', 'by-kubectl', '-n', s.ns]);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toContain('admission webhook "deny.example.com" denied the request: configmaps are not welcome here');
    // The review the webhook got: v1, with the request's attributes and the object.
    const review = hooks.received(`/deny-${s.id}`).at(-1);
    expect(review.apiVersion).toBe('admission.k8s.io/v1');
    expect(review.request).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      namespace: s.ns,
      operation: 'CREATE',
      dryRun: false,
      userInfo: { username: expect.any(String) },
      object: { apiVersion: 'v1', kind: 'ConfigMap' },
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    // Deleting the configuration stops it.
    await srv.json('DELETE', `${ADM}/validatingwebhookconfigurations/deny-${s.id}`);
    await createUntil(s, (r) => r.status === 201);
  });

  test('allowed with warnings and a custom code and reason on denial', async () => {
    const s = await namespace();
    hooks.handle(`/warn-${s.id}`, (rv) =>
      rv.request.object.metadata.name.startsWith('bad')
        ? { allowed: false, status: { code: 422, reason: 'Invalid', message: 'bad name' }, warnings: ['first warning'] }
        : { allowed: true, warnings: ['careful: this is a warning'] },
    );
    await configure('validating', `warn-${s.id}`, [webhook(s, 'warn.example.com', `/warn-${s.id}`)]);
    const r = await createUntil(s, (r) => r.status === 201 && r.headers.get('warning') !== null);
    expect(r.headers.get('warning')).toBe('299 - "careful: this is a warning"');
    const bad = await createCm(s, 'bad-one');
    expect(bad.status).toBe(422);
    expect(bad.body.reason).toBe('Invalid');
    expect(bad.body.message).toBe('configmaps "bad-one" is forbidden: admission webhook "warn.example.com" denied the request: bad name');
    expect(bad.headers.get('warning')).toBe('299 - "first warning"');
  });

  test('validating webhooks of one request are called at once', async () => {
    const s = await namespace();
    const slow = async () => {
      await Bun.sleep(600);
      return { allowed: true };
    };
    hooks.handle(`/slow-a-${s.id}`, slow);
    hooks.handle(`/slow-b-${s.id}`, slow);
    await configure('validating', `slow-${s.id}`, [
      webhook(s, 'a.slow.example.com', `/slow-a-${s.id}`),
      webhook(s, 'b.slow.example.com', `/slow-b-${s.id}`),
    ]);
    await createUntil(s, () => hooks.received(`/slow-b-${s.id}`).length > 0);
    const t0 = performance.now();
    const r = await createCm(s, 'timed');
    const ms = performance.now() - t0;
    expect(r.status).toBe(201);
    expect(ms).toBeGreaterThan(550);
    expect(ms).toBeLessThan(1150);
  });
});

describe('mutating webhooks', () => {
  test('a JSONPatch is applied on create and on update, and validated after', async () => {
    const s = await namespace();
    hooks.handle(`/label-${s.id}`, (rv) => {
      const o = rv.request.object;
      if (o.metadata.name === 'make-invalid')
        return { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { 'bad label!': 'x' } }]) };
      const ops: unknown[] = [];
      if (!o.metadata.labels) ops.push({ op: 'add', path: '/metadata/labels', value: {} });
      ops.push({ op: 'add', path: '/metadata/labels/mutated-by', value: `hook-${rv.request.operation.toLowerCase()}` });
      return { allowed: true, ...jsonPatch(ops) };
    });
    await configure('mutating', `label-${s.id}`, [webhook(s, 'label.example.com', `/label-${s.id}`)]);
    const r = await createUntil(s, (r) => r.body?.metadata?.labels?.['mutated-by'] === 'hook-create');
    expect(r.status).toBe(201);
    const name = r.body.metadata.name;
    // What the webhook set is not owned by the writer (managedFields as the reference's).
    const owned = JSON.stringify(r.body.metadata.managedFields ?? []);
    expect(owned).not.toContain('mutated-by');
    const u = await srv.json('PUT', `/api/v1/namespaces/${s.ns}/configmaps/${name}`, { ...r.body, data: { a: '2' } });
    expect(u.status).toBe(200);
    expect(u.body.metadata.labels['mutated-by']).toBe('hook-update');
    // A patched object that is invalid is refused by the kind's validation.
    const bad = await createCm(s, 'make-invalid');
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('bad label!');
    expect(hooks.received(`/label-${s.id}`).some((rv) => rv.request.operation === 'UPDATE')).toBe(true);
  });

  test('reinvocationPolicy IfNeeded: called again when a later webhook changed the object', async () => {
    const s = await namespace();
    hooks.handle(`/first-${s.id}`, (rv) => {
      const labels = rv.request.object.metadata.labels ?? {};
      return {
        allowed: true,
        ...jsonPatch([{ op: 'add', path: '/metadata/annotations', value: { 'first-saw': labels.second ?? 'none' } }]),
      };
    });
    hooks.handle(`/second-${s.id}`, () => ({
      allowed: true,
      ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { second: 'yes' } }]),
    }));
    await configure('mutating', `a-first-${s.id}`, [webhook(s, 'first.example.com', `/first-${s.id}`, { reinvocationPolicy: 'IfNeeded' })]);
    await configure('mutating', `b-second-${s.id}`, [webhook(s, 'second.example.com', `/second-${s.id}`)]);
    const r = await createUntil(
      s,
      (r) => r.body?.metadata?.labels?.second === 'yes' && r.body.metadata.annotations?.['first-saw'] !== undefined,
    );
    expect(r.body.metadata.annotations['first-saw']).toBe('yes');
  });

  test('a MutatingAdmissionPolicy with reinvocationPolicy IfNeeded runs again after a webhook changed the object', async () => {
    const s = await namespace();
    hooks.handle(`/after-map-${s.id}`, () => ({
      allowed: true,
      ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { hooked: 'yes' } }]),
    }));
    const policy = await srv.json('POST', '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies', {
      metadata: { name: `saw-hook-${s.id}` },
      spec: {
        failurePolicy: 'Fail',
        reinvocationPolicy: 'IfNeeded',
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'wh-test': s.id } },
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression:
                'Object{metadata: Object.metadata{annotations: {"saw-hook": string(has(object.metadata.labels) && "hooked" in object.metadata.labels)}}}',
            },
          },
        ],
      },
    });
    expect(policy.status).toBe(201);
    await srv.json('POST', '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings', {
      metadata: { name: `saw-hook-${s.id}` },
      spec: { policyName: `saw-hook-${s.id}` },
    });
    await configure('mutating', `after-map-${s.id}`, [webhook(s, 'after-map.example.com', `/after-map-${s.id}`)]);
    const r = await createUntil(
      s,
      (r) => r.body?.metadata?.labels?.hooked === 'yes' && r.body.metadata.annotations?.['saw-hook'] !== undefined,
    );
    expect(r.body.metadata.annotations['saw-hook']).toBe('true');
  });

  test('a DELETE is sent without an object and the old one', async () => {
    const s = await namespace();
    await createCm(s, 'to-delete');
    hooks.handle(`/del-${s.id}`, () => ({ allowed: true }));
    await configure('validating', `del-${s.id}`, [
      webhook(s, 'del.example.com', `/del-${s.id}`, {
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] }],
      }),
    ]);
    await Bun.sleep(300);
    expect((await srv.json('DELETE', `/api/v1/namespaces/${s.ns}/configmaps/to-delete`)).status).toBe(200);
    const rv = hooks.received(`/del-${s.id}`).at(-1);
    expect(rv.request.operation).toBe('DELETE');
    expect(rv.request.object).toBeNull();
    expect(rv.request.oldObject.metadata.name).toBe('to-delete');
    expect(rv.request.options.kind).toBe('DeleteOptions');
  });
});

describe('failures', () => {
  test('a timeout: 500 under Fail, skipped under Ignore; other requests are not held up', async () => {
    const s = await namespace();
    hooks.handle(`/hang-${s.id}`, async () => {
      await Bun.sleep(3000);
      return { allowed: true };
    });
    await configure('validating', `hang-${s.id}`, [webhook(s, 'hang.example.com', `/hang-${s.id}`, { timeoutSeconds: 1 })]);
    const pending = createUntil(s, (r) => r.status === 500);
    // Meanwhile, other requests answer at once.
    const t0 = performance.now();
    expect((await srv.json('GET', '/api/v1/namespaces/default')).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(500);
    const r = await pending;
    expect(r.body.reason).toBe('InternalError');
    expect(r.body.message).toMatch(
      new RegExp(
        `^Internal error occurred: failed calling webhook "hang\\.example\\.com": failed to call webhook: Post "https://127\\.0\\.0\\.1:${hooks.port}/hang-${s.id}\\?timeout=1s": context deadline exceeded$`,
      ),
    );
    const s2 = await namespace();
    hooks.handle(`/hang-${s2.id}`, async () => {
      await Bun.sleep(3000);
      return { allowed: false };
    });
    await configure('validating', `hang-${s2.id}`, [
      webhook(s2, 'hang-ignore.example.com', `/hang-${s2.id}`, { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
    ]);
    const ok = await createUntil(s2, () => hooks.received(`/hang-${s2.id}`).length > 0);
    expect(ok.status).toBe(201);
  }, 20_000);

  test('an unreachable webhook: connection refused under Fail, skipped under Ignore', async () => {
    const s = await namespace();
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const port = closed.port;
    closed.stop(true);
    const down = (extra: Json) => webhook(s, 'down.example.com', '/x', { clientConfig: { url: `https://127.0.0.1:${port}/x` }, ...extra });
    await configure('validating', `down-${s.id}`, [down({})]);
    const r = await createUntil(s, (r) => r.status === 500);
    expect(r.body.message).toBe(
      `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:${port}/x?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    await srv.json('DELETE', `${ADM}/validatingwebhookconfigurations/down-${s.id}`);
    await configure('mutating', `down-ignore-${s.id}`, [down({ failurePolicy: 'Ignore' })]);
    await createUntil(s, (r) => r.status === 201);
    // The audit annotation of a mutating webhook that failed open is not visible here; its metric is.
    const m = await (await srv.fetch('/metrics')).text();
    expect(m).toMatch(/apiserver_admission_webhook_fail_open_count\{name="down\.example\.com",type="admit"\} [1-9]/);
  });

  test('a certificate the caBundle does not sign is refused', async () => {
    const s = await namespace();
    const other = await startWebhookServer();
    try {
      await configure('validating', `tls-${s.id}`, [
        webhook(s, 'tls.example.com', `/tls-${s.id}`, { clientConfig: { url: hooks.url(`/tls-${s.id}`), caBundle: other.caBundle } }),
      ]);
      const r = await createUntil(s, (r) => r.status === 500);
      expect(r.body.message).toContain('x509: certificate signed by unknown authority');
    } finally {
      other.stop();
    }
  });

  test('an invalid answer is a calling error', async () => {
    const s = await namespace();
    hooks.handle(`/uid-${s.id}`, () => ({
      raw: Response.json({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'wrong', allowed: true } }),
    }));
    await configure('validating', `uid-${s.id}`, [webhook(s, 'uid.example.com', `/uid-${s.id}`)]);
    const r = await createUntil(s, (r) => r.status === 500);
    expect(r.body.message).toMatch(
      /failed calling webhook "uid\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]+", got "wrong"$/,
    );
  });
});

describe('matching', () => {
  test('matchConditions skip, and an erring one refuses under Fail', async () => {
    const s = await namespace();
    hooks.handle(`/mc-${s.id}`, () => ({ allowed: false, status: { message: 'matched' } }));
    await configure('validating', `mc-${s.id}`, [
      webhook(s, 'mc.example.com', `/mc-${s.id}`, {
        matchConditions: [{ name: 'not-skipped', expression: "!object.metadata.name.startsWith('skip-')" }],
      }),
    ]);
    await createUntil(s, (r) => r.status === 403);
    expect((await createCm(s, 'skip-me')).status).toBe(201);
    const s2 = await namespace();
    await configure('validating', `mc-err-${s2.id}`, [
      webhook(s2, 'mc-err.example.com', `/mc-${s.id}`, {
        matchConditions: [{ name: 'errs', expression: "object.metadata.labels['missing'] == 'x'" }],
      }),
    ]);
    const r = await createUntil(s2, (r) => r.status === 403);
    expect(r.body.message).toMatch(
      /^configmaps "cm-\d+" is forbidden: expression 'object\.metadata\.labels\['missing'\] == 'x'' resulted in error: /,
    );
  });

  test('objectSelector; the upstream and svc group spellings are one group', async () => {
    const s = await namespace();
    hooks.handle(`/os-${s.id}`, () => ({ allowed: false, status: { message: 'selected' } }));
    await configure('validating', `os-${s.id}`, [
      webhook(s, 'os.example.com', `/os-${s.id}`, {
        objectSelector: { matchLabels: { guarded: 'yes' } },
        rules: [
          { apiGroups: ['rbac.authorization.k8s.io', ''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['roles', 'configmaps'] },
        ],
      }),
    ]);
    await until(
      () => createCm(s, `g-${++cmN}`, '', { guarded: 'yes' }),
      (r) => r.status === 403,
      3000,
    );
    expect((await createCm(s, 'unguarded')).status).toBe(201);
    // A Role written through the svc spelling is seen by a webhook registered for rbac.authorization.k8s.io,
    // and sent in the spelling its rules use.
    const role = await srv.json('POST', `/apis/rbac.authorization.svc.io/v1/namespaces/${s.ns}/roles`, {
      metadata: { name: 'r', labels: { guarded: 'yes' } },
      rules: [],
    });
    expect(role.status).toBe(403);
    const rv = hooks.received(`/os-${s.id}`).at(-1);
    expect(rv.request.resource).toEqual({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' });
    expect(rv.request.object.apiVersion).toBe('rbac.authorization.k8s.io/v1');
  });

  test('matchPolicy: Exact matches the listed versions only (either group spelling), Equivalent any version', async () => {
    const s = await namespace();
    hooks.handle(`/mp-${s.id}`, (rv) => ({ allowed: false, status: { message: `matched ${rv.request.name}` } }));
    const rule = (versions: string[]) => [
      { apiGroups: ['rbac.authorization.k8s.io'], apiVersions: versions, operations: ['CREATE'], resources: ['roles'] },
    ];
    await configure('validating', `mp-${s.id}`, [
      webhook(s, 'exact-v1.example.com', `/mp-${s.id}`, {
        matchPolicy: 'Exact',
        rules: rule(['v1']),
        objectSelector: { matchLabels: { t: 'exact-v1' } },
      }),
      webhook(s, 'exact-beta.example.com', `/mp-${s.id}`, {
        matchPolicy: 'Exact',
        rules: rule(['v1beta1']),
        objectSelector: { matchLabels: { t: 'exact-beta' } },
      }),
      webhook(s, 'equivalent-beta.example.com', `/mp-${s.id}`, {
        rules: rule(['v1beta1']),
        objectSelector: { matchLabels: { t: 'equivalent-beta' } },
      }),
    ]);
    const role = (t: string, group = 'rbac.authorization.svc.io') =>
      srv.json('POST', `/apis/${group}/v1/namespaces/${s.ns}/roles`, { metadata: { name: `r-${t}-${++cmN}`, labels: { t } }, rules: [] });
    await until(
      () => role('exact-v1'),
      (r) => r.status === 403,
      3000,
    );
    expect((await role('exact-v1', 'rbac.authorization.k8s.io')).status).toBe(403);
    expect((await role('exact-beta')).status).toBe(201);
    const eq = await role('equivalent-beta');
    expect(eq.status).toBe(403);
    expect(eq.body.message).toContain('admission webhook "equivalent-beta.example.com" denied the request');
  });

  test('dry run: sent with dryRun to sideEffects None and NoneOnDryRun; v1beta1 when that is all a webhook takes', async () => {
    const s = await namespace();
    hooks.handle(`/dry-${s.id}`, () => ({ allowed: true }));
    await configure('validating', `dry-${s.id}`, [
      webhook(s, 'dry-none.example.com', `/dry-${s.id}`),
      webhook(s, 'dry-beta.example.com', `/dry-${s.id}`, {
        sideEffects: 'NoneOnDryRun',
        admissionReviewVersions: ['v1beta1'],
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }],
      }),
    ]);
    await createUntil(s, () => hooks.received(`/dry-${s.id}`).length > 0);
    const dry = await createCm(s, 'dry', '?dryRun=All');
    expect(dry.status).toBe(201);
    expect(hooks.received(`/dry-${s.id}`).at(-1).request.dryRun).toBe(true);
    expect((await srv.json('GET', `/api/v1/namespaces/${s.ns}/configmaps/dry`)).status).toBe(404);
    const secret = await srv.json('POST', `/api/v1/namespaces/${s.ns}/secrets?dryRun=All`, { metadata: { name: 's' } });
    expect(secret.status).toBe(201);
    const beta = hooks.received(`/dry-${s.id}`).at(-1);
    expect(beta.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(beta.request.dryRun).toBe(true);
    expect(beta.request.resource.resource).toBe('secrets');
  });

  test('a webhook reached through a Service and its EndpointSlice', async () => {
    const ns = 'wh-svc';
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
    const svc = await srv.json('POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'webhook' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: 9443 }] },
    });
    expect(svc.status).toBe(201);
    const slice = await srv.json('POST', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
      metadata: { name: 'webhook-1', labels: { 'kubernetes.io/service-name': 'webhook' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hooks.port, protocol: 'TCP' }],
      endpoints: [{ addresses: [hostAddress()], conditions: { ready: true } }],
    });
    expect(slice.body.message ?? '').toBe('');
    expect(slice.status).toBe(201);
    const s = await namespace();
    hooks.handle(`/svc-${s.id}`, () => ({ allowed: false, status: { message: 'through the service' } }));
    await configure('validating', `svc-${s.id}`, [
      webhook(s, 'svc.example.com', '', {
        clientConfig: { service: { namespace: ns, name: 'webhook', path: `/svc-${s.id}` }, caBundle: hooks.caBundle },
      }),
    ]);
    const r = await createUntil(s, (r) => r.status === 403);
    expect(r.body.message).toContain('admission webhook "svc.example.com" denied the request: through the service');
    // A service that does not exist: the reference's calling error.
    await srv.json('DELETE', `${ADM}/validatingwebhookconfigurations/svc-${s.id}`);
    await configure('validating', `svc-missing-${s.id}`, [
      webhook(s, 'svc-missing.example.com', '', { clientConfig: { service: { namespace: ns, name: 'absent', path: '/x' } } }),
    ]);
    const m = await createUntil(s, (r) => r.status === 500);
    expect(m.body.message).toBe(
      'Internal error occurred: failed calling webhook "svc-missing.example.com": failed to call webhook: service "absent" not found',
    );
  });

  test('the order: mutating webhooks, then ValidatingAdmissionPolicy, then validating webhooks', async () => {
    const s = await namespace();
    hooks.handle(`/order-m-${s.id}`, () => ({ allowed: true, ...jsonPatch([{ op: 'add', path: '/data/added', value: 'by-webhook' }]) }));
    hooks.handle(`/order-v-${s.id}`, (rv) => ({
      allowed: rv.request.object.data.added === 'by-webhook',
      status: { message: 'not mutated first' },
    }));
    await configure('mutating', `order-m-${s.id}`, [webhook(s, 'order-m.example.com', `/order-m-${s.id}`)]);
    await configure('validating', `order-v-${s.id}`, [webhook(s, 'order-v.example.com', `/order-v-${s.id}`)]);
    const r = await createUntil(
      s,
      (r) => r.status === 201 && r.body.data.added === 'by-webhook' && hooks.received(`/order-v-${s.id}`).length > 0,
    );
    expect(r.body.data.added).toBe('by-webhook');
    // A policy refusing what the mutating webhook added: the policy sees the mutated object.
    const vap = await srv.json('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      metadata: { name: `order-${s.id}` },
      spec: {
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'wh-test': s.id } },
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        validations: [{ expression: "!('added' in object.data)", message: 'policy saw the mutation' }],
      },
    });
    expect(vap.status).toBe(201);
    await srv.json('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
      metadata: { name: `order-${s.id}` },
      spec: { policyName: `order-${s.id}`, validationActions: ['Deny'] },
    });
    const before = hooks.received(`/order-v-${s.id}`).length;
    const denied = await createUntil(s, (r) => r.status === 422 || r.status === 403);
    expect(denied.body.message).toContain('policy saw the mutation');
    // The validating webhook comes after the policy: a request the policy refused never reaches it.
    const after = hooks.received(`/order-v-${s.id}`).length;
    const d2 = await createCm(s, 'never-validated');
    expect(d2.body.message).toContain('policy saw the mutation');
    expect(hooks.received(`/order-v-${s.id}`).length).toBe(after);
    expect(after).toBeGreaterThanOrEqual(before);
  });

  test('metrics of the calls', async () => {
    const m = await (await srv.fetch('/metrics')).text();
    expect(m).toMatch(
      /apiserver_admission_webhook_request_total\{code="200",name="deny\.example\.com",operation="CREATE",rejected="true",type="validating"\} [1-9]/,
    );
    expect(m).toMatch(
      /apiserver_admission_webhook_rejection_count\{error_type="no_error",name="deny\.example\.com",operation="CREATE",rejection_code="403",type="validating"\} [1-9]/,
    );
    expect(m).toMatch(
      /apiserver_admission_webhook_admission_duration_seconds_count\{name="label\.example\.com",operation="CREATE",rejected="false",type="admit"\} [1-9]/,
    );
    expect(m).toMatch(/apiserver_admission_webhook_rejection_count\{error_type="calling_webhook_error",name="hang\.example\.com"/);
  });
});
