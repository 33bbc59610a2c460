/** apps/v1 kinds. */
import { clone } from '../../api/meta';
import { CONTROLLERREVISION_COLUMNS, DAEMONSET_COLUMNS, STATEFULSET_COLUMNS } from '../columns-workloads';
import { controllerRevision, daemonSet, statefulSet } from '../validation/apps-workloads';
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
    // deploymentStatusStrategy keeps only spec and labels: a status write may set annotations
    // (the controller's revision annotation goes that way, without bumping the generation).
    subresources: {
      status: {
        merge: (input, cur) => {
          const next = clone(cur);
          if (input.status === undefined) delete next.status;
          else next.status = clone(input.status);
          if (input.metadata.annotations === undefined) delete next.metadata.annotations;
          else next.metadata.annotations = clone(input.metadata.annotations);
          return next;
        },
        ignored: ['spec'],
      },
    },
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
  {
    group: 'apps',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    shortNames: ['sts'],
    categories: ['all'],
    namespaced: true,
    status: true,
    scale: true,
    // ValidateStatefulSetName: the pods' names are <name>-<ordinal>, so a DNS label.
    nameRule: 'label',
    pkg: 'apps',
    emptyStatus: true,
    rules: statefulSet,
    columns: STATEFULSET_COLUMNS,
  },
  {
    group: 'apps',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    shortNames: ['ds'],
    categories: ['all'],
    namespaced: true,
    status: true,
    pkg: 'apps',
    emptyStatus: true,
    rules: daemonSet,
    columns: DAEMONSET_COLUMNS,
  },
  {
    group: 'apps',
    kind: 'ControllerRevision',
    plural: 'controllerrevisions',
    namespaced: true,
    pkg: 'apps',
    rules: controllerRevision,
    columns: CONTROLLERREVISION_COLUMNS,
  },
];
