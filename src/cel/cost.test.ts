import { describe, expect, test } from 'bun:test';
import { CostBudget } from './budget';
import { COST_LIMIT_MESSAGE, callCost, traversalCost } from './cost';
import { estimateCost } from './estimate';
import { celEnv, compile, evaluate } from './index';

const rand = (n: number): string => {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let s = '';
  for (let i = 0; i < n; i++) s += letters[(i * 7 + 3) % letters.length];
  return s;
};

function cost(expr: string, vars: Record<string, string> = {}, activation: Record<string, unknown> = {}, limit?: number) {
  const c = compile(expr, celEnv(vars));
  if (!c.ok) throw new Error(c.errors.join('; '));
  return evaluate(c.program, activation, limit === undefined ? undefined : new CostBudget(limit, limit));
}

describe('runtime cost: cel-go interpreter/runtimecost_test.go TestRuntimeCost', () => {
  const cases: [string, string, Record<string, string>, Record<string, unknown>, number][] = [
    ['const', `"Hello World!"`, {}, {}, 0],
    ['identity', 'input', { input: 'list<int>' }, { input: [1, 2] }, 1],
    ['select: map', `input['key']`, { input: 'map<string, string>' }, { input: { key: 'v' } }, 2],
    ['select: array index', 'input[0]', { input: 'list<string>' }, { input: ['v'] }, 2],
    ['select: field', 'input.single_int32', { input: 'map<string, int>' }, { input: { single_int32: 1 } }, 2],
    ['expr select: map', `input['ke' + 'y']`, { input: 'map<string, string>' }, { input: { key: 'v' } }, 3],
    ['expr select: array index', 'input[3-3]', { input: 'list<string>' }, { input: ['v'] }, 3],
    [
      'select: non-proto field test',
      'has(input.testAttr.nestedAttr)',
      { input: 'map<string, map<string, string>>' },
      { input: { testAttr: { nestedAttr: '0' } } },
      2,
    ],
    ['create list', '[1, 2, 3]', {}, {}, 10],
    ['create map', '{"a": 1, "b": 2, "c": 3}', {}, {}, 30],
    ['all comprehension', 'input.all(x, true)', { input: 'list<dyn>' }, { input: [] }, 2],
    ['nested all comprehension', 'input.all(x, x.all(y, true))', { input: 'list<list<dyn>>' }, { input: [] }, 2],
    ['all comprehension on literal', '[1, 2, 3].all(x, true)', {}, {}, 20],
    ['variable cost function', `input.matches('[0-9]')`, { input: 'string' }, { input: rand(500) }, 103],
    ['variable cost function with constant', `'123'.matches('[0-9]')`, {}, {}, 2],
    ['or', 'false || false', {}, {}, 0],
    ['or short-circuit', 'true || false', {}, {}, 0],
    [
      'or accumulated branch cost',
      'a || b || c || d',
      { a: 'bool', b: 'bool', c: 'bool', d: 'bool' },
      { a: false, b: false, c: false, d: false },
      4,
    ],
    ['and', 'true && false', {}, {}, 0],
    ['and short-circuit', 'false && true', {}, {}, 0],
    [
      'and accumulated branch cost',
      'a && b && c && d',
      { a: 'bool', b: 'bool', c: 'bool', d: 'bool' },
      { a: true, b: true, c: true, d: true },
      4,
    ],
    ['lt', '1 < 2', {}, {}, 1],
    ['lte', '1 <= 2', {}, {}, 1],
    ['eq', '1 == 2', {}, {}, 1],
    ['gt', '2 > 1', {}, {}, 1],
    ['gte', '2 >= 1', {}, {}, 1],
    ['in', '2 in [1, 2, 3]', {}, {}, 13],
    ['plus', '1 + 1', {}, {}, 1],
    ['minus', '1 - 1', {}, {}, 1],
    ['/', '1 / 1', {}, {}, 1],
    ['*', '1 * 1', {}, {}, 1],
    ['%', '1 % 1', {}, {}, 1],
    ['ternary', 'true ? 1 : 2', {}, {}, 0],
    ['string size', 'size("123")', {}, {}, 1],
    ['str eq str', `'12345678901234567890' == '123456789012345678901234567890'`, {}, {}, 2],
    ['int to string conversion', 'string(1)', {}, {}, 1],
    ['contains', 'input.contains(arg1)', { input: 'string', arg1: 'string' }, { input: rand(500), arg1: rand(500) }, 2502],
    ['matches', `input.matches('\\\\d+a\\\\d+b')`, { input: 'string' }, { input: rand(500) }, 103],
    ['startsWith', 'input.startsWith(arg1)', { input: 'string', arg1: 'string' }, { input: 'idc', arg1: rand(500) }, 3],
    ['endsWith', 'input.endsWith(arg1)', { input: 'string', arg1: 'string' }, { input: 'idc', arg1: rand(500) }, 3],
    ['size receiver', 'input.size()', { input: 'string' }, { input: '500' }, 2],
    ['size', 'size(input)', { input: 'string' }, { input: '500' }, 2],
    [
      'ternary eval',
      '(x > 2 ? input1 : input2).all(y, true)',
      { x: 'int', input1: 'list<dyn>', input2: 'list<dyn>' },
      { x: 1, input1: [{}], input2: [{}] },
      6,
    ],
    ['ternary eval trivial, true', 'true ? false : 1 > 3', {}, {}, 0],
    ['ternary eval trivial, false', 'false ? false : 1 > 3', {}, {}, 1],
    [
      'comprehension over map',
      'input.all(k, input[k].single_int32 > 3)',
      { input: 'map<string, map<string, int>>' },
      { input: { val: { single_int32: 0 } } },
      9,
    ],
    [
      'comprehension over nested map of maps',
      'input.all(k, input[k].all(x, true))',
      { input: 'map<string, map<string, dyn>>' },
      { input: {} },
      2,
    ],
    ['string size of map keys', 'input.all(k, k.contains(k))', { input: 'map<string, dyn>' }, { input: {} }, 2],
    [
      'comprehension variable shadowing',
      'input.all(k, input[k].all(k, true) && k.contains(k))',
      { input: 'map<string, map<string, dyn>>' },
      { input: {} },
      2,
    ],
    ['list concat', '(list1 + list2).all(x, true)', { list1: 'list<int>', list2: 'list<int>' }, { list1: [], list2: [] }, 4],
    ['str concat', '"abcdefg".contains(str1 + str2)', { str1: 'string', str2: 'string' }, { str1: 'val1', str2: 'val2222222' }, 6],
    ['ternary as operand', '(1 > 2 ? 5 : 3) > 1', {}, {}, 2],
    ['ternary as operand (or)', '(1 > 2 || 2 > 1) == true', {}, {}, 3],
    ['list map literal', `[{'k1': 1}, {'k2': 2}].all(x, true)`, {}, {}, 77],
  ];
  for (const [name, expr, vars, act, want] of cases) {
    test(`${name}: ${expr} costs ${want}`, () => {
      const r = cost(expr, vars, act);
      expect(r.ok).toBe(true);
      expect(r.cost).toBe(want);
    });
  }

  test("at the limit the evaluation completes; one below it stops with cel-go's error", () => {
    const vars = { str1: 'string', str2: 'string' };
    const act = { str1: 'val1', str2: 'val2222222' };
    expect(cost('"abcdefg".contains(str1 + str2)', vars, act, 6)).toMatchObject({ ok: true, value: false, cost: 6 });
    expect(cost('"abcdefg".contains(str1 + str2)', vars, act, 5)).toMatchObject({ ok: false, error: COST_LIMIT_MESSAGE });
  });
});

describe('runtime cost of the other macros, as their cel-go expansions', () => {
  test('exists: 4 per element up to the first match, plus the result', () => {
    // [1,2,3] list 10; elements 1 and 2 stepped (cond 3 + accu 1 + predicate x == 2: 1 + 1 each), the
    // third loop condition stops it (3); result 1.
    expect(cost('[1, 2, 3].exists(x, x == 2)').cost).toBe(10 + 2 * (4 + 2) + 3 + 1);
  });
  test('exists_one: predicate plus 2 when it holds, 1 otherwise; the result 2', () => {
    expect(cost('[1, 2, 3].exists_one(x, x == 2)').cost).toBe(10 + 3 * 2 + (2 + 1 + 1) + 2);
  });
  test('map and filter start from a list (10) and add a one-element list per kept element (12 or 13)', () => {
    expect(cost('[1, 2].map(x, x)').cost).toBe(10 + 10 + 2 * (12 + 1) + 1);
    expect(cost('[1, 2, 3].filter(x, x > 1)').cost).toBe(10 + 10 + 3 * 2 + 2 * 13 + 1 + 1);
  });
  test('cel.bind starts from an empty list (10)', () => {
    expect(cost('cel.bind(a, 1, a + a)').cost).toBe(10 + 1 + 1 + 1);
  });
  test('a nested comprehension costs its outer loop plus each inner one as if alone (each counts only its own steps)', () => {
    const input = [[1, 2], [3], []];
    const inner = input.map((x) => cost('input.all(y, y > 0)', { input: 'dyn' }, { input: x }).cost as number);
    const outer = cost('input.all(x, true)', { input: 'dyn' }, { input }).cost as number;
    expect(inner).toEqual([12, 7, 2]);
    expect(cost('input.all(x, x.all(y, y > 0))', { input: 'dyn' }, { input }).cost).toBe(outer + 12 + 7 + 2);
    const deep = cost('input.all(x, x.all(y, [1, 2].all(z, z > 0)))', { input: 'dyn' }, { input }).cost as number;
    const leaf = cost('[1, 2].all(z, z > 0)').cost as number;
    // Per y: the leaf instead of `y > 0` (2).
    expect(deep).toBe(outer + 12 + 7 + 2 + 3 * (leaf - 2));
  });
  test('errors inside nested comprehensions, absorbed by || or by the loop, leave the costs as before the tracker kept only what consumers read', () => {
    // The figures the tracker that recorded every node gave (dcc132a); cel-go's rules as above.
    const bad = [[{}], [{ z: 1 }], [{ z: 2 }, {}]];
    expect(cost('input.all(x, x.all(y, y.z == 1) || true)', { input: 'dyn' }, { input: bad })).toEqual({ ok: true, value: true, cost: 31 });
    expect(cost('input.exists(x, x.exists(y, y.z == 2))', { input: 'dyn' }, { input: bad })).toEqual({ ok: true, value: true, cost: 36 });
    expect(cost('input.map(x, x.filter(y, has(y.z) && y.z > 0).size())', { input: 'dyn' }, { input: bad })).toEqual({
      ok: true,
      value: [0, 1, 1],
      cost: 129,
    });
    expect(cost('input.all(x, x.all(y, y.z == 1))', { input: 'dyn' }, { input: bad })).toEqual({ ok: true, value: false, cost: 30 });
  });
});

describe('the Kubernetes library costs (k8s.io/apiserver/pkg/cel/library/cost.go)', () => {
  test('call costs', () => {
    expect(callCost('check', [], undefined)).toBe(350000);
    expect(callCost('allowed', [], undefined)).toBe(1);
    expect(callCost('lowerAscii', ['x'.repeat(95)], undefined)).toBe(10);
    expect(callCost('replace', ['x'.repeat(95), 'a', 'b'], undefined)).toBe(19);
    expect(callCost('join', [['a'], ','], 'y'.repeat(50))).toBe(10);
    expect(callCost('find', ['x'.repeat(19), '[a-z]+'], undefined)).toBe(2 * 2);
    expect(callCost('isQuantity', ['100Mi'], undefined)).toBe(1);
    expect(callCost('sum', [[1n, 2n, 3n]], undefined)).toBe(3);
  });
  test('traversal cost of a data tree', () => {
    expect(traversalCost(['a'.repeat(25), 'b'.repeat(5)])).toBe(2);
    expect(traversalCost({ key1: 1n })).toBe(1);
  });
  test('a runaway comprehension stops at the limit, and || cannot absorb the error', () => {
    const vars = { l: 'list<int>' };
    const l = Array.from({ length: 1000 }, (_, i) => i);
    const r = cost('l.all(x, l.all(y, x + y >= 0)) || true', vars, { l }, 1_000_000);
    expect(r).toMatchObject({ ok: false, error: COST_LIMIT_MESSAGE });
    const ok = cost('l.all(x, l.all(y, x + y >= 0))', vars, { l: l.slice(0, 10) }, 1_000_000);
    expect(ok.ok).toBe(true);
  });
});

describe('two-variable comprehensions: the Kubernetes library test TestK8sTwoVariableComprehensionCost', () => {
  // [expression, runtime cost, estimated maximum]
  const cases: [string, number, number][] = [
    ["{'a': 1, 'b': 2}.all(k, v, v > 0)", 41, 41],
    ["{'a': 1, 'b': 2}.exists(k, v, v > 0)", 40, 43],
    ["{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 40, 40],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71, 71],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 75, 75],
    ["{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131, 131],
    ["{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})", 135, 135],
    ['[1, 2].all(i, v, v > 0)', 21, 21],
    ['[1, 2].exists(i, v, v > 0)', 20, 23],
    ['[1, 2].existsOne(i, v, v > 0)', 20, 20],
    ['[1, 2].transformList(i, v, v + 1)', 49, 49],
    ['[1, 2].transformList(i, v, v < 5, v + 1)', 53, 53],
  ];
  for (const [expr, runtime, estimated] of cases)
    test(expr, () => {
      expect(cost(expr).cost).toBe(runtime);
      expect(estimateCost(expr, undefined)).toBe(estimated);
    });
});
