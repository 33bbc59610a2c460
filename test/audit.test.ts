/**
 * The audit log (issue 11 item 6): a policy file decides each request's level; events are JSON
 * lines of audit.k8s.io/v1 Events with the reference's stages and fields; Request and
 * RequestResponse levels carry the bodies (omitManagedFields honoured); None and omitStages leave
 * things out; the authorization decision is annotated.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';
import { jsonPatch, startWebhookServer } from './helpers/webhook-server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON of the audit events under test
type Json = any;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-audit-'));
const policyFile = path.join(dir, 'policy.yaml');
const logFile = path.join(dir, 'audit.log');
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(tokenFile, 'eve-token,eve,uid-eve,"staff"\n');
fs.writeFileSync(
  policyFile,
  `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version"]
- level: None
  resources:
  - group: ""
    resources: ["events"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets"]
- level: Metadata
`,
);
let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: [`--audit-policy-file=${policyFile}`, `--audit-log-path=${logFile}`, `--token-auth-file=${tokenFile}`] });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const events = (): Json[] =>
  fs.existsSync(logFile)
    ? fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

test('a create at RequestResponse level: the Event with both bodies, managedFields omitted', async () => {
  const r = await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'audited' }, data: { a: 'b' } });
  expect(r.status).toBe(201);
  const found = await until(
    async () => events().filter((e) => e.objectRef?.name === 'audited' || e.requestObject?.metadata?.name === 'audited'),
    (l) => l.length > 0,
  );
  expect(found).toHaveLength(1);
  const e = found[0];
  expect(e).toMatchObject({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/default/configmaps',
    verb: 'create',
    user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    objectRef: { resource: 'configmaps', namespace: 'default', apiGroup: '', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 201 },
    requestObject: { metadata: { name: 'audited' }, data: { a: 'b' } },
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
  });
  expect(e.responseObject.metadata.name).toBe('audited');
  expect(e.responseObject.metadata.managedFields).toBeUndefined();
  expect(e.auditID).toBe(r.headers.get('audit-id'));
  expect(Date.parse(e.stageTimestamp)).toBeGreaterThanOrEqual(Date.parse(e.requestReceivedTimestamp));
});

test('every answer carries Audit-Id: a new UUID per request, or the Audit-ID the client sent, as in its audit event', async () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const answers = [
    await srv.fetch('/api/v1/namespaces/default/configmaps/audited'),
    await srv.fetch('/api/v1/namespaces/default/configmaps/absent'),
    await srv.fetch('/api/v1/namespaces/default/configmaps', { token: 'wrong' } as RequestInit),
    await srv.fetch('/version'),
    await srv.fetch('/healthz'),
    await srv.fetch('/metrics'),
    await srv.fetch('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1'),
  ];
  expect(answers.map((a) => a.status)).toEqual([200, 404, 401, 200, 200, 200, 200]);
  const ids = answers.map((a) => a.headers.get('audit-id') ?? '');
  expect(ids.map((id) => uuid.test(id))).toEqual(answers.map(() => true));
  expect(new Set(ids).size).toBe(ids.length);
  for (const a of answers) await a.arrayBuffer();

  const mine = 'e2e-audit-id-7';
  const r = await srv.fetch('/api/v1/namespaces/default/configmaps/audited', { headers: { 'Audit-ID': mine } });
  expect(r.status).toBe(200);
  expect(r.headers.get('audit-id')).toBe(mine);
  const e = await until(
    async () => events().find((x) => x.auditID === mine),
    (x) => x !== undefined,
  );
  expect(e).toMatchObject({ verb: 'get', objectRef: { resource: 'configmaps', name: 'audited' }, responseStatus: { code: 200 } });
});

test('levels: Request keeps the request body only; Metadata none; None and omitted stages leave nothing', async () => {
  await srv.json('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'audited-secret' }, stringData: { k: 'v' } });
  await srv.json('GET', '/api/v1/namespaces/default/pods');
  await srv.fetch('/healthz');
  const secret = await until(
    async () => events().find((e) => e.objectRef?.resource === 'secrets' && e.verb === 'create'),
    (x) => x !== undefined,
  );
  expect(secret.level).toBe('Request');
  expect(secret.requestObject.metadata.name).toBe('audited-secret');
  expect(secret.responseObject).toBeUndefined();
  const pods = await until(
    async () => events().find((e) => e.objectRef?.resource === 'pods' && e.verb === 'list'),
    (x) => x !== undefined,
  );
  expect(pods.level).toBe('Metadata');
  expect(pods.requestObject).toBeUndefined();
  expect(events().some((e) => e.requestURI.startsWith('/healthz'))).toBe(false);
  expect(events().some((e) => e.stage === 'RequestReceived')).toBe(false);
});

test('a refused request is audited with the forbid decision and the 403 status', async () => {
  const r = await srv.fetch('/api/v1/namespaces/default/pods', { token: 'eve-token' } as RequestInit);
  expect(r.status).toBe(403);
  const e = await until(
    async () => events().find((x) => x.user?.username === 'eve'),
    (x) => x !== undefined,
  );
  expect(e).toMatchObject({
    stage: 'ResponseComplete',
    responseStatus: { code: 403, status: 'Failure', reason: 'Forbidden' },
    annotations: { 'authorization.k8s.io/decision': 'forbid' },
  });
});

test('admission policies add their Audit failures and audit annotations to the event', async () => {
  const ADM = '/apis/admissionregistration.k8s.io/v1';
  expect(
    (
      await srv.json('POST', `${ADM}/validatingadmissionpolicies`, {
        metadata: { name: 'audited-policy' },
        spec: {
          matchConstraints: {
            resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          },
          validations: [{ expression: "!has(object.data) || !('flag' in object.data)", message: 'flagged' }],
          auditAnnotations: [
            {
              key: 'owner',
              valueExpression: "has(object.metadata.labels) && 'owner' in object.metadata.labels ? object.metadata.labels.owner : null",
            },
          ],
        },
      })
    ).status,
  ).toBe(201);
  await srv.json('POST', `${ADM}/validatingadmissionpolicybindings`, {
    metadata: { name: 'audited-binding' },
    spec: { policyName: 'audited-policy', validationActions: ['Audit'] },
  });
  const create = (name: string) =>
    srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name, labels: { owner: 'team-a' } }, data: { flag: 'x' } });
  let n = 0;
  const e = await until(
    async () => {
      const name = `flagged-${n++}`;
      expect((await create(name)).status).toBe(201);
      await Bun.sleep(50);
      return events().find((x) => x.requestObject?.metadata?.name === name && x.annotations?.['audited-policy/owner']);
    },
    (x) => x !== undefined,
    3000,
  );
  expect(e.annotations['audited-policy/owner']).toBe('team-a');
  expect(JSON.parse(e.annotations['validation.policy.admission.svc.io/validation_failure'])).toEqual([
    { message: 'flagged', policy: 'audited-policy', binding: 'audited-binding', expressionIndex: 0, validationActions: ['Audit'] },
  ]);
});

test('admission webhooks add their audit annotations, the mutation and the patch to the event', async () => {
  const hooks = await startWebhookServer();
  try {
    hooks.handle('/audit', () => ({
      allowed: true,
      auditAnnotations: { team: 'storage' },
      ...jsonPatch([{ op: 'add', path: '/metadata/annotations', value: { patched: 'yes' } }]),
    }));
    const r = await srv.json('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      metadata: { name: 'audit-hook' },
      webhooks: [
        {
          name: 'audit-hook.example.com',
          clientConfig: { url: hooks.url('/audit'), caBundle: hooks.caBundle },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }],
          objectSelector: { matchLabels: { audited: 'webhook' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    expect(r.status).toBe(201);
    let n = 0;
    const e = await until(
      async () => {
        const name = `hooked-${n++}`;
        const c = await srv.json('POST', '/api/v1/namespaces/default/secrets', { metadata: { name, labels: { audited: 'webhook' } } });
        expect(c.status).toBe(201);
        await Bun.sleep(50);
        return events().find((x) => x.requestObject?.metadata?.name === name && x.annotations?.['audit-hook.example.com/team']);
      },
      (x) => x !== undefined,
      3000,
    );
    expect(e.annotations['audit-hook.example.com/team']).toBe('storage');
    expect(JSON.parse(e.annotations['mutation.webhook.admission.k8s.io/round_0_index_0'])).toEqual({
      configuration: 'audit-hook',
      webhook: 'audit-hook.example.com',
      mutated: true,
    });
    expect(JSON.parse(e.annotations['patch.webhook.admission.k8s.io/round_0_index_0'])).toEqual({
      configuration: 'audit-hook',
      webhook: 'audit-hook.example.com',
      patch: [{ op: 'add', path: '/metadata/annotations', value: { patched: 'yes' } }],
      patchType: 'JSONPatch',
    });
  } finally {
    hooks.stop();
    await srv.json('DELETE', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/audit-hook');
  }
});

test('the audit metrics count the events', async () => {
  const text = await (await srv.fetch('/metrics')).text();
  const m = /^apiserver_audit_event_total (\d+)$/m.exec(text);
  expect(Number(m?.[1])).toBeGreaterThan(0);
  expect(text).toContain('apiserver_audit_error_total{plugin="log"} 0');
});

test('a request to a deprecated version carries svc.io/deprecated', async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'olds.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'olds', singular: 'old', kind: 'Old' },
      versions: [{ name: 'v1', served: true, storage: true, deprecated: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  };
  expect((await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
  const list = await until(
    () => srv.json('GET', '/apis/example.com/v1/namespaces/default/olds'),
    (r) => r.status === 200,
  );
  expect(list.headers.get('warning')).toContain('is deprecated');
  const e = await until(
    async () => events().find((x) => x.objectRef?.resource === 'olds' && x.responseStatus?.code === 200),
    (x) => x !== undefined,
  );
  expect(e.annotations['svc.io/deprecated']).toBe('true');
});
