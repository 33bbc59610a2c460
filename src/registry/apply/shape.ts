/**
 * The shapes of values, the keys of the memos of managedFields (createdManaged's, src/registry/
 * apply/update.ts) and of apply (the applied configuration's field set, apply.ts): both results
 * depend only on the value's shape, its keys and the kind of each value, with arrays in full.
 */
import type { SchemaSet } from '../../schema/engine';

/**
 * A value's shape (createdManaged's and apply's memo keys): keys and the kind of every value (null, scalar, empty or
 * not), with arrays in full (their items' keys or values are part of the field set).
 */
export function shapeOf(v: unknown): string {
  if (v === null) return 'n';
  if (typeof v !== 'object') return v === undefined ? 'u' : 's';
  if (Array.isArray(v)) return JSON.stringify(v);
  let out = '{';
  for (const k in v) out += `${k.length}:${k}${shapeOf((v as Record<string, unknown>)[k])},`;
  return `${out}}`;
}

/**
 * A value's shape as a tree (what shapeOf writes as text): 0 null, 1 a scalar, 2 undefined, an
 * array's JSON text, an object's keys in order with their shapes. Kept to be compared with the
 * next values by sameShape, which walks a value without building its text.
 */
export type Shape = 0 | 1 | 2 | string | { keys: string[]; kids: Shape[] };

export function shapeTree(v: unknown): Shape {
  if (v === null) return 0;
  if (typeof v !== 'object') return v === undefined ? 2 : 1;
  if (Array.isArray(v)) return JSON.stringify(v);
  const keys: string[] = [];
  const kids: Shape[] = [];
  for (const k in v) {
    keys.push(k);
    kids.push(shapeTree((v as Record<string, unknown>)[k]));
  }
  return { keys, kids };
}

/** Whether shapeOf(v) would be the text of `s` (the same keys in the same order, kinds, arrays). */
export function sameShape(v: unknown, s: Shape): boolean {
  if (v === null) return s === 0;
  if (typeof v !== 'object') return s === (v === undefined ? 2 : 1);
  if (Array.isArray(v)) return typeof s === 'string' && JSON.stringify(v) === s;
  if (typeof s !== 'object') return false;
  const { keys, kids } = s;
  let i = 0;
  for (const k in v) {
    if (keys[i] !== k || !sameShape((v as Record<string, unknown>)[k], kids[i] as Shape)) return false;
    i++;
  }
  return i === keys.length;
}

/** A set of definitions' memo, emptied when a definition changed (a custom resource's schema). */
export function memoFor<V>(schemas: SchemaSet, memos: WeakMap<SchemaSet, { generation: number; memo: Map<string, V> }>): Map<string, V> {
  let m = memos.get(schemas);
  if (!m || m.generation !== schemas.generation) {
    m = { generation: schemas.generation, memo: new Map() };
    memos.set(schemas, m);
  }
  return m.memo;
}
