/**
 * The pvc/pv protection controller: the in-use rules as functions, and the controller over fake
 * caches and stores (PersistentVolumeClaims and PersistentVolumes are not served in this tree yet).
 */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import {
  claimInUse,
  PV_PROTECTION,
  PVC_PROTECTION,
  protectionAction,
  StorageProtectionController,
  volumeInUse,
} from './storage-protection';

const NOW = '2026-01-01T00:00:00Z';
const claim = (name: string, meta: Partial<Obj['metadata']> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...meta },
});
const pod = (name: string, spec: Record<string, unknown>, status: Record<string, unknown> = { phase: 'Running' }, meta = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...meta },
  spec: { nodeName: 'node-1', ...spec },
  status,
});
const uses = (claimName: string) => ({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] });

describe('in use', () => {
  test('a claim: named by a scheduled pod of its namespace that is not shut down', () => {
    const c = claim('data');
    expect(claimInUse(c, [pod('p', uses('data'))])).toBe(true);
    expect(claimInUse(c, [pod('p', uses('other'))])).toBe(false);
    expect(claimInUse(c, [pod('p', { ...uses('data'), nodeName: undefined })])).toBe(false);
    expect(claimInUse(c, [pod('p', uses('data'), { phase: 'Succeeded' })])).toBe(false);
    expect(claimInUse(c, [pod('p', uses('data'), { phase: 'Running' }, { deletionTimestamp: NOW, deletionGracePeriodSeconds: 0 })])).toBe(
      false,
    );
    expect(claimInUse(c, [pod('p', uses('data'), { phase: 'Running' }, { deletionTimestamp: NOW, deletionGracePeriodSeconds: 30 })])).toBe(
      true,
    );
    expect(claimInUse(c, [{ ...pod('p', uses('data')), metadata: { name: 'p', namespace: 'other' } }])).toBe(false);
  });

  test("a claim of a pod's ephemeral volume: <pod>-<volume>, owned by the pod", () => {
    const p = pod('web', { volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }] });
    const owned = claim('web-scratch', {
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web', controller: true }],
    });
    expect(claimInUse(owned, [p])).toBe(true);
    expect(claimInUse(claim('web-scratch'), [p])).toBe(false);
  });

  test('a volume: while Bound', () => {
    expect(volumeInUse({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, status: { phase: 'Bound' } })).toBe(true);
    expect(volumeInUse({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, status: { phase: 'Released' } })).toBe(false);
  });

  test('actions: add a missing finalizer; remove it from an unused object being deleted', () => {
    expect(protectionAction(claim('a'), PVC_PROTECTION, () => false)).toBe('add');
    expect(protectionAction(claim('a', { finalizers: [PVC_PROTECTION] }), PVC_PROTECTION, () => false)).toBeUndefined();
    expect(protectionAction(claim('a', { finalizers: [PVC_PROTECTION], deletionTimestamp: NOW }), PVC_PROTECTION, () => false)).toBe(
      'remove',
    );
    expect(
      protectionAction(claim('a', { finalizers: [PVC_PROTECTION], deletionTimestamp: NOW }), PVC_PROTECTION, () => true),
    ).toBeUndefined();
    expect(protectionAction(claim('a', { deletionTimestamp: NOW }), PVC_PROTECTION, () => false)).toBeUndefined();
  });
});

/** A watch cache over a fixed list of objects under `prefix` (no events after the start). */
function fakeCache(prefix: string, objs: Obj[]): WatchCache {
  const key = (o: Obj) => `${prefix}${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
  const list = (p = '') => objs.filter((o) => key(o).startsWith(p)).map((obj) => ({ obj }));
  const watcher = { ended: undefined, next: () => new Promise(() => {}) };
  return { start: async () => {}, list, watch: () => ({ watcher, initial: list(), revision: 1 }) } as unknown as WatchCache;
}

/** A store whose updateFrom records the new objects (by name). */
function fakeStore(prefix: string, objs: Obj[], written: Map<string, Obj>): ResourceStore {
  return {
    prefix,
    key: (ns: string, name: string) => `${prefix}${ns ? `${ns}/` : ''}${name}`,
    updateFrom: async (_ns: string, name: string, _sub: string, _w: unknown, f: (cur: Obj) => Obj) => {
      const cur = objs.find((o) => o.metadata.name === name) as Obj;
      const next = f(cur);
      written.set(name, next);
      return next;
    },
  } as unknown as ResourceStore;
}

test('the controller adds missing finalizers and releases claims and volumes nothing uses', async () => {
  const claims = [
    claim('new'),
    claim('unused', { finalizers: [PVC_PROTECTION], deletionTimestamp: NOW }),
    claim('used', { finalizers: [PVC_PROTECTION], deletionTimestamp: NOW }),
  ];
  const volume = (name: string, phase: string, meta = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, finalizers: [PV_PROTECTION, 'example.com/keep'], deletionTimestamp: NOW, ...meta },
    status: { phase },
  });
  const volumes = [
    volume('bound', 'Bound'),
    volume('released', 'Released'),
    { ...volume('fresh', 'Available'), metadata: { name: 'fresh' } },
  ];
  const pods = [pod('user', uses('used'))];
  const written = new Map<string, Obj>();
  const c = new StorageProtectionController(
    fakeStore('/registry/core/persistentvolumeclaims/', claims, written),
    fakeCache('/registry/core/persistentvolumeclaims/', claims),
    fakeStore('/registry/core/persistentvolumes/', volumes, written),
    fakeCache('/registry/core/persistentvolumes/', volumes),
    { cache: fakeCache('/registry/core/pods/', pods), prefix: '/registry/core/pods/' },
  );
  await c.start();
  for (let i = 0; i < 50 && written.size < 4; i++) await Bun.sleep(10);
  c.stop();
  const finalizers = Object.fromEntries([...written].map(([k, o]) => [k, o.metadata.finalizers]));
  expect(finalizers).toEqual({
    new: [PVC_PROTECTION],
    unused: [],
    released: ['example.com/keep'],
    fresh: [PV_PROTECTION],
  });
});
