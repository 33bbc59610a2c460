import { describe, expect, test } from 'bun:test';
import { CostBudget } from '../budget.ts';
import { celEnv, compile, evaluate } from '../index.ts';

/**
 * Two-variable comprehensions: cel-go's documented examples (ext/comprehensions.go) and the edges
 * the cel-spec suite (macros2) does not reach: transformMapEntry, typed variables, map keys that
 * are not strings, compile errors, and the cost limit.
 */
const env = celEnv({ names: 'list<string>', counts: 'map<string, int>' });
const activation = { names: ['ab', 'c'], counts: { a: 1, b: 2 } };
const ERROR = Symbol('error');

function run(expr: string, budget?: CostBudget): unknown {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(`compile ${expr}: ${c.errors.join('; ')}`);
  const r = evaluate(c.program, activation, budget);
  return r.ok ? r.value : ERROR;
}

const cases: [expr: string, want: unknown][] = [
  ['[1, 2, 3].all(i, j, i < j)', true],
  ["{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)", false],
  ["{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))", true],
  ["{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))", true],
  ['[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)', false],
  ['[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)', false],
  ['[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)', true],
  ["{'i': 0, 'j': 1, 'k': 2}.existsOne(i, v, i == 'l' || v == 1)", true],
  ['[1, 2, 3].exists_one(i, v, v == 2)', true],
  ['[1, 2, 3].transformList(i, v, (i * v) + v)', [1, 4, 9]],
  ['[1, 2, 3].transformList(i, v, i % 2 == 0, (i * v) + v)', [1, 9]],
  ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k)", ['greeting', 'farewell']],
  ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v)", ['hello', 'goodbye']],
  ['[1, 2, 3].transformMap(i, v, (i * v) + v)', { 0: 1, 1: 4, 2: 9 }],
  ['[1, 2, 3].transformMap(i, v, i % 2 == 0, (i * v) + v)', { 0: 1, 2: 9 }],
  ["{'greeting': 'hello'}.transformMap(k, v, v + '!')", { greeting: 'hello!' }],
  ["{'greeting': 'hello'}.transformMapEntry(k, v, {v: k})", { hello: 'greeting' }],
  ['[1, 2, 3].transformMapEntry(i, v, {v: i})', { 1: 0, 2: 1, 3: 2 }],
  ['[1, 2, 3].transformMapEntry(i, v, v != 2, {v: i})', { 1: 0, 3: 2 }],
  ["{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, v, {v: k})", ERROR],
  ['[dyn(1), dyn(1.0)].transformMapEntry(i, v, {v: i})', ERROR],
  // Typed variables: the index is an int, the element a string; map keys keep their type.
  ['names.all(i, n, n.size() >= i)', true],
  ['names.transformList(i, n, n + string(i))', ['ab0', 'c1']],
  ['counts.transformMap(k, v, v * 10)', { a: 10, b: 20 }],
  ['counts.exists(k, v, k == "b" && v == 2)', true],
  ['{1: 2, 3: 4}.all(k, v, k + 1 == v)', true],
  ['{1: 2, 3: 4}.transformList(k, v, k * v)', [2, 12]],
  // Errors: absorbed by a decisive result (as cel-go's && and ||), otherwise the result.
  ["[dyn(1), dyn('a'), dyn(0)].all(i, v, v > 0)", false],
  ["[dyn(1), dyn('a')].all(i, v, v > 0)", ERROR],
  ["[dyn(0), dyn('a'), dyn(1)].exists(i, v, v > 0)", true],
  ["[dyn('a'), dyn(1)].existsOne(i, v, v > 0)", ERROR],
  ['[1].transformList(i, v, dyn(v), v)', ERROR],
  ['[1, 0].transformList(i, v, 1 / v)', ERROR],
];

describe('two-variable comprehensions', () => {
  for (const [expr, want] of cases) test(expr, () => expect(run(expr)).toEqual(want));

  test('compile errors', () => {
    for (const expr of [
      '[1].all(i, i, true)',
      '[1].all(1, v, true)',
      '[1].exists(i, v, 1)',
      '(1).all(i, v, true)',
      "[1].transformMapEntry(i, v, 'x')",
      "[1].transformList(i, v, 'x', v)",
    ])
      expect(compile(expr, env).ok).toBe(false);
  });

  test('the body is costed per element and stops at the limit', () => {
    const list = `[${Array.from({ length: 100 }, (_, i) => i).join(', ')}]`;
    const c = compile(`${list}.all(i, v, v >= 0 && i >= 0)`, env);
    if (!c.ok) throw new Error(c.errors.join('; '));
    const full = evaluate(c.program, activation);
    expect(full.ok && (full.cost ?? 0) > 200).toBe(true);
    expect(run(`${list}.all(i, v, v >= 0 && i >= 0)`, new CostBudget(50, 50))).toBe(ERROR);
  });
});
