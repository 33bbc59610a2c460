/**
 * InterPodAffinity's score as the reference's PreScore, Score and NormalizeScore: per topology
 * key and value, a sum of weights, read by every node with that value.
 *
 *   incoming pod's preferred affinity term matched by an existing pod      +weight at the pod's domain
 *   incoming pod's preferred anti-affinity term matched by an existing pod −weight
 *   existing pod's required affinity term matched by the incoming pod      +hardPodAffinityWeight (1)
 *   existing pod's preferred affinity term matched by the incoming pod     +weight   (symmetry)
 *   existing pod's preferred anti-affinity term matched by the incoming pod −weight  (symmetry)
 *
 * Without preferred terms of its own, only the pods with pod affinity or anti-affinity are
 * visited (the reference's HavePodsWithAffinityList); with them, every pod.
 */
import type { ClusterCache, NodeInfo, PodInfo } from './node-info';
import { type Term, termMatchesPod, terms } from './topology';

/** The reference's default hardPodAffinityWeight (InterPodAffinityArgs). */
export const HARD_POD_AFFINITY_WEIGHT = 1;

interface WeightedTerm extends Term {
  weight: number;
}

type Kind = 'podAffinity' | 'podAntiAffinity';

const section = (p: PodInfo, kind: Kind): Record<string, unknown> | undefined => {
  const s = p.affinity?.[kind];
  return s && typeof s === 'object' ? (s as Record<string, unknown>) : undefined;
};

type RawWeighted = { weight?: unknown; podAffinityTerm?: unknown };

/** Parsed terms per pod version and kind (an existing pod's terms are read by every pod scheduled). */
const parsed = {
  'podAffinity/preferred': new WeakMap<PodInfo, WeightedTerm[]>(),
  'podAffinity/required': new WeakMap<PodInfo, WeightedTerm[]>(),
  'podAntiAffinity/preferred': new WeakMap<PodInfo, WeightedTerm[]>(),
  'podAntiAffinity/required': new WeakMap<PodInfo, WeightedTerm[]>(),
};

function weighted(p: PodInfo, kind: Kind, which: 'preferred' | 'required'): WeightedTerm[] {
  const memo = parsed[`${kind}/${which}`];
  let out = memo.get(p);
  if (out) return out;
  const s = section(p, kind);
  if (which === 'required') {
    out = terms(s?.requiredDuringSchedulingIgnoredDuringExecution, p.namespace).map((t) => ({ ...t, weight: HARD_POD_AFFINITY_WEIGHT }));
  } else {
    const raw = Array.isArray(s?.preferredDuringSchedulingIgnoredDuringExecution)
      ? (s.preferredDuringSchedulingIgnoredDuringExecution as RawWeighted[])
      : [];
    const ts = terms(
      raw.map((w) => w.podAffinityTerm ?? {}),
      p.namespace,
    );
    out = ts.map((t, i) => ({ ...t, weight: typeof raw[i]?.weight === 'number' ? (raw[i]?.weight as number) : 0 }));
  }
  memo.set(p, out);
  return out;
}

/** Topology key → value → summed weight. */
type TopologyScore = Map<string, Map<string, number>>;

/** The reference's processTerm: `check` matches the term: the term's weight goes to `n`'s domain. */
function processTerm(score: TopologyScore, t: WeightedTerm, check: PodInfo, n: NodeInfo, multiplier: 1 | -1): void {
  const value = n.labels[t.topologyKey];
  if (value === undefined || !termMatchesPod(t, check)) return;
  let m = score.get(t.topologyKey);
  if (!m) {
    m = new Map();
    score.set(t.topologyKey, m);
  }
  m.set(value, (m.get(value) ?? 0) + t.weight * multiplier);
}

export class AffinityScore {
  private constructor(private readonly topology: TopologyScore) {}

  /** undefined when no term matched anywhere (the reference's Skip: every node scores 0). */
  static prepare(p: PodInfo, cache: ClusterCache): AffinityScore | undefined {
    const affinity = weighted(p, 'podAffinity', 'preferred');
    const anti = weighted(p, 'podAntiAffinity', 'preferred');
    const score: TopologyScore = new Map();
    const existing = (q: PodInfo, n: NodeInfo) => {
      if (Object.keys(n.labels).length === 0) return;
      for (const t of affinity) processTerm(score, t, q, n, 1);
      for (const t of anti) processTerm(score, t, q, n, -1);
      if (!q.hasPodAffinity) return;
      if (section(q, 'podAffinity')) {
        for (const t of weighted(q, 'podAffinity', 'required')) processTerm(score, t, p, n, 1);
        for (const t of weighted(q, 'podAffinity', 'preferred')) processTerm(score, t, p, n, 1);
      }
      if (section(q, 'podAntiAffinity')) for (const t of weighted(q, 'podAntiAffinity', 'preferred')) processTerm(score, t, p, n, -1);
    };
    if (affinity.length + anti.length > 0) {
      for (const n of cache.nodes.values()) if (n.present) for (const q of n.pods.values()) existing(q, n);
    } else {
      for (const q of cache.affinityPods) {
        const n = cache.nodes.get(q.nodeName);
        if (n?.present) existing(q, n);
      }
    }
    return score.size === 0 ? undefined : new AffinityScore(score);
  }

  /** The raw score: the sums of the node's domains. */
  score(n: NodeInfo): number {
    let s = 0;
    for (const [key, values] of this.topology) {
      const v = n.labels[key];
      if (v !== undefined) s += values.get(v) ?? 0;
    }
    return s;
  }
}

/** The reference's InterPodAffinity.NormalizeScore: 0-100 over [min(0, lowest), max(0, highest)]. */
export function normalizeAffinity(raw: number[]): number[] {
  let max = 0;
  let min = 0;
  for (const s of raw) {
    max = Math.max(max, s);
    min = Math.min(min, s);
  }
  const diff = max - min;
  return raw.map((s) => (diff > 0 ? Math.trunc((100 * (s - min)) / diff) : 0));
}
