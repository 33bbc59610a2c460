/**
 * What the PersistentVolume binder decides from objects alone, as the reference's
 * pkg/controller/volume/persistentvolume (index.go findBestMatchForClaim, util.go
 * checkVolumeSatisfyClaim) and component-helpers' storage/volume: the volume a claim binds to,
 * the claim a volume is bound to, the annotations both carry.
 */
import type { Obj } from '../../api/meta';
import { cmpQuantity, parseQuantity, type Quantity } from '../../api/quantity';
import { selectorMatcher } from '../../api/selectors';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
const ANN_BETA_CLASS = 'volume.beta.kubernetes.io/storage-class';

export interface ClaimRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface VolumeSpec {
  capacity?: { storage?: string };
  accessModes?: string[];
  volumeMode?: string;
  storageClassName?: string;
  claimRef?: ClaimRef;
  persistentVolumeReclaimPolicy?: string;
  nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
}

interface NodeSelectorTerm {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
  matchFields?: { key: string; operator: string; values?: string[] }[];
}

export interface ClaimSpec {
  accessModes?: string[];
  volumeMode?: string;
  storageClassName?: string;
  volumeName?: string;
  selector?: unknown;
  resources?: { requests?: { storage?: string } };
}

export const volumeSpec = (v: Obj): VolumeSpec => (v.spec ?? {}) as VolumeSpec;
export const claimSpec = (c: Obj): ClaimSpec => (c.spec ?? {}) as ClaimSpec;
export const phaseOf = (o: Obj): string => ((o.status as { phase?: string } | undefined)?.phase ?? '') as string;
export const annotation = (o: Obj, k: string): string | undefined => o.metadata.annotations?.[k];

/** storagehelpers.GetPersistentVolumeClaimClass: the beta annotation first, then the field. */
export function claimClass(c: Obj): string {
  const beta = annotation(c, ANN_BETA_CLASS);
  return beta ?? claimSpec(c).storageClassName ?? '';
}

/** GetPersistentVolumeClass. */
export function volumeClass(v: Obj): string {
  const beta = annotation(v, ANN_BETA_CLASS);
  return beta ?? volumeSpec(v).storageClassName ?? '';
}

export const claimRequest = (c: Obj): Quantity | undefined => parseQuantity(claimSpec(c).resources?.requests?.storage ?? '0');
export const volumeCapacity = (v: Obj): Quantity | undefined => parseQuantity(volumeSpec(v).capacity?.storage ?? '0');

/** Whether a volume's claimRef names this claim (by namespace and name; by uid when it has one). */
export function isVolumeBoundToClaim(v: Obj, c: Obj): boolean {
  const ref = volumeSpec(v).claimRef;
  if (!ref || ref.name !== c.metadata.name || ref.namespace !== c.metadata.namespace) return false;
  return !ref.uid || ref.uid === c.metadata.uid;
}

/** A node's labels against a volume's required node affinity (matchExpressions and metadata.name fields). */
export function volumeFitsNode(v: Obj, node: Obj | undefined): boolean {
  const terms = volumeSpec(v).nodeAffinity?.required?.nodeSelectorTerms;
  if (!terms || terms.length === 0) return true;
  if (!node) return false;
  const labels = (node.metadata.labels ?? {}) as Record<string, string>;
  const req = (actual: string | undefined, op: string, values: string[]): boolean => {
    switch (op) {
      case 'In':
        return actual !== undefined && values.includes(actual);
      case 'NotIn':
        return actual === undefined || !values.includes(actual);
      case 'Exists':
        return actual !== undefined;
      case 'DoesNotExist':
        return actual === undefined;
      case 'Gt':
      case 'Lt':
        return actual !== undefined && (op === 'Gt' ? Number(actual) > Number(values[0]) : Number(actual) < Number(values[0]));
      default:
        return false;
    }
  };
  return terms.some(
    (t) =>
      (t.matchExpressions ?? []).every((e) => req(labels[e.key], e.operator, e.values ?? [])) &&
      (t.matchFields ?? []).every((f) => f.key === 'metadata.name' && req(node.metadata.name, f.operator, f.values ?? [])),
  );
}

/**
 * checkVolumeSatisfyClaim: capacity, class, volume mode and access modes (the selector is the
 * caller's); undefined when it does, else why not.
 */
export function volumeUnfit(v: Obj, c: Obj): string | undefined {
  const want = claimRequest(c);
  const have = volumeCapacity(v);
  if (!want || !have || cmpQuantity(have, want) < 0) return 'requested PV is too small';
  if (volumeClass(v) !== claimClass(c)) return 'storageClassName does not match';
  if ((volumeSpec(v).volumeMode ?? 'Filesystem') !== (claimSpec(c).volumeMode ?? 'Filesystem')) return 'incompatible volumeMode';
  const modes = new Set(volumeSpec(v).accessModes ?? []);
  if (!(claimSpec(c).accessModes ?? []).every((m) => modes.has(m))) return 'incompatible accessMode';
  return undefined;
}

/**
 * findBestMatchForClaim: a volume pre-bound to the claim (claimRef naming it) if one fits,
 * else the smallest Available volume (no claimRef, not being deleted) that satisfies the claim
 * and its selector. `node`: the selected node of a WaitForFirstConsumer claim (volumes must fit
 * it); `delayBinding` without a node: only pre-bound volumes, as the reference leaves the others
 * to the scheduler.
 */
export function findBestMatch(c: Obj, volumes: readonly Obj[], delayBinding: boolean, node: Obj | undefined): Obj | undefined {
  const sel = claimSpec(c).selector === undefined ? undefined : selectorMatcher(claimSpec(c).selector);
  if (claimSpec(c).selector !== undefined && !sel) return undefined;
  let best: Obj | undefined;
  let bestSize: Quantity | undefined;
  for (const v of volumes) {
    if (v.metadata.deletionTimestamp) continue;
    if (volumeUnfit(v, c)) continue;
    if (node && !volumeFitsNode(v, node)) continue;
    const ref = volumeSpec(v).claimRef;
    if (ref) {
      if (isVolumeBoundToClaim(v, c)) return v;
      continue;
    }
    if (delayBinding && !node) continue;
    if (phaseOf(v) !== '' && phaseOf(v) !== 'Available' && phaseOf(v) !== 'Pending') continue;
    if (sel && !sel.matches((v.metadata.labels ?? {}) as Record<string, string>)) continue;
    const size = volumeCapacity(v) as Quantity;
    if (!bestSize || cmpQuantity(size, bestSize) < 0) {
      best = v;
      bestSize = size;
    }
  }
  return best;
}

/** The claims a pod's volumes name: persistentVolumeClaim, and an ephemeral volume's `<pod>-<volume>`. */
export function podClaimNames(pod: Obj): string[] {
  const vols = ((pod.spec as { volumes?: { name?: string; persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown }[] })
    ?.volumes ?? []) as { name?: string; persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown }[];
  const out: string[] = [];
  for (const v of vols) {
    if (v.persistentVolumeClaim?.claimName) out.push(v.persistentVolumeClaim.claimName);
    else if (v.ephemeral !== undefined && v.name) out.push(`${pod.metadata.name}-${v.name}`);
  }
  return out;
}
