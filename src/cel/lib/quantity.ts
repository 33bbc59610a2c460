/**
 * Quantity library (Kubernetes library.Quantity): isQuantity, quantity, and the members
 * isInteger, asInteger, asApproximateFloat, sign, add, sub, isLessThan, isGreaterThan, compareTo.
 * A quantity is held exactly as `num / 10^scale`; it is parsed by the server's one quantity
 * grammar (src/api/quantity.ts).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { parseQuantityText } from '../../api/quantity';

const MAX_INT64 = 9223372036854775807n;
const MIN_INT64 = -9223372036854775808n;

export class Quantity {
  constructor(
    readonly num: bigint,
    readonly scale: number,
    readonly text: string,
  ) {}

  toString(): string {
    return this.text;
  }
}

/**
 * Parses a quantity string with the server's one grammar (src/api/quantity.ts, the reference's
 * resource.ParseQuantity, which library.Quantity calls); undefined when it is not one. No
 * surrounding white space: ParseQuantity takes none.
 */
export function parseQuantity(s: string): Quantity | undefined {
  if (s.trim() !== s) return undefined;
  const q = parseQuantityText(s);
  if (!q) return undefined;
  // value = mant × 10^exp, held here as num / 10^scale.
  return q.exp >= 0 ? new Quantity(q.mant * 10n ** BigInt(q.exp), 0, s) : new Quantity(q.mant, -q.exp, s);
}

function align(a: Quantity, b: Quantity): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.num * 10n ** BigInt(scale - a.scale), b.num * 10n ** BigInt(scale - b.scale), scale];
}

function compare(a: Quantity, b: Quantity): bigint {
  const [x, y] = align(a, b);
  return x < y ? -1n : x > y ? 1n : 0n;
}

function canonical(num: bigint, scale: number): Quantity {
  let n = num;
  let s = scale;
  while (s > 0 && n % 10n === 0n) {
    n /= 10n;
    s--;
  }
  const neg = n < 0n;
  const digits = (neg ? -n : n).toString().padStart(s + 1, '0');
  const text = s === 0 ? digits : `${digits.slice(0, -s)}.${digits.slice(-s)}`;
  return new Quantity(n, s, `${neg ? '-' : ''}${text}`);
}

function integerValue(q: Quantity): bigint | undefined {
  const d = 10n ** BigInt(q.scale);
  if (q.num % d !== 0n) return undefined;
  const v = q.num / d;
  return v > MAX_INT64 || v < MIN_INT64 ? undefined : v;
}

function plus(a: Quantity, b: Quantity, sign: 1n | -1n): Quantity {
  const [x, y, scale] = align(a, b);
  return canonical(x + sign * y, scale);
}

export function registerQuantity(env: Environment): void {
  env
    .registerType('Quantity', Quantity)
    .registerFunction('isQuantity(string): bool', (s: string) => parseQuantity(s) !== undefined)
    .registerFunction('quantity(string): Quantity', (s: string) => {
      const q = parseQuantity(s);
      if (q === undefined) throw new Error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
      return q;
    })
    .registerFunction('Quantity.isInteger(): bool', (q: Quantity) => integerValue(q) !== undefined)
    .registerFunction('Quantity.asInteger(): int', (q: Quantity) => {
      const v = integerValue(q);
      if (v === undefined) throw new Error('cannot convert value to integer');
      return v;
    })
    .registerFunction('Quantity.asApproximateFloat(): double', (q: Quantity) => Number(q.num) / 10 ** q.scale)
    .registerFunction('Quantity.sign(): int', (q: Quantity) => (q.num > 0n ? 1n : q.num < 0n ? -1n : 0n))
    .registerFunction('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => plus(a, b, 1n))
    .registerFunction('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => plus(a, new Quantity(b, 0, ''), 1n))
    .registerFunction('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => plus(a, b, -1n))
    .registerFunction('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => plus(a, new Quantity(b, 0, ''), -1n))
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => compare(a, b) < 0n)
    .registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => compare(a, b) > 0n)
    .registerFunction('Quantity.compareTo(Quantity): int', compare);
}
