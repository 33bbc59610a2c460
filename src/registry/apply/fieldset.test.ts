import { describe, expect, test } from 'bun:test';
import { SchemaSet } from '../../schema/engine';
import generated from '../../schema/generated/definitions.json';
import { overlays } from '../../schema/overlays';
import type { Definitions } from '../../schema/types';
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  FieldSet,
  fieldPE,
  fieldSetOf,
  isResetManagedFields,
  keyPE,
  type ManagedEntry,
  managerId,
  type PathElement,
  parsePE,
  pathString,
  serializePE,
  valuePE,
} from './index';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';
const CONFIGMAP = 'io.svc.api.core.v1.ConfigMap';
const POD = 'io.svc.api.core.v1.Pod';
const PV = 'io.svc.api.core.v1.PersistentVolume';
const REVISION = 'io.svc.api.apps.v1.ControllerRevision';

const f = (...names: string[]): PathElement[] => names.map(fieldPE);

describe('path elements', () => {
  const cases: { pe: PathElement; key: string; str: string }[] = [
    { pe: fieldPE('spec'), key: 'f:spec', str: '.spec' },
    { pe: keyPE([['name', 'nginx']]), key: 'k:{"name":"nginx"}', str: '[name="nginx"]' },
    {
      pe: keyPE([
        ['protocol', 'TCP'],
        ['containerPort', 80],
      ]),
      key: 'k:{"containerPort":80,"protocol":"TCP"}',
      str: '[containerPort=80,protocol="TCP"]',
    },
    { pe: valuePE('a<b'), key: 'v:"a\\u003cb"', str: '[="a<b"]' },
    { pe: valuePE(42), key: 'v:42', str: '[=42]' },
    { pe: { kind: 'index', index: 3 }, key: 'i:3', str: '[3]' },
  ];
  for (const c of cases) {
    test(c.key, () => {
      expect(serializePE(c.pe)).toBe(c.key);
      expect(serializePE(parsePE(c.key))).toBe(c.key);
      expect(pathString([c.pe])).toBe(c.str);
    });
  }

  test('malformed keys', () => {
    expect(() => parsePE('f')).toThrow('key must be 2 characters long:');
    expect(() => parsePE('fx')).toThrow('missing colon: fx');
    expect(() => parsePE('i:x')).toThrow();
    expect(() => parsePE('k:[1]')).toThrow();
  });

  test('a full path', () => {
    const p = [...f('spec', 'template', 'spec', 'containers'), keyPE([['name', 'nginx']]), fieldPE('image')];
    expect(pathString(p)).toBe('.spec.template.spec.containers[name="nginx"].image');
    expect(pathString([...f('metadata', 'finalizers'), valuePE('x')])).toBe('.metadata.finalizers[="x"]');
  });
});

describe('FieldsV1', () => {
  const cases: { name: string; json: Any; paths: string[] }[] = [
    { name: 'empty', json: {}, paths: [] },
    {
      name: 'nested leaves',
      json: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
      paths: ['.metadata.labels.app', '.spec.replicas'],
    },
    {
      name: 'list item that is owned itself (".")',
      json: { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } },
      paths: ['.spec.containers[name="nginx"]', '.spec.containers[name="nginx"].image', '.spec.containers[name="nginx"].name'],
    },
    {
      name: 'set items and a map with its own marker',
      json: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:x': {} } } },
      paths: ['.metadata.finalizers', '.metadata.labels', '.metadata.finalizers[="a"]', '.metadata.finalizers[="b"]', '.metadata.labels.x'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const s = FieldSet.fromFieldsV1(c.json);
      expect(s.toStrings()).toEqual(c.paths);
      // Round trip, key order included ('.' first, then fields, keys, values, indices).
      expect(JSON.stringify(s.toFieldsV1())).toBe(JSON.stringify(c.json));
    });
  }

  test('encoding orders keys like the reference', () => {
    const s = FieldSet.of(
      [...f('spec', 'ports'), { kind: 'index', index: 1 }],
      [...f('spec', 'ports'), valuePE('b')],
      [...f('spec', 'ports'), keyPE([['port', 80]])],
      [...f('spec', 'ports'), keyPE([['port', 80]]), fieldPE('name')],
      [...f('spec', 'ports')],
      [...f('spec', 'ports', 'zz')],
      [...f('spec', 'ports', 'aa')],
    );
    expect(JSON.stringify(s.toFieldsV1())).toBe(
      '{"f:spec":{"f:ports":{".":{},"f:aa":{},"f:zz":{},"k:{\\"port\\":80}":{".":{},"f:name":{}},"v:\\"b\\"":{},"i:1":{}}}}',
    );
  });

  test('a set hands out one tree until a mutator changes it; sets made from it have their own', () => {
    const s = FieldSet.of(f('data', 'a'), f('data', 'b'));
    const tree = s.toFieldsV1();
    expect(s.toFieldsV1()).toBe(tree);
    const u = s.union(FieldSet.of(f('data', 'c')));
    expect(JSON.stringify(u.toFieldsV1())).toBe('{"f:data":{"f:a":{},"f:b":{},"f:c":{}}}');
    expect(JSON.stringify(s.toFieldsV1())).toBe('{"f:data":{"f:a":{},"f:b":{}}}');
    s.insert(f('data', 'z'));
    expect(JSON.stringify(s.toFieldsV1())).toBe('{"f:data":{"f:a":{},"f:b":{},"f:z":{}}}');
    s.addMember(fieldPE('kind'));
    expect(JSON.stringify(s.toFieldsV1())).toBe('{"f:data":{"f:a":{},"f:b":{},"f:z":{}},"f:kind":{}}');
    s.setChild(fieldPE('data'), FieldSet.of([fieldPE('y')]));
    expect(JSON.stringify(s.toFieldsV1())).toBe('{"f:data":{"f:y":{}},"f:kind":{}}');
    // The first tree was not written into.
    expect(JSON.stringify(tree)).toBe('{"f:data":{"f:a":{},"f:b":{}}}');
  });

  test('unknown key types are ignored; JSON text accepted', () => {
    const s = FieldSet.fromFieldsV1('{"f:a":{},"x:b":{},"f:c":{"x:d":{}}}');
    expect(s.toStrings()).toEqual(['.a', '.c']);
  });
});

describe('set operations', () => {
  const a = FieldSet.of(f('a'), f('b', 'c'), f('b', 'd'), f('e'));
  const b = FieldSet.of(f('b', 'c'), f('e'), f('x'));
  const cases: { name: string; got: FieldSet; want: string[] }[] = [
    { name: 'union', got: a.union(b), want: ['.a', '.e', '.x', '.b.c', '.b.d'] },
    { name: 'intersection', got: a.intersection(b), want: ['.e', '.b.c'] },
    { name: 'difference', got: a.difference(b), want: ['.a', '.b.d'] },
    // Path-wise: removing a parent keeps the children, removing children keeps the parent.
    { name: 'difference child - parent', got: FieldSet.of(f('p', 'c')).difference(FieldSet.of(f('p'))), want: ['.p.c'] },
    { name: 'difference parent - child', got: FieldSet.of(f('p')).difference(FieldSet.of(f('p', 'c'))), want: ['.p'] },
    {
      name: 'recursiveDifference drops subtrees',
      got: FieldSet.of(f('p'), f('p', 'c'), f('q')).recursiveDifference(FieldSet.of(f('p'))),
      want: ['.q'],
    },
    { name: 'leaves', got: FieldSet.of(f('p'), f('p', 'c'), f('q')).leaves(), want: ['.q', '.p.c'] },
  ];
  for (const c of cases) test(c.name, () => expect(c.got.toStrings()).toEqual(c.want));

  test('has, size, empty, equals', () => {
    expect(a.has(f('b', 'c'))).toBe(true);
    expect(a.has(f('b'))).toBe(false);
    expect(a.size()).toBe(4);
    expect(new FieldSet().empty()).toBe(true);
    expect(a.difference(a).empty()).toBe(true);
    expect(a.union(b).equals(b.union(a))).toBe(true);
    expect(a.equals(b)).toBe(false);
  });
});

describe('fieldSetOf follows the schema', () => {
  const cases: { name: string; def: string; obj: Any; want: Any }[] = [
    {
      name: 'granular maps: one path per key',
      def: CONFIGMAP,
      obj: { metadata: { name: 'c', labels: { app: 'x', tier: 'y' } }, data: { a: '1', b: '2' } },
      want: { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} }, 'f:name': {} } },
    },
    {
      name: 'atomic struct (LabelSelector) is one leaf; map list by name; atomic list (args) one leaf',
      def: DEPLOYMENT,
      obj: {
        spec: {
          selector: { matchLabels: { app: 'x' } },
          template: { spec: { containers: [{ name: 'nginx', image: 'nginx', args: ['a', 'b'] }] } },
        },
      },
      want: {
        'f:spec': {
          'f:selector': {},
          'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } } },
        },
      },
    },
    {
      name: 'map list with two keys, the absent key defaulted (protocol TCP)',
      def: POD,
      obj: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] }] } },
      want: {
        'f:spec': {
          'f:containers': {
            'k:{"name":"c"}': {
              '.': {},
              'f:name': {},
              'f:ports': {
                'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
                'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
              },
            },
          },
        },
      },
    },
    {
      name: 'set (finalizers: patchStrategy merge, no key); map list keyed by uid of atomic items (ownerReferences)',
      def: CONFIGMAP,
      obj: { metadata: { finalizers: ['b', 'a'], ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'n', uid: 'u1' }] } },
      want: {
        'f:metadata': {
          'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} },
          'f:ownerReferences': { 'k:{"uid":"u1"}': {} },
        },
      },
    },
    {
      name: 'tolerations (no list type) are atomic',
      def: POD,
      obj: { spec: { tolerations: [{ key: 'k', operator: 'Exists' }] } },
      want: { 'f:spec': { 'f:tolerations': {} } },
    },
    {
      name: 'mapType granular on a ref overrides an atomic struct (PV claimRef)',
      def: PV,
      obj: { spec: { claimRef: { name: 'c', namespace: 'n' } } },
      want: { 'f:spec': { 'f:claimRef': { 'f:name': {}, 'f:namespace': {} } } },
    },
    {
      name: 'any content is deduced: objects granular, arrays atomic',
      def: REVISION,
      obj: { data: { spec: { a: 1, list: [1, 2] } }, revision: 1 },
      want: { 'f:data': { 'f:spec': { '.': {}, 'f:a': {}, 'f:list': {} } }, 'f:revision': {} },
    },
    {
      name: 'empty containers own nothing',
      def: DEPLOYMENT,
      obj: { spec: { template: { spec: {} } }, metadata: { labels: {} } },
      want: {},
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      expect(fieldSetOf(c.obj, schemas, c.def).toFieldsV1()).toEqual(c.want);
    });
  }
});

describe('managedFields entries', () => {
  const entry = (manager: string, operation: 'Apply' | 'Update', time: string, fields: Any = { 'f:data': { 'f:x': {} } }) => ({
    manager,
    operation,
    apiVersion: 'v1',
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  });

  test('decode and encode: sorted by operation, time, manager', () => {
    const list = [
      entry('z', 'Update', '2024-01-01T00:00:00Z'),
      entry('b', 'Apply', '2024-01-02T00:00:00Z'),
      entry('a', 'Update', '2024-01-01T00:00:00Z'),
      entry('c', 'Apply', '2024-01-01T00:00:00Z'),
    ];
    const managed = decodeManagedFields(list);
    expect([...managed.keys()]).toContain('{"manager":"b","operation":"Apply"}');
    expect([...managed.keys()]).toContain('{"manager":"a","operation":"Update","apiVersion":"v1"}');
    const out = encodeManagedFields(managed)!;
    expect(out.map((e) => e.manager)).toEqual(['c', 'b', 'a', 'z']);
    expect(Object.keys(out[0]!)).toEqual(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  });

  const bad: { name: string; list: Any; message: string }[] = [
    { name: 'bad operation', list: [{ ...entry('a', 'Apply', ''), operation: 'Patch' }], message: 'operation must be `Apply` or `Update`' },
    { name: 'no apiVersion', list: [{ ...entry('a', 'Apply', ''), apiVersion: '' }], message: 'apiVersion must not be empty' },
    {
      name: 'no fieldsType',
      list: [{ ...entry('a', 'Apply', ''), fieldsType: '' }],
      message: 'missing fieldsType in managed fields entry 0',
    },
    {
      name: 'other fieldsType',
      list: [{ ...entry('a', 'Apply', ''), fieldsType: 'FieldsV2' }],
      message: 'invalid fieldsType "FieldsV2" in managed fields entry 0',
    },
  ];
  for (const c of bad) test(c.name, () => expect(() => decodeManagedFields(c.list)).toThrow(c.message));

  test('reset marker', () => {
    expect(isResetManagedFields([{}])).toBe(true);
    expect(isResetManagedFields([{ manager: '' }])).toBe(true);
    expect(isResetManagedFields([])).toBe(false);
    expect(isResetManagedFields(undefined)).toBe(false);
    expect(isResetManagedFields([{ manager: 'x' }])).toBe(false);
    expect(isResetManagedFields([{}, {}])).toBe(false);
  });

  test('manager identifiers', () => {
    expect(managerId({ manager: 'm', operation: 'Apply', apiVersion: 'v1' })).toBe('{"manager":"m","operation":"Apply"}');
    expect(managerId({ manager: 'm', operation: 'Update', apiVersion: 'v1', subresource: 'status' })).toBe(
      '{"manager":"m","operation":"Update","apiVersion":"v1","subresource":"status"}',
    );
  });

  test('more than 10 Update entries: the oldest merge into ancient-changes', () => {
    const managed = new Map<string, ManagedEntry>();
    for (let i = 0; i < 12; i++) {
      const e: ManagedEntry = {
        manager: `m${i}`,
        operation: 'Update',
        apiVersion: 'v1',
        time: `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`,
        fields: FieldSet.of(f('data', `k${i}`)),
      };
      managed.set(managerId(e), e);
    }
    const applier: ManagedEntry = { manager: 'a', operation: 'Apply', apiVersion: 'v1', fields: FieldSet.of(f('data', 'z')) };
    managed.set(managerId(applier), applier);
    capUpdateManagers(managed);
    const list = encodeManagedFields(managed)!;
    const updaters = list.filter((e) => e.operation === 'Update');
    expect(updaters).toHaveLength(10);
    const bucket = list.find((e) => e.manager === 'ancient-changes')!;
    expect(bucket.fieldsV1).toEqual({ 'f:data': { 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
    expect(bucket.time).toBe('2024-01-01T00:00:02Z');
    expect(list.some((e) => e.manager === 'a')).toBe(true);
  });
});

describe('decoded trees shared (fieldSetOfTree)', () => {
  const tree = () => ({ 'f:data': { 'f:v': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:patched': {} } } });

  test('equal trees of different objects decode to one set, equal to a fresh decode', () => {
    const a = decodeManagedFields([{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree() }]);
    const b = decodeManagedFields([{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree() }]);
    const fa = [...a.values()][0]!.fields;
    const fb = [...b.values()][0]!.fields;
    expect(fa).toBe(fb);
    expect(fa.equals(FieldSet.fromFieldsV1(tree()))).toBe(true);
    expect(fa.toFieldsV1()).toEqual(tree());
  });

  test('set operations on a shared set leave it as it was', () => {
    const m = decodeManagedFields([{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree() }]);
    const shared = [...m.values()][0]!.fields;
    const less = shared.difference(FieldSet.of([fieldPE('data'), fieldPE('v')]));
    expect(less.toFieldsV1()).toEqual({ 'f:metadata': { 'f:labels': { '.': {}, 'f:patched': {} } } });
    const again = decodeManagedFields([{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree() }]);
    expect([...again.values()][0]!.fields).toBe(shared);
    expect(shared.toFieldsV1()).toEqual(tree());
  });

  test('a tree that does not decode fails every time; a large tree is decoded each time', () => {
    const bad = { 'f:data': 'not an object' };
    for (let i = 0; i < 2; i++)
      expect(() => decodeManagedFields([{ operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: bad }])).toThrow(
        'error decoding versioned set from entry 0',
      );
    const big: Record<string, unknown> = {};
    for (let i = 0; i < 400; i++) big[`f:key-${String(i).padStart(4, '0')}`] = {};
    const decode = () =>
      [
        ...decodeManagedFields([
          { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': big } },
        ]).values(),
      ][0]!.fields;
    const x = decode();
    expect(decode()).not.toBe(x);
    expect(decode().equals(x)).toBe(true);
  });
});
