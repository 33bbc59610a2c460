/**
 * The reference's storage admission plugins, both on by default:
 *
 *  - DefaultStorageClass: a PersistentVolumeClaim created without a class (no
 *    spec.storageClassName and no volume.beta.kubernetes.io/storage-class annotation) gets the
 *    default StorageClass (annotated storageclass.kubernetes.io/is-default-class: "true", or the
 *    beta annotation). With several defaults the newest wins, then the first by name (1.33's
 *    GetDefaultClass); with none the claim stays without a class.
 *  - StorageObjectInUseProtection: a created PersistentVolumeClaim gets the finalizer
 *    kubernetes.io/pvc-protection, a PersistentVolume kubernetes.io/pv-protection, so that they
 *    outlive their users (src/controllers/storage-protection.ts removes the finalizers).
 */
import type { Obj } from '../api/meta';
import { isDefaultClass } from '../kinds/columns-network-storage';
import type { Attributes, Operation, Plugin } from '../registry/admission';

export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION = 'kubernetes.io/pv-protection';
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The default StorageClass among `classes`: newest creation first, then name (GetDefaultClass). */
export function defaultClass(classes: readonly Obj[]): Obj | undefined {
  const defaults = classes.filter((c) => isDefaultClass(c.metadata.annotations));
  const created = (c: Obj) => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
  defaults.sort((a, b) => created(b) - created(a) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  return defaults[0];
}

export class DefaultStorageClass implements Plugin {
  readonly name = 'DefaultStorageClass';

  /** `classes` answers the StorageClasses (none when the kind is not served). */
  constructor(private readonly classes: () => Obj[] | Promise<Obj[]>) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === '' && resource === 'persistentvolumeclaims' && subresource === '' && op === 'CREATE';
  }

  async admit(a: Attributes): Promise<void> {
    const spec = (a.object.spec ?? {}) as { storageClassName?: string };
    if (typeof a.object.spec !== 'object' || a.object.spec === null) a.object.spec = spec;
    // PersistentVolumeClaimHasClass: a class named either way, even "" (no class, on purpose).
    if (spec.storageClassName !== undefined && spec.storageClassName !== null) return;
    if (a.object.metadata.annotations?.[BETA_CLASS_ANNOTATION] !== undefined) return;
    const def = defaultClass(await this.classes());
    if (def?.metadata.name) spec.storageClassName = def.metadata.name;
  }
}

export class StorageObjectInUseProtection implements Plugin {
  readonly name = 'StorageObjectInUseProtection';

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return (
      group === '' && (resource === 'persistentvolumeclaims' || resource === 'persistentvolumes') && subresource === '' && op === 'CREATE'
    );
  }

  admit(a: Attributes): void {
    const finalizer = a.resource === 'persistentvolumes' ? PV_PROTECTION : PVC_PROTECTION;
    const finalizers = a.object.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) a.object.metadata.finalizers = [...finalizers, finalizer];
  }
}
