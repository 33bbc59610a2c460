/**
 * A StatefulSet's pods and their identity, as the reference's stateful_set_utils.go: pod
 * `<set>-<ordinal>` (ordinals from `.spec.ordinals.start`), labelled with its name, its index and
 * its revision, hostname its name and subdomain the set's serviceName; each volumeClaimTemplate
 * gives it a PersistentVolumeClaim `<template>-<set>-<ordinal>` mounted as the template's volume,
 * whose owner references follow persistentVolumeClaimRetentionPolicy.
 */
import { clone, type Obj, type OwnerReference } from '../../api/meta';
import { controllerRef, intOr, isPodAvailable, isPodReady, phaseOf } from '../controller-utils';
import { REVISION_HASH_LABEL } from '../revisions';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

export interface SetSpec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> };
  template?: Obj;
  serviceName?: string;
  podManagementPolicy?: string;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  ordinals?: { start?: number };
  updateStrategy?: { type?: string; rollingUpdate?: { partition?: number; maxUnavailable?: number | string } };
  volumeClaimTemplates?: Obj[];
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
}

export interface SetStatus {
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
}

export const sspec = (s: Obj): SetSpec => (s.spec ?? {}) as SetSpec;
export const setReplicas = (s: Obj): number => intOr(sspec(s).replicas, 1);
export const startOrdinal = (s: Obj): number => intOr(sspec(s).ordinals?.start, 0);
export const isParallel = (s: Obj): boolean => sspec(s).podManagementPolicy === 'Parallel';
export const isRollingUpdate = (s: Obj): boolean => (sspec(s).updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
export const podName = (s: Obj, ord: number): string => `${s.metadata.name}-${ord}`;

/** getParentNameAndOrdinal: the pod's ordinal when its name is `<set>-<ordinal>`, else -1. */
export function ordinalOf(s: Obj, p: Obj): number {
  const m = /^(.*)-(\d+)$/.exec(p.metadata.name as string);
  return m && m[1] === s.metadata.name ? Number(m[2]) : -1;
}

/** podInOrdinalRange. */
export const inOrdinalRange = (s: Obj, ord: number): boolean => ord >= startOrdinal(s) && ord < startOrdinal(s) + setReplicas(s);

export const podRevision = (p: Obj): string => p.metadata.labels?.[REVISION_HASH_LABEL] ?? '';
export const isTerminating = (p: Obj): boolean => !!p.metadata.deletionTimestamp;
export const isFailed = (p: Obj): boolean => phaseOf(p) === 'Failed' || phaseOf(p) === 'Succeeded';
export const isRunningAndReady = (p: Obj): boolean => phaseOf(p) === 'Running' && isPodReady(p);
export const isRunningAndAvailable = (p: Obj, minReady: number, now: number): boolean =>
  phaseOf(p) === 'Running' && isPodAvailable(p, minReady, now);
/** isHealthy: running, available (minReadySeconds) and not terminating. */
export const isHealthy = (s: Obj, p: Obj, now: number): boolean =>
  isRunningAndAvailable(p, intOr(sspec(s).minReadySeconds, 0), now) && !isTerminating(p);

export const claimName = (template: Obj, s: Obj, ord: number): string => `${template.metadata?.name}-${s.metadata.name}-${ord}`;

/** getPersistentVolumeClaims: the claims the pod at `ord` uses, by template name. */
export function podClaims(s: Obj, ord: number): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const matchLabels = sspec(s).selector?.matchLabels ?? {};
  for (const t of sspec(s).volumeClaimTemplates ?? []) {
    const c = clone(t);
    c.apiVersion = 'v1';
    c.kind = 'PersistentVolumeClaim';
    c.metadata = {
      ...(c.metadata ?? {}),
      name: claimName(t, s, ord),
      namespace: s.metadata.namespace,
      labels: { ...(t.metadata?.labels ?? {}), ...matchLabels },
    };
    delete c.status;
    out.set(t.metadata?.name as string, c);
  }
  return out;
}

/** newStatefulSetPod: the pod at `ord` from `template` at revision `revision` (a revision's name). */
export function newPod(s: Obj, template: Obj, ord: number, revision: string): Obj {
  const tm = template.metadata ?? {};
  const name = podName(s, ord);
  const meta: Obj['metadata'] = {
    name,
    namespace: s.metadata.namespace,
    labels: { ...(tm.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ord), [REVISION_HASH_LABEL]: revision },
    ownerReferences: [controllerRef(s, 'apps/v1', 'StatefulSet')],
  };
  if (tm.annotations) meta.annotations = { ...tm.annotations };
  if (tm.finalizers) meta.finalizers = [...tm.finalizers];
  const spec = clone((template.spec ?? {}) as Obj) as Record<string, unknown>;
  spec.hostname = name;
  const svc = sspec(s).serviceName;
  if (svc) spec.subdomain = svc;
  else delete spec.subdomain;
  // updateStorage: each claim replaces a template volume of the same name.
  const claims = podClaims(s, ord);
  if (claims.size > 0) {
    const volumes = ((spec.volumes ?? []) as { name: string }[]).filter((v) => !claims.has(v.name));
    for (const [vol, c] of claims) volumes.push({ name: vol, persistentVolumeClaim: { claimName: c.metadata.name } } as { name: string });
    spec.volumes = volumes;
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec } as Obj;
}

/** identityMatches: the pod's name, labels, hostname and subdomain are those of its ordinal. */
export function identityMatches(s: Obj, p: Obj, ord: number): boolean {
  const l = p.metadata.labels ?? {};
  const spec = (p.spec ?? {}) as { hostname?: string; subdomain?: string };
  return (
    ordinalOf(s, p) === ord &&
    l[POD_NAME_LABEL] === p.metadata.name &&
    l[POD_INDEX_LABEL] === String(ord) &&
    spec.hostname === p.metadata.name &&
    (spec.subdomain ?? '') === (sspec(s).serviceName ?? '')
  );
}

/** updateIdentity: the labels a pod's identity needs (hostname and subdomain are immutable once set). */
export function withIdentity(p: Obj, ord: number): Obj {
  const out = clone(p);
  out.metadata.labels = { ...(out.metadata.labels ?? {}), [POD_NAME_LABEL]: p.metadata.name as string, [POD_INDEX_LABEL]: String(ord) };
  return out;
}

/** The retention policy, Retain/Retain by default. */
export function retentionPolicy(s: Obj): { whenDeleted: string; whenScaled: string } {
  const p = sspec(s).persistentVolumeClaimRetentionPolicy ?? {};
  return { whenDeleted: p.whenDeleted ?? 'Retain', whenScaled: p.whenScaled ?? 'Retain' };
}

const plainRef = (o: Obj, apiVersion: string, kind: string): OwnerReference => {
  const { controller: _c, blockOwnerDeletion: _b, ...ref } = controllerRef(o, apiVersion, kind);
  return ref as OwnerReference;
};

/**
 * updateClaimOwnerRefForSetAndPod: the claim's owner references under the retention policy —
 * whenDeleted=Delete makes the set an owner (the claim goes with the set), whenScaled=Delete makes
 * a pod scaled away its owner (the claim goes with the pod). Answers undefined when unchanged.
 */
export function claimOwnerRefs(s: Obj, p: Obj | undefined, ord: number, claim: Obj): OwnerReference[] | undefined {
  const refs = [...(claim.metadata.ownerReferences ?? [])];
  const { whenDeleted, whenScaled } = retentionPolicy(s);
  const scaledDown = !inOrdinalRange(s, ord);
  const setOwns = whenDeleted === 'Delete' && !(whenScaled === 'Delete' && scaledDown);
  const podOwns = whenScaled === 'Delete' && scaledDown && !!p;
  const want = new Map<string, OwnerReference>();
  if (setOwns) want.set(s.metadata.uid as string, plainRef(s, 'apps/v1', 'StatefulSet'));
  if (podOwns && p) want.set(p.metadata.uid as string, plainRef(p, 'v1', 'Pod'));
  const drop = new Set([s.metadata.uid as string, ...(p ? [p.metadata.uid as string] : [])]);
  let changed = false;
  const out = refs.filter((r) => {
    if (!drop.has(r.uid) || want.has(r.uid)) return true;
    changed = true;
    return false;
  });
  for (const [uid, ref] of want) {
    if (out.some((r) => r.uid === uid)) continue;
    out.push(ref);
    changed = true;
  }
  return changed ? out : undefined;
}
