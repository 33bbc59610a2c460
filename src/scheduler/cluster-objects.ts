/**
 * What the scheduler reads beside pods and nodes (the reference's informers for
 * PodDisruptionBudgets, Services, ReplicationControllers, ReplicaSets and StatefulSets), from
 * their watch caches: never the store.
 *
 *   budgets()          preemption: victims whose eviction would violate a budget are spared first
 *   defaultSelector()  PodTopologySpread's system default constraints: the selector of the pod's
 *                      Services and controller (the reference's helper.DefaultSelector)
 */
import { isObject, type Obj } from '../api/meta';
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import type { WatchCache } from '../watch/cache';
import type { PodInfo } from './node-info';

/** A PodDisruptionBudget as preemption reads it. */
export interface Budget {
  namespace: string;
  /** undefined: nil, empty (`{}`) or invalid; the budget matches no pod. */
  selector: SelectorMatcher | undefined;
  /** status.disruptionsAllowed. */
  disruptionsAllowed: number;
  /** status.disruptedPods' names: evictions the API server already counted. */
  disruptedPods: ReadonlySet<string>;
}

export interface ClusterObjects {
  /** Every budget of every namespace (the reference lists them all). */
  budgets(): Budget[];
  /** The selector of the pod's Services and controlling RC/ReplicaSet/StatefulSet; undefined when it is empty. */
  defaultSelector(p: PodInfo): DefaultSelector | undefined;
}

/** No budgets, no Services, no controllers. */
export const NO_OBJECTS: ClusterObjects = { budgets: () => [], defaultSelector: () => undefined };

export function budgetOf(o: Obj): Budget {
  const spec = (isObject(o.spec) ? o.spec : {}) as { selector?: unknown };
  const status = (isObject(o.status) ? o.status : {}) as { disruptionsAllowed?: unknown; disruptedPods?: unknown };
  // A nil selector and `{}` match nothing here (the reference skips empty selectors).
  const sel = isObject(spec.selector) ? selectorMatcher(spec.selector) : undefined;
  return {
    namespace: o.metadata.namespace ?? '',
    selector: sel && !sel.empty ? sel : undefined,
    disruptionsAllowed: typeof status.disruptionsAllowed === 'number' ? status.disruptionsAllowed : 0,
    disruptedPods: new Set(isObject(status.disruptedPods) ? Object.keys(status.disruptedPods) : []),
  };
}

/**
 * The reference's DefaultSelector: the labels of every Service selecting the pod merged, then
 * the controller's selector (an RC's map merged in; a ReplicaSet's or StatefulSet's
 * requirements added). `controller` looks an owner up by kind and name in the pod's namespace.
 */
export function defaultSelector(
  p: PodInfo,
  services: Iterable<Obj>,
  controller: (kind: 'ReplicationController' | 'ReplicaSet' | 'StatefulSet', name: string) => Obj | undefined,
): DefaultSelector | undefined {
  const merged: Record<string, string> = {};
  for (const s of services) {
    const sel = (isObject(s.spec) ? (s.spec.selector as Record<string, string> | undefined) : undefined) ?? {};
    // A Service without a selector matches every pod (and adds nothing).
    if (Object.entries(sel).every(([k, v]) => p.labels[k] === v)) Object.assign(merged, sel);
  }
  let extra: SelectorMatcher | undefined;
  const owner = p.controller;
  if (owner) {
    if (owner.apiVersion === 'v1' && owner.kind === 'ReplicationController') {
      const rc = controller('ReplicationController', owner.name);
      const sel = rc && isObject(rc.spec) && isObject(rc.spec.selector) ? (rc.spec.selector as Record<string, string>) : {};
      Object.assign(merged, sel);
    } else if (owner.apiVersion === 'apps/v1' && (owner.kind === 'ReplicaSet' || owner.kind === 'StatefulSet')) {
      const o = controller(owner.kind, owner.name);
      const m = o && isObject(o.spec) ? selectorMatcher(o.spec.selector) : undefined;
      // `{}` has no requirements to add; a nil selector converts to Nothing, which has none either.
      if (m && !m.empty && o && isObject(o.spec) && isObject(o.spec.selector)) extra = m;
    }
  }
  const keys = Object.entries(merged);
  if (keys.length === 0 && !extra) return undefined;
  const ownerSpec = extra && owner ? controller(owner.kind as 'ReplicaSet', owner.name)?.spec : undefined;
  const ownerLabels = extra && isObject(ownerSpec) && isObject(ownerSpec.selector) ? ownerSpec.selector.matchLabels : undefined;
  const required = [...(isObject(ownerLabels) ? (Object.entries(ownerLabels) as [string, string][]) : []), ...keys];
  return {
    // What it selects by, as text (PodTopologySpread memoizes per-node counts by it).
    key: `${JSON.stringify(keys)}|${extra && isObject(ownerSpec) ? JSON.stringify(ownerSpec.selector) : ''}`,
    empty: false,
    matches: (labels) => keys.every(([k, v]) => labels[k] === v) && (extra?.matches(labels) ?? true),
    // A ReplicaSet's pod-template-hash picks out its own pods among the Deployment's.
    anchor: required.find(([k]) => k === 'pod-template-hash') ?? required[0],
  };
}

/**
 * A default selector: its text, and one label every pod it selects carries (when it requires
 * one): the pods to count are looked up by that label instead of walking the namespace's.
 */
export type DefaultSelector = SelectorMatcher & { key?: string; anchor?: readonly [string, string] };

/** A resource's watch cache and its key prefix (`<prefix><namespace>/<name>`). */
export interface CachedResource {
  cache: WatchCache;
  prefix: string;
}

export interface CachedObjectsSources {
  budgets?: CachedResource;
  services?: CachedResource;
  replicationControllers?: CachedResource;
  replicaSets?: CachedResource;
  statefulSets?: CachedResource;
}

/** ClusterObjects over the watch caches (a missing resource reads as none). */
export class CachedObjects implements ClusterObjects {
  /** Parsed budgets per cached object (a watch cache keeps one object per version). */
  private readonly parsed = new WeakMap<Obj, Budget>();

  constructor(private readonly src: CachedObjectsSources) {}

  async start(): Promise<void> {
    await Promise.all(
      Object.values(this.src)
        .filter((r): r is CachedResource => r !== undefined)
        .map((r) => r.cache.start()),
    );
  }

  budgets(): Budget[] {
    const b = this.src.budgets;
    if (!b) return [];
    return b.cache.list(b.prefix).map((c) => {
      let x = this.parsed.get(c.obj);
      if (!x) {
        x = budgetOf(c.obj);
        this.parsed.set(c.obj, x);
      }
      return x;
    });
  }

  defaultSelector(p: PodInfo): DefaultSelector | undefined {
    const s = this.src.services;
    const services = s ? s.cache.list(`${s.prefix}${p.namespace}/`).map((c) => c.shared) : [];
    return defaultSelector(p, services, (kind, name) => {
      const r =
        kind === 'ReplicationController'
          ? this.src.replicationControllers
          : kind === 'ReplicaSet'
            ? this.src.replicaSets
            : this.src.statefulSets;
      return r?.cache.get(`${r.prefix}${p.namespace}/${name}`)?.shared;
    });
  }
}
