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
import { type Errs, each, items, type J, obj, pushAll, pushEach, str, validateLabelSelector } from './common';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const TOLERATION_OPERATORS = ['Equal', 'Exists'];
const WHEN_UNSATISFIABLE = ['DoNotSchedule', 'ScheduleAnyway'];
const NODE_INCLUSION_POLICIES = ['Honor', 'Ignore'];
const INCLUSION_POLICY_FIELDS = ['nodeAffinityPolicy', 'nodeTaintsPolicy'];
const NOT_POSITIVE = 'must be greater than zero';
const WEIGHT = 'must be in the range 1-100';

/** ValidateLabelName: a qualified name, errors on `path`. */
const labelName = (key: string, path: string): Errs => each(path, key, qualifiedName(key));

/** labelName into `errs`, the path built only for a bad key. */
function pushLabelName(errs: Errs, key: string, path: string, field: string): void {
  const msgs = qualifiedName(key);
  if (msgs.length > 0) pushEach(errs, `${path}${field}`, key, msgs);
}

// ---- node selectors -------------------------------------------------------------------------

/** ValidateNodeSelectorRequirement. */
function nodeSelectorRequirement(errs: Errs, r: J, checkValues: boolean, path: string): void {
  const values = items<string>(r.values);
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
  pushLabelName(errs, str(r.key), path, '.key');
  if (checkValues)
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      const msgs = labelValue(str(v));
      if (msgs.length > 0) pushEach(errs, `${path}.values[${i}]`, v, msgs);
    }
}

/** ValidateNodeFieldSelectorRequirement: only metadata.name, In or NotIn one value. */
function nodeFieldRequirement(errs: Errs, r: J, path: string): void {
  const values = items<string>(r.values);
  if (r.operator === 'In' || r.operator === 'NotIn') {
    if (values.length !== 1)
      errs.push(required(`${path}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else errs.push(invalidValue(`${path}.operator`, str(r.operator), 'not a valid selector operator'));
  if (r.key !== 'metadata.name') errs.push(invalidValue(`${path}.key`, str(r.key), 'not a valid field selector key'));
}

function nodeSelectorTerm(errs: Errs, term: J, checkValues: boolean, path: string): void {
  const exprs = items<J>(term.matchExpressions);
  for (let j = 0; j < exprs.length; j++) nodeSelectorRequirement(errs, exprs[j] as J, checkValues, `${path}.matchExpressions[${j}]`);
  const fields = items<J>(term.matchFields);
  for (let j = 0; j < fields.length; j++) nodeFieldRequirement(errs, fields[j] as J, `${path}.matchFields[${j}]`);
}

/** ValidateNodeSelector: at least one term. */
export function validateNodeSelector(sel: J, path: string): Errs {
  const terms = items<J>(sel.nodeSelectorTerms);
  if (terms.length === 0) return [required(`${path}.nodeSelectorTerms`, 'must have at least one node selector term')];
  const errs: Errs = [];
  for (let i = 0; i < terms.length; i++) nodeSelectorTerm(errs, terms[i] as J, true, `${path}.nodeSelectorTerms[${i}]`);
  return errs;
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
  for (const ns of items<string>(t.namespaces)) pushAll(errs, each(`${path}.namespace`, ns, dns1123Label(str(ns))));
  const match = items<string>(t.matchLabelKeys).map(str);
  const mismatch = items<string>(t.mismatchLabelKeys).map(str);
  pushAll(errs, labelKeys(match, t.labelSelector, `${path}.matchLabelKeys`));
  pushAll(errs, labelKeys(mismatch, t.labelSelector, `${path}.mismatchLabelKeys`));
  match.forEach((k, i) => {
    if (mismatch.includes(k))
      errs.push(invalidValue(`${path}.matchLabelKeys[${i}]`, k, 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
  const key = str(t.topologyKey);
  if (key === '') errs.push(required(`${path}.topologyKey`, 'can not be empty'));
  pushAll(errs, labelName(key, `${path}.topologyKey`));
  return errs;
}

function podAffinity(a: J, path: string): Errs {
  const errs: Errs = [];
  const req = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
  items<J>(a.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    pushAll(errs, podAffinityTerm(t, `${req}[${i}]`));
  });
  const pref = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  items<J>(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((w, i) => {
    const weight = typeof w.weight === 'number' ? w.weight : 0;
    if (weight <= 0 || weight > 100) errs.push(invalidValue(`${pref}[${i}].weight`, weight, WEIGHT));
    pushAll(errs, podAffinityTerm(obj(w.podAffinityTerm) ?? {}, `${pref}[${i}].podAffinityTerm`));
  });
  return errs;
}

function nodeAffinity(a: J, path: string): Errs {
  const errs: Errs = [];
  const req = obj(a.requiredDuringSchedulingIgnoredDuringExecution);
  if (req) pushAll(errs, validateNodeSelector(req, `${path}.requiredDuringSchedulingIgnoredDuringExecution`));
  const preferred = items<J>(a.preferredDuringSchedulingIgnoredDuringExecution);
  for (let i = 0; i < preferred.length; i++) {
    const t = preferred[i] as J;
    const p = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    const weight = typeof t.weight === 'number' ? t.weight : 0;
    if (weight <= 0 || weight > 100) errs.push(invalidValue(`${p}.weight`, weight, WEIGHT));
    // Preferred terms may carry invalid label values (they can match on a single node).
    nodeSelectorTerm(errs, obj(t.preference) ?? {}, false, `${p}.preference`);
  }
  return errs;
}

/** validateAffinity, into `errs`. */
export function validateAffinity(errs: Errs, affinity: unknown, path: string): void {
  const a = obj(affinity);
  if (!a) return;
  const na = obj(a.nodeAffinity);
  if (na) pushAll(errs, nodeAffinity(na, `${path}.nodeAffinity`));
  const pa = obj(a.podAffinity);
  if (pa) pushAll(errs, podAffinity(pa, `${path}.podAffinity`));
  const anti = obj(a.podAntiAffinity);
  if (anti) pushAll(errs, podAffinity(anti, `${path}.podAntiAffinity`));
}

// ---- tolerations ----------------------------------------------------------------------------

/** ValidateTolerations, into `errs`. */
export function validateTolerations(errs: Errs, tolerations: readonly J[], path: string): void {
  for (let i = 0; i < tolerations.length; i++) {
    const t = tolerations[i] as J;
    const key = str(t.key);
    const operator = str(t.operator);
    const effect = str(t.effect);
    const value = str(t.value);
    if (key !== '') {
      const msgs = qualifiedName(key);
      if (msgs.length > 0) pushEach(errs, `${path}[${i}].key`, key, msgs);
    }
    if (key === '' && operator !== 'Exists')
      errs.push(
        invalidValue(
          `${path}[${i}].operator`,
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute')
      errs.push(invalidValue(`${path}[${i}].effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (operator === 'Equal' || operator === '') {
      const msgs = labelValue(value);
      if (msgs.length > 0) errs.push(invalidValue(`${path}[${i}].operator`, value, msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value !== '') errs.push(invalidValue(`${path}[${i}].operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else errs.push(notSupported(`${path}[${i}].operator`, operator, TOLERATION_OPERATORS));
    if (effect !== '' && !TAINT_EFFECTS.includes(effect)) errs.push(notSupported(`${path}[${i}].effect`, effect, TAINT_EFFECTS));
  }
}

// ---- topology spread ------------------------------------------------------------------------

/** Whether a constraint after the i-th has its topologyKey and whenUnsatisfiable. */
function repeatedLater(constraints: readonly J[], i: number, key: string, when: string): boolean {
  for (let j = i + 1; j < constraints.length; j++) {
    const r = constraints[j] as J;
    if (str(r.topologyKey) === key && str(r.whenUnsatisfiable) === when) return true;
  }
  return false;
}

/** A spread constraint's matchLabelKeys (at `${p}.matchLabelKeys`): label names, not in its selector. */
function spreadMatchLabelKeys(errs: Errs, c: J, p: string): void {
  const keys = items<string>(c.matchLabelKeys).map(str);
  const sel = obj(c.labelSelector);
  if (!sel) errs.push(forbiddenField(`${p}.matchLabelKeys`, 'must not be specified when labelSelector is not set'));
  const selKeys = new Set([...Object.keys(obj(sel?.matchLabels) ?? {}), ...items<J>(sel?.matchExpressions).map((e) => str(e.key))]);
  keys.forEach((k, j) => {
    pushAll(errs, labelName(k, `${p}.matchLabelKeys[${j}]`));
    if (selKeys.has(k)) errs.push(invalidValue(`${p}.matchLabelKeys[${j}]`, k, 'exists in both matchLabelKeys and labelSelector'));
  });
}

/** validateTopologySpreadConstraints, into `errs`. */
export function validateTopologySpread(errs: Errs, constraints: readonly J[], path: string): void {
  for (let i = 0; i < constraints.length; i++) {
    const c = constraints[i] as J;
    const p = `${path}[${i}]`;
    const skew = typeof c.maxSkew === 'number' ? c.maxSkew : 0;
    if (skew <= 0) errs.push(invalidValue(`${p}.maxSkew`, skew, NOT_POSITIVE));
    const key = str(c.topologyKey);
    if (key === '') errs.push(required(`${p}.topologyKey`, 'can not be empty'));
    const when = str(c.whenUnsatisfiable);
    if (!WHEN_UNSATISFIABLE.includes(when)) errs.push(notSupported(`${p}.whenUnsatisfiable`, when, WHEN_UNSATISFIABLE));
    if (repeatedLater(constraints, i, key, when)) errs.push(duplicate(`${p}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${when}}`));
    if (typeof c.minDomains === 'number') {
      if (c.minDomains <= 0) errs.push(invalidValue(`${p}.minDomains`, c.minDomains, NOT_POSITIVE));
      if (when !== 'DoNotSchedule')
        errs.push(invalidValue(`${p}.minDomains`, c.minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${when}`));
    }
    for (const f of INCLUSION_POLICY_FIELDS) {
      if (typeof c[f] === 'string' && !NODE_INCLUSION_POLICIES.includes(str(c[f])))
        errs.push(notSupported(`${p}.${f}`, str(c[f]), NODE_INCLUSION_POLICIES));
    }
    if (items(c.matchLabelKeys).length > 0) spreadMatchLabelKeys(errs, c, p);
    if (obj(c.labelSelector)) pushAll(errs, validateLabelSelector(c.labelSelector, `${p}.labelSelector`));
  }
}
