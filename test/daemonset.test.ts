/**
 * The DaemonSet controller (src/controllers/daemonset), end to end on three simulated nodes: one
 * pod per node (required node affinity to it, the daemon tolerations, the revision labels) and
 * `kubectl rollout status`; a NoSchedule taint excludes a node unless tolerated; a node added later
 * gets a pod and a node removed loses it; a rolling update replaces every pod, never more than
 * maxUnavailable nodes without a ready pod, and `rollout undo` goes back; maxSurge creates the new pod before deleting the old.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, type Server, serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({ args: ['--simulated-nodes=3'] });
const BASE = '/apis/apps/v1/namespaces/default/daemonsets';

async function kubectl(s: Server, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${s.kubeconfig}`, ...args], {
    env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, stdout, stderr };
}
const ok = async (args: string[]): Promise<string> => {
  const r = await kubectl(srv, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

const ready = (p: Any) => (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True');
const live = (ps: Any[]) => ps.filter((p) => !p.metadata.deletionTimestamp);
const pods = async (app: string): Promise<Any[]> =>
  (await srv.json('GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).body.items;
const getDs = async (name: string): Promise<Any> => (await srv.json('GET', `${BASE}/${name}`)).body;
const target = (p: Any): string =>
  p.spec.nodeName ??
  p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0];

function daemonSet(name: string, spec: Any = {}, podSpec: Any = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { 'sim.svc.io/stop-delay': '100ms', 'sim.svc.io/start-delay': '100ms' } },
        spec: { containers: [{ name: 'app', image: 'agent:1' }], ...podSpec },
      },
      ...spec,
    },
  };
}

let nodes: string[] = [];

describe('DaemonSet controller', () => {
  test('one pod per node, bound through node affinity, with the daemon tolerations; rollout status', async () => {
    nodes = ((await srv.json('GET', '/api/v1/nodes')).body.items as Any[]).map((n) => n.metadata.name).sort();
    expect(nodes).toHaveLength(3);
    expect((await srv.json('POST', BASE, daemonSet('agent'))).status).toBe(201);
    expect(await ok(['rollout', 'status', 'ds/agent', '--timeout=30s'])).toContain('daemon set "agent" successfully rolled out');
    const ps = live(await pods('agent'));
    expect(ps.map((p) => p.spec.nodeName).sort()).toEqual(nodes);
    expect(ps.every(ready)).toBe(true);
    const ds = await getDs('agent');
    for (const p of ps) {
      expect(p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec.nodeName] }] },
      ]);
      expect(p.spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
      expect(p.spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' });
      expect(p.metadata.labels['pod-template-generation']).toBe('1');
      expect(p.metadata.name).toStartWith('agent-');
    }
    const revs = ((await srv.json('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items as Any[]).filter(
      (r) => r.metadata.ownerReferences?.[0]?.name === 'agent',
    );
    expect(revs).toHaveLength(1);
    const hash = revs[0].metadata.labels['controller-revision-hash'];
    expect(revs[0].metadata.name).toBe(`agent-${hash}`);
    expect(ps.every((p) => p.metadata.labels['controller-revision-hash'] === hash)).toBe(true);
    expect(ds.status).toMatchObject({
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
      updatedNumberScheduled: 3,
      numberMisscheduled: 0,
      observedGeneration: 1,
    });
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    expect(events.some((e) => e.reason === 'SuccessfulCreate' && e.message === `Created pod: ${ps[0].metadata.name}`)).toBe(true);
  });

  test('a NoSchedule taint excludes its node unless the template tolerates it', async () => {
    const tainted = nodes[0] as string;
    await ok(['taint', 'node', tainted, 'dedicated=infra:NoSchedule']);
    expect((await srv.json('POST', BASE, daemonSet('plain'))).status).toBe(201);
    const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }];
    expect((await srv.json('POST', BASE, daemonSet('tolerant', {}, { tolerations }))).status).toBe(201);
    await ok(['rollout', 'status', 'ds/plain', '--timeout=30s']);
    await ok(['rollout', 'status', 'ds/tolerant', '--timeout=30s']);
    expect(
      live(await pods('plain'))
        .map(target)
        .sort(),
    ).toEqual(nodes.slice(1));
    expect(
      live(await pods('tolerant'))
        .map(target)
        .sort(),
    ).toEqual(nodes);
    expect((await getDs('plain')).status.desiredNumberScheduled).toBe(2);
    // The old DaemonSet's pod keeps running: NoSchedule does not evict.
    expect(
      live(await pods('agent'))
        .map(target)
        .sort(),
    ).toEqual(nodes);
    await ok(['taint', 'node', tainted, 'dedicated-']);
    const back = await until(
      () => pods('plain'),
      (ps) => live(ps).length === 3,
      10_000,
    );
    expect(live(back).map(target).sort()).toEqual(nodes);
    for (const n of ['plain', 'tolerant']) expect((await srv.json('DELETE', `${BASE}/${n}`)).status).toBe(200);
  });

  test('a node added later gets a pod; a node removed loses it', async () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'late-node', labels: { 'kubernetes.io/hostname': 'late-node' } },
      status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, capacity: { cpu: '4', memory: '8Gi', pods: '110' } },
    };
    expect((await srv.json('POST', '/api/v1/nodes', node)).status).toBe(201);
    const withLate = await until(
      () => pods('agent'),
      (ps) => live(ps).some((p) => target(p) === 'late-node'),
      10_000,
    );
    try {
      expect(live(withLate).map(target).sort()).toEqual([...nodes, 'late-node'].sort());
      // The status is written after the pods are created: a reader may see the pod first.
      const four = await until(
        () => getDs('agent'),
        (ds) => ds.status.desiredNumberScheduled === 4,
        10_000,
      );
      expect(four.status.desiredNumberScheduled).toBe(4);
    } finally {
      // Removed even when an expectation fails, so the later tests do not wait on a node no kubelet runs.
      expect((await srv.json('DELETE', '/api/v1/nodes/late-node')).status).toBe(200);
    }
    const after = await until(
      () => getDs('agent'),
      (ds) => ds.status.desiredNumberScheduled === 3,
      10_000,
    );
    expect(after.status.desiredNumberScheduled).toBe(3);
    const ps = await until(
      () => pods('agent'),
      (x) => live(x).every((p) => target(p) !== 'late-node'),
      10_000,
    );
    expect(live(ps).map(target).sort()).toEqual(nodes);
  });

  test('rolling update replaces every pod, at most maxUnavailable nodes without a ready pod', async () => {
    const before = live(await pods('agent')).map((p) => p.metadata.uid);
    const samples: number[] = [];
    let on = true;
    const loop = (async () => {
      while (on) {
        const ps = live(await pods('agent')).filter(ready);
        samples.push(new Set(ps.map(target)).size);
        await Bun.sleep(10);
      }
    })();
    await ok(['set', 'image', 'ds/agent', 'app=agent:2']);
    expect(await ok(['rollout', 'status', 'ds/agent', '--timeout=40s'])).toContain('successfully rolled out');
    on = false;
    await loop;
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(2);
    const ps = live(await pods('agent'));
    expect(ps).toHaveLength(3);
    expect(ps.every((p) => p.spec.containers[0].image === 'agent:2' && !before.includes(p.metadata.uid))).toBe(true);
    expect(ps.every((p) => p.metadata.labels['pod-template-generation'] === '2')).toBe(true);
    const ds = await getDs('agent');
    expect(ds.status).toMatchObject({ updatedNumberScheduled: 3, numberAvailable: 3, observedGeneration: 2 });
    const history = await ok(['rollout', 'history', 'ds/agent']);
    expect(history).toMatch(/1\s/);
    expect(history).toMatch(/2\s/);
    await ok(['rollout', 'undo', 'ds/agent']);
    expect((await getDs('agent')).spec.template.spec.containers[0].image).toBe('agent:1');
    await ok(['rollout', 'status', 'ds/agent', '--timeout=40s']);
    expect(live(await pods('agent')).every((p) => p.spec.containers[0].image === 'agent:1')).toBe(true);
  });

  test('maxSurge: the new pod is created before the old one is deleted', async () => {
    const ds = daemonSet('surge', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    expect((await srv.json('POST', BASE, ds)).status).toBe(201);
    await ok(['rollout', 'status', 'ds/surge', '--timeout=30s']);
    const samples: number[] = [];
    let on = true;
    const loop = (async () => {
      while (on) {
        samples.push(
          new Set(
            live(await pods('surge'))
              .filter(ready)
              .map(target),
          ).size,
        );
        await Bun.sleep(10);
      }
    })();
    const r = await srv.json(
      'PATCH',
      `${BASE}/surge`,
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'agent:3' }] } } } },
      MERGE,
    );
    expect(r.status).toBe(200);
    await ok(['rollout', 'status', 'ds/surge', '--timeout=40s']);
    on = false;
    await loop;
    expect(Math.min(...samples)).toBe(3);
    const ps = live(await pods('surge'));
    expect(ps).toHaveLength(3);
    expect(ps.every((p) => p.spec.containers[0].image === 'agent:3')).toBe(true);
  });
});
