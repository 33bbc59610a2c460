/**
 * Preemption as the reference's DefaultPreemption PostFilter, computed on the scheduler's cache
 * (the writes are the caller's): when no node fits a pod, find nodes where evicting pods of
 * lower priority would make it fit, the fewest and least important victims per node, and pick
 * one node:
 *
 *   1. eligibility: preemptionPolicy Never, or victims of an earlier preemption still
 *      terminating on the nominated node, end it ("not eligible due to ...")
 *   2. candidates: nodes whose rejection was Unschedulable (not ...AndUnresolvable), from a
 *      random offset, at most max(10% of them, 100)
 *   3. victims on a node: remove every lower-priority pod; if the pod fits, put them back one by
 *      one, most important first (higher priority, then older), keeping back those it still fits
 *      beside
 *   4. the node: lowest highest-victim priority, then lowest sum of priorities, then fewest
 *      victims, then the latest start among its most important victims, then the first
 *
 * Spread and inter-pod affinity counts follow the victims' removal (the reference's
 * PreFilterExtensions). PodDisruptionBudgets are not considered (the reference prefers victims
 * whose eviction violates none).
 */

import type { Status } from './filters';
import { type CycleState, cloneState, filterNode, fitErrorMessage, updateState } from './framework';
import type { ClusterCache, NodeInfo, PodInfo } from './node-info';

export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_VICTIMS = 'No preemption victims found for incoming pod';
export const NEVER = 'not eligible due to preemptionPolicy=Never.';
export const TERMINATING = 'not eligible due to a terminating pod on the nominated node.';

/** The reference's MinCandidateNodesPercentage and MinCandidateNodesAbsolute. */
const MIN_CANDIDATES_PERCENTAGE = 10;
const MIN_CANDIDATES_ABSOLUTE = 100;

export interface Candidate {
  node: string;
  victims: PodInfo[];
}

/** A plan (node and victims), or the message that preemption found none (the PostFilter message, without `preemption: `). */
export type Outcome =
  | { plan: Candidate; message: '' }
  /** `eligible` false: the pod may not preempt now (its nomination stays); true: no node would do (it goes). */
  | { plan: undefined; message: string; eligible: boolean };

/** Higher priority first, then the older. */
const moreImportant = (a: PodInfo, b: PodInfo): number => (a.priority !== b.priority ? b.priority - a.priority : a.startTime - b.startTime);

export function selectVictims(p: PodInfo, node: NodeInfo, state: CycleState, cache: ClusterCache): Candidate | Status {
  const lower = [...node.pods.values()].filter((q) => q.priority < p.priority);
  if (lower.length === 0) return { plugin: 'NodeResourcesFit', code: 'UnschedulableAndUnresolvable', reasons: [NO_VICTIMS] };
  const n = node.clone();
  const st = cloneState(state);
  for (const q of lower) {
    n.removePod(q.key);
    updateState(st, q, n, -1);
  }
  const s = filterNode(p, n, st, cache);
  if (s) return s;
  lower.sort(moreImportant);
  const victims: PodInfo[] = [];
  for (const q of lower) {
    n.addPod(q);
    updateState(st, q, n, 1);
    if (filterNode(p, n, st, cache)) {
      n.removePod(q.key);
      updateState(st, q, n, -1);
      victims.push(q);
    }
  }
  return { node: node.name, victims };
}

/** The reference's pickOneNodeForPreemption (without the PDB criterion). */
export function pickOne(candidates: Candidate[]): Candidate | undefined {
  const INT32 = 2 ** 31;
  const keyOf = (c: Candidate) => {
    const highest = c.victims.reduce((m, v) => Math.max(m, v.priority), Number.NEGATIVE_INFINITY);
    const sum = c.victims.reduce((s, v) => s + v.priority + INT32, 0);
    const earliestOfHighest = c.victims
      .filter((v) => v.priority === highest)
      .reduce((m, v) => Math.min(m, v.startTime), Number.POSITIVE_INFINITY);
    return { highest, sum, count: c.victims.length, earliestOfHighest };
  };
  let best: Candidate | undefined;
  let bk: ReturnType<typeof keyOf> | undefined;
  for (const c of candidates) {
    if (c.victims.length === 0) return c;
    const k = keyOf(c);
    if (
      !bk ||
      k.highest < bk.highest ||
      (k.highest === bk.highest &&
        (k.sum < bk.sum ||
          (k.sum === bk.sum && (k.count < bk.count || (k.count === bk.count && k.earliestOfHighest > bk.earliestOfHighest)))))
    ) {
      best = c;
      bk = k;
    }
  }
  return best;
}

export function preempt(
  p: PodInfo,
  statuses: Map<string, Status>,
  state: CycleState,
  cache: ClusterCache,
  random: () => number = Math.random,
): Outcome {
  if (p.preemptionPolicy === 'Never') return { plan: undefined, message: NEVER, eligible: false };
  if (p.nominatedNodeName) {
    const s = statuses.get(p.nominatedNodeName);
    const nominated = cache.nodes.get(p.nominatedNodeName);
    if (nominated && s?.code !== 'UnschedulableAndUnresolvable') {
      for (const q of nominated.pods.values())
        if (q.deleting && q.priority < p.priority) return { plan: undefined, message: TERMINATING, eligible: false };
    }
  }
  const result = new Map<string, Status>();
  const potential: NodeInfo[] = [];
  for (const name of cache.order) {
    const s = statuses.get(name);
    if (!s) continue;
    if (s.code === 'UnschedulableAndUnresolvable') result.set(name, { ...s, reasons: [NOT_HELPFUL] });
    else potential.push(cache.nodes.get(name) as NodeInfo);
  }
  const all = cache.order.length;
  if (potential.length === 0) return { plan: undefined, message: fitErrorMessage(all, result.values()), eligible: true };
  const want = Math.min(
    potential.length,
    Math.max(Math.trunc((potential.length * MIN_CANDIDATES_PERCENTAGE) / 100), MIN_CANDIDATES_ABSOLUTE),
  );
  const offset = Math.floor(random() * potential.length);
  const candidates: Candidate[] = [];
  for (let i = 0; i < potential.length && candidates.length < want; i++) {
    const n = potential[(offset + i) % potential.length] as NodeInfo;
    const c = selectVictims(p, n, state, cache);
    if ('victims' in c) candidates.push(c);
    else result.set(n.name, c);
  }
  const plan = pickOne(candidates);
  if (!plan) return { plan: undefined, message: fitErrorMessage(all, result.values()), eligible: true };
  return { plan, message: '' };
}
