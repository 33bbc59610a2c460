/**
 * flowcontrol.apiserver.svc.io: FlowSchema and PriorityLevelConfiguration
 * (the reference's pkg/apis/flowcontrol/validation, v1 rules).
 */
import type { Obj } from '../../api/meta';
import { dns1123Label, dns1123Subdomain, duplicate, forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, GoValue, goQuote, hasWildcard, type J, list, obj, str, stringsValue } from './common';

const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10_000_000;
/** shufflesharding.MaxHashBits */
const MAX_HASH_BITS = 60;

const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

function validateVerbs(verbs: string[], path: string): Errs {
  if (verbs.length === 0) return [required(path, 'verbs must contain at least one value')];
  if (hasWildcard(verbs))
    return verbs.length > 1 ? [invalidValue(path, stringsValue(verbs), "if '*' is present, must not specify other verbs")] : [];
  if (verbs.some((v) => !SUPPORTED_VERBS.includes(v))) return [notSupported(path, stringsValue(verbs), SUPPORTED_VERBS)];
  return [];
}

/** ValidateNonResourceURLPath. */
export function nonResourceURLPath(p: string, path: string): Errs {
  if (p.length === 0) return [invalidValue(path, p, 'must not be empty')];
  if (p === '/') return [];
  if (!p.startsWith('/')) return [invalidValue(path, p, 'must start with slash')];
  if (p.includes(' ')) return [invalidValue(path, p, 'must not contain white-space')];
  if (p.includes('//')) return [invalidValue(path, p, 'must not contain double slash')];
  const wildcards = p.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !p.endsWith('/*'))) return [invalidValue(path, p, 'wildcard can only do suffix matching')];
  return [];
}

function validateSubject(s: J, path: string): Errs {
  const errs: Errs = [];
  const kind = str(s.kind);
  const forbid = (member: string, expected: string) => {
    if (s[member] !== undefined)
      errs.push(forbiddenField(`${path}.${member}`, `${member} is forbidden when subject kind is not '${expected}'`));
  };
  switch (kind) {
    case 'ServiceAccount': {
      const sa = obj(s.serviceAccount);
      if (!sa) errs.push(required(`${path}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        const name = str(sa.name);
        if (name === '') errs.push(required(`${path}.serviceAccount.name`));
        else if (name !== '*') errs.push(...each(`${path}.serviceAccount.name`, name, dns1123Subdomain(name)));
        const ns = str(sa.namespace);
        if (ns === '') errs.push(required(`${path}.serviceAccount.namespace`, 'must specify namespace for service account'));
        else errs.push(...each(`${path}.serviceAccount.namespace`, ns, dns1123Label(ns)));
      }
      forbid('user', 'User');
      forbid('group', 'Group');
      break;
    }
    case 'User':
    case 'Group': {
      const member = kind === 'User' ? 'user' : 'group';
      const m = obj(s[member]);
      if (!m) errs.push(required(`${path}.${member}`, `${member} is required when subject kind is '${kind}'`));
      else if (str(m.name) === '') errs.push(required(`${path}.${member}.name`));
      forbid('serviceAccount', 'ServiceAccount');
      if (kind === 'User') forbid('group', 'Group');
      else forbid('user', 'User');
      break;
    }
    default:
      errs.push(notSupported(`${path}.kind`, kind, SUBJECT_KINDS));
  }
  return errs;
}

function validateResourceRule(r: J, path: string): Errs {
  const errs = validateVerbs(list<string>(r.verbs), `${path}.verbs`);
  const groups = list<string>(r.apiGroups);
  if (groups.length === 0) errs.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  else if (groups.length > 1 && hasWildcard(groups))
    errs.push(invalidValue(`${path}.apiGroups`, stringsValue(groups), "if '*' is present, must not specify other api groups"));
  const resources = list<string>(r.resources);
  if (resources.length === 0) errs.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && hasWildcard(resources))
    errs.push(invalidValue(`${path}.resources`, stringsValue(resources), "if '*' is present, must not specify other resources"));
  const namespaces = list<string>(r.namespaces);
  if (namespaces.length === 0 && r.clusterScope !== true) {
    errs.push(required(`${path}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
  } else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1)
      errs.push(invalidValue(`${path}.namespaces`, stringsValue(namespaces), "if '*' is present, must not specify other namespaces"));
  } else {
    namespaces.forEach((ns, i) => {
      for (const m of dns1123Label(ns)) errs.push(invalidValue(`${path}.namespaces[${i}]`, ns, NS_ERR_INTRO + m));
    });
  }
  return errs;
}

function validateNonResourceRule(r: J, path: string): Errs {
  const errs = validateVerbs(list<string>(r.verbs), `${path}.verbs`);
  const urls = list<string>(r.nonResourceURLs);
  if (urls.length === 0) errs.push(required(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) {
    if (urls.length > 1)
      errs.push(invalidValue(`${path}.nonResourceURLs`, stringsValue(urls), "if '*' is present, must not specify other non-resource URLs"));
  } else
    urls.forEach((u, i) => {
      errs.push(...nonResourceURLPath(u, `${path}.nonResourceURLs[${i}]`));
    });
  return errs;
}

/** One PolicyRulesWithSubjects (also the match rules of a FaultInjection). */
export function validatePolicyRule(rule: J, path: string): Errs {
  const errs: Errs = [];
  const subjects = list<J>(rule.subjects);
  if (subjects.length === 0) errs.push(required(`${path}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((s, i) => {
    errs.push(...validateSubject(s, `${path}.subjects[${i}]`));
  });
  const resourceRules = list<J>(rule.resourceRules);
  const nonResourceRules = list<J>(rule.nonResourceRules);
  if (resourceRules.length === 0 && nonResourceRules.length === 0)
    errs.push(required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => {
    errs.push(...validateResourceRule(r, `${path}.resourceRules[${i}]`));
  });
  nonResourceRules.forEach((r, i) => {
    errs.push(...validateNonResourceRule(r, `${path}.nonResourceRules[${i}]`));
  });
  return errs;
}

/** Conditions in status: `type` required and unique. */
function validateConditions(status: unknown): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  list<J>(obj(status)?.conditions).forEach((c, i) => {
    const type = str(c.type);
    if (seen.has(type)) errs.push(duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
    if (type === '') errs.push(required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return errs;
}

export function validateFlowSchema(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const prec = typeof spec.matchingPrecedence === 'number' ? spec.matchingPrecedence : 0;
  if (prec <= 0) errs.push(invalidValue('spec.matchingPrecedence', prec, 'must be a positive value'));
  if (prec > MAX_MATCHING_PRECEDENCE)
    errs.push(invalidValue('spec.matchingPrecedence', prec, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (prec === 1 && o.metadata.name !== 'exempt')
    errs.push(invalidValue('spec.matchingPrecedence', prec, "only the schema named 'exempt' may have matchingPrecedence 1"));
  const dm = obj(spec.distinguisherMethod);
  if (dm && !DISTINGUISHER_METHODS.includes(str(dm.type))) {
    const bad = new GoValue(`flowcontrol.FlowDistinguisherMethod{Type:${goQuote(str(dm.type))}}`, dm);
    errs.push(notSupported('spec.distinguisherMethod.type', bad, DISTINGUISHER_METHODS));
  }
  const pl = str(obj(spec.priorityLevelConfiguration)?.name);
  if (pl === '') errs.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  else errs.push(...each('spec.priorityLevelConfiguration.name', pl, dns1123Subdomain(pl)));
  list<J>(spec.rules).forEach((r, i) => {
    errs.push(...validatePolicyRule(r, `spec.rules[${i}]`));
  });
  errs.push(...validateConditions(o.status));
  return errs;
}

/** shufflesharding.RequiredEntropyBits */
const requiredEntropyBits = (deck: number, hand: number): number => Math.ceil(Math.log2(deck) * hand);

function validateQueuing(q: J, path: string): Errs {
  const errs: Errs = [];
  const limit = typeof q.queueLengthLimit === 'number' ? q.queueLengthLimit : 0;
  const queues = typeof q.queues === 'number' ? q.queues : 0;
  const hand = typeof q.handSize === 'number' ? q.handSize : 0;
  if (limit <= 0) errs.push(invalidValue(`${path}.queueLengthLimit`, limit, 'must be positive'));
  if (queues <= 0) errs.push(invalidValue(`${path}.queues`, queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(invalidValue(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  if (hand <= 0) errs.push(invalidValue(`${path}.handSize`, hand, 'must be positive'));
  else if (hand > queues) errs.push(invalidValue(`${path}.handSize`, hand, `should not be greater than queues (${queues})`));
  else if (requiredEntropyBits(queues, hand) > MAX_HASH_BITS)
    errs.push(
      invalidValue(
        `${path}.handSize`,
        hand,
        `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  return errs;
}

function validateLimitResponse(lr: J, path: string): Errs {
  const type = str(lr.type);
  switch (type) {
    case 'Reject':
      return lr.queuing !== undefined
        ? [forbiddenField(`${path}.queuing`, 'must be nil if limited.limitResponse.type is not Limited')]
        : [];
    case 'Queue': {
      const q = obj(lr.queuing);
      if (!q) return [required(`${path}.queuing`, 'must not be empty if limited.limitResponse.type is Limited')];
      return validateQueuing(q, `${path}.queuing`);
    }
    default:
      return [notSupported(`${path}.type`, type, ['Queue', 'Reject'])];
  }
}

function validateLendable(v: unknown, path: string): Errs {
  return typeof v === 'number' && (v < 0 || v > 100) ? [invalidValue(path, v, 'must be between 0 and 100, inclusive')] : [];
}

export function validatePriorityLevelConfiguration(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const type = str(spec.type);
  if ((o.metadata.name === 'exempt') !== (type === 'Exempt'))
    errs.push(invalidValue('spec.type', type, "type must be 'Exempt' if and only if name is 'exempt'"));
  switch (type) {
    case 'Exempt': {
      if (spec.limited !== undefined) errs.push(forbiddenField('spec.limited', 'must be nil if the type is not Limited'));
      const ex = obj(spec.exempt);
      if (ex) {
        if (typeof ex.nominalConcurrencyShares === 'number' && ex.nominalConcurrencyShares < 0)
          errs.push(invalidValue('spec.exempt.nominalConcurrencyShares', ex.nominalConcurrencyShares, 'must be a non-negative integer'));
        errs.push(...validateLendable(ex.lendablePercent, 'spec.exempt.lendablePercent'));
      }
      break;
    }
    case 'Limited': {
      if (spec.exempt !== undefined) errs.push(forbiddenField('spec.exempt', 'must be nil if the type is Limited'));
      const lim = obj(spec.limited);
      if (!lim) {
        errs.push(required('spec.limited', 'must not be empty when type is Limited'));
        break;
      }
      const ncs = typeof lim.nominalConcurrencyShares === 'number' ? lim.nominalConcurrencyShares : 0;
      if (ncs < 0) errs.push(invalidValue('spec.limited.nominalConcurrencyShares', ncs, 'must be a non-negative integer'));
      errs.push(...validateLimitResponse(obj(lim.limitResponse) ?? {}, 'spec.limited.limitResponse'));
      errs.push(...validateLendable(lim.lendablePercent, 'spec.limited.lendablePercent'));
      if (typeof lim.borrowingLimitPercent === 'number' && lim.borrowingLimitPercent < 0)
        errs.push(
          invalidValue('spec.limited.borrowingLimitPercent', lim.borrowingLimitPercent, 'if specified, must be a non-negative integer'),
        );
      break;
    }
    default:
      errs.push(notSupported('spec.type', type, ['Exempt', 'Limited']));
  }
  errs.push(...validateConditions(o.status));
  return errs;
}

export const flowSchema: Strategy = { validate: validateFlowSchema };
export const priorityLevelConfiguration: Strategy = { validate: validatePriorityLevelConfiguration };
