import { describe, expect, test } from 'bun:test';
import { stringifyObject, stringifyStored } from './stringify';

// biome-ignore lint/suspicious/noExplicitAny: test objects
type Any = any;

const tree = { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } } } };
const pod = (mf: unknown, metaFirst?: Record<string, unknown>): Any => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { ...metaFirst, name: 'p', namespace: 'n', managedFields: mf, labels: { a: 'b' } },
  spec: { containers: [{ name: 'web', image: 'nginx', note: 'say "managedFields":"x"' }] },
});

/** stringifyStored as encodeStored calls it, against JSON.stringify of the same object. */
function both(o: Any): [string, string] {
  const { kind, apiVersion, metadata, ...rest } = o;
  const meta = { ...metadata };
  const before = JSON.stringify(meta);
  const fast = stringifyStored(kind, apiVersion, meta, rest);
  expect(JSON.stringify(meta)).toBe(before);
  return [fast, JSON.stringify({ kind, apiVersion, metadata: { ...metadata }, ...rest })];
}

describe('stringifyStored: the text JSON.stringify makes', () => {
  test.each([
    [
      'managedFields with quoted keys',
      pod([{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: 't', fieldsType: 'FieldsV1', fieldsV1: tree }]),
    ],
    [
      'two entries, one with a subresource',
      pod([
        { manager: 'a', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree },
        {
          manager: 'b',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': {} },
          subresource: 'status',
        },
      ]),
    ],
    [
      'members JSON leaves out',
      pod([{ manager: undefined, operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree, x: () => 1 }]),
    ],
    ['managedFields first in metadata', pod([{ operation: 'Update', fieldsV1: tree }], { managedFields: 1 })],
    [
      'trees without keys to escape (a ConfigMap)',
      pod([{ manager: 'm', operation: 'Update', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } }]),
    ],
    [
      'one tree to escape among others',
      pod([
        { manager: 'a', operation: 'Update', fieldsV1: { 'f:data': { 'f:a': {} } } },
        { manager: 'b', operation: 'Update', fieldsV1: tree },
      ]),
    ],
    ['not a list', pod({ odd: true })],
    ['a list of non-objects', pod(['x', 1, null])],
    ['an empty list', pod([])],
    ['null', pod(null)],
    ['fieldsV1 not an object', pod([{ operation: 'Update', fieldsV1: 'text' }])],
    ['without managedFields', { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' }, spec: {} }],
  ])('%s', (_name, o) => {
    const [fast, slow] = both(o);
    expect(fast).toBe(slow);
  });

  test('a shared fieldsV1 tree gives the same text each time, and a changed entry its own', () => {
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', time: 't1', fieldsType: 'FieldsV1', fieldsV1: tree };
    const a = both(pod([entry]));
    const b = both(pod([{ ...entry, time: 't2' }]));
    expect(a[0]).toBe(a[1]);
    expect(b[0]).toBe(b[1]);
    expect(b[0]).toContain('"time":"t2"');
  });
});

describe('stringifyObject', () => {
  test('an API object, a list and an object whose members are in another order', () => {
    const o = pod([{ manager: 'm', operation: 'Update', fieldsV1: tree }]);
    expect(stringifyObject(o)).toBe(JSON.stringify(o));
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [o] };
    expect(stringifyObject(list as Any)).toBe(JSON.stringify(list));
    const other = { metadata: o.metadata, kind: 'Pod', apiVersion: 'v1', spec: o.spec };
    expect(stringifyObject(other as Any)).toBe(JSON.stringify(other));
  });
});
