/**
 * The RollingUpdate strategy, as the reference's pkg/controller/deployment/rolling.go: the new
 * ReplicaSet grows while the total stays within replicas + maxSurge; old ReplicaSets shrink
 * (their unhealthy pods first) while the available pods stay at least replicas - maxUnavailable.
 */

import type { Obj } from '../../api/meta';
import { intOr } from '../controller-utils';
import { cleanupDeployment } from './history';
import { syncRolloutStatus } from './progress';
import { getAllReplicaSetsAndSyncRevision, scaleAndRecord } from './sync';
import type { Ops } from './util';
import {
  active,
  availableReplicas,
  byCreation,
  deploymentComplete,
  dstatus,
  maxUnavailable,
  newRSNewReplicas,
  replicasOf,
  specReplicas,
} from './util';

const availableOf = (rs: Obj): number => intOr((rs.status as { availableReplicas?: number } | undefined)?.availableReplicas, 0);

export async function rolloutRolling(ops: Ops, d: Obj, rsList: Obj[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ops, d, rsList, true);
  const all = [...oldRSs, ...(newRS ? [newRS] : [])];
  if (newRS && (await reconcileNewReplicaSet(ops, all, newRS, d))) return syncRolloutStatus(ops, all, newRS, d);
  if (await reconcileOldReplicaSets(ops, all, active(oldRSs), newRS, d)) return syncRolloutStatus(ops, all, newRS, d);
  if (deploymentComplete(d, dstatus(d))) await cleanupDeployment(ops, oldRSs, d);
  return syncRolloutStatus(ops, all, newRS, d);
}

async function reconcileNewReplicaSet(ops: Ops, all: Obj[], newRS: Obj, d: Obj): Promise<boolean> {
  const want = replicasOf(d);
  if (replicasOf(newRS) === want) return false;
  if (replicasOf(newRS) > want) return scaleAndRecord(ops, newRS, want, d);
  return scaleAndRecord(ops, newRS, newRSNewReplicas(d, all, newRS), d);
}

async function reconcileOldReplicaSets(ops: Ops, all: Obj[], oldRSs: Obj[], newRS: Obj | undefined, d: Obj): Promise<boolean> {
  if (specReplicas(oldRSs) === 0) return false;
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newUnavailable = newRS ? replicasOf(newRS) - availableOf(newRS) : 0;
  // At most this many can go without going below minAvailable (the new ReplicaSet's unavailable
  // pods do not count as available).
  const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const cleaned = await cleanupUnhealthyReplicas(ops, oldRSs, d, maxScaledDown);
  const scaled = await scaleDownOldReplicaSets(ops, [...oldRSs, ...(newRS ? [newRS] : [])], oldRSs, d);
  return cleaned + scaled > 0;
}

/** cleanupUnhealthyReplicas: old ReplicaSets lose their unavailable pods first, oldest first. */
async function cleanupUnhealthyReplicas(ops: Ops, oldRSs: Obj[], d: Obj, maxCleanup: number): Promise<number> {
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= maxCleanup) break;
    const n = replicasOf(rs);
    if (n === 0 || n === availableOf(rs)) continue;
    const down = Math.min(maxCleanup - total, n - availableOf(rs));
    await scaleAndRecord(ops, rs, n - down, d);
    total += down;
  }
  return total;
}

/** scaleDownOldReplicaSetsForRollingUpdate: available pods above minAvailable go, oldest first. */
async function scaleDownOldReplicaSets(ops: Ops, all: Obj[], oldRSs: Obj[], d: Obj): Promise<number> {
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const availableCount = availableReplicas(all);
  if (availableCount <= minAvailable) return 0;
  const target = availableCount - minAvailable;
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= target) break;
    if (replicasOf(rs) === 0) continue;
    const down = Math.min(replicasOf(rs), target - total);
    await scaleAndRecord(ops, rs, replicasOf(rs) - down, d);
    total += down;
  }
  return total;
}
