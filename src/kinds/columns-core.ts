/**
 * Table columns of the core/v1 kinds served since issue 35 (Endpoints, PersistentVolume,
 * PersistentVolumeClaim, PodTemplate, ReplicationController, ComponentStatus), as the reference's printers
 * (pkg/printers/internalversion/printers.go). Specs in specs/core.ts name them.
 */
import type { Obj } from '../api/meta';
import type { Column } from '../codec/table';
import { AGE, CONTAINERS_DESCRIPTION, canonicalQuantity, col, containerCells, formatLabels, IMAGES_DESCRIPTION } from './columns';
import { type J, list, map, obj, str } from './validation/common';

const spec = (x: Obj): J => obj(x.spec) ?? {};
const status = (x: Obj): J => obj(x.status) ?? {};
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

// ---- Endpoints ------------------------------------------------------------------------------

/** formatEndpoints: up to three ip:port (ip alone without ports), then " + N more...". */
export function formatEndpoints(ep: Obj): string {
  const subsets = list<J>(ep.subsets);
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const out: string[] = [];
  let more = false;
  let count = 0;
  const add = (s: string) => {
    if (out.length === max) {
      more = true;
      return false;
    }
    out.push(s);
    return true;
  };
  for (const ss of subsets) {
    const addresses = list<J>(ss.addresses);
    const ports = list<J>(ss.ports);
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) if (!add(str(a.ip))) break;
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) {
        const ip = str(a.ip);
        if (!add(`${ip.includes(':') ? `[${ip}]` : ip}:${num(p.port)}`)) break;
      }
    }
  }
  const text = out.join(',');
  return more ? `${text} + ${count - max} more...` : text;
}

export const ENDPOINTS_COLUMNS: Column[] = [
  col(
    'Endpoints',
    'string',
    'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.',
    formatEndpoints,
  ),
  AGE,
];

// ---- PersistentVolume and PersistentVolumeClaim ---------------------------------------------

/** helper.GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order. */
export function accessModesString(modes: unknown): string {
  const have = new Set(list<string>(modes));
  const out: string[] = [];
  if (have.has('ReadWriteOnce')) out.push('RWO');
  if (have.has('ReadOnlyMany')) out.push('ROX');
  if (have.has('ReadWriteMany')) out.push('RWX');
  if (have.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** GetPersistentVolume(Claim)Class: the beta annotation first, then spec.storageClassName. */
function storageClass(x: Obj): string {
  const annotated = x.metadata.annotations?.[STORAGE_CLASS_ANNOTATION];
  return annotated !== undefined ? annotated : str(spec(x).storageClassName);
}

const phase = (x: Obj): string => (x.metadata.deletionTimestamp ? 'Terminating' : str(status(x).phase));
const volumeMode = (x: Obj): string => (typeof spec(x).volumeMode === 'string' ? str(spec(x).volumeMode) : '<unset>');

export const PERSISTENT_VOLUME_COLUMNS: Column[] = [
  col(
    'Capacity',
    'string',
    "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
    (x) => canonicalQuantity(map(spec(x).capacity).storage),
  ),
  col(
    'Access Modes',
    'string',
    'accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes',
    (x) => accessModesString(spec(x).accessModes),
  ),
  col(
    'Reclaim Policy',
    'string',
    'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming',
    (x) => str(spec(x).persistentVolumeReclaimPolicy),
  ),
  col(
    'Status',
    'string',
    'phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase',
    phase,
  ),
  col(
    'Claim',
    'string',
    'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding',
    (x) => {
      const ref = obj(spec(x).claimRef);
      return ref ? `${str(ref.namespace)}/${str(ref.name)}` : '';
    },
  ),
  col('StorageClass', 'string', 'StorageClass of the pv', storageClass),
  col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv', (x) =>
    typeof spec(x).volumeAttributesClassName === 'string' ? str(spec(x).volumeAttributesClassName) : '<unset>',
  ),
  col(
    'Reason',
    'string',
    'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.',
    (x) => str(status(x).reason),
  ),
  AGE,
  col(
    'VolumeMode',
    'string',
    'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.',
    volumeMode,
    1,
  ),
];

/** A claim shows capacity and access modes of its bound volume only (status), once it names one. */
const bound = (x: Obj): boolean => str(spec(x).volumeName) !== '';

export const PERSISTENT_VOLUME_CLAIM_COLUMNS: Column[] = [
  col('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.', phase),
  col('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.', (x) =>
    str(spec(x).volumeName),
  ),
  col('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.', (x) =>
    bound(x) ? canonicalQuantity(map(status(x).capacity).storage) : '',
  ),
  col(
    'Access Modes',
    'string',
    'accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1',
    (x) => (bound(x) ? accessModesString(status(x).accessModes) : ''),
  ),
  col('StorageClass', 'string', 'StorageClass of the pvc', storageClass),
  col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc', (x) =>
    str(spec(x).volumeAttributesClassName) !== '' ? str(spec(x).volumeAttributesClassName) : '<unset>',
  ),
  AGE,
  col(
    'VolumeMode',
    'string',
    'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.',
    volumeMode,
    1,
  ),
];

// ---- PodTemplate and ReplicationController --------------------------------------------------

const templateOf = (t: unknown): J => obj(t) ?? {};
const templateContainers = (t: unknown): unknown => obj(templateOf(t).spec)?.containers;

export const POD_TEMPLATE_COLUMNS: Column[] = [
  col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => containerCells(templateContainers(x.template)).names),
  col('Images', 'string', IMAGES_DESCRIPTION, (x) => containerCells(templateContainers(x.template)).images),
  col('Pod Labels', 'string', 'The labels for the pod template.', (x) => formatLabels(obj(templateOf(x.template).metadata)?.labels)),
];

export const REPLICATION_CONTROLLER_COLUMNS: Column[] = [
  col(
    'Desired',
    'integer',
    'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    (x) => (typeof spec(x).replicas === 'number' ? num(spec(x).replicas) : 1),
  ),
  col(
    'Current',
    'integer',
    'Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    (x) => num(status(x).replicas),
  ),
  col('Ready', 'integer', 'The number of ready replicas for this replication controller.', (x) => num(status(x).readyReplicas)),
  AGE,
  col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => containerCells(templateContainers(spec(x).template)).names, 1),
  col('Images', 'string', IMAGES_DESCRIPTION, (x) => containerCells(templateContainers(spec(x).template)).images, 1),
  col(
    'Selector',
    'string',
    'Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    (x) => formatLabels(spec(x).selector),
    1,
  ),
];

// ---- ComponentStatus ------------------------------------------------------------------------

type Condition = { type?: string; status?: string; message?: string; error?: string };

/** printComponentStatus: the Healthy condition as Status, with its message and error. */
function componentHealth(x: Obj): { status: string; message: string; error: string } {
  const c = ((x as { conditions?: Condition[] }).conditions ?? []).find((c) => c.type === 'Healthy');
  if (!c) return { status: 'Unknown', message: '', error: '' };
  return { status: c.status === 'True' ? 'Healthy' : 'Unhealthy', message: c.message ?? '', error: c.error ?? '' };
}

export const COMPONENT_STATUS_COLUMNS: Column[] = [
  col('Status', 'string', 'Status of the component conditions', (x) => componentHealth(x).status),
  col('Message', 'string', 'Message of the component conditions', (x) => componentHealth(x).message),
  col('Error', 'string', 'Error of the component conditions', (x) => componentHealth(x).error),
];
