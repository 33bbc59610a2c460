/**
 * Scoring of the feasible nodes as the reference's default profile: each plugin scores a node
 * 0-100 (after its normalisation), the node's total is the weighted sum, and the host is one of
 * the best at random.
 *
 *   plugin                               weight   score
 *   TaintToleration                       3       fewer untolerated PreferNoSchedule taints
 *   NodeAffinity                          2       summed weights of matching preferred terms
 *   PodTopologySpread                     2       fewer matching pods in the domain (ScheduleAnyway, or the
 *                                                 system defaults for pods of Services and controllers)
 *   InterPodAffinity                      2       preferred (anti-)affinity weights, both ways
 *   NodeResourcesFit (LeastAllocated)     1       (allocatable - requested) * 100 / allocatable, cpu and memory weight 1
 *   NodeResourcesBalancedAllocation       1       (1 - |cpu fraction - memory fraction| / 2) * 100
 *
 * ImageLocality is off (no images on simulated nodes).
 */

import { type AffinityScore, normalizeAffinity } from './affinity-score';
import { hasPreferredNodeAffinity, intolerablePreferNoSchedule, preferredAffinityScore } from './filters';
import type { NodeInfo, PodInfo } from './node-info';
import { normalizeSpread, type SpreadScore } from './topology';

export const MAX_NODE_SCORE = 100;

export const WEIGHTS = {
  TaintToleration: 3,
  NodeAffinity: 2,
  PodTopologySpread: 2,
  InterPodAffinity: 2,
  NodeResourcesFit: 1,
  NodeResourcesBalancedAllocation: 1,
} as const;

const leastRequested = (requested: number, capacity: number): number =>
  capacity === 0 || requested > capacity ? 0 : Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);

/** NodeResourcesFit with the LeastAllocated strategy over cpu and memory (weight 1 each), on the non-zero requests. */
export function leastAllocated(p: PodInfo, n: NodeInfo): number {
  const cpu = leastRequested(n.nonZeroMilliCPU + p.nonZero.milliCPU, n.allocMilliCPU);
  const mem = leastRequested(n.nonZeroMemory + p.nonZero.memory, n.allocMemory);
  return Math.trunc((cpu + mem) / 2);
}

/** NodeResourcesBalancedAllocation over cpu and memory, on the actual requests. */
export function balancedAllocation(p: PodInfo, n: NodeInfo): number {
  // With one resource (or none) allocatable, the deviation is 0.
  if (n.allocMilliCPU <= 0 || n.allocMemory <= 0) return MAX_NODE_SCORE;
  const cpu = Math.min(1, (n.reqMilliCPU + p.requests.milliCPU) / n.allocMilliCPU);
  const mem = Math.min(1, (n.reqMemory + p.requests.memory) / n.allocMemory);
  const std = Math.abs((cpu - mem) / 2);
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/** The reference's DefaultNormalizeScore: scaled to 0-100 by the highest (reversed: 100 minus that). */
export function defaultNormalize(scores: number[], reverse: boolean): number[] {
  let max = 0;
  for (const s of scores) max = Math.max(max, s);
  if (max === 0) return scores.map(() => (reverse ? MAX_NODE_SCORE : 0));
  return scores.map((s) => {
    const v = Math.trunc((MAX_NODE_SCORE * s) / max);
    return reverse ? MAX_NODE_SCORE - v : v;
  });
}

/** What the cluster-wide scores prepared (PreScore); a missing one adds nothing. */
export interface PreScored {
  spread?: SpreadScore;
  affinity?: AffinityScore;
}

/** The weighted total of every node (same order as `nodes`). */
export function scoreNodes(p: PodInfo, nodes: NodeInfo[], { spread, affinity }: PreScored = {}): number[] {
  const total = nodes.map(
    (n) => WEIGHTS.NodeResourcesFit * leastAllocated(p, n) + WEIGHTS.NodeResourcesBalancedAllocation * balancedAllocation(p, n),
  );
  const add = (scores: number[], weight: number) => {
    for (let i = 0; i < total.length; i++) total[i] = (total[i] as number) + weight * (scores[i] as number);
  };
  // Taints: every node scores 100 when none has a PreferNoSchedule taint the pod does not tolerate.
  if (nodes.some((n) => n.taints.length > 0)) {
    add(
      defaultNormalize(
        nodes.map((n) => intolerablePreferNoSchedule(p, n)),
        true,
      ),
      WEIGHTS.TaintToleration,
    );
  } else
    add(
      nodes.map(() => MAX_NODE_SCORE),
      WEIGHTS.TaintToleration,
    );
  if (hasPreferredNodeAffinity(p))
    add(
      defaultNormalize(
        nodes.map((n) => preferredAffinityScore(p, n)),
        false,
      ),
      WEIGHTS.NodeAffinity,
    );
  if (spread) add(normalizeSpread(nodes.map((n) => spread.score(n))), WEIGHTS.PodTopologySpread);
  if (affinity) add(normalizeAffinity(nodes.map((n) => affinity.score(n))), WEIGHTS.InterPodAffinity);
  return total;
}

/** One of the nodes with the highest score, each equally likely (the reference's reservoir sampling). */
export function selectHost(scores: number[], random: () => number = Math.random): number {
  let best = -1;
  let bestScore = Number.NEGATIVE_INFINITY;
  let ties = 0;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i] as number;
    if (s > bestScore) {
      bestScore = s;
      best = i;
      ties = 1;
    } else if (s === bestScore) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  }
  return best;
}
