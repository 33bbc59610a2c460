/**
 * apiextensions.svc.io: CustomResourceDefinition (the reference's apiextensions validation and
 * registry strategy, the rules a client meets first):
 *
 *   metadata.name       must be spec.names.plural + "." + spec.group
 *   spec.group          a DNS subdomain with at least one dot
 *   spec.names          plural/singular lowercase DNS labels, kind/listKind identifiers
 *   spec.scope          Cluster or Namespaced (immutable)
 *   spec.versions       at least one; unique DNS-1035 names; exactly one storage version; a
 *                       schema for each: structural, with defaults its own nodes accept, within
 *                       the v1 rules for extensions (crd-schema.ts, structural.ts, crd-defaults.ts)
 *   spec.preserveUnknownFields  never set to true (fields are always pruned)
 *   spec.conversion     None; Webhook is refused (this server calls no webhooks)
 *
 * Schemas written for the reference (`x-kubernetes-*` extension keys) are stored under their
 * svc names. status.storedVersions gains the storage version; a delete adds the
 * `customresourcecleanup.apiextensions.k8s.io` finalizer and the Terminating condition, and the
 * CRD controller (src/controllers/crd.ts) deletes the custom resources before letting it go.
 */
import { svcExtensionKeys } from '../../api/brand';
import { deepEqual, now, type Obj } from '../../api/meta';
import { dns1123Label, dns1123Subdomain, duplicate, forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import { ruleCostErrors } from '../../registry/crd/rule-cost';
import { ruleTypeErrors } from '../../registry/crd/rule-types';
import { compileRules, type RuleError } from '../../registry/crd/rules';
import type { Strategy } from '../../registry/kind';
import { dns1035Label, type Errs, GoValue, goQuote, list, obj, str } from './common';
import { schemaRules, validateVersionSchema } from './crd-schema';
import { validateClientConfig } from './webhooks';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9]*$/;

function storageVersion(o: Obj): string | undefined {
  const spec = obj(o.spec);
  for (const v of list(spec?.versions)) if (obj(v)?.storage === true) return str(obj(v)?.name);
  return undefined;
}

function setCondition(o: Obj, c: { type: string; status: string; reason: string; message: string }, clock = Date.now): void {
  const status = (obj(o.status) ?? {}) as Record<string, unknown>;
  const conds = list<Record<string, unknown>>(status.conditions).filter((x) => x.type !== c.type);
  conds.push({ ...c, lastTransitionTime: now(clock) });
  status.conditions = conds;
  o.status = status;
}

function validateNames(names: Record<string, unknown> | undefined, path: string): Errs {
  const errs: Errs = [];
  const n = names ?? {};
  for (const f of ['plural', 'singular']) {
    const v = str(n[f]);
    if (f === 'plural' && v === '') errs.push(required(`${path}.plural`));
    else if (v !== '') {
      const bad = dns1035Label(v);
      if (bad.length > 0) errs.push(invalidValue(`${path}.${f}`, v, bad.join(',')));
    }
  }
  for (const f of ['kind', 'listKind']) {
    const v = str(n[f]);
    if (f === 'kind' && v === '') errs.push(required(`${path}.kind`));
    else if (v !== '' && !IDENTIFIER.test(v)) {
      errs.push(invalidValue(`${path}.${f}`, v, 'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?'));
    }
  }
  if (str(n.kind) !== '' && str(n.kind) === str(n.listKind))
    errs.push(invalidValue(`${path}.listKind`, str(n.listKind), 'kind and listKind may not be the same'));
  list<string>(n.shortNames).forEach((s, i) => {
    const bad = dns1123Label(String(s));
    if (bad.length > 0) errs.push(invalidValue(`${path}.shortNames[${i}]`, s, bad.join('; ')));
  });
  list<string>(n.categories).forEach((s, i) => {
    const bad = dns1123Label(String(s));
    if (bad.length > 0) errs.push(invalidValue(`${path}.categories[${i}]`, s, bad.join('; ')));
  });
  return errs;
}

/** Every rule and messageExpression text of a CRD's schemas. */
function ruleTexts(crd: Obj): Set<string> {
  const out = new Set<string>();
  const visit = (s: unknown): void => {
    if (Array.isArray(s)) {
      for (const x of s) visit(x);
      return;
    }
    const o = obj(s);
    if (!o) return;
    for (const r of list<Record<string, unknown>>(o['x-svc-validations'])) {
      if (str(r.rule)) out.add(str(r.rule));
      if (str(r.messageExpression)) out.add(str(r.messageExpression));
    }
    for (const v of Object.values(o)) if (typeof v === 'object') visit(v);
  };
  for (const v of list<Record<string, unknown>>(obj(crd.spec)?.versions)) visit(obj(v.schema)?.openAPIV3Schema);
  return out;
}

function validateCRD(o: Obj, old?: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const rules = schemaRules(old);
  const preexisting = old ? ruleTexts(old) : new Set<string>();
  const group = str(spec.group);
  const names = obj(spec.names);
  const plural = str(names?.plural);
  if (o.metadata.name !== `${plural}.${group}`) {
    errs.push(invalidValue('metadata.name', o.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  }
  if (group === '') errs.push(required('spec.group'));
  else {
    const bad = dns1123Subdomain(group);
    if (bad.length > 0) errs.push(invalidValue('spec.group', group, bad.join('; ')));
    else if (!group.includes('.')) errs.push(invalidValue('spec.group', group, 'should be a domain with at least one dot'));
  }
  errs.push(...validateNames(names, 'spec.names'));
  const scope = str(spec.scope);
  if (scope === '') errs.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const versions = list<Record<string, unknown>>(spec.versions);
  if (versions.length === 0) errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  // The reference validates its internal form, into which a v1 CRD whose versions all carry the
  // same schema converts with that schema in spec.validation: its errors name that path, once.
  const schemaOf = (v: Record<string, unknown>) => obj(obj(v.schema)?.openAPIV3Schema);
  const first = versions[0] ? schemaOf(versions[0]) : undefined;
  const uniform = first !== undefined && versions.every((v) => deepEqual(obj(v.schema), obj(versions[0]?.schema)));
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    const at = uniform ? 'spec.validation' : `${p}.schema`;
    const name = str(v.name);
    if (name === '') errs.push(required(`${p}.name`));
    else {
      const bad = dns1035Label(name);
      if (bad.length > 0) errs.push(invalidValue(`${p}.name`, name, bad.join('; ')));
      if (seen.has(name)) errs.push(duplicate(`spec.versions[${i}].name`, name));
      seen.add(name);
    }
    if (v.storage === true) storage++;
    const schema = obj(obj(v.schema)?.openAPIV3Schema);
    if (!schema) errs.push(required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
    else if (!uniform || i === 0) {
      const ruleErrors: RuleError[] = [];
      const tree = compileRules(schema, ruleErrors);
      const checked = validateVersionSchema(schema, at, rules, ruleErrors.length === 0 ? tree : undefined);
      errs.push(...checked.errs);
      // As the reference, rules are compiled (and their errors shown) only for an otherwise valid schema.
      if (!checked.celReady) ruleErrors.length = 0;
      // Rules that parse are then type-checked against their node's schema.
      // An update keeps rules the stored CRD already had (the reference's preexisting expressions).
      else if (ruleErrors.length === 0) ruleErrors.push(...ruleTypeErrors(schema).filter((e) => !preexisting.has(str(e.rule.rule))));
      for (const e of ruleErrors) {
        const r = e.rule;
        const go = new GoValue(
          `apiextensions.ValidationRule{Rule:${goQuote(str(r.rule))}, Message:${goQuote(str(r.message))}, MessageExpression:${goQuote(str(r.messageExpression))}, Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:${goQuote(str(r.fieldPath))}, OptionalOldSelf:(*bool)(nil)}`,
          r,
        );
        const what = e.error.startsWith('messageExpression') ? 'messageExpression' : 'rule';
        const detail = what === 'rule' ? `compilation failed: ${e.error}` : e.error;
        errs.push(invalidValue(`${at}.${e.path}.x-kubernetes-validations[${e.index}].${what}`, go, detail));
      }
      // Rules that compile are refused when their estimated cost is past the reference's limits.
      if (checked.celReady && ruleErrors.length === 0) {
        for (const c of ruleCostErrors(schema))
          if (!c.expr || !preexisting.has(c.expr)) errs.push(forbiddenField(`${at}.${c.path}`, c.detail));
      }
    }
    const cols = list<Record<string, unknown>>(v.additionalPrinterColumns);
    cols.forEach((c, j) => {
      if (str(c.name) === '') errs.push(required(`${p}.additionalPrinterColumns[${j}].name`));
      if (str(c.jsonPath) === '') errs.push(required(`${p}.additionalPrinterColumns[${j}].jsonPath`));
      const t = str(c.type);
      if (!['integer', 'number', 'string', 'boolean', 'date'].includes(t))
        errs.push(notSupported(`${p}.additionalPrinterColumns[${j}].type`, t, ['boolean', 'date', 'integer', 'number', 'string']));
    });
  });
  if (versions.length > 0 && storage !== 1) {
    errs.push(
      invalidValue(
        'spec.versions',
        versions.map((v) => str(v.name)),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  if (versions.length > 0 && !versions.some((v) => v.served === true)) {
    errs.push(
      invalidValue(
        'spec.versions',
        versions.map((v) => str(v.name)),
        'must have at least one version marked as served',
      ),
    );
  }
  // Pruning is the only behaviour of v1 CRDs; a CRD stored with preserveUnknownFields keeps it.
  if (spec.preserveUnknownFields === true && obj(old?.spec)?.preserveUnknownFields !== true) {
    errs.push(
      invalidValue(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  const strategy = str(obj(spec.conversion)?.strategy) || 'None';
  const webhook = obj(obj(spec.conversion)?.webhook);
  if (strategy === 'Webhook') {
    // The reference's validateCustomResourceConversion.
    if (!webhook) errs.push(required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
    else {
      if (webhook.clientConfig === undefined)
        errs.push(required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
      else errs.push(...validateClientConfig(webhook.clientConfig, 'spec.conversion.webhook.clientConfig'));
      const versions = list<unknown>(webhook.conversionReviewVersions);
      if (versions.length === 0) errs.push(required('spec.conversion.webhook.conversionReviewVersions', 'must specify one of v1, v1beta1'));
      else if (!versions.some((v) => v === 'v1' || v === 'v1beta1'))
        errs.push(invalidValue('spec.conversion.webhook.conversionReviewVersions', versions, 'must include at least one of v1, v1beta1'));
    }
  } else if (strategy !== 'None') errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  else if (webhook) errs.push(forbiddenField('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  return errs;
}

export const customResourceDefinition: Strategy = {
  decode(o) {
    if (o.spec !== undefined) o.spec = svcExtensionKeys(o.spec);
  },
  prepareForCreate(o) {
    o.status = { acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
    const s = storageVersion(o);
    if (s) (o.status as { storedVersions: string[] }).storedVersions = [s];
  },
  prepareForUpdate(o, old) {
    o.status = old.status;
    const s = storageVersion(o);
    const status = (obj(o.status) ?? {}) as { storedVersions?: string[] };
    const stored = [...(status.storedVersions ?? [])];
    if (s && !stored.includes(s)) stored.push(s);
    o.status = { ...status, storedVersions: stored };
  },
  validate: validateCRD,
  validateUpdate(o, old) {
    const errs: Errs = [];
    const spec = obj(o.spec) ?? {};
    const oldSpec = obj(old.spec) ?? {};
    if (str(spec.group) !== str(oldSpec.group)) errs.push(invalidValue('spec.group', str(spec.group), 'field is immutable'));
    if (str(spec.scope) !== str(oldSpec.scope)) errs.push(invalidValue('spec.scope', str(spec.scope), 'field is immutable'));
    const stored = list<string>(obj(o.status)?.storedVersions);
    const served = new Set(list<Record<string, unknown>>(spec.versions).map((v) => str(v.name)));
    for (const v of stored)
      if (!served.has(v)) errs.push(invalidValue('status.storedVersions', stored, `must appear in spec.versions: ${v}`));
    return errs;
  },
  beginDelete(o) {
    const f = o.metadata.finalizers ?? [];
    if (!f.includes(CRD_CLEANUP_FINALIZER)) o.metadata.finalizers = [...f, CRD_CLEANUP_FINALIZER];
    setCondition(o, {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
    return { grace: 0, pending: false };
  },
};
