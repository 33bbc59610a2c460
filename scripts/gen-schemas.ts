/**
 * Derives the compact schema set `src/schema/generated/definitions.json` from the reference
 * OpenAPI v2 document and the reference .proto files (../shared/reference, read at generation
 * time only; nothing of it is copied into the project).
 *
 *     bun scripts/gen-schemas.ts [--ref <reference dir>] [--out <output dir>] [--verbose]
 *
 * What it does:
 *  - takes the closure of the definitions referenced by the served kinds (ROOTS) and their List kinds;
 *  - maps every definition onto the model of src/schema/types.ts: `$ref` → {type:'ref'},
 *    `x-kubernetes-*` → listType, listMapKeys, mapType, patchStrategy, patchMergeKey, unions, gvk;
 *    special definitions (IntOrString, Quantity, Time, MicroTime, RawExtension, FieldsV1, JSON);
 *  - rebrands: `io.k8s.` → `io.svc.`, groups `*.k8s.io` → `*.svc.io`, `x-kubernetes-` → `x-svc-`
 *    (also the property names of JSONSchemaProps);
 *  - flowcontrol is served as v1 but taken from the swagger's v1beta3 definitions (renamed v1);
 *    admissionregistration ValidatingAdmissionPolicy(Binding) is absent from the swagger and is
 *    derived from the v1 .proto messages;
 *  - attaches `protoTag`, `protoType` and `protoMessage` to each property from the .proto message
 *    of the same name (and `protoMessage` to each definition that has one), `keepZero` to the
 *    scalar fields listed in KEEP_ZERO, adds the
 *    fields that the (newer) .proto messages have and the swagger lacks, and orders properties as
 *    the Go struct declares them (the .proto lists fields in struct order): `kind`, `apiVersion`
 *    first for kinds, then the proto order, then swagger-only properties. This is the order Go's
 *    JSON encoder writes them in.
 *
 * Inlined Go structs (`json:",inline"`, e.g. EphemeralContainer.EphemeralContainerCommon,
 * Volume.VolumeSource, Probe.ProbeHandler) are flattened in JSON but nested in protobuf; their
 * fields get no protoTag but a `protoPath`: the field numbers from the parent message down
 * (Probe.exec: [1, 1], NamedRuleWithOperations.apiGroups: [2, 2, 1]). They are listed with
 * --verbose, as are the fields whose JSON and protobuf shapes differ (Duration, Verbs, ...).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Definitions, Schema } from '../src/schema/types';

const argv = process.argv.slice(2);
const VERBOSE = argv.includes('--verbose');
const refArg = argv.indexOf('--ref');
const REF = refArg >= 0 && argv[refArg + 1] ? path.resolve(argv[refArg + 1]!) : path.resolve(import.meta.dir, '../../shared/reference');
/**
 * Repositories (their checkouts, e.g. from `fetch github:kubernetes/api` and
 * `github:kubernetes/kube-aggregator`) whose `generated.proto` files give the field numbers of the
 * groups the reference folder has no .proto for (storage, scheduling, autoscaling, ...). A
 * package the reference folder has is always taken from there.
 */
const PROTO_FROM: string[] = argv.flatMap((a, i) => (argv[i - 1] === '--proto-from' ? [path.resolve(a)] : []));
const outArg = argv.indexOf('--out');
const OUT_DIR =
  outArg >= 0 && argv[outArg + 1] ? path.resolve(argv[outArg + 1]!) : path.resolve(import.meta.dir, '../src/schema/generated');

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

const CORE = 'io.k8s.api.core.v1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Served kinds (internal k8s naming, after the flowcontrol/admissionregistration version rename). */
const KINDS: string[] = [
  ...[
    'Namespace',
    'ConfigMap',
    'Secret',
    'Pod',
    'Node',
    'Service',
    'Event',
    'ServiceAccount',
    'LimitRange',
    'ResourceQuota',
    'Binding',
    'Endpoints',
    'PersistentVolume',
    'PersistentVolumeClaim',
    'ReplicationController',
    'PodTemplate',
    'ComponentStatus',
  ].map((k) => `${CORE}.${k}`),
  'io.k8s.api.coordination.v1.Lease',
  ...['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ControllerRevision'].map((k) => `io.k8s.api.apps.v1.${k}`),
  'io.k8s.api.batch.v1.Job',
  'io.k8s.api.batch.v1.CronJob',
  ...['NetworkPolicy', 'Ingress', 'IngressClass'].map((k) => `io.k8s.api.networking.v1.${k}`),
  'io.k8s.api.policy.v1.PodDisruptionBudget',
  'io.k8s.api.policy.v1.Eviction',
  ...['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].map((k) => `io.k8s.api.rbac.v1.${k}`),
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  ...['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'].map(
    (k) => `io.k8s.api.authorization.v1.${k}`,
  ),
  'io.k8s.api.authentication.v1.SelfSubjectReview',
  'io.k8s.api.authentication.v1.TokenRequest',
  'io.k8s.api.flowcontrol.v1.FlowSchema',
  'io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration',
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy',
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
  'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  'io.k8s.api.authentication.v1.TokenReview',
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler',
  'io.k8s.api.autoscaling.v1.Scale',
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
  'io.k8s.api.certificates.v1.CertificateSigningRequest',
  'io.k8s.api.discovery.v1.EndpointSlice',
  'io.k8s.api.events.v1.Event',
  'io.k8s.api.networking.v1.IPAddress',
  'io.k8s.api.networking.v1.ServiceCIDR',
  'io.k8s.api.node.v1.RuntimeClass',
  'io.k8s.api.scheduling.v1.PriorityClass',
  ...['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment'].map((k) => `io.k8s.api.storage.v1.${k}`),
  'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService',
];

/** meta/v1 kinds; those missing from both the swagger and the protos are skipped (Table). */
const META_KINDS = [
  'Status',
  'DeleteOptions',
  'WatchEvent',
  'APIResourceList',
  'APIGroupList',
  'APIGroup',
  'APIVersions',
  'Table',
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
].map((k) => `${META}.${k}`);

/** Served group/versions (rebranded): gvk entries of shared meta kinds are limited to these. */
const SERVED_GV = [
  '/v1',
  'coordination.svc.io/v1',
  'apps/v1',
  'batch/v1',
  'networking.svc.io/v1',
  'policy/v1',
  'rbac.authorization.svc.io/v1',
  'authorization.svc.io/v1',
  'authentication.svc.io/v1',
  'apiextensions.svc.io/v1',
  'flowcontrol.apiserver.svc.io/v1',
  'admissionregistration.svc.io/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'certificates.svc.io/v1',
  'discovery.svc.io/v1',
  'events.svc.io/v1',
  'node.svc.io/v1',
  'scheduling.svc.io/v1',
  'storage.svc.io/v1',
  'apiregistration.svc.io/v1',
];
/** Kinds that exist in every served group/version. */
const EVERY_GV_KINDS = new Set(['DeleteOptions', 'WatchEvent']);

/** Definitions replaced wholesale. */
const SPECIAL: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'int-or-string' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'quantity' },
  [`${META}.Time`]: { type: 'string', format: 'date-time' },
  [`${META}.MicroTime`]: { type: 'string', format: 'date-time' },
  [`${META}.FieldsV1`]: { type: 'any' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'any' },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': { type: 'any' },
};

/** Go-inlined struct fields of messages that the swagger lacks (proto-derived definitions). */
const PROTO_INLINE = new Set([
  'io.k8s.api.admissionregistration.v1.NamedRuleWithOperations.ruleWithOperations',
  'io.k8s.api.admissionregistration.v1.RuleWithOperations.rule',
]);

/**
 * `required` of proto-derived definitions (fields whose json tag lacks omitempty), as the
 * upstream OpenAPI has them; `*List` messages require `items`. Others: `+required` markers.
 */
const PROTO_REQUIRED: Record<string, string[]> = {
  'io.k8s.api.admissionregistration.v1.Validation': ['expression'],
  'io.k8s.api.admissionregistration.v1.Variable': ['name', 'expression'],
  'io.k8s.api.admissionregistration.v1.AuditAnnotation': ['key', 'valueExpression'],
  'io.k8s.api.admissionregistration.v1.ExpressionWarning': ['fieldRef', 'warning'],
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec': [],
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec': [],
};

/** gvk of proto-derived kinds (internal naming → rebranded group, version, kind). */
const PROTO_GVK: Record<string, { group: string; version: string; kind: string }> = {
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy': {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
  },
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyList': {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyList',
  },
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding': {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
  },
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingList': {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBindingList',
  },
  [`${META}.PartialObjectMetadata`]: { group: 'meta.svc.io', version: 'v1', kind: 'PartialObjectMetadata' },
  [`${META}.PartialObjectMetadataList`]: { group: 'meta.svc.io', version: 'v1', kind: 'PartialObjectMetadataList' },
};

/**
 * Scalar fields whose zero value is a set value (`keepZero`), by definition (internal naming):
 * Go pointer fields (`*int32`, `*bool`, `*string`, pointers to string enums) and value fields
 * without `omitempty` that the OpenAPI does not list as required. Neither the OpenAPI nor the
 * .proto files tell a Go pointer from a value field; these facts are from the Go type
 * definitions (k8s.io/api, k8s.io/apimachinery). Fields that only the (newer) .proto files have
 * and whose Go form is not known here are listed too: keeping a zero is the safe side. Go's
 * protobuf encoding writes every value field, set or not; a decoder drops a zero scalar of a
 * field not listed here (and not required), as Go's JSON encoding omits it.
 */
const KEEP_ZERO: Record<string, string[]> = {
  'io.k8s.api.admissionregistration.v1.MatchResources': ['matchPolicy'],
  'io.k8s.api.admissionregistration.v1.NamedRuleWithOperations': ['scope'],
  'io.k8s.api.admissionregistration.v1.ParamRef': ['parameterNotFoundAction'],
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec': ['failurePolicy'],
  'io.k8s.api.admissionregistration.v1.Validation': ['reason'],
  'io.k8s.api.apps.v1.DaemonSetSpec': ['revisionHistoryLimit'],
  'io.k8s.api.apps.v1.DaemonSetStatus': ['collisionCount'],
  'io.k8s.api.apps.v1.DeploymentSpec': ['replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds'],
  'io.k8s.api.apps.v1.DeploymentStatus': ['terminatingReplicas', 'collisionCount'],
  'io.k8s.api.apps.v1.ReplicaSetSpec': ['replicas'],
  'io.k8s.api.apps.v1.ReplicaSetStatus': ['terminatingReplicas'],
  'io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy': ['partition'],
  'io.k8s.api.apps.v1.StatefulSetSpec': ['replicas', 'revisionHistoryLimit'],
  'io.k8s.api.apps.v1.StatefulSetStatus': ['collisionCount', 'availableReplicas'],
  'io.k8s.api.batch.v1.CronJobSpec': [
    'timeZone',
    'startingDeadlineSeconds',
    'suspend',
    'successfulJobsHistoryLimit',
    'failedJobsHistoryLimit',
  ],
  'io.k8s.api.batch.v1.JobSpec': [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
    'manualSelector',
    'ttlSecondsAfterFinished',
    'completionMode',
    'suspend',
    'podReplacementPolicy',
    'managedBy',
  ],
  'io.k8s.api.batch.v1.JobStatus': ['terminating', 'failedIndexes', 'ready'],
  'io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement': ['containerName'],
  'io.k8s.api.batch.v1.SuccessPolicyRule': ['succeededIndexes', 'succeededCount'],
  'io.k8s.api.coordination.v1.LeaseSpec': ['holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'strategy', 'preferredHolder'],
  'io.k8s.api.core.v1.AppArmorProfile': ['localhostProfile'],
  'io.k8s.api.core.v1.AzureDiskVolumeSource': ['cachingMode', 'fsType', 'readOnly', 'kind'],
  'io.k8s.api.core.v1.AzureFilePersistentVolumeSource': ['secretNamespace'],
  'io.k8s.api.core.v1.CSIVolumeSource': ['readOnly', 'fsType'],
  'io.k8s.api.core.v1.ClientIPConfig': ['timeoutSeconds'],
  'io.k8s.api.core.v1.ClusterTrustBundleProjection': ['name', 'signerName', 'optional', 'path', 'user'],
  'io.k8s.api.core.v1.ConfigMap': ['immutable'],
  'io.k8s.api.core.v1.ConfigMapEnvSource': ['optional'],
  'io.k8s.api.core.v1.ConfigMapKeySelector': ['optional'],
  'io.k8s.api.core.v1.ConfigMapProjection': ['optional'],
  'io.k8s.api.core.v1.ConfigMapVolumeSource': ['defaultMode', 'optional', 'defaultUser'],
  'io.k8s.api.core.v1.Container': ['restartPolicy'],
  'io.k8s.api.core.v1.ContainerExtendedResourceRequest': ['containerName', 'resourceName', 'requestName'],
  'io.k8s.api.core.v1.ContainerStatus': ['started', 'stopSignal'],
  'io.k8s.api.core.v1.DownwardAPIVolumeFile': ['mode', 'user'],
  'io.k8s.api.core.v1.DownwardAPIVolumeSource': ['defaultMode', 'defaultUser'],
  'io.k8s.api.core.v1.EmptyDirVolumeSource': ['mode'],
  'io.k8s.api.core.v1.EndpointAddress': ['nodeName'],
  'io.k8s.api.core.v1.EndpointPort': ['appProtocol'],
  'io.k8s.api.core.v1.EphemeralContainer': ['restartPolicy'],
  'io.k8s.api.core.v1.Event': ['reportingComponent', 'reportingInstance'],
  'io.k8s.api.core.v1.FCVolumeSource': ['lun'],
  'io.k8s.api.core.v1.FileKeySelector': ['optional'],
  'io.k8s.api.core.v1.GRPCAction': ['service', 'mode'],
  'io.k8s.api.core.v1.GlusterfsPersistentVolumeSource': ['endpointsNamespace'],
  'io.k8s.api.core.v1.HTTPGetAction': ['protocol'],
  'io.k8s.api.core.v1.HostAlias': ['ip'],
  'io.k8s.api.core.v1.HostIP': ['ip'],
  'io.k8s.api.core.v1.HostPathVolumeSource': ['type'],
  'io.k8s.api.core.v1.ISCSIPersistentVolumeSource': ['initiatorName'],
  'io.k8s.api.core.v1.ISCSIVolumeSource': ['initiatorName'],
  'io.k8s.api.core.v1.KeyToPath': ['mode', 'user'],
  'io.k8s.api.core.v1.Lifecycle': ['stopSignal'],
  'io.k8s.api.core.v1.LinuxContainerUser': ['uid', 'gid'],
  'io.k8s.api.core.v1.LoadBalancerIngress': ['ipMode'],
  'io.k8s.api.core.v1.LocalVolumeSource': ['fsType'],
  'io.k8s.api.core.v1.ModifyVolumeStatus': ['status'],
  'io.k8s.api.core.v1.NodeFeatures': ['supplementalGroupsPolicy'],
  'io.k8s.api.core.v1.NodeRuntimeHandler': ['name'],
  'io.k8s.api.core.v1.NodeRuntimeHandlerFeatures': ['recursiveReadOnlyMounts', 'userNamespaces'],
  'io.k8s.api.core.v1.NodeSwapStatus': ['capacity'],
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec': ['storageClassName', 'volumeMode', 'volumeAttributesClassName'],
  'io.k8s.api.core.v1.PersistentVolumeClaimStatus': ['currentVolumeAttributesClassName'],
  'io.k8s.api.core.v1.PersistentVolumeSpec': ['volumeMode', 'volumeAttributesClassName'],
  'io.k8s.api.core.v1.PodCertificateProjection': ['maxExpirationSeconds', 'user'],
  'io.k8s.api.core.v1.PodDNSConfigOption': ['value'],
  'io.k8s.api.core.v1.PodExtendedResourceClaimStatus': ['resourceClaimName'],
  'io.k8s.api.core.v1.PodIP': ['ip'],
  'io.k8s.api.core.v1.PodResourceClaim': ['resourceClaimName', 'resourceClaimTemplateName'],
  'io.k8s.api.core.v1.PodResourceClaimStatus': ['resourceClaimName'],
  'io.k8s.api.core.v1.PodSchedulingGroup': ['podGroupName'],
  'io.k8s.api.core.v1.PodSecurityContext': [
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'supplementalGroupsPolicy',
    'fsGroup',
    'fsGroupChangePolicy',
    'seLinuxChangePolicy',
  ],
  'io.k8s.api.core.v1.PodSpec': [
    'terminationGracePeriodSeconds',
    'activeDeadlineSeconds',
    'automountServiceAccountToken',
    'shareProcessNamespace',
    'priority',
    'runtimeClassName',
    'enableServiceLinks',
    'preemptionPolicy',
    'setHostnameAsFQDN',
    'hostUsers',
    'hostnameOverride',
  ],
  'io.k8s.api.core.v1.PortStatus': ['error'],
  'io.k8s.api.core.v1.Probe': ['terminationGracePeriodSeconds'],
  'io.k8s.api.core.v1.ProjectedVolumeSource': ['defaultMode', 'defaultUser'],
  'io.k8s.api.core.v1.ReplicationControllerSpec': ['replicas'],
  'io.k8s.api.core.v1.ResourceHealth': ['resourceID', 'message'],
  'io.k8s.api.core.v1.SeccompProfile': ['localhostProfile'],
  'io.k8s.api.core.v1.Secret': ['immutable'],
  'io.k8s.api.core.v1.SecretEnvSource': ['optional'],
  'io.k8s.api.core.v1.SecretKeySelector': ['optional'],
  'io.k8s.api.core.v1.SecretProjection': ['optional'],
  'io.k8s.api.core.v1.SecretVolumeSource': ['defaultMode', 'optional', 'defaultUser'],
  'io.k8s.api.core.v1.SecurityContext': [
    'privileged',
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'readOnlyRootFilesystem',
    'allowPrivilegeEscalation',
    'procMount',
  ],
  'io.k8s.api.core.v1.ServiceAccount': ['automountServiceAccountToken'],
  'io.k8s.api.core.v1.ServiceAccountTokenProjection': ['expirationSeconds', 'user'],
  'io.k8s.api.core.v1.ServicePort': ['appProtocol'],
  'io.k8s.api.core.v1.ServiceSpec': [
    'ipFamilyPolicy',
    'allocateLoadBalancerNodePorts',
    'loadBalancerClass',
    'internalTrafficPolicy',
    'trafficDistribution',
  ],
  'io.k8s.api.core.v1.SleepAction': ['seconds'],
  'io.k8s.api.core.v1.Toleration': ['tolerationSeconds'],
  'io.k8s.api.core.v1.TopologySpreadConstraint': ['minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy'],
  'io.k8s.api.core.v1.TypedLocalObjectReference': ['apiGroup'],
  'io.k8s.api.core.v1.TypedObjectReference': ['apiGroup', 'namespace'],
  'io.k8s.api.core.v1.VolumeHealthCondition': ['message'],
  'io.k8s.api.core.v1.VolumeMount': ['recursiveReadOnly', 'mountPropagation'],
  'io.k8s.api.core.v1.VolumeMountStatus': ['name', 'mountPath', 'recursiveReadOnly'],
  'io.k8s.api.core.v1.WindowsSecurityContextOptions': ['gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess'],
  'io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': ['nominalConcurrencyShares', 'lendablePercent'],
  'io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': ['nominalConcurrencyShares', 'lendablePercent', 'borrowingLimitPercent'],
  'io.k8s.api.discovery.v1.Endpoint': ['hostname', 'nodeName', 'zone'],
  'io.k8s.api.discovery.v1.EndpointConditions': ['ready', 'serving', 'terminating'],
  'io.k8s.api.discovery.v1.EndpointPort': ['name', 'protocol', 'port', 'appProtocol'],
  'io.k8s.api.networking.v1.HTTPIngressPath': ['pathType'],
  'io.k8s.api.networking.v1.IngressClassParametersReference': ['apiGroup', 'scope', 'namespace'],
  'io.k8s.api.networking.v1.IngressPortStatus': ['error'],
  'io.k8s.api.networking.v1.IngressSpec': ['ingressClassName'],
  'io.k8s.api.networking.v1.NetworkPolicyPort': ['protocol', 'endPort'],
  'io.k8s.api.policy.v1.PodDisruptionBudgetSpec': ['unhealthyPodEvictionPolicy'],
  'io.k8s.api.storage.v1.CSIDriverSpec': [
    'attachRequired',
    'podInfoOnMount',
    'fsGroupPolicy',
    'storageCapacity',
    'requiresRepublish',
    'seLinuxMount',
    'nodeAllocatableUpdatePeriodSeconds',
  ],
  'io.k8s.api.storage.v1.StorageClass': ['reclaimPolicy', 'allowVolumeExpansion', 'volumeBindingMode'],
  'io.k8s.api.storage.v1.TokenRequest': ['expirationSeconds'],
  'io.k8s.api.storage.v1.VolumeAttachmentSource': ['persistentVolumeName'],
  'io.k8s.api.storage.v1.VolumeError': ['errorCode'],
  'io.k8s.api.storage.v1.VolumeNodeResources': ['count'],
  [`${META}.DeleteOptions`]: [
    'gracePeriodSeconds',
    'orphanDependents',
    'propagationPolicy',
    'ignoreStoreReadErrorWithClusterBreakingPotential',
  ],
  [`${META}.ListMeta`]: ['remainingItemCount'],
  [`${META}.ObjectMeta`]: ['deletionGracePeriodSeconds'],
  [`${META}.OwnerReference`]: ['controller', 'blockOwnerDeletion'],
  [`${META}.Preconditions`]: ['uid', 'resourceVersion'],
};

// ---------------------------------------------------------------------------------------------
// Naming
// ---------------------------------------------------------------------------------------------

/** Swagger (1.28) name of an internal name: flowcontrol v1 comes from v1beta3. */
function swaggerName(name: string): string {
  return name.replace(/^io\.k8s\.api\.flowcontrol\.v1\./, 'io.k8s.api.flowcontrol.v1beta3.');
}

/** Internal name of a swagger name: flowcontrol v1beta3 is renamed v1. */
function internalName(swagger: string): string {
  return swagger.replace(/^io\.k8s\.api\.flowcontrol\.v1beta3\./, 'io.k8s.api.flowcontrol.v1.');
}

function rebrandDef(name: string): string {
  return name.replace(/^io\.k8s\./, 'io.svc.');
}

function rebrandGroup(group: string): string {
  return group.endsWith('.k8s.io') ? `${group.slice(0, -'.k8s.io'.length)}.svc.io` : group;
}

function rebrandProp(name: string): string {
  return name.startsWith('x-kubernetes-') ? `x-svc-${name.slice('x-kubernetes-'.length)}` : name;
}

function lowerFirst(s: string): string {
  return s.length > 0 ? s[0]!.toLowerCase() + s.slice(1) : s;
}

// ---------------------------------------------------------------------------------------------
// Proto parsing
// ---------------------------------------------------------------------------------------------

interface ProtoField {
  name: string;
  tag: number;
  label: 'optional' | 'repeated' | 'map';
  /** Scalar type name or fully qualified message name (internal naming, e.g. io.k8s.api.core.v1.Pod). */
  type: string;
  /** Map value type (label 'map'). */
  mapValue?: string;
  markers: string[];
}

interface ProtoMessage {
  name: string;
  fields: ProtoField[];
  markers: string[];
}

const PROTO_SCALARS = new Set(['string', 'int32', 'int64', 'bool', 'bytes', 'double', 'float', 'uint32', 'uint64', 'sint32', 'sint64']);

function qualify(type: string, pkg: string): string {
  if (PROTO_SCALARS.has(type)) return type;
  if (type.startsWith('.')) return protoPkgToDef(type.slice(1));
  return `${protoPkgToDef(pkg)}.${type}`;
}

/** `k8s.io.api.core.v1` → `io.k8s.api.core.v1`; `k8s.io.apiextensions_apiserver.…` → `io.k8s.apiextensions-apiserver.…`. */
function protoPkgToDef(pkg: string): string {
  return pkg.startsWith('k8s.io.') ? `io.k8s.${pkg.slice('k8s.io.'.length).replaceAll('_', '-')}` : pkg;
}

/** Proto field names whose JSON name is not the lower-cased first letter (JSONSchemaProps' `$ref`, `$schema`). */
const PROTO_JSON_NAMES: Record<string, string> = {
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.ref': '$ref',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.schema': '$schema',
};

/**
 * The JSON name (rebranded) of a proto field: `xKubernetesListType` → `x-svc-list-type` (the
 * extension keys of JSONSchemaProps), the overrides above, else the name with a lower-case first letter.
 */
function protoJsonName(msg: string, field: string): string {
  const override = PROTO_JSON_NAMES[`${msg}.${field}`];
  if (override) return override;
  if (/^xKubernetes[A-Z]/.test(field)) {
    return rebrandProp(
      `x-kubernetes-${field.slice('xKubernetes'.length).replace(/[A-Z]/g, (c, i) => `${i === 0 ? '' : '-'}${c.toLowerCase()}`)}`,
    );
  }
  return lowerFirst(field);
}

/** Every `generated.proto` under `root` (a repository checkout), skipping vendored copies. */
function generatedProtos(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== 'vendor' && !e.name.startsWith('.')) walk(path.join(dir, e.name));
      else if (e.name === 'generated.proto') found.push(path.join(dir, e.name));
    }
  };
  walk(root);
  return found.sort();
}

/**
 * The messages of the .proto files in `dir` (`own`) and of the `extra` files whose packages `dir`
 * lacks (`extra`): the reference folder's package wins over a checkout's copy of the same package.
 */
function parseProtos(dir: string, extra: string[] = []): { own: Map<string, ProtoMessage>; extra: Map<string, ProtoMessage> } {
  const own = new Map<string, ProtoMessage>();
  const more = new Map<string, ProtoMessage>();
  const files = fs
    .readdirSync(dir)
    .sort()
    .filter((f) => f.endsWith('.proto'))
    .map((f) => path.join(dir, f));
  const referencePackages = new Set<string>();
  for (const file of [...files, ...extra]) {
    const text = fs.readFileSync(file, 'utf8');
    const pkgName = /^package\s+([\w.]+);/m.exec(text)?.[1] ?? '';
    const fromReference = files.includes(file);
    if (fromReference) referencePackages.add(pkgName);
    else if (referencePackages.has(pkgName)) continue;
    const out = fromReference ? own : more;
    let pkg = '';
    let current: ProtoMessage | null = null;
    let markers: string[] = [];
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '') {
        markers = [];
        continue;
      }
      const marker = /^\/\/\s*(\+.*)$/.exec(line);
      if (marker) {
        markers.push(marker[1]!);
        continue;
      }
      if (line.startsWith('//') || line.startsWith('/*') || line.startsWith('*')) continue;
      let m = /^package\s+([\w.]+);/.exec(line);
      if (m) {
        pkg = m[1]!;
        continue;
      }
      m = /^message\s+(\w+)\s*\{/.exec(line);
      if (m) {
        if (current) throw new Error(`${file}: nested message ${m[1]} not supported`);
        current = { name: `${protoPkgToDef(pkg)}.${m[1]}`, fields: [], markers };
        markers = [];
        if (line.endsWith('}')) {
          out.set(current.name, current);
          current = null;
        }
        continue;
      }
      if (line === '}') {
        if (current) out.set(current.name, current);
        current = null;
        markers = [];
        continue;
      }
      if (!current) {
        markers = [];
        continue;
      }
      m = /^(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)/.exec(line);
      if (m) {
        current.fields.push({
          name: m[3]!,
          tag: Number(m[4]),
          label: m[1] === 'repeated' ? 'repeated' : 'optional',
          type: qualify(m[2]!, pkg),
          markers,
        });
        markers = [];
        continue;
      }
      m = /^map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)/.exec(line);
      if (m) {
        if (m[1] !== 'string') throw new Error(`${file}: map key ${m[1]} not supported`);
        current.fields.push({ name: m[3]!, tag: Number(m[4]), label: 'map', type: 'map', mapValue: qualify(m[2]!, pkg), markers });
        markers = [];
        continue;
      }
      throw new Error(`${file}: cannot parse line in ${current.name}: ${line}`);
    }
  }
  return { own, extra: more };
}

function marker(markers: string[], key: string): string | undefined {
  for (const m of markers) if (m.startsWith(`+${key}=`)) return m.slice(key.length + 2);
  return undefined;
}

function markerAll(markers: string[], key: string): string[] {
  return markers.filter((m) => m.startsWith(`+${key}=`)).map((m) => m.slice(key.length + 2));
}

// ---------------------------------------------------------------------------------------------
// Conversion
// ---------------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: raw swagger JSON
type Raw = Record<string, any>;

const swagger: Raw = JSON.parse(fs.readFileSync(path.join(REF, 'openapi/swagger-1.28.json'), 'utf8')).definitions;
const parsed = parseProtos(path.join(REF, 'proto'), PROTO_FROM.flatMap(generatedProtos));
/**
 * The messages of the groups the reference folder has no .proto for, as facts (name, field
 * numbers, types, markers) kept in scripts/proto-facts.json: read from `--proto-from` checkouts
 * when given (and the file rewritten with the messages used), else from the file.
 */
const PROTO_FACTS = path.resolve(import.meta.dir, 'proto-facts.json');
const extraProtos: Map<string, ProtoMessage> =
  PROTO_FROM.length > 0
    ? parsed.extra
    : new Map((JSON.parse(fs.readFileSync(PROTO_FACTS, 'utf8')) as ProtoMessage[]).map((m) => [m.name, m]));
const usedExtra = new Set<string>();
const protos = {
  get(name: string): ProtoMessage | undefined {
    const own = parsed.own.get(name);
    if (own) return own;
    const m = extraProtos.get(name);
    if (m) usedExtra.add(name);
    return m;
  },
};

/** Output definitions, internal naming; refs inside are already rebranded. */
const out = new Map<string, Schema>();
const queue: string[] = [];
const notes: string[] = [];

function want(name: string): string {
  if (!out.has(name) && !queue.includes(name)) queue.push(name);
  return rebrandDef(name);
}

function refTo(swaggerRef: string): string {
  return want(internalName(swaggerRef.replace('#/definitions/', '')));
}

function protoMessage(name: string): ProtoMessage | undefined {
  return protos.get(name) ?? protos.get(name.replace(/^io\.k8s\.api\.flowcontrol\.v1\./, 'io.k8s.api.flowcontrol.v1beta3.'));
}

function gvkOf(raw: Raw[]): { group: string; version: string; kind: string }[] {
  const all = raw.map((g) => ({ group: rebrandGroup(String(g.group)), version: String(g.version), kind: String(g.kind) }));
  const served = all.filter((g) => SERVED_GV.includes(`${g.group}/${g.version}`));
  const kind = all[0]?.kind ?? '';
  if (EVERY_GV_KINDS.has(kind)) {
    return SERVED_GV.map((gv) => {
      const [group, version] = gv.split('/');
      return { group: group!, version: version!, kind };
    });
  }
  return served.length > 0 ? served : all;
}

function fromSwagger(s: Raw, where: string): Schema {
  if (s.$ref) {
    const r: Schema & Raw = { type: 'ref', ref: refTo(s.$ref) };
    if (s['x-kubernetes-patch-strategy']) r.patchStrategy = s['x-kubernetes-patch-strategy'];
    if (s['x-kubernetes-map-type']) r.mapType = s['x-kubernetes-map-type'];
    return r;
  }
  const base: Raw = {};
  if (s['x-kubernetes-preserve-unknown-fields']) base.preserveUnknown = true;
  if (s['x-kubernetes-embedded-resource']) base.embedded = true;
  if (s.nullable) base.nullable = true;
  if (Array.isArray(s.enum)) base.enum = s.enum;
  if (s['x-kubernetes-int-or-string']) return { ...base, type: 'int-or-string' };
  switch (s.type) {
    case undefined:
      if (s.properties || s.additionalProperties) return fromSwagger({ ...s, type: 'object' }, where);
      return { ...base, type: 'any' };
    case 'object': {
      const o: Raw = { type: 'object', ...base };
      if (s.properties) {
        o.properties = {};
        for (const [k, v] of Object.entries<Raw>(s.properties)) o.properties[rebrandProp(k)] = fromSwagger(v, `${where}.${k}`);
      }
      if (s.additionalProperties !== undefined) {
        o.additionalProperties = s.additionalProperties === true ? { type: 'any' } : fromSwagger(s.additionalProperties, `${where}[*]`);
      }
      // An object with neither (e.g. CustomResourceSubresourceStatus, a Go struct{}): a struct without fields.
      if (!s.properties && s.additionalProperties === undefined && !o.preserveUnknown) o.properties = {};
      if (Array.isArray(s.required) && s.required.length > 0) o.required = s.required.map(rebrandProp);
      if (s['x-kubernetes-map-type']) o.mapType = s['x-kubernetes-map-type'];
      if (s['x-kubernetes-unions']) o.unions = s['x-kubernetes-unions'];
      if (s['x-kubernetes-group-version-kind']) o.gvk = gvkOf(s['x-kubernetes-group-version-kind']);
      return o as Schema;
    }
    case 'array': {
      const a: Raw = { type: 'array', ...base, items: fromSwagger(s.items ?? {}, `${where}[]`) };
      if (s['x-kubernetes-list-type']) a.listType = s['x-kubernetes-list-type'];
      if (s['x-kubernetes-list-map-keys']) a.listMapKeys = s['x-kubernetes-list-map-keys'];
      if (s['x-kubernetes-patch-strategy']) a.patchStrategy = s['x-kubernetes-patch-strategy'];
      if (s['x-kubernetes-patch-merge-key']) a.patchMergeKey = s['x-kubernetes-patch-merge-key'];
      return a as Schema;
    }
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean': {
      const r: Raw = { type: s.type, ...base };
      if (s.format === 'int-or-string') return { ...base, type: 'int-or-string' };
      if (s.format) r.format = s.format;
      if (s['x-kubernetes-patch-strategy']) r.patchStrategy = s['x-kubernetes-patch-strategy'];
      return r as Schema;
    }
    default:
      throw new Error(`${where}: unsupported swagger type ${s.type}`);
  }
}

/** Schema of a proto field's value type (not its repetition). */
function protoTypeSchema(type: string, where: string): Schema {
  switch (type) {
    case 'string':
      return { type: 'string' };
    case 'bool':
      return { type: 'boolean' };
    case 'int32':
    case 'sint32':
    case 'uint32':
      return { type: 'integer', format: 'int32' };
    case 'int64':
    case 'sint64':
    case 'uint64':
      return { type: 'integer', format: 'int64' };
    case 'double':
      return { type: 'number', format: 'double' };
    case 'float':
      return { type: 'number', format: 'float' };
    case 'bytes':
      return { type: 'string', format: 'byte' };
    default: {
      // A Go named slice (`type AttestationValue []string`) is a message with one repeated
      // `items` field in protobuf, and a plain array in JSON.
      const wrapper = protoMessage(type);
      const only = wrapper?.fields.length === 1 ? wrapper.fields[0] : undefined;
      if (only && only.name === 'items' && only.label === 'repeated') return { type: 'array', items: protoTypeSchema(only.type, where) };
      if (!available(type)) {
        throw new Error(`${where}: message ${type} is in neither the swagger nor the protos`);
      }
      return { type: 'ref', ref: want(type) };
    }
  }
}

function available(type: string): boolean {
  return !!SPECIAL[type] || !!swagger[swaggerName(type)] || !!protoMessage(type);
}

/** `protoType` and `protoMessage` of a proto field: the type of its value (of each item, of each map value). */
function protoFacts(f: ProtoField): { protoType: string; protoMessage?: string } {
  const t = f.label === 'map' ? f.mapValue! : f.type;
  if (PROTO_SCALARS.has(t)) return { protoType: t };
  return { protoType: 'message', protoMessage: rebrandDef(t) };
}

/** Notes a field whose JSON schema does not have the plain shape of its proto type. */
function checkShape(f: ProtoField, s: Schema, where: string): void {
  const item =
    s.type === 'array' && f.label === 'repeated' ? s.items : s.type === 'object' && f.label === 'map' ? s.additionalProperties! : s;
  const shapeOk =
    f.label === 'optional' ? s.type !== 'array' && !(s.type === 'object' && !s.properties && s.additionalProperties) : item !== s;
  const t = f.label === 'map' ? f.mapValue! : f.type;
  let typeOk: boolean;
  switch (item.type) {
    case 'string':
      typeOk = item.format === 'byte' ? t === 'bytes' : t === 'string';
      break;
    case 'integer':
      typeOk = /int(32|64)$/.test(t);
      break;
    case 'number':
      typeOk = t === 'double' || t === 'float';
      break;
    case 'boolean':
      typeOk = t === 'bool';
      break;
    default:
      typeOk = !PROTO_SCALARS.has(t);
  }
  if (!shapeOk || !typeOk) notes.push(`${where}: JSON ${JSON.stringify(s).slice(0, 80)} vs proto ${f.label} ${t}`);
}

function protoFieldSchema(f: ProtoField, where: string): Schema {
  const m = f.markers;
  let s: Raw;
  if (f.label === 'map') {
    s = { type: 'object', additionalProperties: protoTypeSchema(f.mapValue!, where) };
    const mt = marker(m, 'mapType');
    if (mt) s.mapType = mt;
  } else if (f.label === 'repeated') {
    s = { type: 'array', items: protoTypeSchema(f.type, where) };
    const lt = marker(m, 'listType');
    if (lt) s.listType = lt;
    const keys = markerAll(m, 'listMapKey');
    if (keys.length > 0) s.listMapKeys = keys;
    const ps = marker(m, 'patchStrategy');
    if (ps) s.patchStrategy = ps;
    const pk = marker(m, 'patchMergeKey');
    if (pk) s.patchMergeKey = pk;
  } else {
    s = protoTypeSchema(f.type, where);
    const ps = marker(m, 'patchStrategy');
    if (ps) s.patchStrategy = ps;
    const mt = marker(m, 'mapType');
    if (mt) s.mapType = mt;
  }
  s.protoTag = f.tag;
  Object.assign(s, protoFacts(f));
  return s as Schema;
}

/** Field names a message contributes to JSON: its own, with inlined messages flattened. */
function jsonFieldNames(msg: ProtoMessage): string[] {
  const names: string[] = [];
  for (const f of msg.fields) {
    const inner = PROTO_INLINE.has(`${msg.name}.${f.name}`) ? protoMessage(f.type) : undefined;
    if (inner) names.push(...jsonFieldNames(inner));
    else names.push(protoJsonName(msg.name, f.name));
  }
  return names;
}

interface Placed {
  name: string;
  schema: Schema;
}

/**
 * Properties of `msg` in declaration order. `known` holds the swagger properties (if any) by
 * JSON name; a proto field matches one by exact or case-insensitive name. A message-typed field
 * without a match whose message's fields are mostly swagger properties is an inlined struct.
 */
function placeProto(
  msg: ProtoMessage,
  known: Map<string, Schema> | null,
  where: string,
  inlineDepth: number,
  pathPrefix: number[] = [],
): Placed[] {
  const placed: Placed[] = [];
  const lower = new Map<string, string>();
  if (known) for (const k of known.keys()) lower.set(k.toLowerCase(), k);
  for (const f of msg.fields) {
    const json = protoJsonName(msg.name, f.name);
    const match = known ? (known.has(json) ? json : lower.get(json.toLowerCase())) : undefined;
    if (match !== undefined) {
      const s = known!.get(match)!;
      if (inlineDepth === 0) (s as Raw).protoTag = f.tag;
      else (s as Raw).protoPath = [...pathPrefix, f.tag];
      Object.assign(s, protoFacts(f));
      checkShape(f, s, `${where}.${match}`);
      placed.push({ name: match, schema: s });
      continue;
    }
    const inner = f.label === 'optional' && !PROTO_SCALARS.has(f.type) ? protoMessage(f.type) : undefined;
    let inline = false;
    if (inner) {
      if (known) {
        const names = jsonFieldNames(inner);
        const hits = names.filter((n) => known.has(n) || lower.has(n.toLowerCase())).length;
        inline = names.length > 0 && hits * 2 >= names.length;
      } else {
        inline = PROTO_INLINE.has(`${msg.name}.${f.name}`);
      }
    }
    if (inline && inner) {
      notes.push(`${where}: inlined ${f.name} (${inner.name}, proto field ${f.tag}); its fields carry a protoPath`);
      placed.push(...placeProto(inner, known, `${where}.${f.name}`, inlineDepth + 1, [...pathPrefix, f.tag]));
      continue;
    }
    const missing = [f.type, f.mapValue].find((t) => t && t !== 'map' && !PROTO_SCALARS.has(t) && !available(t));
    if (missing) {
      notes.push(`${where}: skipped proto field ${f.name} = ${f.tag}: message ${missing} is in neither the swagger nor the protos`);
      continue;
    }
    const s = protoFieldSchema(f, `${where}.${f.name}`);
    if (inlineDepth > 0) {
      delete (s as Raw).protoTag;
      (s as Raw).protoPath = [...pathPrefix, f.tag];
    }
    const jsonName = protoJsonName(msg.name, f.name);
    if (known) notes.push(`${where}: added ${jsonName} from proto (field ${f.tag})`);
    placed.push({ name: jsonName, schema: s });
  }
  return placed;
}

function isKind(name: string): boolean {
  return KINDS.includes(name) || KINDS.includes(name.replace(/List$/, '')) || META_KINDS.includes(name) || name in PROTO_GVK;
}

function convert(name: string): Schema {
  if (SPECIAL[name]) return SPECIAL[name];
  const sw: Raw | undefined = swagger[swaggerName(name)];
  const msg = protoMessage(name);
  if (sw) {
    const s = fromSwagger(sw, name) as Raw;
    if (s.type !== 'object' || !s.properties) return s as Schema;
    if (s.gvk && /^io\.k8s\.api\.flowcontrol\.v1\./.test(name)) {
      for (const g of s.gvk) g.version = 'v1';
    }
    if (!msg) {
      if (!/\.apiextensions\./.test(name)) notes.push(`${name}: no proto message; no protoTags`);
      return s as Schema;
    }
    const known = new Map<string, Schema>(Object.entries(s.properties));
    const placed = placeProto(msg, known, name, 0);
    s.protoMessage = rebrandDef(name);
    const props: Record<string, Schema> = {};
    for (const k of ['kind', 'apiVersion']) if (known.has(k) && s.gvk) props[k] = known.get(k)!;
    for (const p of placed) if (!(p.name in props)) props[p.name] = p.schema;
    for (const [k, v] of known) if (!(k in props)) props[k] = v;
    s.properties = props;
    return s as Schema;
  }
  if (!msg) throw new Error(`${name}: in neither the swagger nor the protos`);
  const o: Raw = { type: 'object', properties: {} };
  if (isKind(name)) {
    o.properties.kind = { type: 'string' };
    o.properties.apiVersion = { type: 'string' };
  }
  for (const p of placeProto(msg, null, name, 0)) o.properties[p.name] = p.schema;
  const req = PROTO_REQUIRED[name] ?? (name.endsWith('List') && o.properties.items ? ['items'] : undefined);
  const required = req ?? msg.fields.filter((f) => f.markers.includes('+required')).map((f) => lowerFirst(f.name));
  if (required.length > 0) o.required = required;
  if (marker(msg.markers, 'structType') === 'atomic' || marker(msg.markers, 'mapType') === 'atomic') o.mapType = 'atomic';
  if (PROTO_GVK[name]) o.gvk = [PROTO_GVK[name]];
  o.protoMessage = rebrandDef(name);
  notes.push(`${name}: derived from proto (not in the swagger)`);
  return o as Schema;
}

// Roots: kinds, their lists, meta kinds.
for (const k of KINDS) {
  want(k);
  if (swagger[swaggerName(`${k}List`)] || protoMessage(`${k}List`)) want(`${k}List`);
}
for (const k of META_KINDS) {
  if (swagger[k] || protoMessage(k)) want(k);
  else notes.push(`${k}: in neither the swagger nor the protos; skipped`);
}

while (queue.length > 0) {
  const name = queue.shift()!;
  if (out.has(name)) continue;
  out.set(name, convert(name));
}

for (const [def, fields] of Object.entries(KEEP_ZERO)) {
  const d = out.get(def);
  if (d?.type !== 'object' || !d.properties) throw new Error(`KEEP_ZERO: no struct ${def}`);
  for (const f of fields) {
    const p = d.properties[f];
    if (!p) throw new Error(`KEEP_ZERO: ${def} has no field ${f}`);
    if (!p.protoType || p.protoType === 'message') throw new Error(`KEEP_ZERO: ${def}.${f} is not a scalar`);
    p.keepZero = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

const names = [...out.keys()].sort();
const defs: Definitions = {};
for (const n of names) defs[rebrandDef(n)] = out.get(n)!;
// Every ref must resolve.
const refs: string[] = [];
JSON.stringify(defs, (k, v) => {
  if (k === 'ref' && typeof v === 'string') refs.push(v);
  return v;
});
for (const r of refs) if (!defs[r]) throw new Error(`dangling ref ${r}`);

/** Formats the JSON as the project's Biome config does (so `biome check` passes on the output). */
function formatJson(text: string): string {
  const root = path.resolve(import.meta.dir, '..');
  const biome = path.join(root, 'node_modules/.bin/biome');
  const r = Bun.spawnSync([biome, 'format', '--stdin-file-path=src/schema/generated/definitions.json'], {
    cwd: root,
    stdin: new TextEncoder().encode(text),
  });
  if (r.exitCode !== 0) throw new Error(`biome format failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

fs.mkdirSync(OUT_DIR, { recursive: true });
const body = names.map((n) => `${JSON.stringify(rebrandDef(n))}:${JSON.stringify(defs[rebrandDef(n)])}`).join(',\n');
const json = formatJson(`{\n${body}\n}\n`);
fs.writeFileSync(path.join(OUT_DIR, 'definitions.json'), json);
fs.writeFileSync(
  path.join(OUT_DIR, 'README.md'),
  [
    '# Generated schemas — do not edit by hand',
    '',
    '`definitions.json` is generated by `bun scripts/gen-schemas.ts` from the reference OpenAPI',
    '(`../shared/reference/openapi/swagger-1.28.json`) and protobuf schemas (`../shared/reference/proto/*.proto`;',
    'the groups it has no .proto for from checkouts of kubernetes/api and kubernetes/kube-aggregator).',
    'Change the generator and regenerate instead; hand-written defaults live in `src/schema/overlays.ts`.',
    '',
    "`descriptions.json` (each definition's and property's documentation, published in /openapi/v2 and",
    '/openapi/v3 for `kubectl explain`) is generated by `bun scripts/gen-descriptions.ts` from the',
    'models of the installed `@kubernetes/client-node` (the reference swagger above has its prose',
    'removed). Rerun it after `gen-schemas.ts` or after upgrading `@kubernetes/client-node`:',
    '',
    '    bun scripts/gen-schemas.ts --proto-from <kubernetes/api> --proto-from <kubernetes/kube-aggregator> \\',
    '      && bun scripts/gen-descriptions.ts',
    '',
  ].join('\n'),
);

if (PROTO_FROM.length > 0) {
  const facts = [...usedExtra].sort().map((n) => extraProtos.get(n)!);
  fs.writeFileSync(PROTO_FACTS, formatJson(JSON.stringify(facts)));
}

if (VERBOSE) for (const n of notes) console.log(n);
console.log(`definitions: ${names.length}, ${json.length} bytes → ${path.relative(process.cwd(), path.join(OUT_DIR, 'definitions.json'))}`);
