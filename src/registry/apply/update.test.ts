import { describe, expect, test } from 'bun:test';
import { SchemaSet } from '../../schema/engine';
import generated from '../../schema/generated/definitions.json';
import { overlays } from '../../schema/overlays';
import type { Definitions } from '../../schema/types';
import { FieldSet, fieldPE, recordUpdate, recordUpdateSlow } from './index';
import { sameShape, shapeOf, shapeTree } from './shape';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const POD = 'io.svc.api.core.v1.Pod';
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';
const at = (i: number) => `2024-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;

const pod = (): Any => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u1', controller: true }],
  },
  spec: {
    nodeName: 'node-1',
    containers: [
      { name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { requests: { cpu: '100m' } } },
      { name: 'sidecar', image: 'envoy:1.30' },
    ],
  },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: at(1) }] },
});

const running = (ready: boolean): Any => ({
  phase: 'Running',
  conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
    type,
    status: ready || (type !== 'Ready' && type !== 'ContainersReady') ? 'True' : 'False',
    lastTransitionTime: at(2),
  })),
  podIP: '10.0.0.7',
  podIPs: [{ ip: '10.0.0.7' }],
  hostIP: '172.18.0.2',
  containerStatuses: ['sidecar', 'web'].map((name) => ({
    name,
    ready,
    restartCount: 0,
    image: 'x',
    imageID: 'y',
    state: { running: { startedAt: at(2) } },
  })),
});

/**
 * The write through recordUpdate (its cheaper routes) and through recordUpdateSlow from the same
 * old object: the lists must be the same byte for byte. Answers recordUpdate's result.
 */
function both(old: Any, change: (o: Any) => void, opts: Record<string, unknown>): Any {
  const viaRoutes: Any = structuredClone(old);
  change(viaRoutes);
  const slow: Any = structuredClone(viaRoutes);
  const o = { apiVersion: 'v1', schemas, defName: POD, ...opts } as never;
  recordUpdate(old, viaRoutes, o);
  recordUpdateSlow(old, slow, o);
  expect(JSON.stringify(viaRoutes.metadata.managedFields)).toBe(JSON.stringify(slow.metadata.managedFields));
  return viaRoutes;
}

const entry = (o: Any, manager: string) => (o.metadata.managedFields as Any[]).find((e) => e.manager === manager);

describe('recordUpdate: entries a write does not reach keep their FieldsV1 trees', () => {
  test("a kubelet's status write: the creator's tree is kept as it is, the kubelet's entry is new", () => {
    // Created without status, then bound (the binding records no ownership), as a Deployment's pod.
    const created = pod();
    delete created.status;
    recordUpdate(undefined, created, { apiVersion: 'v1', schemas, defName: POD, manager: 'kube-controller-manager', now: at(0) });
    created.status = pod().status;
    const kubelet = both(created, (o) => (o.status = running(false)), {
      manager: 'kubelet',
      subresource: 'status',
      now: at(3),
      ignoredFields: FieldSet.of([fieldPE('spec')]),
    });
    // The same object, not a copy: the creator's entry was not decoded and encoded again.
    expect(entry(kubelet, 'kube-controller-manager').fieldsV1).toBe(entry(created, 'kube-controller-manager').fieldsV1);
    expect(entry(kubelet, 'kubelet').time).toBe(at(3));
    expect(Object.keys(entry(kubelet, 'kubelet').fieldsV1['f:status'])).toContain('f:podIPs');
    // Ready flips: the kubelet's own fields (the scalar route), then a new container status key.
    const ready = both(kubelet, (o) => (o.status = running(true)), { manager: 'kubelet', subresource: 'status', now: at(4) });
    // Only fields the kubelet owns changed: its tree is kept as it is (not decoded, not made
    // again), with the write's time.
    expect(entry(ready, 'kubelet').fieldsV1).toBe(entry(kubelet, 'kubelet').fieldsV1);
    expect(entry(ready, 'kubelet').time).toBe(at(4));
    both(ready, (o) => (o.status.containerStatuses[0].lastState = { terminated: { exitCode: 0 } }), {
      manager: 'kubelet',
      subresource: 'status',
      now: at(5),
    });
  });

  test('a write that takes fields from another manager or removes them: that entry is decoded and changed', () => {
    const created = pod();
    recordUpdate(undefined, created, { apiVersion: 'v1', schemas, defName: POD, manager: 'creator', now: at(0) });
    const labelled = both(created, (o) => (o.metadata.labels.tier = 'front'), { manager: 'labeller', now: at(1) });
    // The labeller's own label again: its tree is kept; a label of its own added: made again.
    const again = both(labelled, (o) => (o.metadata.labels.tier = 'back'), { manager: 'labeller', now: at(2) });
    expect(entry(again, 'labeller').fieldsV1).toBe(entry(labelled, 'labeller').fieldsV1);
    const more = both(again, (o) => (o.metadata.labels.zone = 'a'), { manager: 'labeller', now: at(2) });
    expect(entry(more, 'labeller').fieldsV1).not.toBe(entry(again, 'labeller').fieldsV1);
    expect(JSON.stringify(entry(more, 'labeller').fieldsV1)).toContain('f:zone');
    // Another manager changes a label the creator set: it leaves the creator's entry.
    const taken = both(labelled, (o) => (o.metadata.labels.app = 'web2'), { manager: 'labeller', now: at(2) });
    expect(JSON.stringify(entry(taken, 'creator').fieldsV1)).not.toContain('f:app');
    expect(JSON.stringify(entry(taken, 'labeller').fieldsV1)).toContain('f:app');
    // A removed label leaves every entry that had it; the writer's entry keeps its time.
    const removed = both(taken, (o) => delete o.metadata.labels.tier, { manager: 'cleaner', now: at(3) });
    expect(JSON.stringify(removed.metadata.managedFields)).not.toContain('f:tier');
    expect(entry(removed, 'cleaner')).toBeUndefined();
    // Everything a manager owned taken: its entry goes.
    const gone = both(removed, (o) => (o.metadata.labels.app = 'web3'), { manager: 'creator', now: at(4) });
    expect(entry(gone, 'labeller')).toBeUndefined();
    // A status change on the main resource is ignored there.
    both(gone, (o) => (o.status.phase = 'Failed'), { manager: 'x', now: at(5), ignoredFields: FieldSet.of([fieldPE('status')]) });
  });

  test('nothing changed, a request editing managedFields, the cap of Update entries: same answer as the general path', () => {
    const created = pod();
    recordUpdate(undefined, created, { apiVersion: 'v1', schemas, defName: POD, manager: 'creator', now: at(0) });
    both(created, () => {}, { manager: 'creator', now: at(1) });
    both(created, (o) => (o.metadata.managedFields = [{}]), { manager: 'resetter', now: at(1) });
    both(created, (o) => (o.metadata.managedFields[0].manager = 'renamed'), { manager: 'editor', now: at(1) });
    let o = created;
    for (let i = 0; i < 12; i++) o = both(o, (p) => (p.metadata.labels[`l${i}`] = 'v'), { manager: `m${i}`, now: at(10 + i) });
    expect(o.metadata.managedFields.map((e: Any) => e.manager)).toContain('ancient-changes');
  });

  test('random writes by four managers on a Deployment agree with the general path at every step', () => {
    let seed = 20261127;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    let o: Any = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'n', labels: { a: '1' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { a: '1' } },
        template: { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    const base = { apiVersion: 'apps/v1', schemas, defName: DEPLOYMENT };
    recordUpdate(undefined, o, { ...base, manager: 'creator', now: at(0) });
    const edits: ((p: Any) => void)[] = [
      (p) => (p.metadata.labels[pick(['a', 'b', 'c'])] = String(Math.floor(random() * 3))),
      (p) => delete p.metadata.labels[pick(['a', 'b', 'c'])],
      (p) => (p.spec.replicas = Math.floor(random() * 4)),
      (p) => (p.spec.template.spec.containers[0].image = pick(['i', 'j'])),
      (p) => {
        const cs = p.spec.template.spec.containers;
        if (cs.length > 1) cs.pop();
        else cs.push({ name: 'side', image: 'k' });
      },
      (p) => (p.status = { replicas: Math.floor(random() * 3), observedGeneration: 1 }),
      (p) => delete p.status,
    ];
    let subresourceWrites = 0;
    for (let i = 1; i <= 300; i++) {
      const status = random() < 0.3;
      subresourceWrites += status ? 1 : 0;
      const opts = {
        ...base,
        manager: pick(['creator', 'scaler', 'labeller', 'controller']),
        now: at(i),
        ...(status
          ? { subresource: 'status', ignoredFields: FieldSet.of([fieldPE('spec')]) }
          : { ignoredFields: FieldSet.of([fieldPE('status')]) }),
      };
      const edit = pick(edits);
      const viaRoutes: Any = structuredClone(o);
      edit(viaRoutes);
      const slow: Any = structuredClone(viaRoutes);
      recordUpdate(o, viaRoutes, opts as never);
      recordUpdateSlow(o, slow, opts as never);
      expect({ step: i, mf: JSON.stringify(viaRoutes.metadata.managedFields) }).toEqual({
        step: i,
        mf: JSON.stringify(slow.metadata.managedFields),
      });
      o = slow;
    }
    expect(subresourceWrites).toBeGreaterThan(50);
  });
});

describe('recordUpdate on a create: the last create of the definition is reused only for the same shape and writer', () => {
  const create = (o: Any, manager: string, now = at(3), ignoredFields?: FieldSet): Any => {
    recordUpdate(undefined, o, { apiVersion: 'v1', schemas, defName: POD, now, manager, ignoredFields });
    return o.metadata.managedFields;
  };
  const slow = (o: Any, manager: string, now = at(3), ignoredFields?: FieldSet): Any => {
    recordUpdateSlow(undefined, o, { apiVersion: 'v1', schemas, defName: POD, now, manager, ignoredFields });
    return o.metadata.managedFields;
  };

  test('alternating shapes, managers, times and ignored fields each get what the general path gives', () => {
    const status = FieldSet.of([fieldPE('status')]);
    const variants: [string, (o: Any) => void][] = [
      ['as is', () => {}],
      ['a label more', (o) => (o.metadata.labels.tier = 'front')],
      ['keys in another order', (o) => (o.metadata = { namespace: o.metadata.namespace, ...o.metadata })],
      ['a container image changed', (o) => (o.spec.containers[0].image = 'nginx:1.28')],
      ['a null value', (o) => (o.spec.nodeName = null)],
      ['an empty map', (o) => (o.metadata.labels = {})],
      ['no status', (o) => delete o.status],
    ];
    let i = 0;
    for (const manager of ['kubectl-create', 'kube-controller-manager'])
      for (const ignored of [undefined, status])
        for (const [what, change] of variants)
          for (let twice = 0; twice < 2; twice++) {
            const a = pod();
            const b = pod();
            change(a);
            change(b);
            const now = at(10 + i++);
            expect([what, create(a, manager, now, ignored)]).toEqual([what, slow(b, manager, now, ignored)]);
          }
  });

  test('a manager differing from the last create of the same shape is recorded as itself', () => {
    expect(create(pod(), 'first')[0].manager).toBe('first');
    expect(create(pod(), 'second')[0].manager).toBe('second');
    expect(create(pod(), 'second')[0].manager).toBe('second');
  });
});

test('sameShape(v, shapeTree(w)) holds exactly when shapeOf(v) is shapeOf(w)', () => {
  const values: unknown[] = [
    null,
    undefined,
    1,
    'a',
    true,
    {},
    [],
    [1],
    ['1'],
    [{ a: 1 }],
    { a: 1 },
    { a: 'x' },
    { a: null },
    { a: undefined },
    { a: {} },
    { a: [] },
    { b: 1 },
    { a: 1, b: 1 },
    { b: 1, a: 1 },
    { a: { b: 1 } },
    { a: { b: 1, c: [1, 2] } },
    { a: { b: 1, c: [1, 3] } },
    { a: { b: 1, c: [1, 2] }, d: 1 },
    { '1:a': 1 },
    { '1': { a: 1 } },
  ];
  for (const v of values) for (const w of values) expect([v, w, sameShape(v, shapeTree(w))]).toEqual([v, w, shapeOf(v) === shapeOf(w)]);
});
