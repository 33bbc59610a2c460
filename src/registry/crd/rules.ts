/**
 * Validation rules of custom resources (`x-kubernetes-validations`, stored as `x-svc-validations`;
 * spec 1 and the reference's apiextensions CEL validator): CEL expressions at any node of a
 * version's schema, evaluated with `self` (the value at that node) and, on update, `oldSelf` (the
 * stored value it corresponds to).
 *
 *   compileRules(schema)        once per CRD version: every rule type-checked; what does not
 *                               compile is reported when the CRD is written (ruleErrors)
 *   validateRules(tree, new, old)  per write: a rule that is false (or fails) is a field error
 *
 * Transition rules (naming `oldSelf`) run only on updates where the old value exists, unless
 * `optionalOldSelf` (then `oldSelf` is an optional: `oldSelf.hasValue()`, `oldSelf.orValue(x)`).
 * Old and new values correspond by property name, by key for `x-kubernetes-list-type: map` lists,
 * by value for `set` lists; items of atomic lists have no old value. An error names the node's
 * path (plus the rule's `fieldPath`), its schema type as the bad value, and the message:
 * `messageExpression` when it gives a non-blank string, else `message`, else "failed rule: <rule>";
 * `reason` picks the error type (FieldValueInvalid by default, Forbidden, Required, Duplicate).
 */
import { isObject, type JsonObject } from '../../api/meta';
import { type Compiled, celEnv, compile, executable, toCel } from '../../cel/index';
import type { FieldError } from '../../schema/types';

interface Rule {
  rule: string;
  fn?: Compiled;
  error?: string;
  transition: boolean;
  optionalOldSelf: boolean;
  message: string;
  messageFn?: Compiled;
  reason: string;
  fieldPath: string;
}

export interface RuleTree {
  type: string;
  rules: Rule[];
  properties?: Record<string, RuleTree>;
  items?: RuleTree;
  additional?: RuleTree;
  listType?: string;
  mapKeys?: string[];
}

/** A rule that did not compile, with its place in the schema (for the CRD's 422). */
export interface RuleError {
  path: string;
  index: number;
  rule: JsonObject;
  error: string;
}

const ENV_SELF = celEnv({ self: 'dyn' });
const ENV_OLD = celEnv({ self: 'dyn', oldSelf: 'dyn' });
const ENV_OPTIONAL_OLD = celEnv({ self: 'dyn', oldSelf: 'optional<dyn>' });

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function compileOne(r: JsonObject, path: string, index: number, errors: RuleError[]): Rule {
  const rule = str(r.rule);
  const transition = /\boldSelf\b/.test(rule);
  const optionalOldSelf = r.optionalOldSelf === true;
  const env = !transition ? ENV_SELF : optionalOldSelf ? ENV_OPTIONAL_OLD : ENV_OLD;
  const out: Rule = {
    rule,
    transition,
    optionalOldSelf,
    message: str(r.message),
    reason: str(r.reason) || 'FieldValueInvalid',
    fieldPath: str(r.fieldPath),
  };
  const c = compile(rule, env);
  if (c.ok) out.fn = executable(c.program);
  else {
    out.error = c.errors.join('; ').split('\n')[0] as string;
    errors.push({ path, index, rule: r, error: out.error });
  }
  if (str(r.messageExpression) !== '') {
    const m = compile(str(r.messageExpression), env);
    if (m.ok) out.messageFn = executable(m.program);
    else errors.push({ path, index, rule: r, error: `messageExpression compilation failed: ${m.errors.join('; ').split('\n')[0]}` });
  }
  return out;
}

/** The rule tree of a schema (undefined when it has no rules at all). */
export function compileRules(schema: JsonObject, errors: RuleError[] = [], path = 'openAPIV3Schema'): RuleTree | undefined {
  const rules = (Array.isArray(schema['x-svc-validations']) ? schema['x-svc-validations'].filter(isObject) : []).map((r, i) =>
    compileOne(r, path, i, errors),
  );
  const t: RuleTree = { type: str(schema.type) || (schema['x-svc-int-or-string'] === true ? 'string' : 'object'), rules };
  let any = rules.length > 0;
  if (isObject(schema.properties)) {
    const props: Record<string, RuleTree> = {};
    for (const [k, v] of Object.entries(schema.properties)) {
      if (!isObject(v)) continue;
      const sub = compileRules(v, errors, `${path}.properties[${k}]`);
      if (sub) {
        props[k] = sub;
        any = true;
      }
    }
    t.properties = props;
  }
  if (isObject(schema.items)) {
    const sub = compileRules(schema.items, errors, `${path}.items`);
    if (sub) {
      t.items = sub;
      any = true;
    }
  }
  if (isObject(schema.additionalProperties)) {
    const sub = compileRules(schema.additionalProperties, errors, `${path}.additionalProperties`);
    if (sub) {
      t.additional = sub;
      any = true;
    }
  }
  t.listType = str(schema['x-svc-list-type']) || undefined;
  t.mapKeys = Array.isArray(schema['x-svc-list-map-keys'])
    ? schema['x-svc-list-map-keys'].filter((k): k is string => typeof k === 'string')
    : undefined;
  return any ? t : undefined;
}

/** An optional value as cel-js represents it (for optionalOldSelf). */
let optionalOf: ((v: unknown) => unknown) | undefined;
function optional(v: unknown): unknown {
  if (!optionalOf) {
    // cel-js builds optionals from `optional.of(x)` / `optional.none()`: take its constructor once.
    const of = compile('optional.of(self)', ENV_SELF);
    const none = compile('optional.none()', ENV_SELF);
    if (!of.ok || !none.ok) throw new Error('optional types are not enabled');
    const ofFn = executable(of.program);
    const noneValue = executable(none.program)({ self: null });
    optionalOf = (x) => (x === undefined ? noneValue : ofFn({ self: x }));
  }
  return optionalOf(v);
}

function messageFor(r: Rule, ctx: Record<string, unknown>): string {
  if (r.messageFn) {
    try {
      const m = r.messageFn(ctx);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m.trim();
    } catch {
      // fall back to message
    }
  }
  return r.message || `failed rule: ${r.rule}`;
}

function fieldError(r: Rule, path: string, type: string, detail: string): FieldError {
  const fp = r.fieldPath;
  const field = fp ? `${path}${fp.startsWith('.') || fp.startsWith('[') ? fp : `.${fp}`}`.replace(/^\./, '') : path;
  switch (r.reason) {
    case 'FieldValueForbidden':
      return { type: 'FieldValueForbidden', field, detail };
    case 'FieldValueRequired':
      return { type: 'FieldValueRequired', field, detail };
    case 'FieldValueDuplicate':
      return { type: 'FieldValueDuplicate', field, badValue: type, detail };
    default:
      return { type: 'FieldValueInvalid', field, badValue: type, detail };
  }
}

/** The rule errors of a value (and, on update, the old value it corresponds to) against a rule tree. */
export function validateRules(t: RuleTree, value: unknown, old: unknown, path: string, out: FieldError[] = []): FieldError[] {
  if (value === undefined || value === null) return out;
  if (t.rules.length > 0) {
    const self = toCel(value);
    const oldSelf = old === undefined || old === null ? undefined : toCel(old);
    for (const r of t.rules) {
      if (r.transition && oldSelf === undefined && !r.optionalOldSelf) continue;
      const ctx: Record<string, unknown> = { self };
      if (r.transition) ctx.oldSelf = r.optionalOldSelf ? optional(oldSelf) : oldSelf;
      if (!r.fn) {
        out.push(fieldError(r, path, t.type, `compilation failed: ${r.error}`));
        continue;
      }
      let ok: unknown;
      try {
        ok = r.fn(ctx);
      } catch (e) {
        const msg = (e instanceof Error ? e.message : String(e)).split('\n')[0];
        out.push({ type: 'FieldValueInvalid', field: path, badValue: t.type, detail: `rule evaluation error: ${msg}` });
        continue;
      }
      if (ok !== true) out.push(fieldError(r, path, t.type, messageFor(r, ctx)));
    }
  }
  if (t.properties && isObject(value)) {
    const o = isObject(old) ? old : undefined;
    for (const [k, sub] of Object.entries(t.properties)) validateRules(sub, value[k], o?.[k], path ? `${path}.${k}` : k, out);
  }
  if (t.additional && isObject(value)) {
    const o = isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) if (!t.properties?.[k]) validateRules(t.additional, v, o?.[k], `${path}[${k}]`, out);
  }
  if (t.items && Array.isArray(value)) {
    const olds = Array.isArray(old) ? old : [];
    value.forEach((v, i) => {
      let o: unknown;
      if (t.listType === 'map' && t.mapKeys && isObject(v)) {
        const key = JSON.stringify(t.mapKeys.map((k) => v[k]));
        o = olds.find((x) => isObject(x) && JSON.stringify(t.mapKeys?.map((k) => x[k])) === key);
      } else if (t.listType === 'set') {
        o = olds.find((x) => JSON.stringify(x) === JSON.stringify(v));
      }
      validateRules(t.items as RuleTree, v, o, `${path}[${i}]`, out);
    });
  }
  return out;
}
