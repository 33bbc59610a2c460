/**
 * Validation rules type-checked against their node's schema when a CRD is written (spec 1,
 * "Schema type to expression type"; the reference compiles each rule with `self` and `oldSelf`
 * of the node's declared type): a rule naming a field the schema does not have, or using a value
 * as a type it is not, refuses the CRD with cel-go's error text
 * ("ERROR: <input>:1:6: undefined field 'replicass'" and its caret lines).
 *
 * The types are the declared types of src/cel/decl-types.ts, with fields by their escaped names
 * (`foo-bar` is `foo__dash__bar`), as the rules' values are renamed (rules.ts escaperOf). The
 * root node and every embedded resource also have apiVersion, kind and metadata with only name
 * and generateName: `self.template.metadata.labels` is an undefined field.
 */
import { isObject, type JsonObject } from '../../api/meta';
import { declType, jsonSchemaView, TypeDeclarations } from '../../cel/decl-types';
import { engineEnvironment } from '../../cel/env';
import { celGoIssue } from '../../cel/issues';
import type { RuleError } from './rules';

/** The rules of a schema (already compiled with `self` dynamic) that do not type-check against their node. */
export function ruleTypeErrors(root: JsonObject): RuleError[] {
  const errors: RuleError[] = [];
  const visit = (s: JsonObject, path: string, isRoot: boolean): void => {
    const rules = Array.isArray(s['x-svc-validations']) ? s['x-svc-validations'].filter(isObject) : [];
    if (rules.length > 0) {
      const env = engineEnvironment({});
      const t = new TypeDeclarations(env, 'escaped').declare(declType(jsonSchemaView(s), isRoot), 'self');
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
