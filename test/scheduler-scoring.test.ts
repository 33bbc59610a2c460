/**
 * The scheduler's PodDisruptionBudgets in preemption, preferred inter-pod affinity and default
 * topology spreading, end to end on 3 simulated nodes (4 cpu each) labeled with one zone each.
 * Pods are pinned with spec.nodeName where a test needs a known layout; the rest is the
 * scheduler's choice, read back over HTTP.
 */
import { afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

const srv = serverForFile({ args: ['--simulated-nodes=3', '--simulated-node-capacity=cpu=4,memory=64Gi,pods=110'] });
const WAIT = 15_000;
const NODES = ['sim-node-0', 'sim-node-1', 'sim-node-2'];
const ZONE = 'topology.kubernetes.io/zone';
let seq = 0;
let namespaces: string[] = [];

interface Pod {
  metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: { nominatedNodeName?: string; phase?: string };
  code?: number;
}

beforeAll(async () => {
  // The simulated nodes registered and Ready, then labeled with a zone each.
  await until(
    async () => ((await srv.json('GET', '/api/v1/nodes')).body.items ?? []) as { metadata: { name: string } }[],
    (items) => NODES.every((n) => items.some((i) => i.metadata.name === n)),
    WAIT,
  );
  for (const [i, n] of NODES.entries()) {
    const r = await srv.json(
      'PATCH',
      `/api/v1/nodes/${n}`,
      { metadata: { labels: { [ZONE]: `zone-${i}` } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(r.status).toBe(200);
  }
});

afterEach(async () => {
  for (const ns of namespaces) {
    await srv.json('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets`, {});
    await srv.json('DELETE', `/api/v1/namespaces/${ns}/pods`, { gracePeriodSeconds: 0 });
    await until(
      async () => ((await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items ?? []).length,
      (n) => n === 0,
      WAIT,
    );
  }
  namespaces = [];
});

async function namespace(): Promise<string> {
  const ns = `score-${++seq}`;
  namespaces.push(ns);
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
  return ns;
}

const container = (cpu?: string) => ({
  name: 'c',
  image: 'registry.k8s.io/pause:3.9',
  ...(cpu ? { resources: { requests: { cpu } } } : {}),
});

async function createPod(ns: string, name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) {
  const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, {
    // Deleted victims go at once (the simulated kubelet's confirmation without a grace period).
    metadata: { name, labels, annotations: { 'sim.svc.io/stop-delay': '0s' } },
    spec: { containers: [container()], ...spec },
  });
  expect(r.status).toBe(201);
}

const getPod = async (ns: string, name: string): Promise<Pod> => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body;

const bound = (ns: string, name: string) =>
  until(
    () => getPod(ns, name),
    (p) => Boolean(p.spec?.nodeName),
    WAIT,
  );

const running = (ns: string, name: string) =>
  until(
    () => getPod(ns, name),
    (p) => p.status?.phase === 'Running',
    WAIT,
  );

test('preemption picks the node whose victims violate no PodDisruptionBudget', async () => {
  const pc = (name: string, value: number) =>
    srv.json('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
    });
  for (const [name, value] of [
    ['score-mid', 500],
    ['score-high', 1000],
    ['score-top', 2000],
  ] as const)
    expect((await pc(name, value)).status).toBe(201);
  const ns = await namespace();
  // sim-node-0: the least important victim, but a budget with no disruption left protects it;
  // sim-node-1: a more important victim, unprotected; sim-node-2: nothing the preemptor may evict.
  await createPod(ns, 'guarded', { nodeName: 'sim-node-0', containers: [container('3')] }, { app: 'guarded' });
  await createPod(ns, 'mid', { nodeName: 'sim-node-1', containers: [container('3')], priorityClassName: 'score-mid' }, { app: 'mid' });
  await createPod(ns, 'top', { nodeName: 'sim-node-2', containers: [container('3')], priorityClassName: 'score-top' }, { app: 'top' });
  for (const n of ['guarded', 'mid', 'top']) await running(ns, n);
  const pdb = await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
    metadata: { name: 'guard' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
  });
  expect(pdb.status).toBe(201);
  // The disruption controller has counted the healthy pod: no disruption allowed.
  const budget = await until(
    async () => (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/guard`)).body,
    (b) => b.status?.currentHealthy === 1,
    WAIT,
  );
  expect(budget.status.disruptionsAllowed).toBe(0);

  await createPod(ns, 'preemptor', { containers: [container('3')], priorityClassName: 'score-high' });
  const p = await until(
    () => getPod(ns, 'preemptor'),
    (x) => Boolean(x.status?.nominatedNodeName || x.spec?.nodeName),
    WAIT,
  );
  // Without the budget sim-node-0 (lowest victim priority) would be chosen.
  expect(p.status?.nominatedNodeName ?? p.spec.nodeName).toBe('sim-node-1');
  expect((await bound(ns, 'preemptor')).spec.nodeName).toBe('sim-node-1');
  expect((await getPod(ns, 'mid')).code).toBe(404);
  const guarded = await getPod(ns, 'guarded');
  expect(guarded.spec.nodeName).toBe('sim-node-0');
  expect(guarded.metadata.deletionTimestamp).toBeUndefined();
});

test('preferred pod affinity places pods next to a labeled pod (zone topology)', async () => {
  const ns = await namespace();
  await createPod(ns, 'anchor', { nodeName: 'sim-node-2' }, { app: 'anchor' });
  await running(ns, 'anchor');
  const affinity = {
    podAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'anchor' } }, topologyKey: ZONE } },
      ],
    },
  };
  // One at a time: 1 chance in 27 that random placement would pass.
  for (const name of ['near-1', 'near-2', 'near-3']) {
    await createPod(ns, name, { affinity });
    expect((await bound(ns, name)).spec.nodeName).toBe('sim-node-2');
  }
  // Symmetry: a pod whose own preferred anti-affinity repels `app: loner` keeps such pods off its zone.
  const repel = {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'loner' } }, topologyKey: ZONE } },
      ],
    },
  };
  await createPod(ns, 'hermit-0', { nodeName: 'sim-node-0', affinity: repel });
  await createPod(ns, 'hermit-1', { nodeName: 'sim-node-1', affinity: repel });
  await running(ns, 'hermit-1');
  for (const name of ['loner-1', 'loner-2']) {
    await createPod(ns, name, {}, { app: 'loner' });
    expect((await bound(ns, name)).spec.nodeName).toBe('sim-node-2');
  }
});

test("default topology spreading: a ReplicaSet's pods spread over the 3 nodes despite an unbalanced node", async () => {
  const ns = await namespace();
  // A 1-cpu pod on sim-node-0: LeastAllocated alone would put all 6 replicas on the other two nodes.
  await createPod(ns, 'filler', { nodeName: 'sim-node-0', containers: [container('1')] }, { app: 'filler' });
  await running(ns, 'filler');
  const rs = await srv.json('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    metadata: { name: 'web' },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container()] } },
    },
  });
  expect(rs.status).toBe(201);
  const pods = await until(
    async () => ((await srv.json('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).body.items ?? []) as Pod[],
    (items) => items.length === 6 && items.every((p) => p.spec.nodeName),
    WAIT,
  );
  const perNode: Record<string, number> = {};
  for (const p of pods) perNode[p.spec.nodeName as string] = (perNode[p.spec.nodeName as string] ?? 0) + 1;
  expect(perNode).toEqual({ 'sim-node-0': 2, 'sim-node-1': 2, 'sim-node-2': 2 });
});
