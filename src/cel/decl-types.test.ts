import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '../api/meta';
import { SchemaSet } from '../schema/engine';
import generated from '../schema/generated/definitions.json';
import type { Definitions } from '../schema/types';
import {
  type DeclType,
  declType,
  type FieldNames,
  jsonSchemaView,
  MAX_DEPTH,
  MAX_REQUEST_BYTES,
  modelSchemaView,
  type SchemaView,
  TypeDeclarations,
} from './decl-types';
import { engineEnvironment } from './env';

/** Whether `expr` type-checks with `self` (and `oldSelf`) of the view's declared type; else the error. */
function check(view: SchemaView | undefined, expr: string, names: FieldNames = 'escaped', resource = false): string {
  const env = engineEnvironment({});
  const t = new TypeDeclarations(env, names).declare(declType(view, resource), 'self');
  env.registerVariable('self', t);
  env.registerVariable('oldSelf', t);
  const r = env.check(expr);
  return r.valid ? 'ok' : (String(r.error?.message).split('\n')[0] as string);
}

const typeName = (s: JsonObject): string =>
  new TypeDeclarations(engineEnvironment({}), 'escaped').declare(declType(jsonSchemaView(s)), 'self');

describe('schema to CEL type', () => {
  const cases: [JsonObject, string][] = [
    [{ type: 'integer' }, 'int'],
    [{ type: 'number' }, 'double'],
    [{ type: 'boolean' }, 'bool'],
    [{ type: 'string' }, 'string'],
    [{ type: 'string', format: 'byte' }, 'bytes'],
    [{ type: 'string', format: 'date-time' }, 'google.protobuf.Timestamp'],
    [{ type: 'string', format: 'date' }, 'google.protobuf.Timestamp'],
    [{ type: 'string', format: 'duration' }, 'google.protobuf.Duration'],
    [{ 'x-svc-int-or-string': true }, 'dyn'],
    [{ 'x-svc-preserve-unknown-fields': true }, 'dyn'],
    [{ type: 'object', 'x-svc-preserve-unknown-fields': true, properties: { a: { type: 'integer' } } }, 'dyn'],
    [{ type: 'array', items: { type: 'string' } }, 'list<string>'],
    [{ type: 'object', additionalProperties: { type: 'integer' } }, 'map<string, int>'],
    [{ type: 'array', items: { type: 'array', items: { type: 'number' } } }, 'list<list<double>>'],
    [{ type: 'object', properties: { a: { type: 'integer' } } }, 'decl.self'],
    [{ type: 'object' }, 'decl.self'],
  ];
  for (const [schema, want] of cases) test(JSON.stringify(schema), () => expect(typeName(schema)).toBe(want));
});

describe('expressions checked against a custom resource node', () => {
  const spec = jsonSchemaView({
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      'max-size': { type: 'integer' },
      at: { type: 'string', format: 'date-time' },
      empty: { type: 'object' },
      free: { type: 'object', 'x-svc-preserve-unknown-fields': true },
      ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      template: { type: 'object', 'x-svc-embedded-resource': true, properties: { size: { type: 'integer' } } },
      namespace: { type: 'string' },
    },
  });
  const cases: [string, string][] = [
    ['self.replicas > 0', 'ok'],
    ['self.replicass > 0', 'No such key: replicass'],
    ["self.replicas == 'x'", 'no such overload: int == string'],
    ['self.max__dash__size <= 10', 'ok'],
    ['self.__namespace__ != ""', 'ok'],
    // Typed as the reference types them (the value is a JSON string at run time).
    ["timestamp(self.at) < timestamp('2030-01-01T00:00:00Z')", 'ok'],
    ["self.at == 'x'", 'no such overload: google.protobuf.Timestamp == string'],
    // Every type compares with == and != (cel-go's equality), objects and lists of them too.
    ['self == oldSelf', 'ok'],
    ['self.ports != oldSelf.ports && self.ports.all(p, p.name != "")', 'ok'],
    ['self.empty.x == 1', 'No such key: x'],
    ['self.free.anything == 1', 'ok'],
    ["self.template.kind == 'Pod' && self.template.metadata.name != '' && self.template.size < 3", 'ok'],
    ['self.template.metadata.labels.size() > 0', 'No such key: labels'],
  ];
  for (const [expr, want] of cases) test(expr, () => expect(check(spec, expr)).toBe(want));

  test('the root of a resource has apiVersion, kind and metadata name and generateName', () => {
    const root = jsonSchemaView({ type: 'object', properties: { spec: { type: 'object' } } });
    expect(check(root, "self.metadata.name.startsWith('a') && self.kind != self.apiVersion", 'escaped', true)).toBe('ok');
    expect(check(root, 'self.metadata.labels.size() > 0', 'escaped', true)).toBe('No such key: labels');
    expect(check(root, 'self.metadata.name == ""')).toBe('No such key: metadata');
  });

  test('JSON field names for values that are not renamed (policies)', () => {
    expect(check(spec, 'self.namespace != ""', 'json')).toBe('ok');
    expect(check(spec, "self['max-size'] > 1 && self.`max-size` > 1", 'json')).toBe('ok');
    expect(check(spec, 'self.max__dash__size > 1', 'json')).toBe('No such key: max__dash__size');
  });
});

describe('sizes (the reference SchemaDeclType MaxElements and MinSerializedSize)', () => {
  const request = MAX_REQUEST_BYTES - 2;
  const cases: [string, JsonObject, number, number][] = [
    ['string', { type: 'string' }, request, 2],
    ['maxLength in runes, 4 bytes each', { type: 'string', maxLength: 10 }, 40, 2],
    ['the longest enum value', { type: 'string', enum: ['a', 'bcd'] }, 3, 2],
    ['bytes', { type: 'string', format: 'byte', maxLength: 10 }, 10, 2],
    ['date-time', { type: 'string', format: 'date-time', maxLength: 1000 }, 32, 21],
    ['date', { type: 'string', format: 'date' }, 12, 12],
    ['duration', { type: 'string', format: 'duration' }, 32, 3],
    ['int-or-string', { 'x-svc-int-or-string': true }, request, 1],
    ['int-or-string with maxLength', { 'x-svc-int-or-string': true, maxLength: 5 }, 20, 1],
    ['integers', { type: 'array', items: { type: 'integer' } }, Math.floor(request / 2), 2],
    ['booleans by maxItems', { type: 'array', maxItems: 7, items: { type: 'boolean' } }, 7, 2],
    [
      'objects with a required name',
      { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
      Math.floor(request / (2 + 4 + 2 + 4 + 1)),
      2,
    ],
    [
      'a required field with a default is filled in',
      { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'integer', default: 1 } } } },
      Math.floor(request / 3),
      2,
    ],
    ['map of booleans', { type: 'object', additionalProperties: { type: 'boolean' } }, Math.floor(request / 10), 2],
    ['object', { type: 'object', required: ['a'], properties: { a: { type: 'integer' }, b: { type: 'string' } } }, 2, 2 + 1 + 1 + 4],
  ];
  for (const [name, schema, max, min] of cases)
    test(name, () => {
      const t = declType(jsonSchemaView(schema));
      expect([t.maxElements, t.minSerializedSize]).toEqual([max, min]);
    });
});

describe('depth and cycles', () => {
  test(`types reach ${MAX_DEPTH} levels below the variable, and no expression reaches further`, () => {
    let schema: JsonObject = { type: 'integer' };
    for (let i = 0; i < MAX_DEPTH + 50; i++) schema = { type: 'array', items: schema };
    let t: DeclType = declType(jsonSchemaView(schema));
    for (let i = 0; i < MAX_DEPTH; i++) t = t.elem as DeclType;
    expect(t.kind).toBe('list');
    expect((t.elem as DeclType).kind).toBe('dyn');
    // The parser's nesting limit: the expression itself counts one, each select one more.
    const env = engineEnvironment({ self: 'dyn' });
    expect(() => env.parse(`self${'.a'.repeat(MAX_DEPTH - 1)}`)).not.toThrow();
    expect(() => env.parse(`self${'.a'.repeat(MAX_DEPTH)}`)).toThrow(/maxDepth/);
  });

  test('a definition repeated inside itself is an object without fields (the reference PopulateRefs)', () => {
    const defs: Definitions = {
      'x.Node': { type: 'object', properties: { n: { type: 'integer' }, next: { type: 'ref', ref: 'x.Node' } } },
      'x.List': { type: 'object', properties: { head: { type: 'ref', ref: 'x.Node' } } },
    };
    const set = new SchemaSet(defs);
    const list = modelSchemaView('x.List', set);
    expect(check(list, 'self.head.n + self.head.next.n > 0', 'json')).toBe('No such key: n');
    expect(check(list, 'self.head.n > 0 && self.head == oldSelf.head', 'json')).toBe('ok');
  });

  test('built-in kinds are typed all the way down', () => {
    const set = new SchemaSet(generated as unknown as Definitions);
    const deployment = modelSchemaView('io.svc.api.apps.v1.Deployment', set);
    const caps = 'self.spec.template.spec.containers.all(c, c.securityContext.capabilities';
    expect(check(deployment, `${caps}.add.all(a, a != 'NET_ADMIN'))`, 'json', true)).toBe('ok');
    expect(check(deployment, `${caps}.addd.size() == 0)`, 'json', true)).toBe('No such key: addd');
    const meta = "self.metadata.namespace == 'x' && self.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z')";
    expect(check(deployment, meta, 'json', true)).toBe('ok');
  });
});
