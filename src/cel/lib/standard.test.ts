import { describe, expect, test } from 'bun:test';
import { Environment } from '@marcbachmann/cel-js';
import { engineEnvironment } from '../env.ts';

/**
 * The standard library where cel-js's differs from the reference (cel-go): time.ts, numbers.ts,
 * comparisons.ts, presence.ts and the string members strings.ts replaces. Results are compared
 * as text (`String(value)`); ERROR means the evaluation must fail.
 */
const ERROR = Symbol('error');
type Case = [expr: string, want: string | boolean | typeof ERROR];

const tables: Record<string, Case[]> = {
  timestamps: [
    ["string(timestamp('9999-12-31T23:59:59.999999999Z'))", '9999-12-31T23:59:59.999999999Z'],
    ["string(timestamp('2023-02-03T23:31:20+01:30'))", '2023-02-03T22:01:20Z'],
    ["string(timestamp('0001-01-01T00:00:01.000000001Z') + duration('-999999999ns'))", '0001-01-01T00:00:00.000000002Z'],
    ["timestamp('2009-02-13T23:31:30.000000001Z') > timestamp('2009-02-13T23:31:30Z')", true],
    ["timestamp('2009-02-13T23:31:30.000000001Z') == timestamp('2009-02-13T23:31:30Z')", false],
    ["int(timestamp('1969-12-31T23:59:59.5Z'))", '-1'],
    ["timestamp('0000-01-01T00:00:00Z')", ERROR],
    ["timestamp('2009-02-30T00:00:00Z')", ERROR],
    ["timestamp('2009-02-13 23:31:30Z')", ERROR],
    ["timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')", ERROR],
    ["timestamp('0001-01-01T00:00:00Z') - duration('1s')", ERROR],
    ["timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')", ERROR],
    ["duration('120s') + timestamp('2009-02-13T23:01:00Z') == timestamp('2009-02-13T23:03:00Z')", true],
    ["timestamp('2009-02-13T23:31:30Z').getHours('02:00')", '1'],
    ["timestamp('2009-02-13T02:00:00Z').getDayOfMonth('-02:30')", '11'],
    ["timestamp('2009-02-13T23:31:30Z').getMinutes('Asia/Kathmandu')", '16'],
    ["timestamp('2009-02-13T23:31:30Z').getDayOfYear('US/Central')", '43'],
    ["timestamp('2009-02-13T23:31:30Z').getHours('Mars/Olympus')", ERROR],
  ],
  durations: [
    ["string(duration('1h1.5s'))", '3601.5s'],
    ["string(duration('1ns'))", '0.000000001s'],
    ["string(duration('-1.5s') + duration('1s'))", '-0.5s'],
    ["int(duration('1.5s'))", '1500000000'],
    ["duration('320000000000s')", ERROR],
    ["duration('9000000000s') + duration('9000000000s')", ERROR],
    ["-duration('90s') == duration('-90s')", true],
    ["duration('1.000000001s') > duration('1s')", true],
  ],
  numbers: [
    ['-(-9223372036854775807 - 1)', ERROR],
    ['(-9223372036854775807 - 1) / -1', ERROR],
    ['(-9223372036854775807 - 1) % -1', ERROR],
    ['-9223372036854775808', '-9223372036854775808'],
    ['7 / 0', ERROR],
    ['-7 / 2', '-3'],
    ['int(18446744073709551615u)', ERROR],
    ['int(42u)', '42'],
    ['int(9223372036854775807.0)', ERROR],
    ['int(-9223372036854775808.0)', ERROR],
    ['int(-7.9)', '-7'],
    ['uint(-0.5)', ERROR],
    ['uint(18446744073709551616.0)', ERROR],
    ["string(b'\\xff')", ERROR],
    ["string(b'\\303\\277')", 'ÿ'],
  ],
  comparisons: [
    ['[1.0, 2.0, 3] == [1u, 2, 3u]', true],
    ['[1.0, 2.0, 3] != [1u, 2, 3u]', false],
    ['[1, 2] == [1, 3]', false],
    ['{1: 1.0, 2u: 3u} == {1u: 1, 2: 3.0}', true],
    ["dyn({'a': [1u]}) == {'a': [1]}", true],
    ['dyn(3u) in [5, 4, 3]', true],
    ['dyn(3.0) in [5u, 4u, 3u]', true],
    ['dyn(6u) in [5, 4, 3]', false],
    ['dyn(9223372036854775807) < 9223372036854775808.0', false],
    ['dyn(18446744073709551615u) < 18446744073709590000.0', true],
    ['1 < 1.5', true],
    ["b'a' < b'b'", true],
    ["b'' > b' '", false],
    ["b'ab' >= b'a'", true],
  ],
  presence: [
    ["has({'a': 1}.a)", true],
    ['has({}.a)', false],
    ["has({'x': {'y': 'z'}}.?x.y)", true],
    ['has({}.?x.y)', false],
    ["has({'foo': optional.none()}.foo)", true],
    ["has({'foo': optional.none()}.foo.bar)", false],
    ["has(optional.of({'c': 1}).c)", true],
    ["has({'a': {}}.b.c)", ERROR],
  ],
  syntax: [
    ["string(b'ÿ\\x41')", 'ÿA'],
    ["size(b'ÿ')", '2'],
    ["size(br'\\x41')", '4'],
    ["size(Rb'''\\n''')", '2'],
    ['.5 + .25', '0.75'],
    ["{'content-type': 'json'}.`content-type`", 'json'],
    ["has({'a.b': 1}.`a.b`)", true],
    ['size([?optional.none(), ?optional.of(1), 2])', '2'],
    ["size({?'a': optional.none(), ?'b': optional.of(1)})", '1'],
    ["{'a': dyn(null)}.?a.b.hasValue()", ERROR],
  ],
  literals: [
    ['{1: 1, 1u: 2}', ERROR],
    ["{'a': 1, 'a': 2}", ERROR],
    ['{1.5: 1}', ERROR],
    ['{1: "a", 2: "b"}.map(k, k + 1) == [2, 3]', true],
    ['{true: 1}.exists(k, k)', true],
    ['[7, 8, 9][dyn(1u)]', '8'],
    ['[].all(e, e > 0)', true],
  ],
  strings: [
    ["'TacoCÆt Xii'.lowerAscii()", 'tacocÆt xii'],
    ["'tacoCαt'.upperAscii()", 'TACOCαT'],
    ["'\\u0085\\u00a0\\u1680text\\u3000'.trim()", 'text'],
    ["'\\u180etext\\ufeff'.trim()", '\u180etext\ufeff'],
    ['"%s".format([[1, "a", timestamp("2023-02-03T23:31:20Z")]])', '[1, a, 2023-02-03T23:31:20Z]'],
    ['"%s".format([{"b": duration("2h"), "a": type(1)}])', '{a: int, b: 7200s}'],
    ['"%.0f %.0f %.1f".format([2.5, 3.5, 0.25])', '2 4 0.2'],
  ],
};

const env = engineEnvironment({}, { homogeneousAggregateLiterals: false });

function run(expr: string): string | boolean | typeof ERROR {
  const parsed = env.parse(expr);
  const checked = parsed.check();
  if (!checked.valid) throw new Error(`check ${expr}: ${String(checked.error)}`);
  try {
    const v = parsed({});
    return typeof v === 'boolean' ? v : String(v);
  } catch {
    return ERROR;
  }
}

for (const [area, cases] of Object.entries(tables)) {
  describe(`standard library: ${area}`, () => {
    for (const [expr, want] of cases) {
      test(expr, () => {
        expect(run(expr)).toEqual(want);
      });
    }
  });
}

test('replaced built-ins stay in the environments that replace them', () => {
  // cel-js's own lowerAscii maps every letter; a fresh environment still has it.
  expect(new Environment().evaluate("'Æ'.lowerAscii()")).toBe('æ');
  expect(env.evaluate("'Æ'.lowerAscii()")).toBe('Æ');
});
