/**
 * Lists library (Kubernetes library.Lists plus the cel-go ext lists members the spec names):
 * indexOf, lastIndexOf, min, max, sum, isSorted, includes, slice, flatten, distinct, sort.
 * Comparison covers int, uint-as-bigint, double, string, bool (the comparable primitives).
 */
import type { Environment } from '@marcbachmann/cel-js';

type Prim = bigint | number | string | boolean;

function cmp(a: unknown, b: unknown): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === typeof b && (typeof a === 'string' || typeof a === 'boolean')) {
    const x = a as Prim;
    const y = b as Prim;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  throw new Error('no such overload');
}

function eq(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => eq(x, b[i]));
  return false;
}

function extreme(l: unknown[], sign: 1 | -1): unknown {
  if (l.length === 0) throw new Error('min called on empty list'.replace('min', sign < 0 ? 'min' : 'max'));
  let best = l[0];
  for (const v of l.slice(1)) if (cmp(v, best) * sign > 0) best = v;
  return best;
}

function sum(l: unknown[]): unknown {
  if (l.length === 0) return 0n;
  let acc: unknown = l[0];
  for (const v of l.slice(1)) {
    if (typeof acc === 'bigint' && typeof v === 'bigint') {
      acc = acc + v;
      if ((acc as bigint) > 9223372036854775807n || (acc as bigint) < -9223372036854775808n) throw new Error('integer overflow');
    } else if (typeof acc === 'number' && typeof v === 'number') acc = acc + v;
    else throw new Error('no such overload');
  }
  return acc;
}

function flatten(l: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  const out: unknown[] = [];
  for (const v of l) {
    if (Array.isArray(v) && depth > 0n) out.push(...flatten(v, depth - 1n));
    else out.push(v);
  }
  return out;
}

export function registerLists(env: Environment): void {
  env
    .registerFunction('list<A>.indexOf(A): int', (l: unknown[], v: unknown) => BigInt(l.findIndex((x) => eq(x, v))))
    .registerFunction('list<A>.lastIndexOf(A): int', (l: unknown[], v: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (eq(l[i], v)) return BigInt(i);
      return -1n;
    })
    .registerFunction('list<A>.min(): A', (l: unknown[]) => extreme(l, -1))
    .registerFunction('list<A>.max(): A', (l: unknown[]) => extreme(l, 1))
    .registerFunction('list<A>.sum(): A', sum)
    .registerFunction('list<A>.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || cmp(l[i - 1], v) <= 0))
    .registerFunction('list<A>.slice(int, int): list<A>', (l: unknown[], a: bigint, b: bigint) => {
      if (a < 0n || b < 0n) throw new Error(`cannot slice(${a}, ${b}), negative indexes not supported`);
      if (a > b) throw new Error(`cannot slice(${a}, ${b}), start index must be less than or equal to end index`);
      if (b > BigInt(l.length)) throw new Error(`cannot slice(${a}, ${b}), list is length ${l.length}`);
      return l.slice(Number(a), Number(b));
    })
    .registerFunction('list<A>.flatten(): list<dyn>', (l: unknown[]) => flatten(l, 1n))
    .registerFunction('list<A>.flatten(int): list<dyn>', flatten)
    .registerFunction('list<A>.distinct(): list<A>', (l: unknown[]) => {
      const out: unknown[] = [];
      for (const v of l) if (!out.some((x) => eq(x, v))) out.push(v);
      return out;
    })
    .registerFunction('dyn.includes(dyn): bool', (t: unknown, v: unknown) => (Array.isArray(t) ? t.some((x) => eq(x, v)) : eq(t, v)))
    .registerFunction('list<A>.sort(): list<A>', (l: unknown[]) => [...l].sort(cmp));
}
