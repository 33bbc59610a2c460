/**
 * metrics.k8s.io (src/simulation/metrics.ts) and the HorizontalPodAutoscaler controller
 * (src/controllers/hpa) end to end with kubectl on simulated nodes.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

// One autoscaler pass a second; a 3 s scale-down window; CPU samples of pods just ready are used.
const srv = serverForFile({
  args: [
    '--simulated-nodes=2',
    '--horizontal-pod-autoscaler-sync-period=1s',
    '--horizontal-pod-autoscaler-downscale-stabilization=3s',
    '--horizontal-pod-autoscaler-cpu-initialization-period=0s',
  ],
});
const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };

const pods = async (app: string): Promise<Any[]> =>
  ((await srv.json('GET', `${NS}/pods?labelSelector=app%3D${app}`)).body.items as Any[]).filter((p) => !p.metadata.deletionTimestamp);
const running = (ps: Any[]) => ps.filter((p) => p.status?.phase === 'Running');

function deployment(name: string, replicas: number, annotations: Record<string, string> = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations },
        spec: {
          containers: [
            { name: 'app', image: 'nginx', resources: { requests: { cpu: '200m', memory: '100Mi' } } },
            { name: 'log', image: 'busybox', resources: { requests: { cpu: '50m', memory: '20Mi' } } },
          ],
        },
      },
    },
  };
}

async function deploy(name: string, replicas: number, annotations: Record<string, string> = {}): Promise<Any[]> {
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(name, replicas, annotations))).status).toBe(
    201,
  );
  return until(
    () => pods(name),
    (p) => running(p).length === replicas,
    20_000,
  );
}

test('metrics.k8s.io: discovery, PodMetrics and NodeMetrics, kubectl top pods / nodes', async () => {
  const ps = await deploy('top', 2, { 'sim.svc.io/cpu-usage': '{"app":"150m"}', 'sim.svc.io/memory-usage': '60Mi' });
  expect(running(ps)).toHaveLength(2);
  const d = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1')).body;
  expect(d.resources.map((r: Any) => [r.name, r.kind, r.namespaced, r.verbs]).sort()).toEqual([
    ['nodes', 'NodeMetrics', false, ['get', 'list']],
    ['pods', 'PodMetrics', true, ['get', 'list']],
  ]);
  const svc = (await srv.json('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.svc.io')).body;
  expect(svc.status.conditions[0]).toMatchObject({ type: 'Available', status: 'True' });

  const list = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dtop')).body;
  expect(list.kind).toBe('PodMetricsList');
  expect(list.apiVersion).toBe('metrics.k8s.io/v1beta1');
  expect(list.items).toHaveLength(2);
  const one = (await srv.json('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/${ps[0].metadata.name}`)).body;
  expect(one).toMatchObject({ kind: 'PodMetrics', window: '15s', metadata: { name: ps[0].metadata.name, labels: { app: 'top' } } });
  expect(one.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // app: 150m as annotated; log: 50% of its 50m request. Memory 60Mi shared 100:20.
  expect(one.containers).toEqual([
    { name: 'app', usage: { cpu: '150000000n', memory: '51200Ki' } },
    { name: 'log', usage: { cpu: '25000000n', memory: '10240Ki' } },
  ]);
  expect((await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dnone')).body.items).toEqual([]);
  const nodes = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/nodes')).body.items as Any[];
  expect(nodes.length).toBe(2);

  const top = srv.kubectl(['top', 'pods', '-l', 'app=top']);
  expect(top.stderr).toBe('');
  expect(top.stdout).toMatch(/NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
  expect(top.stdout).toMatch(/top-\S+\s+175m\s+60Mi/);
  const containers = srv.kubectl(['top', 'pod', ps[0].metadata.name, '--containers']);
  expect(containers.stdout).toMatch(/\s+app\s+150m\s+50Mi/);
  expect(containers.stdout).toMatch(/\s+log\s+25m\s+10Mi/);
  const topNodes = srv.kubectl(['top', 'nodes']);
  expect(topNodes.stderr).toBe('');
  expect(topNodes.stdout).toMatch(/NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)/);
  expect(topNodes.stdout.trim().split('\n')).toHaveLength(3);
  // The table kubectl get prints.
  expect(srv.kubectl(['get', 'podmetrics', ps[0].metadata.name]).stdout).toMatch(
    /CPU\(cores\)\s+MEMORY\(bytes\)\s+WINDOW\n\S+\s+175m\s+60Mi\s+15s/i,
  );
  await srv.json('DELETE', '/apis/apps/v1/namespaces/default/deployments/top');
});

const HPA = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const getHpa = async (name: string): Promise<Any> => (await srv.json('GET', `${HPA}/${name}`)).body;
const cond = (h: Any, type: string) => (h.status?.conditions ?? []).find((c: Any) => c.type === type);
const replicasOf = async (name: string): Promise<number> =>
  (await srv.json('GET', `/apis/apps/v1/namespaces/default/deployments/${name}`)).body.spec.replicas;

function hpa(name: string, min: number, max: number, behavior?: Any): Any {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: min,
      maxReplicas: max,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      ...(behavior ? { behavior } : {}),
    },
  };
}

test('scale up to ceil(2 × 90/50) = 4, then to max 6; status, conditions and events; lower usage scales down after the window', async () => {
  await deploy('web', 2, { 'sim.svc.io/cpu-usage': '90%' });
  expect((await srv.json('POST', HPA, hpa('web', 1, 6))).status).toBe(201);
  const first = await until(
    () => replicasOf('web'),
    (n) => n !== 2,
    10_000,
  );
  expect(first).toBe(4);
  const events = async () =>
    (
      (await srv.json('GET', `${NS}/events?fieldSelector=involvedObject.kind%3DHorizontalPodAutoscaler,involvedObject.name%3Dweb`)).body
        .items as Any[]
    ).filter((e) => e.reason === 'SuccessfulRescale');
  const ev = await until(events, (e) => e.length > 0);
  expect(ev[0].message).toBe('New size: 4; reason: cpu resource utilization (percentage of request) above target');
  expect(ev[0].source.component).toBe('horizontal-pod-autoscaler');
  // Once the new pods run at 90% too: 8 wanted, 6 allowed.
  const h = await until(
    () => getHpa('web'),
    (x) => x.status?.currentReplicas === 6 && cond(x, 'ScalingLimited')?.status === 'True',
    20_000,
  );
  expect(h.status).toMatchObject({
    currentReplicas: 6,
    desiredReplicas: 6,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '225m' } } }],
  });
  expect(typeof h.status.lastScaleTime).toBe('string');
  expect(cond(h, 'AbleToScale')).toMatchObject({ status: 'True' });
  expect(cond(h, 'ScalingActive')).toMatchObject({
    status: 'True',
    reason: 'ValidMetricFound',
    message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
  });
  expect(cond(h, 'ScalingLimited')).toMatchObject({
    reason: 'TooManyReplicas',
    message: 'the desired replica count is more than the maximum replica count',
  });
  // Events go out through the controller's recorder, after the write they tell of: waited for.
  const eventSaying = (message: string) =>
    until(
      async () => (await events()).map((e: Any) => e.message as string),
      (messages) => messages.includes(message),
      10_000,
    );
  expect(await eventSaying('New size: 6; reason: cpu resource utilization (percentage of request) above target')).toContain(
    'New size: 6; reason: cpu resource utilization (percentage of request) above target',
  );
  expect(srv.kubectl(['get', 'hpa', 'web']).stdout).toMatch(/web\s+Deployment\/web\s+cpu: 90%\/50%\s+1\s+6\s+6/);

  // Usage lowered to 10%: 2 wanted, held at 6 while the 3 s window has higher recommendations.
  await until(
    () => pods('web'),
    (p) => running(p).length === 6,
    20_000,
  );
  const lowered = Date.now();
  for (const p of await pods('web')) {
    await srv.json('PATCH', `${NS}/pods/${p.metadata.name}`, { metadata: { annotations: { 'sim.svc.io/cpu-usage': '10%' } } }, MERGE);
  }
  const reasons = new Set<string>();
  const down = await until(
    async () => {
      const x = await getHpa('web');
      reasons.add(cond(x, 'AbleToScale')?.reason);
      return x;
    },
    (x) => x.status?.desiredReplicas === 2,
    20_000,
  );
  expect(down.status.desiredReplicas).toBe(2);
  expect(Date.parse(down.status.lastScaleTime)).toBeGreaterThanOrEqual(Math.floor(lowered / 1000) * 1000 + 2000);
  expect(reasons.has('ScaleDownStabilized')).toBe(true);
  expect(await replicasOf('web')).toBe(2);
  expect(await eventSaying('New size: 2; reason: All metrics below target')).toContain('New size: 2; reason: All metrics below target');
  const described = srv.kubectl(['describe', 'hpa', 'web']);
  expect(described.stderr).toBe('');
  expect(described.stdout).toMatch(/resource cpu on pods\s+\(as a percentage of request\):\s+10% \(25m\) \/ 50%/);
  expect(described.stdout).toMatch(/SuccessfulRescale\s+.*New size: 2; reason: All metrics below target/);
  await srv.json('DELETE', `${HPA}/web`);
});

test('behavior: a partial one is defaulted; scale up at most 1 pod a minute (ScaleUpLimit)', async () => {
  await deploy('slow', 2, { 'sim.svc.io/cpu-usage': '90%' });
  const created = await srv.json(
    'POST',
    HPA,
    hpa('slow', 1, 10, { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } }),
  );
  expect(created.status).toBe(201);
  expect(created.body.spec.behavior).toEqual({
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] },
    scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  const h = await until(
    () => getHpa('slow'),
    (x) => x.status?.currentReplicas === 3,
    10_000,
  );
  expect(await replicasOf('slow')).toBe(3);
  await Bun.sleep(2500);
  const later = await getHpa('slow');
  expect(later.status).toMatchObject({ currentReplicas: 3, desiredReplicas: 3 });
  expect(cond(later, 'ScalingLimited')).toMatchObject({
    status: 'True',
    reason: 'ScaleUpLimit',
    message: 'the desired replica count is increasing faster than the maximum scale rate',
  });
  expect(h.status.lastScaleTime).toBe(later.status.lastScaleTime);
  await srv.json('DELETE', `${HPA}/slow`);
});

test('kubectl autoscale deployment and rc; a target without a scale subresource fails with FailedGetScale', async () => {
  await deploy('auto', 1);
  const r = srv.kubectl(['autoscale', 'deployment', 'auto', '--cpu-percent=60', '--min=2', '--max=3']);
  expect(r.stderr).toBe('');
  expect(r.stdout).toContain('horizontalpodautoscaler.autoscaling/auto autoscaled');
  // Below minReplicas: raised to 2.
  expect(
    await until(
      () => replicasOf('auto'),
      (n) => n === 2,
      10_000,
    ),
  ).toBe(2);
  const h = await until(
    () => getHpa('auto'),
    (x) => x.status?.currentReplicas === 2,
    10_000,
  );
  expect(h.spec).toMatchObject({ minReplicas: 2, maxReplicas: 3 });
  expect(cond(h, 'AbleToScale')?.status).toBe('True');

  // A ReplicationController's Scale (its selector a label map) too.
  const rc = {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'legacy' },
    spec: { replicas: 1, selector: { app: 'legacy' }, template: deployment('legacy', 1).spec.template },
  };
  expect((await srv.json('POST', `${NS}/replicationcontrollers`, rc)).status).toBe(201);
  expect(srv.kubectl(['autoscale', 'rc', 'legacy', '--cpu-percent=60', '--min=2', '--max=3']).code).toBe(0);
  const rcHpa = await until(
    () => getHpa('legacy'),
    (x) => x.status?.currentReplicas === 2 && cond(x, 'ScalingActive')?.status === 'True',
    15_000,
  );
  expect(cond(rcHpa, 'ScalingActive')?.reason).toBe('ValidMetricFound');
  expect(rcHpa.status.currentMetrics[0].resource.current.averageUtilization).toBe(50);

  const bad = hpa('nothing', 1, 3);
  bad.spec.scaleTargetRef = { apiVersion: 'v1', kind: 'Pod', name: 'x' };
  expect((await srv.json('POST', HPA, bad)).status).toBe(201);
  const failed = await until(
    () => getHpa('nothing'),
    (x) => cond(x, 'AbleToScale') !== undefined,
    10_000,
  );
  expect(cond(failed, 'AbleToScale')).toMatchObject({ status: 'False', reason: 'FailedGetScale' });
});
