/**
 * JSON values to CEL values with typed lists where a schema says so (see src/cel/lists-typed.ts):
 * a ListShape is the part of a schema that has `set` or `map` lists, and toCelShaped converts a
 * value as toCel does, except that the lists at those places become TypedLists. A value or
 * subtree without a shape takes toCel's path, so schemas without such lists cost nothing.
 *
 *   { properties: { tags: { list: { type: 'set' } } } }
 *     converts {tags: ['a', 'b'], n: 1} to {tags: TypedList(set)['a', 'b'], n: 1n}
 */
import { toCel } from './index.ts';
import { type ListSemantics, TypedList } from './lists-typed.ts';

/** Where a schema has set or map lists; absent members (and undefined shapes) have none. */
export interface ListShape {
  /** The semantics of the value itself, when it is such a list. */
  readonly list?: ListSemantics;
  readonly properties?: Readonly<Record<string, ListShape>>;
  /** Of an array's items. */
  readonly items?: ListShape;
  /** Of an object's values not named in properties. */
  readonly additional?: ListShape;
}

/** JSON value to CEL value (integers as int), set and map lists as the shape says. */
export function toCelShaped(v: unknown, shape: ListShape | undefined): unknown {
  if (shape === undefined || typeof v !== 'object' || v === null) return toCel(v);
  if (Array.isArray(v)) {
    const items = shape.items;
    if (shape.list) {
      const out = new TypedList(shape.list);
      for (const x of v) out.push(toCelShaped(x, items));
      return out;
    }
    if (!items) return toCel(v);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = toCelShaped(v[i], items);
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  const { properties, additional } = shape;
  if (!properties && !additional) return toCel(v);
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    out[k] = toCelShaped(x, properties && Object.hasOwn(properties, k) ? properties[k] : additional);
  }
  return out;
}
