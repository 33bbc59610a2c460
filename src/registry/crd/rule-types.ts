/**
 * Validation rules type-checked against their node's schema when a CRD is written (spec 1,
 * "Schema type to expression type"; the reference compiles each rule with `self` and `oldSelf`
 * of the node's declared type): a rule naming a field the schema does not have, or using a value
 * as a type it is not, refuses the CRD with cel-go's error text
 * ("ERROR: <input>:1:6: undefined field 'replicass'" and its caret lines).
 *
 *   object with properties      a message type; fields by their escaped names (`foo-bar` is
 *                                `foo__dash__bar`; names that cannot be escaped are absent)
 *   object with additionalProperties   map<string, T>
 *   array                        list<T>
 *   integer / number / boolean / string   int / double / bool / string
 *   preserve-unknown-fields, int-or-string, formats (byte, date-time, duration), objects
 *   without properties    dyn: the runtime values are JSON, so these are left to the evaluation
 *   rather than typed stricter than what is evaluated
 *
 * The root node and every embedded resource (x-kubernetes-embedded-resource, unless it also
 * preserves unknown fields) also have apiVersion, kind and metadata with only name and
 * generateName, as the reference's types: `self.template.metadata.labels` is an undefined field.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { isObject, type JsonObject } from '../../api/meta';
import { engineEnvironment } from '../../cel/env';
import { escapeName } from '../../cel/escaping';
import { celGoIssue } from '../../cel/issues';
import type { RuleError } from './rules';

const MAX_DEPTH = 32;

class CrdTypes {
  private n = 0;
  constructor(private readonly env: Environment) {}

  typeOf(s: JsonObject | undefined, root: boolean, depth = 0): string {
    if (!s || depth > MAX_DEPTH) return 'dyn';
    if (s['x-svc-preserve-unknown-fields'] === true || s['x-svc-int-or-string'] === true) return 'dyn';
    const resource = root || s['x-svc-embedded-resource'] === true;
    switch (s.type) {
      case 'object': {
        const props = isObject(s.properties) ? s.properties : undefined;
        if ((props && Object.keys(props).length > 0) || resource) {
          const fields: Record<string, string> = {};
          for (const [k, v] of Object.entries(props ?? {})) {
            const name = escapeName(k);
            if (name !== undefined) fields[name] = this.typeOf(isObject(v) ? v : undefined, false, depth + 1);
          }
          if (resource) {
            fields.apiVersion ??= 'string';
            fields.kind ??= 'string';
            fields.metadata = this.metadataType();
          }
          const name = `crd${++this.n}.Object`;
          this.env.registerType(name, { fields } as never);
          return name;
        }
        if (isObject(s.additionalProperties)) return `map<string, ${this.typeOf(s.additionalProperties, false, depth + 1)}>`;
        return 'dyn';
      }
      case 'array':
        return `list<${this.typeOf(isObject(s.items) ? s.items : undefined, false, depth + 1)}>`;
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'string':
        return typeof s.format === 'string' && ['byte', 'date-time', 'date', 'duration'].includes(s.format) ? 'dyn' : 'string';
      default:
        return 'dyn';
    }
  }

  private meta: string | undefined;
  private metadataType(): string {
    if (!this.meta) {
      this.meta = `crd${++this.n}.ObjectMeta`;
      this.env.registerType(this.meta, { fields: { name: 'string', generateName: 'string' } } as never);
    }
    return this.meta;
  }
}

/** The rules of a schema (already compiled with `self` dynamic) that do not type-check against their node. */
export function ruleTypeErrors(root: JsonObject): RuleError[] {
  const errors: RuleError[] = [];
  const visit = (s: JsonObject, path: string, isRoot: boolean): void => {
    const rules = Array.isArray(s['x-svc-validations']) ? s['x-svc-validations'].filter(isObject) : [];
    if (rules.length > 0) {
      const env = engineEnvironment({});
      const t = new CrdTypes(env).typeOf(s, isRoot);
      rules.forEach((r, index) => {
        const rule = typeof r.rule === 'string' ? r.rule : '';
        const transition = /\boldSelf\b/.test(rule);
        // Each rule in its own environment: oldSelf's type depends on optionalOldSelf.
        const e = env.clone({});
        e.registerVariable('self', t);
        if (transition) e.registerVariable('oldSelf', r.optionalOldSelf === true ? `optional<${t}>` : t);
        for (const [what, expr] of [
          ['rule', rule],
          ['messageExpression', typeof r.messageExpression === 'string' ? r.messageExpression : ''],
        ] as const) {
          if (expr === '') continue;
          let error: string | undefined;
          try {
            const c = e.check(expr);
            if (!c.valid) error = celGoIssue(expr, c.error);
          } catch (err) {
            error = celGoIssue(expr, err);
          }
          if (error !== undefined)
            errors.push({ path, index, rule: r, error: what === 'rule' ? error : `messageExpression compilation failed: ${error}` });
        }
      });
    }
    if (isObject(s.properties))
      for (const [k, v] of Object.entries(s.properties)) if (isObject(v)) visit(v, `${path}.properties[${k}]`, false);
    if (isObject(s.items)) visit(s.items, `${path}.items`, false);
    if (isObject(s.additionalProperties)) visit(s.additionalProperties, `${path}.additionalProperties`, false);
  };
  visit(root, 'openAPIV3Schema', true);
  return errors;
}
