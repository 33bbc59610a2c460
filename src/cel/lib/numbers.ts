/**
 * Integer and conversion semantics of the reference (cel-go common/types) where cel-js's standard
 * library differs: every int64 result out of range is an error, including the negation of the
 * minimum (`-(-9223372036854775808)`) and its division by -1; conversions check their range
 * (`int(18446744073709551615u)`, `int(9.3e18)`, `uint(-1.5)` are errors); `string(bytes)` refuses
 * invalid UTF-8. cel-js's handlers of those overloads are replaced (src/cel/lib/builtins.ts);
 * `int(uint)`, which cel-js lacks, is added.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { replaceFunction, replaceOperator } from './builtins.ts';

const MAX_INT = 2n ** 63n - 1n;
const MIN_INT = -(2n ** 63n);
/** 2^63 and 2^64 as doubles: the first doubles out of the int and uint ranges. */
const TWO_TO_63 = 2 ** 63;
const TWO_TO_64 = 2 ** 64;

const overflow = () => new EvaluationError('integer overflow');
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function registerNumbers(env: Environment): void {
  env.registerFunction('int(uint): int', (u: UnsignedInt) => {
    const v = u.valueOf();
    if (v > MAX_INT) throw new EvaluationError('range error converting uint to int');
    return v;
  });

  // (An identity check: a range comparison of bigints would cost as much as the negation.)
  replaceOperator(env, '-_', '-_int: int', () => (a: bigint) => {
    if (a === MIN_INT) throw overflow();
    return -a;
  });
  replaceOperator(env, '/', 'int / int: int', () => (a: bigint, b: bigint, ast) => {
    if (b === 0n) throw new EvaluationError({ code: 'division_by_zero', message: 'division by zero', node: ast as never });
    if (b === -1n && a === MIN_INT) throw overflow();
    return a / b;
  });
  replaceOperator(env, '%', 'int % int: int', () => (a: bigint, b: bigint, ast) => {
    if (b === 0n) throw new EvaluationError({ code: 'modulo_by_zero', message: 'modulo by zero', node: ast as never });
    if (b === -1n && a === MIN_INT) throw overflow();
    return a % b;
  });

  replaceFunction(env, 'int(double): int', () => (v: number) => {
    // cel-go doubleToInt64Checked: the open interval (-2^63, 2^63).
    if (!(v > -TWO_TO_63 && v < TWO_TO_63)) throw new EvaluationError('range error converting double to int');
    return BigInt(Math.trunc(v));
  });
  replaceFunction(env, 'uint(double): uint', () => (v: number) => {
    // cel-go doubleToUint64Checked: [0, 2^64).
    if (!(v >= 0 && v < TWO_TO_64)) throw new EvaluationError('range error converting double to uint');
    return new UnsignedInt(BigInt(Math.trunc(v)));
  });
  replaceFunction(env, 'string(bytes): string', () => (b: Uint8Array) => {
    try {
      return utf8.decode(b);
    } catch {
      throw new EvaluationError('invalid UTF-8 in bytes, cannot convert to string');
    }
  });
}
