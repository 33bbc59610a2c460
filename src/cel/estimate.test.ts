import { describe, expect, test } from 'bun:test';
import type { JsonObject } from '../api/meta';
import { costErrorMessage, estimateCost } from './estimate';

// The reference's table (apiextensions-apiserver pkg/apiserver/schema/cel compilation_test.go
// TestCostEstimation): each schema without size limits (calc) and with maxItems/maxProperties/
// maxLength set to `max` (set).
const prim = (type: string): JsonObject =>
  type === 'int-or-string'
    ? { 'x-svc-int-or-string': true }
    : ['date', 'date-time', 'duration'].includes(type)
      ? { type: 'string', format: type }
      : { type };
const array =
  (type: string) =>
  (max?: number): JsonObject => ({ type: 'array', items: prim(type), ...(max !== undefined && { maxItems: max }) });
const map =
  (type: string) =>
  (max?: number): JsonObject => ({
    type: 'object',
    additionalProperties: prim(type),
    ...(max !== undefined && { maxProperties: max }),
  });
const string = (max?: number): JsonObject => ({ type: 'string', ...(max !== undefined && { maxLength: max }) });
const arrayOfArrays =
  (type: string) =>
  (max?: number): JsonObject => ({
    type: 'array',
    items: { type: 'array', items: prim(type) },
    ...(max !== undefined && { maxItems: max }),
  });

const cases: [string, (max?: number) => JsonObject, string, number, number, number][] = [
  ['number array with all', array('number'), 'self.all(x, true)', 4718591, 10, 32],
  ['string array with all', array('string'), 'self.all(x, true)', 3145727, 20, 62],
  ['boolean array with all', array('boolean'), 'self.all(x, true)', 1887437, 5, 17],
  ['array of number arrays with all', arrayOfArrays('number'), 'self.all(x, true)', 3145727, 100, 302],
  ['map of numbers with all', map('number'), 'self.all(x, true)', 1348169, 10, 32],
  ['map of numbers with has', map('number'), 'has(self.x)', 0, 100, 0],
  ['map of strings with all', map('string'), 'self.all(x, true)', 1179647, 3, 11],
  ['map of booleans with all', map('boolean'), 'self.all(x, true)', 943718, 100, 302],
  ['string with contains', string, "self.contains('test')", 314574, 10, 5],
  ['string with startsWith', string, "self.startsWith('test')", 2, 15, 2],
  ['string with endsWith', string, "self.endsWith('test')", 2, 30, 2],
  ['concat string', string, 'size(self + "hello") > size("hello")', 314578, 4, 7],
  ['index of array with numbers', array('number'), 'self[1] == 0.0', 2, 5000, 2],
  ['index of array with strings', array('string'), 'self[1] == self[1]', 314577, 8, 314577],
  ['O(n^2) loop with numbers', array('number'), 'self.all(x, self.all(y, true))', Number.NaN, 10, 352],
  ['O(n^3) loop with numbers', array('number'), 'self.all(x, self.all(y, self.all(z, true)))', Number.NaN, 10, 3552],
  ['regex matches simple', string, 'self.matches("x")', 314574, 50, 22],
  ['regex matches empty string', string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7],
  ['regex matches empty regex', string, 'self.matches("")', 1, 100, 1],
  ['set array maxLength to zero', array('number'), 'self[3] == 0.0', 2, 0, 2],
  ['set map maxLength to zero', map('number'), 'self["x"] == 0.0', 2, 0, 2],
  ['set string maxLength to zero', string, 'self == "x"', 2, 0, 1],
  ['set maxLength greater than estimated maxLength', array('number'), 'self.all(x, x == 0.0)', 6291454, 3 * 1024 * 2048, 25165826],
  ['int-or-string array with all', array('int-or-string'), 'self.all(x, true)', 4718591, 10, 32],
  ['index of array with int-or-strings', array('int-or-string'), 'self[0] == 5', 3, 10, 3],
  ['index of array with booleans', array('boolean'), 'self[0] == false', 2, 25, 2],
  ['index of array of array of numbers', arrayOfArrays('number'), 'self[0][0] == -1.0', 3, 51, 3],
  ['duration array with all', array('duration'), 'self.all(x, true)', 2359295, 5, 17],
  ['date array with all', array('date'), 'self.all(x, true)', 725936, 15, 47],
  ['date-time array with all', array('date-time'), 'self.all(x, true)', 428963, 25, 77],
  ['map of int-or-strings with all', map('int-or-string'), 'self.all(x, true)', 1348169, 15, 47],
  ['map of durations with all', map('duration'), 'self.all(x, true)', 1048577, 5, 17],
  ['map of dates with all', map('date'), 'self.all(x, true)', 524288, 10, 32],
  ['map of date-times with all', map('date-time'), 'self.all(x, true)', 349526, 25, 77],
  ['extended library regex find', string, "self.find('[0-9]+') == ''", 629147, 10, 11],
  ['extended library lowerAscii', string, "self.lowerAscii() == 'lower!'", 314575, 10, 6],
  ['check cost of size call', map('integer'), 'oldSelf.size() == self.size()', 5, 10, 5],
];

describe('estimated cost against the reference table', () => {
  for (const [name, schema, rule, calc, max, set] of cases) {
    test(`${name}: ${rule}`, () => {
      const unbounded = estimateCost(rule, schema()) as number;
      if (Number.isNaN(calc)) expect(unbounded).toBeGreaterThan(10_000_000);
      else expect(unbounded).toBe(calc);
      expect(estimateCost(rule, schema(max))).toBe(set);
    });
  }
});

describe('two-variable comprehensions cost as their one-variable counterparts', () => {
  const pairs: [string, string][] = [
    ['self.all(i, x, x > 0.0)', 'self.all(x, x > 0.0)'],
    ['self.exists(i, x, x > 0.0)', 'self.exists(x, x > 0.0)'],
    ['self.existsOne(i, x, x > 0.0)', 'self.exists_one(x, x > 0.0)'],
    ['self.transformList(i, x, x * 2.0)', 'self.map(x, x * 2.0)'],
    ['self.all(i, x, self.all(j, y, true))', 'self.all(x, self.all(y, true))'],
  ];
  for (const [twoVar, oneVar] of pairs)
    test(twoVar, () => {
      for (const max of [undefined, 10])
        expect(estimateCost(twoVar, array('number')(max))).toBe(estimateCost(oneVar, array('number')(max)) as number);
    });
  test('transformMap grows with the range', () => {
    expect(estimateCost('self.transformMap(k, v, v)', map('number')(10))).toBe(1 + 30 + 10 * (3 + 1) + 1);
    expect(estimateCost('self.transformMapEntry(k, v, {k: v})', map('number')())).toBeGreaterThan(10_000_000);
  });
});

describe('the cost error message', () => {
  test('factor formats as the reference', () => {
    expect(costErrorMessage('estimated rule cost', 2e9, 1e7)).toBe(
      'estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    );
    expect(costErrorMessage('estimated rule cost', 2.5e7, 1e7)).toContain('by factor of 2.5x');
    expect(costErrorMessage('estimated rule cost', 1.2e7, 1e7)).toContain('by factor of 1.200000x');
  });
});

describe('sizes from the declared types (src/cel/decl-types.ts)', () => {
  const ios = { 'x-svc-int-or-string': true };
  test('an int-or-string is at most a request long', () => {
    expect(estimateCost('self.a == self.b', { type: 'object', properties: { a: ios, b: ios } })).toBe(4 + 314_573);
  });
  test('a string enum is as long as its longest value', () => {
    expect(estimateCost("self.e.matches('x')", { type: 'object', properties: { e: { type: 'string', enum: ['a', 'bcdefghijkl'] } } })).toBe(
      2 + 2 * 1,
    );
  });
  test("a resource's root has metadata.name", () => {
    const root = { type: 'object', properties: { spec: { type: 'object' } } };
    expect(estimateCost("self.metadata.name.matches('x')", root, true)).toBe(3 + 314_573);
    expect(estimateCost("self.metadata.name.matches('x')", root)).toBeGreaterThan(10_000_000);
  });
});
