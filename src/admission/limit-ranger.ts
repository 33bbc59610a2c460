/**
 * LimitRanger, as the reference's admission plugin: on a Pod create, the LimitRanges of its
 * namespace fill missing container (and init container) requests and limits from their
 * Container items' `defaultRequest` and `default` (recording what was set in the
 * `kubernetes.io/limit-ranger` annotation), then every Container and Pod item's `min`, `max` and
 * `maxLimitRequestRatio` is checked. A violation is 403 Forbidden:
 *
 *   pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2
 *
 * (several violations of one LimitRange as `[a, b]`). Pod updates are not looked at (their
 * containers cannot change), nor subresources. PersistentVolumeClaims are not served here.
 */
import { isObject, type JsonObject, type Obj } from '../api/meta';
import { cmpQuantity, formatQuantity, parseQuantity, type Quantity, quantityMilliValue } from '../api/quantity';
import { forbidden } from '../api/status';
import type { Attributes, Operation, Plugin } from '../registry/admission';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

type ResourceList = Record<string, unknown>;

/** The LimitRanges of a namespace, current as of the write (from the watch cache). */
export type LimitRangeSource = (namespace: string) => Promise<Obj[]>;

export class LimitRanger implements Plugin {
  readonly name = 'LimitRanger';

  constructor(private readonly limitRanges: LimitRangeSource) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === '' && resource === 'pods' && subresource === '' && op === 'CREATE';
  }

  /** The LimitRanges read for a request's mutating phase, reused by its validating phase. */
  private readonly seen = new WeakMap<Attributes, Obj[]>();

  async admit(a: Attributes): Promise<void> {
    const lrs = await this.limitRanges(a.namespace);
    this.seen.set(a, lrs);
    for (const lr of lrs) mergeDefaults(a.object, compiled(lr));
  }

  async validate(a: Attributes): Promise<void> {
    for (const lr of this.seen.get(a) ?? (await this.limitRanges(a.namespace))) {
      const errs = check(a.object, compiled(lr).items);
      if (errs.length > 0) {
        throw forbidden({ group: '', resource: 'pods' }, a.name, errs.length === 1 ? (errs[0] as string) : `[${errs.join(', ')}]`);
      }
    }
  }
}

/** What a LimitRange says, read once per object (the watch cache keeps one parsed object per version). */
interface Compiled {
  items: JsonObject[];
  /** The Container items' `default` and `defaultRequest`, later items overriding earlier ones. */
  defLimits: ResourceList;
  defRequests: ResourceList;
  defLimitKeys: string[];
  defRequestKeys: string[];
  /** The keys sorted and joined, as the annotation names them when all were set. */
  defLimitNote: string;
  defRequestNote: string;
}

const compiledByObject = new WeakMap<Obj, Compiled>();

function compiled(lr: Obj): Compiled {
  let c = compiledByObject.get(lr);
  if (c) return c;
  const spec = lr.spec as { limits?: unknown } | undefined;
  const items = Array.isArray(spec?.limits) ? (spec.limits.filter(isObject) as JsonObject[]) : [];
  const defLimits: ResourceList = {};
  const defRequests: ResourceList = {};
  for (const it of items) {
    if (it.type !== 'Container') continue;
    if (isObject(it.defaultRequest)) Object.assign(defRequests, it.defaultRequest);
    if (isObject(it.default)) Object.assign(defLimits, it.default);
  }
  const defLimitKeys = Object.keys(defLimits);
  const defRequestKeys = Object.keys(defRequests);
  c = {
    items,
    defLimits,
    defRequests,
    defLimitKeys,
    defRequestKeys,
    defLimitNote: [...defLimitKeys].sort().join(', '),
    defRequestNote: [...defRequestKeys].sort().join(', '),
  };
  compiledByObject.set(lr, c);
  return c;
}

function containersOf(pod: Obj, field: 'containers' | 'initContainers'): JsonObject[] {
  const spec = pod.spec as JsonObject | undefined;
  const cs = spec?.[field];
  return Array.isArray(cs) ? (cs.filter(isObject) as JsonObject[]) : [];
}

function resourcesOf(c: JsonObject): { requests: ResourceList; limits: ResourceList } {
  const r = isObject(c.resources) ? c.resources : {};
  return { requests: isObject(r.requests) ? r.requests : {}, limits: isObject(r.limits) ? r.limits : {} };
}

/** mergePodResourceRequirements: defaults of the Container items, annotated. */
function mergeDefaults(pod: Obj, lr: Compiled): void {
  const { defLimits, defRequests, defLimitKeys, defRequestKeys } = lr;
  if (defLimitKeys.length === 0 && defRequestKeys.length === 0) return;
  let notes = '';
  const note = (set: string[], all: string[], allSorted: string, what: string, label: string, name: unknown) => {
    if (set.length === 0) return;
    const keys = set.length === all.length ? allSorted : set.sort().join(', ');
    notes += `${notes ? '; ' : ''}${keys} ${what} for ${label} ${name}`;
  };
  for (const [field, label] of CONTAINER_FIELDS) {
    const cs = (pod.spec as JsonObject | undefined)?.[field];
    if (!Array.isArray(cs)) continue;
    for (const c of cs) {
      if (!isObject(c)) continue;
      const res: JsonObject = isObject(c.resources) ? c.resources : {};
      const limits: ResourceList = isObject(res.limits) ? res.limits : {};
      const requests: ResourceList = isObject(res.requests) ? res.requests : {};
      const setLimits: string[] = [];
      const setRequests: string[] = [];
      for (const k of defLimitKeys) {
        if (limits[k] !== undefined) continue;
        limits[k] = defLimits[k];
        setLimits.push(k);
      }
      for (const k of defRequestKeys) {
        if (requests[k] !== undefined) continue;
        requests[k] = defRequests[k];
        setRequests.push(k);
      }
      // New maps only when something went into them (a value that is not a map is left alone).
      if (setLimits.length > 0 && res.limits !== limits) res.limits = limits;
      if (setRequests.length > 0 && res.requests !== requests) res.requests = requests;
      if ((setLimits.length > 0 || setRequests.length > 0) && c.resources !== res) c.resources = res;
      note(setRequests, defRequestKeys, lr.defRequestNote, 'request', label, c.name);
      note(setLimits, defLimitKeys, lr.defLimitNote, 'limit', label, c.name);
    }
  }
  if (notes) {
    const meta = pod.metadata;
    meta.annotations = { ...(meta.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes}` };
  }
}

const CONTAINER_FIELDS = [
  ['containers', 'container'],
  ['initContainers', 'init container'],
] as const;

/** PodValidateLimitFunc: every violation of one LimitRange. */
function check(pod: Obj, items: JsonObject[]): string[] {
  const errs: string[] = [];
  const constraints = (type: string, it: JsonObject, requests: ResourceList, limits: ResourceList) => {
    if (isObject(it.min)) for (const k in it.min) push(minConstraint(type, k, it.min[k], requests, limits));
    if (isObject(it.max)) for (const k in it.max) push(maxConstraint(type, k, it.max[k], requests, limits));
    if (isObject(it.maxLimitRequestRatio))
      for (const k in it.maxLimitRequestRatio) push(ratioConstraint(type, k, it.maxLimitRequestRatio[k], requests, limits));
  };
  const push = (e: string | undefined) => {
    if (e) errs.push(e);
  };
  for (const it of items) {
    if (it.type === 'Container') {
      for (const c of [...containersOf(pod, 'containers'), ...containersOf(pod, 'initContainers')]) {
        const { requests, limits } = resourcesOf(c);
        constraints('Container', it, requests, limits);
      }
    } else if (it.type === 'Pod') {
      // The totals as parsed quantities: formatted only if a message needs them.
      constraints('Pod', it, Object.fromEntries(podTotalQ(pod, 'requests')), Object.fromEntries(podTotalQ(pod, 'limits')));
    }
  }
  return errs;
}

/** A pod's totals, per pod object (see podTotalQ). */
const totalsOf = new WeakMap<Obj, { requests?: Map<string, Quantity>; limits?: Map<string, Quantity> }>();

/**
 * A pod's requests or limits as the reference computes them: the sum over containers, then the
 * largest of that and each init container (sidecars, restartPolicy Always, add up like containers),
 * as parsed quantities. Computed once per pod object: the validating phase of a create asks for
 * them twice (LimitRanger's Pod items, the quota's usage) and nothing changes the object then;
 * the quota controller asks about objects it decoded itself. The map is shared: read it only.
 */
export function podTotalQ(pod: Obj, which: 'requests' | 'limits'): Map<string, Quantity> {
  let memo = totalsOf.get(pod);
  const hit = memo?.[which];
  if (hit) return hit;
  const sum = computeTotal(pod, which);
  if (!memo) {
    memo = {};
    totalsOf.set(pod, memo);
  }
  memo[which] = sum;
  return sum;
}

/** Add a resource list's parsed quantities into `into`. */
function addList(into: Map<string, Quantity>, list: unknown): void {
  if (!isObject(list)) return;
  for (const k in list) {
    const q = parseQuantity(list[k]);
    if (!q) continue;
    const cur = into.get(k);
    into.set(k, cur ? addQ(cur, q) : q);
  }
}

function listOf(c: unknown, which: 'requests' | 'limits'): unknown {
  return isObject(c) && isObject(c.resources) ? c.resources[which] : undefined;
}

function computeTotal(pod: Obj, which: 'requests' | 'limits'): Map<string, Quantity> {
  const sum = new Map<string, Quantity>();
  const spec = pod.spec as JsonObject | undefined;
  const containers = spec?.containers;
  if (Array.isArray(containers)) for (const c of containers) addList(sum, listOf(c, which));
  const initContainers = spec?.initContainers;
  if (!Array.isArray(initContainers) || initContainers.length === 0) return sum;
  const sidecars = new Map<string, Quantity>();
  const inits = new Map<string, Quantity>();
  for (const c of initContainers) {
    if (!isObject(c)) continue;
    const list = listOf(c, which);
    let mine: Map<string, Quantity>;
    if (c.restartPolicy === 'Always') {
      addList(sum, list);
      addList(sidecars, list);
      mine = new Map(sidecars);
    } else {
      mine = new Map(sidecars);
      addList(mine, list);
    }
    for (const [k, q] of mine) {
      const cur = inits.get(k);
      if (!cur || cmpQuantity(q, cur) > 0) inits.set(k, q);
    }
  }
  for (const [k, q] of inits) {
    const cur = sum.get(k);
    if (!cur || cmpQuantity(q, cur) > 0) sum.set(k, q);
  }
  return sum;
}

export function addQ(a: Quantity, b: Quantity): Quantity {
  if (a.exp === b.exp) return { mant: a.mant + b.mant, exp: a.exp, format: a.format };
  const exp = Math.min(a.exp, b.exp);
  const mant = a.mant * 10n ** BigInt(a.exp - exp) + b.mant * 10n ** BigInt(b.exp - exp);
  return { mant, exp, format: a.format };
}

/** A value of a resource list: a quantity's text, or (a pod's totals) the parsed quantity itself. */
const asQuantity = (v: unknown): Quantity | undefined =>
  typeof v === 'object' && v !== null && typeof (v as Quantity).mant === 'bigint' ? (v as Quantity) : parseQuantity(v);

/** Milli-values by quantity text: a namespace's pods and its LimitRange repeat the same few texts. */
const milliByText = new Map<string, number>();
const MILLI_MAX = 4096;

/** requestLimitEnforcedValues: values in milli-units (the reference compares at that precision). */
function milli(v: unknown): number {
  if (typeof v === 'string') {
    let m = milliByText.get(v);
    if (m === undefined) {
      const q = parseQuantity(v);
      m = q ? Number(quantityMilliValue(q)) : 0;
      if (milliByText.size >= MILLI_MAX) milliByText.clear();
      milliByText.set(v, m);
    }
    return m;
  }
  const q = asQuantity(v);
  if (!q) return 0;
  let m = milliOfQuantity.get(q);
  if (m === undefined) {
    m = Number(quantityMilliValue(q));
    milliOfQuantity.set(q, m);
  }
  return m;
}

/** Milli-values of parsed quantities (shared by the parse memo and a pod's totals). */
const milliOfQuantity = new WeakMap<Quantity, number>();

/** The canonical text, for messages only (formatting is the costly part of a check). */
const text = (v: unknown): string => {
  const q = asQuantity(v);
  return q ? formatQuantity(q) : String(v);
};

function minConstraint(type: string, k: string, enforced: unknown, requests: ResourceList, limits: ResourceList): string | undefined {
  const e = () => text(enforced);
  if (requests[k] === undefined) return `minimum ${k} usage per ${type} is ${e()}.  No request is specified`;
  if (milli(requests[k]) < milli(enforced)) return `minimum ${k} usage per ${type} is ${e()}, but request is ${text(requests[k])}`;
  if (limits[k] !== undefined && milli(limits[k]) < milli(enforced))
    return `minimum ${k} usage per ${type} is ${e()}, but limit is ${text(limits[k])}`;
  return undefined;
}

function maxConstraint(type: string, k: string, enforced: unknown, requests: ResourceList, limits: ResourceList): string | undefined {
  const e = () => text(enforced);
  if (limits[k] === undefined) return `maximum ${k} usage per ${type} is ${e()}.  No limit is specified`;
  if (milli(limits[k]) > milli(enforced)) return `maximum ${k} usage per ${type} is ${e()}, but limit is ${text(limits[k])}`;
  if (requests[k] !== undefined && milli(requests[k]) > milli(enforced))
    return `maximum ${k} usage per ${type} is ${e()}, but request is ${text(requests[k])}`;
  return undefined;
}

function ratioConstraint(type: string, k: string, enforced: unknown, requests: ResourceList, limits: ResourceList): string | undefined {
  const e = () => text(enforced);
  const req = requests[k] === undefined ? 0 : milli(requests[k]);
  const lim = limits[k] === undefined ? 0 : milli(limits[k]);
  if (req === 0) return `${k} max limit to request ratio per ${type} is ${e()}, but no request is specified or request is 0`;
  if (lim === 0) return `${k} max limit to request ratio per ${type} is ${e()}, but no limit is specified or limit is 0`;
  const ratio = lim / req;
  if (ratio * 1000 > milli(enforced))
    return `${k} max limit to request ratio per ${type} is ${e()}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
}
