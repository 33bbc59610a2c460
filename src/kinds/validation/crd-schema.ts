/**
 * A CRD version's openAPIV3Schema, validated as the reference validates apiextensions.k8s.io/v1
 * CRDs (apiextensions-apiserver pkg/apis/apiextensions/validation: the schema part of
 * validateCustomResourceDefinitionValidation and ValidateCustomResourceDefinitionOpenAPISchema):
 *
 *   1. not nullable at the root;
 *   2. structural (structural.ts), and only then its defaults (crd-defaults.ts);
 *   3. per node: OpenAPI v3 types only, no `$ref`/`id`/`definitions`/..., `uniqueItems` never,
 *      properties and additionalProperties mutually exclusive, no defaults in the root's
 *      metadata/apiVersion/kind, the list and map extensions consistent (a `map` list names
 *      required-or-defaulted scalar item fields as keys; a `set` list has atomic items).
 *
 * Errors at the node's path, `spec.versions[0].schema.openAPIV3Schema.properties[spec].type`.
 * On update, rules the stored CRD already breaks are not enforced (the reference's ratcheting:
 * requireValidPropertyType, requireStructuralSchema, requirePrunedDefaults, ...), so that CRDs
 * written before a rule existed can still be updated and have their status written.
 */
import { isObject, type JsonObject } from '../../api/meta';
import { type FieldError, forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { RuleTree } from '../../registry/crd/rules';
import { list, obj, stringsValue } from './common';
import { prune, validateDefaults } from './crd-defaults';
import {
  additional,
  hasX,
  isNonStructural,
  items,
  junctor,
  not,
  prop,
  props,
  set,
  text,
  typeOf,
  unsupportedField,
  validateStructural,
  xKey,
  xList,
  xString,
  xTrue,
} from './structural';

type J = JsonObject;

/** Which rules apply: all on create; on update, those the stored CRD does not already break. */
export interface SchemaRules {
  requireStructural: boolean;
  requirePrunedDefaults: boolean;
  requireValidPropertyType: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSet: boolean;
}

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/**
 * The errors of one version's schema; `path` is the version's `schema` (`spec.versions[0].schema`).
 * `celReady`: the schema is structural with valid defaults and nothing else is wrong, so rule
 * compilation errors are worth reporting (the reference compiles rules only then).
 */
export function validateVersionSchema(
  schema: J,
  path: string,
  rules: SchemaRules,
  ruleTree?: RuleTree,
): { errs: FieldError[]; celReady: boolean } {
  const at = `${path}.openAPIV3Schema`;
  const errs: FieldError[] = [];
  if (schema.nullable === true) errs.push(forbiddenField(`${at}.nullable`, 'nullable cannot be true at the root'));
  let structural = false;
  let unsupported: string | undefined;
  if (rules.requireStructural) {
    unsupported = unsupportedField(schema);
    if (unsupported === undefined) {
      const s = validateStructural(schema, at);
      const d = s.length > 0 ? [] : validateDefaults(schema, at, rules.requirePrunedDefaults, ruleTree);
      errs.push(...s, ...d);
      structural = s.length === 0 && d.length === 0;
    }
  }
  errs.push(...validateNode(schema, at, { allowDefaults: true, reason: '', insideMeta: false }, true, rules));
  // NewStructural's error says less than the rules above: shown only when they found nothing.
  if (errs.length === 0 && unsupported !== undefined) errs.push(invalidValue(at, '', unsupported));
  return { errs, celReady: structural && errs.length === 0 };
}

/** The rules that apply to a write: all on create; on update, as the stored CRD allows. */
export function schemaRules(old?: J): SchemaRules {
  const schemas = old ? versionSchemas(old) : [];
  return {
    requireStructural: !schemas.some(isNonStructural),
    requirePrunedDefaults: !schemas.some(hasUnprunedDefaults),
    requireValidPropertyType: !schemas.some((s) => someNode(s, (n) => typeOf(n) !== '' && !OPENAPI_TYPES.includes(typeOf(n)))),
    requireAtomicSetType: !schemas.some((s) => someNode(s, nonAtomicSetItems)),
    requireMapListKeysMapSet: !schemas.some((s) => someNode(s, (n) => mapListKeysMapSet(n, '').length > 0)),
  };
}

function versionSchemas(crd: J): J[] {
  const out: J[] = [];
  for (const v of list(obj(crd.spec)?.versions)) {
    const s = obj(obj(obj(v)?.schema)?.openAPIV3Schema);
    if (s) out.push(s);
  }
  return out;
}

function hasUnprunedDefaults(schema: J): boolean {
  if (!someNode(schema, (n) => set(n.default)) || isNonStructural(schema)) return false;
  return someNode(schema, (n) => {
    if (!set(n.default)) return false;
    const pruned = structuredClone(n.default);
    prune(pruned, n, xTrue(n, 'embedded-resource'));
    return JSON.stringify(pruned) !== JSON.stringify(n.default);
  });
}

/** Whether `pred` holds for any node of the schema (the reference's SchemaHas). */
function someNode(s: J, pred: (n: J) => boolean): boolean {
  if (pred(s)) return true;
  const children: unknown[] = [
    ...props(s).map(([, v]) => v),
    ...(Array.isArray(s.items) ? s.items : [s.items]),
    ...junctor(s, 'allOf'),
    ...junctor(s, 'anyOf'),
    ...junctor(s, 'oneOf'),
    s.not,
    s.additionalProperties,
    s.additionalItems,
    ...(isObject(s.patternProperties) ? Object.values(s.patternProperties) : []),
    ...(isObject(s.dependencies) ? Object.values(s.dependencies) : []),
    ...(isObject(s.definitions) ? Object.values(s.definitions) : []),
  ];
  return children.some((c) => isObject(c) && someNode(c, pred));
}

// ---- per node (ValidateCustomResourceDefinitionOpenAPISchema) ------------------------------

interface Scope {
  allowDefaults: boolean;
  /** Why defaults are not allowed here (appended to "must not be set"). */
  reason: string;
  /** Under the metadata, apiVersion or kind of the root or of an embedded resource. */
  insideMeta: boolean;
}

const forbidDefaults = (sc: Scope, reason: string): Scope => ({ ...sc, allowDefaults: false, reason });

function validateNode(s: J, path: string, sc: Scope, isRoot: boolean, rules: SchemaRules): FieldError[] {
  const errs = standard(s, path, sc, rules);
  if (s.uniqueItems === true)
    errs.push(forbiddenField(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const ap = additional(s);
  if (ap) {
    if (props(s).length > 0 && (!ap.allows || ap.schema))
      errs.push(forbiddenField(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    // Pruning without a value would be ambiguous: no defaults in maps of object metadata.
    const sub = sc.insideMeta ? forbidDefaults(sc, 'inside additionalProperties applying to object metadata') : sc;
    if (ap.schema) errs.push(...validateNode(ap.schema, `${path}.additionalProperties`, sub, false, rules));
  }
  for (const [k, v] of props(s)) {
    let sub = sc;
    if ((isRoot || xTrue(s, 'embedded-resource')) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true };
      if (isRoot) sub = forbidDefaults(sub, `in top-level ${k}`);
    }
    errs.push(...validateNode(v, `${path}.properties[${k}]`, sub, false, rules));
  }
  const n = not(s);
  if (n) errs.push(...validateNode(n, `${path}.not`, sc, false, rules));
  for (const k of ['allOf', 'oneOf', 'anyOf'] as const)
    junctor(s, k).forEach((x, i) => {
      errs.push(...validateNode(x, `${path}.${k}[${i}]`, sc, false, rules));
    });
  if (isObject(s.definitions))
    for (const [k, v] of Object.entries(s.definitions))
      if (isObject(v)) errs.push(...validateNode(v, `${path}.definitions[${k}]`, sc, false, rules));
  const it = items(s);
  if (it) errs.push(...validateNode(it, `${path}.items`, sc, false, rules));
  if (Array.isArray(s.items))
    s.items.forEach((x, i) => {
      if (isObject(x)) errs.push(...validateNode(x, `${path}.items[${i}]`, sc, false, rules));
    });
  if (isObject(s.dependencies))
    for (const [k, v] of Object.entries(s.dependencies))
      if (isObject(v)) errs.push(...validateNode(v, `${path}.dependencies[${k}]`, sc, false, rules));
  errs.push(...extensions(s, path, rules));
  if (rules.requireMapListKeysMapSet) errs.push(...mapListKeysMapSet(s, path));
  return errs;
}

/** The reference's specStandardValidatorV3.validate: what OpenAPI v3 allows that CRDs do not. */
function standard(s: J, path: string, sc: Scope, rules: SchemaRules): FieldError[] {
  const errs: FieldError[] = [];
  const t = typeOf(s);
  if (rules.requireValidPropertyType && t !== '' && !OPENAPI_TYPES.includes(t)) errs.push(notSupported(`${path}.type`, t, OPENAPI_TYPES));
  if (set(s.default) && !sc.allowDefaults)
    errs.push(forbiddenField(`${path}.default`, sc.reason ? `must not be set ${sc.reason}` : 'must not be set'));
  if (text(s.id) !== '') errs.push(forbiddenField(`${path}.id`, 'id is not supported'));
  if (set(s.additionalItems)) errs.push(forbiddenField(`${path}.additionalItems`, 'additionalItems is not supported'));
  if (isObject(s.patternProperties) && Object.keys(s.patternProperties).length > 0)
    errs.push(forbiddenField(`${path}.patternProperties`, 'patternProperties is not supported'));
  if (isObject(s.definitions) && Object.keys(s.definitions).length > 0)
    errs.push(forbiddenField(`${path}.definitions`, 'definitions is not supported'));
  if (set(s.dependencies)) errs.push(forbiddenField(`${path}.dependencies`, 'dependencies is not supported'));
  if (set(s.$ref)) errs.push(forbiddenField(`${path}.$ref`, '$ref is not supported'));
  if (t === 'null') errs.push(forbiddenField(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0)
    errs.push(forbiddenField(`${path}.items`, 'items must be a schema object and not an array'));
  if (sc.insideMeta && xTrue(s, 'embedded-resource'))
    errs.push(forbiddenField(`${path}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
  return errs;
}

/** x-kubernetes-preserve-unknown-fields, -map-type, -list-type and -list-map-keys. */
function extensions(s: J, path: string, rules: SchemaRules): FieldError[] {
  const errs: FieldError[] = [];
  const t = typeOf(s);
  if (s[xKey('preserve-unknown-fields')] === false)
    errs.push(invalidValue(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  const mapType = xString(s, 'map-type');
  if (hasX(s, 'map-type') && t !== 'object') {
    const msg = 'must be object if x-kubernetes-map-type is specified';
    errs.push(t === '' ? required(`${path}.type`, msg) : invalidValue(`${path}.type`, t, msg));
  }
  if (hasX(s, 'map-type') && mapType !== 'atomic' && mapType !== 'granular')
    errs.push(notSupported(`${path}.x-kubernetes-map-type`, mapType ?? '', ['atomic', 'granular']));
  const listType = xString(s, 'list-type');
  const it = items(s);
  if (hasX(s, 'list-type') && t !== 'array') {
    const msg = 'must be array if x-kubernetes-list-type is specified';
    errs.push(t === '' ? required(`${path}.type`, msg) : invalidValue(`${path}.type`, t, msg));
  } else if (rules.requireAtomicSetType && listType === 'set' && it) {
    const msg = 'must be atomic as item of a list with x-kubernetes-list-type=set';
    const itemListType = xString(it, 'list-type');
    if (typeOf(it) === 'array' && itemListType !== undefined && itemListType !== 'atomic')
      errs.push(invalidValue(`${path}.items.x-kubernetes-list-type`, itemListType, msg));
    // The reference names the items' list type as the bad value here (null when unset).
    if (typeOf(it) === 'object' && xString(it, 'map-type') !== 'atomic')
      errs.push(invalidValue(`${path}.items.x-kubernetes-map-type`, itemListType ?? null, msg));
  }
  if (hasX(s, 'list-type') && listType !== 'atomic' && listType !== 'set' && listType !== 'map')
    errs.push(notSupported(`${path}.x-kubernetes-list-type`, listType ?? '', ['atomic', 'set', 'map']));
  const keys = xList(s, 'list-map-keys');
  if (keys.length > 0) {
    const msg = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (!hasX(s, 'list-type')) errs.push(required(`${path}.x-kubernetes-list-type`, msg));
    else if (listType !== 'map') errs.push(invalidValue(`${path}.x-kubernetes-list-type`, listType ?? '', msg));
  }
  if (listType === 'map') {
    if (keys.length === 0) errs.push(required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (!set(s.items)) errs.push(required(`${path}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    else if (!it) errs.push(invalidValue(`${path}.items`, s.items, 'must only have a single schema if x-kubernetes-list-type is map'));
    else if (typeOf(it) !== 'object')
      errs.push(invalidValue(`${path}.items.type`, typeOf(it), "must be object if parent array's x-kubernetes-list-type is map"));
    else {
      const seen = new Set<unknown>();
      for (const k of keys) {
        const f = typeof k === 'string' ? prop(it, k) : undefined;
        if (!f)
          errs.push(invalidValue(`${path}.x-kubernetes-list-map-keys`, stringsValue(keys), 'entries must all be names of item properties'));
        // The reference names the items' type ("object") as the bad value here.
        else if (typeOf(f) === 'array' || typeOf(f) === 'object')
          errs.push(
            invalidValue(
              `${path}.items.properties[${k}].type`,
              typeOf(it),
              "must be a scalar type if parent array's x-kubernetes-list-type is map",
            ),
          );
        if (seen.has(k))
          errs.push(invalidValue(`${path}.x-kubernetes-list-map-keys`, stringsValue(keys), 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  return errs;
}

/** The items of a `set` list that are lists or maps without being atomic. */
function nonAtomicSetItems(s: J): boolean {
  const it = items(s);
  if (xString(s, 'list-type') !== 'set' || !it) return false;
  if (typeOf(it) === 'array') return hasX(it, 'list-type') && xString(it, 'list-type') !== 'atomic';
  if (typeOf(it) === 'object') return xString(it, 'map-type') !== 'atomic';
  return false;
}

/** Items of `set` and `map` lists are never null; the keys of a `map` list are always there. */
function mapListKeysMapSet(s: J, path: string): FieldError[] {
  const it = items(s);
  const listType = xString(s, 'list-type');
  if (!it || (listType !== 'set' && listType !== 'map')) return [];
  const errs: FieldError[] = [];
  if (it.nullable === true)
    errs.push(forbiddenField(`${path}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  if (listType === 'map') {
    const req = new Set(list(it.required));
    for (const k of xList(s, 'list-map-keys')) {
      const f = typeof k === 'string' ? prop(it, k) : undefined;
      if (!f) continue;
      const p = `${path}.items.properties[${k}]`;
      if (!req.has(k) && !set(f.default))
        errs.push(
          required(`${p}.default`, 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'),
        );
      if (f.nullable === true)
        errs.push(forbiddenField(`${p}.nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
    }
  }
  return errs;
}
