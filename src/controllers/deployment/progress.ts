/**
 * A rollout's progress, as the reference's pkg/controller/deployment/progress.go: the Progressing
 * condition (ReplicaSetUpdated while pods move, NewReplicaSetAvailable when complete,
 * ProgressDeadlineExceeded after progressDeadlineSeconds without progress; DeploymentPaused /
 * DeploymentResumed), ReplicaFailure from the ReplicaSets, and the requeue at the deadline.
 */

import type { Obj } from '../../api/meta';
import { calculateStatus, setStatus, stamp, statusEqual } from './sync';
import type { Ops } from './util';
import {
  type DeploymentCondition,
  type DeploymentStatus,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  dspec,
  dstatus,
  getCondition,
  hasProgressDeadline,
  newCondition,
  R,
  removeCondition,
  setCondition,
} from './util';

/** checkPausedConditions: record pausing and resuming in the Progressing condition. */
export async function checkPausedConditions(ops: Ops, d: Obj): Promise<void> {
  if (!hasProgressDeadline(d)) return;
  const s = dstatus(d);
  const cond = getCondition(s, 'Progressing');
  if (cond?.reason === R.TimedOut) return;
  const pausedCond = cond?.reason === R.Paused;
  if (dspec(d).paused && !pausedCond) {
    setCondition(s, newCondition('Progressing', 'Unknown', R.Paused, 'Deployment is paused', stamp(ops)));
  } else if (!dspec(d).paused && pausedCond) {
    setCondition(s, newCondition('Progressing', 'Unknown', R.Resumed, 'Deployment is resumed', stamp(ops)));
  } else return;
  await ops.writeDeployment(d);
}

/** getReplicaFailures: the ReplicaFailure condition of the new ReplicaSet, else of an old one. */
function replicaFailure(all: Obj[], newRS: Obj | undefined): DeploymentCondition | undefined {
  const order = newRS ? [newRS, ...all.filter((rs) => rs !== newRS)] : all;
  for (const rs of order) {
    const conds = ((rs.status as { conditions?: DeploymentCondition[] } | undefined)?.conditions ?? []) as DeploymentCondition[];
    const c = conds.find((x) => x.type === 'ReplicaFailure');
    if (c) {
      return {
        type: 'ReplicaFailure',
        status: c.status,
        lastUpdateTime: c.lastTransitionTime,
        lastTransitionTime: c.lastTransitionTime,
        reason: c.reason,
        message: c.message,
      };
    }
  }
  return undefined;
}

/** syncRolloutStatus: the status of a Deployment in rollout, with its Progressing condition. */
export async function syncRolloutStatus(ops: Ops, all: Obj[], newRS: Obj | undefined, d: Obj): Promise<void> {
  const s = calculateStatus(ops, all, newRS, d);
  if (!hasProgressDeadline(d)) removeCondition(s, 'Progressing');
  const cur = getCondition(s, 'Progressing');
  const complete = s.replicas === s.updatedReplicas && cur?.reason === R.NewRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const name = newRS?.metadata.name;
    const now = stamp(ops);
    if (deploymentComplete(d, s)) {
      const msg = name ? `ReplicaSet "${name}" has successfully progressed.` : 'Deployment has successfully progressed.';
      setCondition(s, newCondition('Progressing', 'True', R.NewRSAvailable, msg, now));
    } else if (deploymentProgressing(d, s)) {
      const msg = name ? `ReplicaSet "${name}" is progressing.` : 'Deployment is progressing.';
      const c = newCondition('Progressing', 'True', R.RSUpdated, msg, now);
      // Progressing again: everything but the transition time is updated.
      if (cur) {
        if (cur.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
        removeCondition(s, 'Progressing');
      }
      setCondition(s, c);
    } else if (deploymentTimedOut(d, s, ops.now())) {
      const msg = name ? `ReplicaSet "${name}" has timed out progressing.` : `Deployment "${d.metadata.name}" has timed out progressing.`;
      setCondition(s, newCondition('Progressing', 'False', R.TimedOut, msg, now));
    }
  }
  const failure = replicaFailure(all, newRS);
  if (failure) setCondition(s, failure);
  else removeCondition(s, 'ReplicaFailure');
  if (statusEqual(dstatus(d), s)) {
    requeueStuck(ops, d, s);
    return;
  }
  setStatus(d, s);
  await ops.writeDeployment(d);
}

/** requeueStuckDeployment: sync again when the progress deadline passes. */
function requeueStuck(ops: Ops, d: Obj, s: DeploymentStatus): void {
  const cur = getCondition(s, 'Progressing');
  if (!hasProgressDeadline(d) || !cur) return;
  if (deploymentComplete(d, s) || cur.reason === R.TimedOut) return;
  const from = Date.parse(cur.lastUpdateTime ?? '') || 0;
  const after = from + (dspec(d).progressDeadlineSeconds ?? 0) * 1000 - ops.now();
  // Just past the deadline (the reference re-queues rate limited under a second): soon, not hot.
  ops.requeueAfter(d, Math.max(after + 10, 100));
}
