/**
 * Per-kind strategies: server-owned state on create/update and the validation rules the schema
 * cannot express (src/kinds/validation/<group>.ts). Kinds without an entry use the generic
 * behaviour only.
 */
import type { Strategy } from '../registry/kind';
import { qosClass } from './qos';
import { validatingAdmissionPolicy, validatingAdmissionPolicyBinding } from './validation/admissionregistration';
import { customResourceDefinition } from './validation/apiextensions';
import { deployment, replicaSet } from './validation/apps';
import { lease } from './validation/coordination';
import { configMap, event, namespaceValidation, node, secret, service } from './validation/core';
import { pod } from './validation/core-pod';
import { limitRange, resourceQuota } from './validation/core-quota';
import { flowSchema, priorityLevelConfiguration } from './validation/flowcontrol';
import { networkPolicy } from './validation/networking';
import { podDisruptionBudget } from './validation/policy';
import { clusterRole, clusterRoleBinding, role, roleBinding } from './validation/rbac';

const STRATEGIES: Record<string, Strategy> = {
  Namespace: {
    prepareForCreate(o) {
      o.status = { phase: 'Active' };
      const spec = (o.spec ?? {}) as { finalizers?: string[] };
      if (!spec.finalizers) spec.finalizers = ['kubernetes'];
      o.spec = spec;
      o.metadata.labels = { ...o.metadata.labels, 'kubernetes.io/metadata.name': o.metadata.name ?? '' };
    },
    prepareForUpdate(o, old) {
      o.spec = old.spec;
      o.metadata.labels = { ...o.metadata.labels, 'kubernetes.io/metadata.name': o.metadata.name ?? '' };
    },
  },
  Pod: {
    prepareForCreate(o) {
      o.status = { phase: 'Pending', qosClass: qosClass(o) };
    },
    // The update half of the reference's Priority admission plugin (updates here see validating
    // admission only): an update that leaves out the priority the plugin set on create keeps it.
    prepareForUpdate(o, old) {
      const spec = o.spec as Record<string, unknown> | undefined;
      const was = old.spec as Record<string, unknown> | undefined;
      if (!spec || !was) return;
      if (spec.priority === undefined && was.priority !== undefined) spec.priority = was.priority;
      if (spec.preemptionPolicy === undefined && was.preemptionPolicy !== undefined) spec.preemptionPolicy = was.preemptionPolicy;
    },
  },
};

const withStatus = new Set([
  'Deployment',
  'ReplicaSet',
  'ResourceQuota',
  'PodDisruptionBudget',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'ValidatingAdmissionPolicy',
  'Node',
  'Service',
]);

/** The validation rules (and the preparation they need, e.g. Secret stringData) per kind. */
const VALIDATION: Record<string, Strategy> = {
  ConfigMap: configMap,
  Secret: secret,
  Pod: pod,
  Service: service,
  Namespace: namespaceValidation,
  Node: node,
  Event: event,
  LimitRange: limitRange,
  ResourceQuota: resourceQuota,
  Lease: lease,
  Deployment: deployment,
  ReplicaSet: replicaSet,
  FlowSchema: flowSchema,
  PriorityLevelConfiguration: priorityLevelConfiguration,
  NetworkPolicy: networkPolicy,
  PodDisruptionBudget: podDisruptionBudget,
  ValidatingAdmissionPolicy: validatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding: validatingAdmissionPolicyBinding,
  CustomResourceDefinition: customResourceDefinition,
  Role: role,
  ClusterRole: clusterRole,
  RoleBinding: roleBinding,
  ClusterRoleBinding: clusterRoleBinding,
};

/** Run two preparation steps in order (either may be absent). */
function both<A extends unknown[]>(a?: (...args: A) => void, b?: (...args: A) => void): ((...args: A) => void) | undefined {
  if (!a || !b) return a ?? b;
  return (...args) => {
    a(...args);
    b(...args);
  };
}

export function strategyFor(kind: string, emptyStatus = false): Strategy {
  let base: Strategy = STRATEGIES[kind] ?? {};
  // Kinds whose status is a plain struct in the reference show `status: {}` from creation on.
  if (!STRATEGIES[kind] && (emptyStatus || withStatus.has(kind))) {
    base = {
      prepareForCreate: (o) => {
        if (o.status === undefined) o.status = {};
      },
    };
  }
  return mergeStrategy(base, VALIDATION[kind]);
}

/** A strategy with a kind's rules merged over it: preparations run both, the rest from `v`. */
export function mergeStrategy(base: Strategy, v: Strategy | undefined): Strategy {
  if (!v) return base;
  const s: Strategy = { ...base };
  const create = both(v.prepareForCreate, base.prepareForCreate);
  const update = both(v.prepareForUpdate, base.prepareForUpdate);
  if (create) s.prepareForCreate = create;
  if (update) s.prepareForUpdate = update;
  const status = both(v.prepareForStatusUpdate, base.prepareForStatusUpdate);
  if (status) s.prepareForStatusUpdate = status;
  if (v.statusOnCreate) s.statusOnCreate = true;
  if (v.validate) s.validate = v.validate;
  if (v.validateUpdate) s.validateUpdate = v.validateUpdate;
  if (v.bumpsGeneration) s.bumpsGeneration = v.bumpsGeneration;
  if (v.decode) s.decode = v.decode;
  if (v.beginDelete) s.beginDelete = v.beginDelete;
  if (v.deletePending) s.deletePending = v.deletePending;
  if (v.deleteForbidden) s.deleteForbidden = v.deleteForbidden;
  return s;
}
