/**
 * admissionregistration.svc.io: ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
 * (the reference's pkg/apis/admissionregistration/validation). A policy's CEL expressions are
 * compiled in the environment of their place (src/cel/policy-env.ts): one that does not compile
 * is refused with its compile error; on an update, an expression the stored policy already had
 * is not compiled again (the reference's stored-expressions environment), so a policy keeps
 * being accepted after the libraries change.
 */
import type { Obj } from '../../api/meta';
import {
  dns1123Subdomain,
  duplicate,
  forbiddenField,
  invalidValue,
  notSupported,
  pathSegmentName,
  qualifiedName,
  required,
  tooMany,
} from '../../api/validation';
import { RESERVED as CEL_RESERVED } from '../../cel/escaping';
import { compile } from '../../cel/index';
import { type PolicyPlace, policyEnv } from '../../cel/policy-env';
import type { Strategy } from '../../registry/kind';
import { dns1035Label, type Errs, each, hasWildcard, type J, list, obj, str, stringsValue, validateLabelSelector } from './common';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const MAX_AUDIT_ANNOTATIONS = 20;
/** 5 KiB: below the 10 KiB value limit, since a concatenating expression yields a longer value. */
const MAX_VALUE_EXPRESSION_LENGTH = 5 * 1024;
const MAX_MATCH_CONDITIONS = 64;

export const isCELIdentifier = (name: string): boolean => /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_RESERVED.has(name);

const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);
const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

/** validateResources: sub-resource wildcards must not overlap. */
function validateResources(resources: string[], path: string): Errs {
  const errs: Errs = [];
  if (resources.length === 0) errs.push(required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((r, i) => {
    if (r === '') {
      errs.push(required(`${path}[${i}]`));
      return;
    }
    if (r === '*/*') doubleWildcard = true;
    if (r === '*') singleWildcard = true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      withoutSub = r !== '*';
      return;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(invalidValue(`${path}[${i}]`, r, `if '${res}/*' is present, must not specify ${r}`));
    if (subWithWildcardRes.has(sub)) errs.push(invalidValue(`${path}[${i}]`, r, `if '*/${sub}' is present, must not specify ${r}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard)
    errs.push(invalidValue(path, stringsValue(resources), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    errs.push(invalidValue(path, stringsValue(resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

export function validateRuleWithOperations(r: J, path: string): Errs {
  const errs: Errs = [];
  const ops = list<string>(r.operations);
  if (ops.length === 0) errs.push(required(`${path}.operations`));
  if (ops.length > 1 && hasWildcard(ops))
    errs.push(
      invalidValue(
        `${path}.operations`,
        stringsValue(ops, '[]admissionregistration.OperationType'),
        "if '*' is present, must not specify other operations",
      ),
    );
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = list<string>(r.apiGroups);
  if (groups.length === 0) errs.push(required(`${path}.apiGroups`));
  if (groups.length > 1 && hasWildcard(groups))
    errs.push(invalidValue(`${path}.apiGroups`, stringsValue(groups), "if '*' is present, must not specify other API groups"));
  const versions = list<string>(r.apiVersions);
  if (versions.length === 0) errs.push(required(`${path}.apiVersions`));
  if (versions.length > 1 && hasWildcard(versions))
    errs.push(invalidValue(`${path}.apiVersions`, stringsValue(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(required(`${path}.apiVersions[${i}]`));
  });
  errs.push(...validateResources(list<string>(r.resources), `${path}.resources`));
  if (r.scope !== undefined && !SCOPES.includes(str(r.scope))) errs.push(notSupported(`${path}.scope`, str(r.scope), SCOPES));
  return errs;
}

function validateNamedRule(r: J, path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  list<string>(r.resourceNames).forEach((n, i) => {
    const p = `${path}.resourceNames[${i}]`;
    errs.push(...each(p, n, pathSegmentName(n)));
    if (seen.has(n)) errs.push(duplicate(p, n));
    seen.add(n);
  });
  errs.push(...validateRuleWithOperations(r, path));
  return errs;
}

export function validateMatchResources(mr: J | undefined, path: string): Errs {
  if (!mr) return [];
  const errs: Errs = [];
  if (mr.matchPolicy === undefined) errs.push(required(`${path}.matchPolicy`));
  else if (!MATCH_POLICIES.includes(str(mr.matchPolicy)))
    errs.push(notSupported(`${path}.matchPolicy`, str(mr.matchPolicy), MATCH_POLICIES));
  for (const sel of ['namespaceSelector', 'objectSelector']) {
    if (mr[sel] === undefined) errs.push(required(`${path}.${sel}`));
    else errs.push(...validateLabelSelector(mr[sel], `${path}.${sel}`));
  }
  list<J>(mr.resourceRules).forEach((r, i) => {
    errs.push(...validateNamedRule(r, `${path}.resourceRules[${i}]`));
  });
  list<J>(mr.excludeResourceRules).forEach((r, i) => {
    errs.push(...validateNamedRule(r, `${path}.excludeResourceRules[${i}]`));
  });
  return errs;
}

export function validateParamKind(pk: J, path: string): Errs {
  const errs: Errs = [];
  const apiVersion = str(pk.apiVersion);
  if (apiVersion === '') errs.push(required(`${path}.apiVersion`));
  else {
    const slashes = apiVersion.split('/').length - 1;
    if (slashes > 1) errs.push(invalidValue(`${path}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
    else {
      const [group, version] =
        apiVersion === '/' ? ['', ''] : slashes === 0 ? ['', apiVersion] : (apiVersion.split('/') as [string, string]);
      if (group.length > 0) {
        const m = dns1123Subdomain(group);
        if (m.length > 0) errs.push(invalidValue(`${path}.apiVersion`, group, m.join(',')));
      }
      if (version.length === 0) errs.push(invalidValue(`${path}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const m = dns1035Label(version);
        if (m.length > 0) errs.push(invalidValue(`${path}.apiVersion`, version, m.join(',')));
      }
    }
  }
  const kind = str(pk.kind);
  if (kind === '') errs.push(required(`${path}.kind`));
  else {
    const m = dns1035Label(kind.toLowerCase());
    if (m.length > 0) errs.push(invalidValue(`${path}.kind`, kind, `may have mixed case, but should otherwise match: ${m.join(',')}`));
  }
  return errs;
}

export function validateMatchConditions(conds: J[], path: string): Errs {
  const errs: Errs = [];
  if (conds.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, conds.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  conds.forEach((c, i) => {
    const p = `${path}[${i}]`;
    if (str(c.expression).trim() === '') errs.push(required(`${p}.expression`));
    const name = str(c.name);
    if (name === '') errs.push(required(`${p}.name`));
    else errs.push(...each(`${p}.name`, name, qualifiedName(name)));
    if (name !== '') {
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
  });
  return errs;
}

function validateValidation(v: J, path: string): Errs {
  const errs: Errs = [];
  const expression = str(v.expression);
  if (expression.trim() === '') errs.push(required(`${path}.expression`, 'expression is not specified'));
  const messageExpression = str(v.messageExpression);
  if (messageExpression.length > 0 && messageExpression.trim() === '')
    errs.push(invalidValue(`${path}.messageExpression`, messageExpression, 'must be non-empty if specified'));
  const message = str(v.message);
  const trimmed = message.trim();
  if (message.length > 0 && trimmed === '') errs.push(invalidValue(`${path}.message`, message, 'message must be non-empty if specified'));
  else if (hasNewlines(trimmed)) errs.push(invalidValue(`${path}.message`, message, 'message must not contain line breaks'));
  if (v.reason !== undefined && !REASONS.includes(str(v.reason))) errs.push(notSupported(`${path}.reason`, str(v.reason), REASONS));
  return errs;
}

function validateAuditAnnotation(policyName: string, a: J, path: string): Errs {
  const errs: Errs = [];
  const key = str(a.key);
  if (policyName !== '') {
    const full = `${policyName}/${key}`;
    errs.push(...each(`${path}.key`, full, qualifiedName(full)));
  } else errs.push(invalidValue(`${path}.key`, key, 'requires metadata.name be non-empty'));
  const value = str(a.valueExpression).trim();
  if (value === '') errs.push(required(`${path}.valueExpression`, 'valueExpression is not specified'));
  else if (utf8Length(value) > MAX_VALUE_EXPRESSION_LENGTH)
    errs.push(required(`${path}.valueExpression`, `must not exceed ${MAX_VALUE_EXPRESSION_LENGTH} bytes in length`));
  return errs;
}

export function validateVariables(vars: J[], path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  vars.forEach((v, i) => {
    const p = `${path}[${i}]`;
    const name = str(v.name);
    if (name.trim() === '') errs.push(required(`${p}.name`, 'name is not specified'));
    else {
      if (!isCELIdentifier(name)) errs.push(invalidValue(`${p}.name`, name, 'name is not a valid CEL identifier'));
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
    if (str(v.expression).trim() === '') errs.push(required(`${p}.expression`, 'expression is not specified'));
  });
  return errs;
}

/** The policy's expressions: path, text and the place (environment) each is compiled in. */
function policyExpressions(spec: J): { path: string; expr: string; place: PolicyPlace }[] {
  const out: { path: string; expr: string; place: PolicyPlace }[] = [];
  const put = (path: string, v: unknown, place: PolicyPlace) => {
    if (typeof v === 'string' && v.trim() !== '') out.push({ path, expr: v, place });
  };
  for (const [i, c] of list<J>(spec.matchConditions).entries())
    put(`spec.matchConditions[${i}].expression`, c.expression, 'matchCondition');
  for (const [i, v] of list<J>(spec.variables).entries()) put(`spec.variables[${i}].expression`, v.expression, 'validation');
  for (const [i, v] of list<J>(spec.validations).entries()) {
    put(`spec.validations[${i}].expression`, v.expression, 'validation');
    put(`spec.validations[${i}].messageExpression`, v.messageExpression, 'validation');
  }
  for (const [i, a] of list<J>(spec.auditAnnotations).entries()) {
    put(`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression, 'auditAnnotation');
  }
  return out;
}

/** Expressions that do not compile (those the old policy already had at the same place are kept). */
function validatePolicyExpressions(spec: J, old: J | undefined): Errs {
  const withParams = obj(spec.paramKind) !== undefined;
  const stored = new Set(old ? policyExpressions(old).map((e) => `${e.path}\u0000${e.expr}`) : []);
  const errs: Errs = [];
  for (const e of policyExpressions(spec)) {
    if (stored.has(`${e.path}\u0000${e.expr}`)) continue;
    const r = compile(e.expr, policyEnv(e.place, withParams));
    if (!r.ok) errs.push(invalidValue(e.path, e.expr, `compilation failed: ${r.errors.join('; ')}`));
  }
  return errs;
}

export function validateValidatingAdmissionPolicy(o: Obj, old?: Obj): Errs {
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
    if (list(mc.resourceRules).length === 0) errs.push(required('spec.matchConstraints.resourceRules'));
  }
  errs.push(...validateMatchConditions(list<J>(spec.matchConditions), 'spec.matchConditions'));
  errs.push(...validateVariables(list<J>(spec.variables), 'spec.variables'));
  const validations = list<J>(spec.validations);
  const annotations = list<J>(spec.auditAnnotations);
  if (validations.length === 0 && annotations.length === 0) {
    errs.push(required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    errs.push(required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  validations.forEach((v, i) => {
    errs.push(...validateValidation(v, `spec.validations[${i}]`));
  });
  errs.push(...validatePolicyExpressions(spec, old && (obj(old.spec) ?? {})));
  if (annotations.length > MAX_AUDIT_ANNOTATIONS)
    errs.push(invalidValue('spec.auditAnnotations', annotations, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const keys = new Set<string>();
  annotations.forEach((a, i) => {
    const p = `spec.auditAnnotations[${i}]`;
    errs.push(...validateAuditAnnotation(o.metadata.name ?? '', a, p));
    const key = str(a.key);
    if (keys.has(key)) errs.push(duplicate(`${p}.key`, key));
    keys.add(key);
  });
  return errs;
}

export function validateParamRef(pr: J | undefined, path: string): Errs {
  if (!pr) return [];
  const errs: Errs = [];
  const name = str(pr.name);
  const selector = obj(pr.selector);
  if (name.length > 0) {
    errs.push(...each(`${path}.name`, name, pathSegmentName(name)));
    if (selector) errs.push(forbiddenField(`${path}.name`, 'name and selector are mutually exclusive'));
  }
  if (selector) {
    errs.push(...validateLabelSelector(selector, `${path}.selector`));
    if (name.length > 0) errs.push(forbiddenField(`${path}.selector`, 'name and selector are mutually exclusive'));
  }
  if (name.length === 0 && !selector) errs.push(required(path, 'one of name or selector must be specified'));
  const action = str(pr.parameterNotFoundAction);
  if (action === '') errs.push(required(`${path}.parameterNotFoundAction`));
  else if (action !== 'Deny' && action !== 'Allow') errs.push(notSupported(`${path}.parameterNotFoundAction`, action, ['Deny', 'Allow']));
  return errs;
}

function validateValidationActions(actions: string[], path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!VALIDATION_ACTIONS.includes(a)) errs.push(notSupported(`${path}[${i}]`, a, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(duplicate(`${path}[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      invalidValue(
        path,
        stringsValue(actions, '[]admissionregistration.ValidationAction'),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) errs.push(required(path, 'at least one validation action is required'));
  return errs;
}

export function validateValidatingAdmissionPolicyBinding(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const policyName = str(spec.policyName);
  if (policyName === '') errs.push(required('spec.policyName'));
  else errs.push(...each('spec.policyName', policyName, dns1123Subdomain(policyName)));
  errs.push(...validateParamRef(obj(spec.paramRef), 'spec.paramRef'));
  // The reference reports this path misspelt ("matchResouces"); kept for identical causes.
  errs.push(...validateMatchResources(obj(spec.matchResources), 'spec.matchResouces'));
  errs.push(...validateValidationActions(list<string>(spec.validationActions), 'spec.validationActions'));
  return errs;
}

/** Status (written by the type checker): warnings need a fieldRef and a text; conditions well formed. */
export function validateValidatingAdmissionPolicyStatus(o: Obj): Errs {
  const errs: Errs = [];
  const status = obj(o.status) ?? {};
  list<J>(obj(status.typeChecking)?.expressionWarnings).forEach((w, i) => {
    const p = `status.typeChecking.expressionWarnings[${i}]`;
    if (str(w.warning) === '') errs.push(required(`${p}.warning`));
    if (str(w.fieldRef).trim() === '') errs.push(required(`${p}.fieldRef`));
  });
  return errs;
}

export const validatingAdmissionPolicy: Strategy = {
  validate: (o, old) => [...validateValidatingAdmissionPolicy(o, old), ...validateValidatingAdmissionPolicyStatus(o)],
};
export const validatingAdmissionPolicyBinding: Strategy = { validate: validateValidatingAdmissionPolicyBinding };
