/**
 * The built-in provisioner `sim.svc.io/provisioner` and its StorageClass `standard`, as kind's
 * default class (rancher local-path-provisioner: volumeBindingMode WaitForFirstConsumer,
 * reclaimPolicy Delete, a hostPath volume pinned to the node the first consumer runs on):
 *
 *   `standard` is created at start through the registry when absent, annotated
 *   storageclass.kubernetes.io/is-default-class: "true" unless another class is the default;
 *   a claim of a class of this provisioner gets a PersistentVolume `pvc-<claim uid>` of the
 *   requested size, its access modes and volume mode, the class's reclaim policy and mount
 *   options, pv.kubernetes.io/provisioned-by, a claimRef to the claim (pre-bound: the binder
 *   completes the binding), and node affinity to the claim's selected node when it has one.
 */
import type { Obj } from '../../api/meta';
import { isDefaultClass } from '../../kinds/columns-network-storage';
import { ANN_DYNAMICALLY_PROVISIONED, claimSpec } from './matching';

export const SIM_PROVISIONER = 'sim.svc.io/provisioner';
export const STANDARD_CLASS = 'standard';
const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const HOST_DIR = '/var/lib/sim-provisioner';

/** The `standard` class to create, given the classes there are (undefined: it exists). */
export function standardClass(classes: readonly Obj[]): Obj | undefined {
  if (classes.some((c) => c.metadata.name === STANDARD_CLASS)) return undefined;
  const hasDefault = classes.some((c) => isDefaultClass(c.metadata.annotations));
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: STANDARD_CLASS,
      ...(hasDefault ? {} : { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } }),
    },
    provisioner: SIM_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  } as Obj;
}

/** The volume provisioned for `claim` of `cls` (on `node` when the claim's consumer chose one). */
export function provisionedVolume(claim: Obj, cls: Obj, node: string | undefined): Obj {
  const name = `pvc-${claim.metadata.uid}`;
  const cs = claimSpec(claim);
  const c = cls as { reclaimPolicy?: string; mountOptions?: string[] };
  const spec: Record<string, unknown> = {
    capacity: { storage: cs.resources?.requests?.storage ?? '0' },
    accessModes: cs.accessModes ?? ['ReadWriteOnce'],
    volumeMode: cs.volumeMode ?? 'Filesystem',
    storageClassName: cls.metadata.name,
    persistentVolumeReclaimPolicy: c.reclaimPolicy ?? 'Delete',
    claimRef: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      namespace: claim.metadata.namespace,
      name: claim.metadata.name,
      uid: claim.metadata.uid,
      resourceVersion: claim.metadata.resourceVersion,
    },
    hostPath: { path: `${HOST_DIR}/${name}`, type: 'DirectoryOrCreate' },
  };
  if (c.mountOptions && c.mountOptions.length > 0) spec.mountOptions = [...c.mountOptions];
  if (node) {
    spec.nodeAffinity = {
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [ANN_DYNAMICALLY_PROVISIONED]: SIM_PROVISIONER } },
    spec,
  } as Obj;
}
