import { describe, expect, test } from 'bun:test';
import { celEnv, compile, evaluate } from '../index.ts';

/** The optional-types additions (optionals.ts) beyond what the cel-spec suite (optionals) reaches. */
const env = celEnv({ m: 'map<string, int>', l: 'list<int>' });
const activation = { m: { a: 1 }, l: [] };
const ERROR = Symbol('error');

function run(expr: string): unknown {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(`compile ${expr}: ${c.errors.join('; ')}`);
  const r = evaluate(c.program, activation);
  return r.ok ? r.value : ERROR;
}

const cases: [expr: string, want: unknown][] = [
  // ofNonZeroValue drops each type's zero value.
  ...['null', 'false', '0', '0u', '0.0', '-0.0', "''", "b''", '[]', '{}', "duration('0s')", "timestamp('1970-01-01T00:00:00Z')", 'l'].map(
    (z): [string, unknown] => [`optional.ofNonZeroValue(${z}).hasValue()`, false],
  ),
  ...['true', '1', '1u', '0.5', "'a'", "b'a'", '[0]', "{'': 0}", "duration('1s')", 'm'].map((v): [string, unknown] => [
    `optional.ofNonZeroValue(${v}).hasValue()`,
    true,
  ]),
  ['optional.of(2).optMap(x, x * 2).value()', 4],
  ['optional.none().optMap(x, x * 2).orValue(0)', 0],
  ['m.?a.optMap(v, v + 1).orValue(0)', 2],
  ['m.?b.optMap(v, v + 1).orValue(0)', 0],
  ['optional.of([1]).optFlatMap(x, x[?0]).value()', 1],
  ['optional.of([]).optFlatMap(x, x[?0]).hasValue()', false],
  ['optional.of(1).optFlatMap(x, optional.ofNonZeroValue(x - 1)).hasValue()', false],
  ['optional.of([1, 2]) == optional.of([1, 2])', true],
  ["optional.of({'a': 1}) == optional.of({'a': 2})", false],
  ['optional.of(1) == optional.of(1.0)', true],
  ["optional.of(1) != optional.of('1')", true],
  ['optional.none() == optional.none()', true],
  ['type(optional.of(1)) == optional_type', true],
  ['type(m.?a) == optional_type', true],
  ['optional.of(1).optMap(x, 1 / (x - 1)).hasValue()', ERROR],
];

describe('optional types', () => {
  for (const [expr, want] of cases) test(expr, () => expect(run(expr)).toEqual(want));

  test('compile errors', () => {
    for (const expr of ['optional.of(1).optMap(1, 2)', '(1).optMap(x, x)', 'optional.of(1).optFlatMap(x, x)'])
      expect(compile(expr, env).ok).toBe(false);
  });
});
