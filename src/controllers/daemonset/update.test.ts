import { expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { daemonProbe, shouldRunOn } from './placement';
import { daemonStatus, fenceposts, type NodeView, planManage, planRollingUpdate } from './update';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function ds(rollingUpdate: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): Obj {
  return {
    metadata: { name: 'd', namespace: 'n', uid: 'u', generation: 2, annotations: { 'deprecated.daemonset.template.generation': '2' } },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
    },
  } as Obj;
}

let n = 0;
function pod(node: string, hash: string, readySince?: number, extra: Partial<Obj['metadata']> = {}): Obj {
  n++;
  return {
    metadata: {
      name: `p${n}`,
      namespace: 'n',
      uid: `p${n}`,
      creationTimestamp: at(n),
      labels: { 'controller-revision-hash': hash },
      ...extra,
    },
    spec: { nodeName: node },
    status: {
      phase: 'Running',
      conditions: readySince === undefined ? [] : [{ type: 'Ready', status: 'True', lastTransitionTime: at(readySince) }],
    },
  } as Obj;
}

const views = (...names: string[]): NodeView[] => names.map((name) => ({ name, shouldRun: true, shouldContinueRunning: true }));
const byNode = (pods: Obj[]) => {
  const m = new Map<string, Obj[]>();
  for (const p of pods) m.set((p.spec as { nodeName: string }).nodeName, [...(m.get((p.spec as { nodeName: string }).nodeName) ?? []), p]);
  return m;
};

test('fenceposts: percentages round up; 0/0 makes maxUnavailable 1', () => {
  expect(fenceposts(ds({ maxUnavailable: '10%' }), 5)).toEqual({ surge: 0, unavailable: 1 });
  expect(fenceposts(ds({ maxUnavailable: '30%', maxSurge: '30%' }), 5)).toEqual({ surge: 2, unavailable: 2 });
  expect(fenceposts(ds({ maxUnavailable: 0, maxSurge: 0 }), 5)).toEqual({ surge: 0, unavailable: 1 });
});

test('manage: create on nodes without a pod, delete duplicates (oldest kept), failed pods and pods of unknown nodes', () => {
  const a1 = pod('a', 'h', 0);
  const a2 = pod('a', 'h', 0);
  const failed = pod('b', 'h');
  (failed.status as { phase: string }).phase = 'Failed';
  const gone = pod('x', 'h', 0);
  const plan = planManage(ds(), views('a', 'b', 'c'), byNode([a1, a2, failed, gone]), 'h');
  expect(plan.create.sort()).toEqual(['b', 'c']);
  expect(plan.delete.map((p) => p.metadata.name).sort()).toEqual([a2, failed, gone].map((p) => p.metadata.name as string).sort());
  expect(plan.failed).toEqual([failed]);
});

test('manage: a node no longer eligible loses its pod', () => {
  const p = pod('a', 'h', 0);
  const plan = planManage(ds(), [{ name: 'a', shouldRun: false, shouldContinueRunning: false }], byNode([p]), 'h');
  expect(plan).toEqual({ create: [], delete: [p], failed: [] });
});

test('rolling update without surge: unavailable old pods go at once, available ones within maxUnavailable', () => {
  const now = T0 + 100_000;
  const oldA = pod('a', 'old', 0);
  const oldB = pod('b', 'old', 0);
  const oldC = pod('c', 'old');
  const plan = planRollingUpdate(ds({ maxUnavailable: 1 }), views('a', 'b', 'c'), byNode([oldA, oldB, oldC]), 'new', now);
  expect(plan.delete.map((p) => p.metadata.name)).toEqual([oldC.metadata.name, oldA.metadata.name]);
  const newA = pod('a', 'new');
  const waiting = planRollingUpdate(ds({ maxUnavailable: 1 }), views('a', 'b'), byNode([newA, oldB]), 'new', now);
  expect(waiting.delete).toEqual([]);
});

test('rolling update with surge: new pods next to old ones, old deleted once the new one is available', () => {
  const now = T0 + 100_000;
  const oldA = pod('a', 'old', 0);
  const oldB = pod('b', 'old', 0);
  const plan = planRollingUpdate(ds({ maxSurge: 1, maxUnavailable: 0 }), views('a', 'b'), byNode([oldA, oldB]), 'new', now);
  expect(plan.create).toHaveLength(1);
  const newA = pod('a', 'new', 1);
  const next = planRollingUpdate(ds({ maxSurge: 1, maxUnavailable: 0 }), views('a', 'b'), byNode([oldA, newA, oldB]), 'new', now);
  expect(next.delete).toEqual([oldA]);
  expect(next.create).toEqual(['b']);
});

test('status: the oldest pod of each node counts; misscheduled pods', () => {
  const now = T0 + 100_000;
  const nodes = [...views('a', 'b'), { name: 'c', shouldRun: false, shouldContinueRunning: true }];
  const s = daemonStatus(ds(), nodes, byNode([pod('a', 'h', 0), pod('c', 'h', 0)]), 'h', now);
  expect(s).toMatchObject({
    desiredNumberScheduled: 2,
    currentNumberScheduled: 1,
    numberMisscheduled: 1,
    numberReady: 1,
    numberAvailable: 1,
    numberUnavailable: 1,
    updatedNumberScheduled: 1,
  });
});

test('placement: nodeSelector, untolerated NoSchedule and NoExecute taints; daemon tolerations', () => {
  const node = (labels: Record<string, string>, taints: unknown[] = []) => ({ metadata: { name: 'a', labels }, spec: { taints } }) as Obj;
  expect(shouldRunOn(daemonProbe(ds({}, { nodeSelector: { disk: 'ssd' } })), node({ disk: 'hdd' }))).toEqual({
    shouldRun: false,
    shouldContinueRunning: false,
  });
  expect(shouldRunOn(daemonProbe(ds()), node({}, [{ key: 'k', value: 'v', effect: 'NoSchedule' }]))).toEqual({
    shouldRun: false,
    shouldContinueRunning: true,
  });
  expect(shouldRunOn(daemonProbe(ds()), node({}, [{ key: 'k', effect: 'NoExecute' }]))).toEqual({
    shouldRun: false,
    shouldContinueRunning: false,
  });
  expect(shouldRunOn(daemonProbe(ds()), node({}, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }])).shouldRun).toBe(
    true,
  );
  const tolerant = ds({}, { tolerations: [{ key: 'k', operator: 'Exists' }] });
  expect(shouldRunOn(daemonProbe(tolerant), node({}, [{ key: 'k', value: 'v', effect: 'NoExecute' }])).shouldRun).toBe(true);
});
