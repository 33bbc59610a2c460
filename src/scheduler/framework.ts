/**
 * One scheduling attempt of one pod (the reference's schedulePod): prepare the pod's cluster-wide
 * filter state once, run the filters over the nodes from a round-robin start until enough
 * feasible nodes are found (percentageOfNodesToScore's adaptive rule), score those, pick one of
 * the best at random. Per pod the work is proportional to the nodes examined: 100 nodes for up
 * to 100 nodes, 10% of 5,000 (and never fewer than 100) for 5,000.
 *
 * When no node fits, the per-node statuses make the reference's FitError message:
 *   0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}.
 */

import { AffinityScore } from './affinity-score';
import { type ClusterObjects, NO_OBJECTS } from './cluster-objects';
import { type Reserved, runNodeFilters, type Status } from './filters';
import type { ClusterCache, NodeInfo, PodInfo } from './node-info';
import { addResources, emptyResources } from './resources';
import { scoreNodes, selectHost } from './scores';
import { AffinityFilter, SpreadFilter, SpreadScore } from './topology';

/** The reference's minFeasibleNodesToFind: below this many nodes, all are examined. */
export const MIN_FEASIBLE_NODES = 100;
/** The reference's minFeasibleNodesPercentageToFind. */
export const MIN_FEASIBLE_PERCENTAGE = 5;
/** The reference's DefaultPercentageOfNodesToScore base (50%, less 1% per 125 nodes). */
const BASE_PERCENTAGE = 50;

export const NO_NODES = 'no nodes available to schedule pods';

/** How many feasible nodes are enough (numFeasibleNodesToFind with percentageOfNodesToScore unset, or set to `percentage`). */
export function numFeasibleNodesToFind(numAllNodes: number, percentage = 0): number {
  if (numAllNodes < MIN_FEASIBLE_NODES || percentage >= 100) return numAllNodes;
  let adaptive = percentage;
  if (adaptive <= 0) adaptive = Math.max(MIN_FEASIBLE_PERCENTAGE, BASE_PERCENTAGE - Math.trunc(numAllNodes / 125));
  const n = Math.trunc((numAllNodes * adaptive) / 100);
  return Math.max(n, MIN_FEASIBLE_NODES);
}

/**
 * The FitError message: `0/N nodes are available: <count> <reason>, ...` with the reasons
 * sorted as strings, then ` <postFilter>` when preemption said something (`preemption: ...`).
 */
export function fitErrorMessage(numAllNodes: number, statuses: Iterable<Status>, postFilterMsg = ''): string {
  const histogram = new Map<string, number>();
  for (const s of statuses) for (const r of s.reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
  const reasons = [...histogram].map(([r, n]) => `${n} ${r}`).sort();
  let msg = `0/${numAllNodes} nodes are available:`;
  if (reasons.length > 0) msg += ` ${reasons.join(', ')}.`;
  if (postFilterMsg) msg += ` ${postFilterMsg}`;
  return msg;
}

/** What a pod's filters prepared over the whole cluster (the reference's CycleState after PreFilter). */
export interface CycleState {
  spread: SpreadFilter | undefined;
  affinity: AffinityFilter | undefined;
}

export function prepare(p: PodInfo, cache: ClusterCache): CycleState {
  return { spread: SpreadFilter.prepare(p, cache), affinity: AffinityFilter.prepare(p, cache) };
}

/** A copy of the state to change (preemption's what-if). */
export const cloneState = (s: CycleState): CycleState => ({ spread: s.spread?.clone(), affinity: s.affinity?.clone() });

/** Pod `q` comes to (1) or leaves (-1) node `n` in the state's counts (the reference's PreFilterExtensions). */
export function updateState(s: CycleState, q: PodInfo, n: NodeInfo, delta: 1 | -1): void {
  s.spread?.update(q, n, delta);
  s.affinity?.update(q, n, delta);
}

/** Every filter for one node, in the reference's order. */
export function filterNode(p: PodInfo, n: NodeInfo, state: CycleState, cache: ClusterCache): Status | undefined {
  return runNodeFilters(p, n, reservedFor(p, n, cache)) ?? state.spread?.filter(n) ?? state.affinity?.filter(n);
}

/** What pods nominated to the node with at least the pod's priority hold there (they came first). */
function reservedFor(p: PodInfo, n: NodeInfo, cache: ClusterCache): Reserved | undefined {
  if (!cache.hasNominated(n.name)) return undefined;
  let r: Reserved | undefined;
  for (const q of cache.nominatedTo(n.name)) {
    if (q.key === p.key || q.priority < p.priority) continue;
    r ??= { requests: emptyResources(), pods: 0 };
    addResources(r.requests, q.requests);
    r.pods++;
  }
  return r;
}

export type Attempt =
  | { node: string; evaluated: number; feasible: number }
  | { node: undefined; numAllNodes: number; statuses: Map<string, Status>; message: string; state: CycleState | undefined };

export class Algorithm {
  private nextStart = 0;

  constructor(
    private readonly cache: ClusterCache,
    private readonly opts: { percentageOfNodesToScore?: number; random?: () => number; objects?: ClusterObjects } = {},
  ) {}

  schedule(p: PodInfo): Attempt {
    const cache = this.cache;
    const all = cache.order;
    if (all.length === 0) return { node: undefined, numAllNodes: 0, statuses: new Map(), message: NO_NODES, state: undefined };
    const state = prepare(p, cache);
    // A preemptor tries the node it was nominated to first.
    if (p.nominatedNodeName) {
      const n = cache.nodes.get(p.nominatedNodeName);
      if (n?.present && !filterNode(p, n, state, cache)) return { node: n.name, evaluated: 1, feasible: 1 };
    }
    const want = numFeasibleNodesToFind(all.length, this.opts.percentageOfNodesToScore);
    const feasible: NodeInfo[] = [];
    const statuses = new Map<string, Status>();
    const start = this.nextStart % all.length;
    let processed = 0;
    for (; processed < all.length && feasible.length < want; processed++) {
      const n = cache.nodes.get(all[(start + processed) % all.length] as string) as NodeInfo;
      const s = filterNode(p, n, state, cache);
      if (s) statuses.set(n.name, s);
      else feasible.push(n);
    }
    this.nextStart = (start + processed) % all.length;
    if (feasible.length === 0) {
      return { node: undefined, numAllNodes: all.length, statuses, message: fitErrorMessage(all.length, statuses.values()), state };
    }
    if (feasible.length === 1) return { node: (feasible[0] as NodeInfo).name, evaluated: processed, feasible: 1 };
    const objects = this.opts.objects ?? NO_OBJECTS;
    const scores = scoreNodes(p, feasible, {
      spread: SpreadScore.prepare(p, cache, feasible, (q) => objects.defaultSelector(q)),
      affinity: AffinityScore.prepare(p, cache),
    });
    const best = feasible[selectHost(scores, this.opts.random)] as NodeInfo;
    return { node: best.name, evaluated: processed, feasible: feasible.length };
  }
}
