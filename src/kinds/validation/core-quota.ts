/**
 * core/v1 resource policy: LimitRange and ResourceQuota (the reference's
 * pkg/apis/core/validation with the resource-name helpers of pkg/apis/core/helper).
 */
import type { Obj } from '../../api/meta';
import { cmpQuantity, formatQuantity, isNegative, parseQuantity, type Quantity, quantityMilliValue } from '../../api/quantity';
import { duplicate, forbiddenField, invalidValue, qualifiedName, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, GoValue, goQuote, goStrings, IS_NEGATIVE, type J, list, map, obj, sortedKeys, str, stringsValue } from './common';

// ---- resource names (pkg/apis/core/helper) -------------------------------------------------

const HUGEPAGES = 'hugepages-';
const REQUESTS_HUGEPAGES = 'requests.hugepages-';
export const STANDARD_CONTAINER_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];
const STANDARD_RESOURCES = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
];
const STANDARD_QUOTA_RESOURCES = STANDARD_RESOURCES.filter((r) => r !== 'storage');
const INTEGER_RESOURCES = [
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
];
const POD_COUNT = ['pods'];
const POD_COMPUTE = ['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'];
const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];
const QUOTA_SCOPES = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
  'VolumeAttributesClass',
];
const LIMIT_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'];

export const isHugePages = (n: string) => n.startsWith(HUGEPAGES);
const isQuotaHugePages = (n: string) => n.startsWith(HUGEPAGES) || n.startsWith(REQUESTS_HUGEPAGES);
const isNative = (n: string) => !n.includes('/') || n.includes('kubernetes.io/');
const isExtended = (n: string) => !isNative(n) && !n.startsWith('requests.') && qualifiedName(`requests.${n}`).length === 0;
const isStandardResource = (n: string) => STANDARD_RESOURCES.includes(n) || isQuotaHugePages(n);
const isStandardQuotaResource = (n: string) => STANDARD_QUOTA_RESOURCES.includes(n) || isQuotaHugePages(n);
const isIntegerResource = (n: string) => INTEGER_RESOURCES.includes(n) || isExtended(n);
export const isOvercommitAllowed = (n: string) => isNative(n) && !isHugePages(n);

function scopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return POD_COUNT.includes(resource) || POD_COMPUTE.includes(resource);
    case 'BestEffort':
      return POD_COUNT.includes(resource);
    case 'VolumeAttributesClass':
      return PVC_RESOURCES.includes(resource);
    default:
      return true;
  }
}

/** validateResourceName: a qualified name, standard unless prefixed. */
function validateResourceName(n: string, path: string): Errs {
  const errs = each(path, n, qualifiedName(n));
  if (errs.length > 0) return errs;
  if (!n.includes('/') && !isStandardResource(n)) return [invalidValue(path, n, 'must be a standard resource type or fully qualified')];
  return [];
}

export function validateContainerResourceName(n: string, path: string): Errs {
  const errs = validateResourceName(n, path);
  if (!n.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.includes(n) && !isHugePages(n))
      errs.push(invalidValue(path, n, 'must be a standard resource for containers'));
  } else if (!isNative(n) && !isExtended(n)) errs.push(invalidValue(path, n, "doesn't follow extended resource name standard"));
  return errs;
}

function validateQuotaResourceName(n: string, path: string): Errs {
  const errs = validateResourceName(n, path);
  if (!n.includes('/') && !isStandardQuotaResource(n)) errs.push(invalidValue(path, n, 'must be a standard resource for quota'));
  return errs;
}

/** ValidateResourceQuantityValue: non-negative; whole numbers for counted resources. */
export function validateQuantityValue(resource: string, q: Quantity, path: string): Errs {
  const errs: Errs = [];
  if (isNegative(q)) errs.push(invalidValue(path, formatQuantity(q), IS_NEGATIVE));
  if (isIntegerResource(resource) && quantityMilliValue(q) % 1000n !== 0n)
    errs.push(invalidValue(path, formatQuantity(q), 'must be an integer'));
  return errs;
}

/** Whether validateQuantityValue has nothing to report (checked before building its path). */
export function quantityValueValid(resource: string, q: Quantity): boolean {
  return !isNegative(q) && !(isIntegerResource(resource) && quantityMilliValue(q) % 1000n !== 0n);
}

/** The quantities of a resource map (the schema already rejected unparsable ones). */
export function quantities(v: unknown): [string, Quantity][] {
  const m = map(v);
  return sortedKeys(m).flatMap((k) => {
    const q = parseQuantity(m[k]);
    return q ? [[k, q] as [string, Quantity]] : [];
  });
}

// ---- LimitRange -----------------------------------------------------------------------------

function validateLimitTypeName(t: string, path: string): Errs {
  const errs = each(path, t, qualifiedName(t));
  if (errs.length > 0) return errs;
  if (!t.includes('/') && !LIMIT_TYPES.includes(t)) return [invalidValue(path, t, 'must be a standard limit type or fully qualified')];
  return [];
}

function validateLimitItem(item: J, path: string): Errs {
  const errs: Errs = [];
  const type = str(item.type);
  const nameCheck = (n: string, p: string) =>
    type === 'Pod' || type === 'Container' ? validateContainerResourceName(n, p) : validateResourceName(n, p);
  const keys = new Set<string>();
  const collect = (field: string): Map<string, Quantity> => {
    const out = new Map<string, Quantity>();
    for (const [k, q] of quantities(item[field])) {
      errs.push(...nameCheck(k, `${path}.${field}[${k}]`));
      keys.add(k);
      out.set(k, q);
    }
    return out;
  };
  const max = collect('max');
  const min = collect('min');
  let defaults = new Map<string, Quantity>();
  let defaultRequests = new Map<string, Quantity>();
  if (type === 'Pod') {
    if (Object.keys(map(item.default)).length > 0)
      errs.push(forbiddenField(`${path}.default`, "may not be specified when `type` is 'Pod'"));
    if (Object.keys(map(item.defaultRequest)).length > 0)
      errs.push(forbiddenField(`${path}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
  } else {
    defaults = collect('default');
    defaultRequests = collect('defaultRequest');
  }
  if (type === 'PersistentVolumeClaim' && !min.has('storage') && !max.has('storage'))
    errs.push(required(`${path}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
  const ratios = collect('maxLimitRequestRatio');
  const one = parseQuantity('1') as Quantity;
  for (const k of [...keys].sort()) {
    const mn = min.get(k);
    const mx = max.get(k);
    const df = defaults.get(k);
    const dr = defaultRequests.get(k);
    const ratio = ratios.get(k);
    const s = (q: Quantity) => formatQuantity(q);
    if (mn && mx && cmpQuantity(mn, mx) > 0)
      errs.push(invalidValue(`${path}.min[${k}]`, s(mn), `min value ${s(mn)} is greater than max value ${s(mx)}`));
    if (dr && mn && cmpQuantity(mn, dr) > 0)
      errs.push(invalidValue(`${path}.defaultRequest[${k}]`, s(dr), `min value ${s(mn)} is greater than default request value ${s(dr)}`));
    if (dr && mx && cmpQuantity(dr, mx) > 0)
      errs.push(invalidValue(`${path}.defaultRequest[${k}]`, s(dr), `default request value ${s(dr)} is greater than max value ${s(mx)}`));
    if (dr && df && cmpQuantity(dr, df) > 0)
      errs.push(
        invalidValue(`${path}.defaultRequest[${k}]`, s(dr), `default request value ${s(dr)} is greater than default limit value ${s(df)}`),
      );
    if (df && mn && cmpQuantity(mn, df) > 0)
      errs.push(invalidValue(`${path}.default[${k}]`, s(mn), `min value ${s(mn)} is greater than default value ${s(df)}`));
    if (df && mx && cmpQuantity(df, mx) > 0)
      errs.push(invalidValue(`${path}.default[${k}]`, s(mx), `default value ${s(df)} is greater than max value ${s(mx)}`));
    if (ratio && cmpQuantity(ratio, one) < 0)
      errs.push(invalidValue(`${path}.maxLimitRequestRatio[${k}]`, s(ratio), `ratio ${s(ratio)} is less than 1`));
    if (ratio && mn && mx) {
      const limit = Number(quantityMilliValue(mx)) / Number(quantityMilliValue(mn));
      const value = Number(quantityMilliValue(ratio)) / 1000;
      if (value > limit)
        errs.push(
          invalidValue(`${path}.maxLimitRequestRatio[${k}]`, s(ratio), `ratio ${s(ratio)} is greater than max/min = ${limit.toFixed(6)}`),
        );
    }
    if (!isOvercommitAllowed(k) && df && dr && cmpQuantity(df, dr) !== 0)
      errs.push(
        invalidValue(`${path}.defaultRequest[${k}]`, s(dr), `default value ${s(df)} must equal to defaultRequest value ${s(dr)} in ${k}`),
      );
  }
  return errs;
}

export function validateLimitRange(o: Obj): Errs {
  const spec = obj(o.spec);
  if (!spec || !Array.isArray(spec.limits)) return [required('spec.limits')];
  const errs: Errs = [];
  const types = new Set<string>();
  list<J>(spec.limits).forEach((item, i) => {
    const p = `spec.limits[${i}]`;
    const type = str(item.type);
    // No Required for an empty type: the reference reports it through the qualified-name check.
    errs.push(...validateLimitTypeName(type, `${p}.type`));
    if (types.has(type)) errs.push(duplicate(`${p}.type`, type));
    types.add(type);
    errs.push(...validateLimitItem(item, p));
  });
  return errs;
}

export const limitRange: Strategy = { validate: validateLimitRange };

// ---- ResourceQuota --------------------------------------------------------------------------

const scopesValue = (v: unknown) => stringsValue(v, '[]core.ResourceQuotaScope');

function scopeSelectorValue(sel: J): GoValue {
  const exprs = list<J>(sel.matchExpressions)
    .map(
      (r) =>
        `core.ScopedResourceSelectorRequirement{ScopeName:${goQuote(str(r.scopeName))}, Operator:${goQuote(str(r.operator))}, Values:${goStrings(r.values)}}`,
    )
    .join(', ');
  return new GoValue(`core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{${exprs}}}`, sel);
}

function validateResourceList(v: unknown, path: string): Errs {
  return quantities(v).flatMap(([k, q]) => [
    ...validateQuotaResourceName(k, `${path}[${k}]`),
    ...validateQuantityValue(k, q, `${path}[${k}]`),
  ]);
}

const CONFLICTING_SCOPES = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

function validateScopes(spec: J, hard: string[]): Errs {
  const scopes = list<string>(spec.scopes);
  const errs: Errs = [];
  for (const scope of scopes) {
    if (!QUOTA_SCOPES.includes(scope)) errs.push(invalidValue('spec.scopes', scopesValue(scopes), 'unsupported scope'));
    for (const k of hard)
      if (isStandardQuotaResource(k) && !scopeValidForResource(scope, k))
        errs.push(invalidValue('spec.scopes', scopesValue(scopes), 'unsupported scope applied to resource'));
  }
  for (const pair of CONFLICTING_SCOPES)
    if (pair.every((s) => scopes.includes(s))) errs.push(invalidValue('spec.scopes', scopesValue(scopes), 'conflicting scopes'));
  return errs;
}

function validateScopeSelector(spec: J, hard: string[]): Errs {
  const sel = obj(spec.scopeSelector);
  if (!sel) return [];
  // The reference reports requirement errors without the list index.
  const path = 'spec.scopeSelector.matchExpressions';
  const errs: Errs = [];
  const seen = new Set<string>();
  for (const r of list<J>(sel.matchExpressions)) {
    const scope = str(r.scopeName);
    const op = str(r.operator);
    const values = list<string>(r.values);
    if (!QUOTA_SCOPES.includes(scope)) errs.push(invalidValue(`${path}.scopeName`, scope, 'unsupported scope'));
    for (const k of hard)
      if (isStandardQuotaResource(k) && !scopeValidForResource(scope, k))
        errs.push(invalidValue(path, scopeSelectorValue(sel), 'unsupported scope applied to resource'));
    if (['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity'].includes(scope) && op !== 'Exists')
      errs.push(
        invalidValue(
          `${path}.operator`,
          op,
          "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    switch (op) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errs.push(required(`${path}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push(
            invalidValue(
              `${path}.values`,
              stringsValue(values),
              "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ),
          );
        break;
      default:
        errs.push(invalidValue(`${path}.operator`, op, 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const pair of CONFLICTING_SCOPES)
    if (pair.every((s) => seen.has(s))) errs.push(invalidValue(path, scopesValue(spec.scopes), 'conflicting scopes'));
  return errs;
}

export function validateResourceQuota(o: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const status = obj(o.status) ?? {};
  const hard = sortedKeys(map(spec.hard));
  return [
    ...validateResourceList(spec.hard, 'spec.hard'),
    ...validateScopes(spec, hard),
    ...validateScopeSelector(spec, hard),
    ...validateResourceList(status.hard, 'status.hard'),
    ...validateResourceList(status.used, 'status.used'),
  ];
}

export const resourceQuota: Strategy = {
  validate: validateResourceQuota,
  validateUpdate: (o, old) => {
    const scopes = list<string>(obj(o.spec)?.scopes);
    const oldScopes = list<string>(obj(old.spec)?.scopes);
    const same = new Set(scopes).size === new Set(oldScopes).size && scopes.every((s) => oldScopes.includes(s));
    return same ? [] : [invalidValue('spec.scopes', scopesValue(obj(o.spec)?.scopes), 'field is immutable')];
  },
};

/** ValidateResourceRequirements' limits part: container resource names, non-negative quantities. */
export function validateResourceLimits(v: unknown, path: string): Errs {
  return quantities(v).flatMap(([k, q]) => [
    ...validateContainerResourceName(k, `${path}[${k}]`),
    ...validateQuantityValue(k, q, `${path}[${k}]`),
  ]);
}
