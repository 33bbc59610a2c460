import { describe, expect, test } from 'bun:test';
import { has, needs, REFERENCE } from '../../../test/helpers/needs';
import { rng } from '../../../test/helpers/rng';
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { SchemaSet } from '../../schema/engine';
import generated from '../../schema/generated/definitions.json';
import { overlays } from '../../schema/overlays';
import type { Definitions } from '../../schema/types';
import {
  ApplyConflictError,
  apply,
  checkApplyManagedFields,
  checkApplyType,
  conflictStatus,
  FieldSet,
  fieldPE,
  recordUpdate,
  recordUpdateSlow,
} from './index';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';
const CONFIGMAP = 'io.svc.api.core.v1.ConfigMap';

const at = (i: number) => `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`;

interface Kind {
  def: string;
  apiVersion: string;
}
const DEP: Kind = { def: DEPLOYMENT, apiVersion: 'apps/v1' };
const CM: Kind = { def: CONFIGMAP, apiVersion: 'v1' };

/** An apply body for a Deployment "web" with one nginx container; `spec` merged over the base. */
function deployment(spec: Any = {}, metadata: Any = {}, container: Any = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', ...metadata },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1', ...container }] },
      },
      ...spec,
    },
  };
}

/** A partial Deployment apply body (only what is given). */
const partial = (spec: Any, metadata: Any = {}): Any => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', ...metadata },
  spec,
});

const configMap = (data: Any, metadata: Any = {}): Any => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', ...metadata },
  data,
});

/** Ownership as `manager/Operation` → rendered paths. */
function owners(obj: Any): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of obj?.metadata?.managedFields ?? []) {
    out[`${e.manager}/${e.operation}`] = FieldSet.fromFieldsV1(e.fieldsV1).toStrings();
  }
  return out;
}

/** Managers that own a rendered path. */
function ownersOf(obj: Any, path: string): string[] {
  return Object.entries(owners(obj))
    .filter(([, paths]) => paths.includes(path))
    .map(([m]) => m)
    .sort();
}

type Op =
  | { apply: string; body: Any; force?: boolean; conflict?: string }
  | { update: string; change: (o: Any) => void; subresource?: string }
  | { create: string; body: Any }
  /** A stored object without managedFields (written before tracking). */
  | { seed: Any };

interface Case {
  name: string;
  kind: Kind;
  ops: Op[];
  check: (obj: Any) => void;
}

/** Runs the operations in order (operation i at time at(i)); returns the last stored object. */
function run(kind: Kind, ops: Op[]): Any {
  let live: Any;
  ops.forEach((op, i) => {
    const common = { apiVersion: kind.apiVersion, now: at(i), schemas, defName: kind.def };
    if ('apply' in op) {
      const call = (generalPrune = false) =>
        apply(live, structuredClone(op.body), { ...common, manager: op.apply, force: op.force ?? false, generalPrune });
      if (op.conflict !== undefined) {
        expect(call).toThrow(op.conflict);
        expect(() => call(true)).toThrow(op.conflict);
        return;
      }
      if (live) deepFreeze(live);
      const out = call();
      // The prune's shortcut and the general computation agree on every case here.
      expect(out).toEqual(call(true));
      if (live) expect(shared(live, out.obj)).toEqual([]);
      live = out.obj;
    } else if ('update' in op) {
      const next = structuredClone(live);
      op.change(next);
      recordUpdate(live, next, { ...common, manager: op.update, subresource: op.subresource });
      live = next;
    } else if ('create' in op) {
      const next = structuredClone(op.body);
      recordUpdate(undefined, next, { ...common, manager: op.create });
      live = next;
    } else {
      live = structuredClone(op.seed);
    }
  });
  return live;
}

const cases: Case[] = [
  {
    name: 'create by apply: the applier owns every field it sent',
    kind: DEP,
    ops: [{ apply: 'a', body: deployment({ replicas: 3 }) }],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(3);
      expect(obj.metadata.managedFields).toEqual([
        {
          manager: 'a',
          operation: 'Apply',
          apiVersion: 'apps/v1',
          time: at(0),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': {
              'f:replicas': {},
              'f:selector': {},
              'f:template': {
                'f:metadata': { 'f:labels': { 'f:app': {} } },
                'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
              },
            },
          },
        },
      ]);
    },
  },
  {
    name: 'two appliers with the same value share the field',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }) },
      { apply: 'b', body: partial({ replicas: 3 }) },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(3);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['a/Apply', 'b/Apply']);
    },
  },
  {
    name: 'a different value owned by another applier conflicts; nothing changes',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }) },
      { apply: 'b', body: partial({ replicas: 5 }), conflict: 'Apply failed with 1 conflict: conflict with "a": .spec.replicas' },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(3);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['a/Apply']);
      expect(owners(obj)['b/Apply']).toBeUndefined();
    },
  },
  {
    name: 'force takes the field: new value, removed from the other manager',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }) },
      { apply: 'b', body: partial({ replicas: 5 }), force: true },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(5);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['b/Apply']);
      expect(owners(obj)['a/Apply']).toContain('.spec.selector');
    },
  },
  {
    name: 'fields the applier applied before and omits now are removed',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }, {}, { workingDir: '/w' }) },
      { apply: 'a', body: deployment() },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBeUndefined();
      expect(obj.spec.template.spec.containers).toEqual([{ name: 'nginx', image: 'nginx:1' }]);
      expect(ownersOf(obj, '.spec.replicas')).toEqual([]);
    },
  },
  {
    name: 'an omitted field that another manager also owns stays; ownership just leaves',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }) },
      { apply: 'b', body: partial({ replicas: 3 }) },
      { apply: 'a', body: deployment() },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(3);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['b/Apply']);
    },
  },
  {
    name: 'an omitted field that an updater changed stays (the updater owns it)',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({ replicas: 3 }) },
      { update: 'scaler', change: (o) => (o.spec.replicas = 7) },
      { apply: 'a', body: deployment() },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(7);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['scaler/Update']);
    },
  },
  {
    name: 'sets: items merge per value and leave with their last owner',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap(undefined, { finalizers: ['x', 'y'] }) },
      { apply: 'b', body: configMap(undefined, { finalizers: ['z'] }) },
      { apply: 'a', body: configMap(undefined, { finalizers: ['x'] }) },
    ],
    check: (obj) => {
      expect(obj.metadata.finalizers).toEqual(['x', 'z']);
      expect(owners(obj)).toEqual({
        'a/Apply': ['.metadata.finalizers[="x"]'],
        'b/Apply': ['.metadata.finalizers[="z"]'],
      });
    },
  },
  {
    name: 'map lists: containers merge by name; an item one applier drops goes',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment() },
      { apply: 'b', body: partial({ template: { spec: { containers: [{ name: 'sidecar', image: 'busybox' }] } } }) },
      {
        apply: 'b',
        body: partial({ template: { spec: { containers: [{ name: 'nginx', image: 'nginx:2' }] } } }),
        conflict: 'Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="nginx"].image',
      },
      { apply: 'a', body: deployment({}, {}, { name: 'web' }) },
    ],
    check: (obj) => {
      expect(obj.spec.template.spec.containers.map((c: Any) => c.name)).toEqual(['sidecar', 'web']);
      expect(owners(obj)['b/Apply']).toEqual([
        '.spec.template.spec.containers[name="sidecar"]',
        '.spec.template.spec.containers[name="sidecar"].image',
        '.spec.template.spec.containers[name="sidecar"].name',
      ]);
    },
  },
  {
    name: 'atomic lists: replaced whole and owned by one manager',
    kind: DEP,
    ops: [
      { apply: 'a', body: deployment({}, {}, { args: ['-a', '-b'] }) },
      {
        apply: 'b',
        body: partial({ template: { spec: { containers: [{ name: 'nginx', args: ['-c'] }] } } }),
        conflict: 'conflict with "a": .spec.template.spec.containers[name="nginx"].args',
      },
      { apply: 'b', body: partial({ template: { spec: { containers: [{ name: 'nginx', args: ['-c'] }] } } }), force: true },
    ],
    check: (obj) => {
      expect(obj.spec.template.spec.containers[0].args).toEqual(['-c']);
      const path = '.spec.template.spec.containers[name="nginx"].args';
      expect(ownersOf(obj, path)).toEqual(['b/Apply']);
      // The item and its key stay shared.
      expect(ownersOf(obj, '.spec.template.spec.containers[name="nginx"].name')).toEqual(['a/Apply', 'b/Apply']);
    },
  },
  {
    name: 'granular maps: labels are owned per key',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap(undefined, { labels: { app: 'x' } }) },
      { apply: 'b', body: configMap(undefined, { labels: { team: 'y' } }) },
      { apply: 'b', body: configMap(undefined, { labels: { app: 'z' } }), conflict: 'conflict with "a": .metadata.labels.app' },
      { apply: 'a', body: configMap(undefined, {}) },
    ],
    check: (obj) => {
      expect(obj.metadata.labels).toEqual({ team: 'y' });
      expect(owners(obj)).toEqual({ 'b/Apply': ['.metadata.labels.team'] });
    },
  },
  {
    name: 'hand-over of a field to a controller (spec procedure)',
    kind: DEP,
    ops: [
      { apply: 'main', body: deployment({ replicas: 3 }) },
      // A private manager applies only the field: same value, so shared, no conflict.
      { apply: 'handover', body: partial({ replicas: 3 }) },
      // The main manifest drops the field: it stays, owned by the private manager only.
      { apply: 'main', body: deployment() },
      // The controller writes it: the private manager owns nothing any more and disappears.
      { update: 'autoscaler', change: (o) => (o.spec.replicas = 6) },
    ],
    check: (obj) => {
      expect(obj.spec.replicas).toBe(6);
      expect(Object.keys(owners(obj)).sort()).toEqual(['autoscaler/Update', 'main/Apply']);
      expect(ownersOf(obj, '.spec.replicas')).toEqual(['autoscaler/Update']);
    },
  },
  {
    name: 'an update takes the fields it changes from other managers, without conflicts',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1', j: 'x' }) },
      { update: 'editor', change: (o) => (o.data.k = 'v2') },
    ],
    check: (obj) => {
      expect(owners(obj)).toEqual({ 'a/Apply': ['.data.j'], 'editor/Update': ['.data.k'] });
      expect(obj.metadata.managedFields[1]).toMatchObject({ manager: 'editor', operation: 'Update', apiVersion: 'v1', time: at(1) });
    },
  },
  {
    name: 'an update that changes nothing takes nothing',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      { update: 'editor', change: () => {} },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.k'] }),
  },
  {
    name: 'an applier conflicting with an updater names its apiVersion',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      { update: 'editor', change: (o) => (o.data.k = 'v2') },
      { apply: 'a', body: configMap({ k: 'v1' }), conflict: 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.k' },
    ],
    check: (obj) => expect(obj.data.k).toBe('v2'),
  },
  {
    name: 'a removed field leaves its owners',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1', j: 'x' }) },
      { update: 'editor', change: (o) => delete o.data.j },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.k'] }),
  },
  {
    name: 'create through create/update records an Update entry (maps and list items with ".")',
    kind: CM,
    ops: [{ create: 'kubectl-create', body: configMap({ k: 'v' }, { labels: { app: 'x' } }) }],
    check: (obj) => {
      expect(obj.metadata.managedFields).toEqual([
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: at(0),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
        },
      ]);
    },
  },
  {
    name: 'create of a Deployment: embedded structs carry no "." marker, new map-list items do',
    kind: DEP,
    ops: [{ create: 'kubectl-create', body: deployment({ replicas: 1, strategy: { type: 'RollingUpdate' } }) }],
    check: (obj) => {
      const fields = obj.metadata.managedFields[0].fieldsV1;
      expect(fields['f:spec']['.']).toBeUndefined();
      expect(fields['f:spec']['f:strategy']).toEqual({ 'f:type': {} });
      expect(fields['f:spec']['f:template']['f:spec']['f:containers']['.']).toBeUndefined();
      expect(fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"nginx"}']['.']).toEqual({});
      expect(fields['f:spec']['f:template']['f:metadata']['f:labels']['.']).toEqual({});
    },
  },
  {
    name: 'reset with [{}]: cleared first, then the writer owns what the request changed',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }, { labels: { app: 'x' } }) },
      { update: 'editor', change: (o) => (o.data.k = 'v2') },
      {
        update: 'resetter',
        change: (o) => {
          o.metadata.managedFields = [{}];
          o.metadata.labels.app = 'y';
        },
      },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'resetter/Update': ['.metadata.labels.app'] }),
  },
  {
    name: 'reset with [{}] and no other change: managedFields cleared',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      { update: 'resetter', change: (o) => (o.metadata.managedFields = [{}]) },
    ],
    check: (obj) => expect(obj.metadata.managedFields).toBeUndefined(),
  },
  {
    name: 'an empty list [] does not reset',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      { update: 'other', change: (o) => (o.metadata.managedFields = []) },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.k'] }),
  },
  {
    name: 'managedFields left out of an update are kept from the live object',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      {
        update: 'other',
        change: (o) => {
          delete o.metadata.managedFields;
          o.data.z = '1';
        },
      },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.k'], 'other/Update': ['.data.z'] }),
  },
  {
    name: 'managedFields edited directly through an update are taken as written',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1', j: 'x' }) },
      {
        update: 'other',
        change: (o) => (o.metadata.managedFields[0].fieldsV1 = { 'f:data': { 'f:j': {} } }),
      },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.j'] }),
  },
  {
    name: 'invalid managedFields in an update fall back to the live ones',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      { update: 'other', change: (o) => (o.metadata.managedFields = [{ manager: 'x', operation: 'Bogus', apiVersion: 'v1' }]) },
    ],
    check: (obj) => expect(owners(obj)).toEqual({ 'a/Apply': ['.data.k'] }),
  },
  {
    name: 'an update through a subresource ignores managedFields in the request and records the subresource',
    kind: CM,
    ops: [
      { apply: 'a', body: configMap({ k: 'v1' }) },
      {
        update: 'kubelet',
        subresource: 'status',
        change: (o) => {
          o.metadata.managedFields = [{}];
          o.data.k = 'v3';
        },
      },
    ],
    check: (obj) => {
      expect(owners(obj)).toEqual({ 'kubelet/Update': ['.data.k'] });
      expect(obj.metadata.managedFields[0].subresource).toBe('status');
    },
  },
  {
    name: 'apply to an object nobody manages: its fields belong to before-first-apply',
    kind: CM,
    ops: [
      { seed: configMap({ k: 'old', other: '1' }) },
      {
        apply: 'a',
        body: configMap({ k: 'new' }),
        conflict: 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.k',
      },
      { apply: 'a', body: configMap({ k: 'old' }) },
    ],
    check: (obj) => {
      expect(ownersOf(obj, '.data.k')).toEqual(['a/Apply', 'before-first-apply/Update']);
    },
  },
];

describe('apply and update ownership', () => {
  for (const c of cases) test(c.name, () => c.check(run(c.kind, c.ops)));
});

describe('apply details', () => {
  const base = { apiVersion: 'apps/v1', schemas, defName: DEPLOYMENT };

  test('a no-op apply keeps the time and reports no change', () => {
    const first = apply(undefined, deployment(), { ...base, manager: 'a', force: false, now: at(1) }).obj;
    const again = apply(first, deployment(), { ...base, manager: 'a', force: false, now: at(2) });
    expect(again.changed).toBe(false);
    expect(again.obj.metadata.managedFields![0]!.time).toBe(at(1));
    const changed = apply(first, deployment({ replicas: 2 }), { ...base, manager: 'a', force: false, now: at(3) });
    expect(changed.changed).toBe(true);
    expect(changed.obj.metadata.managedFields![0]!.time).toBe(at(3));
  });

  test('apply keeps the live metadata the body does not mention', () => {
    const live = apply(undefined, deployment(), { ...base, manager: 'a', force: false, now: at(1) }).obj;
    Object.assign(live.metadata, { uid: 'u-1', resourceVersion: '7', creationTimestamp: at(0), generation: 1 });
    const out = apply(live, deployment({}, { labels: { x: 'y' } }), { ...base, manager: 'a', force: false, now: at(2) }).obj;
    expect(out.metadata).toMatchObject({
      name: 'web',
      uid: 'u-1',
      resourceVersion: '7',
      creationTimestamp: at(0),
      generation: 1,
      labels: { x: 'y' },
    });
    const dropped = apply(out, deployment(), { ...base, manager: 'a', force: false, now: at(3) }).obj;
    expect(dropped.metadata.labels).toBeUndefined();
    expect(dropped.metadata.uid).toBe('u-1');
  });

  test('map-list order: the applied order wins for shared items, live-only items keep their place', () => {
    const live: Obj = apply(undefined, partial({ template: { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } } }), {
      ...base,
      manager: 'm1',
      force: false,
      now: at(1),
    }).obj;
    const out = apply(live, partial({ template: { spec: { containers: [{ name: 'c' }, { name: 'd' }, { name: 'a' }] } } }), {
      ...base,
      manager: 'm2',
      force: false,
      now: at(2),
    }).obj as Any;
    expect(out.spec.template.spec.containers.map((c: Any) => c.name)).toEqual(['b', 'c', 'd', 'a']);
  });

  test('ignoredFields are never owned by the write', () => {
    const out = apply(
      undefined,
      { ...deployment(), status: { replicas: 4 } },
      { ...base, manager: 'a', force: false, now: at(1), ignoredFields: FieldSet.of([fieldPE('status')]) },
    ).obj;
    expect(ownersOf(out, '.status.replicas')).toEqual([]);
    expect(ownersOf(out, '.spec.selector')).toEqual(['a/Apply']);
  });

  test('body errors: managedFields, type, unkeyed list items, duplicates', () => {
    expect(() => checkApplyManagedFields({ metadata: { managedFields: [] } })).toThrow('metadata.managedFields must be nil');
    expect(() => checkApplyManagedFields({ metadata: { managedFields: null } })).not.toThrow();
    expect(() =>
      apply(
        undefined,
        { ...deployment(), metadata: { name: 'web', managedFields: [{}] } },
        { ...base, manager: 'a', force: false, now: at(1) },
      ),
    ).toThrow('metadata.managedFields must be nil');
    try {
      checkApplyType({ apiVersion: 'apps/v1', kind: 'Foo' }, 'apps/v1', 'Deployment');
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(StatusError);
      expect((e as StatusError).code).toBe(400);
      expect((e as StatusError).message).toBe('invalid object type: apps/v1, Kind=Foo');
    }
    const noName = partial({ template: { spec: { containers: [{ image: 'x' }] } } });
    expect(() => apply(undefined, noName, { ...base, manager: 'a', force: false, now: at(1) })).toThrow(
      'failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    );
    const dup = partial({ template: { spec: { containers: [{ name: 'x' }, { name: 'x' }] } } });
    expect(() => apply(undefined, dup, { ...base, manager: 'a', force: false, now: at(1) })).toThrow(
      '.spec.template.spec.containers: duplicate entries for key [name="x"]',
    );
  });
});

describe('conflict Status', () => {
  const base = { apiVersion: 'apps/v1', schemas, defName: DEPLOYMENT };

  function conflictOf(fn: () => unknown): ApplyConflictError {
    try {
      fn();
    } catch (e) {
      if (e instanceof ApplyConflictError) return e;
      throw e;
    }
    throw new Error('no conflict');
  }

  test('one conflict', () => {
    const live = apply(undefined, configMap({ k: 'v1' }), {
      apiVersion: 'v1',
      schemas,
      defName: CONFIGMAP,
      manager: 'x',
      force: false,
      now: at(0),
    }).obj;
    const next = structuredClone(live) as Any;
    next.data.k = 'v2';
    recordUpdate(live, next, { apiVersion: 'v1', schemas, defName: CONFIGMAP, manager: 'mgr', now: at(1) });
    const err = conflictOf(() =>
      apply(next, configMap({ k: 'v3' }), { apiVersion: 'v1', schemas, defName: CONFIGMAP, manager: 'x', force: false, now: at(2) }),
    );
    expect(err.conflicts).toEqual([{ manager: 'mgr', operation: 'Update', apiVersion: 'v1', field: '.data.k' }]);
    const s = conflictStatus(err, { group: '', resource: 'configmaps' }, 'cm');
    expect(s.code).toBe(409);
    expect(s.body()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "mgr" using v1: .data.k',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "mgr" using v1', field: '.data.k' }] },
      code: 409,
    });
  });

  test('several conflicts, grouped by manager in identifier order', () => {
    let live = apply(undefined, deployment({ replicas: 3 }, {}, { args: ['x'] }), {
      ...base,
      manager: 'zeta',
      force: false,
      now: at(0),
    }).obj;
    const next = structuredClone(live) as Any;
    next.spec.paused = true;
    next.spec.minReadySeconds = 5;
    recordUpdate(live, next, { ...base, manager: 'alpha', now: at(1) });
    live = next;
    const err = conflictOf(() =>
      apply(
        live,
        partial({ replicas: 4, paused: false, minReadySeconds: 6, template: { spec: { containers: [{ name: 'nginx', args: ['y'] }] } } }),
        {
          ...base,
          manager: 'b',
          force: false,
          now: at(2),
        },
      ),
    );
    expect(err.message).toBe(
      [
        'Apply failed with 4 conflicts: conflicts with "alpha" using apps/v1:',
        '- .spec.minReadySeconds',
        '- .spec.paused',
        'conflicts with "zeta":',
        '- .spec.replicas',
        '- .spec.template.spec.containers[name="nginx"].args',
      ].join('\n'),
    );
    const causes = conflictStatus(err).details!.causes!;
    expect(causes).toHaveLength(4);
    expect(causes[0]).toEqual({
      reason: 'FieldManagerConflict',
      message: 'conflict with "alpha" using apps/v1',
      field: '.spec.minReadySeconds',
    });
    expect(causes[3]).toEqual({
      reason: 'FieldManagerConflict',
      message: 'conflict with "zeta"',
      field: '.spec.template.spec.containers[name="nginx"].args',
    });
  });
});

describe('managedFields of creates reused by shape', () => {
  const REF = `${REFERENCE}/fixtures`;
  const fixtures: [string, string, Any][] = [];
  if (has('reference')) {
    for (const f of require('node:fs').readdirSync(REF) as string[]) {
      if (!f.endsWith('.json')) continue;
      const def = `io.svc.api.${f.slice(0, -5)}`;
      if (!schemas.get(def)) continue;
      const obj = JSON.parse(require('node:fs').readFileSync(`${REF}/${f}`, 'utf8')) as Any;
      const [g, v] = f.split('.');
      fixtures.push([def, g === 'core' ? (v as string) : `${g}/${v}`, obj]);
    }
  }
  needs('reference').test('the reference fixtures are among the shapes', () => {
    expect(fixtures.length).toBeGreaterThan(0);
  });
  const own: [string, string, Any][] = [
    [CONFIGMAP, 'v1', configMap({ a: '1', b: '2' }, { labels: { x: 'y' } })],
    [CONFIGMAP, 'v1', configMap({})],
    [DEPLOYMENT, 'apps/v1', deployment({ replicas: 3 }, { labels: { app: 'a' } }, { ports: [{ containerPort: 80, protocol: 'TCP' }] })],
    [DEPLOYMENT, 'apps/v1', deployment({ replicas: 0, paused: false }, {}, { env: [{ name: 'A', value: '1' }, { name: 'B' }] })],
  ];
  test('a second create of the same shape gets what the general computation gives', () => {
    const cases = [...fixtures, ...own];
    expect(cases.length).toBeGreaterThan(3);
    for (const [def, apiVersion, obj] of cases) {
      for (const withStatus of [false, true]) {
        const base = structuredClone(obj) as Any;
        delete base.metadata.managedFields;
        if (!withStatus) delete base.status;
        const opts = { apiVersion, schemas, defName: def, manager: 'm', now: at(1), ignoredFields: undefined };
        // Same shape, other values: names, a label's value, a scalar leaf.
        const first = structuredClone(base) as Any;
        first.metadata.name = 'first';
        recordUpdate(undefined, first, opts);
        const second = structuredClone(base) as Any;
        second.metadata.name = 'second';
        const viaCache = structuredClone(second) as Any;
        recordUpdate(undefined, viaCache, { ...opts, now: at(2) });
        recordUpdateSlow(undefined, second, { ...opts, now: at(2) });
        expect({ def, mf: viaCache.metadata.managedFields }).toEqual({ def, mf: second.metadata.managedFields });
      }
    }
  });
  test('a different shape is not served from another shape', () => {
    const a = configMap({ a: '1' });
    recordUpdate(undefined, a, { apiVersion: 'v1', schemas, defName: CONFIGMAP, manager: 'm', now: at(1) });
    const b = configMap({ a: '1', b: '2' });
    recordUpdate(undefined, b, { apiVersion: 'v1', schemas, defName: CONFIGMAP, manager: 'm', now: at(1) });
    expect(ownersOf(b, '.data.b')).toEqual(['m/Update']);
    expect(ownersOf(a, '.data.b')).toEqual([]);
    expect(ownersOf(a, '.data.a')).toEqual(['m/Update']);
  });
});

describe('recordUpdate fast path (scalar changes owned only by the writer)', () => {
  const def = 'io.svc.api.core.v1.ResourceQuota';
  const base = { apiVersion: 'v1', schemas, defName: def };
  const hard = { pods: '10', 'requests.cpu': '4' };
  /** A quota written by `bench` (spec), then its status by the controller and by admission. */
  function quota(): Any {
    let q: Any = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'n' }, spec: { hard } };
    recordUpdate(undefined, q, { ...base, manager: 'bench', now: at(0) });
    let next: Any = structuredClone(q);
    next.status = { hard, used: {} };
    recordUpdate(q, next, { ...base, manager: 'resourcequota-controller', subresource: 'status', now: at(1) });
    q = next;
    next = structuredClone(q);
    next.status.used = { pods: '1', 'requests.cpu': '100m' };
    recordUpdate(q, next, { ...base, manager: 'resourcequota-admission', subresource: 'status', now: at(2) });
    return next;
  }
  /** recordUpdate and recordUpdateSlow on the same write agree. */
  function both(old: Any, change: (o: Any) => void, opts: Record<string, unknown>) {
    const fast: Any = structuredClone(old);
    change(fast);
    const slow: Any = structuredClone(fast);
    recordUpdate(old, fast, { ...base, now: at(3), ...opts } as never);
    recordUpdateSlow(old, slow, { ...base, now: at(3), ...opts } as never);
    expect(fast.metadata.managedFields).toEqual(slow.metadata.managedFields);
    return fast.metadata.managedFields as Any[];
  }

  test('the owner changes its values again: only its time moves', () => {
    const q = quota();
    const mf = both(
      q,
      (o) => {
        o.status.used = { pods: '2', 'requests.cpu': '200m' };
      },
      { manager: 'resourcequota-admission', subresource: 'status' },
    );
    expect(mf.find((e) => e.manager === 'resourcequota-admission')?.time).toBe(at(3));
  });

  test('an earlier writer writes again: its entry moves after the other, byte for byte as the general path', () => {
    const q = quota();
    const fast: Any = structuredClone(q);
    fast.status.hard = { ...fast.status.hard, pods: '20' };
    const slow: Any = structuredClone(fast);
    const opts = { ...base, manager: 'resourcequota-controller', subresource: 'status', now: at(3) } as never;
    recordUpdate(q, fast, opts);
    recordUpdateSlow(q, slow, opts);
    expect(JSON.stringify(fast.metadata.managedFields)).toBe(JSON.stringify(slow.metadata.managedFields));
    expect((fast.metadata.managedFields as Any[]).map((e) => e.manager)).toEqual([
      'bench',
      'resourcequota-admission',
      'resourcequota-controller',
    ]);
  });

  test('another manager changing the same values, a new key, a removed key: the general path, same result', () => {
    const q = quota();
    both(q, (o) => (o.status.used.pods = '3'), { manager: 'someone-else', subresource: 'status' });
    both(q, (o) => (o.status.used['limits.memory'] = '1Gi'), { manager: 'resourcequota-admission', subresource: 'status' });
    both(q, (o) => delete o.status.used.pods, { manager: 'resourcequota-admission', subresource: 'status' });
    both(q, (o) => (o.spec.hard.pods = '20'), { manager: 'resourcequota-admission' });
  });
});

/** Freezes `v` and everything in it (a write to it then throws). */
function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const c of Object.values(v)) deepFreeze(c);
}

/** The objects and arrays of `a` that `b` holds too (by identity). */
/**
 * The objects `b` shares with `a`, except FieldsV1 trees: those are never written into once made,
 * and a field set hands out the same tree each time it is written (fieldset.ts), so an applier's
 * entry shares its tree with the live object's (frozen in the test below: a write into it throws).
 */
function shared(a: unknown, b: unknown): unknown[] {
  const seen = new Set<unknown>();
  const collect = (v: unknown) => {
    if (typeof v !== 'object' || v === null) return;
    seen.add(v);
    for (const [k, c] of Object.entries(v)) if (k !== 'fieldsV1') collect(c);
  };
  collect(a);
  const out: unknown[] = [];
  const find = (v: unknown) => {
    if (typeof v !== 'object' || v === null) return;
    if (seen.has(v)) out.push(v);
    for (const [k, c] of Object.entries(v)) if (k !== 'fieldsV1') find(c);
  };
  find(b);
  return out;
}

describe('apply: the prune shortcut agrees with the general prune', () => {
  /** A random partial Deployment: some labels, replicas, containers with some of their fields. */
  function body(r: () => number): Any {
    const pick = <T>(xs: T[]) => xs.filter(() => r() < 0.5);
    const spec: Any = {};
    if (r() < 0.5) spec.replicas = 1 + Math.floor(r() * 3);
    if (r() < 0.8) {
      spec.template = {
        spec: {
          containers: pick(['a', 'b', 'c']).map((name) => {
            const c: Any = { name };
            if (r() < 0.6) c.image = `img:${Math.floor(r() * 2)}`;
            if (r() < 0.4) c.ports = pick([80, 443]).map((containerPort) => ({ containerPort, protocol: 'TCP' }));
            if (r() < 0.4) c.args = pick(['x', 'y']);
            return c;
          }),
        },
      };
    }
    const labels = Object.fromEntries(pick(['l1', 'l2', 'l3']).map((k) => [k, `${Math.floor(r() * 2)}`]));
    return partial(spec, Object.keys(labels).length > 0 ? { labels } : {});
  }
  test('2,000 random applies and updates by three managers, on frozen live objects, sharing nothing with them', () => {
    const r = rng(42);
    const base = { apiVersion: 'apps/v1', schemas, defName: DEPLOYMENT };
    let live: Any;
    let shortcuts = 0;
    const last = new Map<string, Any>();
    for (let i = 0; i < 2000; i++) {
      if (i % 50 === 0) live = undefined;
      const manager = ['m1', 'm2', 'm3'][Math.floor(r() * 3)] as string;
      if (live && r() < 0.2) {
        const next = structuredClone(live);
        next.spec = { ...(next.spec ?? {}), replicas: Math.floor(r() * 5) };
        recordUpdate(live, next, { ...base, manager: 'kubectl-edit', now: at(i % 60) });
        live = next;
        continue;
      }
      // Half the applies send the manager's previous configuration again (the shortcut's case).
      const again = live !== undefined && last.has(manager) && r() < 0.5;
      const config = again ? last.get(manager) : body(r);
      last.set(manager, config);
      if (again) shortcuts++;
      const opts = { ...base, manager, force: r() < 0.7, now: at(i % 60) };
      let fast: unknown;
      let general: unknown;
      if (live) deepFreeze(live);
      try {
        fast = apply(live, structuredClone(config), opts);
      } catch (e) {
        fast = String(e);
      }
      try {
        general = apply(live, structuredClone(config), { ...opts, generalPrune: true });
      } catch (e) {
        general = String(e);
      }
      expect(fast).toEqual(general);
      if (typeof fast === 'object') {
        const next = (fast as { obj: Any }).obj;
        // Nothing of the live object is reused: the registry hands apply its read-only decode.
        if (live) expect(shared(live, next)).toEqual([]);
        live = next;
      }
    }
    expect(shortcuts).toBeGreaterThan(300);
  });
});

describe('apply: configurations of one shape share their field set', () => {
  test('the field set of a shape seen before is the one a fresh set of definitions computes', () => {
    const fresh = () => new SchemaSet(generated as unknown as Definitions, overlays);
    const opts = (s: SchemaSet, i: number) => ({
      apiVersion: 'apps/v1',
      schemas: s,
      defName: DEPLOYMENT,
      manager: 'm',
      force: false,
      now: at(i),
    });
    const shared = fresh();
    for (let i = 0; i < 5; i++) {
      // Same shape (keys, kinds, arrays), other scalar values.
      const body = deployment({ replicas: i + 1 }, { labels: { app: `v${i}` } }, { image: `nginx:${i}` });
      const memoized = apply(undefined, structuredClone(body), opts(shared, i)).obj;
      const computed = apply(undefined, structuredClone(body), opts(fresh(), i)).obj;
      expect(memoized.metadata.managedFields).toEqual(computed.metadata.managedFields);
    }
  });
  test('a definition changed (a custom resource schema) is not served from the old shape', () => {
    const s = new SchemaSet(generated as unknown as Definitions, overlays);
    const def = 'io.example.v1.Widget';
    const schema = (listType: string) =>
      ({
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'ref', ref: 'io.svc.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
          spec: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, listType } } },
        },
      }) as never;
    const body = { apiVersion: 'example.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { tags: ['a', 'b'] } };
    const o = { apiVersion: 'example.io/v1', schemas: s, defName: def, manager: 'm', force: false, now: at(1) };
    s.define(def, schema('atomic'));
    const atomic = apply(undefined, structuredClone(body) as never, o).obj;
    s.define(def, schema('set'));
    const set = apply(undefined, structuredClone(body) as never, o).obj;
    const tags = (x: Any) => x.metadata.managedFields[0].fieldsV1['f:spec']['f:tags'];
    expect(tags(atomic)).toEqual({});
    expect(tags(set)).toEqual({ 'v:"a"': {}, 'v:"b"': {} });
  });
});
