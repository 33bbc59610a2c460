/**
 * Type checking of a ValidatingAdmissionPolicy against the schemas of the kinds it matches (the
 * reference's validating/typechecking.go). At admission time `object` is dynamic, so a misspelled
 * field is only found when a request meets it; here every validation's expression and
 * messageExpression is checked with `object` and `oldObject` typed by each matched kind's schema
 * (and `params` by the paramKind's), and what fails becomes a warning in
 * `status.typeChecking.expressionWarnings`:
 *
 *   { fieldRef: 'spec.validations[0].expression',
 *     warning: 'apps/v1, Kind=Deployment: No such key: replicass ...\n' }
 *
 * Kinds come from matchConstraints.resourceRules without wildcards (groups, versions; resources
 * without `*` or subresources), at most 10, sorted by group, version, kind. The types are the
 * declared types of src/cel/decl-types.ts (as the reference's SchemaDeclType of the resolved
 * schema, with the resource root's apiVersion, kind and metadata), fields under their JSON names
 * as the objects are evaluated. Type checking never changes what the policy does.
 */
import { svcGroup } from '../../api/brand';
import { isObject, type Obj } from '../../api/meta';
import { declType, modelSchemaView, TypeDeclarations } from '../../cel/decl-types';
import { engineEnvironment } from '../../cel/env';
import { celGoIssue } from '../../cel/issues';
import type { SchemaSet } from '../../schema/engine';

const MAX_TYPES = 10;

export interface Kind {
  group: string;
  version: string;
  kind: string;
  /** The schema definition of the kind. */
  schema: string;
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** Resolves a group/version/resource to its kind, or a group/version/kind (paramKind). */
export interface KindResolver {
  byResource(group: string, version: string, resource: string): Kind | undefined;
  byKind(group: string, version: string, kind: string): Kind | undefined;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The kinds to check, as typesToCheck in the reference. */
export function kindsToCheck(policy: Obj, kinds: KindResolver): Kind[] {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const mc = isObject(spec.matchConstraints) ? spec.matchConstraints : {};
  const found = new Map<string, Kind>();
  for (const rule of Array.isArray(mc.resourceRules) ? mc.resourceRules.filter(isObject) : []) {
    const groups = strings(rule.apiGroups);
    const versions = strings(rule.apiVersions);
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = strings(rule.resources).filter((r) => !/[*/]/.test(r));
    for (const g of [...groups].sort())
      for (const v of [...versions].sort())
        for (const r of [...resources].sort()) {
          const k = kinds.byResource(svcGroup(g), v, r);
          if (!k) continue;
          found.set(`${k.group}/${k.version}/${k.kind}`, k);
          if (found.size === MAX_TYPES) return sortKinds([...found.values()]);
        }
  }
  return sortKinds([...found.values()]);
}

function sortKinds(ks: Kind[]): Kind[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return ks.sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
}

/** Go's GroupVersionKind.String(). */
const gvkText = (k: Kind): string => `${k.group}/${k.version}, Kind=${k.kind}`;

/** The expression warnings of a policy (empty when every expression checks against every kind). */
export function typeCheck(policy: Obj, kinds: KindResolver, schemas: SchemaSet): ExpressionWarning[] {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const targets = kindsToCheck(policy, kinds);
  if (targets.length === 0) return [];
  const pk = isObject(spec.paramKind) ? spec.paramKind : undefined;
  let paramKind: Kind | undefined;
  if (pk && typeof pk.apiVersion === 'string' && typeof pk.kind === 'string') {
    const slash = pk.apiVersion.indexOf('/');
    paramKind = kinds.byKind(slash < 0 ? '' : svcGroup(pk.apiVersion.slice(0, slash)), pk.apiVersion.slice(slash + 1), pk.kind);
  }
  // One environment per kind: object and oldObject of its type, params of the paramKind's.
  const envs = targets.map((k) => {
    const vars: Record<string, string> = {
      request: 'dyn',
      namespaceObject: 'dyn',
      variables: 'map<string, dyn>',
      authorizer: 'kubernetes.authorization.Authorizer',
    };
    if (pk && !paramKind) vars.params = 'dyn';
    const e = engineEnvironment(vars);
    // Field names as stored: policies evaluate on the objects' JSON.
    const types = new TypeDeclarations(e, 'json');
    const typeOf = (kind: Kind) => types.declare(declType(modelSchemaView(kind.schema, schemas), true), kind.kind);
    const t = typeOf(k);
    e.registerVariable('object', t);
    e.registerVariable('oldObject', t);
    if (paramKind) e.registerVariable('params', typeOf(paramKind));
    return { kind: k, env: e };
  });
  const check = (expr: string): string => {
    const issues: string[] = [];
    for (const { kind, env } of envs) {
      let error: string | undefined;
      try {
        const r = env.parse(expr).check();
        if (!r.valid) error = celGoIssue(expr, r.error);
      } catch (e) {
        error = celGoIssue(expr, e);
      }
      if (error !== undefined) issues.push(`${gvkText(kind)}: ${error}\n`);
    }
    return issues.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  (Array.isArray(spec.validations) ? spec.validations : []).forEach((v, i) => {
    if (!isObject(v)) return;
    if (typeof v.expression === 'string') {
      const w = check(v.expression);
      if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    }
    if (typeof v.messageExpression === 'string' && v.messageExpression !== '') {
      const w = check(v.messageExpression);
      if (w) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: w });
    }
  });
  return warnings;
}
