/**
 * Defaults in a CRD version's schema, checked when the CRD is written (the reference's
 * apiextensions-apiserver pkg/apiserver/schema/defaulting/validation.go, ValidateDefaults): each
 * `default` must be a value its own node accepts, so that defaulting never writes an object the
 * server would then refuse.
 *
 *   properties[replicas]: {type: integer, default: "two"}
 *     ...properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"
 *   properties[spec]: {type: object, properties: {a: ...}, default: {a: 1, b: 2}}
 *     ...properties[spec].default: Invalid value: map[string]interface {}{"a":1, "b":2}: must not have unknown fields
 *
 * For each default, in order, the first that fails decides: it must survive pruning unchanged;
 * embedded resources inside it (`x-kubernetes-embedded-resource`, and the default at the root,
 * which is a whole object) need a string apiVersion and kind and valid metadata; the value checks
 * of the custom-resource validator (src/registry/crd/schema.ts, the same code that checks objects,
 * so the texts are the object errors' with the node as the body's root: " in body ..."); then the
 * node's x-kubernetes-validations rules, once as on create and once as an update from the default
 * to itself. Defaults under the metadata, apiVersion and kind of a nested embedded resource get the
 * value checks and rules only (the reference also decodes the surrounding object's ObjectMeta).
 * `additionalProperties` is not followed: defaults there apply to no known key.
 */
import { cloneJson, isObject, type JsonObject, type ObjectMeta } from '../../api/meta';
import { type FieldError, invalidValue, required, validateObjectMeta } from '../../api/validation';
import { type RuleTree, validateRules } from '../../registry/crd/rules';
import { validateValue } from '../../registry/crd/schema';
import { dns1035Label, GoValue } from './common';
import { additional, items, prop, props, set, xTrue } from './structural';

type J = JsonObject;
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * The default errors of a structural schema (`path` names it). `rules` is the version's compiled
 * rule tree (undefined: no rules, or some did not compile and are reported instead).
 */
export function validateDefaults(root: J, path: string, requirePruned: boolean, rules?: RuleTree): FieldError[] {
  const errs: FieldError[] = [];
  // The root is a whole resource: validated as an embedded one.
  walk(root, path, { embedded: true, insideMeta: false, requirePruned, rules }, errs);
  return errs;
}

interface Walk {
  embedded: boolean;
  insideMeta: boolean;
  requirePruned: boolean;
  rules?: RuleTree;
}

function walk(s: J, path: string, w: Walk, errs: FieldError[]): void {
  const embedded = w.embedded || xTrue(s, 'embedded-resource');
  const insideMeta = embedded ? false : w.insideMeta;
  const d = s.default;
  if (set(d)) {
    const at = `${path}.default`;
    if (insideMeta) {
      const value = valueErrors(s, d, at);
      errs.push(...(value.length > 0 ? value : ruleErrors(w.rules, d, at)));
    } else {
      if (w.requirePruned) {
        const pruned = cloneJson(d);
        prune(pruned, s, embedded);
        if (JSON.stringify(pruned) !== JSON.stringify(d)) errs.push(invalidValue(at, goValue(d), 'must not have unknown fields'));
      }
      const coerce = coerceError(d, s, embedded, at);
      const meta = coerce ? [coerce] : embeddedErrors(d, s, embedded, at);
      const value = meta.length > 0 ? [] : valueErrors(s, d, at);
      errs.push(...meta, ...value, ...(meta.length > 0 || value.length > 0 ? [] : ruleErrors(w.rules, d, at)));
    }
  }
  const it = items(s);
  if (it) walk(it, `${path}.items`, { ...w, embedded: false, insideMeta, rules: w.rules?.items }, errs);
  for (const [k, v] of props(s)) {
    const meta = insideMeta || (embedded && META_FIELDS.has(k));
    walk(v, `${path}.properties[${k}]`, { ...w, embedded: false, insideMeta: meta, rules: w.rules?.properties?.[k] }, errs);
  }
}

/** The custom-resource value checks with the default as the body: paths under `<node>.default`. */
function valueErrors(s: J, d: unknown, at: string): FieldError[] {
  return validateValue(s, d, '').map((e) => ({ ...e, field: e.field === '' ? at : `${at}.${e.field}` }));
}

function ruleErrors(t: RuleTree | undefined, d: unknown, at: string): FieldError[] {
  if (!t) return [];
  const rebase = (e: FieldError): FieldError => ({
    ...e,
    field: e.field === '' ? at : `${at}${e.field.startsWith('[') ? '' : '.'}${e.field}`,
  });
  const same = validateRules(t, d, d, '').map(rebase);
  return same.length > 0 ? same : validateRules(t, d, undefined, '').map(rebase);
}

// ---- pruning (the reference's pruning.Prune) ------------------------------------------------

/** Removes from `x` what `s` does not specify; apiVersion, kind and metadata stay on resources. */
export function prune(x: unknown, s: J | undefined, isResourceRoot: boolean): void {
  const embedded = isResourceRoot || (s !== undefined && xTrue(s, 'embedded-resource'));
  if (s && xTrue(s, 'preserve-unknown-fields')) skipPrune(x, s, embedded);
  else if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (s && embedded && META_FIELDS.has(k)) continue;
      const p = s && prop(s, k);
      const ap = s && additional(s);
      if (p) prune(v, p, false);
      else if (ap) prune(v, ap.schema, false);
      else delete x[k];
    }
  } else if (Array.isArray(x)) {
    for (const v of x) prune(v, s && items(s), false);
  }
}

/** Inside a node that preserves unknown fields: only the fields it specifies are pruned. */
function skipPrune(x: unknown, s: J, embedded: boolean): void {
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (embedded && META_FIELDS.has(k)) continue;
      const p = prop(s, k);
      const ap = additional(s);
      if (p) prune(v, p, false);
      else if (ap) prune(v, ap.schema, false);
    }
  } else if (Array.isArray(x)) {
    const it = items(s);
    if (it) for (const v of x) skipPrune(v, it, xTrue(it, 'embedded-resource'));
  }
}

// ---- embedded resources inside a default (objectmeta.Coerce and objectmeta.Validate) ------

/** Go's encoding/json name of a JSON value's type, as its unmarshal errors print it. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

const META_STRINGS = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion'];

/** Why Go could not decode `m` into an ObjectMeta (for the fields the rules below read). */
function objectMetaDecodeError(m: unknown): string | undefined {
  if (!isObject(m)) return `json: cannot unmarshal ${jsonKind(m)} into Go value of type v1.ObjectMeta`;
  const field = (f: string, t: string, v: unknown) =>
    `json: cannot unmarshal ${jsonKind(v)} into Go struct field ObjectMeta.${f} of type ${t}`;
  for (const f of META_STRINGS) if (set(m[f]) && typeof m[f] !== 'string') return field(f, 'string', m[f]);
  for (const f of ['labels', 'annotations']) {
    const v = m[f];
    if (!set(v)) continue;
    if (!isObject(v)) return field(f, 'map[string]string', v);
    for (const x of Object.values(v)) if (typeof x !== 'string') return field(f, 'string', x);
  }
  const fin = m.finalizers;
  if (set(fin) && !Array.isArray(fin)) return field('finalizers', '[]string', fin);
  if (Array.isArray(fin)) for (const x of fin) if (typeof x !== 'string') return field('finalizers', 'string', x);
  return undefined;
}

/** The first embedded resource in `x` whose apiVersion/kind is not a string or whose metadata does not decode. */
function coerceError(x: unknown, s: J | undefined, embedded: boolean, path: string): FieldError | undefined {
  if (!s) return undefined;
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (embedded && (k === 'apiVersion' || k === 'kind') && typeof v !== 'string')
        return invalidValue(`${path}.${k}`, goValue(v), 'must be a string');
      if (embedded && k === 'metadata') {
        const bad = objectMetaDecodeError(v);
        if (bad) return invalidValue(`${path}.metadata`, goValue(v), bad);
      }
      const p = prop(s, k);
      const ap = additional(s);
      const e = p
        ? coerceError(v, p, xTrue(p, 'embedded-resource'), `${path}.${k}`)
        : ap?.schema
          ? coerceError(v, ap.schema, xTrue(ap.schema, 'embedded-resource'), `${path}[${k}]`)
          : undefined;
      if (e) return e;
    }
  } else if (Array.isArray(x)) {
    const it = items(s);
    for (let i = 0; i < x.length && it; i++) {
      const e = coerceError(x[i], it, xTrue(it, 'embedded-resource'), `${path}[${i}]`);
      if (e) return e;
    }
  }
  return undefined;
}

function embeddedErrors(x: unknown, s: J | undefined, embedded: boolean, path: string): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (isObject(x)) {
    if (embedded) errs.push(...embeddedResource(x, path));
    for (const [k, v] of Object.entries(x)) {
      const p = prop(s, k);
      const ap = additional(s);
      if (p) errs.push(...embeddedErrors(v, p, xTrue(p, 'embedded-resource'), `${path}.${k}`));
      else if (ap?.schema) errs.push(...embeddedErrors(v, ap.schema, xTrue(ap.schema, 'embedded-resource'), `${path}[${k}]`));
    }
  } else if (Array.isArray(x)) {
    const it = items(s);
    if (it)
      x.forEach((v, i) => {
        errs.push(...embeddedErrors(v, it, xTrue(it, 'embedded-resource'), `${path}[${i}]`));
      });
  }
  return errs;
}

function embeddedResource(x: J, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!('apiVersion' in x)) errs.push(required(`${path}.apiVersion`));
  if (!('kind' in x)) errs.push(required(`${path}.kind`));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(invalidValue(`${path}.apiVersion`, goValue(v), 'must be a string'));
      else if (v === '') errs.push(invalidValue(`${path}.apiVersion`, v, 'must not be empty'));
      else if (v !== '/' && v.split('/').length > 2)
        errs.push(invalidValue(`${path}.apiVersion`, v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(invalidValue(`${path}.kind`, goValue(v), 'must be a string'));
      else if (v === '') errs.push(invalidValue(`${path}.kind`, v, 'must not be empty'));
      else {
        const bad = dns1035Label(v.toLowerCase());
        if (bad.length > 0) errs.push(invalidValue(`${path}.kind`, v, `may have mixed case, but should otherwise match: ${bad.join(',')}`));
      }
    } else if (k === 'metadata') {
      const bad = objectMetaDecodeError(v);
      if (bad) {
        errs.push(invalidValue(`${path}.metadata`, goValue(v), bad));
        continue;
      }
      const meta = { ...(v as ObjectMeta) };
      if (!meta.name) meta.name = 'fakename';
      for (const e of validateObjectMeta(meta, !!meta.namespace, 'path-segment')) errs.push({ ...e, field: `${path}.${e.field}` });
    }
  }
  return errs;
}

// ---- bad values as Go prints a decoded JSON value (%#v of interface{}) --------------------

function goSyntax(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'number') return String(v).replace(/e([+-])(\d)$/, 'e$10$2');
  if (typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSyntax).join(', ')}}`;
  const o = v as J;
  const keys = Object.keys(o).sort();
  return `map[string]interface {}{${keys.map((k) => `${JSON.stringify(k)}:${goSyntax(o[k])}`).join(', ')}}`;
}

/** A bad value: objects and lists carry Go's `%#v` text; scalars print as they are. */
export function goValue(v: unknown): unknown {
  return typeof v === 'object' && v !== null ? new GoValue(goSyntax(v), v) : v;
}
