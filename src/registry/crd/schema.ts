/**
 * A custom resource version's openAPIV3Schema (JSONSchemaProps, extension keys in svc spelling)
 * in the two forms the registry needs:
 *
 * - `structuralSchema(props)`: the schema engine's model (src/schema/types.ts), for pruning,
 *   defaulting, unknown-field detection and the apply merge rules (list types and map keys).
 *   The registry does not refuse the engine's type mismatches for custom resources: the
 *   validator below reports them as the reference does (422 with causes), not as a decoding
 *   error. `required` stays out of it (the engine writes zero values for required fields of
 *   built-in kinds).
 * - `validateValue(props, value, path)`: the OpenAPI value checks of the reference's
 *   kube-openapi validator with its texts, e.g.
 *
 *     spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
 *     spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10
 *     spec.name: Required value
 *
 * apiVersion, kind and metadata at the root are the registry's (ObjectMeta is validated as for
 * every kind); the schema may only narrow metadata.name / generateName.
 */
import { isObject, type JsonObject } from '../../api/meta';
import type { FieldError } from '../../api/validation';
import type { DefName, Schema } from '../../schema/types';

const OBJECT_META: DefName = 'io.svc.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function toSchema(p: JsonObject): Schema {
  const base: { description?: string; preserveUnknown?: boolean; embedded?: boolean; default?: unknown; nullable?: boolean } = {};
  if (typeof p.description === 'string' && p.description !== '') base.description = p.description;
  if (p['x-svc-preserve-unknown-fields'] === true) base.preserveUnknown = true;
  if (p['x-svc-embedded-resource'] === true) base.embedded = true;
  if (p.default !== undefined) base.default = p.default;
  if (p.nullable === true) base.nullable = true;
  if (p['x-svc-int-or-string'] === true) return { type: 'int-or-string', ...base };
  switch (p.type) {
    case 'object': {
      const props = isObject(p.properties) ? p.properties : undefined;
      const ap = p.additionalProperties;
      const out: Schema = { type: 'object', ...base };
      if (props) {
        out.properties = {};
        for (const [k, v] of Object.entries(props)) out.properties[k] = isObject(v) ? toSchema(v) : { type: 'any' };
      }
      if (isObject(ap)) out.additionalProperties = toSchema(ap);
      else if (ap === true) out.preserveUnknown = true;
      // An object with neither properties nor additionalProperties keeps nothing (unless preserved).
      if (!props && !isObject(ap) && !out.preserveUnknown) out.properties = {};
      // An embedded resource keeps its apiVersion, kind and metadata (pruned as ObjectMeta).
      if (base.embedded) out.properties = { ...out.properties, ...resourceFields() };
      if (p['x-svc-map-type'] === 'atomic' || p['x-svc-map-type'] === 'granular') out.mapType = p['x-svc-map-type'];
      return out;
    }
    case 'array': {
      const items = isObject(p.items) ? toSchema(p.items) : ({ type: 'any' } as Schema);
      const out: Schema = { type: 'array', items, ...base };
      const lt = p['x-svc-list-type'];
      if (lt === 'atomic' || lt === 'set' || lt === 'map') out.listType = lt;
      if (Array.isArray(p['x-svc-list-map-keys']))
        out.listMapKeys = p['x-svc-list-map-keys'].filter((k): k is string => typeof k === 'string');
      return out;
    }
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean': {
      const out: Schema = { type: p.type, ...base };
      if (typeof p.format === 'string' && p.format !== '') out.format = p.format;
      if (Array.isArray(p.enum)) out.enum = p.enum;
      return out;
    }
    default:
      // Untyped values (with x-svc-preserve-unknown-fields).
      return { type: 'any', ...base };
  }
}

function resourceFields(): Record<string, Schema> {
  return { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'ref', ref: OBJECT_META } };
}

/** The engine schema of a custom resource: its openAPIV3Schema with the registry's root fields. */
export function structuralSchema(props: JsonObject, gvk: { group: string; version: string; kind: string }): Schema {
  const root = toSchema(props);
  if (root.type !== 'object') return root;
  root.properties = { ...root.properties, ...resourceFields() };
  root.gvk = [gvk];
  return root;
}

/** The schema of a custom resource's list (`<definition>List`). */
export function listSchema(def: DefName, gvk: { group: string; version: string; kind: string }): Schema {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'ref', ref: 'io.svc.apimachinery.pkg.apis.meta.v1.ListMeta' },
      items: { type: 'array', items: { type: 'ref', ref: def } },
    },
    gvk: [{ ...gvk, kind: `${gvk.kind}List` }],
  };
}

// ---- value validation --------------------------------------------------------------------

const goType = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v; // string, boolean
};

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

const invalid = (field: string, badValue: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, badValue, detail });

function deepEqualJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The OpenAPI checks of one value against its schema (recursively); `path` like `spec.replicas`. */
export function validateValue(p: JsonObject, v: unknown, path: string, out: FieldError[] = []): FieldError[] {
  if (v === null) {
    if (p.nullable !== true && p.type !== undefined && p['x-svc-int-or-string'] !== true) {
      out.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        badValue: 'null',
        detail: `${path} in body must be of type ${p.type}: "null"`,
      });
    }
    return out;
  }
  if (p['x-svc-int-or-string'] === true) {
    if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) {
      out.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        badValue: goType(v),
        detail: `${path} in body must be of type integer,string: "${goType(v)}"`,
      });
      return out;
    }
  } else if (typeof p.type === 'string' && !typeMatches(p.type, v)) {
    out.push({
      type: 'FieldValueTypeInvalid',
      field: path,
      badValue: goType(v),
      detail: `${path} in body must be of type ${p.type}: "${goType(v)}"`,
    });
    return out;
  }
  if (Array.isArray(p.enum) && !p.enum.some((e) => deepEqualJson(e, v))) {
    out.push({
      type: 'FieldValueNotSupported',
      field: path,
      badValue: v,
      detail: `supported values: ${p.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    });
  }
  if (typeof v === 'number') {
    const max = num(p.maximum);
    const min = num(p.minimum);
    if (max !== undefined) {
      if (p.exclusiveMaximum === true ? v >= max : v > max)
        out.push(invalid(path, v, `${path} in body should be less than ${p.exclusiveMaximum === true ? '' : 'or equal to '}${max}`));
    }
    if (min !== undefined) {
      if (p.exclusiveMinimum === true ? v <= min : v < min)
        out.push(invalid(path, v, `${path} in body should be greater than ${p.exclusiveMinimum === true ? '' : 'or equal to '}${min}`));
    }
    const mult = num(p.multipleOf);
    if (mult !== undefined && mult > 0 && Math.abs(v / mult - Math.round(v / mult)) > 1e-9)
      out.push(invalid(path, v, `${path} in body should be a multiple of ${mult}`));
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    const maxLen = num(p.maxLength);
    const minLen = num(p.minLength);
    if (maxLen !== undefined && len > maxLen)
      out.push({ type: 'FieldValueTooLong', field: path, badValue: v, detail: `may not be more than ${maxLen} bytes` });
    if (minLen !== undefined && len < minLen) out.push(invalid(path, v, `${path} in body should be at least ${minLen} chars long`));
    const pattern = str(p.pattern);
    if (pattern !== undefined) {
      let re: RegExp | undefined;
      try {
        re = new RegExp(pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re && !re.test(v)) out.push(invalid(path, v, `${path} in body should match '${pattern}'`));
    }
  }
  if (Array.isArray(v)) {
    const maxItems = num(p.maxItems);
    const minItems = num(p.minItems);
    if (maxItems !== undefined && v.length > maxItems)
      out.push({ type: 'FieldValueTooMany', field: path, badValue: v.length, detail: `must have at most ${maxItems} items` });
    if (minItems !== undefined && v.length < minItems)
      out.push(invalid(path, v.length, `${path} in body should have at least ${minItems} items`));
    const lt = p['x-svc-list-type'];
    if (p.uniqueItems === true || lt === 'set') {
      const seen = new Set<string>();
      v.forEach((x, i) => {
        const k = JSON.stringify(x);
        if (seen.has(k)) out.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, badValue: x, detail: '' });
        seen.add(k);
      });
    }
    if (lt === 'map' && Array.isArray(p['x-svc-list-map-keys'])) {
      const keys = p['x-svc-list-map-keys'] as string[];
      const seen = new Set<string>();
      v.forEach((x, i) => {
        if (!isObject(x)) return;
        const k = JSON.stringify(keys.map((key) => x[key]));
        if (seen.has(k)) {
          const bad = Object.fromEntries(keys.filter((key) => x[key] !== undefined).map((key) => [key, x[key]]));
          out.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, badValue: bad, detail: '' });
        }
        seen.add(k);
      });
    }
    if (isObject(p.items)) {
      const items = p.items;
      v.forEach((x, i) => {
        validateValue(items, x, `${path}[${i}]`, out);
      });
    }
  }
  if (isObject(v)) {
    const keys = Object.keys(v);
    const maxP = num(p.maxProperties);
    const minP = num(p.minProperties);
    if (maxP !== undefined && keys.length > maxP)
      out.push({ type: 'FieldValueTooMany', field: path, badValue: keys.length, detail: `must have at most ${maxP} items` });
    if (minP !== undefined && keys.length < minP)
      out.push(invalid(path, keys.length, `${path} in body should have at least ${minP} properties`));
    const props = isObject(p.properties) ? p.properties : {};
    for (const r of Array.isArray(p.required) ? p.required : []) {
      if (typeof r === 'string' && v[r] === undefined)
        out.push({ type: 'FieldValueRequired', field: path ? `${path}.${r}` : r, detail: '' });
    }
    for (const k of keys) {
      const child = props[k];
      const sub = path ? `${path}.${k}` : k;
      if (isObject(child)) validateValue(child, v[k], sub, out);
      else if (isObject(p.additionalProperties)) validateValue(p.additionalProperties, v[k], `${path}[${k}]`, out);
    }
  }
  for (const [kw, mode] of [
    ['allOf', 'all'],
    ['anyOf', 'any'],
    ['oneOf', 'one'],
  ] as const) {
    const list = Array.isArray(p[kw]) ? (p[kw] as unknown[]).filter(isObject) : [];
    if (list.length === 0) continue;
    const results = list.map((s) => validateValue({ ...s, type: s.type ?? p.type }, v, path, []));
    const ok = results.filter((r) => r.length === 0).length;
    if (mode === 'all') for (const r of results) out.push(...r);
    else if (mode === 'any' && ok === 0)
      out.push(invalid(path, v, `${path} in body must be of type ... matching at least one schema in anyOf`));
    else if (mode === 'one' && ok !== 1) out.push(invalid(path, v, `${path} in body must validate one and only one schema (oneOf)`));
  }
  if (isObject(p.not) && validateValue(p.not, v, path, []).length === 0) {
    out.push(invalid(path, v, `${path} in body must not validate the schema (not)`));
  }
  return out;
}

/** The checks of a whole custom resource (its root fields other than apiVersion, kind, metadata). */
export function validateCustomResource(root: JsonObject, obj: JsonObject): FieldError[] {
  const out: FieldError[] = [];
  const props = isObject(root.properties) ? root.properties : {};
  const body: JsonObject = {};
  for (const [k, x] of Object.entries(obj)) if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata') body[k] = x;
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = props;
  const required = Array.isArray(root.required) ? root.required.filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind') : [];
  validateValue({ ...root, properties: rest, required }, body, '', out);
  return out;
}
