import { expect, test } from 'bun:test';
import { cluster, nodeObj, pod, podObj, requests } from './fixtures.test-helpers';
import { ClusterCache, podInfo } from './node-info';

const web = (name: string, cpu = '500m') =>
  pod(name, {
    ...requests({ cpu, memory: '1Gi' }),
    containers: [
      { name: 'c', image: 'i', resources: { requests: { cpu, memory: '1Gi' } }, ports: [{ containerPort: 80, hostPort: 8080 }] },
    ],
  });

test('bound pods add to their node: requests, non-zero requests, pod count, host ports; removal takes them back', () => {
  const c = cluster([['n', {}]]);
  const n = c.nodes.get('n');
  c.addPod({ ...web('a'), nodeName: 'n' });
  c.addPod({ ...web('b', '1'), nodeName: 'n' });
  expect(n?.requested.milliCPU).toBe(1500);
  expect(n?.requested.memory).toBe(2 * 1024 ** 3);
  expect(n?.pods.size).toBe(2);
  expect(n?.usedPorts.get('TCP/8080')?.get('0.0.0.0')).toBe(2);
  // A newer version of a pod replaces the old one (not counted twice).
  c.addPod({ ...web('a', '200m'), key: 'default/a', nodeName: 'n' });
  expect(n?.requested.milliCPU).toBe(1200);
  c.removePod('default/a');
  c.removePod('default/b');
  expect(n?.requested).toMatchObject({ milliCPU: 0, memory: 0 });
  expect(n?.pods.size).toBe(0);
  expect(n?.usedPorts.size).toBe(0);
});

test('assumed pods count at once; the bound version replaces them; a failed bind forgets them', () => {
  const c = cluster([['n', { cpu: '1' }]]);
  const p = web('a');
  c.assume(p, 'n');
  expect(c.isAssumed(p.key)).toBe(true);
  expect(c.nodes.get('n')?.requested.milliCPU).toBe(500);
  c.addPod({ ...p, nodeName: 'n' });
  expect(c.isAssumed(p.key)).toBe(false);
  expect(c.nodes.get('n')?.requested.milliCPU).toBe(500);
  const q = web('b');
  c.assume(q, 'n');
  c.removePod(q.key);
  expect(c.nodes.get('n')?.requested.milliCPU).toBe(500);
});

test('nodes: order for round robin, changes detected, pods of a node seen before the node', () => {
  const c = new ClusterCache();
  c.addPod({ ...web('early'), nodeName: 'later' });
  expect(c.order).toEqual([]);
  expect(c.setNode(nodeObj('later'))).toBe(true);
  expect(c.setNode(nodeObj('other'))).toBe(true);
  expect(c.order).toEqual(['later', 'other']);
  expect(c.nodes.get('later')?.pods.size).toBe(1);
  // The same node again: nothing changed for scheduling; a new label did.
  expect(c.setNode(nodeObj('later'))).toBe(false);
  expect(c.setNode(nodeObj('later', { labels: { disk: 'ssd' } }))).toBe(true);
  c.removeNode('later');
  expect(c.order).toEqual(['other']);
  // Its pod is still known (it goes with its own DELETED event).
  expect(c.hasPod('default/early')).toBe(true);
});

test('nominated pods by node', () => {
  const c = new ClusterCache();
  const p = web('p');
  c.nominate(p, 'n1');
  expect([...c.nominatedTo('n1')].map((x) => x.name)).toEqual(['p']);
  c.nominate(p, 'n2');
  expect([...c.nominatedTo('n1')]).toEqual([]);
  c.nominate(p, '');
  expect([...c.nominatedTo('n2')]).toEqual([]);
});

test('pods with pod affinity of any kind are indexed (InterPodAffinity score); the controlling owner is parsed', () => {
  const c = cluster([['n', {}]]);
  const soft = pod('soft', { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } } });
  const nodeOnly = pod('node-only', { affinity: { nodeAffinity: {} } });
  c.addPod({ ...soft, nodeName: 'n' });
  c.addPod({ ...nodeOnly, nodeName: 'n' });
  expect([...c.affinityPods].map((p) => p.name)).toEqual(['soft']);
  c.removePod(soft.key);
  expect(c.affinityPods.size).toBe(0);
  const owned = pod(
    'o',
    {},
    {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Service', name: 'not-controller', uid: '1' },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '2', controller: true },
      ],
    },
  );
  expect(owned.controller).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' });
  expect(nodeOnly.controller).toBeUndefined();
});

test('countMatching counts a node pods once per change of them, again after a pod comes, changes or goes', () => {
  const c = cluster([['n', {}]]);
  const n = c.nodes.get('n');
  if (!n) throw new Error('no node');
  let calls = 0;
  const isWeb = (q: { labels: Record<string, string>; deleting: boolean }) => {
    calls++;
    return q.labels.app === 'web' && !q.deleting;
  };
  c.addPod({ ...pod('a', {}, { labels: { app: 'web' } }), nodeName: 'n' });
  c.addPod({ ...pod('b', {}, { labels: { app: 'db' } }), nodeName: 'n' });
  expect(n.countMatching('app=web', 'default', isWeb)).toBe(1);
  expect(calls).toBe(2);
  expect(n.countMatching('app=web', 'default', isWeb)).toBe(1);
  expect(calls).toBe(2);
  expect(n.countMatching('app=web', 'other', isWeb)).toBe(0);
  c.addPod({ ...pod('c', {}, { labels: { app: 'web' } }), nodeName: 'n' });
  expect(n.countMatching('app=web', 'default', isWeb)).toBe(2);
  c.addPod({ ...pod('c', {}, { labels: { app: 'web' } }), nodeName: 'n', deleting: true });
  expect(n.countMatching('app=web', 'default', isWeb)).toBe(1);
  c.removePod('default/a');
  expect(n.countMatching('app=web', 'default', isWeb)).toBe(0);
});

test('pods alike share their PodInfo parts, copied from the pod: tolerations, requests, controller, empty labels and ports', () => {
  const tolerations = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ];
  const owner = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] };
  const spec = () => ({
    tolerations: structuredClone(tolerations),
    containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '250m', memory: '64Mi' } } }],
  });
  const a = podObj('a', spec(), owner);
  const b = podObj('b', spec(), structuredClone(owner));
  const pa = podInfo(a);
  const pb = podInfo(b);
  expect(pa.tolerations).toBe(pb.tolerations);
  expect(pa.tolerations).toEqual(tolerations);
  expect(pa.requests).toBe(pb.requests);
  expect(pa.requests).toMatchObject({ milliCPU: 250, memory: 64 * 1024 ** 2 });
  expect(pa.nonZero).toBe(pb.nonZero);
  expect(pa.controller).toBe(pb.controller);
  expect(pa.controller).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' });
  expect(pa.labels).toBe(pb.labels);
  expect(pa.ports).toBe(pb.ports);
  // The shared parts are copies: changing a pod object afterwards does not reach them.
  ((a.spec as { tolerations: { tolerationSeconds: number }[] }).tolerations[0] as { tolerationSeconds: number }).tolerationSeconds = 1;
  expect((pb.tolerations[0] as { tolerationSeconds?: number }).tolerationSeconds).toBe(300);
  // Pods that differ do not share.
  const c = podInfo(podObj('c', { ...spec(), tolerations: [{ key: 'x', operator: 'Exists' }] }));
  expect(c.tolerations).not.toBe(pa.tolerations);
  expect(c.tolerations).toEqual([{ key: 'x', operator: 'Exists' }]);
  expect(podInfo(podObj('d', { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 80 }] }] })).ports).toEqual([
    { protocol: 'TCP', hostIP: '0.0.0.0', port: 80 },
  ]);
});

test('spread counts kept per selector equal a fresh count after binds, assumes, relabels, deletions, removals and zone changes', () => {
  const zone = (z: string) => ({ labels: { 'topology.kubernetes.io/zone': z } });
  const c = cluster([
    ['n1', zone('a')],
    ['n2', zone('a')],
    ['n3', zone('b')],
  ]);
  const labelled = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}) =>
    pod(name, {}, { labels, ...extra });
  const matches = (q: { labels: Record<string, string>; deleting: boolean; namespace: string }) =>
    q.namespace === 'default' && !q.deleting && q.labels.app === 'web' && q.labels.tier !== 'db';
  const fresh = () => {
    const m = new Map<string, number>();
    for (const q of c.podsLabelled('default', 'app', 'web')) if (matches(q)) m.set(q.nodeName, (m.get(q.nodeName) ?? 0) + 1);
    return m;
  };
  const freshZones = () => {
    const z = new Map<string, number>();
    for (const [name, k] of fresh()) {
      const n = c.nodes.get(name);
      if (!n?.present) continue;
      const v = n.labels['topology.kubernetes.io/zone'] ?? '';
      z.set(v, (z.get(v) ?? 0) + k);
    }
    return z;
  };
  const same = () => {
    expect(new Map(kept.perNode)).toEqual(fresh());
    expect(new Map(kept.perZone())).toEqual(freshZones());
  };
  c.addPod({ ...labelled('a', { app: 'web' }), nodeName: 'n1' });
  c.addPod({ ...labelled('b', { app: 'web', tier: 'db' }), nodeName: 'n1' });
  const kept = c.spreadCounts('default', 'k', matches, c.podsLabelled('default', 'app', 'web'));
  same();
  expect(kept.perNode.get('n1')).toBe(1);
  // Later changes reach the kept counts: a bind, an assume and its bind, a relabel out of the
  // selection, a deletion starting, a removal, a pod of another namespace.
  c.addPod({ ...labelled('c', { app: 'web' }), nodeName: 'n2' });
  const d = labelled('d', { app: 'web' });
  c.assume(d, 'n3');
  same();
  expect(kept.perZone().get('a')).toBe(2);
  c.addPod({ ...d, nodeName: 'n3' });
  c.addPod({ ...labelled('a', { app: 'api' }), key: 'default/a', nodeName: 'n1' });
  same();
  // A node moved to another zone, and one removed: the zone counts are made again.
  c.setNode(nodeObj('n3', zone('c')));
  same();
  expect(kept.perZone().get('c')).toBe(1);
  c.removeNode('n2');
  same();
  expect(kept.perZone().get('a')).toBeUndefined();
  const deleting = labelled('c', { app: 'web' }, { deletionTimestamp: '2026-01-01T00:00:01Z' });
  expect(deleting.deleting).toBe(true);
  c.addPod({ ...deleting, nodeName: 'n2' });
  c.removePod('default/d');
  c.addPod({ ...labelled('e', { app: 'web' }, { namespace: 'other' }), nodeName: 'n1' });
  same();
  expect(kept.perNode.size).toBe(0);
  c.addPod({ ...labelled('f', { app: 'web' }), nodeName: 'n1' });
  // The same selector text answers the same counts, now without the seed.
  expect(c.spreadCounts('default', 'k', matches, []).perNode).toBe(kept.perNode);
  expect(new Map(kept.perNode)).toEqual(new Map([['n1', 1]]));
  same();
});

test('spread counts are kept for the 64 most recently used selectors only', () => {
  const c = cluster([['n1', {}]]);
  c.addPod({ ...pod('a', {}, { labels: { app: 'web' } }), nodeName: 'n1' });
  const all = () => c.podsLabelled('default', 'app', 'web');
  const first = c.spreadCounts('default', 's0', () => true, all()).perNode;
  for (let i = 1; i <= 64; i++) c.spreadCounts('default', `s${i}`, () => true, all());
  // s0 was the least recently used: it is counted again from the seed (a new map).
  expect(c.spreadCounts('default', 's0', () => true, all()).perNode).not.toBe(first);
  const again = c.spreadCounts('default', 's0', () => true, []);
  expect(again.perNode.get('n1')).toBe(1);
  expect(again.perZone().get('')).toBe(1);
});
