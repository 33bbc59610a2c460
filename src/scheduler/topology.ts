/**
 * The filters and score that count pods per topology domain (a node label's value): the
 * reference's PodTopologySpread (filter for DoNotSchedule constraints, score for ScheduleAnyway)
 * and InterPodAffinity's required terms. Each is prepared once per pod (PreFilter: counting the
 * matching pods over the cluster, only when the pod has constraints or terms, or some bound pod
 * has required anti-affinity) and then answers per node in constant time.
 *
 * The system default spread constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway)
 * apply to the score of a pod without constraints that a Service or controller selects.
 * Preferred inter-pod affinity is scored in affinity-score.ts.
 *
 * Not done: namespaceSelector in affinity terms other than `{}` (all namespaces).
 */
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import type { DefaultSelector } from './cluster-objects';
import { type Code, matchesNodeSelectorAndAffinity, type Status, taintToleration } from './filters';
import { type ClusterCache, hasRequiredAntiAffinity, type NodeInfo, type PodInfo, type SpreadCounts } from './node-info';

export const SPREAD_REASON = "node(s) didn't match pod topology spread constraints";
export const SPREAD_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)";
export const AFFINITY_REASON = "node(s) didn't match pod affinity rules";
export const ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules";
export const EXISTING_ANTI_AFFINITY_REASON = "node(s) didn't satisfy existing pods anti-affinity rules";

const NEVER: SelectorMatcher = { empty: false, matches: () => false };

interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: SelectorMatcher;
  minDomains: number;
  honorAffinity: boolean;
  honorTaints: boolean;
  selfMatch: number;
  /** Domain value → matching pods. */
  counts: Map<string, number>;
  /** The selector as text, when it has one (the system defaults'): per-node counts are memoized by it. */
  selectorKey?: string;
}

function constraints(p: PodInfo, when: 'DoNotSchedule' | 'ScheduleAnyway'): Constraint[] {
  const out: Constraint[] = [];
  for (const c of p.topologySpreadConstraints) {
    if (c.whenUnsatisfiable !== when) continue;
    // matchLabelKeys: the pod's own values of these keys join the selector.
    let sel = c.labelSelector as Record<string, unknown> | undefined;
    const keys = Array.isArray(c.matchLabelKeys) ? (c.matchLabelKeys as string[]) : [];
    if (sel && keys.length > 0) {
      const extra = keys.filter((k) => k in p.labels).map((k) => ({ key: k, operator: 'In', values: [p.labels[k]] }));
      sel = { ...sel, matchExpressions: [...((sel.matchExpressions as unknown[]) ?? []), ...extra] };
    }
    const selector = selectorMatcher(sel) ?? NEVER;
    out.push({
      maxSkew: typeof c.maxSkew === 'number' ? c.maxSkew : 1,
      topologyKey: String(c.topologyKey ?? ''),
      selector,
      minDomains: typeof c.minDomains === 'number' ? c.minDomains : 1,
      honorAffinity: c.nodeAffinityPolicy !== 'Ignore',
      honorTaints: c.nodeTaintsPolicy === 'Honor',
      selfMatch: selector.matches(p.labels) ? 1 : 0,
      counts: new Map(),
    });
  }
  return out;
}

/** The node counts for constraint `c` of pod `p` (it has every key; the pod's affinity and taints as the policies say). */
function counted(p: PodInfo, cs: Constraint[], c: Constraint, n: NodeInfo): boolean {
  if (!cs.every((x) => x.topologyKey in n.labels)) return false;
  if (c.honorAffinity && !matchesNodeSelectorAndAffinity(p, n)) return false;
  return !(c.honorTaints && taintToleration(p, n));
}

const spreadMatches = (p: PodInfo, c: Constraint, q: PodInfo): boolean =>
  q.namespace === p.namespace && !q.deleting && c.selector.matches(q.labels);

/** Count the matching pods per domain over the nodes the constraints consider (the reference's PreFilter). */
function count(p: PodInfo, cs: Constraint[], cache: ClusterCache): void {
  for (const name of cache.order) {
    const n = cache.nodes.get(name) as NodeInfo;
    for (const c of cs) {
      if (!counted(p, cs, c, n)) continue;
      const value = n.labels[c.topologyKey] as string;
      let matched = 0;
      for (const q of n.podsIn(p.namespace)) if (spreadMatches(p, c, q)) matched++;
      c.counts.set(value, (c.counts.get(value) ?? 0) + matched);
    }
  }
}

export class SpreadFilter {
  private mins: number[] | undefined;

  private constructor(
    private readonly p: PodInfo,
    private readonly cs: Constraint[],
  ) {}

  static prepare(p: PodInfo, cache: ClusterCache): SpreadFilter | undefined {
    const cs = constraints(p, 'DoNotSchedule');
    if (cs.length === 0) return undefined;
    count(p, cs, cache);
    return new SpreadFilter(p, cs);
  }

  /** A copy to change (preemption's what-if). */
  clone(): SpreadFilter {
    return new SpreadFilter(
      this.p,
      this.cs.map((c) => ({ ...c, counts: new Map(c.counts) })),
    );
  }

  /** Pod `q` comes to (1) or leaves (-1) node `n` (the reference's AddPod/RemovePod). */
  update(q: PodInfo, n: NodeInfo, delta: 1 | -1): void {
    for (const c of this.cs) {
      if (!spreadMatches(this.p, c, q) || !counted(this.p, this.cs, c, n)) continue;
      const value = n.labels[c.topologyKey] as string;
      c.counts.set(value, (c.counts.get(value) ?? 0) + delta);
      this.mins = undefined;
    }
  }

  private minimums(): number[] {
    this.mins ??= this.cs.map((c) => {
      if (c.counts.size < c.minDomains) return 0;
      let min = Number.POSITIVE_INFINITY;
      for (const v of c.counts.values()) min = Math.min(min, v);
      return Number.isFinite(min) ? min : 0;
    });
    return this.mins;
  }

  filter(n: NodeInfo): Status | undefined {
    const mins = this.minimums();
    for (let i = 0; i < this.cs.length; i++) {
      const c = this.cs[i] as Constraint;
      const value = n.labels[c.topologyKey];
      if (value === undefined) return fail('PodTopologySpread', 'UnschedulableAndUnresolvable', SPREAD_MISSING_LABEL);
      const skew = (c.counts.get(value) ?? 0) + c.selfMatch - (mins[i] as number);
      if (skew > c.maxSkew) return fail('PodTopologySpread', 'Unschedulable', SPREAD_REASON);
    }
    return undefined;
  }
}

const fail = (plugin: 'PodTopologySpread' | 'InterPodAffinity', code: Code, reason: string): Status => ({
  plugin,
  code,
  reasons: [reason],
});

/** The node label of the hostname constraint (counted per node, not per domain). */
export const HOSTNAME = 'kubernetes.io/hostname';
export const ZONE = 'topology.kubernetes.io/zone';

/**
 * The reference's system default constraints, for pods without constraints of their own that
 * some Service, ReplicationController, ReplicaSet or StatefulSet selects (scoring only: both are
 * ScheduleAnyway).
 */
export const SYSTEM_DEFAULT_CONSTRAINTS = [
  { topologyKey: HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
] as const;

/** The reference's buildDefaultConstraints: the system defaults with the pod's default selector, or none. */
function defaultConstraints(selector: DefaultSelector | undefined): Constraint[] {
  if (!selector) return [];
  return SYSTEM_DEFAULT_CONSTRAINTS.map((c) => ({
    selectorKey: selector.key,
    maxSkew: c.maxSkew,
    topologyKey: c.topologyKey,
    selector,
    minDomains: 1,
    honorAffinity: true,
    honorTaints: false,
    selfMatch: 0,
    counts: new Map(),
  }));
}

/**
 * PodTopologySpread's score for ScheduleAnyway constraints (raw: lower is better; see
 * normalizeSpread), as the reference's PreScore and Score: the domains are those of the feasible
 * nodes; the pods are counted over every node the constraint's policies include, per domain
 * (hostname: per node, at Score); a constraint weighs log(its domains + 2).
 *
 * A pod without constraints gets the system defaults (when it has a default selector). Then a
 * node lacking a key is not ignored (requireAllTopologies false): the constraint just adds nothing.
 */
export class SpreadScore {
  private constructor(
    private readonly p: PodInfo,
    private readonly cs: Constraint[],
    private readonly weights: number[],
    private readonly ignored: Set<string>,
    /** With a default selector that requires a label: its matching pods per node (else counted per node). */
    private readonly perNode?: ReadonlyMap<string, number>,
  ) {}

  /** `defaultSelector` is asked only for a pod without constraints. */
  static prepare(
    p: PodInfo,
    cache: ClusterCache,
    feasible: NodeInfo[],
    defaultSelector: (p: PodInfo) => DefaultSelector | undefined = () => undefined,
  ): SpreadScore | undefined {
    const requireAll = p.topologySpreadConstraints.length > 0;
    const selector = requireAll ? undefined : defaultSelector(p);
    const cs = requireAll ? constraints(p, 'ScheduleAnyway') : defaultConstraints(selector);
    if (cs.length === 0 || feasible.length === 0) return undefined;
    // Every pod the default selector matches carries its anchor label: count those pods by node
    // (a new ReplicaSet's selector matched nothing yet, so walking the namespace's pods node by
    // node was O(pods in the namespace) per pod scheduled).
    // The counts are kept by the cache for the next pods of the same selector (spreadCounts).
    let perNode: ReadonlyMap<string, number> | undefined;
    let kept: SpreadCounts | undefined;
    const anchor = selector?.anchor;
    if (anchor) {
      const c = cs[0] as Constraint;
      const seed = cache.podsLabelled(p.namespace, anchor[0], anchor[1]);
      const matches = (q: PodInfo) => spreadMatches(p, c, q);
      if (selector.key !== undefined) {
        kept = cache.spreadCounts(p.namespace, selector.key, matches, seed);
        perNode = kept.perNode;
      } else {
        const own = new Map<string, number>();
        for (const q of seed) if (matches(q)) own.set(q.nodeName, (own.get(q.nodeName) ?? 0) + 1);
        perNode = own;
      }
    }
    const hasAllKeys = (n: NodeInfo) => cs.every((c) => c.topologyKey in n.labels);
    const ignored = new Set<string>();
    const sizes = cs.map(() => 0);
    // Some feasible node has the constraint's key (else no node reads its counts: skip counting).
    const read = cs.map(() => false);
    for (const n of feasible) {
      if (requireAll && !hasAllKeys(n)) {
        ignored.add(n.name);
        continue;
      }
      cs.forEach((c, i) => {
        if (c.topologyKey === HOSTNAME) return;
        const v = n.labels[c.topologyKey];
        if (v !== undefined) read[i] = true;
        if (c.counts.has(v ?? '')) return;
        c.counts.set(v ?? '', 0);
        sizes[i] = (sizes[i] as number) + 1;
      });
    }
    const weights = cs.map((c, i) => Math.log((c.topologyKey === HOSTNAME ? feasible.length - ignored.size : (sizes[i] as number)) + 2));
    // Per constraint, one pass over the nodes (cheapest checks first: this runs per pod over every node).
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as Constraint;
      if (!read[i] || c.topologyKey === HOSTNAME) continue;
      const add = (n: NodeInfo, matched: (n: NodeInfo) => number) => {
        if (!n.present || !n.hasPodsIn(p.namespace)) return;
        const cur = c.counts.get(n.labels[c.topologyKey] ?? '');
        if (cur === undefined || (requireAll && !hasAllKeys(n)) || !included(p, c, n)) return;
        c.counts.set(n.labels[c.topologyKey] ?? '', cur + matched(n));
      };
      // A pod that any node may take (no node selector or required affinity: every node passes
      // the default constraints' inclusion policies) adds the kept counts per zone, instead of
      // walking every node holding one of the set's pods (O(the set's size) per pod).
      if (kept && c.topologyKey === ZONE && p.plain) {
        for (const [zone, k] of kept.perZone()) {
          const cur = c.counts.get(zone);
          if (cur !== undefined) c.counts.set(zone, cur + k);
        }
        continue;
      }
      if (perNode) {
        // Only the nodes holding a matching pod add anything.
        for (const [name, k] of perNode) {
          const n = cache.nodes.get(name);
          if (n) add(n, () => k);
        }
        continue;
      }
      // A default constraint's count per node is memoized as score()'s is (the same function of
      // the pod's namespace and selector).
      const key = c.selectorKey;
      for (const n of cache.nodes.values()) {
        add(n, (n) => {
          if (key !== undefined) return n.countMatching(key, p.namespace, (q) => spreadMatches(p, c, q));
          let matched = 0;
          for (const q of n.podsIn(p.namespace)) if (spreadMatches(p, c, q)) matched++;
          return matched;
        });
      }
    }
    return new SpreadScore(p, cs, weights, ignored, perNode);
  }

  /** The raw score, or undefined for an ignored node (missing a key of the pod's own constraints: it gets 0). */
  score(n: NodeInfo): number | undefined {
    if (this.ignored.has(n.name)) return undefined;
    let s = 0;
    for (let i = 0; i < this.cs.length; i++) {
      const c = this.cs[i] as Constraint;
      const value = n.labels[c.topologyKey];
      if (value === undefined) continue;
      let count = 0;
      if (c.topologyKey === HOSTNAME) {
        // The pods of a ReplicaSet are scheduled one after another with the same default
        // selector: each node counts its matching pods once per change of its pods, not per pod
        // (5,000 nodes: ~1 ms per pod without).
        const p = this.p;
        if (this.perNode) count = this.perNode.get(n.name) ?? 0;
        else if (c.selectorKey !== undefined) count = n.countMatching(c.selectorKey, p.namespace, (q) => spreadMatches(p, c, q));
        else for (const q of n.podsIn(p.namespace)) if (spreadMatches(p, c, q)) count++;
      } else count = c.counts.get(value) ?? 0;
      s += count * (this.weights[i] as number) + (c.maxSkew - 1);
    }
    return Math.round(s);
  }
}

/** The node passes the constraint's nodeAffinityPolicy and nodeTaintsPolicy (matchNodeInclusionPolicies). */
const included = (p: PodInfo, c: Constraint, n: NodeInfo): boolean =>
  (!c.honorAffinity || matchesNodeSelectorAndAffinity(p, n)) && !(c.honorTaints && taintToleration(p, n));

/** The reference's PodTopologySpread.NormalizeScore: fewer matching pods score higher, 0-100. */
export function normalizeSpread(raw: (number | undefined)[]): number[] {
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const s of raw) {
    if (s === undefined) continue;
    min = Math.min(min, s);
    max = Math.max(max, s);
  }
  return raw.map((s) => {
    if (s === undefined) return 0;
    if (max === 0) return 100;
    return Math.trunc((100 * (max + min - s)) / max);
  });
}

export interface Term {
  selector: SelectorMatcher;
  /** undefined: every namespace. */
  namespaces: Set<string> | undefined;
  topologyKey: string;
}

type RawTerm = { labelSelector?: unknown; namespaces?: string[]; namespaceSelector?: unknown; topologyKey?: string };

export function terms(raw: unknown, ownNamespace: string): Term[] {
  if (!Array.isArray(raw)) return [];
  return (raw as RawTerm[]).map((t) => {
    const listed = t.namespaces ?? [];
    const all = t.namespaceSelector !== undefined && selectorMatcher(t.namespaceSelector)?.empty === true;
    return {
      selector: selectorMatcher(t.labelSelector) ?? NEVER,
      namespaces: all ? undefined : new Set(listed.length > 0 || t.namespaceSelector !== undefined ? listed : [ownNamespace]),
      topologyKey: t.topologyKey ?? '',
    };
  });
}

export const termMatchesPod = (t: Term, q: PodInfo): boolean =>
  (!t.namespaces || t.namespaces.has(q.namespace)) && t.selector.matches(q.labels);

const required = (p: PodInfo, kind: 'podAffinity' | 'podAntiAffinity'): unknown =>
  (p.affinity?.[kind] as { requiredDuringSchedulingIgnoredDuringExecution?: unknown } | undefined)
    ?.requiredDuringSchedulingIgnoredDuringExecution;

/** Per term, topology value → matching pods. */
type Counts = Map<string, number>[];

const bump = (m: Map<string, number>, k: string, delta: number): void => {
  const v = (m.get(k) ?? 0) + delta;
  if (v > 0) m.set(k, v);
  else m.delete(k);
};

const cloneCounts = (c: Counts): Counts => c.map((m) => new Map(m));

/**
 * InterPodAffinity's required terms for pod `p`: per term of its affinity and anti-affinity, the
 * matching pods per topology value, and per topology key the values where a bound pod's required
 * anti-affinity excludes `p`. Kept as counts so that preemption can take victims away (update).
 */
export class AffinityFilter {
  private constructor(
    private readonly p: PodInfo,
    private readonly affinity: Term[],
    private readonly affinityCounts: Counts,
    private readonly anti: Term[],
    private readonly antiCounts: Counts,
    /** Topology key → value → bound pods whose anti-affinity excludes `p` there. */
    private readonly excluded: Map<string, Map<string, number>>,
  ) {}

  static prepare(p: PodInfo, cache: ClusterCache): AffinityFilter | undefined {
    const affinity = terms(required(p, 'podAffinity'), p.namespace);
    const anti = terms(required(p, 'podAntiAffinity'), p.namespace);
    if (affinity.length === 0 && anti.length === 0 && !AffinityFilter.anyExcluding(p, cache)) return undefined;
    const f = new AffinityFilter(
      p,
      affinity,
      affinity.map(() => new Map()),
      anti,
      anti.map(() => new Map()),
      new Map(),
    );
    for (const q of cache.antiAffinityPods) {
      const n = cache.nodes.get(q.nodeName);
      if (n) f.excludedBy(q, n, 1);
    }
    if (affinity.length + anti.length > 0) {
      for (const name of cache.order) {
        const n = cache.nodes.get(name) as NodeInfo;
        for (const q of n.pods.values()) f.termsMatch(q, n, 1);
      }
    }
    return f;
  }

  private static anyExcluding(p: PodInfo, cache: ClusterCache): boolean {
    for (const q of cache.antiAffinityPods) {
      if (q.key === p.key) continue;
      if (terms(required(q, 'podAntiAffinity'), q.namespace).some((t) => termMatchesPod(t, p))) return true;
    }
    return false;
  }

  private excludedBy(q: PodInfo, n: NodeInfo, delta: 1 | -1): void {
    if (q.key === this.p.key) return;
    for (const t of terms(required(q, 'podAntiAffinity'), q.namespace)) {
      const value = n.labels[t.topologyKey];
      if (value === undefined || !termMatchesPod(t, this.p)) continue;
      let m = this.excluded.get(t.topologyKey);
      if (!m) {
        m = new Map();
        this.excluded.set(t.topologyKey, m);
      }
      bump(m, value, delta);
    }
  }

  private termsMatch(q: PodInfo, n: NodeInfo, delta: 1 | -1): void {
    if (q.key === this.p.key) return;
    // As the reference: a pod counts for the affinity terms only if it matches all of them.
    if (this.affinity.length > 0 && this.affinity.every((t) => termMatchesPod(t, q))) {
      this.affinity.forEach((t, i) => {
        const v = n.labels[t.topologyKey];
        if (v !== undefined) bump(this.affinityCounts[i] as Map<string, number>, v, delta);
      });
    }
    this.anti.forEach((t, i) => {
      const v = n.labels[t.topologyKey];
      if (v !== undefined && termMatchesPod(t, q)) bump(this.antiCounts[i] as Map<string, number>, v, delta);
    });
  }

  /** A copy to change (preemption's what-if). */
  clone(): AffinityFilter {
    const excluded = new Map([...this.excluded].map(([k, m]) => [k, new Map(m)]));
    return new AffinityFilter(this.p, this.affinity, cloneCounts(this.affinityCounts), this.anti, cloneCounts(this.antiCounts), excluded);
  }

  /** Pod `q` comes to (1) or leaves (-1) node `n` (the reference's AddPod/RemovePod). */
  update(q: PodInfo, n: NodeInfo, delta: 1 | -1): void {
    if (hasRequiredAntiAffinity(q)) this.excludedBy(q, n, delta);
    this.termsMatch(q, n, delta);
  }

  filter(n: NodeInfo): Status | undefined {
    // No pod matches the terms but the pod itself: the first of its group goes anywhere.
    const firstOfGroup = this.affinityCounts.every((m) => m.size === 0) && this.affinity.every((t) => termMatchesPod(t, this.p));
    for (let i = 0; i < this.affinity.length; i++) {
      const t = this.affinity[i] as Term;
      const v = n.labels[t.topologyKey];
      // The node must have the term's key; unless the pod is the first of its group, a pod matching the term must be in its domain.
      if (v === undefined || (!firstOfGroup && !(this.affinityCounts[i] as Map<string, number>).has(v))) {
        return fail('InterPodAffinity', 'UnschedulableAndUnresolvable', AFFINITY_REASON);
      }
    }
    for (let i = 0; i < this.anti.length; i++) {
      const v = n.labels[(this.anti[i] as Term).topologyKey];
      if (v !== undefined && (this.antiCounts[i] as Map<string, number>).has(v)) {
        return fail('InterPodAffinity', 'Unschedulable', ANTI_AFFINITY_REASON);
      }
    }
    for (const [key, values] of this.excluded) {
      const v = n.labels[key];
      if (v !== undefined && values.has(v)) return fail('InterPodAffinity', 'Unschedulable', EXISTING_ANTI_AFFINITY_REASON);
    }
    return undefined;
  }
}
