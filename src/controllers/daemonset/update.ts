/**
 * What a DaemonSet sync decides, as the reference's daemon_controller.go (manage,
 * podsShouldBeOnNode), update.go (rollingUpdate) and updateDaemonSetStatus, over a view of the
 * nodes and the DaemonSet's pods by node:
 *
 *   manage   a node that should run the pod and has none gets one; a node that should not keep it
 *            loses them; a failed pod is deleted (to be created again); duplicates are deleted
 *            (oldest kept; with maxSurge the oldest updated and the oldest old); pods whose node
 *            is gone are deleted
 *   rolling  maxSurge 0: old pods deleted, at most maxUnavailable nodes without an available pod
 *            (an unavailable old pod may always go); maxSurge > 0: new pods created next to old
 *            ones on at most maxSurge nodes at once, an old pod deleted once its replacement is
 *            available. Both round percentages up; both 0 makes maxUnavailable 1.
 *   status   desired/current/misscheduled/ready/available/unavailable/updated numbers
 */
import type { Obj } from '../../api/meta';
import { isPodAvailable, isPodReady, labelsOf, phaseOf, scaledValue } from '../controller-utils';
import { REVISION_HASH_LABEL } from '../revisions';
import { byCreationAndPhase, dsSpec, isPodUpdated, isRollingUpdate, minReadyOf } from './placement';

export interface NodeView {
  name: string;
  shouldRun: boolean;
  shouldContinueRunning: boolean;
}

export interface Plan {
  create: string[];
  delete: Obj[];
  /** Failed pods found (a FailedDaemonPod event each). */
  failed: Obj[];
}

const running = (pods: Obj[]): Obj[] => pods.filter((p) => !p.metadata.deletionTimestamp);
const isTerminal = (p: Obj): boolean => phaseOf(p) === 'Failed' || phaseOf(p) === 'Succeeded';

/** The fenceposts (updatedDesiredNodeCounts). */
export function fenceposts(ds: Obj, desired: number): { surge: number; unavailable: number } {
  const ru = dsSpec(ds).updateStrategy?.rollingUpdate ?? {};
  const surge = isRollingUpdate(ds) ? scaledValue(ru.maxSurge ?? 0, desired, true) : 0;
  let unavailable = scaledValue(ru.maxUnavailable ?? 1, desired, true);
  if (desired > 0 && surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** manage: the pods to create (by node) and delete. */
export function planManage(ds: Obj, nodes: NodeView[], byNode: Map<string, Obj[]>, hash: string): Plan {
  const plan: Plan = { create: [], delete: [], failed: [] };
  const known = new Set(nodes.map((n) => n.name));
  const surging = fenceposts(ds, nodes.filter((n) => n.shouldRun).length).surge > 0;
  for (const n of nodes) {
    const pods = byNode.get(n.name) ?? [];
    if (n.shouldContinueRunning) {
      const live: Obj[] = [];
      for (const p of running(pods)) {
        if (isTerminal(p)) {
          plan.failed.push(p);
          plan.delete.push(p);
        } else live.push(p);
      }
      if (n.shouldRun && live.length === 0) plan.create.push(n.name);
      if (live.length <= 1) continue;
      live.sort(byCreationAndPhase);
      if (!surging) {
        plan.delete.push(...live.slice(1));
        continue;
      }
      let newest: Obj | undefined;
      let oldest: Obj | undefined;
      for (const p of live) {
        if (labelsOf(p)[REVISION_HASH_LABEL] === hash) {
          if (!newest) {
            newest = p;
            continue;
          }
        } else if (!oldest) {
          oldest = p;
          continue;
        }
        plan.delete.push(p);
      }
    } else {
      plan.delete.push(...running(pods));
    }
  }
  // Pods on (or for) nodes that no longer exist.
  for (const [node, pods] of byNode) if (!known.has(node)) plan.delete.push(...running(pods));
  return plan;
}

/** findUpdatedPodsOnNode: the node's new and old pod; false when it has two of either. */
function updatedOnNode(ds: Obj, pods: Obj[], hash: string): { newPod?: Obj; oldPod?: Obj; ok: boolean } {
  let newPod: Obj | undefined;
  let oldPod: Obj | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp || isTerminal(p)) continue;
    if (isPodUpdated(ds, p, hash)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

/** rollingUpdate: the old pods to delete and nodes to surge onto. */
export function planRollingUpdate(ds: Obj, nodes: NodeView[], byNode: Map<string, Obj[]>, hash: string, now: number): Plan {
  const plan: Plan = { create: [], delete: [], failed: [] };
  const wanted = nodes.filter((n) => n.shouldRun);
  const { surge, unavailable } = fenceposts(ds, wanted.length);
  const minReady = minReadyOf(ds);
  const available = (p: Obj) => isPodAvailable(p, minReady, now);
  if (surge === 0) {
    let numUnavailable = 0;
    const allowed: Obj[] = [];
    const candidates: Obj[] = [];
    for (const n of wanted) {
      const { newPod, oldPod, ok } = updatedOnNode(ds, byNode.get(n.name) ?? [], hash);
      if (!ok) {
        numUnavailable++;
        continue;
      }
      if (!newPod && !oldPod) numUnavailable++;
      else if (newPod && !oldPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (oldPod && !newPod) {
        if (!available(oldPod)) allowed.push(oldPod);
        else candidates.push(oldPod);
      }
    }
    const budget = Math.min(Math.max(0, unavailable - numUnavailable), candidates.length);
    plan.delete.push(...allowed, ...candidates.slice(0, budget));
    return plan;
  }
  let numSurge = 0;
  const allowedNodes: string[] = [];
  const candidateNodes: string[] = [];
  for (const n of wanted) {
    const { newPod, oldPod, ok } = updatedOnNode(ds, byNode.get(n.name) ?? [], hash);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (!oldPod) continue;
    if (!newPod) {
      if (!available(oldPod)) allowedNodes.push(n.name);
      else candidateNodes.push(n.name);
      continue;
    }
    if (!available(newPod)) numSurge++;
    else plan.delete.push(oldPod);
  }
  const budget = Math.min(Math.max(0, surge - numSurge), candidateNodes.length);
  plan.create.push(...allowedNodes, ...candidateNodes.slice(0, budget));
  return plan;
}

export interface DsStatus {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberMisscheduled: number;
  numberReady: number;
  numberAvailable: number;
  numberUnavailable: number;
  updatedNumberScheduled: number;
  observedGeneration: number;
}

/** updateDaemonSetStatus's numbers. */
export function daemonStatus(ds: Obj, nodes: NodeView[], byNode: Map<string, Obj[]>, hash: string, now: number): DsStatus {
  const s: DsStatus = {
    desiredNumberScheduled: 0,
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    numberReady: 0,
    numberAvailable: 0,
    numberUnavailable: 0,
    updatedNumberScheduled: 0,
    observedGeneration: ds.metadata.generation ?? 0,
  };
  for (const n of nodes) {
    const pods = running(byNode.get(n.name) ?? []).filter((p) => !isTerminal(p));
    if (!n.shouldRun) {
      if (pods.length > 0) s.numberMisscheduled++;
      continue;
    }
    s.desiredNumberScheduled++;
    if (pods.length === 0) continue;
    s.currentNumberScheduled++;
    const p = [...pods].sort(byCreationAndPhase)[0] as Obj;
    if (isPodReady(p)) {
      s.numberReady++;
      if (isPodAvailable(p, minReadyOf(ds), now)) s.numberAvailable++;
    }
    if (isPodUpdated(ds, p, hash)) s.updatedNumberScheduled++;
  }
  s.numberUnavailable = Math.max(0, s.desiredNumberScheduled - s.numberAvailable);
  return s;
}
