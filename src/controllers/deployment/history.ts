/**
 * Revisions, as the reference's deployment_util.go and sync.go: each new (or again new, after a
 * rollback) ReplicaSet gets revision max(old revisions)+1, the revisions it had before go to
 * `deployment.kubernetes.io/revision-history`; the Deployment carries its new ReplicaSet's
 * revision; old ReplicaSets beyond revisionHistoryLimit, scaled to zero and settled, are deleted.
 */

import type { Obj } from '../../api/meta';
import { intOr } from '../controller-utils';
import type { Ops } from './util';
import {
  annotationsOf,
  byRevision,
  copyAnnotations,
  dspec,
  maxSurge,
  REVISION,
  REVISION_HISTORY,
  replicasOf,
  setReplicasAnnotations,
} from './util';

/** SetNewReplicaSetAnnotations: whether it changed the ReplicaSet's annotations. */
export function setNewReplicaSetAnnotations(d: Obj, rs: Obj, newRevision: string, exists: boolean, maxChars: number): boolean {
  let changed = copyAnnotations(d, rs);
  const a = annotationsOf(rs);
  const oldRevision = a[REVISION] ?? '';
  let oldInt = 0;
  if (oldRevision !== '') {
    if (!/^\d+$/.test(oldRevision)) return false;
    oldInt = Number(oldRevision);
  }
  if (!/^\d+$/.test(newRevision)) return false;
  const newInt = Number(newRevision);
  if (oldInt < newInt) {
    a[REVISION] = newRevision;
    changed = true;
  }
  // A ReplicaSet that had a revision and gets a newer one is rolled back to: keep its history.
  if (oldRevision !== '' && oldInt < newInt) {
    const history = a[REVISION_HISTORY] ?? '';
    const olds = history.split(',');
    if ((olds[0] ?? '').length === 0) a[REVISION_HISTORY] = oldRevision;
    else {
      let total = history.length + oldRevision.length + 1;
      let start = 0;
      while (total > maxChars && start < olds.length) {
        total -= (olds[start] as string).length + 1;
        start++;
      }
      if (total <= maxChars) a[REVISION_HISTORY] = [...olds.slice(start), oldRevision].join(',');
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** SetDeploymentRevision: whether it changed the Deployment's revision annotation. */
export function setDeploymentRevision(d: Obj, revision: string | undefined): boolean {
  if (revision === undefined) return false;
  const a = annotationsOf(d);
  if (a[REVISION] === revision) return false;
  a[REVISION] = revision;
  return true;
}

/**
 * cleanupDeployment: the oldest old ReplicaSets beyond revisionHistoryLimit are deleted, those
 * with no replicas (spec and status) whose controller has seen their latest spec.
 */
export async function cleanupDeployment(ops: Ops, oldRSs: Obj[], d: Obj): Promise<void> {
  const limit = dspec(d).revisionHistoryLimit;
  if (typeof limit !== 'number') return;
  const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = cleanable.length - limit;
  if (diff <= 0) return;
  cleanable.sort(byRevision);
  for (let i = 0; i < diff; i++) {
    const rs = cleanable[i] as Obj;
    const status = (rs.status ?? {}) as { replicas?: number; observedGeneration?: number };
    if (intOr(status.replicas, 0) !== 0 || replicasOf(rs) !== 0) continue;
    if ((rs.metadata.generation ?? 0) > intOr(status.observedGeneration, 0)) continue;
    await ops.deleteRS(rs);
  }
}
