/**
 * The parts of a Deployment's sync every strategy shares, as the reference's
 * pkg/controller/deployment/sync.go: finding (or creating) the new ReplicaSet and syncing
 * revisions, scaling (a scaling event, a paused Deployment, proportional scaling while a rollout
 * is under way), and the status computed from the ReplicaSets.
 */
import { clone, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { controllerOf, controllerRef, intOr, timeText } from '../controller-utils';
import { cleanupDeployment, setDeploymentRevision, setNewReplicaSetAnnotations } from './history';
import {
  active,
  actualReplicas,
  availableReplicas,
  byCreation,
  bySizeNewer,
  bySizeOlder,
  computeHash,
  type DeploymentStatus,
  desiredReplicasAnnotation,
  dspec,
  dstatus,
  equalIgnoreHash,
  findNewReplicaSet,
  findOldReplicaSets,
  getCondition,
  HASH_LABEL,
  hasProgressDeadline,
  isRolling,
  isSaturated,
  MAX_REV_HISTORY_CHARS,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newCondition,
  newRSNewReplicas,
  type Ops,
  proportion,
  R,
  REVISION,
  readyReplicas,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  setCondition,
  setReplicasAnnotations,
  specReplicas,
} from './util';

export const stamp = (ops: Ops): string => timeText(ops.now());

/** getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created if asked) and the old ones. */
export async function getAllReplicaSetsAndSyncRevision(
  ops: Ops,
  d: Obj,
  rsList: Obj[],
  create: boolean,
): Promise<{ newRS: Obj | undefined; oldRSs: Obj[] }> {
  const oldRSs = findOldReplicaSets(rsList, findNewReplicaSet(d, rsList));
  const newRS = await getNewReplicaSet(ops, d, rsList, oldRSs, create);
  return { newRS, oldRSs };
}

async function getNewReplicaSet(ops: Ops, d: Obj, rsList: Obj[], oldRSs: Obj[], create: boolean): Promise<Obj | undefined> {
  const existing = findNewReplicaSet(d, rsList);
  const newRevision = String(maxRevision(oldRSs) + 1);
  const spec = dspec(d);
  const minReady = intOr(spec.minReadySeconds, 0);
  const status = dstatus(d);
  if (existing) {
    const rs = clone(existing);
    const annotationsUpdated = setNewReplicaSetAnnotations(d, rs, newRevision, true, MAX_REV_HISTORY_CHARS);
    const rsSpec = rs.spec as { minReadySeconds?: number };
    if (annotationsUpdated || intOr(rsSpec.minReadySeconds, 0) !== minReady) {
      rsSpec.minReadySeconds = minReady;
      await ops.updateRS(rs);
      return rs;
    }
    // The revision the ReplicaSet already carries.
    let needsUpdate = setDeploymentRevision(d, rs.metadata.annotations?.[REVISION]);
    if (hasProgressDeadline(d) && !getCondition(status, 'Progressing')) {
      setCondition(status, newCondition('Progressing', 'True', R.FoundNewRS, `Found new replica set "${rs.metadata.name}"`, stamp(ops)));
      needsUpdate = true;
    }
    if (needsUpdate) await ops.writeDeployment(d);
    return rs;
  }
  if (!create) return undefined;

  const template = clone(spec.template ?? { metadata: {} }) as Obj;
  const hash = computeHash(spec.template, typeof status.collisionCount === 'number' ? status.collisionCount : undefined);
  template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash } };
  const selector = clone((spec.selector ?? {}) as { matchLabels?: Record<string, string> });
  selector.matchLabels = { ...(selector.matchLabels ?? {}), [HASH_LABEL]: hash };
  const ns = d.metadata.namespace as string;
  const newRS: Obj = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: ns,
      ownerReferences: [controllerRef(d, 'apps/v1', 'Deployment')],
      labels: { ...(template.metadata.labels as Record<string, string>) },
    },
    spec: { replicas: 0, minReadySeconds: minReady, selector, template },
  };
  const count = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
  (newRS.spec as { replicas: number }).replicas = count;
  setNewReplicaSetAnnotations(d, newRS, newRevision, false, MAX_REV_HISTORY_CHARS);
  let created: Obj | undefined;
  let alreadyExists = false;
  try {
    created = await ops.createRS(newRS);
  } catch (e) {
    if (e instanceof StatusError && e.code === 409 && e.reason === 'AlreadyExists') {
      alreadyExists = true;
      const rs = await ops.getRS(ns, newRS.metadata.name as string);
      if (rs && controllerOf(rs)?.uid === d.metadata.uid && equalIgnoreHash((rs.spec as { template?: unknown }).template, spec.template)) {
        created = rs;
      } else {
        // A hash collision: the next try hashes with a higher collisionCount.
        status.collisionCount = intOr(status.collisionCount, 0) + 1;
        await ops.writeDeployment(d);
        throw e;
      }
    } else {
      const msg = `Failed to create new replica set "${newRS.metadata.name}": ${e instanceof Error ? e.message : String(e)}`;
      if (hasProgressDeadline(d)) {
        setCondition(status, newCondition('Progressing', 'False', R.FailedRSCreate, msg, stamp(ops)));
        await ops.writeDeployment(d).catch(() => {});
      }
      ops.event(d, 'Warning', 'FailedCreate', msg);
      throw e;
    }
  }
  if (!alreadyExists && count > 0) {
    ops.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} from 0 to ${count}`);
  }
  let needsUpdate = setDeploymentRevision(d, newRevision);
  if (!alreadyExists && hasProgressDeadline(d)) {
    setCondition(
      status,
      newCondition('Progressing', 'True', R.NewRSCreated, `Created new replica set "${created.metadata.name}"`, stamp(ops)),
    );
    needsUpdate = true;
  }
  if (needsUpdate) await ops.writeDeployment(d);
  return created;
}

/** scaleReplicaSet: the size and the replicas annotations; answers whether the size changed. */
export async function scaleReplicaSet(ops: Ops, rs: Obj, newScale: number, d: Obj): Promise<boolean> {
  const oldScale = replicasOf(rs);
  const sizeNeedsUpdate = oldScale !== newScale;
  const max = replicasOf(d) + maxSurge(d);
  if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, replicasOf(d), max)) return false;
  const copy = clone(rs);
  (copy.spec as { replicas: number }).replicas = newScale;
  setReplicasAnnotations(copy, replicasOf(d), max);
  await ops.updateRS(copy);
  for (const k of Object.keys(rs)) delete rs[k];
  Object.assign(rs, copy);
  if (sizeNeedsUpdate) {
    const op = oldScale < newScale ? 'up' : 'down';
    ops.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${op} replica set ${rs.metadata.name} from ${oldScale} to ${newScale}`);
  }
  return sizeNeedsUpdate;
}

/** scaleReplicaSetAndRecordEvent. */
export async function scaleAndRecord(ops: Ops, rs: Obj, newScale: number, d: Obj): Promise<boolean> {
  if (replicasOf(rs) === newScale) return false;
  return scaleReplicaSet(ops, rs, newScale, d);
}

/** FindActiveOrLatest: the one active ReplicaSet, or the newest if none is active. */
function findActiveOrLatest(newRS: Obj | undefined, oldRSs: Obj[]): Obj | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const olds = [...oldRSs].sort(byCreation).reverse();
  const all = active([...olds, newRS]);
  if (all.length === 0) return newRS ?? olds[0];
  if (all.length === 1) return all[0];
  return undefined;
}

/**
 * scale: a Deployment whose replicas changed. One active ReplicaSet (or none) takes the new
 * size; a saturated new ReplicaSet has the old ones scaled to zero; during a rolling update the
 * difference is spread over the active ReplicaSets in proportion to their sizes (larger first,
 * newer first when adding, older first when removing; the rest to the first).
 */
export async function scale(ops: Ops, d: Obj, newRS: Obj | undefined, oldRSs: Obj[]): Promise<void> {
  const latest = findActiveOrLatest(newRS, oldRSs);
  if (latest) {
    if (replicasOf(latest) !== replicasOf(d)) await scaleAndRecord(ops, latest, replicasOf(d), d);
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of active(oldRSs)) await scaleAndRecord(ops, old, 0, d);
    return;
  }
  if (!isRolling(d)) return;
  const all = active([...oldRSs, newRS]);
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(all);
  if (toAdd > 0) all.sort(bySizeNewer);
  else if (toAdd < 0) all.sort(bySizeOlder);
  let added = 0;
  const sizes = new Map<string, number>();
  for (const rs of all) {
    const name = rs.metadata.name as string;
    if (toAdd !== 0) {
      const p = proportion(rs, d, toAdd, added);
      sizes.set(name, replicasOf(rs) + p);
      added += p;
    } else sizes.set(name, replicasOf(rs));
  }
  if (toAdd !== 0 && all.length > 0) {
    const first = all[0]?.metadata.name as string;
    sizes.set(first, Math.max(0, (sizes.get(first) ?? 0) + toAdd - added));
  }
  for (const rs of all) await scaleReplicaSet(ops, rs, sizes.get(rs.metadata.name as string) ?? replicasOf(rs), d);
}

/** isScalingEvent: some active ReplicaSet was sized for other replicas than the Deployment's. */
export async function isScalingEvent(ops: Ops, d: Obj, rsList: Obj[]): Promise<boolean> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ops, d, rsList, false);
  for (const rs of active([...oldRSs, newRS])) {
    const desired = desiredReplicasAnnotation(rs);
    if (desired !== undefined && desired !== replicasOf(d)) return true;
  }
  return false;
}

/** sync: scaling and cleanup only (a paused Deployment, a scaling event). */
export async function syncScaling(ops: Ops, d: Obj, rsList: Obj[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(ops, d, rsList, false);
  await scale(ops, d, newRS, oldRSs);
  if (dspec(d).paused) await cleanupDeployment(ops, oldRSs, d);
  await syncDeploymentStatus(ops, [...oldRSs, ...(newRS ? [newRS] : [])], newRS, d);
}

/** calculateStatus: the counts from the ReplicaSets, and the Available condition. */
export function calculateStatus(ops: Ops, all: Obj[], newRS: Obj | undefined, d: Obj): DeploymentStatus {
  const available = availableReplicas(all);
  const cur = dstatus(d);
  const s: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: actualReplicas(all),
    updatedReplicas: actualReplicas([newRS]),
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
  };
  if (typeof cur.collisionCount === 'number') s.collisionCount = cur.collisionCount;
  s.conditions = clone(cur.conditions ?? []);
  const now = stamp(ops);
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(s, newCondition('Available', 'True', R.MinimumAvailable, 'Deployment has minimum availability.', now));
  } else {
    setCondition(s, newCondition('Available', 'False', R.MinimumUnavailable, 'Deployment does not have minimum availability.', now));
  }
  return s;
}

const COUNTS = ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'];

/** The statuses are equal (absent counts are zero; conditions compared as written). */
export function statusEqual(a: DeploymentStatus, b: DeploymentStatus): boolean {
  for (const k of COUNTS) if (intOr(a[k], 0) !== intOr(b[k], 0)) return false;
  if (a.collisionCount !== b.collisionCount) return false;
  return JSON.stringify(a.conditions ?? []) === JSON.stringify(b.conditions ?? []);
}

/** Replace the Deployment's status (zero counts omitted, as the reference serializes them). */
export function setStatus(d: Obj, s: DeploymentStatus): void {
  const out: DeploymentStatus = {};
  for (const k of COUNTS) if (intOr(s[k], 0) !== 0) out[k] = s[k];
  if (s.conditions && s.conditions.length > 0) out.conditions = s.conditions;
  if (typeof s.collisionCount === 'number') out.collisionCount = s.collisionCount;
  d.status = out;
}

/** syncDeploymentStatus. */
export async function syncDeploymentStatus(ops: Ops, all: Obj[], newRS: Obj | undefined, d: Obj): Promise<void> {
  const s = calculateStatus(ops, all, newRS, d);
  if (statusEqual(dstatus(d), s)) return;
  setStatus(d, s);
  await ops.writeDeployment(d);
}
