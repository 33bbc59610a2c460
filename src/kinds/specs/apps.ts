/** apps/v1 kinds. */
import { at, type Spec } from './spec';

export const APPS: Spec[] = [
  {
    group: 'apps',
    kind: 'Deployment',
    plural: 'deployments',
    shortNames: ['deploy'],
    categories: ['all'],
    namespaced: true,
    status: true,
    scale: true,
    pkg: 'apps',
  },
  {
    group: 'apps',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    shortNames: ['rs'],
    categories: ['all'],
    namespaced: true,
    status: true,
    scale: true,
    pkg: 'apps',
    fields: { 'status.replicas': (o) => String(at('status', 'replicas')(o) ?? 0) },
  },
];
