/**
 * The Recreate strategy, as the reference's pkg/controller/deployment/recreate.go: every old
 * ReplicaSet is scaled to zero, and only once none of their pods runs any more is the new
 * ReplicaSet created (or scaled) to the Deployment's replicas.
 */

import type { Obj } from '../../api/meta';
import { phaseOf } from '../controller-utils';
import { cleanupDeployment } from './history';
import { syncRolloutStatus } from './progress';
import { getAllReplicaSetsAndSyncRevision, scaleAndRecord } from './sync';
import type { Ops } from './util';
import { active, actualReplicas, deploymentComplete, dstatus, replicasOf } from './util';

export async function rolloutRecreate(ops: Ops, d: Obj, rsList: Obj[]): Promise<void> {
  let { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ops, d, rsList, false);
  let all = [...oldRSs, ...(newRS ? [newRS] : [])];
  let scaledDown = false;
  for (const rs of active(oldRSs)) if (await scaleAndRecord(ops, rs, 0, d)) scaledDown = true;
  if (scaledDown) return syncRolloutStatus(ops, all, newRS, d);
  if (oldPodsRunning(ops, d, newRS, oldRSs, rsList)) return syncRolloutStatus(ops, all, newRS, d);
  if (!newRS) {
    ({ newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ops, d, rsList, true));
    all = [...oldRSs, ...(newRS ? [newRS] : [])];
  }
  if (newRS) await scaleAndRecord(ops, newRS, replicasOf(d), d);
  if (deploymentComplete(d, dstatus(d))) await cleanupDeployment(ops, oldRSs, d);
  return syncRolloutStatus(ops, all, newRS, d);
}

/** oldPodsRunning: an old ReplicaSet still has replicas, or a pod of one has not finished. */
function oldPodsRunning(ops: Ops, d: Obj, newRS: Obj | undefined, oldRSs: Obj[], rsList: Obj[]): boolean {
  if (actualReplicas(oldRSs) > 0) return true;
  for (const [uid, pods] of ops.podsByRS(d, rsList)) {
    if (newRS && newRS.metadata.uid === uid) continue;
    for (const p of pods) {
      const phase = phaseOf(p);
      if (phase === 'Failed' || phase === 'Succeeded') continue;
      return true;
    }
  }
  return false;
}
