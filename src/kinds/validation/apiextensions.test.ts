import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { customResourceDefinition } from './apiextensions';
import { goRegexpError } from './structural';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

/** A CRD as a client writes it (x-kubernetes-* keys), decoded as the registry decodes it. */
function crd(schema: Any, spec: Any = {}): Obj {
  const o: Any = {
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      ...spec,
    },
  };
  customResourceDefinition.decode?.(o);
  return o;
}
const texts = (o: Obj, old?: Obj): string[] =>
  (customResourceDefinition.validate?.(o, old) ?? []).map((e) => `${e.field}: ${fieldErrorText(e)}`);
/** The schema's own path in the errors. */
const S = 'spec.validation.openAPIV3Schema';
/** A schema with the given properties at the root. */
const root = (properties: Any, more: Any = {}) => ({ type: 'object', properties, ...more });
const intOrString = [{ type: 'integer' }, { type: 'string' }];

describe('structural schemas', () => {
  const cases: [string, Any, string[]][] = [
    ['a structural schema', root({ spec: { type: 'object', properties: { a: { type: 'string' } } } }), []],
    [
      'type at every level',
      { properties: { spec: { properties: { a: { type: 'string' } } }, list: { type: 'array', items: {} } } },
      [
        `${S}.properties[list].items.type: Required value: must not be empty for specified array items`,
        `${S}.properties[spec].type: Required value: must not be empty for specified object fields`,
        `${S}.type: Required value: must not be empty at the root`,
      ],
    ],
    ['object at the root', { type: 'string' }, [`${S}.type: Invalid value: "string": must be object at the root`]],
    ['items for arrays', root({ l: { type: 'array' } }), [`${S}.properties[l].items: Required value: must be specified`]],
    [
      'additionalProperties at the root',
      { type: 'object', additionalProperties: { type: 'string' } },
      [`${S}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'properties and additionalProperties',
      root({ m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } }),
      [`${S}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    ['a map', root({ m: { type: 'object', additionalProperties: { type: 'string' } } }), []],
    [
      'x-kubernetes-preserve-unknown-fields: false',
      root({ x: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } }),
      [`${S}.properties[x].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
    ],
    [
      'x-kubernetes-int-or-string: no type, or the anyOf and allOf patterns',
      root({
        a: { 'x-kubernetes-int-or-string': true },
        b: { 'x-kubernetes-int-or-string': true, anyOf: intOrString },
        c: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: intOrString }, { pattern: '^[0-9]+%?$' }] },
      }),
      [],
    ],
    [
      'x-kubernetes-int-or-string: other types in junctors, preserved or embedded',
      root({
        d: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'number' }] },
        e: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true },
        f: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-embedded-resource': true },
      }),
      [
        `${S}.properties[d].anyOf[0].type: Forbidden: must be empty to be structural`,
        `${S}.properties[d].anyOf[1].type: Forbidden: must be empty to be structural`,
        `${S}.properties[e].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
        `${S}.properties[f].type: Required value: must be object if x-kubernetes-embedded-resource is true`,
        `${S}.properties[f].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
        `${S}.properties[f].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ].sort(),
    ],
    [
      'x-kubernetes-embedded-resource',
      root({
        ok: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        r: { type: 'string', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        s: { type: 'object', 'x-kubernetes-embedded-resource': true },
        t: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { kind: { type: 'integer' } },
          additionalProperties: true,
        },
      }),
      [
        `${S}.properties[r].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
        `${S}.properties[s].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
        `${S}.properties[t].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set`,
        `${S}.properties[t].properties[kind].type: Invalid value: "integer": must be string`,
      ],
    ],
    [
      'metadata at the root narrows name and generateName only',
      root({ metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, generateName: { type: 'string' } } } }),
      [],
    ],
    [
      'metadata at the root with more',
      root({ metadata: { type: 'object', properties: { name: { type: 'string' }, labels: { type: 'object' } } } }),
      [
        `${S}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'metadata at the root with a value validation',
      root({ metadata: { type: 'object', required: ['name'] }, kind: { type: 'integer' } }),
      [
        `${S}.properties[kind].type: Invalid value: "integer": must be string`,
        `${S}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'metadata of the root of another type',
      root({ metadata: { type: 'string' } }),
      [`${S}.properties[metadata].type: Invalid value: "string": must be object`],
    ],
    [
      'value validations do not specify',
      root({
        a: {
          type: 'string',
          allOf: [
            {
              type: 'string',
              title: 't',
              description: 'd',
              nullable: true,
              default: 'x',
              additionalProperties: true,
              externalDocs: { url: 'https://example.com' },
              'x-kubernetes-preserve-unknown-fields': true,
              'x-kubernetes-validations': [{ rule: 'true' }],
            },
          ],
        },
      }),
      [
        `${S}.properties[a].allOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
        `${S}.properties[a].allOf[0].default: Forbidden: must be undefined to be structural`,
        `${S}.properties[a].allOf[0].description: Forbidden: must be empty to be structural`,
        `${S}.properties[a].allOf[0].externalDocs: Forbidden: must be undefined to be structural`,
        `${S}.properties[a].allOf[0].nullable: Forbidden: must be false to be structural`,
        `${S}.properties[a].allOf[0].title: Forbidden: must be empty to be structural`,
        `${S}.properties[a].allOf[0].type: Forbidden: must be empty to be structural`,
        `${S}.properties[a].allOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
        `${S}.properties[a].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
      ],
    ],
    [
      'value validations: extensions and metadata',
      root(
        { metadata: { type: 'object' }, l: { type: 'array', items: { type: 'string' } } },
        { oneOf: [{ properties: { metadata: {}, l: { 'x-kubernetes-list-map-keys': ['a'], 'x-kubernetes-map-type': 'atomic' } } }] },
      ),
      [
        `${S}.oneOf[0].properties[l].x-kubernetes-list-map-keys: Forbidden: must be empty to be structural`,
        `${S}.oneOf[0].properties[l].x-kubernetes-map-type: Forbidden: must be undefined to be structural`,
        `${S}.oneOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
        // The per-node extension rules run on junctor schemas too.
        `${S}.oneOf[0].properties[l].type: Required value: must be object if x-kubernetes-map-type is specified`,
        `${S}.oneOf[0].properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
    [
      'what junctors name is specified outside them',
      root(
        { spec: { type: 'object', properties: { a: { type: 'string' } } } },
        {
          anyOf: [{ properties: { spec: { properties: { a: { minLength: 1 }, b: { minLength: 1 } } } } }],
          not: { properties: { status: { required: ['x'] } } },
        },
      ),
      [
        `${S}.properties[spec].properties[b]: Required value: because it is defined in ${S}.anyOf[0].properties[spec].properties[b]`,
        `${S}.properties[status]: Required value: because it is defined in ${S}.not.properties[status]`,
      ],
    ],
    [
      'patterns in Go syntax',
      root({ a: { type: 'string', pattern: '^(?!x)' }, b: { type: 'string', pattern: '(a' } }),
      [
        `${S}.properties[a].pattern: Invalid value: "^(?!x)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?!\``,
        `${S}.properties[b].pattern: Invalid value: "(a": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): \`(a\``,
      ],
    ],
    ['nullable at the root', { type: 'object', nullable: true }, [`${S}.nullable: Forbidden: nullable cannot be true at the root`]],
    [
      'unsupported OpenAPI',
      root({
        a: { type: 'string', $ref: '#/definitions/x' },
        b: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        c: { type: 'null' },
        d: { type: 'date' },
        e: { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      }),
      [
        `${S}.properties[a].$ref: Forbidden: $ref is not supported`,
        `${S}.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
        `${S}.properties[c].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
        `${S}.properties[c].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
        `${S}.properties[d].type: Unsupported value: "date": supported values: "array", "boolean", "integer", "number", "object", "string"`,
        `${S}.properties[e].patternProperties: Forbidden: patternProperties is not supported`,
      ],
    ],
    [
      'what has no structural form, alone',
      { type: 'object', $schema: 'http://json-schema.org/draft-04/schema#' },
      [`${S}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`],
    ],
  ];
  for (const [name, schema, want] of cases) test(name, () => expect(texts(crd(schema))).toEqual(want));
});

describe('list and map types', () => {
  const keyed = (over: Any = {}, item: Any = {}) => ({
    type: 'array',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } }, ...item },
    ...over,
  });
  const cases: [string, Any, string[]][] = [
    [
      'valid lists',
      root({
        ports: keyed(),
        defaulted: keyed({}, { required: [], properties: { name: { type: 'string', default: 'http' } } }),
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        pairs: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', 'x-kubernetes-map-type': 'atomic' } },
        raw: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'object' } },
        m: { type: 'object', 'x-kubernetes-map-type': 'granular' },
      }),
      [],
    ],
    [
      'a map list without keys',
      root({ l: keyed({ 'x-kubernetes-list-map-keys': undefined }) }),
      [`${S}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`],
    ],
    [
      'keys without the map type',
      root({ l: keyed({ 'x-kubernetes-list-type': undefined }), s: keyed({ 'x-kubernetes-list-type': 'set' }) }),
      [
        `${S}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
        `${S}.properties[s].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
        `${S}.properties[s].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
    [
      'keys that are not scalar item fields',
      root({
        l: keyed({ 'x-kubernetes-list-map-keys': ['name', 'missing', 'name'] }),
        o: keyed({ 'x-kubernetes-list-map-keys': ['sub'] }, { required: ['sub'], properties: { sub: { type: 'object' } } }),
        i: keyed({}, { type: 'string', required: undefined, properties: undefined }),
      }),
      [
        `${S}.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{"name", "missing", "name"}: entries must all be names of item properties`,
        `${S}.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{"name", "missing", "name"}: must not contain duplicate entries`,
        `${S}.properties[o].items.properties[sub].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
        `${S}.properties[i].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
      ],
    ],
    [
      'keys required or defaulted, never null; items never null',
      root({
        l: keyed({}, { required: [], nullable: true, properties: { name: { type: 'string', nullable: true } } }),
      }),
      [
        `${S}.properties[l].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
        `${S}.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
        `${S}.properties[l].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
      ],
    ],
    [
      'sets of atomic items',
      root({
        s: {
          type: 'array',
          'x-kubernetes-list-type': 'set',
          items: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        },
      }),
      [
        `${S}.properties[s].items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
    [
      'unknown list and map types, and on other types',
      root({
        a: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' },
        b: { type: 'string', 'x-kubernetes-list-type': 'atomic' },
        c: { type: 'object', 'x-kubernetes-map-type': 'sometimes' },
        d: { type: 'string', 'x-kubernetes-map-type': 'atomic' },
      }),
      [
        `${S}.properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
        `${S}.properties[b].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
        `${S}.properties[c].x-kubernetes-map-type: Unsupported value: "sometimes": supported values: "atomic", "granular"`,
        `${S}.properties[d].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
      ],
    ],
  ];
  for (const [name, schema, want] of cases) test(name, () => expect(texts(crd(schema))).toEqual(want));
});

describe('defaults', () => {
  const spec = (properties: Any, more: Any = {}) => root({ spec: { type: 'object', properties, ...more } });
  const cases: [string, Any, string[]][] = [
    [
      'valid defaults',
      spec(
        {
          replicas: { type: 'integer', minimum: 1, default: 1 },
          color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
          nested: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x' } },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { anything: [1] } },
          amount: { 'x-kubernetes-int-or-string': true, default: '10%' },
        },
        { default: {} },
      ),
      [],
    ],
    [
      'of the wrong type',
      spec({ replicas: { type: 'integer', default: 'two' }, amount: { 'x-kubernetes-int-or-string': true, default: 1.5 } }),
      [
        `${S}.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`,
        `${S}.properties[spec].properties[amount].default: Invalid value: "number":  in body must be of type integer,string: "number"`,
      ],
    ],
    [
      'outside the value validations',
      spec({
        color: { type: 'string', enum: ['red', 'blue'], default: 'green' },
        size: { type: 'integer', maximum: 10, default: 11 },
        nested: { type: 'object', required: ['a'], properties: { a: { type: 'string' }, n: { type: 'integer' } }, default: { n: 'one' } },
      }),
      [
        `${S}.properties[spec].properties[color].default: Unsupported value: "green": supported values: "red", "blue"`,
        `${S}.properties[spec].properties[size].default: Invalid value: 11:  in body should be less than or equal to 10`,
        `${S}.properties[spec].properties[nested].default.a: Required value`,
        `${S}.properties[spec].properties[nested].default.n: Invalid value: "string": n in body must be of type integer: "string"`,
      ],
    ],
    [
      'with unknown fields',
      spec({ nested: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 1, c: [true] } } }),
      [
        `${S}.properties[spec].properties[nested].default: Invalid value: map[string]interface {}{"a":"x", "b":1, "c":[]interface {}{true}}: must not have unknown fields`,
      ],
    ],
    [
      'in the root metadata',
      root({ metadata: { type: 'object', properties: { name: { type: 'string', default: 'x' } } } }),
      [`${S}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`],
    ],
    [
      'in maps of embedded metadata',
      root({
        r: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: {
            metadata: {
              type: 'object',
              properties: { labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } } },
            },
          },
        },
      }),
      [
        `${S}.properties[r].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
      ],
    ],
    [
      'embedded resources need apiVersion, kind and valid metadata',
      root({
        r: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
          default: { apiVersion: 'a/b/c', metadata: { name: 'a/b' } },
        },
        s: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, default: { kind: 1 } },
      }),
      [
        `${S}.properties[r].default.kind: Required value`,
        `${S}.properties[r].default.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
        `${S}.properties[r].default.metadata.name: Invalid value: "a/b": may not contain '/'`,
        `${S}.properties[s].default.kind: Invalid value: 1: must be a string`,
      ],
    ],
    [
      'against the node rules',
      spec({
        s: { type: 'string', default: 'abc', 'x-kubernetes-validations': [{ rule: 'self.size() > 5', message: 'too short' }] },
        o: {
          type: 'object',
          properties: { min: { type: 'integer' }, max: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.min <= self.max' }],
          default: { min: 2, max: 1 },
        },
      }),
      [
        `${S}.properties[spec].properties[s].default: Invalid value: "string": too short`,
        `${S}.properties[spec].properties[o].default: Invalid value: "object": failed rule: self.min <= self.max`,
      ],
    ],
  ];
  for (const [name, schema, want] of cases) test(name, () => expect(texts(crd(schema))).toEqual(want));

  test('are checked only in a structural schema', () => {
    expect(texts(crd({ properties: { a: { type: 'integer', default: 'x' } } }))).toEqual([
      `${S}.type: Required value: must not be empty at the root`,
    ]);
  });
});

describe('the CRD around the schema', () => {
  test('rules are compiled only in a valid schema', () => {
    const rules = { 'x-kubernetes-validations': [{ rule: 'self.a <=' }] };
    expect(texts(crd(root({ a: { type: 'integer' } }, rules)))[0]).toStartWith(`${S}.x-kubernetes-validations[0].rule: Invalid value:`);
    expect(texts(crd({ properties: { a: { type: 'integer' } }, ...rules }))).toEqual([
      `${S}.type: Required value: must not be empty at the root`,
    ]);
  });

  test('every version is checked at its own path', () => {
    const o = crd(root({}), {
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: root({}) } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'array' } } },
      ],
    });
    expect(texts(o)).toEqual([
      'spec.versions[1].schema.openAPIV3Schema.items: Required value: must be specified',
      'spec.versions[1].schema.openAPIV3Schema.type: Invalid value: "array": must be object at the root',
    ]);
  });

  test('versions with one schema report its errors once, under spec.validation (the reference converts it there)', () => {
    const bad = { type: 'object', properties: { a: {} } };
    const o = crd(root({}), {
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: bad } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: bad } },
      ],
    });
    expect(texts(o)).toEqual([
      'spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields',
    ]);
  });

  test('spec.preserveUnknownFields is refused unless the stored CRD has it', () => {
    const o = crd(root({}), { preserveUnknownFields: true });
    expect(texts(o)).toEqual([
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
    expect(texts(o, o)).toEqual([]);
  });

  test('an update keeps what the stored CRD already broke (ratcheting)', () => {
    const nonStructural = crd({ type: 'object', properties: { a: {} } });
    expect(texts(nonStructural)).toEqual([`${S}.properties[a].type: Required value: must not be empty for specified object fields`]);
    expect(texts(nonStructural, nonStructural)).toEqual([]);
    const unpruned = crd(root({ o: { type: 'object', properties: {}, default: { x: 1 } } }));
    expect(texts(unpruned)).toHaveLength(1);
    expect(texts(unpruned, unpruned)).toEqual([]);
    const badType = crd(root({ d: { type: 'date' } }));
    expect(texts(badType, badType)).toEqual([]);
    // A stored CRD that breaks nothing ratchets nothing.
    expect(texts(nonStructural, crd(root({})))).toHaveLength(1);
  });
});

test('Go regexp syntax', () => {
  expect(goRegexpError('^[a-z]([-a-z0-9]*[a-z0-9])?$')).toBeUndefined();
  expect(goRegexpError('^\\d+\\-x$')).toBeUndefined();
  expect(goRegexpError('(a)\\1')).toBe('error parsing regexp: invalid escape sequence: `\\1`');
  expect(goRegexpError('a)')).toBe('error parsing regexp: unexpected ): `a)`');
  expect(goRegexpError('x[a-')).toBe('error parsing regexp: missing closing ]: `[a-`');
  expect(goRegexpError('*a')).toBe('error parsing regexp: missing argument to repetition operator: `*`');
});
