/**
 * Simulated nodes and kubelets (src/simulation), end to end: a server started with
 * --simulated-nodes=3 registers three Ready nodes whose Leases are renewed; pods placed on them
 * (spec.nodeName at create, as a manifest with nodeName) go through the kubelet's states, run,
 * succeed, fail, crash-loop, are deleted gracefully; a restart of the server keeps them running.
 * Deadlines are generous: the machine is a loaded 2-core box.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runClient } from './helpers/client-node';
import { serverForFile, startServer } from './helpers/server';
import { until } from './helpers/until';

// Waits poll with deadlines of several seconds; on a loaded 2-core CI machine a test may take longer than bun's 5 s default.
setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
// The Job controller is off: a test here makes a Job's pod by hand (the controller would make its own and delete one).
const srv = serverForFile({
  args: [
    '--simulated-nodes=3',
    '--simulated-node-lease-duration=4s',
    '--controllers=*,-job-controller,-root-ca-certificate-publisher-controller',
  ],
});

const pod = (name: string, over: Any = {}, annotations: Record<string, string> = {}, node = 'sim-node-0'): Any => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, annotations },
  spec: { nodeName: node, containers: [{ name: 'app', image: 'nginx:1.27' }], ...over },
});

async function create(body: Any, ns = 'default'): Promise<Any> {
  const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, body, JSON_CT);
  expect(r.status).toBe(201);
  return r.body;
}

const get = async (name: string, ns = 'default'): Promise<Any> => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body;
const cond = (p: Any, type: string) => (p?.status?.conditions ?? []).find((c: Any) => c.type === type);
const waitPod = (name: string, done: (p: Any) => boolean, ms = 20_000) => until(() => get(name), done, ms);

describe('simulated nodes', () => {
  test('--simulated-nodes=3: three Ready nodes with capacity, addresses, pod CIDRs (kubectl get nodes)', async () => {
    const nodes = await until(
      async () => (await srv.json('GET', '/api/v1/nodes')).body.items as Any[],
      (items) => items.length === 3 && items.every((n) => cond(n, 'Ready')?.status === 'True'),
      20_000,
    );
    expect(nodes.map((n) => n.metadata.name)).toEqual(['sim-node-0', 'sim-node-1', 'sim-node-2']);
    const n0 = nodes[0];
    expect(n0.status.capacity).toEqual({ cpu: '32', memory: '256Gi', pods: '110' });
    expect(n0.status.allocatable).toEqual(n0.status.capacity);
    expect(n0.status.conditions.map((c: Any) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(n0.status.addresses.map((a: Any) => a.type)).toEqual(['InternalIP', 'Hostname']);
    expect(n0.status.nodeInfo.kubeletVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(new Set(nodes.map((n) => n.spec.podCIDR)).size).toBe(3);
    const out = srv.kubectl(['get', 'nodes']);
    expect(out.code).toBe(0);
    expect(out.stdout.split('\n').filter((l) => / Ready /.test(l))).toHaveLength(3);
  });

  test('leases in kube-node-lease are renewed every quarter of their duration', async () => {
    const lease = async () => (await srv.json('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/sim-node-1')).body;
    const first = await until(lease, (l) => !!l?.spec?.renewTime, 10_000);
    expect(first.spec.holderIdentity).toBe('sim-node-1');
    expect(first.spec.leaseDurationSeconds).toBe(4);
    expect(first.metadata.ownerReferences[0]).toMatchObject({ kind: 'Node', name: 'sim-node-1' });
    // 4 s leases: renewed about every second.
    const later = await until(lease, (l) => Date.parse(l.spec.renewTime) >= Date.parse(first.spec.renewTime) + 2000, 10_000);
    expect(Date.parse(later.spec.renewTime)).toBeGreaterThanOrEqual(Date.parse(first.spec.renewTime) + 2000);
  });

  test('a node annotated sim.svc.io/managed is run, with its capacity annotation', async () => {
    const r = await srv.json(
      'POST',
      '/api/v1/nodes',
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'mine', annotations: { 'sim.svc.io/managed': 'true', 'sim.svc.io/capacity': 'cpu=4,memory=8Gi' } },
      },
      JSON_CT,
    );
    expect(r.status).toBe(201);
    const n = await until(
      async () => (await srv.json('GET', '/api/v1/nodes/mine')).body,
      (x) => cond(x, 'Ready')?.status === 'True' && !!x.spec?.podCIDR,
      15_000,
    );
    expect(n.status.capacity).toEqual({ cpu: '4', memory: '8Gi', pods: '110' });
    expect(n.spec.podCIDR).toMatch(/^10\.\d+\.\d+\.0\/24$/);
  });
});

describe('simulated kubelets', () => {
  test('a pod on a node runs: Running and Ready with IPs and the kubelet fields (kubectl get pods -o wide)', async () => {
    await create(pod('web'));
    const p = await waitPod('web', (x) => x.status?.phase === 'Running' && cond(x, 'Ready')?.status === 'True');
    expect(p.status.conditions.map((c: Any) => [c.type, c.status])).toEqual([
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ]);
    const node = (await srv.json('GET', '/api/v1/nodes/sim-node-0')).body;
    const cidr = node.spec.podCIDR.replace(/\.0\/24$/, '.');
    expect(p.status.podIP.startsWith(cidr)).toBe(true);
    expect(p.status.podIPs).toEqual([{ ip: p.status.podIP }]);
    expect(p.status.hostIP).toBe(node.status.addresses[0].address);
    expect(p.status.hostIPs).toEqual([{ ip: p.status.hostIP }]);
    expect(p.status.qosClass).toBe('BestEffort');
    const cs = p.status.containerStatuses[0];
    expect(cs).toMatchObject({ name: 'app', ready: true, started: true, restartCount: 0, image: 'docker.io/library/nginx:1.27' });
    expect(cs.state.running.startedAt).toBeString();
    expect(cs.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(cs.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    const wide = srv.kubectl(['get', 'pods', 'web', '-o', 'wide']);
    expect(wide.stdout).toContain('Running');
    expect(wide.stdout).toContain(p.status.podIP);
    expect(wide.stdout).toContain('sim-node-0');
  });

  test('init containers run first; a start delay shows ContainerCreating/PodInitializing first', async () => {
    await create(
      pod('init', { initContainers: [{ name: 'setup', image: 'busybox' }] }, { 'sim.svc.io/start-delay': '1500ms' }, 'sim-node-1'),
    );
    const pending = await waitPod('init', (x) => !!x.status?.containerStatuses, 15_000);
    expect(pending.status.phase).toBe('Pending');
    expect(pending.status.containerStatuses[0].state.waiting.reason).toBe('PodInitializing');
    expect(cond(pending, 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized' });
    const p = await waitPod('init', (x) => x.status?.phase === 'Running');
    expect(p.status.initContainerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(cond(p, 'Initialized')?.status).toBe('True');
  });

  test('sim.svc.io/ready=false: running, not ready', async () => {
    await create(pod('unready', {}, { 'sim.svc.io/ready': 'false' }));
    const p = await waitPod('unready', (x) => x.status?.phase === 'Running');
    expect(cond(p, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    expect(p.status.containerStatuses[0]).toMatchObject({ ready: false, started: true });
  });

  test('run-duration under restartPolicy Never: Succeeded', async () => {
    await create(pod('batch', { restartPolicy: 'Never' }, { 'sim.svc.io/run-duration': '1s' }, 'sim-node-2'));
    const p = await waitPod('batch', (x) => x.status?.phase === 'Succeeded');
    expect(p.status.phase).toBe('Succeeded');
    expect(p.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(cond(p, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
  });

  test("a Job's pod without run-duration runs for a second and succeeds", async () => {
    // A Job that exists (batch/v1 is served: the garbage collector deletes pods of missing owners).
    const owner = await srv.json(
      'POST',
      '/apis/batch/v1/namespaces/default/jobs',
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'x' },
        spec: { template: { spec: pod('t', { restartPolicy: 'OnFailure' }).spec } },
      },
      JSON_CT,
    );
    expect(owner.status).toBe(201);
    const job = pod('job-x', { restartPolicy: 'OnFailure' });
    job.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'x', uid: owner.body.metadata.uid, controller: true }];
    await create(job);
    const p = await waitPod('job-x', (x) => x.status?.phase === 'Succeeded' || !x.metadata);
    expect(p.status?.phase).toBe('Succeeded');
  });

  test('exit-code under Never: Failed', async () => {
    await create(pod('fails', { restartPolicy: 'Never' }, { 'sim.svc.io/exit-code': '3' }));
    const p = await waitPod('fails', (x) => x.status?.phase === 'Failed');
    expect(p.status.phase).toBe('Failed');
    expect(p.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  test('exit-code under Always: CrashLoopBackOff, restarted after the back-off', async () => {
    await create(pod('crash', {}, { 'sim.svc.io/exit-code': '1', 'sim.svc.io/run-duration': '500ms' }));
    const p = await waitPod('crash', (x) => x.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff');
    const cs = p.status.containerStatuses[0];
    expect(p.status.phase).toBe('Running');
    expect(cs.state.waiting.message).toMatch(/^back-off 10s restarting failed container=app pod=crash_default\(/);
    expect(cs.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(cond(p, 'Ready')?.status).toBe('False');
    // After the 10 s back-off: running again, restartCount 1; then 20 s of back-off.
    const again = await waitPod('crash', (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 25_000);
    expect(again.status.containerStatuses[0].restartCount).toBeGreaterThanOrEqual(1);
    const out = srv.kubectl(['get', 'pod', 'crash']);
    expect(out.stdout).toMatch(/CrashLoopBackOff|Running|Error/);
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    expect(events.some((e) => e.involvedObject.name === 'crash' && e.reason === 'BackOff')).toBe(true);
  }, 40_000);

  test('graceful deletion (client-node): Terminating for the grace period, then removed by the kubelet', async () => {
    await create(pod('bye', { terminationGracePeriodSeconds: 2 }));
    await waitPod('bye', (x) => x.status?.phase === 'Running');
    const t0 = Date.now();
    const r = await runClient(
      srv,
      `const core = kc.makeApiClient(k8s.CoreV1Api);
       const p = await core.deleteNamespacedPod({ name: 'bye', namespace: 'default' });
       return { deletionTimestamp: p.metadata?.deletionTimestamp ?? null, grace: p.metadata?.deletionGracePeriodSeconds ?? null };`,
    );
    expect(r.grace).toBe(2);
    expect(r.deletionTimestamp).not.toBeNull();
    const gone = await until(
      async () => (await srv.json('GET', '/api/v1/namespaces/default/pods/bye')).status,
      (s) => s === 404,
      20_000,
    );
    expect(gone).toBe(404);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  test('sim.svc.io/stop-delay: removed after it rather than the grace period', async () => {
    await create(pod('quick', {}, { 'sim.svc.io/stop-delay': '0s' }));
    await waitPod('quick', (x) => x.status?.phase === 'Running');
    expect((await srv.json('DELETE', '/api/v1/namespaces/default/pods/quick')).status).toBe(200);
    const gone = await until(
      async () => (await srv.json('GET', '/api/v1/namespaces/default/pods/quick')).status,
      (s) => s === 404,
      10_000,
    );
    expect(gone).toBe(404);
  });
});

describe('--simulated-pod-profile=realistic', () => {
  test('each step takes 1 s to 5 s: ContainerCreating first, then Running', async () => {
    const s = await startServer({ args: ['--simulated-nodes=1', '--simulated-pod-profile=realistic'] });
    try {
      await until(
        async () => (await s.json('GET', '/api/v1/nodes/sim-node-0')).body,
        (n) => cond(n, 'Ready')?.status === 'True',
        20_000,
      );
      const t0 = Date.now();
      expect((await s.json('POST', '/api/v1/namespaces/default/pods', pod('slow'), JSON_CT)).status).toBe(201);
      const read = async () => (await s.json('GET', '/api/v1/namespaces/default/pods/slow')).body;
      const pending = await until(read, (x) => !!x.status?.containerStatuses, 10_000);
      expect(pending.status.phase).toBe('Pending');
      expect(pending.status.containerStatuses[0].state.waiting.reason).toBe('ContainerCreating');
      expect(pending.status.podIP).toBeUndefined();
      const running = await until(read, (x) => x.status?.phase === 'Running', 15_000);
      expect(running.status.phase).toBe('Running');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('restart', () => {
  test('a restarted server keeps its nodes Ready and its pods running', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sim-'));
    const args = ['--simulated-nodes=2', '--simulated-node-lease-duration=4s'];
    let s = await startServer({ dataDir, args });
    try {
      const r = await s.json('POST', '/api/v1/namespaces/default/pods', pod('keep', {}, {}, 'sim-node-1'), JSON_CT);
      expect(r.status).toBe(201);
      const before = await until(
        async () => (await s.json('GET', '/api/v1/namespaces/default/pods/keep')).body,
        (x) => x.status?.phase === 'Running',
        20_000,
      );
      await s.stop();
      s = await startServer({ dataDir, args });
      const restartedAt = Date.now();
      const nodes = await until(
        async () => (await s.json('GET', '/api/v1/nodes')).body.items as Any[],
        (items) => items.length === 2 && items.every((n) => cond(n, 'Ready')?.status === 'True'),
        20_000,
      );
      expect(nodes.map((n) => n.spec.podCIDR)).toEqual(['10.64.0.0/24', '10.64.1.0/24']);
      const after = (await s.json('GET', '/api/v1/namespaces/default/pods/keep')).body;
      expect(after.status.phase).toBe('Running');
      expect(after.status.podIP).toBe(before.status.podIP);
      // It still runs: a second pod on the node gets another IP, and deletion still completes.
      expect((await s.json('POST', '/api/v1/namespaces/default/pods', pod('next', {}, {}, 'sim-node-1'), JSON_CT)).status).toBe(201);
      const next = await until(
        async () => (await s.json('GET', '/api/v1/namespaces/default/pods/next')).body,
        (x) => x.status?.phase === 'Running',
        20_000,
      );
      expect(next.status.podIP).not.toBe(before.status.podIP);
      const lease = await until(
        async () => (await s.json('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/sim-node-0')).body,
        (l) => Date.parse(l.spec?.renewTime) >= restartedAt,
        10_000,
      );
      expect(lease.spec.holderIdentity).toBe('sim-node-0');
    } finally {
      await s.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
