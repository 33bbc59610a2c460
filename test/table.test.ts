/**
 * Server-side tables per kind, black-box: objects created over HTTPS, then read as a Table (raw
 * JSON) and through kubectl, which renders the server's Table.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });

const TABLE = { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' };
const AGE = /^\d+s$/;
const rfc3339 = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface KubectlTable {
  headers: string[];
  rows: Record<string, string>[];
}

/** Parse kubectl's column output using the header positions (cells may be empty). */
function parse(stdout: string): KubectlTable {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0] ?? '';
  const cols: { name: string; start: number }[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) cols.push({ name: m[0], start: m.index ?? 0 });
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    cols.forEach((c, i) => {
      const end = i + 1 < cols.length ? cols[i + 1]!.start : line.length;
      row[c.name] = line.slice(c.start, end).trim();
    });
    return row;
  });
  return { headers: cols.map((c) => c.name), rows };
}

function kubectlTable(args: string[]): KubectlTable {
  const r = srv.kubectl(args);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return parse(r.stdout);
}

interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}
interface TableJson {
  kind: string;
  columnDefinitions: ColumnDefinition[];
  rows: { cells: unknown[]; object: unknown }[];
}
type Json = Record<string, unknown>;

async function create(path: string, body: unknown): Promise<Json> {
  const r = await srv.json('POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function putStatus(path: string, mutate: (o: Json) => void): Promise<void> {
  const g = await srv.json('GET', path);
  expect(g.status).toBe(200);
  mutate(g.body);
  const r = await srv.json('PUT', `${path}/status`, g.body);
  if (r.status !== 200) throw new Error(`PUT ${path}/status: ${r.status} ${JSON.stringify(r.body)}`);
}

async function table(path: string): Promise<TableJson> {
  const r = await srv.json('GET', path, undefined, TABLE);
  expect(r.status).toBe(200);
  expect(r.body.kind).toBe('Table');
  return r.body;
}

describe('pods', () => {
  beforeAll(async () => {
    await create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: {
        containers: [
          { name: 'app', image: 'nginx' },
          { name: 'log', image: 'busybox' },
        ],
        nodeName: 'node-1',
        readinessGates: [{ conditionType: 'example.com/ready' }],
      },
    });
    await putStatus('/api/v1/namespaces/default/pods/web', (p) => {
      p.status = {
        phase: 'Running',
        podIP: '10.1.2.3',
        podIPs: [{ ip: '10.1.2.3' }],
        conditions: [{ type: 'example.com/ready', status: 'True' }],
        containerStatuses: [
          {
            name: 'app',
            image: 'nginx',
            imageID: '',
            ready: true,
            restartCount: 3,
            started: true,
            state: { running: { startedAt: rfc3339(60_000) } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: rfc3339(25 * 3600_000) } },
          },
          { name: 'log', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      };
    });
    await create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    });
    const d = await srv.json('DELETE', '/api/v1/namespaces/default/pods/held');
    expect(d.status).toBeLessThan(300);
  });

  test('kubectl get pods', () => {
    const t = kubectlTable(['get', 'pods']);
    expect(t.headers).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    const web = t.rows.find((r) => r.NAME === 'web')!;
    expect(web).toMatchObject({ READY: '1/2', STATUS: 'CrashLoopBackOff', RESTARTS: '3 (25h ago)' });
    expect(web.AGE).toMatch(AGE);
    expect(t.rows.find((r) => r.NAME === 'held')).toMatchObject({ READY: '0/1', STATUS: 'Terminating', RESTARTS: '0' });
  });

  test('kubectl get pods -o wide', () => {
    const t = kubectlTable(['get', 'pods', '-o', 'wide']);
    expect(t.headers).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(t.rows.find((r) => r.NAME === 'web')).toMatchObject({
      IP: '10.1.2.3',
      NODE: 'node-1',
      'NOMINATED NODE': '<none>',
      'READINESS GATES': '1/1',
    });
    expect(t.rows.find((r) => r.NAME === 'held')).toMatchObject({ IP: '<none>', NODE: '<none>', 'READINESS GATES': '<none>' });
  });

  test('raw Table: column definitions and cells', async () => {
    const t = await table('/api/v1/namespaces/default/pods/web');
    expect(t.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Ready', 'string', '', 0],
      ['Status', 'string', '', 0],
      ['Restarts', 'string', '', 0],
      ['Age', 'string', '', 0],
      ['IP', 'string', '', 1],
      ['Node', 'string', '', 1],
      ['Nominated Node', 'string', '', 1],
      ['Readiness Gates', 'string', '', 1],
    ]);
    for (const c of t.columnDefinitions) expect(c.description).toBeString();
    expect(t.rows).toHaveLength(1);
    const [name, ready, status, restarts, age, ...wide] = t.rows[0]!.cells;
    expect([name, ready, status, restarts]).toEqual(['web', '1/2', 'CrashLoopBackOff', '3 (25h ago)']);
    expect(age).toMatch(AGE);
    expect(wide).toEqual(['10.1.2.3', 'node-1', '<none>', '1/1']);
    expect(t.rows[0]!.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'web', namespace: 'default' } });
  });
});

describe('workloads', () => {
  beforeAll(async () => {
    await create('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }] },
        template: {
          metadata: { labels: { app: 'web', tier: 'front' } },
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.27' },
              { name: 'side', image: 'busybox:1.36' },
            ],
          },
        },
      },
    });
    await putStatus('/apis/apps/v1/namespaces/default/deployments/web', (d) => {
      d.status = { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
    });
    await create('/apis/apps/v1/namespaces/default/replicasets', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-abc' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
      },
    });
  });

  test('kubectl get deploy -o wide', () => {
    const t = kubectlTable(['get', 'deploy', '-o', 'wide']);
    expect(t.headers).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    expect(t.rows).toHaveLength(1);
    expect(t.rows[0]).toMatchObject({
      NAME: 'web',
      READY: '2/3',
      'UP-TO-DATE': '3',
      AVAILABLE: '2',
      CONTAINERS: 'nginx,side',
      IMAGES: 'nginx:1.27,busybox:1.36',
      SELECTOR: 'app=web,tier in (edge,front)',
    });
    expect(t.rows[0]!.AGE).toMatch(AGE);
    expect(kubectlTable(['get', 'deploy']).headers).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
  });

  test('deployment and replica set raw tables carry numbers', async () => {
    const d = await table('/apis/apps/v1/namespaces/default/deployments');
    expect(d.rows[0]!.cells.slice(0, 4)).toEqual(['web', '2/3', 3, 2]);
    const rs = await table('/apis/apps/v1/namespaces/default/replicasets');
    expect(rs.columnDefinitions.map((c) => [c.name, c.type, c.priority])).toEqual([
      ['Name', 'string', 0],
      ['Desired', 'integer', 0],
      ['Current', 'integer', 0],
      ['Ready', 'integer', 0],
      ['Age', 'string', 0],
      ['Containers', 'string', 1],
      ['Images', 'string', 1],
      ['Selector', 'string', 1],
    ]);
    const cells = rs.rows[0]!.cells;
    expect([...cells.slice(0, 4), ...cells.slice(5)]).toEqual(['web-abc', 2, 0, 0, 'nginx', 'nginx:1.27', 'app=web']);
  });
});

describe('services', () => {
  beforeAll(async () => {
    await create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web', tier: 'front' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }], externalIPs: ['192.0.2.10'] },
    });
    await create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'edge' },
      spec: {
        type: 'NodePort',
        selector: { app: 'edge' },
        ports: [
          { name: 'https', port: 443, targetPort: 8443, nodePort: 30443, protocol: 'TCP' },
          { name: 'dns', port: 53, targetPort: 53, nodePort: 30053, protocol: 'UDP' },
        ],
      },
    });
    await create('/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db' },
      spec: { type: 'ExternalName', externalName: 'db.example.com' },
    });
  });

  test('kubectl get svc / -o wide', () => {
    const t = kubectlTable(['get', 'svc']);
    expect(t.headers).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    const by = (n: string) => t.rows.find((r) => r.NAME === n)!;
    expect(by('web')).toMatchObject({ TYPE: 'ClusterIP', 'EXTERNAL-IP': '192.0.2.10', 'PORT(S)': '80/TCP' });
    expect(by('web')['CLUSTER-IP']).toMatch(/^(<none>|[0-9a-f.:]+)$/);
    expect(by('edge')).toMatchObject({ TYPE: 'NodePort', 'EXTERNAL-IP': '<none>', 'PORT(S)': '443:30443/TCP,53:30053/UDP' });
    expect(by('db')).toMatchObject({ TYPE: 'ExternalName', 'CLUSTER-IP': '<none>', 'EXTERNAL-IP': 'db.example.com', 'PORT(S)': '<none>' });
    const w = kubectlTable(['get', 'svc', '-o', 'wide']);
    expect(w.headers).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
    expect(w.rows.find((r) => r.NAME === 'web')!.SELECTOR).toBe('app=web,tier=front');
    expect(w.rows.find((r) => r.NAME === 'db')!.SELECTOR).toBe('<none>');
  });
});

describe('cluster-scoped and config kinds', () => {
  test('namespaces', async () => {
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    const t = kubectlTable(['get', 'ns', 'team-a']);
    expect(t.headers).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(t.rows[0]).toMatchObject({ NAME: 'team-a', STATUS: 'Active' });
  });

  test('configmaps and secrets count their keys', async () => {
    await create('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg' },
      data: { a: '1', b: '2' },
      binaryData: { c: 'AAE=' },
    });
    await create('/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      type: 'Opaque',
      data: { user: 'YWRtaW4=' },
    });
    const cm = kubectlTable(['get', 'cm', 'cfg']);
    expect(cm.headers).toEqual(['NAME', 'DATA', 'AGE']);
    expect(cm.rows[0]).toMatchObject({ NAME: 'cfg', DATA: '3' });
    const s = kubectlTable(['get', 'secret', 'creds']);
    expect(s.headers).toEqual(['NAME', 'TYPE', 'DATA', 'AGE']);
    expect(s.rows[0]).toMatchObject({ NAME: 'creds', TYPE: 'Opaque', DATA: '1' });
    const raw = await table('/api/v1/namespaces/default/configmaps/cfg');
    expect(raw.rows[0]!.cells.slice(0, 2)).toEqual(['cfg', 3]);
  });

  test('nodes', async () => {
    await create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' } },
      spec: { unschedulable: true },
    });
    await putStatus('/api/v1/nodes/node-1', (n) => {
      n.status = {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: rfc3339(0), lastTransitionTime: rfc3339(0) },
        ],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.11' },
          { type: 'Hostname', address: 'node-1' },
        ],
        nodeInfo: {
          machineID: 'm',
          systemUUID: 's',
          bootID: 'b',
          kernelVersion: '6.1.0',
          osImage: 'Debian GNU/Linux 12 (bookworm)',
          containerRuntimeVersion: 'containerd://1.7.0',
          kubeletVersion: 'v1.32.0',
          kubeProxyVersion: '',
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
      };
    });
    const t = kubectlTable(['get', 'nodes', '-o', 'wide']);
    expect(t.headers).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    expect(t.rows[0]).toMatchObject({
      NAME: 'node-1',
      STATUS: 'Ready,SchedulingDisabled',
      ROLES: 'control-plane,worker',
      VERSION: 'v1.32.0',
      'INTERNAL-IP': '10.0.0.11',
      'EXTERNAL-IP': '<none>',
      'OS-IMAGE': 'Debian GNU/Linux 12 (bookworm)',
      'KERNEL-VERSION': '6.1.0',
      'CONTAINER-RUNTIME': 'containerd://1.7.0',
    });
  });

  test('flow schemas', async () => {
    await create('/apis/flowcontrol.apiserver.svc.io/v1/flowschemas', {
      apiVersion: 'flowcontrol.apiserver.svc.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'team-a' },
      spec: {
        priorityLevelConfiguration: { name: 'workload-low' },
        matchingPrecedence: 5000,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'Group', group: { name: 'team-a' } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
          },
        ],
      },
    });
    const t = kubectlTable(['get', 'flowschemas', 'team-a']);
    expect(t.headers).toEqual(['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD', 'AGE', 'MISSINGPL']);
    expect(t.rows[0]).toMatchObject({
      NAME: 'team-a',
      PRIORITYLEVEL: 'workload-low',
      MATCHINGPRECEDENCE: '5000',
      DISTINGUISHERMETHOD: 'ByUser',
    });
    expect(t.rows[0]!.MISSINGPL).toMatch(/^(\?|True|False)$/);
    const raw = await table('/apis/flowcontrol.apiserver.svc.io/v1/flowschemas/team-a');
    expect(raw.rows[0]!.cells[2]).toBe(5000);
  });

  test('limit ranges keep the default table', async () => {
    await create('/api/v1/namespaces/default/limitranges', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'lr' },
      spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] },
    });
    const raw = await table('/api/v1/namespaces/default/limitranges');
    expect(raw.columnDefinitions.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    expect(kubectlTable(['get', 'limits']).headers).toEqual(['NAME', 'CREATED AT']);
  });
});

describe('events', () => {
  test('event columns in the reference order', async () => {
    await create('/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', fieldPath: 'spec.containers{log}' },
      reason: 'BackOff',
      message: 'Back-off restarting failed container',
      type: 'Warning',
      count: 4,
      firstTimestamp: rfc3339(25 * 3600_000),
      lastTimestamp: rfc3339(25 * 3600_000),
      source: { component: 'kubelet', host: 'node-1' },
    });
    const raw = await table('/api/v1/namespaces/default/events');
    const names = raw.columnDefinitions.map((c) => c.name);
    // Last Seen, Type, Reason, Object, Subobject*, Source*, Message, First Seen*, Count*, Name* (* wide).
    const order = ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count'];
    expect(names.filter((n) => order.includes(n))).toEqual(order);
    const row = raw.rows[0]!.cells;
    const cell = (n: string) => row[names.indexOf(n)];
    expect(order.map(cell)).toEqual([
      '25h',
      'Warning',
      'BackOff',
      'pod/web',
      'spec.containers{log}',
      'kubelet, node-1',
      'Back-off restarting failed container',
      '25h',
      4,
    ]);
    const out = srv.kubectl(['get', 'events']).stdout;
    expect(out).toMatch(/LAST SEEN +TYPE +REASON +OBJECT +MESSAGE\n/);
    expect(out).toMatch(/25h +Warning +BackOff +pod\/web +Back-off restarting failed container\n/);
  });
});

describe('Content-Type of Table and metadata answers', () => {
  test.each([
    ['application/json;as=Table;g=meta.k8s.io;v=v1', '', 'application/json;as=Table;v=v1;g=meta.k8s.io'],
    ['application/json;as=Table;v=v1;g=meta.svc.io', '', 'application/json;as=Table;v=v1;g=meta.svc.io'],
    ['application/json;as=Table;v=v1;g=meta.k8s.io', '/kube-system', 'application/json;as=Table;v=v1;g=meta.k8s.io'],
    [
      'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      '',
      'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
    ],
    [
      'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
      '/kube-system',
      'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
    ],
    ['application/json', '', 'application/json'],
  ])('Accept %s (namespace%s) → %s', async (accept, name, want) => {
    const r = await srv.fetch(`/api/v1/namespaces${name}`, { headers: { accept } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(want);
  });
});

describe('includeObject (issue 34 item 3)', () => {
  beforeAll(async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'incl' } });
    for (const [n, v] of [
      ['c3', 'v1'],
      ['c1', 'v3'],
      ['c2', 'v2'],
    ])
      await srv.json('POST', '/api/v1/namespaces/incl/configmaps', { metadata: { name: n }, data: { k: v } });
  });
  const table = async (q: string, accept = TABLE.accept) =>
    (await srv.json('GET', `/api/v1/namespaces/incl/configmaps${q}`, undefined, { accept })).body;

  test('Object: each row carries the whole object; Metadata (default): PartialObjectMetadata; None: no object', async () => {
    const full = await table('?includeObject=Object');
    expect(
      full.rows.map((r: { object: { kind: string; apiVersion: string; data: unknown } }) => [
        r.object.kind,
        r.object.apiVersion,
        r.object.data,
      ]),
    ).toEqual([
      ['ConfigMap', 'v1', { k: 'v3' }],
      ['ConfigMap', 'v1', { k: 'v2' }],
      ['ConfigMap', 'v1', { k: 'v1' }],
    ]);
    const meta = await table('');
    expect(meta.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(meta.rows[0].object.data).toBeUndefined();
    expect((await table('?includeObject=Metadata')).rows[0].object.kind).toBe('PartialObjectMetadata');
    const none = await table('?includeObject=None');
    expect(none.rows.map((r: { cells: unknown[]; object?: unknown }) => [r.cells[0], 'object' in r])).toEqual([
      ['c1', false],
      ['c2', false],
      ['c3', false],
    ]);
    const one = (await srv.json('GET', '/api/v1/namespaces/incl/configmaps/c1?includeObject=Object', undefined, TABLE)).body;
    expect(one.rows[0].object.data).toEqual({ k: 'v3' });
    const bad = await srv.json('GET', '/api/v1/namespaces/incl/configmaps?includeObject=All', undefined, TABLE);
    expect(bad.status).toBe(406);
    expect(bad.body.message).toBe('unrecognized includeObject value: "All"');
  });

  test('kubectl get --sort-by sorts server-side tables by the objects', () => {
    const t = kubectlTable(['get', 'configmaps', '-n', 'incl', '--sort-by=.data.k']);
    expect(t.rows.map((r) => r.NAME)).toEqual(['c3', 'c2', 'c1']);
  });

  test('a Table watch with includeObject=Object carries the object in each event', async () => {
    const r = await srv.fetch('/api/v1/namespaces/incl/configmaps?watch=true&includeObject=Object&timeoutSeconds=1', {
      headers: { accept: TABLE.accept },
    });
    const lines = (await r.text())
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '');
    const objects = lines.map((l) => JSON.parse(l).object.rows[0].object);
    expect(objects.map((o: { metadata: { name: string }; data: unknown }) => [o.metadata.name, o.data])).toEqual([
      ['c1', { k: 'v3' }],
      ['c2', { k: 'v2' }],
      ['c3', { k: 'v1' }],
    ]);
  });
});
