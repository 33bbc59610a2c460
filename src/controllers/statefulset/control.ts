/**
 * One StatefulSet's pods brought toward its spec, as the reference's defaultStatefulSetControl
 * (stateful_set_control.go, updateStatefulSet):
 *
 *   1. every ordinal in [start, start+replicas) gets a pod: a missing one is created (its claims
 *      first), a failed one deleted to be created again. OrderedReady (monotonic) does one step
 *      at a time and waits for each pod to be Running and Ready (and available for
 *      minReadySeconds) before the next; Parallel does not wait.
 *   2. pods outside the range (condemned) are deleted from the highest ordinal; OrderedReady one
 *      at a time, waiting while another pod is unhealthy.
 *   3. RollingUpdate: pods at ordinal index >= partition not at the update revision are deleted
 *      from the highest ordinal, one at a time waiting for health, or (maxUnavailable set) as many
 *      at once as leave at most maxUnavailable pods unavailable. OnDelete: nothing.
 *
 * Pods are created at the update revision, except under RollingUpdate those below the partition,
 * which keep the current revision.
 */
import type { Obj } from '../../api/meta';
import { intOr, scaledValue } from '../controller-utils';
import {
  identityMatches,
  inOrdinalRange,
  isFailed,
  isHealthy,
  isParallel,
  isRollingUpdate,
  isRunningAndAvailable,
  isRunningAndReady,
  isTerminating,
  newPod,
  ordinalOf,
  podRevision,
  type SetStatus,
  setReplicas,
  sspec,
  startOrdinal,
  withIdentity,
} from './identity';

/** What the algorithm does to the cluster (the controller implements it). */
export interface SetOps {
  now(): number;
  /** Creates the pod's claims, then the pod; false when the pod already exists. */
  createPod(set: Obj, pod: Obj, ord: number): Promise<boolean>;
  deletePod(set: Obj, pod: Obj): Promise<void>;
  updatePod(set: Obj, pod: Obj): Promise<void>;
  /** Brings the owner references of the pod's claims in line with the retention policy. */
  syncClaims(set: Obj, pod: Obj, ord: number): Promise<void>;
}

export interface Revisions {
  current: { name: string; template: Obj };
  update: { name: string; template: Obj };
}

/** The pod of ordinal index `idx` at the revision it is created with (newVersionedStatefulSetPod). */
function versionedPod(set: Obj, revs: Revisions, ord: number): Obj {
  const idx = ord - startOrdinal(set);
  const partition = intOr(sspec(set).updateStrategy?.rollingUpdate?.partition, 0);
  const r = isRollingUpdate(set) && idx < partition ? revs.current : revs.update;
  return newPod(set, r.template, ord, r.name);
}

/** The status the pods give (before this sync acts). */
export function countStatus(set: Obj, pods: Obj[], revs: Revisions, now: number): SetStatus {
  const minReady = intOr(sspec(set).minReadySeconds, 0);
  const s: SetStatus = {
    observedGeneration: set.metadata.generation ?? 0,
    replicas: 0,
    readyReplicas: 0,
    currentReplicas: 0,
    updatedReplicas: 0,
    availableReplicas: 0,
    currentRevision: revs.current.name,
    updateRevision: revs.update.name,
    collisionCount: 0,
  };
  for (const p of pods) {
    s.replicas++;
    if (isRunningAndReady(p)) {
      s.readyReplicas++;
      if (isRunningAndAvailable(p, minReady, now)) s.availableReplicas++;
    }
    if (isTerminating(p)) continue;
    if (podRevision(p) === revs.current.name) s.currentReplicas++;
    if (podRevision(p) === revs.update.name) s.updatedReplicas++;
  }
  return s;
}

/** updateStatefulSet: acts on the pods; answers the status (counting the pods it created). */
export async function updateStatefulSet(ops: SetOps, set: Obj, revs: Revisions, pods: Obj[]): Promise<SetStatus> {
  const now = ops.now();
  const status = countStatus(set, pods, revs, now);
  const start = startOrdinal(set);
  const n = setReplicas(set);
  const replicas: (Obj | undefined)[] = new Array(n).fill(undefined);
  const condemned: Obj[] = [];
  for (const p of pods) {
    const ord = ordinalOf(set, p);
    if (ord < 0) continue;
    if (inOrdinalRange(set, ord)) replicas[ord - start] = p;
    else condemned.push(p);
  }
  condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
  const monotonic = !isParallel(set);
  // The first pod (by ordinal, then the condemned from the highest) not healthy or not created.
  let firstUnhealthy: Obj | undefined;
  for (const p of [...replicas, ...condemned]) {
    if (!p) break;
    if (!isHealthy(set, p, now)) {
      firstUnhealthy = p;
      break;
    }
  }
  if (set.metadata.deletionTimestamp) return status;

  const created = (pod: Obj) => {
    status.replicas++;
    if (podRevision(pod) === revs.current.name) status.currentReplicas++;
    if (podRevision(pod) === revs.update.name) status.updatedReplicas++;
  };

  // 1. the ordinals in range
  for (let i = 0; i < n; i++) {
    const ord = start + i;
    let p = replicas[i];
    if (p && isFailed(p) && !isTerminating(p)) {
      await ops.deletePod(set, p);
      status.replicas--;
      if (podRevision(p) === revs.current.name) status.currentReplicas--;
      if (podRevision(p) === revs.update.name) status.updatedReplicas--;
      p = undefined;
    }
    if (!p) {
      const pod = versionedPod(set, revs, ord);
      if (await ops.createPod(set, pod, ord)) created(pod);
      if (monotonic) return status;
      continue;
    }
    if (isTerminating(p)) {
      if (monotonic) return status;
      continue;
    }
    if (monotonic && !isHealthy(set, p, now)) return status;
    if (!identityMatches(set, p, ord)) await ops.updatePod(set, withIdentity(p, ord));
    await ops.syncClaims(set, p, ord);
  }

  // 2. the condemned, from the highest ordinal
  for (const p of condemned) {
    if (isTerminating(p)) {
      if (monotonic) return status;
      continue;
    }
    if (monotonic && !isRunningAndReady(p) && p !== firstUnhealthy) return status;
    await ops.syncClaims(set, p, ordinalOf(set, p));
    await ops.deletePod(set, p);
    if (monotonic) return status;
  }

  // 3. the rolling update
  if (!isRollingUpdate(set)) return status;
  const live = replicas.filter((p): p is Obj => !!p);
  if (live.length < n) return status;
  const ru = sspec(set).updateStrategy?.rollingUpdate ?? {};
  const updateMin = intOr(ru.partition, 0);
  if (ru.maxUnavailable === undefined) {
    for (let i = n - 1; i >= updateMin; i--) {
      const p = live[i] as Obj;
      if (podRevision(p) !== revs.update.name && !isTerminating(p)) {
        await ops.deletePod(set, p);
        return status;
      }
      if (!isHealthy(set, p, now)) return status;
    }
    return status;
  }
  const maxUnavailable = Math.max(1, scaledValue(ru.maxUnavailable, n, false));
  const unavailable = live.filter((p) => !isHealthy(set, p, now)).length;
  let budget = maxUnavailable - unavailable;
  for (let i = n - 1; i >= updateMin && budget > 0; i--) {
    const p = live[i] as Obj;
    if (podRevision(p) === revs.update.name || isTerminating(p)) continue;
    await ops.deletePod(set, p);
    budget--;
  }
  return status;
}

/** completeRollingUpdate: every pod updated and ready makes the update revision current. */
export function completeRollingUpdate(set: Obj, s: SetStatus): void {
  if (isRollingUpdate(set) && s.updatedReplicas === s.replicas && s.readyReplicas === s.replicas) {
    s.currentReplicas = s.updatedReplicas;
    s.currentRevision = s.updateRevision;
  }
}
