/**
 * The filters and score that count pods per topology domain (a node label's value): the
 * reference's PodTopologySpread (filter for DoNotSchedule constraints, score for ScheduleAnyway)
 * and InterPodAffinity's required terms. Each is prepared once per pod (PreFilter: counting the
 * matching pods over the cluster, only when the pod has constraints or terms, or some bound pod
 * has required anti-affinity) and then answers per node in constant time.
 *
 * Not done: namespaceSelector in affinity terms other than `{}` (all namespaces) and the system
 * default spread constraints (zone/hostname, ScheduleAnyway) for pods of Services and
 * ReplicaSets; preferred inter-pod affinity is not scored.
 */
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import { type Code, matchesNodeSelectorAndAffinity, type Status, taintToleration } from './filters';
import type { ClusterCache, NodeInfo, PodInfo } from './node-info';

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

/** Count the matching pods per domain over the nodes the constraints consider (the reference's PreFilter). */
function count(p: PodInfo, cs: Constraint[], cache: ClusterCache): void {
  for (const name of cache.order) {
    const n = cache.nodes.get(name) as NodeInfo;
    if (!cs.every((c) => c.topologyKey in n.labels)) continue;
    for (const c of cs) {
      if (c.honorAffinity && !matchesNodeSelectorAndAffinity(p, n)) continue;
      if (c.honorTaints && taintToleration(p, n)) continue;
      const value = n.labels[c.topologyKey] as string;
      let matched = 0;
      for (const q of n.pods.values()) {
        if (q.namespace === p.namespace && !q.deleting && c.selector.matches(q.labels)) matched++;
      }
      c.counts.set(value, (c.counts.get(value) ?? 0) + matched);
    }
  }
}

export class SpreadFilter {
  private readonly mins: number[];

  private constructor(private readonly cs: Constraint[]) {
    this.mins = cs.map((c) => {
      if (c.counts.size < c.minDomains) return 0;
      let min = Number.POSITIVE_INFINITY;
      for (const v of c.counts.values()) min = Math.min(min, v);
      return Number.isFinite(min) ? min : 0;
    });
  }

  static prepare(p: PodInfo, cache: ClusterCache): SpreadFilter | undefined {
    const cs = constraints(p, 'DoNotSchedule');
    if (cs.length === 0) return undefined;
    count(p, cs, cache);
    return new SpreadFilter(cs);
  }

  filter(n: NodeInfo): Status | undefined {
    for (let i = 0; i < this.cs.length; i++) {
      const c = this.cs[i] as Constraint;
      const value = n.labels[c.topologyKey];
      if (value === undefined) return fail('PodTopologySpread', 'UnschedulableAndUnresolvable', SPREAD_MISSING_LABEL);
      const skew = (c.counts.get(value) ?? 0) + c.selfMatch - (this.mins[i] as number);
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

/** PodTopologySpread's score for ScheduleAnyway constraints (raw: lower is better; see normalizeSpread). */
export class SpreadScore {
  private readonly weights: number[];

  private constructor(private readonly cs: Constraint[]) {
    // The reference weighs a constraint by log(number of domains + 2).
    this.weights = cs.map((c) => Math.log(c.counts.size + 2));
  }

  static prepare(p: PodInfo, cache: ClusterCache): SpreadScore | undefined {
    const cs = constraints(p, 'ScheduleAnyway');
    if (cs.length === 0) return undefined;
    count(p, cs, cache);
    return new SpreadScore(cs);
  }

  /** The raw score, or undefined for a node missing a topology key (it gets 0). */
  score(n: NodeInfo): number | undefined {
    let s = 0;
    for (let i = 0; i < this.cs.length; i++) {
      const c = this.cs[i] as Constraint;
      const value = n.labels[c.topologyKey];
      if (value === undefined) return undefined;
      s += (c.counts.get(value) ?? 0) * (this.weights[i] as number) + (c.maxSkew - 1);
    }
    return Math.round(s);
  }
}

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

interface Term {
  selector: SelectorMatcher;
  /** undefined: every namespace. */
  namespaces: Set<string> | undefined;
  topologyKey: string;
}

type RawTerm = { labelSelector?: unknown; namespaces?: string[]; namespaceSelector?: unknown; topologyKey?: string };

function terms(raw: unknown, ownNamespace: string): Term[] {
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

const termMatchesPod = (t: Term, q: PodInfo): boolean => (!t.namespaces || t.namespaces.has(q.namespace)) && t.selector.matches(q.labels);

const required = (p: PodInfo, kind: 'podAffinity' | 'podAntiAffinity'): unknown =>
  (p.affinity?.[kind] as { requiredDuringSchedulingIgnoredDuringExecution?: unknown } | undefined)
    ?.requiredDuringSchedulingIgnoredDuringExecution;

/** Term index → topology value → matching pods. */
type Counts = Map<string, number>[];

export class AffinityFilter {
  private constructor(
    private readonly affinity: Term[],
    private readonly affinityCounts: Counts,
    /** No pod matches the affinity terms but the pod matches them itself: the first of its group goes anywhere. */
    private readonly firstOfGroup: boolean,
    private readonly anti: Term[],
    private readonly antiCounts: Counts,
    /** Topology key → values where a bound pod's anti-affinity excludes this pod. */
    private readonly excluded: Map<string, Set<string>>,
  ) {}

  static prepare(p: PodInfo, cache: ClusterCache): AffinityFilter | undefined {
    const affinity = terms(required(p, 'podAffinity'), p.namespace);
    const anti = terms(required(p, 'podAntiAffinity'), p.namespace);
    const excluded = new Map<string, Set<string>>();
    for (const q of cache.antiAffinityPods) {
      const node = cache.nodes.get(q.nodeName);
      if (!node || q.key === p.key) continue;
      for (const t of terms(required(q, 'podAntiAffinity'), q.namespace)) {
        const value = node.labels[t.topologyKey];
        if (value === undefined || !termMatchesPod(t, p)) continue;
        let s = excluded.get(t.topologyKey);
        if (!s) {
          s = new Set();
          excluded.set(t.topologyKey, s);
        }
        s.add(value);
      }
    }
    if (affinity.length === 0 && anti.length === 0 && excluded.size === 0) return undefined;
    const affinityCounts: Counts = affinity.map(() => new Map());
    const antiCounts: Counts = anti.map(() => new Map());
    let anyMatch = false;
    if (affinity.length + anti.length > 0) {
      for (const name of cache.order) {
        const n = cache.nodes.get(name) as NodeInfo;
        for (const q of n.pods.values()) {
          if (q.key === p.key) continue;
          affinity.forEach((t, i) => {
            const v = n.labels[t.topologyKey];
            if (!termMatchesPod(t, q)) return;
            anyMatch = true;
            if (v !== undefined)
              (affinityCounts[i] as Map<string, number>).set(v, ((affinityCounts[i] as Map<string, number>).get(v) ?? 0) + 1);
          });
          anti.forEach((t, i) => {
            const v = n.labels[t.topologyKey];
            if (v !== undefined && termMatchesPod(t, q)) (antiCounts[i] as Map<string, number>).set(v, 1);
          });
        }
      }
    }
    const firstOfGroup = affinity.length > 0 && !anyMatch && affinity.every((t) => termMatchesPod(t, p));
    return new AffinityFilter(affinity, affinityCounts, firstOfGroup, anti, antiCounts, excluded);
  }

  filter(n: NodeInfo): Status | undefined {
    if (!this.firstOfGroup) {
      for (let i = 0; i < this.affinity.length; i++) {
        const v = n.labels[(this.affinity[i] as Term).topologyKey];
        if (v === undefined || !(this.affinityCounts[i] as Map<string, number>).has(v)) {
          return fail('InterPodAffinity', 'UnschedulableAndUnresolvable', AFFINITY_REASON);
        }
      }
    } else {
      // Still: the node must have every term's topology key.
      for (const t of this.affinity) {
        if (!(t.topologyKey in n.labels)) return fail('InterPodAffinity', 'UnschedulableAndUnresolvable', AFFINITY_REASON);
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
