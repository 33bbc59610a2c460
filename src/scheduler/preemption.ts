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
 *      one, keeping back those it still fits beside: first those whose eviction would violate a
 *      PodDisruptionBudget, then the others, each group most important first (higher priority,
 *      then older)
 *   4. the node: fewest PodDisruptionBudget violations, then lowest highest-victim priority, then
 *      lowest sum of priorities, then fewest victims, then the latest start among its most
 *      important victims, then the first
 *
 * Spread and inter-pod affinity counts follow the victims' removal (the reference's
 * PreFilterExtensions). A victim violates a budget (filterPodsWithPDBViolation) when, going
 * down the sorted victims, a budget of its namespace selecting it has no disruptions left
 * (status.disruptionsAllowed less the victims before it; pods in status.disruptedPods are
 * already counted and never violate).
 */

import type { Budget } from './cluster-objects';
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
  /** Most important first. */
  victims: PodInfo[];
  /** Victims whose eviction violates a PodDisruptionBudget. */
  pdbViolations: number;
}

/** A plan (node and victims), or the message that preemption found none (the PostFilter message, without `preemption: `). */
export type Outcome =
  | { plan: Candidate; message: '' }
  /** `eligible` false: the pod may not preempt now (its nomination stays); true: no node would do (it goes). */
  | { plan: undefined; message: string; eligible: boolean };

/** Higher priority first, then the older. */
const moreImportant = (a: PodInfo, b: PodInfo): number => (a.priority !== b.priority ? b.priority - a.priority : a.startTime - b.startTime);

/**
 * The reference's filterPodsWithPDBViolation: `pods` (sorted) split into those whose eviction
 * would violate a budget and the others, each in the given order.
 */
export function splitByBudgets(pods: PodInfo[], budgets: Budget[]): { violating: PodInfo[]; nonViolating: PodInfo[] } {
  const allowed = budgets.map((b) => b.disruptionsAllowed);
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const q of pods) {
    let violated = false;
    // A pod without labels matches no budget.
    if (Object.keys(q.labels).length > 0) {
      budgets.forEach((b, i) => {
        if (b.namespace !== q.namespace || !b.selector?.matches(q.labels) || b.disruptedPods.has(q.name)) return;
        allowed[i] = (allowed[i] as number) - 1;
        if ((allowed[i] as number) < 0) violated = true;
      });
    }
    (violated ? violating : nonViolating).push(q);
  }
  return { violating, nonViolating };
}

export function selectVictims(
  p: PodInfo,
  node: NodeInfo,
  state: CycleState,
  cache: ClusterCache,
  budgets: Budget[] = [],
): Candidate | Status {
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
  const { violating, nonViolating } = splitByBudgets(lower, budgets);
  const victims: PodInfo[] = [];
  /** Put `q` back; true when the pod no longer fits (then `q` is a victim). */
  const reprieve = (q: PodInfo): boolean => {
    n.addPod(q);
    updateState(st, q, n, 1);
    if (!filterNode(p, n, st, cache)) return false;
    n.removePod(q.key);
    updateState(st, q, n, -1);
    victims.push(q);
    return true;
  };
  let pdbViolations = 0;
  for (const q of violating) if (reprieve(q)) pdbViolations++;
  for (const q of nonViolating) reprieve(q);
  if (violating.length > 0 && nonViolating.length > 0) victims.sort(moreImportant);
  return { node: node.name, victims, pdbViolations };
}

/** The reference's pickOneNodeForPreemption. */
export function pickOne(candidates: Candidate[]): Candidate | undefined {
  const INT32 = 2 ** 31;
  const keyOf = (c: Candidate) => {
    const highest = c.victims.reduce((m, v) => Math.max(m, v.priority), Number.NEGATIVE_INFINITY);
    const sum = c.victims.reduce((s, v) => s + v.priority + INT32, 0);
    const earliestOfHighest = c.victims
      .filter((v) => v.priority === highest)
      .reduce((m, v) => Math.min(m, v.startTime), Number.POSITIVE_INFINITY);
    return { pdb: c.pdbViolations, highest, sum, count: c.victims.length, earliestOfHighest };
  };
  let best: Candidate | undefined;
  let bk: ReturnType<typeof keyOf> | undefined;
  for (const c of candidates) {
    if (c.victims.length === 0) return c;
    const k = keyOf(c);
    if (
      !bk ||
      k.pdb < bk.pdb ||
      (k.pdb === bk.pdb &&
        (k.highest < bk.highest ||
          (k.highest === bk.highest &&
            (k.sum < bk.sum ||
              (k.sum === bk.sum && (k.count < bk.count || (k.count === bk.count && k.earliestOfHighest > bk.earliestOfHighest)))))))
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
  /** The PodDisruptionBudgets of the cluster (read once per preemption, as the reference). */
  budgets: () => Budget[] = () => [],
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
  const pdbs = budgets();
  const candidates: Candidate[] = [];
  for (let i = 0; i < potential.length && candidates.length < want; i++) {
    const n = potential[(offset + i) % potential.length] as NodeInfo;
    const c = selectVictims(p, n, state, cache, pdbs);
    if ('victims' in c) candidates.push(c);
    else result.set(n.name, c);
  }
  const plan = pickOne(candidates);
  if (!plan) return { plan: undefined, message: fitErrorMessage(all, result.values()), eligible: true };
  return { plan, message: '' };
}
