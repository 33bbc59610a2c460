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
 * by value for `set` lists; items of atomic lists have no old value. In self and oldSelf, `set` and
 * `map` lists compare and concatenate by their list type (`self.tags == ['b', 'a']` ignores order;
 * src/cel/lists-typed.ts), every other list as an ordinary CEL list. An error names the node's
 * path (plus the rule's `fieldPath`), its schema type as the bad value, and the message:
 * `messageExpression` when it gives a non-blank string, else `message`, else "failed rule: <rule>";
 * `reason` picks the error type (FieldValueInvalid by default, Forbidden, Required, Duplicate).
 */
import { isObject, type JsonObject } from '../../api/meta';
import type { FieldError } from '../../api/validation';
import { CostBudget, OUT_OF_BUDGET_MESSAGE, RUNTIME_CEL_COST_BUDGET } from '../../cel/budget';
import { CostLimitExceeded } from '../../cel/cost';
import { MAX_DEPTH } from '../../cel/decl-types';
import { escapeName } from '../../cel/escaping';
import { type CostedProgram, celEnv, compile, costedExecutable, executable } from '../../cel/index';
import { type ListShape, toCelShaped } from '../../cel/list-shape';
import type { ListSemantics } from '../../cel/lists-typed';

interface Rule {
  rule: string;
  fn?: CostedProgram;
  error?: string;
  transition: boolean;
  optionalOldSelf: boolean;
  message: string;
  messageSource?: string;
  messageFn?: CostedProgram;
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
  /** Where the node's schema has set and map lists (for self and oldSelf); only on nodes with rules. */
  shape?: ListShape;
  /** Renames declared properties to their CEL names (`foo-bar` → `foo__dash__bar`); only where some need it. */
  escape?: (v: unknown) => unknown;
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
  if (c.ok) out.fn = costedExecutable(c.program);
  else {
    out.error = c.errors.join('; ').split('\n')[0] as string;
    errors.push({ path, index, rule: r, error: out.error });
  }
  if (str(r.messageExpression) !== '') {
    const m = compile(str(r.messageExpression), env);
    if (m.ok) {
      out.messageFn = costedExecutable(m.program);
      out.messageSource = str(r.messageExpression);
    } else errors.push({ path, index, rule: r, error: `messageExpression compilation failed: ${m.errors.join('; ').split('\n')[0]}` });
  }
  return out;
}

/**
 * Where a schema has `set` and `map` lists (undefined when nowhere): self and oldSelf hold such
 * lists as typed lists, whose `==` ignores order and whose `+` is a union or a merge by key
 * (src/cel/lists-typed.ts).
 */
export function listShapeOf(schema: JsonObject): ListShape | undefined {
  let list: ListSemantics | undefined;
  const listType = schema['x-svc-list-type'];
  if (listType === 'set') list = { type: 'set' };
  else if (listType === 'map') {
    const keys = schema['x-svc-list-map-keys'];
    list = { type: 'map', keys: Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [] };
  }
  const items = isObject(schema.items) ? listShapeOf(schema.items) : undefined;
  const additional = isObject(schema.additionalProperties) ? listShapeOf(schema.additionalProperties) : undefined;
  const properties: Record<string, ListShape> = {};
  let typedProperty = false;
  if (isObject(schema.properties)) {
    for (const [k, v] of Object.entries(schema.properties)) {
      const sub = isObject(v) ? listShapeOf(v) : undefined;
      if (sub) typedProperty = true;
      // With additionalProperties beside (not structural, but possible), every property is named.
      if (sub || additional) properties[k] = sub ?? {};
    }
  }
  if (!list && !items && !additional && !typedProperty) return undefined;
  return { list, items, additional, properties: typedProperty || additional ? properties : undefined };
}

/**
 * The property renaming of a schema's values, as the reference exposes objects to CEL: a declared
 * property under its escaped name (src/cel/escaping.ts), one that cannot be escaped not at all;
 * undefined when no property in the subtree needs it (the common case: values pass unchanged).
 * It reaches as deep as the declared types the rules are checked against (MAX_DEPTH of
 * src/cel/decl-types.ts), so that every declared field is there under its declared name.
 */
export function escaperOf(schema: JsonObject, depth = 0): ((v: unknown) => unknown) | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const props = isObject(schema.properties) ? schema.properties : undefined;
  const subs = new Map<string, { name: string | undefined; sub?: (v: unknown) => unknown }>();
  let needed = false;
  if (props) {
    for (const [k, p] of Object.entries(props)) {
      const name = escapeName(k);
      const sub = isObject(p) ? escaperOf(p, depth + 1) : undefined;
      if (name !== k || sub) needed = true;
      subs.set(k, { name, sub });
    }
  }
  const items = isObject(schema.items) ? escaperOf(schema.items, depth + 1) : undefined;
  const additional = isObject(schema.additionalProperties) ? escaperOf(schema.additionalProperties, depth + 1) : undefined;
  if (!needed && !items && !additional) return undefined;
  return (v) => {
    if (Array.isArray(v)) return items ? v.map(items) : v;
    if (!isObject(v)) return v;
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      const d = subs.get(k);
      if (d) {
        if (d.name !== undefined) out[d.name] = d.sub ? d.sub(x) : x;
      } else out[k] = additional ? additional(x) : x;
    }
    return out;
  };
}

/** The rule tree of a schema (undefined when it has no rules at all). */
export function compileRules(schema: JsonObject, errors: RuleError[] = [], path = 'openAPIV3Schema'): RuleTree | undefined {
  const rules = (Array.isArray(schema['x-svc-validations']) ? schema['x-svc-validations'].filter(isObject) : []).map((r, i) =>
    compileOne(r, path, i, errors),
  );
  const t: RuleTree = { type: str(schema.type) || (schema['x-svc-int-or-string'] === true ? 'string' : 'object'), rules };
  if (rules.length > 0) {
    t.shape = listShapeOf(schema);
    t.escape = escaperOf(schema);
  }
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

/** The reference's ruleErrorString: the rule's message, else its expression. */
const ruleErrorString = (r: Rule): string => (r.message.trim() || r.rule).trim();

/**
 * The message of a failed rule: messageExpression when it gives a usable string (its cost taken
 * from the budget), else message, else "failed rule: <rule>"; `stop` when the budget or the call
 * limit ran out (the reference's evalMessageExpression errors).
 */
function messageFor(r: Rule, ctx: Record<string, unknown>, budget: CostBudget): { text: string; stop?: boolean } {
  const fallback = r.message.trim() || `failed rule: ${r.rule}`;
  if (!r.messageFn) return { text: fallback };
  const m = budget.run(r.messageFn, ctx);
  if (m.overBudget) {
    return {
      text: 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
      stop: true,
    };
  }
  if (m.error instanceof CostLimitExceeded) {
    budget.exhaust();
    return {
      text: `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(r.messageSource ?? '')}`,
      stop: true,
    };
  }
  const v = m.value;
  if (m.error === undefined && typeof v === 'string' && v.trim() !== '' && !v.includes('\n') && v.trim().length <= 5 * 1024)
    return { text: v.trim() };
  return { text: fallback };
}

const invalidAt = (path: string, type: string, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field: path,
  badValue: type,
  detail,
});

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

/**
 * The rule errors of a value (and, on update, the old value it corresponds to) against a rule
 * tree. Each rule may cost up to the per-call limit; the costs come out of `budget` (the
 * reference's RuntimeCELCostBudget per object, src/cel/budget.ts): past either, validation stops
 * with the reference's error.
 */
export function validateRules(
  t: RuleTree,
  value: unknown,
  old: unknown,
  path: string,
  out: FieldError[] = [],
  budget: CostBudget = new CostBudget(RUNTIME_CEL_COST_BUDGET),
): FieldError[] {
  if (value === undefined || value === null || budget.exhausted) return out;
  if (t.rules.length > 0) {
    const self = toCelShaped(t.escape ? t.escape(value) : value, t.shape);
    const oldSelf = old === undefined || old === null ? undefined : toCelShaped(t.escape ? t.escape(old) : old, t.shape);
    for (const r of t.rules) {
      if (r.transition && oldSelf === undefined && !r.optionalOldSelf) continue;
      const ctx: Record<string, unknown> = { self };
      if (r.transition) ctx.oldSelf = r.optionalOldSelf ? optional(oldSelf) : oldSelf;
      if (!r.fn) {
        out.push(fieldError(r, path, t.type, `compilation failed: ${r.error}`));
        continue;
      }
      const c = budget.run(r.fn, ctx);
      if (c.overBudget) {
        out.push(invalidAt(path, t.type, OUT_OF_BUDGET_MESSAGE));
        return out;
      }
      const err = c.error;
      if (err !== undefined) {
        const msg = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        if (err instanceof CostLimitExceeded) {
          const detail = `'${msg}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r)}`;
          out.push(invalidAt(path, t.type, detail));
          budget.exhaust();
          return out;
        }
        out.push(invalidAt(path, t.type, `${msg} evaluating rule: ${ruleErrorString(r)}`));
        continue;
      }
      if (c.value !== true) {
        const m = messageFor(r, ctx, budget);
        if (m.stop) {
          out.push(invalidAt(path, t.type, m.text));
          budget.exhaust();
          return out;
        }
        out.push(fieldError(r, path, t.type, m.text));
      }
    }
  }
  if (t.properties && isObject(value)) {
    const o = isObject(old) ? old : undefined;
    for (const [k, sub] of Object.entries(t.properties)) validateRules(sub, value[k], o?.[k], path ? `${path}.${k}` : k, out, budget);
  }
  if (t.additional && isObject(value)) {
    const o = isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value))
      if (!t.properties?.[k]) validateRules(t.additional, v, o?.[k], `${path}[${k}]`, out, budget);
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
      validateRules(t.items as RuleTree, v, o, `${path}[${i}]`, out, budget);
    });
  }
  return out;
}
