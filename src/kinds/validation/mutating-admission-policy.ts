/**
 * MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (the reference's
 * ValidateMutatingAdmissionPolicy and ValidateMutatingAdmissionPolicyBinding): the parts shared
 * with ValidatingAdmissionPolicy come from ./admissionregistration.ts; a mutation's expression is
 * desugared (src/cel/object-initializers.ts) and compiled in the policy's environment, and one that
 * does not compile is refused with its error (an expression the stored policy already had at the
 * same place is not compiled again, as for ValidatingAdmissionPolicy).
 */
import type { Obj } from '../../api/meta';
import { dns1123Subdomain, invalidValue, notSupported, required } from '../../api/validation';
import { compile } from '../../cel/index';
import { desugarObjectInitializers } from '../../cel/object-initializers';
import { type PolicyPlace, policyEnv } from '../../cel/policy-env';
import type { Strategy } from '../../registry/kind';
import {
  validateMatchConditions,
  validateMatchResources,
  validateParamKind,
  validateParamRef,
  validateVariables,
} from './admissionregistration';
import { type Errs, each, type J, list, obj, str } from './common';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
/** supportedMutatingOperations: a mutating policy takes part in creates and updates only. */
const MUTATING_OPERATIONS = ['*', 'CREATE', 'UPDATE'];

function validateOperations(rules: J[], path: string): Errs {
  const errs: Errs = [];
  for (const r of rules)
    for (const op of list<string>(r.operations))
      if (!MUTATING_OPERATIONS.includes(op)) errs.push(notSupported(path, op, MUTATING_OPERATIONS));
  return errs;
}

function validateMutation(m: J, path: string): Errs {
  const type = str(m.patchType);
  if (type === '') return [required(`${path}.patchType`)];
  if (!PATCH_TYPES.includes(type)) return [notSupported(`${path}.patchType`, type, PATCH_TYPES)];
  const errs: Errs = [];
  const field = type === 'ApplyConfiguration' ? 'applyConfiguration' : 'jsonPatch';
  const other = type === 'ApplyConfiguration' ? 'jsonPatch' : 'applyConfiguration';
  const body = obj(m[field]);
  if (!body) errs.push(required(`${path}.${field}`, `must be specified when patchType is ${type}`));
  else if (str(body.expression).trim() === '') errs.push(required(`${path}.${field}.expression`));
  if (m[other] !== undefined && m[other] !== null)
    errs.push(invalidValue(`${path}.${other}`, `{${other}}`, `must not be specified when patchType is ${type}`));
  return errs;
}

/** The policy's expressions with their paths and places (mutations are compiled desugared). */
function expressions(spec: J): { path: string; expr: string; place: PolicyPlace; mutation: boolean }[] {
  const out: { path: string; expr: string; place: PolicyPlace; mutation: boolean }[] = [];
  const put = (path: string, v: unknown, place: PolicyPlace, mutation = false) => {
    if (typeof v === 'string' && v.trim() !== '') out.push({ path, expr: v, place, mutation });
  };
  for (const [i, c] of list<J>(spec.matchConditions).entries())
    put(`spec.matchConditions[${i}].expression`, c.expression, 'matchCondition');
  for (const [i, v] of list<J>(spec.variables).entries()) put(`spec.variables[${i}].expression`, v.expression, 'validation');
  for (const [i, m] of list<J>(spec.mutations).entries()) {
    put(`spec.mutations[${i}].applyConfiguration.expression`, obj(m.applyConfiguration)?.expression, 'validation', true);
    put(`spec.mutations[${i}].jsonPatch.expression`, obj(m.jsonPatch)?.expression, 'validation', true);
  }
  return out;
}

function validateExpressions(spec: J, old: J | undefined): Errs {
  const withParams = obj(spec.paramKind) !== undefined;
  const stored = new Set(old ? expressions(old).map((e) => `${e.path}\u0000${e.expr}`) : []);
  const errs: Errs = [];
  for (const e of expressions(spec)) {
    if (stored.has(`${e.path}\u0000${e.expr}`)) continue;
    const d = e.mutation ? desugarObjectInitializers(e.expr) : { ok: true as const, expr: e.expr };
    if (!d.ok) {
      errs.push(invalidValue(e.path, e.expr, `compilation failed: ${d.error}`));
      continue;
    }
    const r = compile(d.expr, policyEnv(e.place, withParams));
    if (!r.ok) errs.push(invalidValue(e.path, e.expr, `compilation failed: ${r.errors.join('; ')}`));
  }
  return errs;
}

export function validateMutatingAdmissionPolicy(o: Obj, old?: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  if (spec.failurePolicy === undefined) errs.push(required('spec.failurePolicy'));
  else if (!FAILURE_POLICIES.includes(str(spec.failurePolicy)))
    errs.push(notSupported('spec.failurePolicy', str(spec.failurePolicy), FAILURE_POLICIES));
  const paramKind = obj(spec.paramKind);
  if (paramKind) errs.push(...validateParamKind(paramKind, 'spec.paramKind'));
  const mc = obj(spec.matchConstraints);
  if (!mc) errs.push(required('spec.matchConstraints'));
  else {
    errs.push(...validateMatchResources(mc, 'spec.matchConstraints'));
    const rules = list<J>(mc.resourceRules);
    if (rules.length === 0) errs.push(required('spec.matchConstraints.resourceRules'));
    errs.push(...validateOperations(rules, 'spec.matchConstraints.resourceRules.operations'));
  }
  errs.push(...validateMatchConditions(list<J>(spec.matchConditions), 'spec.matchConditions'));
  errs.push(...validateVariables(list<J>(spec.variables), 'spec.variables'));
  const mutations = list<J>(spec.mutations);
  if (mutations.length === 0) errs.push(required('spec.mutations', 'mutations must contain at least one item'));
  mutations.forEach((m, i) => {
    errs.push(...validateMutation(m, `spec.mutations[${i}]`));
  });
  const reinvocation = str(spec.reinvocationPolicy);
  if (reinvocation === '') errs.push(required('spec.reinvocationPolicy'));
  else if (!REINVOCATION_POLICIES.includes(reinvocation))
    errs.push(notSupported('spec.reinvocationPolicy', reinvocation, REINVOCATION_POLICIES));
  errs.push(...validateExpressions(spec, old && (obj(old.spec) ?? {})));
  return errs;
}

export function validateMutatingAdmissionPolicyBinding(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const policyName = str(spec.policyName);
  if (policyName === '') errs.push(required('spec.policyName'));
  else errs.push(...each('spec.policyName', policyName, dns1123Subdomain(policyName)));
  errs.push(...validateParamRef(obj(spec.paramRef), 'spec.paramRef'));
  const mr = obj(spec.matchResources);
  errs.push(...validateMatchResources(mr, 'spec.matchResources'));
  if (mr) errs.push(...validateOperations(list<J>(mr.resourceRules), 'spec.matchResources.resourceRules.operations'));
  return errs;
}

export const mutatingAdmissionPolicy: Strategy = { validate: (o, old) => validateMutatingAdmissionPolicy(o, old) };
export const mutatingAdmissionPolicyBinding: Strategy = { validate: validateMutatingAdmissionPolicyBinding };
