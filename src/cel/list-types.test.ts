/**
 * Set and map list semantics (src/cel/lists-typed.ts), with the reference's table cases
 * (apiextensions-apiserver schema/cel validation_test.go: "lists", "listSets", "listMaps",
 * "listMaps with unsupported identity characters", "null values in container types") plus the
 * cases that show which operand decides. Values are typed by toCelShaped, as custom-resource
 * rules type self and oldSelf.
 */
import { describe, expect, test } from 'bun:test';
import { engineEnvironment } from './env.ts';
import { celEnv, compile, executable, fromCel } from './index.ts';
import { type ListShape, toCelShaped } from './list-shape.ts';
import { TypedList } from './lists-typed.ts';

const env = celEnv({ self: 'dyn' });
const SET: ListShape = { list: { type: 'set' } };
const mapList = (...keys: string[]): ListShape => ({ list: { type: 'map', keys } });

interface Case {
  name: string;
  self: unknown;
  shape: ListShape | undefined;
  /** Rules that hold. */
  valid: string[];
  /** Rules that evaluate to false. */
  invalid?: string[];
}

const cases: Case[] = [
  {
    name: 'atomic lists keep order',
    self: { val1: [1, 2, 3], val2: [1, 2, 3] },
    shape: undefined,
    valid: [
      'self.val1 == [1, 2, 3] && [1, 2, 3] == self.val1 && self.val1 == self.val2',
      '1 in self.val1',
      'self.val2[0] in self.val1',
      '!(0 in self.val1)',
      'self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]',
      'self.val1 + [4, 5] == [1, 2, 3, 4, 5]',
    ],
    invalid: ['self.val1 == [3, 2, 1]'],
  },
  {
    name: 'set lists: equality ignores order, + is a union',
    self: { val1: ['a', 'b', 'c'], val2: ['a', 'c', 'b'] },
    shape: { properties: { val1: SET, val2: SET } },
    valid: [
      "self.val1 == ['c', 'b', 'a']",
      'self.val1 == self.val2',
      "'a' in self.val1",
      'self.val2[0] in self.val1',
      "!('x' in self.val1)",
      "self.val1 + self.val2 == ['a', 'b', 'c']",
      "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
      // the union keeps the left operand's order, then the new elements in theirs
      "(self.val2 + ['d', 'a', 'e'])[1] == 'c' && (self.val2 + ['d', 'a', 'e'])[4] == 'e'",
      'size(self.val1 + self.val2) == 3',
      "self.val1 != ['a', 'b']",
      "self.val1 != ['a', 'b', 'd']",
      // lists, macros and list functions work as on any list
      'type(self.val1) == list',
      "self.val1[2] == 'c' && size(self.val1) == 3 && self.val1.size() == 3",
      'self.val1.all(x, x in self.val2)',
      "self.val1.exists_one(x, x == 'b')",
      "self.val1.indexOf('b') == 1",
      // a macro's result is an ordinary list
      "self.val1.map(x, x) == ['a', 'b', 'c'] && self.val1.filter(x, true) != ['c', 'b', 'a']",
    ],
    invalid: [
      // the left operand decides: a literal on the left compares in order ...
      "['c', 'b', 'a'] == self.val1",
      // ... and concatenates
      "['c'] + self.val1 == ['c', 'a', 'b']",
    ],
  },
  {
    name: 'set lists of integers compare as CEL numbers',
    self: { ints: [1, 2, 3] },
    shape: { properties: { ints: SET } },
    valid: ['self.ints == [3, 1, 2]', 'self.ints + [2, 4] == [4, 3, 2, 1]', 'size(self.ints + [3]) == 3'],
  },
  {
    name: 'map lists: equality by key ignores order, + merges by key',
    self: {
      objs: [
        [
          { k: 'a', v: '1' },
          { k: 'b', v: '2' },
        ],
        [
          { k: 'b', v: '2' },
          { k: 'a', v: '1' },
        ],
        [
          { k: 'b', v: '3' },
          { k: 'a', v: '1' },
        ],
        [{ k: 'c', v: '4' }],
      ],
    },
    shape: { properties: { objs: { items: mapList('k') } } },
    valid: [
      'self.objs[0] == self.objs[1]',
      'self.objs[0] + self.objs[2] == self.objs[2]',
      'self.objs[2] + self.objs[0] == self.objs[0]',
      'self.objs[0] == [self.objs[0][0], self.objs[0][1]]',
      'self.objs[0] == [self.objs[0][1], self.objs[0][0]]',
      'self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]',
      'size(self.objs[0] + [self.objs[3][0]]) == 3',
      // replaced in place, appended at the end
      "(self.objs[0] + self.objs[2])[1].v == '3' && (self.objs[0] + self.objs[3])[2].k == 'c'",
      "self.objs[0] + self.objs[2] == [{'k': 'b', 'v': '3'}, {'k': 'a', 'v': '1'}]",
      'self.objs[0] != self.objs[2]',
      'self.objs[0] != self.objs[3]',
    ],
    invalid: ['[self.objs[0][1], self.objs[0][0]] == self.objs[0]'],
  },
  {
    name: 'map lists with several keys, some not identifiers',
    self: {
      objs: [
        [
          { 'k!': 'a', 'k.': '1' },
          { 'k!': 'b', 'k.': '2' },
        ],
        [
          { 'k!': 'b', 'k.': '2' },
          { 'k!': 'a', 'k.': '1' },
        ],
        [
          { 'k!': 'b', 'k.': '2' },
          { 'k!': 'c', 'k.': '1' },
        ],
        [
          { 'k!': 'b', 'k.': '2' },
          { 'k!': 'a', 'k.': '3' },
        ],
      ],
    },
    shape: { properties: { objs: { items: mapList('k!', 'k.') } } },
    valid: ['self.objs[0] == self.objs[1]', 'self.objs[0] != self.objs[2]', 'self.objs[0] != self.objs[3]'],
  },
  {
    name: 'nested equality follows the nested list types',
    self: { x: { tags: ['a', 'b'], n: 1 }, y: { tags: ['b', 'a'], n: 1 }, z: { tags: ['a', 'c'], n: 1 } },
    shape: { properties: { x: { properties: { tags: SET } }, y: { properties: { tags: SET } }, z: { properties: { tags: SET } } } },
    valid: ['self.x == self.y', 'self.x != self.z', '[self.x] == [self.y]'],
  },
  {
    name: 'null values in set lists',
    self: { s: [null, 'not-nil'] },
    shape: { properties: { s: SET } },
    valid: ['self.s.size() == 2', 'type(self.s[0]) == null_type'],
  },
];

function run(expr: string, self: unknown): unknown {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(c.errors.join('; '));
  return executable(c.program)({ self });
}

describe('typed lists (x-kubernetes-list-type set and map)', () => {
  for (const c of cases) {
    describe(c.name, () => {
      const self = toCelShaped(c.self, c.shape);
      for (const rule of c.valid) test(rule, () => expect(run(rule, self)).toBe(true));
      for (const rule of c.invalid ?? []) test(`false: ${rule}`, () => expect(run(rule, self)).toBe(false));
    });
  }

  test('toCelShaped types only the lists the shape names', () => {
    const v = toCelShaped(
      { a: ['x'], b: ['y'], c: { d: [[1]] } },
      { properties: { a: SET, c: { properties: { d: { items: SET } } } } },
    ) as {
      a: unknown[];
      b: unknown[];
      c: { d: unknown[][] };
    };
    expect(v.a).toBeInstanceOf(TypedList);
    expect(v.b).not.toBeInstanceOf(TypedList);
    expect(v.c.d).not.toBeInstanceOf(TypedList);
    expect(v.c.d[0]).toBeInstanceOf(TypedList);
    expect(v.c.d[0]?.[0]).toBe(1n);
    // back to JSON as a plain array
    const json = fromCel(v) as { a: unknown[] };
    expect(Array.isArray(json.a) && Object.getPrototypeOf(json.a) === Array.prototype).toBe(true);
    expect(json.a).toEqual(['x']);
  });

  test('a typed + gives a typed list; a result is converted back to plain JSON', () => {
    const self = toCelShaped({ t: ['a', 'b'] }, { properties: { t: SET } });
    const sum = run("self.t + ['b', 'c']", self);
    expect(sum).toBeInstanceOf(TypedList);
    expect(fromCel(sum)).toEqual(['a', 'b', 'c']);
  });

  test('environments built after the first share the extended operators once', () => {
    engineEnvironment({ other: 'dyn' });
    const e = engineEnvironment({ self: 'dyn' });
    const p = e.parse('self == self');
    p.check();
    const lists = (p.ast as unknown as { candidates: { declarations: { signature: string }[] } }).candidates.declarations.filter((d) =>
      d.signature.startsWith('list<V> == list<V>'),
    );
    expect(lists.length).toBe(1);
    expect(p({ self: toCelShaped(['a'], SET) })).toBe(true);
  });
});
