/**
 * The reference's update rules over HTTP: each immutable field (and each pod spec change the
 * reference forbids) is refused through every write path — PUT, merge patch, strategic merge
 * patch, JSON patch and server-side apply — with 422 Invalid and the reference's cause; allowed
 * pod updates (image changes) succeed through the same paths.
 *
 * Objects are created by server-side apply under one manager, so applying the changed intent
 * under that manager yields exactly the changed object (dropped fields are removed).
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
type Any = any;

// Services get cluster IPs from kubeadm's 10.96.0.0/12 here (the server's default is the reference's 10.0.0.0/24).
// --scheduler=false: the pods here are written by the test alone (the built-in scheduler would
// write their status, beside the test's nodes, between its read and its write).
const srv = serverForFile({ args: ['--service-cluster-ip-range=10.96.0.0/12', '--scheduler=false', STATIC_WORKLOADS] });

type Verb = 'put' | 'merge' | 'smp' | 'json' | 'apply';
const VERBS: Verb[] = ['put', 'merge', 'smp', 'json', 'apply'];
const MANAGER = 'update-rules';

/** [field, reason, message or message prefix ending in `…`] */
type Cause = [string, string, string];

interface Case {
  name: string;
  /** Collection path. */
  path: string;
  apiVersion: string;
  kind: string;
  /** The object as created (without apiVersion, kind, metadata.name). */
  body: Any;
  /** Changes a copy of the object (its non-metadata fields) in place. */
  change: (o: Any) => void;
  /** The cause expected, per verb when a patch type reaches a different object. */
  cause: Cause;
  causeFor?: Partial<Record<Verb, Cause>>;
  /** When a controller writes the object after creation: whether it has (then the test starts). */
  settled?: (o: Any) => boolean;
  /** A strategic merge patch, where the merge patch would mean something else there. */
  smp?: Any;
}

const clone = <T>(v: T): T => structuredClone(v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** RFC 7386 merge patch turning `from` into `to` (lists replaced whole). */
function mergeDiff(from: Any, to: Any): Any {
  const out: Any = {};
  for (const k of Object.keys(from)) if (!(k in to)) out[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (isObj(v) && isObj(from[k])) {
      const d = mergeDiff(from[k], v);
      if (Object.keys(d).length > 0) out[k] = d;
    } else if (!same(from[k], v)) out[k] = v;
  }
  return out;
}

/** RFC 6902 operations turning `from` into `to` (lists replaced whole). */
function jsonDiff(from: Any, to: Any, base = ''): Any[] {
  const ops: Any[] = [];
  for (const k of Object.keys(from)) if (!(k in to)) ops.push({ op: 'remove', path: `${base}/${esc(k)}` });
  for (const [k, v] of Object.entries(to)) {
    const p = `${base}/${esc(k)}`;
    if (!(k in from)) ops.push({ op: 'add', path: p, value: v });
    else if (isObj(v) && isObj(from[k])) ops.push(...jsonDiff(from[k], v, p));
    else if (!same(from[k], v)) ops.push({ op: 'replace', path: p, value: v });
  }
  return ops;
}

/** The object without the fields the server owns (metadata, status). */
function content(o: Any): Any {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

const NS = '/api/v1/namespaces/default';
const QUOTA_NS = '/api/v1/namespaces/update-rules-quota';
const container = (name: string, image: string) => ({ name, image });
const podBody = (over: Any = {}) => ({
  spec: {
    containers: [container('app', 'nginx:1.27')],
    // With the not-ready/unreachable tolerations DefaultTolerationSeconds would add: a re-apply
    // without them would remove them (tolerations is atomic), which a pod update may not.
    tolerations: [
      { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoExecute', tolerationSeconds: 60 },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    activeDeadlineSeconds: 600,
    ...over,
  },
});
const IMMUTABLE_SET = 'Forbidden: field is immutable when `immutable` is set';
const POD_FORBIDDEN = 'pod updates may not change fields other than `spec.containers[*].image`,…';
const template = (labels: Any) => ({ metadata: { labels }, spec: { containers: [container('app', 'nginx:1.27')] } });

const CASES: Case[] = [
  {
    name: 'ConfigMap data when immutable',
    path: `${NS}/configmaps`,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    body: { immutable: true, data: { a: '1' } },
    change: (o) => {
      o.data.a = '2';
    },
    cause: ['data', 'FieldValueForbidden', IMMUTABLE_SET],
  },
  {
    name: 'ConfigMap binaryData when immutable',
    path: `${NS}/configmaps`,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    body: { immutable: true, binaryData: { b: 'AAE=' } },
    change: (o) => {
      o.binaryData.b = 'AAI=';
    },
    cause: ['binaryData', 'FieldValueForbidden', IMMUTABLE_SET],
  },
  {
    name: 'ConfigMap immutable itself',
    path: `${NS}/configmaps`,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    body: { immutable: true, data: { a: '1' } },
    change: (o) => {
      o.immutable = false;
    },
    cause: ['immutable', 'FieldValueForbidden', IMMUTABLE_SET],
  },
  {
    name: 'Secret data when immutable',
    path: `${NS}/secrets`,
    apiVersion: 'v1',
    kind: 'Secret',
    body: { type: 'Opaque', immutable: true, data: { a: 'MQ==' } },
    change: (o) => {
      o.data.a = 'Mg==';
    },
    cause: ['data', 'FieldValueForbidden', IMMUTABLE_SET],
  },
  {
    name: 'Secret type',
    path: `${NS}/secrets`,
    apiVersion: 'v1',
    kind: 'Secret',
    body: { type: 'Opaque', data: { a: 'MQ==' } },
    change: (o) => {
      o.type = 'example.com/custom';
    },
    cause: ['type', 'FieldValueInvalid', 'Invalid value: "example.com/custom": field is immutable'],
  },
  {
    name: 'Service clusterIP',
    path: `${NS}/services`,
    apiVersion: 'v1',
    kind: 'Service',
    // The server allocates the address (each write path creates its own Service); changing it is refused.
    body: { spec: { ports: [{ port: 80, protocol: 'TCP' }] } },
    change: (o) => {
      o.spec.clusterIP = '10.96.0.11';
      if (o.spec.clusterIPs) o.spec.clusterIPs = ['10.96.0.11'];
    },
    cause: ['spec.clusterIPs[0]', 'FieldValueInvalid', 'Invalid value: []string{"10.96.0.11"}: may not change once set'],
  },
  {
    name: 'Deployment selector',
    path: '/apis/apps/v1/namespaces/default/deployments',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    body: { spec: { selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web', tier: 'front' }) } },
    change: (o) => {
      o.spec.selector = { matchLabels: { app: 'web', tier: 'front' } };
    },
    cause: ['spec.selector', 'FieldValueInvalid', 'Invalid value: v1.LabelSelector{…'],
  },
  {
    name: 'ReplicaSet selector',
    path: '/apis/apps/v1/namespaces/default/replicasets',
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    body: { spec: { selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web', tier: 'front' }) } },
    change: (o) => {
      o.spec.selector = { matchLabels: { tier: 'front' } };
    },
    cause: ['spec.selector', 'FieldValueInvalid', 'Invalid value: v1.LabelSelector{…'],
  },
  {
    name: 'ResourceQuota scopes',
    // A namespace of its own: a quota in default would count (and refuse) the other cases' pods,
    // and its controller rewrites the status whenever they change.
    path: `${QUOTA_NS}/resourcequotas`,
    settled: (o) => o.status?.used !== undefined,
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    body: { spec: { hard: { pods: '5' }, scopes: ['BestEffort'] } },
    change: (o) => {
      o.spec.scopes = ['NotBestEffort'];
    },
    cause: ['spec.scopes', 'FieldValueInvalid', 'Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable'],
  },
  {
    name: 'Node podCIDRs',
    path: '/api/v1/nodes',
    apiVersion: 'v1',
    kind: 'Node',
    body: { spec: { podCIDRs: ['10.244.0.0/24'] } },
    change: (o) => {
      o.spec.podCIDRs = ['10.244.1.0/24'];
    },
    cause: ['spec.podCIDRs', 'FieldValueForbidden', 'Forbidden: node updates may not change podCIDR except from "" to valid'],
  },
  {
    name: 'Node providerID',
    path: '/api/v1/nodes',
    apiVersion: 'v1',
    kind: 'Node',
    body: { spec: { providerID: 'kind://a' } },
    change: (o) => {
      o.spec.providerID = 'kind://b';
    },
    cause: ['spec.providerID', 'FieldValueForbidden', 'Forbidden: node updates may not change providerID except from "" to valid'],
  },
  {
    name: 'Pod container renamed',
    path: `${NS}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    body: podBody(),
    change: (o) => {
      o.spec.containers[0].name = 'web';
    },
    cause: ['spec', 'FieldValueForbidden', `Forbidden: ${POD_FORBIDDEN}`],
    // A strategic merge patch keys containers by name: naming another one adds it.
    causeFor: { smp: ['spec.containers', 'FieldValueForbidden', 'Forbidden: pod updates may not add or remove containers'] },
  },
  {
    name: 'Pod container added',
    path: `${NS}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    body: podBody(),
    change: (o) => {
      o.spec.containers.push(container('sidecar', 'envoy:1'));
    },
    smp: { spec: { containers: [container('sidecar', 'envoy:1')] } },
    cause: ['spec.containers', 'FieldValueForbidden', 'Forbidden: pod updates may not add or remove containers'],
  },
  {
    name: 'Pod restartPolicy',
    path: `${NS}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    body: podBody(),
    change: (o) => {
      o.spec.restartPolicy = 'Never';
    },
    cause: ['spec', 'FieldValueForbidden', `Forbidden: ${POD_FORBIDDEN}`],
  },
  {
    name: 'Pod activeDeadlineSeconds raised',
    path: `${NS}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    body: podBody(),
    change: (o) => {
      o.spec.activeDeadlineSeconds = 900;
    },
    cause: ['spec.activeDeadlineSeconds', 'FieldValueInvalid', 'Invalid value: 900: must be less than or equal to previous value'],
  },
  {
    name: 'Pod toleration changed',
    path: `${NS}/pods`,
    apiVersion: 'v1',
    kind: 'Pod',
    body: podBody(),
    change: (o) => {
      o.spec.tolerations[0].value = 'cpu';
    },
    cause: ['spec.tolerations', 'FieldValueForbidden', 'Forbidden: existing toleration can not be modified except its tolerationSeconds'],
  },
];

let seq = 0;

async function createByApply(c: Case, name: string): Promise<Any> {
  const r = await srv.json(
    'PATCH',
    `${c.path}/${name}?fieldManager=${MANAGER}`,
    { apiVersion: c.apiVersion, kind: c.kind, metadata: { name }, ...c.body },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  expect([r.status, r.body?.message]).toEqual([201, undefined]);
  return r.body;
}

/** Send `verb` changing the object as `change` says; returns the response. */
async function write(c: Pick<Case, 'path' | 'apiVersion' | 'kind' | 'body' | 'change' | 'smp'>, name: string, verb: Verb) {
  const url = `${c.path}/${name}`;
  const cur = (await srv.json('GET', url)).body;
  const next = clone(cur);
  c.change(next);
  switch (verb) {
    case 'put':
      return srv.json('PUT', url, next);
    case 'merge':
      return srv.json('PATCH', url, mergeDiff(content(cur), content(next)), { 'content-type': 'application/merge-patch+json' });
    case 'smp':
      return srv.json('PATCH', url, c.smp ?? mergeDiff(content(cur), content(next)), {
        'content-type': 'application/strategic-merge-patch+json',
      });
    case 'json':
      return srv.json('PATCH', url, jsonDiff(content(cur), content(next)), { 'content-type': 'application/json-patch+json' });
    case 'apply': {
      const intent = clone(c.body);
      c.change(intent);
      return srv.json(
        'PATCH',
        `${url}?fieldManager=${MANAGER}&force=true`,
        { apiVersion: c.apiVersion, kind: c.kind, metadata: { name }, ...intent },
        { 'content-type': 'application/apply-patch+yaml' },
      );
    }
  }
}

const matches = (message: string, want: string) => (want.endsWith('…') ? message.startsWith(want.slice(0, -1)) : message === want);

describe('immutable fields are refused on every write path', () => {
  beforeAll(async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'update-rules-quota' } });
  });
  const rows = CASES.flatMap((c) => VERBS.map((v) => [c.name, v, c] as [string, Verb, Case]));
  test.each(rows)('%s via %s', async (_n, verb, c) => {
    const name = `u${++seq}`;
    let created = await createByApply(c, name);
    // Objects a controller writes after creation (a quota's status): wait until it has.
    for (let i = 0; c.settled && !c.settled(created) && i < 200; i++) {
      await Bun.sleep(25);
      created = (await srv.json('GET', `${c.path}/${name}`)).body;
    }
    const r = await write(c, name, verb);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const want = c.causeFor?.[verb] ?? c.cause;
    const causes: { field: string; reason: string; message: string }[] = r.body.details?.causes ?? [];
    const hit = causes.find((x) => x.field === want[0] && x.reason === want[1] && matches(x.message, want[2]));
    if (!hit) expect(causes).toEqual([{ field: want[0], reason: want[1], message: want[2] }]);
    // Nothing was written.
    const after = await srv.json('GET', `${c.path}/${name}`);
    expect(after.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });
});

describe('allowed pod updates succeed on every write path', () => {
  const pod: Pick<Case, 'path' | 'apiVersion' | 'kind' | 'body'> = { path: `${NS}/pods`, apiVersion: 'v1', kind: 'Pod', body: podBody() };
  const rows: [string, Verb, (o: Any) => void, (o: Any) => unknown, unknown][] = VERBS.flatMap((verb, i) => [
    [
      'container image',
      verb,
      (o: Any) => {
        o.spec.containers[0].image = `nginx:1.${30 + i}`;
      },
      (o: Any) => o.spec.containers[0].image,
      `nginx:1.${30 + i}`,
    ],
    [
      'activeDeadlineSeconds lowered',
      verb,
      (o: Any) => {
        o.spec.activeDeadlineSeconds = 300;
      },
      (o: Any) => o.spec.activeDeadlineSeconds,
      300,
    ],
    [
      'toleration added',
      verb,
      (o: Any) => {
        o.spec.tolerations.push({ key: 'zone', operator: 'Exists', effect: 'NoSchedule' });
      },
      (o: Any) => o.spec.tolerations.map((t: Any) => t.key),
      ['dedicated', 'node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'zone'],
    ],
  ]);
  test.each(rows)('%s via %s', async (what, verb, change, read, want) => {
    const name = `ok${++seq}`;
    await createByApply({ ...pod, change, cause: ['', '', ''], name: what }, name);
    // tolerations is an atomic list: every patch type carries the whole list.
    const r = await write({ ...pod, change }, name, verb);
    expect([r.status, r.body?.message]).toEqual([200, undefined]);
    expect(read(r.body)).toEqual(want);
    expect(read((await srv.json('GET', `${pod.path}/${name}`)).body)).toEqual(want);
  });
});
