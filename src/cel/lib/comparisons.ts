/**
 * Comparisons across int, uint and double as the reference (cel-go) makes them, where cel-js's
 * differ:
 *
 *   [1.0, 2.0, 3] == [1u, 2, 3u]            true (cel-js: false, its element equality ignores uint)
 *   {1: 1.0, 2u: 3u} == {1u: 1, 2: 3.0}     true
 *   dyn(3u) in [5, 4, 3, 2, 1]              true
 *   dyn(9223372036854775807) < 9223372036854775808.0
 *                                           false: int and uint meet a double as doubles (cel-js
 *                                           compares exactly)
 *   b'a' < b'b'                             true: bytes order lexicographically (cel-js: no overload)
 *
 * The list and map `==`, `!=` and list `in` handlers are replaced (src/cel/lib/builtins.ts) by
 * single passes of the same shape as cel-js's, so they cost what cel-js's do (cel-js's own stays
 * for Set-backed lists); so are the int/uint-double orderings.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { TypedList } from '../lists-typed.ts';
import { type OperatorHandler, replaceOperator } from './builtins.ts';

/** What a cel-js operator handler receives as the evaluator (the members used here). */
interface Evaluator {
  debugType(v: unknown): unknown;
  readonly registry: { findBinaryOverload(op: string, left: unknown, right: unknown): { handler: OperatorHandler } | false | undefined };
}

function isNumeric(v: unknown): boolean {
  return typeof v === 'bigint' || typeof v === 'number' || v instanceof UnsignedInt;
}

/** cel-go's numeric equality: int and uint exactly, either against a double as doubles. */
function numericEquals(a: unknown, b: unknown): boolean {
  const x = a instanceof UnsignedInt ? a.valueOf() : a;
  const y = b instanceof UnsignedInt ? b.valueOf() : b;
  if (typeof x === 'number' || typeof y === 'number') return Number(x) === Number(y);
  return x === y;
}

function isMap(v: unknown): v is Map<unknown, unknown> | Record<string, unknown> {
  return v instanceof Map || (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined));
}

/**
 * CEL equality of two values that are not identical (`a !== b`), shaped as cel-js's own element
 * equality (a switch on the left operand's type) so that it costs the same: numbers across int,
 * uint and double, lists and maps element by element, anything else by cel-js's `==` overload
 * for its type (set and map lists too, src/cel/lists-typed.ts).
 */
function unequalValuesEqual(a: unknown, b: unknown, ast: unknown, ev: Evaluator): boolean {
  switch (typeof a) {
    case 'bigint':
      return typeof b === 'number' ? Number(a) === b : b instanceof UnsignedInt && a === b.valueOf();
    case 'number':
      return typeof b === 'bigint' ? a === Number(b) : b instanceof UnsignedInt && a === Number(b.valueOf());
    case 'object':
      if (a === null || b === null || typeof b !== 'object') return a instanceof UnsignedInt && isNumeric(b) && numericEquals(a, b);
      if (a instanceof UnsignedInt) return isNumeric(b) && numericEquals(a, b);
      if (Array.isArray(a) && !(a instanceof TypedList)) return Array.isArray(b) && listEquals(a, b, ast, ev);
      if (isMap(a)) return isMap(b) && mapEquals(a, b, ast, ev);
      return sameByRegistry(a, b, ast, ev);
    default:
      return false;
  }
}

function listEquals(a: readonly unknown[], b: readonly unknown[], ast: unknown, ev: Evaluator): boolean {
  if (a === b) return true;
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y && !unequalValuesEqual(x, y, ast, ev)) return false;
  }
  return true;
}

const ABSENT = Symbol('absent');

/** The value under `key` in a Map (ABSENT if none), numeric keys matching across int, uint and double. */
function lookup(m: Map<unknown, unknown>, key: unknown): unknown {
  if (m.has(key)) return m.get(key);
  if (isNumeric(key)) for (const [k, v] of m) if (isNumeric(k) && numericEquals(k, key)) return v;
  return ABSENT;
}

function mapEquals(
  a: Map<unknown, unknown> | Record<string, unknown>,
  b: Map<unknown, unknown> | Record<string, unknown>,
  ast: unknown,
  ev: Evaluator,
): boolean {
  if (a === b) return true;
  if (a instanceof Map || b instanceof Map) return mixedMapEquals(a, b, ast, ev);
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (!Object.hasOwn(b, k)) return false;
    const x = a[k];
    const y = b[k];
    if (x !== y && !unequalValuesEqual(x, y, ast, ev)) return false;
  }
  return true;
}

/** Map equality where one side at least is a Map (keys of plain objects are their decimal texts). */
function mixedMapEquals(
  a: Map<unknown, unknown> | Record<string, unknown>,
  b: Map<unknown, unknown> | Record<string, unknown>,
  ast: unknown,
  ev: Evaluator,
): boolean {
  const entries = a instanceof Map ? [...a.entries()] : Object.entries(a);
  if (entries.length !== (b instanceof Map ? b.size : Object.keys(b).length)) return false;
  for (const [k, x] of entries) {
    const y = b instanceof Map ? lookup(b, k) : Object.hasOwn(b, String(k)) ? b[String(k)] : ABSENT;
    if (y === ABSENT || (x !== y && !unequalValuesEqual(x, y, ast, ev))) return false;
  }
  return true;
}

/** Equality by cel-js's own `==` overload for the values' type. */
function sameByRegistry(a: object, b: object, ast: unknown, ev: Evaluator): boolean {
  const t = ev.debugType(a);
  if (t !== ev.debugType(b)) return false;
  const o = ev.registry.findBinaryOverload('==', t, t);
  return o ? o.handler(a as never, b as never, ast, ev) === true : false;
}

const ORDERINGS = ['<', '<=', '>', '>='] as const;

type U = UnsignedInt;
/** Per ordering: int-double, double-int, uint-double, double-uint (written out: hot paths). */
const NUMERIC_ORDERINGS: Record<(typeof ORDERINGS)[number], readonly OperatorHandler[]> = {
  '<': [
    (a: bigint, b: number) => Number(a) < b,
    (a: number, b: bigint) => a < Number(b),
    (a: U, b: number) => Number(a.valueOf()) < b,
    (a: number, b: U) => a < Number(b.valueOf()),
  ],
  '<=': [
    (a: bigint, b: number) => Number(a) <= b,
    (a: number, b: bigint) => a <= Number(b),
    (a: U, b: number) => Number(a.valueOf()) <= b,
    (a: number, b: U) => a <= Number(b.valueOf()),
  ],
  '>': [
    (a: bigint, b: number) => Number(a) > b,
    (a: number, b: bigint) => a > Number(b),
    (a: U, b: number) => Number(a.valueOf()) > b,
    (a: number, b: U) => a > Number(b.valueOf()),
  ],
  '>=': [
    (a: bigint, b: number) => Number(a) >= b,
    (a: number, b: bigint) => a >= Number(b),
    (a: U, b: number) => Number(a.valueOf()) >= b,
    (a: number, b: U) => a >= Number(b.valueOf()),
  ],
};
const COMPARE: Record<(typeof ORDERINGS)[number], (x: number, y: number) => boolean> = {
  '<': (x, y) => x < y,
  '<=': (x, y) => x <= y,
  '>': (x, y) => x > y,
  '>=': (x, y) => x >= y,
};

/** Lexicographic order of unsigned bytes: negative, zero or positive. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

export function registerComparisons(env: Environment): void {
  for (const op of ORDERINGS) {
    const holds = COMPARE[op];
    env.registerOperator(`bytes ${op} bytes`, (a: Uint8Array, b: Uint8Array) => holds(compareBytes(a, b), 0));
  }
  // Arrays and maps (plain objects or Maps) here; cel-js's handler for the rest (Sets).
  const listEq = (original: OperatorHandler) => (a: never, b: never, ast: unknown, ev: unknown) =>
    Array.isArray(a) && Array.isArray(b) ? listEquals(a, b, ast, ev as Evaluator) : original(a, b, ast, ev) === true;
  const mapEq = (original: OperatorHandler) => (a: never, b: never, ast: unknown, ev: unknown) =>
    isMap(a) && isMap(b) ? mapEquals(a, b, ast, ev as Evaluator) : original(a, b, ast, ev) === true;
  replaceOperator(env, '==', 'list<V> == list<V>: bool', listEq);
  replaceOperator(env, '!=', 'list<V> != list<V>: bool', (original) => {
    const eq = listEq((a, b, ast, ev) => !original(a, b, ast, ev));
    return (a, b, ast, ev) => !eq(a, b, ast, ev);
  });
  replaceOperator(env, '==', 'map<K, V> == map<K, V>: bool', mapEq);
  replaceOperator(env, '!=', 'map<K, V> != map<K, V>: bool', (original) => {
    const eq = mapEq((a, b, ast, ev) => !original(a, b, ast, ev));
    return (a, b, ast, ev) => !eq(a, b, ast, ev);
  });
  replaceOperator(env, 'in', 'V in list<V>: bool', (original) => (v: unknown, list: unknown, ast, ev) => {
    if (!Array.isArray(list)) {
      // Set-backed lists: cel-js's answer, then numbers across types.
      if (original(v as never, list as never, ast, ev) === true) return true;
      if (!isNumeric(v)) return false;
      for (const e of list as Iterable<unknown>) if (isNumeric(e) && numericEquals(v, e)) return true;
      return false;
    }
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      if (e === v || unequalValuesEqual(v, e, ast, ev as Evaluator)) return true;
    }
    return false;
  });

  // int and uint against double: both as doubles (cel-go compareIntDouble, compareUintDouble).
  for (const op of ORDERINGS) {
    const [intDouble, doubleInt, uintDouble, doubleUint] = NUMERIC_ORDERINGS[op];
    replaceOperator(env, op, `int ${op} double: bool`, () => intDouble as OperatorHandler);
    replaceOperator(env, op, `double ${op} int: bool`, () => doubleInt as OperatorHandler);
    replaceOperator(env, op, `uint ${op} double: bool`, () => uintDouble as OperatorHandler);
    replaceOperator(env, op, `double ${op} uint: bool`, () => doubleUint as OperatorHandler);
  }
}
