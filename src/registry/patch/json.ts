/** JSON value helpers shared by the patch implementations. */

import type { JsonObject } from '../../api/meta';

export { isObject, type JsonObject } from '../../api/meta';

export const hasOwn = (o: object, k: string): boolean => Object.hasOwn(o, k);

/** Own member or undefined (never an inherited one such as `constructor` or `__proto__`). */
export function getOwn(o: JsonObject, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/** Sets an own member; `__proto__` becomes a plain member as JSON.parse makes it, not a prototype change. */
export function setOwn(o: JsonObject, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/** Structural equality of JSON values (member order does not matter; array order does). */
export { cloneJson, deepEqual } from '../../api/meta';

/** The JSON type name Go's decoder uses in its errors: object, array, string, number, bool, null. */
export function goJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'boolean' ? 'bool' : t === 'object' ? 'object' : t;
}

/** Go's reflect type of a decoded JSON value, as `%s` prints it (`map[string]interface {}`, ...). */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'object':
      return 'map[string]interface {}';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return typeof v;
  }
}

/** A decoded JSON value as Go's `%v` prints it: `map[a:1 b:[x y]]`. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat((v as JsonObject)[k])}`).join(' ')}]`;
  }
  if (typeof v === 'number' && !Number.isInteger(v)) {
    // %v of a float64 is strconv 'g' with the shortest representation: 1e+21, 1e-07, 0.5.
    const s = String(v);
    return s.replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(v);
}
