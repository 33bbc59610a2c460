/**
 * Issue 35 (part): PriorityClass with the Priority admission plugin, CertificateSigningRequest
 * with its approval subresource, TokenReview, the webhook configurations and APIService, end to
 * end: create, read under both group spellings, list, watch, apply; one invalid object each
 * (422 with the reference's path and message); the objects the server creates at start.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';
import { openWatch } from './helpers/watch';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
let srv: Server;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-misc-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(tokenFile, 'dev-token,dev,uid-dev,"developers"\n');
beforeAll(async () => {
  srv = await startServer({ args: [`--token-auth-file=${tokenFile}`] });
}, 30_000);
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A PEM certificate request (openssl), base64 as spec.request carries it. */
function csrRequest(subject = '/CN=alice/O=dev'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-csr-'));
  const r = Bun.spawnSync([
    'openssl',
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    path.join(dir, 'key.pem'),
    '-subj',
    subject,
  ]);
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return Buffer.from(r.stdout.toString()).toString('base64');
}

interface Case {
  svc: string;
  k8s: string;
  plural: string;
  kind: string;
  valid: (name: string) => Json;
  invalid: Json;
  cause: { field: string; message: string };
  applyExtra?: Json;
}

const CASES: Case[] = [
  {
    svc: 'scheduling.svc.io',
    k8s: 'scheduling.k8s.io',
    plural: 'priorityclasses',
    kind: 'PriorityClass',
    valid: (name) => ({ metadata: { name }, value: 1000, description: 'test' }),
    applyExtra: { value: 1000 },
    invalid: { metadata: { name: 'system-mine' }, value: 5 },
    cause: {
      field: 'metadata.name',
      message:
        "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    },
  },
  {
    svc: 'certificates.svc.io',
    k8s: 'certificates.k8s.io',
    plural: 'certificatesigningrequests',
    kind: 'CertificateSigningRequest',
    valid: (name) => ({
      metadata: { name },
      spec: { request: csrRequest(), signerName: 'example.com/signer', usages: ['client auth'], expirationSeconds: 3600 },
    }),
    invalid: {
      metadata: { name: 'bad-csr' },
      spec: { request: Buffer.from('not a csr').toString('base64'), signerName: 'example.com/signer', usages: ['client auth'] },
    },
    cause: {
      field: 'spec.request',
      message: 'Invalid value: []byte{0x6e, 0x6f, 0x74, 0x20, 0x61, 0x20, 0x63, 0x73, 0x72}: PEM block type must be CERTIFICATE REQUEST',
    },
  },
  {
    svc: 'admissionregistration.svc.io',
    k8s: 'admissionregistration.k8s.io',
    plural: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    valid: (name) => ({
      metadata: { name },
      webhooks: [
        {
          name: 'check.example.com',
          clientConfig: { url: 'https://hooks.example.com/check' },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          // Webhooks are called: this one (no server behind it) selects nothing this file creates.
          objectSelector: { matchLabels: { 'webhook-under-test': 'never' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    }),
    invalid: {
      metadata: { name: 'bad-vwc' },
      webhooks: [{ name: 'check.example.com', clientConfig: { url: 'https://hooks.example.com/' }, admissionReviewVersions: ['v1'] }],
    },
    cause: { field: 'webhooks[0].sideEffects', message: 'Required value: must specify one of None, NoneOnDryRun' },
  },
  {
    svc: 'admissionregistration.svc.io',
    k8s: 'admissionregistration.k8s.io',
    plural: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    valid: (name) => ({
      metadata: { name },
      webhooks: [
        {
          name: 'mutate.example.com',
          clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/mutate' } },
          sideEffects: 'NoneOnDryRun',
          admissionReviewVersions: ['v1', 'v1beta1'],
        },
      ],
    }),
    invalid: {
      metadata: { name: 'bad-mwc' },
      webhooks: [
        {
          name: 'mutate.example.com',
          clientConfig: { url: 'https://hooks.example.com/' },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 31,
        },
      ],
    },
    cause: { field: 'webhooks[0].timeoutSeconds', message: 'Invalid value: 31: the timeout value must be between 1 and 30 seconds' },
  },
  {
    svc: 'apiregistration.svc.io',
    k8s: 'apiregistration.k8s.io',
    plural: 'apiservices',
    kind: 'APIService',
    valid: () => ({
      metadata: { name: 'v1alpha1.example.com' },
      spec: {
        group: 'example.com',
        version: 'v1alpha1',
        groupPriorityMinimum: 100,
        versionPriority: 10,
        service: { namespace: 'default', name: 'ext' },
      },
    }),
    invalid: {
      metadata: { name: 'v1.wrong.com' },
      spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10 },
    },
    cause: { field: 'metadata.name', message: 'Invalid value: "v1.wrong.com": must be `spec.version+"."+spec.group`: "v1.example.com"' },
  },
];

describe.each(CASES)('$kind', (c) => {
  test('create, read under both spellings, list, watch, apply; an invalid object is 422', async () => {
    const name = c.kind === 'APIService' ? 'v1alpha1.example.com' : `my-${c.plural.slice(0, 10)}`;
    const base = `/apis/${c.svc}/v1/${c.plural}`;
    const w = await openWatch(srv, `${base}?watch=1&fieldSelector=metadata.name=${name}`);
    const made = await srv.json('POST', base, { apiVersion: `${c.svc}/v1`, kind: c.kind, ...c.valid(name) });
    expect(made.status).toBe(201);
    const up = await srv.json('GET', `/apis/${c.k8s}/v1/${c.plural}/${name}`);
    expect(up.status).toBe(200);
    expect(up.body.apiVersion).toBe(`${c.k8s}/v1`);
    expect((await srv.json('GET', `${base}/${name}`)).body.apiVersion).toBe(`${c.svc}/v1`);
    const listed = await srv.json('GET', `/apis/${c.k8s}/v1/${c.plural}`);
    expect(listed.body.items.map((i: Json) => i.metadata.name)).toContain(name);
    const [ev] = await w.take(1, 5000);
    expect(ev?.type).toBe('ADDED');
    expect(ev?.object.metadata.name).toBe(name);
    await w.close();
    const applied = await srv.fetch(`/apis/${c.k8s}/v1/${c.plural}/${name}?fieldManager=test`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      // The value is sent: this server defaults an applied configuration before computing its
      // ownership (value 0, always written), so leaving it out conflicts with its creator; the
      // reference defaults only the merged result (same for a Deployment's replicas; not fixed here).
      body: JSON.stringify({ apiVersion: `${c.k8s}/v1`, kind: c.kind, metadata: { name, labels: { applied: 'yes' } }, ...c.applyExtra }),
    });
    expect(applied.status).toBe(200);
    expect(((await applied.json()) as Json).metadata.labels.applied).toBe('yes');
    const bad = await srv.json('POST', base, { apiVersion: `${c.svc}/v1`, kind: c.kind, ...c.invalid });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toContainEqual({ reason: expect.any(String), field: c.cause.field, message: c.cause.message });
  });
});

const PC = '/apis/scheduling.k8s.io/v1/priorityclasses';
const pod = (name: string, spec: Json = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});

test('webhook configurations get the reference defaults', async () => {
  const w = (await srv.json('GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/my-mutatingwe')).body;
  expect(w.metadata.generation).toBe(1);
  expect(w.webhooks[0]).toMatchObject({
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
    timeoutSeconds: 10,
    reinvocationPolicy: 'Never',
    clientConfig: { service: { port: 443 } },
  });
  const v = (await srv.json('GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/my-validating')).body;
  expect(v.webhooks[0].rules[0].scope).toBe('*');
  expect(v.webhooks[0].reinvocationPolicy).toBeUndefined();
});

describe('PriorityClass and the Priority admission plugin', () => {
  test('the two system classes exist from the start; they cannot be deleted', async () => {
    const l = await srv.json('GET', PC);
    const byName = Object.fromEntries(l.body.items.map((i: Json) => [i.metadata.name, i]));
    expect(byName['system-node-critical'].value).toBe(2000001000);
    expect(byName['system-cluster-critical'].value).toBe(2000000000);
    expect(byName['system-cluster-critical'].description).toBe(
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    );
    expect(byName['system-node-critical'].preemptionPolicy).toBe('PreemptLowerPriority');
    const del = await srv.json('DELETE', `${PC}/system-node-critical`);
    expect(del.status).toBe(403);
    expect(del.body.message).toBe(
      'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
  });

  test('value is immutable; only one globalDefault', async () => {
    await srv.json('POST', PC, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'fixed' }, value: 7 });
    const r = await srv.json('PATCH', `${PC}/fixed`, { value: 8 }, { 'content-type': 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toContainEqual({
      reason: 'FieldValueForbidden',
      field: 'value',
      message: 'Forbidden: may not be changed in an update.',
    });
    const d1 = await srv.json('POST', PC, {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'default-one' },
      value: 50,
      globalDefault: true,
      preemptionPolicy: 'Never',
    });
    expect(d1.status).toBe(201);
    const d2 = await srv.json('POST', PC, {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'default-two' },
      value: 60,
      globalDefault: true,
    });
    expect(d2.status).toBe(403);
    expect(d2.body.message).toBe(
      'priorityclasses.scheduling.k8s.io "default-two" is forbidden: PriorityClass default-one is already marked as default. Only one default can exist',
    );
  });

  test('pods get priority and preemptionPolicy from their class, or from the default class', async () => {
    const P = '/api/v1/namespaces/default/pods';
    const a = await srv.json('POST', P, pod('crit', { priorityClassName: 'system-cluster-critical' }));
    expect(a.status).toBe(201);
    expect(a.body.spec.priority).toBe(2000000000);
    expect(a.body.spec.preemptionPolicy).toBe('PreemptLowerPriority');
    const b = await srv.json('POST', P, pod('plain'));
    expect(b.body.spec.priorityClassName).toBe('default-one');
    expect(b.body.spec.priority).toBe(50);
    expect(b.body.spec.preemptionPolicy).toBe('Never');
    const missing = await srv.json('POST', P, pod('nope', { priorityClassName: 'missing' }));
    expect(missing.status).toBe(403);
    expect(missing.body.message).toBe('pods "nope" is forbidden: no PriorityClass with name missing was found');
    const given = await srv.json('POST', P, pod('given', { priorityClassName: 'fixed', priority: 3 }));
    expect(given.status).toBe(403);
    expect(given.body.message).toBe(
      'pods "given" is forbidden: the integer value of priority (3) must not be provided in pod spec; priority admission controller computed 7 from the given PriorityClass name',
    );
    // An update that leaves the priority out keeps it.
    const cur = (await srv.json('GET', `${P}/crit`)).body;
    delete cur.spec.priority;
    delete cur.spec.preemptionPolicy;
    const put = await srv.json('PUT', `${P}/crit`, cur);
    expect(put.status).toBe(200);
    expect(put.body.spec.priority).toBe(2000000000);
    await srv.json('DELETE', `${PC}/default-one`);
  });
});

describe('CertificateSigningRequest', () => {
  const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const create = (name: string) =>
    srv.json('POST', CSR, {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: csrRequest(), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
    });

  test('the requestor is filled in; kubectl certificate approve and deny; both together are refused', async () => {
    const made = await create('alice');
    expect(made.status).toBe(201);
    expect(made.body.spec.username).toBe('admin');
    expect(made.body.spec.groups).toContain('system:authenticated');
    const approve = srv.kubectl(['certificate', 'approve', 'alice']);
    expect(approve.stderr).toBe('');
    expect(approve.stdout).toContain('approved');
    const got = (await srv.json('GET', `${CSR}/alice`)).body;
    expect(got.status.conditions[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'KubectlApprove' });
    expect(srv.kubectl(['get', 'csr', 'alice']).stdout).toMatch(/Approved/);
    // Denying as well: both conditions through approval are refused.
    got.status.conditions.push({ type: 'Denied', status: 'True', reason: 'No' });
    const both = await srv.json('PUT', `${CSR}/alice/approval`, got);
    expect(both.status).toBe(422);
    expect(both.body.details.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'status.conditions[1].type',
      message: 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    });
    // The main resource and status do not change approval.
    const viaStatus = (await srv.json('GET', `${CSR}/alice`)).body;
    viaStatus.status.conditions = [];
    const removed = await srv.json('PUT', `${CSR}/alice/status`, viaStatus);
    expect(removed.status).toBe(422);
    expect(removed.body.details.causes[0].message).toBe('Forbidden: updates may not remove a condition of type "Approved"');
    await create('bob');
    const deny = srv.kubectl(['certificate', 'deny', 'bob']);
    expect(deny.stdout).toContain('denied');
    expect((await srv.json('GET', `${CSR}/bob`)).body.status.conditions[0].type).toBe('Denied');
  });
});

describe('CertificateSigningRequest checks', () => {
  const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const body = (name: string, request: string, signerName = 'example.com/signer') => ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request, signerName, usages: ['client auth'] },
  });

  test('a request whose signature does not verify is 422; system:masters for kube-apiserver-client is 403', async () => {
    const pem = Buffer.from(csrRequest('/CN=alice'), 'base64').toString();
    const m = /-----BEGIN CERTIFICATE REQUEST-----\n([\s\S]*?)-----END/.exec(pem) as RegExpExecArray;
    const der = Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64');
    const at = der.indexOf('alice');
    der[at] = 'b'.charCodeAt(0);
    const forged = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const r = await srv.json('POST', CSR, body('forged', Buffer.from(forged).toString('base64')));
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe('spec.request');
    expect(r.body.details.causes[0].message).toEndWith(': x509: ECDSA verification failure');
    const masters = await srv.json(
      'POST',
      CSR,
      body('masters', csrRequest('/CN=root/O=system:masters'), 'kubernetes.io/kube-apiserver-client'),
    );
    expect(masters.status).toBe(403);
    expect(masters.body.message).toBe(
      'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    const ok = await srv.json('POST', CSR, body('short', csrRequest()));
    expect(ok.status).toBe(201);
    const bad = await srv.json('POST', CSR, {
      ...body('bad-usage', csrRequest()),
      spec: { ...body('', '').spec, request: csrRequest(), usages: ['fly'], signerName: 'nodomain', expirationSeconds: 60 },
    });
    expect(bad.status).toBe(422);
    const causes = bad.body.details.causes.map((c: Json) => `${c.field}: ${c.message}`);
    expect(causes).toContain(
      'spec.usages[0]: Unsupported value: "fly": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
    );
    expect(causes).toContain(
      'spec.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    );
    expect(causes).toContain('spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)');
  });

  test('approving needs `approve` on the signer (CertificateApproval); discovery lists the approval subresource', async () => {
    const RBAC = '/apis/rbac.authorization.k8s.io/v1';
    await srv.json('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'csr-approver' },
      rules: [
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['certificatesigningrequests', 'certificatesigningrequests/approval'],
          verbs: ['get', 'update'],
        },
      ],
    });
    await srv.json('POST', `${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'csr-approver' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-approver' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'developers' }],
    });
    const csr = (await srv.json('GET', `${CSR}/short`)).body;
    csr.status.conditions = [{ type: 'Approved', status: 'True', reason: 'Dev' }];
    let r: Response | undefined;
    for (let i = 0; i < 50; i++) {
      r = await srv.fetch(`${CSR}/short/approval`, {
        method: 'PUT',
        token: 'dev-token',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(csr),
      } as RequestInit);
      if (r.status !== 403 || !(await r.clone().text()).includes('cannot update')) break;
      await Bun.sleep(50);
    }
    if (!r) throw new Error('no answer');
    expect(r.status).toBe(403);
    expect(((await r.json()) as Json).message).toBe(
      'certificatesigningrequests.certificates.k8s.io "short" is forbidden: user not permitted to approve requests with signerName "example.com/signer"',
    );
    // With the bootstrap approver role of the kube-apiserver-client signer, dev approves such a request.
    await srv.json('POST', `${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'dev-client-approver' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:certificates.k8s.io:kube-apiserver-client-approver',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'developers' }],
    });
    expect((await srv.json('POST', CSR, body('carol', csrRequest('/CN=carol'), 'kubernetes.io/kube-apiserver-client'))).status).toBe(201);
    const carol = (await srv.json('GET', `${CSR}/carol`)).body;
    carol.status.conditions = [{ type: 'Approved', status: 'True', reason: 'Dev' }];
    let ok: Response | undefined;
    for (let i = 0; i < 50; i++) {
      ok = await srv.fetch(`${CSR}/carol/approval`, {
        method: 'PUT',
        token: 'dev-token',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(carol),
      } as RequestInit);
      if (ok.status === 200) break;
      await Bun.sleep(50);
    }
    expect(ok?.status).toBe(200);
    const d = await srv.json('GET', '/apis/certificates.k8s.io/v1');
    const approval = d.body.resources.find((x: Json) => x.name === 'certificatesigningrequests/approval');
    expect(approval).toMatchObject({ kind: 'CertificateSigningRequest', namespaced: false });
    expect([...approval.verbs].sort()).toEqual(['get', 'patch', 'update']);
    const t = srv.kubectl(['get', 'csr', 'short']);
    expect(t.stdout).toMatch(/^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION/);
    expect(t.stdout).toMatch(/short\s+\S+\s+example\.com\/signer\s+admin\s+<none>\s+Pending/);
  });
});

describe('TokenReview and APIServices', () => {
  test("the server's own token reviews as the admin", async () => {
    const r = await srv.json('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: srv.token },
    });
    expect(r.status).toBe(201);
    expect(r.body.status.authenticated).toBe(true);
    expect(r.body.status.user.username).toBe('admin');
    expect(r.body.status.audiences.length).toBe(1);
    const bad = await srv.json('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'nope' },
    });
    expect(bad.body.status.authenticated).toBeUndefined();
    const none = await srv.json('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: {},
    });
    expect([none.status, none.body.message]).toEqual([400, 'token is required for TokenReview in authentication']);
    // A service account token: valid for the server's audience, not for another one.
    const sa = srv.kubectl(['create', 'token', 'default', '-n', 'default']).stdout.trim();
    const review = (audiences?: string[]) =>
      srv.json('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: sa, ...(audiences ? { audiences } : {}) },
      });
    const ok = await review();
    expect(ok.body.status.authenticated).toBe(true);
    expect(ok.body.status.user.username).toBe('system:serviceaccount:default:default');
    expect(ok.body.status.user.groups).toContain('system:serviceaccounts:default');
    const other = await review(['other']);
    expect(other.body.status.authenticated).toBeUndefined();
    expect(other.body.status.error).toBe(
      `token audiences ${JSON.stringify(ok.body.status.audiences)} is invalid for the target audiences ["other"]`,
    );
  });

  test('one Available APIService per served group version', async () => {
    const l = await srv.json('GET', '/apis/apiregistration.k8s.io/v1/apiservices');
    const byName = Object.fromEntries(l.body.items.map((i: Json) => [i.metadata.name, i]));
    for (const n of ['v1.', 'v1.apps', 'v1.scheduling.svc.io', 'v1.certificates.svc.io', 'v1.apiregistration.svc.io']) {
      expect(byName[n]?.status.conditions).toContainEqual(expect.objectContaining({ type: 'Available', status: 'True', reason: 'Local' }));
    }
    const t = srv.kubectl(['get', 'apiservices', 'v1.apps']);
    expect(t.stdout).toMatch(/v1\.apps\s+Local\s+True/);
    expect(srv.kubectl(['get', 'pc', 'system-node-critical']).stdout).toMatch(
      /NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY\n.*system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority/,
    );
  });

  test("a CRD's group gets an APIService while it is served", async () => {
    const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const made = await srv.json('POST', CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.toys.example.com' },
      spec: {
        group: 'toys.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    expect(made.status).toBe(201);
    const AS = '/apis/apiregistration.k8s.io/v1/apiservices/v1.toys.example.com';
    let got: Json;
    for (let i = 0; i < 100; i++) {
      got = await srv.json('GET', AS);
      if (got.status === 200 && got.body.status?.conditions) break;
      await Bun.sleep(50);
    }
    expect(got.status).toBe(200);
    expect(got.body.metadata.labels['kube-aggregator.kubernetes.io/automanaged']).toBe('true');
    expect(got.body.spec).toMatchObject({ group: 'toys.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
    expect(got.body.status.conditions[0]).toMatchObject({ type: 'Available', status: 'True', reason: 'Local' });
    await srv.json('DELETE', `${CRDS}/gadgets.toys.example.com`);
    for (let i = 0; i < 100; i++) {
      got = await srv.json('GET', AS);
      if (got.status === 404) break;
      await Bun.sleep(50);
    }
    expect(got.status).toBe(404);
  });
});

test('a subresource name that is an Object.prototype member is not a status-like subresource', async () => {
  const r = await srv.json('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/toString', {});
  expect(r.status).toBe(404);
});
