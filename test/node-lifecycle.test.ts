/**
 * The node lifecycle controller and the taint eviction manager, end to end with simulated nodes:
 * a node whose heartbeat is stopped (sim.svc.io/heartbeat=stop) goes Unknown after the grace
 * period (kubectl shows NotReady), is tainted unreachable NoExecute and NoSchedule, and its pods
 * are deleted after their tolerationSeconds (those tolerating forever stay); resumed, it is Ready
 * again without the taints and its kubelet completes the deletions. DefaultTolerationSeconds
 * gives pods the not-ready/unreachable tolerations. Short flags keep it fast.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

// Waits poll with deadlines of several seconds; on a loaded 2-core CI machine a test may take longer than bun's 5 s default.
setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({
  args: [
    '--simulated-nodes=3',
    '--simulated-node-lease-duration=2s',
    '--node-monitor-period=500ms',
    '--node-monitor-grace-period=3s',
    '--node-startup-grace-period=3s',
    '--node-eviction-rate=10',
    '--default-unreachable-toleration-seconds=4',
  ],
});

const node = async (name: string): Promise<Any> => (await srv.json('GET', `/api/v1/nodes/${name}`)).body;
const cond = (o: Any, type: string) => (o?.status?.conditions ?? []).find((c: Any) => c.type === type);
const taintKeys = (n: Any) => (n?.spec?.taints ?? []).map((t: Any) => `${t.key}:${t.effect}`).sort();
const getPod = (name: string) => srv.json('GET', `/api/v1/namespaces/default/pods/${name}`);

async function createPod(name: string, nodeName: string, tolerations?: Any[]): Promise<Any> {
  const r = await srv.json(
    'POST',
    '/api/v1/namespaces/default/pods',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        nodeName,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'app', image: 'nginx' }],
        ...(tolerations ? { tolerations } : {}),
      },
    },
    JSON_CT,
  );
  expect(r.status).toBe(201);
  return r.body;
}

describe('DefaultTolerationSeconds', () => {
  test('pods get the not-ready and unreachable NoExecute tolerations unless they have them', async () => {
    const p = await createPod('tolerated', 'sim-node-0');
    expect(p.spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 4 },
    ]);
    const own = await createPod('own', 'sim-node-0', [{ operator: 'Exists' }]);
    expect(own.spec.tolerations).toEqual([{ operator: 'Exists' }]);
  });
});

describe('node lifecycle', () => {
  test('a stopped node goes Unknown and tainted, its pods are evicted after their tolerationSeconds; resumed, it recovers', async () => {
    await until(
      async () => (await srv.json('GET', '/api/v1/nodes')).body.items as Any[],
      (items) => items.length === 3 && items.every((n) => cond(n, 'Ready')?.status === 'True'),
      20_000,
    );
    // On sim-node-2: no toleration of unreachable (-> the default 4 s), 1 s, forever.
    await createPod('default-toleration', 'sim-node-2');
    await createPod('short', 'sim-node-2', [
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 },
    ]);
    await createPod('forever', 'sim-node-2', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]);
    for (const name of ['default-toleration', 'short', 'forever']) {
      const p = await until(
        () => getPod(name),
        (r) => r.body.status?.phase === 'Running',
        15_000,
      );
      expect(p.body.status.phase).toBe('Running');
    }
    const stop = await srv.json(
      'PATCH',
      '/api/v1/nodes/sim-node-2',
      { metadata: { annotations: { 'sim.svc.io/heartbeat': 'stop' } } },
      MERGE,
    );
    expect(stop.status).toBe(200);

    const dead = await until(
      () => node('sim-node-2'),
      (n) => cond(n, 'Ready')?.status === 'Unknown' && taintKeys(n).length === 2,
      20_000,
    );
    expect(dead.status.conditions.map((c: Any) => [c.type, c.status, c.reason, c.message])).toEqual(
      ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((t) => [
        t,
        'Unknown',
        'NodeStatusUnknown',
        'Kubelet stopped posting node status.',
      ]),
    );
    expect(taintKeys(dead)).toEqual(['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
    expect(dead.spec.taints.find((t: Any) => t.effect === 'NoExecute').timeAdded).toBeString();
    expect(srv.kubectl(['get', 'node', 'sim-node-2']).stdout).toContain('NotReady');
    // The other nodes are untouched.
    expect(cond(await node('sim-node-1'), 'Ready')?.status).toBe('True');

    // Evicted (Terminating: the node's kubelet is silent, so nothing confirms the deletion).
    const evicted = async (name: string) => (await getPod(name)).body;
    const short = await until(
      () => evicted('short'),
      (p) => !!p.metadata?.deletionTimestamp,
      10_000,
    );
    expect(short.metadata.deletionTimestamp).toBeString();
    expect(cond(short, 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'DeletionByTaintManager' });
    const dflt = await until(
      () => evicted('default-toleration'),
      (p) => !!p.metadata?.deletionTimestamp,
      15_000,
    );
    expect(dflt.metadata.deletionTimestamp).toBeString();
    const forever = await until(
      () => evicted('forever'),
      (p) => cond(p, 'Ready')?.status === 'False',
      10_000,
    );
    expect(forever.metadata.deletionTimestamp).toBeUndefined();
    // MarkPodsNotReady: the lost node's pods are not ready.
    expect(cond(forever, 'Ready')?.status).toBe('False');
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    expect(events.some((e) => e.reason === 'TaintManagerEviction' && e.involvedObject.name === 'short')).toBe(true);

    // Resumed: Ready, taints gone, and the kubelet completes the pending deletions.
    const resume = await srv.json(
      'PATCH',
      '/api/v1/nodes/sim-node-2',
      { metadata: { annotations: { 'sim.svc.io/heartbeat': null } } },
      MERGE,
    );
    expect(resume.status).toBe(200);
    const back = await until(
      () => node('sim-node-2'),
      (n) => cond(n, 'Ready')?.status === 'True' && taintKeys(n).length === 0,
      20_000,
    );
    expect(cond(back, 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(taintKeys(back)).toEqual([]);
    for (const name of ['short', 'default-toleration']) {
      const s = await until(
        async () => (await getPod(name)).status,
        (x) => x === 404,
        40_000,
      );
      expect(s).toBe(404);
    }
    // Its kubelet writes its own status again: Ready.
    const again = await until(
      async () => (await getPod('forever')).body,
      (p) => cond(p, 'Ready')?.status === 'True',
      15_000,
    );
    expect([again.status.phase, cond(again, 'Ready')?.status]).toEqual(['Running', 'True']);
  }, 120_000);

  test('a node that never posts status goes Unknown (NodeStatusNeverUpdated) after the startup grace period', async () => {
    const r = await srv.json('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'silent' } }, JSON_CT);
    expect(r.status).toBe(201);
    const n = await until(
      () => node('silent'),
      (x) => cond(x, 'Ready')?.status === 'Unknown' && taintKeys(x).length === 2,
      20_000,
    );
    expect(cond(n, 'Ready')).toMatchObject({ reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
    expect(taintKeys(n)).toEqual(['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
  }, 30_000);
});
