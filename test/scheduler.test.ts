/**
 * The scheduler (issue 36 item 3) end to end, against a real server: nodes are created through
 * the API (status with capacity, allocatable and Ready=True, as a kubelet reports them), pods
 * with kubectl or the API; the tests check where the scheduler binds them, the PodScheduled
 * condition with the reference's messages, the Scheduled and FailedScheduling events, retries
 * when the cluster changes, and preemption. Each test removes its nodes, so the next one sees
 * only its own.
 */
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

// Waits poll with deadlines of several seconds; on a loaded 2-core CI machine a test may take longer than bun's 5 s default.
setDefaultTimeout(60_000);

const srv = serverForFile();
/** Deadlines for the scheduler's asynchronous effects: generous, the machine is shared. */
const WAIT = 15_000;
let seq = 0;
let nodes: string[] = [];

interface NodeSpec {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
}

async function addNode(name: string, s: NodeSpec = {}): Promise<void> {
  const created = await srv.json('POST', '/api/v1/nodes', {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...s.labels } },
    spec: { ...(s.taints ? { taints: s.taints } : {}), ...(s.unschedulable ? { unschedulable: true } : {}) },
  });
  expect(created.status).toBe(201);
  nodes.push(name);
  const resources = { cpu: s.cpu ?? '4', memory: s.memory ?? '8Gi', pods: s.pods ?? '110' };
  const stamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  // As a kubelet does: the node controllers may write the new node first (its taints), so a 409
  // means read it again and retry.
  let current = created.body;
  const putStatus = () =>
    srv.json('PUT', `/api/v1/nodes/${name}/status`, {
      ...current,
      status: {
        capacity: resources,
        allocatable: resources,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: stamp,
            lastTransitionTime: stamp,
          },
        ],
      },
    });
  let status = await putStatus();
  for (let i = 0; i < 5 && status.status === 409; i++) {
    current = (await srv.json('GET', `/api/v1/nodes/${name}`)).body;
    status = await putStatus();
  }
  expect(status.status).toBe(200);
}

let namespaces: string[] = [];

afterEach(async () => {
  // The test's pods (pending ones would take the next test's nodes) and nodes go.
  for (const ns of namespaces) await srv.json('DELETE', `/api/v1/namespaces/${ns}/pods`, { gracePeriodSeconds: 0 });
  for (const n of nodes) await srv.json('DELETE', `/api/v1/nodes/${n}`);
  nodes = [];
  namespaces = [];
});

async function namespace(): Promise<string> {
  const ns = `sched-${++seq}`;
  namespaces.push(ns);
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
  return ns;
}

async function createPod(ns: string, name: string, spec: Record<string, unknown> = {}, labels?: Record<string, string>) {
  const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }], ...spec },
  });
  expect(r.status).toBe(201);
  return r.body;
}

const cpu = (request: string) => ({
  containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: request } } }],
});

/** A pod, or an event, as the tests read them. */
interface Json {
  metadata: { name: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: { nominatedNodeName?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
  code?: number;
  involvedObject?: { name: string };
  reason?: string;
  message?: string;
  [k: string]: unknown;
}

const getPod = async (ns: string, name: string): Promise<Json> => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body;

const condition = (pod: Json, type = 'PodScheduled') => (pod.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

/** Wait until the pod is bound; answers it. */
async function bound(ns: string, name: string): Promise<Json> {
  const pod = await until(
    () => getPod(ns, name),
    (p) => Boolean(p.spec?.nodeName),
    WAIT,
  );
  expect(pod.spec.nodeName).toBeTruthy();
  return pod;
}

/** Wait until the pod's PodScheduled condition is False/Unschedulable with `message`; answers the pod. */
async function unschedulable(ns: string, name: string, message: string): Promise<Json> {
  const pod = await until(
    () => getPod(ns, name),
    (p) => condition(p)?.message === message,
    WAIT,
  );
  expect(pod.spec.nodeName).toBeUndefined();
  expect(condition(pod)).toMatchObject({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message });
  return pod;
}

async function events(ns: string, pod: string, reason: string): Promise<Json[]> {
  const found = await until(
    async () => ((await srv.json('GET', `/api/v1/namespaces/${ns}/events`)).body.items ?? []) as Json[],
    (items) => items.some((e) => e.involvedObject?.name === pod && e.reason === reason),
    WAIT,
  );
  return found.filter((e) => e.involvedObject?.name === pod && e.reason === reason);
}

test('with no nodes at all a pod waits without a word; the first node registered takes it', async () => {
  const ns = await namespace();
  await createPod(ns, 'early');
  // The scheduler has seen it (it is in the pods' watch cache before the create is answered).
  await Bun.sleep(200);
  expect(condition(await getPod(ns, 'early'))).toBeUndefined();
  await addNode('first');
  expect((await bound(ns, 'early')).spec.nodeName).toBe('first');
  const items = (await srv.json('GET', `/api/v1/namespaces/${ns}/events`)).body.items as Json[];
  expect(items.filter((e) => e.reason === 'FailedScheduling')).toEqual([]);
});

test('kubectl run: the pod is bound to the Ready node, PodScheduled=True, a Scheduled event', async () => {
  await addNode('run-1');
  const ns = await namespace();
  const r = srv.kubectl(['run', 'web', '--image=registry.k8s.io/pause:3.9', '-n', ns]);
  expect(r.code).toBe(0);
  const pod = await bound(ns, 'web');
  expect(pod.spec.nodeName).toBe('run-1');
  expect(condition(pod)).toMatchObject({ status: 'True' });
  const [ev] = await events(ns, 'web', 'Scheduled');
  expect(ev).toMatchObject({
    type: 'Normal',
    message: `Successfully assigned ${ns}/web to run-1`,
    source: { component: 'default-scheduler' },
  });
  // Another scheduler's pods are not ours.
  await createPod(ns, 'other', { schedulerName: 'my-scheduler' });
  await bound(ns, 'web');
  expect((await getPod(ns, 'other')).spec.nodeName).toBeUndefined();
});

test('requests beyond every node: Pending with the reference message and FailedScheduling, then bound on a big node', async () => {
  for (const n of ['fit-1', 'fit-2', 'fit-3']) await addNode(n, { cpu: '2' });
  const ns = await namespace();
  await createPod(ns, 'big', cpu('3'));
  const msg =
    '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';
  await unschedulable(ns, 'big', msg);
  const [ev] = await events(ns, 'big', 'FailedScheduling');
  expect(ev).toMatchObject({ type: 'Warning', message: msg });
  // Retried when a node that fits comes.
  await addNode('fit-big', { cpu: '8' });
  const pod = await bound(ns, 'big');
  expect(pod.spec.nodeName).toBe('fit-big');
  expect(condition(pod)?.status).toBe('True');
});

test('too many pods, and a burst never overcommits a node', async () => {
  await addNode('burst-1', { cpu: '1', pods: '110' });
  await addNode('burst-2', { cpu: '1', pods: '2' });
  const ns = await namespace();
  // 8 pods of 300m at once: burst-1 has cpu for 3, burst-2 room for 2 pods.
  await Promise.all(Array.from({ length: 8 }, (_, i) => createPod(ns, `p${i}`, cpu('300m'))));
  const list = await until(
    async () => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items as Json[],
    (items) => items.filter((p) => p.spec.nodeName).length >= 5 && items.filter((p) => condition(p)?.status === 'False').length >= 3,
    WAIT,
  );
  const per = new Map<string, number>();
  for (const p of list) if (p.spec.nodeName) per.set(p.spec.nodeName, (per.get(p.spec.nodeName) ?? 0) + 1);
  expect(Object.fromEntries(per)).toEqual({ 'burst-1': 3, 'burst-2': 2 });
  const pending = list.filter((p) => !p.spec.nodeName);
  expect(pending.length).toBe(3);
  expect(condition(pending[0] as Json)?.message).toBe(
    '0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.',
  );
});

test('taints and tolerations', async () => {
  await addNode('taint-gpu', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
  // As the node lifecycle controller taints an unreachable node: NoSchedule and NoExecute (every
  // pod tolerates the NoExecute one for 300 s through DefaultTolerationSeconds, not the other).
  await addNode('taint-down', {
    taints: [
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    ],
  });
  const ns = await namespace();
  await createPod(ns, 'plain');
  await unschedulable(
    ns,
    'plain',
    '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
  );
  await createPod(ns, 'tolerant', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] });
  expect((await bound(ns, 'tolerant')).spec.nodeName).toBe('taint-gpu');
  await createPod(ns, 'all', { tolerations: [{ operator: 'Exists' }] });
  expect(['taint-gpu', 'taint-down']).toContain((await bound(ns, 'all')).spec.nodeName as string);
});

test('nodeSelector and required node affinity', async () => {
  await addNode('sel-ssd', { labels: { disk: 'ssd' } });
  await addNode('sel-hdd', { labels: { disk: 'hdd' } });
  const ns = await namespace();
  await createPod(ns, 'fast', { nodeSelector: { disk: 'ssd' } });
  expect((await bound(ns, 'fast')).spec.nodeName).toBe('sel-ssd');
  await createPod(ns, 'slow', {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }],
        },
      },
    },
  });
  expect((await bound(ns, 'slow')).spec.nodeName).toBe('sel-hdd');
  await createPod(ns, 'none', { nodeSelector: { disk: 'nvme' } });
  await unschedulable(
    ns,
    'none',
    "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
  );
  // A node that matches is labelled: the pod is retried and bound.
  const hdd = (await srv.json('GET', '/api/v1/nodes/sel-hdd')).body;
  hdd.metadata.labels.disk = 'nvme';
  expect((await srv.json('PUT', '/api/v1/nodes/sel-hdd', hdd)).status).toBe(200);
  expect((await bound(ns, 'none')).spec.nodeName).toBe('sel-hdd');
});

test('topology spread over 3 zones (DoNotSchedule, maxSkew 1)', async () => {
  for (const z of ['a', 'b', 'c']) await addNode(`zone-${z}`, { labels: { 'topology.kubernetes.io/zone': `z-${z}` } });
  const ns = await namespace();
  const spread = {
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'spread' } },
      },
    ],
  };
  await Promise.all(Array.from({ length: 6 }, (_, i) => createPod(ns, `s${i}`, spread, { app: 'spread' })));
  const list = await until(
    async () => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items as Json[],
    (items) => items.every((p) => p.spec.nodeName),
    WAIT,
  );
  const per = new Map<string, number>();
  for (const p of list) per.set(p.spec.nodeName ?? '', (per.get(p.spec.nodeName ?? '') ?? 0) + 1);
  expect(Object.fromEntries(per)).toEqual({ 'zone-a': 2, 'zone-b': 2, 'zone-c': 2 });
  // A node without the zone label does not count as a domain and takes none of them.
  await addNode('zone-none');
  await createPod(ns, 's6', { ...spread, nodeSelector: { 'kubernetes.io/hostname': 'zone-none' } }, { app: 'spread' });
  await unschedulable(
    ns,
    's6',
    "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
  );
});

test('required pod anti-affinity and host ports keep pods apart', async () => {
  await addNode('apart-1');
  await addNode('apart-2');
  const ns = await namespace();
  const anti = {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' },
        ],
      },
    },
  };
  await createPod(ns, 'db-0', anti, { app: 'db' });
  const first = (await bound(ns, 'db-0')).spec.nodeName;
  await createPod(ns, 'db-1', anti, { app: 'db' });
  const second = (await bound(ns, 'db-1')).spec.nodeName;
  expect(second).not.toBe(first);
  await createPod(ns, 'db-2', anti, { app: 'db' });
  await unschedulable(
    ns,
    'db-2',
    "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
  );
  const port = (name: string) => ({
    containers: [{ name, image: 'registry.k8s.io/pause:3.9', ports: [{ containerPort: 80, hostPort: 8080 }] }],
  });
  await createPod(ns, 'web-0', port('a'));
  await createPod(ns, 'web-1', port('b'));
  expect((await bound(ns, 'web-0')).spec.nodeName).not.toBe((await bound(ns, 'web-1')).spec.nodeName);
  await createPod(ns, 'web-2', port('c'));
  await unschedulable(
    ns,
    'web-2',
    "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
  );
});

test('an unschedulable (cordoned) node takes no pods until uncordoned', async () => {
  await addNode('cordoned', { unschedulable: true });
  const ns = await namespace();
  await createPod(ns, 'wait');
  await unschedulable(
    ns,
    'wait',
    '0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
  );
  expect(srv.kubectl(['uncordon', 'cordoned']).code).toBe(0);
  expect((await bound(ns, 'wait')).spec.nodeName).toBe('cordoned');
});

test('priority preemption: a high-priority pod evicts a low-priority one and is nominated, then bound', async () => {
  // Pods take their priority from a PriorityClass (the Priority admission plugin refuses others).
  const pc = (name: string, value: number, preemptionPolicy = 'PreemptLowerPriority') =>
    srv.json('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
      preemptionPolicy,
    });
  expect((await pc('sched-high', 1000)).status).toBe(201);
  expect((await pc('sched-polite', 2000, 'Never')).status).toBe(201);
  await addNode('prio-1', { cpu: '1' });
  const ns = await namespace();
  await createPod(ns, 'low', { ...cpu('800m'), priority: 0 });
  await bound(ns, 'low');
  await createPod(ns, 'high', { ...cpu('800m'), priorityClassName: 'sched-high' });
  const high = await until(
    () => getPod(ns, 'high'),
    (p) => p.status?.nominatedNodeName === 'prio-1',
    WAIT,
  );
  expect(high.status?.nominatedNodeName).toBe('prio-1');
  expect(high.spec.nodeName).toBeUndefined();
  // The victim is being deleted (its kubelet would stop it within its grace period).
  const low = await until(
    () => getPod(ns, 'low'),
    (p) => Boolean(p.metadata?.deletionTimestamp) || p.code === 404,
    WAIT,
  );
  expect(Boolean(low.metadata?.deletionTimestamp) || low.code === 404).toBe(true);
  if (low.metadata?.deletionTimestamp) {
    expect(condition(low, 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'PreemptionByScheduler' });
  }
  const [ev] = await events(ns, 'low', 'Preempted');
  expect(ev?.message).toBe(`Preempted by pod ${high.metadata.uid} on node prio-1`);
  // A pod of equal priority cannot take the room meanwhile.
  await createPod(ns, 'low2', { ...cpu('800m'), priority: 0 });
  // The kubelet confirms the victim's termination: the preemptor is bound there.
  await srv.json('DELETE', `/api/v1/namespaces/${ns}/pods/low`, { gracePeriodSeconds: 0 });
  expect((await bound(ns, 'high')).spec.nodeName).toBe('prio-1');
  expect((await getPod(ns, 'low2')).spec.nodeName).toBeUndefined();
  // preemptionPolicy Never: no preemption.
  await createPod(ns, 'polite', { ...cpu('800m'), priorityClassName: 'sched-polite' });
  await unschedulable(ns, 'polite', '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
});
