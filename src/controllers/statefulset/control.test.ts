import { expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { type Revisions, type SetOps, updateStatefulSet } from './control';
import { claimOwnerRefs, newPod, podClaims } from './identity';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function sts(spec: Record<string, unknown> = {}): Obj {
  return {
    metadata: { name: 'web', namespace: 'n', uid: 'set', generation: 1 },
    spec: {
      replicas: 3,
      serviceName: 'svc',
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }],
      ...spec,
    },
  } as Obj;
}

const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } }) as Obj;
const REVS: Revisions = { current: { name: 'web-old', template: template('old') }, update: { name: 'web-new', template: template('new') } };

function running(set: Obj, ord: number, rev: string, ready = true): Obj {
  const p = newPod(set, template(rev === 'web-new' ? 'new' : 'old'), ord, rev);
  p.metadata.uid = `u${ord}`;
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(T0).toISOString() }],
  };
  return p;
}

function fakeOps(): SetOps & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    now: () => T0 + 60_000,
    createPod: async (_s, p) => {
      log.push(`create ${p.metadata.name} ${p.metadata.labels?.['controller-revision-hash']}`);
      return true;
    },
    deletePod: async (_s, p) => void log.push(`delete ${p.metadata.name}`),
    updatePod: async (_s, p) => void log.push(`update ${p.metadata.name}`),
    syncClaims: async () => {},
  };
}

test('OrderedReady: one pod at a time, waiting for the previous to be ready', async () => {
  const set = sts();
  let ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, []);
  expect(ops.log).toEqual(['create web-0 web-new']);
  ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, [running(set, 0, 'web-new', false)]);
  expect(ops.log).toEqual([]);
  ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, [running(set, 0, 'web-new')]);
  expect(ops.log).toEqual(['create web-1 web-new']);
});

test('Parallel with ordinals.start: every missing pod at once', async () => {
  const set = sts({ podManagementPolicy: 'Parallel', ordinals: { start: 3 } });
  const ops = fakeOps();
  const status = await updateStatefulSet(ops, set, REVS, []);
  expect(ops.log).toEqual(['create web-3 web-new', 'create web-4 web-new', 'create web-5 web-new']);
  expect(status.replicas).toBe(3);
});

test('scale down from the highest ordinal, one at a time', async () => {
  const set = sts({ replicas: 1 });
  const ops = fakeOps();
  await updateStatefulSet(
    ops,
    set,
    REVS,
    [0, 1, 2].map((i) => running(set, i, 'web-new')),
  );
  expect(ops.log).toEqual(['delete web-2']);
});

test('rolling update: highest ordinal first, stopping at the partition; pods below it keep the current revision', async () => {
  const set = sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
  let ops = fakeOps();
  await updateStatefulSet(
    ops,
    set,
    REVS,
    [0, 1, 2].map((i) => running(set, i, 'web-old')),
  );
  expect(ops.log).toEqual(['delete web-2']);
  ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, [running(set, 0, 'web-old'), running(set, 1, 'web-old'), running(set, 2, 'web-new')]);
  expect(ops.log).toEqual(['delete web-1']);
  ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, [running(set, 0, 'web-new'), running(set, 1, 'web-new'), running(set, 2, 'web-new')]);
  expect(ops.log).toEqual([]);
  ops = fakeOps();
  await updateStatefulSet(ops, set, REVS, [running(set, 1, 'web-new'), running(set, 2, 'web-new')]);
  expect(ops.log).toEqual(['create web-0 web-old']);
});

test('maxUnavailable: several old pods deleted at once, unavailable ones counted', async () => {
  const set = sts({
    podManagementPolicy: 'Parallel',
    replicas: 4,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
  });
  let ops = fakeOps();
  await updateStatefulSet(
    ops,
    set,
    REVS,
    [0, 1, 2, 3].map((i) => running(set, i, 'web-old')),
  );
  expect(ops.log).toEqual(['delete web-3', 'delete web-2']);
  ops = fakeOps();
  const pods = [running(set, 0, 'web-old'), running(set, 1, 'web-old'), running(set, 2, 'web-new', false), running(set, 3, 'web-new')];
  await updateStatefulSet(ops, set, REVS, pods);
  expect(ops.log).toEqual(['delete web-1']);
});

test('claims: names, labels, and owners under the retention policy', () => {
  const set = sts({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' }, replicas: 1 });
  const c = podClaims(set, 0).get('data') as Obj;
  expect(c.metadata).toMatchObject({ name: 'data-web-0', namespace: 'n', labels: { app: 'web' } });
  expect(claimOwnerRefs(set, undefined, 0, c)).toEqual([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set' }]);
  const pod = { metadata: { name: 'web-1', uid: 'p1' } } as Obj;
  const scaled = {
    metadata: { name: 'data-web-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'set' }] },
  } as Obj;
  expect(claimOwnerRefs(set, pod, 1, scaled)).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'web-1', uid: 'p1' }]);
  const retain = sts();
  expect(claimOwnerRefs(retain, pod, 1, scaled)).toEqual([]);
  expect(claimOwnerRefs(retain, undefined, 0, podClaims(retain, 0).get('data') as Obj)).toBeUndefined();
});
