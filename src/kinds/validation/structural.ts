/**
 * Structural schemas: the shape a CRD version's openAPIV3Schema must have before the registry can
 * prune, default and apply custom resources with it (the reference's apiextensions-apiserver
 * pkg/apiserver/schema: NewStructural, ValidateStructural and its completeness check).
 *
 * A schema is structural when every node says what it holds: `type` at every level (unless it
 * is int-or-string or preserves unknown fields), `items` for every array, and the logic junctors
 * (`allOf`, `anyOf`, `oneOf`, `not`) only restrict values that are already specified outside of
 * them. For example
 *
 *   type: object                     structural
 *   properties:
 *     spec: {type: object, anyOf: [{required: [a]}, {required: [b]}], properties: {a: ..., b: ...}}
 *
 *   properties: {spec: {anyOf: [{type: string}]}}
 *       openAPIV3Schema.type: Required value: must not be empty at the root
 *       openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields
 *       openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural
 *
 * The only type a junctor may name is the int-or-string pattern (`anyOf: [{type: integer},
 * {type: string}]`, alone or as the first `allOf` entry). Metadata at the root may narrow only
 * `name` and `generateName`.
 *
 * Schemas here are stored ones: extension keys in svc spelling (`x-svc-*`). Error paths and texts
 * name them as the reference does (`x-kubernetes-*`), whichever group the request came through.
 */
import { svcExtension } from '../../api/brand';
import { isObject, type JsonObject } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { type FieldError, forbiddenField, invalidValue, required } from '../../api/validation';

type J = JsonObject;

// ---- reading a JSONSchemaProps -----------------------------------------------------------

/** The stored key of an extension (`preserve-unknown-fields` → `x-svc-preserve-unknown-fields`). */
export const xKey = (name: string): string => svcExtension(`x-kubernetes-${name}`);
/** Whether an extension is present (Go: a non-nil pointer or a non-empty list). */
export const hasX = (p: J, name: string): boolean => p[xKey(name)] !== undefined && p[xKey(name)] !== null;
export const xTrue = (p: J, name: string): boolean => p[xKey(name)] === true;
export const xString = (p: J, name: string): string | undefined => {
  const v = p[xKey(name)];
  return typeof v === 'string' ? v : undefined;
};
export const xList = (p: J, name: string): unknown[] => {
  const v = p[xKey(name)];
  return Array.isArray(v) ? v : [];
};

export const typeOf = (p: J): string => (typeof p.type === 'string' ? p.type : '');
export const text = (v: unknown): string => (typeof v === 'string' ? v : '');
/** A value Go would hold as non-nil (a present, non-null JSON value). */
export const set = (v: unknown): boolean => v !== undefined && v !== null;

/** `properties` as [name, schema] pairs (empty when absent). */
export function props(p: J): [string, J][] {
  return isObject(p.properties) ? Object.entries(p.properties).filter((e): e is [string, J] => isObject(e[1])) : [];
}
export function prop(p: J, name: string): J | undefined {
  const v = isObject(p.properties) ? p.properties[name] : undefined;
  return isObject(v) ? v : undefined;
}
/** `items` when it is one schema (an array of schemas is refused elsewhere). */
export const items = (p: J): J | undefined => (isObject(p.items) ? p.items : undefined);
/** `additionalProperties`: absent, a boolean, or a schema. */
export function additional(p: J): { schema?: J; allows: boolean } | undefined {
  const a = p.additionalProperties;
  if (isObject(a)) return { schema: a, allows: true };
  if (typeof a === 'boolean') return { allows: a };
  return undefined;
}
/** The schemas of a junctor list (`allOf`, `anyOf`, `oneOf`). */
export const junctor = (p: J, k: 'allOf' | 'anyOf' | 'oneOf'): J[] => (Array.isArray(p[k]) ? (p[k] as unknown[]).filter(isObject) : []);
export const not = (p: J): J | undefined => (isObject(p.not) ? p.not : undefined);

// ---- NewStructural -----------------------------------------------------------------------

const UNSUPPORTED: [string, string][] = [
  ['id', 'id'],
  ['$schema', 'schema'],
  ['$ref', '$ref'],
  ['patternProperties', 'patternProperties'],
  ['dependencies', 'dependencies'],
  ['additionalItems', 'additionalItems'],
  ['definitions', 'definitions'],
];

function nonEmpty(v: unknown): boolean {
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return set(v);
}

/**
 * Why the schema has no structural form at all (NewStructural's error), or undefined: a field
 * the reference never accepts (`$schema`, `$ref`, ...), `items` as a list, or
 * `x-kubernetes-preserve-unknown-fields: false`. Most of these are also refused, with better
 * texts, by the per-node rules; the caller shows this one only when nothing else is wrong.
 */
export function unsupportedField(p: J): string | undefined {
  for (const [key, name] of UNSUPPORTED) {
    if (key === 'additionalItems' ? set(p[key]) : nonEmpty(p[key])) return `OpenAPIV3Schema '${name}' is not supported`;
  }
  for (const s of [not(p), ...junctor(p, 'allOf'), ...junctor(p, 'anyOf'), ...junctor(p, 'oneOf')]) {
    const e = s && unsupportedField(s);
    if (e) return e;
  }
  if (p[xKey('preserve-unknown-fields')] === false)
    return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(p.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  for (const s of [items(p), ...props(p).map(([, v]) => v), additional(p)?.schema]) {
    const e = s && unsupportedField(s);
    if (e) return e;
  }
  return undefined;
}

// ---- ValidateStructural ------------------------------------------------------------------

type Level = 'root' | 'item' | 'field';

const EMPTY_TYPE: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

/**
 * The structural errors of a schema that has a structural form (unsupportedField gave nothing),
 * `path` naming the schema (`spec.versions[0].schema.openAPIV3Schema`). Sorted by their text, as
 * the reference sorts them.
 */
export function validateStructural(root: J, path: string): FieldError[] {
  const errs = [...invariants(root, 'root', path), ...completeness(root, path)];
  const texts = new Map(errs.map((e) => [e, `${e.field}: ${fieldErrorText(e)}`]));
  return errs.sort((a, b) => ((texts.get(a) as string) < (texts.get(b) as string) ? -1 : 1));
}

/** Whether a schema would be refused as not structural (any error at all). */
export function isNonStructural(schema: J): boolean {
  return unsupportedField(schema) !== undefined || validateStructural(schema, '').length > 0;
}

/** `[{type: integer}, {type: string}]` and nothing else in either entry. */
function isIntOrStringAnyOf(list: J[]): boolean {
  const only = (s: J | undefined, t: string) =>
    s !== undefined && s.type === t && Object.entries(s).every(([k, v]) => k === 'type' || v === undefined || v === null);
  return list.length === 2 && only(list[0], 'integer') && only(list[1], 'string');
}

function invariants(s: J, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const t = typeOf(s);
  const it = items(s);
  if (t === 'array' && !it) errs.push(required(`${path}.items`, 'must be specified'));
  if (it) errs.push(...invariants(it, 'item', `${path}.items`));
  for (const [k, v] of props(s)) errs.push(...invariants(v, 'field', `${path}.properties[${k}]`));
  const ap = additional(s);
  if (ap) {
    if (lvl === 'root') errs.push(forbiddenField(`${path}.additionalProperties`, 'must not be used at the root'));
    if (ap.schema) errs.push(...invariants(ap.schema, 'field', `${path}.additionalProperties`));
  }
  const intOrString = xTrue(s, 'int-or-string');
  const preserve = xTrue(s, 'preserve-unknown-fields');
  const embedded = xTrue(s, 'embedded-resource');
  if (intOrString && preserve)
    errs.push(invalidValue(`${path}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded)
    errs.push(invalidValue(`${path}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  const allOf = junctor(s, 'allOf');
  errs.push(
    ...valueValidation(
      s,
      isIntOrStringAnyOf(junctor(s, 'anyOf')),
      allOf.length > 0 && isIntOrStringAnyOf(junctor(allOf[0] as J, 'anyOf')),
      lvl,
      path,
    ),
  );

  const checkMetadata = lvl === 'root' || embedded;
  if (embedded && t !== 'object') {
    const msg = 'must be object if x-kubernetes-embedded-resource is true';
    errs.push(t === '' ? required(`${path}.type`, msg) : invalidValue(`${path}.type`, t, msg));
  } else if (t === '' && !intOrString && !preserve) {
    errs.push(required(`${path}.type`, EMPTY_TYPE[lvl]));
  }
  if (embedded && ap)
    errs.push(forbiddenField(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && t !== '' && t !== 'object') errs.push(invalidValue(`${path}.type`, t, 'must be object at the root'));
  for (const k of ['kind', 'apiVersion']) {
    const f = prop(s, k);
    if (f && checkMetadata && typeOf(f) !== 'string') errs.push(invalidValue(`${path}.properties[${k}].type`, typeOf(f), 'must be string'));
  }
  const meta = prop(s, 'metadata');
  if (meta) {
    const p = `${path}.properties[metadata]`;
    if (checkMetadata && typeOf(meta) !== 'object') errs.push(invalidValue(`${p}.type`, typeOf(meta), 'must be object'));
    if (lvl === 'root' && !onlyNameAndGenerateName(meta))
      errs.push(forbiddenField(p, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  if (embedded && !preserve && props(s).length === 0) {
    errs.push(
      required(
        `${path}.properties`,
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
  return errs;
}

/** Keys of JSONSchemaProps that hold nothing in their Go zero value (`false`, empty). */
const FLAG_KEYS = ['exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'nullable'];
const TEXT_KEYS = ['description', 'title', 'format', 'pattern'];
const VALUE_KEYS = [
  'items',
  'additionalProperties',
  'externalDocs',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
];
const MORE_VALUE_KEYS = ['multipleOf', 'maxProperties', 'minProperties', 'required', 'not'];
const EXTENSIONS = [
  'preserve-unknown-fields',
  'embedded-resource',
  'int-or-string',
  'list-map-keys',
  'list-type',
  'map-type',
  'validations',
];

/**
 * The root's metadata schema restricts nothing but `name` and `generateName` (its type and
 * default are checked by other rules). Its `example` is not part of the structural form.
 */
function onlyNameAndGenerateName(m: J): boolean {
  if (props(m).some(([k]) => k !== 'name' && k !== 'generateName')) return false;
  if (FLAG_KEYS.some((k) => m[k] === true)) return false;
  if (TEXT_KEYS.some((k) => text(m[k]) !== '')) return false;
  if ([...VALUE_KEYS, ...MORE_VALUE_KEYS].some((k) => set(m[k]))) return false;
  if (['enum', 'allOf', 'anyOf', 'oneOf'].some((k) => Array.isArray(m[k]) && (m[k] as unknown[]).length > 0)) return false;
  return !EXTENSIONS.some((x) => (x === 'preserve-unknown-fields' ? xTrue(m, x) : hasX(m, x)));
}

function valueValidation(v: J, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf)
    junctor(v, 'anyOf').forEach((x, i) => {
      errs.push(...nested(x, false, false, lvl, `${path}.anyOf[${i}]`));
    });
  junctor(v, 'allOf').forEach((x, i) => {
    errs.push(...nested(x, skipFirstAllOfAnyOf && i === 0, false, lvl, `${path}.allOf[${i}]`));
  });
  junctor(v, 'oneOf').forEach((x, i) => {
    errs.push(...nested(x, false, false, lvl, `${path}.oneOf[${i}]`));
  });
  const n = not(v);
  if (n) errs.push(...nested(n, false, false, lvl, `${path}.not`));
  const pattern = text(v.pattern);
  if (pattern !== '') {
    const bad = goRegexpError(pattern);
    if (bad) errs.push(invalidValue(`${path}.pattern`, pattern, `must be a valid regular expression, but isn't: ${bad}`));
  }
  return errs;
}

/** A schema inside a junctor: value validations only. */
function nested(v: J, skipAnyOf: boolean, skipAllOfAnyOf: boolean, lvl: Level, path: string): FieldError[] {
  const errs = valueValidation(v, skipAnyOf, skipAllOfAnyOf, lvl, path);
  const it = items(v);
  if (it) errs.push(...nested(it, false, false, lvl, `${path}.items`));
  for (const [k, f] of props(v)) errs.push(...nested(f, false, false, 'field', `${path}.properties[${k}]`));
  const undef = (k: string) => forbiddenField(`${path}.${k}`, 'must be undefined to be structural');
  const empty = (k: string) => forbiddenField(`${path}.${k}`, 'must be empty to be structural');
  const notTrue = (k: string) => forbiddenField(`${path}.${k}`, 'must be false to be structural');
  if (typeOf(v) !== '') errs.push(empty('type'));
  const ap = additional(v);
  if (ap && (ap.schema || ap.allows)) errs.push(undef('additionalProperties'));
  if (set(v.default)) errs.push(undef('default'));
  if (text(v.title) !== '') errs.push(empty('title'));
  if (text(v.description) !== '') errs.push(empty('description'));
  if (v.nullable === true) errs.push(notTrue('nullable'));
  if (set(v.externalDocs)) errs.push(undef('externalDocs'));
  for (const x of ['preserve-unknown-fields', 'embedded-resource', 'int-or-string'])
    if (xTrue(v, x)) errs.push(notTrue(`x-kubernetes-${x}`));
  if (xList(v, 'list-map-keys').length > 0) errs.push(empty('x-kubernetes-list-map-keys'));
  if (hasX(v, 'list-type')) errs.push(undef('x-kubernetes-list-type'));
  if (hasX(v, 'map-type')) errs.push(undef('x-kubernetes-map-type'));
  if (xList(v, 'validations').length > 0) errs.push(empty('x-kubernetes-validations'));
  if (prop(v, 'metadata')) errs.push(forbiddenField(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
  return errs;
}

// ---- completeness: what the junctors of the root name must be specified outside them ------

function completeness(s: J, path: string): FieldError[] {
  return junctorCompleteness(s, s, path, path);
}

function junctorCompleteness(v: J, s: J, sPath: string, vPath: string): FieldError[] {
  const errs: FieldError[] = [];
  const n = not(v);
  if (n) errs.push(...nestedCompleteness(n, s, sPath, `${vPath}.not`));
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const)
    junctor(v, k).forEach((x, i) => {
      errs.push(...nestedCompleteness(x, s, sPath, `${vPath}.${k}[${i}]`));
    });
  return errs;
}

function nestedCompleteness(v: J | undefined, s: J | undefined, sPath: string, vPath: string): FieldError[] {
  if (!v) return [];
  if (!s) return [required(sPath, `because it is defined in ${vPath}`)];
  const errs = junctorCompleteness(v, s, sPath, vPath);
  errs.push(...nestedCompleteness(items(v), items(s), `${sPath}.items`, `${vPath}.items`));
  for (const [k, f] of props(v)) {
    const sf = prop(s, k);
    const sp = `${sPath}.properties[${k}]`;
    const vp = `${vPath}.properties[${k}]`;
    errs.push(...(sf ? nestedCompleteness(f, sf, sp, vp) : [required(sp, `because it is defined in ${vp}`)]));
  }
  return errs;
}

// ---- patterns: Go's regexp (RE2) syntax ----------------------------------------------------

/**
 * Why Go's regexp package refuses a pattern (`error parsing regexp: ...`), or undefined. RE2 has
 * no lookaround and no backreferences, which JavaScript accepts; other syntax errors are found
 * by JavaScript's parser and named with Go's text for the common ones.
 */
export function goRegexpError(pattern: string): string | undefined {
  const look = /\(\?<?[=!]/.exec(pattern);
  if (look) return `error parsing regexp: invalid or unsupported Perl syntax: \`${look[0]}\``;
  const backref = /(?<!\\)(?:\\\\)*(\\[1-9])/.exec(pattern);
  if (backref) return `error parsing regexp: invalid escape sequence: \`${backref[1]}\``;
  try {
    new RegExp(pattern);
    return undefined;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/Unterminated group|missing \)/i.test(msg)) return `error parsing regexp: missing closing ): \`${pattern}\``;
    if (/Unmatched '\)'|unmatched parentheses/i.test(msg)) return `error parsing regexp: unexpected ): \`${pattern}\``;
    if (/Unterminated character class|missing terminating \]/i.test(msg))
      return `error parsing regexp: missing closing ]: \`${pattern.slice(pattern.lastIndexOf('['))}\``;
    if (/Nothing to repeat/i.test(msg)) {
      const op = /^[*+?]|[(|][*+?]/.exec(pattern)?.[0].replace(/^[(|]/, '') ?? '*';
      return `error parsing regexp: missing argument to repetition operator: \`${op}\``;
    }
    return `error parsing regexp: ${msg.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '')}`;
  }
}
