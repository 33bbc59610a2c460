/** storage.svc.io/v1, discovery.svc.io/v1 (EndpointSlice) and node.svc.io/v1 (RuntimeClass) kinds. */
import {
  CSI_DRIVER,
  CSI_NODE,
  CSI_STORAGE_CAPACITY,
  ENDPOINT_SLICE,
  RUNTIME_CLASS,
  STORAGE_CLASS,
  VOLUME_ATTACHMENT,
} from '../columns-network-storage';
import { endpointSlice } from '../validation/discovery';
import { runtimeClass } from '../validation/node';
import { csiDriver, csiNode, csiStorageCapacity, storageClass, volumeAttachment } from '../validation/storage';
import type { Spec } from './spec';

const group = 'storage.svc.io';

export const STORAGE: Spec[] = [
  {
    group,
    kind: 'StorageClass',
    plural: 'storageclasses',
    shortNames: ['sc'],
    namespaced: false,
    pkg: 'storage',
    rules: storageClass,
    columns: STORAGE_CLASS,
  },
  // Neither strategy sets metadata.generation on create (CSIDriver's counts from 0 on spec changes).
  {
    group,
    kind: 'CSIDriver',
    plural: 'csidrivers',
    namespaced: false,
    generation: false,
    pkg: 'storage',
    rules: csiDriver,
    columns: CSI_DRIVER,
  },
  { group, kind: 'CSINode', plural: 'csinodes', namespaced: false, generation: false, pkg: 'storage', rules: csiNode, columns: CSI_NODE },
  {
    group,
    kind: 'CSIStorageCapacity',
    plural: 'csistoragecapacities',
    namespaced: true,
    pkg: 'storage',
    rules: csiStorageCapacity,
    columns: CSI_STORAGE_CAPACITY,
  },
  {
    group,
    kind: 'VolumeAttachment',
    plural: 'volumeattachments',
    namespaced: false,
    generation: false,
    status: true,
    pkg: 'storage',
    rules: volumeAttachment,
    columns: VOLUME_ATTACHMENT,
  },
  {
    group: 'discovery.svc.io',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
    // No spec, yet the reference counts generations (any change beyond metadata).
    generation: true,
    pkg: 'discovery',
    rules: endpointSlice,
    columns: ENDPOINT_SLICE,
  },
  {
    group: 'node.svc.io',
    kind: 'RuntimeClass',
    plural: 'runtimeclasses',
    namespaced: false,
    pkg: 'node',
    rules: runtimeClass,
    columns: RUNTIME_CLASS,
  },
];
