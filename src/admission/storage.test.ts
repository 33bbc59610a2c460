/**
 * DefaultStorageClass and StorageObjectInUseProtection, as functions: PersistentVolumeClaims and
 * PersistentVolumes are not served in this tree yet, so the plugins run here on hand-made
 * admission attributes, alone and in the chains builder.ts makes (over a fake registry).
 */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import type { Authorizer } from '../auth/authz';
import type { RbacIndex } from '../auth/rbac';
import type { Attributes } from '../registry/admission';
import type { Resources } from '../registry/api-registry';
import type { KindDef } from '../registry/kind';
import type { SchemaSet } from '../schema/engine';
import { Admission } from './builder';
import { DefaultStorageClass, defaultClass, PV_PROTECTION, PVC_PROTECTION, StorageObjectInUseProtection } from './storage';

const DEFAULT = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT = 'storageclass.beta.kubernetes.io/is-default-class';

function sc(name: string, created: string, annotations?: Record<string, string>): Obj {
  return { apiVersion: 'storage.svc.io/v1', kind: 'StorageClass', metadata: { name, creationTimestamp: created, annotations } };
}

function attrs(resource: string, object: Obj, operation: Attributes['operation'] = 'CREATE'): Attributes {
  return {
    operation,
    group: '',
    version: 'v1',
    kind: resource === 'persistentvolumes' ? 'PersistentVolume' : 'PersistentVolumeClaim',
    resource,
    subresource: '',
    namespace: resource === 'persistentvolumes' ? '' : 'default',
    name: object.metadata.name ?? '',
    object,
    dryRun: false,
  };
}

const claim = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'default', annotations },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

describe('DefaultStorageClass', () => {
  test('handles only the creation of claims', () => {
    const p = new DefaultStorageClass(() => []);
    expect(p.handles('', 'persistentvolumeclaims', '', 'CREATE')).toBe(true);
    expect(p.handles('', 'persistentvolumeclaims', '', 'UPDATE')).toBe(false);
    expect(p.handles('', 'persistentvolumeclaims', 'status', 'CREATE')).toBe(false);
    expect(p.handles('', 'persistentvolumes', '', 'CREATE')).toBe(false);
  });

  test('a claim without a class gets the default one', async () => {
    const p = new DefaultStorageClass(() => [
      sc('slow', '2026-01-01T00:00:00Z'),
      sc('fast', '2026-01-01T00:00:00Z', { [DEFAULT]: 'true' }),
    ]);
    const a = attrs('persistentvolumeclaims', claim());
    await p.admit(a);
    expect((a.object.spec as { storageClassName?: string }).storageClassName).toBe('fast');
  });

  test('the beta annotation marks a default too; "false" and other values do not', async () => {
    expect(defaultClass([sc('a', '2026-01-01T00:00:00Z', { [BETA_DEFAULT]: 'true' })])?.metadata.name).toBe('a');
    expect(
      defaultClass([sc('a', '2026-01-01T00:00:00Z', { [DEFAULT]: 'false' }), sc('b', '2026-01-01T00:00:00Z', { [DEFAULT]: 'yes' })]),
    ).toBeUndefined();
  });

  test('several defaults: the newest wins, then the first by name', () => {
    const older = sc('older', '2026-01-01T00:00:00Z', { [DEFAULT]: 'true' });
    const newer = sc('newer', '2026-02-01T00:00:00Z', { [DEFAULT]: 'true' });
    expect(defaultClass([older, newer])?.metadata.name).toBe('newer');
    expect(defaultClass([newer, older])?.metadata.name).toBe('newer');
    const b = sc('b', '2026-03-01T00:00:00Z', { [DEFAULT]: 'true' });
    const a = sc('a', '2026-03-01T00:00:00Z', { [DEFAULT]: 'true' });
    expect(defaultClass([b, older, a])?.metadata.name).toBe('a');
  });

  test('a claim naming a class (even "") or carrying the beta class annotation keeps it; no default: no class', async () => {
    const classes = () => [sc('fast', '2026-01-01T00:00:00Z', { [DEFAULT]: 'true' })];
    const p = new DefaultStorageClass(classes);
    for (const [c, want] of [
      [claim({ storageClassName: 'slow' }), 'slow'],
      [claim({ storageClassName: '' }), ''],
      [claim({}, { 'volume.beta.kubernetes.io/storage-class': 'legacy' }), undefined],
    ] as const) {
      const a = attrs('persistentvolumeclaims', structuredClone(c) as Obj);
      await p.admit(a);
      expect((a.object.spec as { storageClassName?: string }).storageClassName).toBe(want);
    }
    const none = new DefaultStorageClass(() => [sc('slow', '2026-01-01T00:00:00Z')]);
    const a = attrs('persistentvolumeclaims', claim());
    await none.admit(a);
    expect((a.object.spec as { storageClassName?: string }).storageClassName).toBeUndefined();
  });
});

describe('StorageObjectInUseProtection', () => {
  const p = new StorageObjectInUseProtection();

  test('handles the creation of claims and volumes', () => {
    expect(p.handles('', 'persistentvolumeclaims', '', 'CREATE')).toBe(true);
    expect(p.handles('', 'persistentvolumes', '', 'CREATE')).toBe(true);
    expect(p.handles('', 'persistentvolumes', '', 'UPDATE')).toBe(false);
    expect(p.handles('', 'persistentvolumes', 'status', 'CREATE')).toBe(false);
    expect(p.handles('', 'pods', '', 'CREATE')).toBe(false);
  });

  test('claims get kubernetes.io/pvc-protection, volumes kubernetes.io/pv-protection, once', () => {
    const c = attrs('persistentvolumeclaims', { ...claim(), metadata: { name: 'c', finalizers: ['example.com/keep'] } });
    p.admit(c);
    expect(c.object.metadata.finalizers).toEqual(['example.com/keep', PVC_PROTECTION]);
    p.admit(c);
    expect(c.object.metadata.finalizers).toEqual(['example.com/keep', PVC_PROTECTION]);
    const v = attrs('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' }, spec: {} });
    p.admit(v);
    expect(v.object.metadata.finalizers).toEqual([PV_PROTECTION]);
    expect(PVC_PROTECTION).toBe('kubernetes.io/pvc-protection');
    expect(PV_PROTECTION).toBe('kubernetes.io/pv-protection');
  });
});

describe('the admission chain (builder.ts)', () => {
  /** The chains as the server builds them, over a registry that serves StorageClasses only (fakes). */
  function chains(classes: Obj[]) {
    const storageClasses = {
      prefix: '/registry/storage.svc.io/storageclasses/',
      watchCache: () => ({ start: async () => {}, list: () => classes.map((obj) => ({ obj })) }),
    };
    const resources = {
      lookup: (group: string, _v: string, plural: string) =>
        group === 'storage.svc.io' && plural === 'storageclasses' ? storageClasses : undefined,
      byGroupVersionKind: () => undefined,
      stores: () => [],
    } as unknown as Resources;
    const admission = new Admission({
      authorizer: {} as Authorizer,
      rbac: {} as RbacIndex,
      schemas: {} as SchemaSet,
      log: () => {},
    });
    return admission.chains(resources);
  }
  const def = (plural: string) => ({ group: '', version: 'v1', plural, namespaced: plural !== 'persistentvolumes' }) as KindDef;

  test('claims run DefaultStorageClass then StorageObjectInUseProtection; volumes only the latter', () => {
    const forKind = chains([]);
    const names = (plural: string) => forKind(def(plural))?.plugins.map((p) => p.name) ?? [];
    const pvc = names('persistentvolumeclaims');
    expect(pvc.indexOf('DefaultStorageClass')).toBeGreaterThanOrEqual(0);
    expect(pvc.indexOf('StorageObjectInUseProtection')).toBe(pvc.indexOf('DefaultStorageClass') + 1);
    expect(names('persistentvolumes')).toContain('StorageObjectInUseProtection');
    expect(names('persistentvolumes')).not.toContain('DefaultStorageClass');
    expect(names('pods')).not.toContain('StorageObjectInUseProtection');
  });

  test('a claim admitted through the chain gets the default class (read from the StorageClass cache) and its finalizer', async () => {
    const forKind = chains([sc('fast', '2026-01-01T00:00:00Z', { [DEFAULT]: 'true' }), sc('slow', '2026-02-01T00:00:00Z')]);
    const chain = forKind(def('persistentvolumeclaims'));
    const a = attrs('persistentvolumeclaims', claim());
    const own = chain?.plugins.filter((p) => p.name === 'DefaultStorageClass' || p.name === 'StorageObjectInUseProtection') ?? [];
    for (const p of own) await p.admit?.(a);
    expect((a.object.spec as { storageClassName?: string }).storageClassName).toBe('fast');
    expect(a.object.metadata.finalizers).toEqual([PVC_PROTECTION]);
  });
});
