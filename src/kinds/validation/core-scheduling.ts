/**
 * core/v1 scheduling constraints of a pod: node selectors and affinity (node, pod, anti-pod),
 * tolerations and topology spread constraints, as the reference's validateAffinity,
 * ValidateTolerations and validateTopologySpreadConstraints. Node selectors serve persistent
 * volumes' node affinity too.
 */
import {
  dns1123Label,
  duplicate,
  forbiddenField,
  invalidValue,
  labelValue,
  notSupported,
  qualifiedName,
  required,
} from '../../api/validation';
import { type Errs, each, type J, list, obj, str, validateLabelSelector } from './common';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const TOLERATION_OPERATORS = ['Equal', 'Exists'];
const WHEN_UNSATISFIABLE = ['DoNotSchedule', 'ScheduleAnyway'];
const NODE_INCLUSION_POLICIES = ['Honor', 'Ignore'];
const NOT_POSITIVE = 'must be greater than zero';
const WEIGHT = 'must be in the range 1-100';

/** ValidateLabelName: a qualified name, errors on `path`. */
const labelName = (key: string, path: string): Errs => each(path, key, qualifiedName(key));

// ---- node selectors -------------------------------------------------------------------------

/** ValidateNodeSelectorRequirement. */
function nodeSelectorRequirement(r: J, checkValues: boolean, path: string): Errs {
  const errs: Errs = [];
  const values = list<string>(r.values);
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        errs.push(forbiddenField(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) errs.push(required(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(invalidValue(`${path}.operator`, str(r.operator), 'not a valid selector operator'));
  }
  errs.push(...labelName(str(r.key), `${path}.key`));
  if (checkValues)
    values.forEach((v, i) => {
      errs.push(...each(`${path}.values[${i}]`, v, labelValue(str(v))));
    });
  return errs;
}

/** ValidateNodeFieldSelectorRequirement: only metadata.name, In or NotIn one value. */
function nodeFieldRequirement(r: J, path: string): Errs {
  const errs: Errs = [];
  const values = list<string>(r.values);
  if (r.operator === 'In' || r.operator === 'NotIn') {
    if (values.length !== 1)
      errs.push(required(`${path}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else errs.push(invalidValue(`${path}.operator`, str(r.operator), 'not a valid selector operator'));
  if (r.key !== 'metadata.name') errs.push(invalidValue(`${path}.key`, str(r.key), 'not a valid field selector key'));
  return errs;
}

function nodeSelectorTerm(term: J, checkValues: boolean, path: string): Errs {
  const errs: Errs = [];
  list<J>(term.matchExpressions).forEach((r, j) => {
    errs.push(...nodeSelectorRequirement(r, checkValues, `${path}.matchExpressions[${j}]`));
  });
  list<J>(term.matchFields).forEach((r, j) => {
    errs.push(...nodeFieldRequirement(r, `${path}.matchFields[${j}]`));
  });
  return errs;
}

/** ValidateNodeSelector: at least one term. */
export function validateNodeSelector(sel: J, path: string): Errs {
  const terms = list<J>(sel.nodeSelectorTerms);
  if (terms.length === 0) return [required(`${path}.nodeSelectorTerms`, 'must have at least one node selector term')];
  return terms.flatMap((t, i) => nodeSelectorTerm(t, true, `${path}.nodeSelectorTerms[${i}]`));
}

// ---- affinity -------------------------------------------------------------------------------

function labelKeys(keys: string[], selector: unknown, path: string): Errs {
  if (keys.length === 0) return [];
  if (selector === undefined || selector === null) return [forbiddenField(path, 'must not be specified when labelSelector is not set')];
  return keys.flatMap((k, i) => labelName(k, `${path}[${i}]`));
}

function podAffinityTerm(t: J, path: string): Errs {
  const errs = [
    ...validateLabelSelector(t.labelSelector, `${path}.labelSelector`),
    ...validateLabelSelector(t.namespaceSelector, `${path}.namespaceSelector`),
  ];
  for (const ns of list<string>(t.namespaces)) errs.push(...each(`${path}.namespace`, ns, dns1123Label(str(ns))));
  const match = list<string>(t.matchLabelKeys).map(str);
  const mismatch = list<string>(t.mismatchLabelKeys).map(str);
  errs.push(...labelKeys(match, t.labelSelector, `${path}.matchLabelKeys`));
  errs.push(...labelKeys(mismatch, t.labelSelector, `${path}.mismatchLabelKeys`));
  match.forEach((k, i) => {
    if (mismatch.includes(k))
      errs.push(invalidValue(`${path}.matchLabelKeys[${i}]`, k, 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
  const key = str(t.topologyKey);
  if (key === '') errs.push(required(`${path}.topologyKey`, 'can not be empty'));
  errs.push(...labelName(key, `${path}.topologyKey`));
  return errs;
}

function podAffinity(a: J, path: string): Errs {
  const errs: Errs = [];
  const req = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
  list<J>(a.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    errs.push(...podAffinityTerm(t, `${req}[${i}]`));
  });
  const pref = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  list<J>(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((w, i) => {
    const weight = typeof w.weight === 'number' ? w.weight : 0;
    if (weight <= 0 || weight > 100) errs.push(invalidValue(`${pref}[${i}].weight`, weight, WEIGHT));
    errs.push(...podAffinityTerm(obj(w.podAffinityTerm) ?? {}, `${pref}[${i}].podAffinityTerm`));
  });
  return errs;
}

function nodeAffinity(a: J, path: string): Errs {
  const errs: Errs = [];
  const req = obj(a.requiredDuringSchedulingIgnoredDuringExecution);
  if (req) errs.push(...validateNodeSelector(req, `${path}.requiredDuringSchedulingIgnoredDuringExecution`));
  const pref = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  list<J>(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    const weight = typeof t.weight === 'number' ? t.weight : 0;
    if (weight <= 0 || weight > 100) errs.push(invalidValue(`${pref}[${i}].weight`, weight, WEIGHT));
    // Preferred terms may carry invalid label values (they can match on a single node).
    errs.push(...nodeSelectorTerm(obj(t.preference) ?? {}, false, `${pref}[${i}].preference`));
  });
  return errs;
}

/** validateAffinity. */
export function validateAffinity(affinity: unknown, path: string): Errs {
  const a = obj(affinity);
  if (!a) return [];
  const errs: Errs = [];
  const na = obj(a.nodeAffinity);
  if (na) errs.push(...nodeAffinity(na, `${path}.nodeAffinity`));
  const pa = obj(a.podAffinity);
  if (pa) errs.push(...podAffinity(pa, `${path}.podAffinity`));
  const anti = obj(a.podAntiAffinity);
  if (anti) errs.push(...podAffinity(anti, `${path}.podAntiAffinity`));
  return errs;
}

// ---- tolerations ----------------------------------------------------------------------------

/** ValidateTolerations. */
export function validateTolerations(tolerations: J[], path: string): Errs {
  const errs: Errs = [];
  tolerations.forEach((t, i) => {
    const p = `${path}[${i}]`;
    const key = str(t.key);
    const operator = str(t.operator);
    const effect = str(t.effect);
    const value = str(t.value);
    if (key !== '') errs.push(...labelName(key, `${p}.key`));
    if (key === '' && operator !== 'Exists')
      errs.push(
        invalidValue(`${p}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'),
      );
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute')
      errs.push(invalidValue(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (operator === 'Equal' || operator === '') {
      const msgs = labelValue(value);
      if (msgs.length > 0) errs.push(invalidValue(`${p}.operator`, value, msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value !== '') errs.push(invalidValue(`${p}.operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else errs.push(notSupported(`${p}.operator`, operator, TOLERATION_OPERATORS));
    if (effect !== '' && !TAINT_EFFECTS.includes(effect)) errs.push(notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
  });
  return errs;
}

// ---- topology spread ------------------------------------------------------------------------

/** validateTopologySpreadConstraints. */
export function validateTopologySpread(constraints: J[], path: string): Errs {
  const errs: Errs = [];
  constraints.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const skew = typeof c.maxSkew === 'number' ? c.maxSkew : 0;
    if (skew <= 0) errs.push(invalidValue(`${p}.maxSkew`, skew, NOT_POSITIVE));
    const key = str(c.topologyKey);
    if (key === '') errs.push(required(`${p}.topologyKey`, 'can not be empty'));
    const when = str(c.whenUnsatisfiable);
    if (!WHEN_UNSATISFIABLE.includes(when)) errs.push(notSupported(`${p}.whenUnsatisfiable`, when, WHEN_UNSATISFIABLE));
    if (constraints.slice(i + 1).some((r) => str(r.topologyKey) === key && str(r.whenUnsatisfiable) === when))
      errs.push(duplicate(`${p}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${when}}`));
    if (typeof c.minDomains === 'number') {
      if (c.minDomains <= 0) errs.push(invalidValue(`${p}.minDomains`, c.minDomains, NOT_POSITIVE));
      if (when !== 'DoNotSchedule')
        errs.push(invalidValue(`${p}.minDomains`, c.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${when}`));
    }
    for (const f of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      if (typeof c[f] === 'string' && !NODE_INCLUSION_POLICIES.includes(str(c[f])))
        errs.push(notSupported(`${p}.${f}`, str(c[f]), NODE_INCLUSION_POLICIES));
    }
    const keys = list<string>(c.matchLabelKeys).map(str);
    if (keys.length > 0) {
      const sel = obj(c.labelSelector);
      if (!sel) errs.push(forbiddenField(`${p}.matchLabelKeys`, 'must not be specified when labelSelector is not set'));
      const selKeys = new Set([...Object.keys(obj(sel?.matchLabels) ?? {}), ...list<J>(sel?.matchExpressions).map((e) => str(e.key))]);
      keys.forEach((k, j) => {
        errs.push(...labelName(k, `${p}.matchLabelKeys[${j}]`));
        if (selKeys.has(k)) errs.push(invalidValue(`${p}.matchLabelKeys[${j}]`, k, 'exists in both matchLabelKeys and labelSelector'));
      });
    }
    errs.push(...validateLabelSelector(c.labelSelector, `${p}.labelSelector`));
  });
  return errs;
}
