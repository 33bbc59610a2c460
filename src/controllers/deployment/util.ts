/**
 * The Deployment controller's vocabulary, as the reference's pkg/controller/deployment/util:
 * the pod-template-hash (ComputeHash), the rolling update's fenceposts (maxSurge rounds up,
 * maxUnavailable down), ReplicaSet counts and orders, the new ReplicaSet (the one whose template
 * equals the Deployment's, ignoring the hash label), the replicas annotations, and conditions.
 */
import type { Obj } from '../../api/meta';
import type { EventType } from '../../registry/event-recorder';
import { intOr, scaledValue } from '../controller-utils';

export { computeHash, safeEncodeString, scaledValue } from '../controller-utils';

export const HASH_LABEL = 'pod-template-hash';
export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
const ROLLBACK_TO = 'deprecated.deployment.rollback.to';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
/** Annotations of a Deployment not copied to its ReplicaSets. */
const NOT_COPIED = new Set([LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO]);
export const MAX_REV_HISTORY_CHARS = 2000;

/** Condition reasons (deployment_util.go). */
export const R = {
  NewRSCreated: 'NewReplicaSetCreated',
  FoundNewRS: 'FoundNewReplicaSet',
  RSUpdated: 'ReplicaSetUpdated',
  NewRSAvailable: 'NewReplicaSetAvailable',
  TimedOut: 'ProgressDeadlineExceeded',
  FailedRSCreate: 'ReplicaSetCreateError',
  Paused: 'DeploymentPaused',
  Resumed: 'DeploymentResumed',
  MinimumAvailable: 'MinimumReplicasAvailable',
  MinimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

export interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  collisionCount?: number;
  conditions?: DeploymentCondition[];
  [k: string]: unknown;
}

interface DeploymentSpec {
  replicas?: number;
  minReadySeconds?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
  revisionHistoryLimit?: number;
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
  template?: Obj;
  selector?: unknown;
}

export const dspec = (d: Obj): DeploymentSpec => (d.spec ?? {}) as DeploymentSpec;
export const dstatus = (d: Obj): DeploymentStatus => {
  if (!d.status || typeof d.status !== 'object') d.status = {};
  return d.status as DeploymentStatus;
};
export const replicasOf = (o: Obj): number => intOr((o.spec as { replicas?: number } | undefined)?.replicas, 1);
const st = (rs: Obj, k: 'replicas' | 'readyReplicas' | 'availableReplicas'): number =>
  intOr((rs.status as Record<string, unknown> | undefined)?.[k], 0);
export const isRolling = (d: Obj): boolean => (dspec(d).strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** The annotations of an object, created when absent. */
export function annotationsOf(o: Obj): Record<string, string> {
  if (!o.metadata.annotations) o.metadata.annotations = {};
  return o.metadata.annotations;
}

// --- templates and finding the new ReplicaSet ---

/**
 * EqualIgnoreHash: the templates are equal but for the pod-template-hash label, with empty maps
 * and lists equal to absent ones (apiequality.Semantic after a JSON round trip). Compared in
 * place: it runs on every sync for each of the Deployment's ReplicaSets (twice), and cloning and
 * canonicalising both templates each time was 8% of the main thread in a density profile
 * (2026-11-27).
 */
export function equalIgnoreHash(a: unknown, b: unknown): boolean {
  return equalPruned(withoutHash(a ?? {}), withoutHash(b ?? {}));
}

/** The template without the pod-template-hash label (shallow copies of what leads to it). */
function withoutHash(t: unknown): unknown {
  const m = (t as { metadata?: { labels?: Record<string, string> } }).metadata;
  if (m?.labels === undefined || m.labels === null || typeof m.labels !== 'object' || !Object.hasOwn(m.labels, HASH_LABEL)) return t;
  const { [HASH_LABEL]: _, ...labels } = m.labels;
  return { ...(t as object), metadata: { ...m, labels } };
}

/** Absent, an empty list, or a map of nothing but such values (what pruneEmpty drops). */
function isEmpty(v: unknown): boolean {
  if (v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v !== null && typeof v === 'object') {
    for (const k in v) if (!isEmpty((v as Record<string, unknown>)[k])) return false;
    return true;
  }
  return false;
}

/** Whether a and b are equal once empty maps and lists are dropped (an empty list item reads as null). */
function equalPruned(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ea = isEmpty(a);
  const eb = isEmpty(b);
  if (ea || eb) return ea && eb;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a[i];
      const y = b[i];
      if ((x === null || isEmpty(x)) && (y === null || isEmpty(y))) continue;
      if (!equalPruned(x, y)) return false;
    }
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    const x = ao[k];
    if (isEmpty(x)) continue;
    n++;
    if (!equalPruned(x, bo[k])) return false;
  }
  for (const k in bo) if (!isEmpty(bo[k])) n--;
  return n === 0;
}

const created = (o: Obj): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;

/** ReplicaSetsByCreationTimestamp (names break ties). */
export const byCreation = (a: Obj, b: Obj): number =>
  created(a) - created(b) || ((a.metadata.name as string) < (b.metadata.name as string) ? -1 : 1);
/** ReplicaSetsBySizeOlder: larger first, then older. */
export const bySizeOlder = (a: Obj, b: Obj): number => replicasOf(b) - replicasOf(a) || byCreation(a, b);
/** ReplicaSetsBySizeNewer: larger first, then newer. */
export const bySizeNewer = (a: Obj, b: Obj): number => replicasOf(b) - replicasOf(a) || byCreation(b, a);

/** The revision annotation as a number (0 when unset or malformed). */
export function revisionOf(o: Obj): number {
  const v = o.metadata.annotations?.[REVISION];
  return v && /^\d+$/.test(v) ? Number(v) : 0;
}

/** ReplicaSetsByRevision: by revision, then by creation. */
export const byRevision = (a: Obj, b: Obj): number => revisionOf(a) - revisionOf(b) || byCreation(a, b);

export const maxRevision = (rss: Obj[]): number => rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);

/** FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's. */
export function findNewReplicaSet(d: Obj, rss: Obj[]): Obj | undefined {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash((rs.spec as { template?: unknown }).template, dspec(d).template));
}

export const findOldReplicaSets = (rss: Obj[], newRS: Obj | undefined): Obj[] =>
  rss.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid);

export const active = (rss: (Obj | undefined)[]): Obj[] => rss.filter((rs): rs is Obj => !!rs && replicasOf(rs) > 0);
export const specReplicas = (rss: (Obj | undefined)[]): number => rss.reduce((n, rs) => n + (rs ? replicasOf(rs) : 0), 0);
export const actualReplicas = (rss: (Obj | undefined)[]): number => rss.reduce((n, rs) => n + (rs ? st(rs, 'replicas') : 0), 0);
export const readyReplicas = (rss: (Obj | undefined)[]): number => rss.reduce((n, rs) => n + (rs ? st(rs, 'readyReplicas') : 0), 0);
export const availableReplicas = (rss: (Obj | undefined)[]): number => rss.reduce((n, rs) => n + (rs ? st(rs, 'availableReplicas') : 0), 0);

// --- surge and unavailability ---

/** ResolveFenceposts: surge rounds up, unavailable down; both zero makes unavailable 1. */
export function resolveFenceposts(d: Obj): { surge: number; unavailable: number } {
  const ru = dspec(d).strategy?.rollingUpdate ?? {};
  const desired = replicasOf(d);
  const surge = scaledValue(ru.maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(ru.maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxUnavailable(d: Obj): number {
  if (!isRolling(d) || replicasOf(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, replicasOf(d));
}

export const maxSurge = (d: Obj): number => (isRolling(d) ? resolveFenceposts(d).surge : 0);

/** NewRSNewReplicas: how large the new ReplicaSet may be now. */
export function newRSNewReplicas(d: Obj, all: Obj[], newRS: Obj): number {
  if (!isRolling(d)) return replicasOf(d);
  const current = specReplicas(all);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (current >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

// --- replicas annotations ---

const intAnnotation = (rs: Obj, k: string): number | undefined => {
  const v = rs.metadata.annotations?.[k];
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
};
export const desiredReplicasAnnotation = (rs: Obj): number | undefined => intAnnotation(rs, DESIRED_REPLICAS);

/** SetReplicasAnnotations: whether it changed them. */
export function setReplicasAnnotations(rs: Obj, desired: number, max: number): boolean {
  const a = annotationsOf(rs);
  let changed = false;
  if (a[DESIRED_REPLICAS] !== String(desired)) {
    a[DESIRED_REPLICAS] = String(desired);
    changed = true;
  }
  if (a[MAX_REPLICAS] !== String(max)) {
    a[MAX_REPLICAS] = String(max);
    changed = true;
  }
  return changed;
}

export const replicasAnnotationsNeedUpdate = (rs: Obj, desired: number, max: number): boolean =>
  rs.metadata.annotations?.[DESIRED_REPLICAS] !== String(desired) || rs.metadata.annotations?.[MAX_REPLICAS] !== String(max);

/** IsSaturated: the ReplicaSet alone runs the Deployment's replicas, all available. */
export function isSaturated(d: Obj, rs: Obj | undefined): boolean {
  if (!rs) return false;
  const want = replicasOf(d);
  return desiredReplicasAnnotation(rs) === want && replicasOf(rs) === want && st(rs, 'availableReplicas') === want;
}

/** Math.round as Go's math.Round (half away from zero). */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/** GetProportion: the share of a scaling the ReplicaSet gets (proportional scaling). */
export function proportion(rs: Obj, d: Obj, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -replicasOf(rs);
  else {
    const deploymentReplicas = replicasOf(d) + maxSurge(d);
    const annotated = intAnnotation(rs, MAX_REPLICAS) ?? intOr(dstatus(d).replicas, 0);
    fraction = annotated === 0 ? 0 : roundHalfAway((replicasOf(rs) * deploymentReplicas) / annotated) - replicasOf(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** copyDeploymentAnnotationsToReplicaSet. */
export function copyAnnotations(d: Obj, rs: Obj): boolean {
  let changed = false;
  const a = annotationsOf(rs);
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  return changed;
}

// --- conditions ---

export const getCondition = (s: DeploymentStatus, type: string): DeploymentCondition | undefined =>
  (s.conditions ?? []).find((c) => c.type === type);

export function newCondition(type: string, status: string, reason: string, message: string, now: string): DeploymentCondition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

/** SetDeploymentCondition: same status and reason leave it; same status keeps the transition time. */
export function setCondition(s: DeploymentStatus, c: DeploymentCondition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), c];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  if (!s.conditions) return;
  s.conditions = s.conditions.filter((c) => c.type !== type);
}

export const hasProgressDeadline = (d: Obj): boolean => {
  const p = dspec(d).progressDeadlineSeconds;
  return typeof p === 'number' && p !== 2 ** 31 - 1;
};

/** DeploymentComplete. */
export function deploymentComplete(d: Obj, s: DeploymentStatus): boolean {
  const want = replicasOf(d);
  return (
    intOr(s.updatedReplicas, 0) === want &&
    intOr(s.replicas, 0) === want &&
    intOr(s.availableReplicas, 0) === want &&
    intOr(s.observedGeneration, 0) >= (d.metadata.generation ?? 0)
  );
}

/** DeploymentProgressing: more updated, fewer old, more ready or more available than before. */
export function deploymentProgressing(d: Obj, s: DeploymentStatus): boolean {
  const old = dstatus(d);
  const n = (v: unknown) => intOr(v, 0);
  return (
    n(s.updatedReplicas) > n(old.updatedReplicas) ||
    n(s.replicas) - n(s.updatedReplicas) < n(old.replicas) - n(old.updatedReplicas) ||
    n(s.readyReplicas) > n(old.readyReplicas) ||
    n(s.availableReplicas) > n(old.availableReplicas)
  );
}

/** DeploymentTimedOut. */
export function deploymentTimedOut(d: Obj, s: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c) return false;
  if (c.reason === R.NewRSAvailable) return false;
  if (c.reason === R.TimedOut) return true;
  const from = Date.parse(c.lastUpdateTime ?? '') || 0;
  return from + intOr(dspec(d).progressDeadlineSeconds, 0) * 1000 < now;
}

/** What the sync needs of the controller: its writes, clock, events and queue. */
export interface Ops {
  now(): number;
  /** Update a ReplicaSet (conditional on its resourceVersion); `rs` becomes the written object. */
  updateRS(rs: Obj): Promise<void>;
  createRS(rs: Obj): Promise<Obj>;
  getRS(namespace: string, name: string): Promise<Obj | undefined>;
  deleteRS(rs: Obj): Promise<void>;
  /** Write the Deployment's annotations (if changed) and status (conditional on its resourceVersion). */
  writeDeployment(d: Obj): Promise<void>;
  event(obj: Obj, type: EventType, reason: string, message: string): void;
  requeueAfter(d: Obj, ms: number): void;
  /** The pods the ReplicaSets control (terminating ones too), by ReplicaSet uid. */
  podsByRS(d: Obj, rss: Obj[]): Map<string, Obj[]>;
}
