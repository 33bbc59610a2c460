/**
 * The built-in kinds: one entry each. Names, scope and subresources are the reference's; the
 * schema comes from src/schema/generated; strategies (src/kinds/strategies.ts) hold the rules the
 * schema cannot say; columns (src/kinds/columns.ts) the table shape kubectl shows.
 */
import type { Obj } from '../api/meta';
import type { NameRule } from '../api/validation';
import type { KindDef, Strategy } from '../registry/kind';
import { columnsFor } from './columns';
import { lifecycleFor } from './lifecycle';
import { strategyFor } from './strategies';

interface Spec {
  group?: string;
  version?: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  status?: boolean;
  scale?: boolean;
  finalize?: boolean;
  deleteCollection?: boolean;
  nameRule?: NameRule;
  returnDeletedObject?: boolean;
  /**
   * metadata.generation: by default kinds with a spec have it; the reference does not set it for
   * Namespace, Pod, Node, Service, LimitRange, ResourceQuota and Lease, which say false here.
   */
  generation?: boolean;
  /** Schema package: io.svc.api.<pkg>.<version>.<Kind>. */
  pkg: string;
  /** The schema's full name where it is not under io.svc.api (apiextensions). */
  schema?: string;
  /** Create-only, answered and not stored (access reviews). */
  virtual?: boolean;
  fields?: Record<string, (o: Obj) => string>;
}

type Path = (o: Obj) => unknown;
const at =
  (...path: string[]): Path =>
  (o) => {
    let v: unknown = o;
    for (const p of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
    return v;
  };
const str = (p: Path) => (o: Obj) => {
  const v = p(o);
  return v === undefined || v === null ? '' : String(v);
};

const SPECS: Spec[] = [
  {
    kind: 'Namespace',
    finalize: true,
    deleteCollection: false,
    generation: false,
    plural: 'namespaces',
    shortNames: ['ns'],
    namespaced: false,
    status: true,
    nameRule: 'label',
    pkg: 'core',
    fields: { 'status.phase': str(at('status', 'phase')) },
  },
  { kind: 'ConfigMap', plural: 'configmaps', shortNames: ['cm'], namespaced: true, pkg: 'core' },
  { kind: 'Secret', plural: 'secrets', namespaced: true, pkg: 'core', fields: { type: str(at('type')) } },
  {
    kind: 'Pod',
    generation: false,
    plural: 'pods',
    shortNames: ['po'],
    categories: ['all'],
    namespaced: true,
    status: true,
    pkg: 'core',
    returnDeletedObject: true,
    fields: {
      'spec.nodeName': str(at('spec', 'nodeName')),
      'spec.restartPolicy': str(at('spec', 'restartPolicy')),
      'spec.schedulerName': str(at('spec', 'schedulerName')),
      'spec.serviceAccountName': str(at('spec', 'serviceAccountName')),
      'spec.hostNetwork': (o) => String(at('spec', 'hostNetwork')(o) === true),
      'status.phase': str(at('status', 'phase')),
      'status.podIP': str(at('status', 'podIP')),
      'status.nominatedNodeName': str(at('status', 'nominatedNodeName')),
    },
  },
  {
    kind: 'Node',
    generation: false,
    plural: 'nodes',
    shortNames: ['no'],
    namespaced: false,
    status: true,
    pkg: 'core',
    fields: { 'spec.unschedulable': (o) => String(at('spec', 'unschedulable')(o) === true) },
  },
  {
    kind: 'Service',
    generation: false,
    plural: 'services',
    shortNames: ['svc'],
    categories: ['all'],
    namespaced: true,
    status: true,
    nameRule: 'label',
    pkg: 'core',
    fields: { 'spec.clusterIP': str(at('spec', 'clusterIP')), 'spec.type': str(at('spec', 'type')) },
  },
  {
    kind: 'Event',
    plural: 'events',
    shortNames: ['ev'],
    namespaced: true,
    pkg: 'core',
    generation: false,
    fields: {
      'involvedObject.kind': str(at('involvedObject', 'kind')),
      'involvedObject.namespace': str(at('involvedObject', 'namespace')),
      'involvedObject.name': str(at('involvedObject', 'name')),
      'involvedObject.uid': str(at('involvedObject', 'uid')),
      'involvedObject.apiVersion': str(at('involvedObject', 'apiVersion')),
      'involvedObject.resourceVersion': str(at('involvedObject', 'resourceVersion')),
      'involvedObject.fieldPath': str(at('involvedObject', 'fieldPath')),
      reason: str(at('reason')),
      reportingComponent: str(at('reportingComponent')),
      source: str(at('source', 'component')),
      type: str(at('type')),
    },
  },
  { kind: 'ServiceAccount', plural: 'serviceaccounts', shortNames: ['sa'], namespaced: true, pkg: 'core' },
  { kind: 'LimitRange', generation: false, plural: 'limitranges', shortNames: ['limits'], namespaced: true, pkg: 'core' },
  {
    kind: 'ResourceQuota',
    generation: false,
    plural: 'resourcequotas',
    shortNames: ['quota'],
    namespaced: true,
    status: true,
    pkg: 'core',
    returnDeletedObject: true,
  },
  { group: 'coordination.svc.io', kind: 'Lease', generation: false, plural: 'leases', namespaced: true, pkg: 'coordination' },
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
  { group: 'flowcontrol.apiserver.svc.io', kind: 'FlowSchema', plural: 'flowschemas', namespaced: false, status: true, pkg: 'flowcontrol' },
  {
    group: 'flowcontrol.apiserver.svc.io',
    kind: 'PriorityLevelConfiguration',
    plural: 'prioritylevelconfigurations',
    namespaced: false,
    status: true,
    pkg: 'flowcontrol',
  },
  {
    group: 'networking.svc.io',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    shortNames: ['netpol'],
    namespaced: true,
    pkg: 'networking',
  },
  {
    group: 'policy',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    shortNames: ['pdb'],
    namespaced: true,
    status: true,
    pkg: 'policy',
  },
  {
    group: 'admissionregistration.svc.io',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    categories: ['api-extensions'],
    namespaced: false,
    status: true,
    pkg: 'admissionregistration',
  },
  ...(['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'] as const).map(
    (kind): Spec => ({
      group: 'authorization.svc.io',
      kind,
      plural: `${kind.toLowerCase()}s`,
      namespaced: kind === 'LocalSubjectAccessReview',
      pkg: 'authorization',
      virtual: true,
    }),
  ),
  {
    group: 'authentication.svc.io',
    kind: 'SelfSubjectReview',
    plural: 'selfsubjectreviews',
    namespaced: false,
    pkg: 'authentication',
    virtual: true,
  },
  {
    group: 'rbac.authorization.svc.io',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    pkg: 'rbac',
    nameRule: 'path-segment',
  },
  {
    group: 'rbac.authorization.svc.io',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    pkg: 'rbac',
    nameRule: 'path-segment',
  },
  { group: 'rbac.authorization.svc.io', kind: 'Role', plural: 'roles', namespaced: true, pkg: 'rbac', nameRule: 'path-segment' },
  {
    group: 'rbac.authorization.svc.io',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    pkg: 'rbac',
    nameRule: 'path-segment',
  },
  {
    group: 'apiextensions.svc.io',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    namespaced: false,
    status: true,
    pkg: 'apiextensions',
    schema: 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  },
  {
    group: 'admissionregistration.svc.io',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    categories: ['api-extensions'],
    namespaced: false,
    pkg: 'admissionregistration',
  },
];

function build(s: Spec, hasSpec: (schema: string) => boolean): KindDef {
  const version = s.version ?? 'v1';
  const schema = s.schema ?? `io.svc.api.${s.pkg}.${version}.${s.kind}`;
  const strategy: Strategy = { ...strategyFor(s.kind), ...lifecycleFor(s.kind) };
  return {
    group: s.group ?? '',
    version,
    kind: s.kind,
    listKind: `${s.kind}List`,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    namespaced: s.namespaced,
    schema,
    status: s.status ?? false,
    scale: s.scale ?? false,
    finalize: s.finalize ?? false,
    deleteCollection: s.deleteCollection ?? true,
    nameRule: s.nameRule ?? 'subdomain',
    returnDeletedObject: s.returnDeletedObject,
    virtual: s.virtual,
    generation: s.generation ?? hasSpec(schema),
    columns: columnsFor(s.kind),
    selectableFields: s.fields ?? {},
    strategy,
  };
}

/** All built-in kinds; `hasSpec` tells whether a schema has a `spec` field (drives generation). */
export function builtinKinds(hasSpec: (schema: string) => boolean): KindDef[] {
  return SPECS.map((s) => build(s, hasSpec));
}
