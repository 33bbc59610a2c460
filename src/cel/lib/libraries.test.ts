import { describe, expect, test } from 'bun:test';
import { celEnv, compile, evaluate } from '../index.ts';

/** Cases from the reference's documented examples (k8s.io/apiserver/pkg/cel/library, cel-go ext). */
const env = celEnv({ emptyIntList: 'list<int>' });
type Case = [expr: string, want: unknown];
const ERROR = Symbol('error');

function run(expr: string): unknown {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(`compile ${expr}: ${c.errors.join('; ')}`);
  const r = evaluate(c.program, { emptyIntList: [] });
  return r.ok ? r.value : ERROR;
}

const tables: Record<string, Case[]> = {
  lists: [
    ['[1, 2, 3].isSorted()', true],
    ["['a', 'b', 'b', 'c'].isSorted()", true],
    ['[2.0, 1.0].isSorted()', false],
    ['[1].isSorted()', true],
    ['[].isSorted()', true],
    ['[1, 3].sum()', 4],
    ['[1.5, 3.0].sum()', 4.5],
    ['emptyIntList.sum()', 0],
    ['[1, 3].min()', 1],
    ['[1, 3].max()', 3],
    ['[].min()', ERROR],
    ['[1].min()', 1],
    ['([0] + emptyIntList).min()', 0],
    ['[1, 2, 2, 3].indexOf(2)', 1],
    ["['a', 'b', 'b', 'c'].lastIndexOf('b')", 2],
    ['[1.0].indexOf(1.1)', -1],
    ["[].indexOf('string')", -1],
    ['[1, 2, 3].includes(2)', true],
    ['[1, 2, 3].includes(4)', false],
    ["'model-a'.includes('model-a')", true],
    ["'model-a'.includes('model-b')", false],
    ['[1, 2, 3, 4].slice(1, 3)', [2, 3]],
    ['[1, 2, 3, 4].slice(3, 5)', ERROR],
    ['[1, 2, 3, 4].slice(-1, 3)', ERROR],
    ['[[1, 2], [3, 4]].flatten()', [1, 2, 3, 4]],
    ['[[[1]], [[2]]].flatten(2)', [1, 2]],
    ['[[[1]], [[2]]].flatten(-1)', ERROR],
    ['[1, 2, 2, 3, 1].distinct()', [1, 2, 3]],
    ["['b', 'c', 'a'].sort()", ['a', 'b', 'c']],
  ],
  strings: [
    ["'hello'.charAt(4)", 'o'],
    ["'hello'.charAt(5)", ''],
    ["'hello'.charAt(6)", ERROR],
    ["'hello hello'.replace('he', 'we')", 'wello wello'],
    ["'hello hello'.replace('he', 'we', -1)", 'wello wello'],
    ["'hello hello'.replace('he', 'we', 1)", 'wello hello'],
    ["'hello hello'.replace('he', 'we', 0)", 'hello hello'],
    ["'gums'.reverse()", 'smug'],
    ["'John Smith'.reverse()", 'htimS nhoJ'],
    ['strings.quote(\'single-quote with "double quote"\')', '"single-quote with \\"double quote\\""'],
    ["strings.quote('two escape sequences \\\\a\\\\n')", '"two escape sequences \\\\a\\\\n"'],
    ["'hello mellow'.indexOf('ello')", 1],
    ["'hello mellow'.lastIndexOf('ello')", 7],
    ["'TacoCat'.lowerAscii()", 'tacocat'],
    ["'TacoCat'.upperAscii()", 'TACOCAT'],
    ["'hello world'.split(' ')", ['hello', 'world']],
    ["'hello world events!'.split(' ', 2)", ['hello', 'world events!']],
    ["'tacocat'.substring(4)", 'cat'],
    ["'tacocat'.substring(0, 4)", 'taco'],
    ["'  \\ttrim\\n    '.trim()", 'trim'],
    ["['hello', 'mellow'].join(' ')", 'hello mellow'],
  ],
  format: [
    ["'this is a string: %s, and an integer: %d'.format([dyn('str'), dyn(42)])", 'this is a string: str, and an integer: 42'],
    ["'%.3f'.format([2.0])", '2.000'],
    ["'%e'.format([2.0])", '2.000000e+00'],
    ["'%b'.format([5])", '101'],
    ["'%o'.format([11])", '13'],
    ["'%x'.format([30])", '1e'],
    ["'%X'.format(['Hello world!'])", '48656C6C6F20776F726C6421'],
    ["'%s'.format([[1, 2, 3]])", '[1, 2, 3]'],
    ["'%d%%'.format([100])", '100%'],
    ["'%d'.format([])", ERROR],
    ["'%f'.format([1])", ERROR],
  ],
  quantity: [
    ['quantity("50000000G").isInteger()', true],
    ['quantity("50k").isInteger()', true],
    ['quantity("9999999999999999999999999999999999999G").asInteger()', ERROR],
    ['quantity("9999999999999999999999999999999999999G").isInteger()', false],
    ['quantity("50k").asInteger() == 50000', true],
    ['quantity("50k").sub(20000).asApproximateFloat() == 30000.0', true],
    ['quantity("50k").add(20000).compareTo(quantity("70k"))', 0],
    ['quantity("50k").add(quantity("20k")).compareTo(quantity("70k"))', 0],
    ['quantity("50k").sub(quantity("20k")).compareTo(quantity("30k"))', 0],
    ['quantity("50k").sub(20000).compareTo(quantity("30k"))', 0],
    ['quantity("200M").compareTo(quantity("0.2G"))', 0],
    ['quantity("50M").compareTo(quantity("50Mi"))', -1],
    ['quantity("50Mi").compareTo(quantity("50M"))', 1],
    ['quantity("50M").isLessThan(quantity("100M"))', true],
    ['quantity("100M").isGreaterThan(quantity("50M"))', true],
    ['quantity("500m").isInteger()', false],
    ['quantity("1.5").asApproximateFloat()', 1.5],
    ['quantity("1e3").asInteger()', 1000],
    ['isQuantity("1.3G")', true],
    ['isQuantity("1.3Gi")', true],
    ['isQuantity("1,3G")', false],
    ['isQuantity("10000k")', true],
    ['isQuantity("200K")', false],
    ['isQuantity("Three")', false],
    ['isQuantity("Mi")', false],
    // The server's one grammar (src/api/quantity.ts), as resource.ParseQuantity: precision below
    // nano rounds up; no surrounding spaces.
    ['quantity("0.0000000001").compareTo(quantity("1n"))', 0],
    ['isQuantity(" 1")', false],
    ['isQuantity(".5")', true],
    ['quantity("1").sign()', 1],
    ['quantity("-1").sign()', -1],
    ['quantity("0").sign()', 0],
    ['quantity("Three")', ERROR],
  ],
  regex: [
    ["'abc 123'.find('[0-9]+')", '123'],
    ["'abc 123'.find('xyz')", ''],
    ["'123 abc 456'.findAll('[0-9]+')", ['123', '456']],
    ["'123 abc 456'.findAll('[0-9]+', 1)", ['123']],
    ["'123 abc 456'.findAll('xyz')", []],
    ["'123 abc 456'.findAll('[0-9]+', 0)", []],
    ["'abc'.find('(')", ERROR],
  ],
};

for (const [lib, cases] of Object.entries(tables)) {
  describe(`library ${lib}`, () => {
    for (const [expr, want] of cases) {
      test(expr, () => {
        expect(run(expr)).toEqual(want);
      });
    }
  });
}
