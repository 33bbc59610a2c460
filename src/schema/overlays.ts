/**
 * Hand-written static defaults, as data: the unconditional part of the reference's defaulting
 * (SetDefaults_* in pkg/apis/{core,apps,networking,storage,discovery,rbac,flowcontrol,admissionregistration}/v1 and
 * apiextensions v1, plus the declarative `+default=` markers of the API types).
 *
 * Each entry sets `default` on one property of one definition; `SchemaSet` applies it (deep-cloned)
 * whenever the field is absent from an object of that definition, wherever the definition occurs
 * (e.g. PodSpec defaults apply inside every pod template too, as upstream). A default object is
 * itself defaulted, so `DeploymentSpec.strategy: {}` then gets `type: RollingUpdate`.
 *
 * Only defaults that depend on nothing else belong here; the conditional ones are code in
 * defaulters.ts (container imagePullPolicy; the Pod-only enableServiceLinks, requests from limits
 * and hostPort; emptyDir volumes; service ports and traffic policies; deployment, daemon set and
 * stateful set update strategies; the Job-only JobSpec defaults;
 * network policy types; node allocatable; replication controller selector and labels). Not handled yet:
 *  - pod-level resources defaulting; loadBalancer ingress ipMode VIP.
 *  - Namespace: label `kubernetes.io/metadata.name` = name; status.phase Active (upstream
 *    SetDefaults_NamespaceStatus; here the namespace strategy sets it).
 *  - LimitRangeItem (type Container) default/defaultRequest from max/default/min.
 *  - rbac Subject.apiGroup: rbac.authorization.svc.io for User/Group, "" for ServiceAccount.
 *  - CRD: names.singular = lowercase kind, names.listKind = kind + "List", status.storedVersions from the
 *    storage version, conversion.conversionReviewVersions [v1] for Webhook.
 *  - ConfigMap.data = {} when nil (invisible: omitted from JSON when empty); LocalObjectReference.name ""
 *    (invisible likewise).
 * None for: Ingress, IngressClass (its parameters' scope Cluster is above), IPAddress, ServiceCIDR,
 * RuntimeClass, CSINode, CSIStorageCapacity, VolumeAttachment, Namespace, Lease, LimitRange, ResourceQuota, Event, PodDisruptionBudget, Eviction.
 */
import type { DefName } from './types';

export interface Overlay {
  def: DefName;
  field: string;
  default: unknown;
}

const CORE = 'io.svc.api.core.v1';
const APPS = 'io.svc.api.apps.v1';
const BATCH = 'io.svc.api.batch.v1';
const NET = 'io.svc.api.networking.v1';
const RBAC = 'io.svc.api.rbac.v1';
const FLOW = 'io.svc.api.flowcontrol.v1';
const ADM = 'io.svc.api.admissionregistration.v1';
const STORAGE = 'io.svc.api.storage.v1';
const DISCOVERY = 'io.svc.api.discovery.v1';
const APIEXT = 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1';

/** 0644, the default file mode of secret/configMap/downwardAPI/projected volumes. */
const MODE_0644 = 0o644;

export const overlays: Overlay[] = [
  // core/v1 — containers
  { def: `${CORE}.Container`, field: 'terminationMessagePath', default: '/dev/termination-log' },
  { def: `${CORE}.Container`, field: 'terminationMessagePolicy', default: 'File' },
  { def: `${CORE}.EphemeralContainer`, field: 'terminationMessagePath', default: '/dev/termination-log' },
  { def: `${CORE}.EphemeralContainer`, field: 'terminationMessagePolicy', default: 'File' },
  { def: `${CORE}.ContainerPort`, field: 'protocol', default: 'TCP' },
  { def: `${CORE}.Probe`, field: 'timeoutSeconds', default: 1 },
  { def: `${CORE}.Probe`, field: 'periodSeconds', default: 10 },
  { def: `${CORE}.Probe`, field: 'successThreshold', default: 1 },
  { def: `${CORE}.Probe`, field: 'failureThreshold', default: 3 },
  { def: `${CORE}.HTTPGetAction`, field: 'path', default: '/' },
  { def: `${CORE}.HTTPGetAction`, field: 'scheme', default: 'HTTP' },
  { def: `${CORE}.GRPCAction`, field: 'service', default: '' },
  { def: `${CORE}.ObjectFieldSelector`, field: 'apiVersion', default: 'v1' },
  { def: `${CORE}.FileKeySelector`, field: 'optional', default: false },

  // core/v1 — pod spec (applies to pod templates as well)
  { def: `${CORE}.PodSpec`, field: 'restartPolicy', default: 'Always' },
  { def: `${CORE}.PodSpec`, field: 'dnsPolicy', default: 'ClusterFirst' },
  { def: `${CORE}.PodSpec`, field: 'schedulerName', default: 'default-scheduler' },
  { def: `${CORE}.PodSpec`, field: 'terminationGracePeriodSeconds', default: 30 },
  { def: `${CORE}.PodSpec`, field: 'securityContext', default: {} },

  // core/v1 — volumes
  { def: `${CORE}.SecretVolumeSource`, field: 'defaultMode', default: MODE_0644 },
  { def: `${CORE}.ConfigMapVolumeSource`, field: 'defaultMode', default: MODE_0644 },
  { def: `${CORE}.DownwardAPIVolumeSource`, field: 'defaultMode', default: MODE_0644 },
  { def: `${CORE}.ProjectedVolumeSource`, field: 'defaultMode', default: MODE_0644 },
  { def: `${CORE}.ServiceAccountTokenProjection`, field: 'expirationSeconds', default: 3600 },
  { def: `${CORE}.HostPathVolumeSource`, field: 'type', default: '' },
  { def: `${CORE}.ISCSIVolumeSource`, field: 'iscsiInterface', default: 'default' },
  { def: `${CORE}.ISCSIPersistentVolumeSource`, field: 'iscsiInterface', default: 'default' },
  { def: `${CORE}.RBDVolumeSource`, field: 'pool', default: 'rbd' },
  { def: `${CORE}.RBDVolumeSource`, field: 'user', default: 'admin' },
  { def: `${CORE}.RBDVolumeSource`, field: 'keyring', default: '/etc/ceph/keyring' },
  { def: `${CORE}.RBDPersistentVolumeSource`, field: 'pool', default: 'rbd' },
  { def: `${CORE}.RBDPersistentVolumeSource`, field: 'user', default: 'admin' },
  { def: `${CORE}.RBDPersistentVolumeSource`, field: 'keyring', default: '/etc/ceph/keyring' },
  { def: `${CORE}.ScaleIOVolumeSource`, field: 'storageMode', default: 'ThinProvisioned' },
  { def: `${CORE}.ScaleIOVolumeSource`, field: 'fsType', default: 'xfs' },
  { def: `${CORE}.ScaleIOPersistentVolumeSource`, field: 'storageMode', default: 'ThinProvisioned' },
  { def: `${CORE}.ScaleIOPersistentVolumeSource`, field: 'fsType', default: 'xfs' },
  { def: `${CORE}.AzureDiskVolumeSource`, field: 'cachingMode', default: 'ReadWrite' },
  { def: `${CORE}.AzureDiskVolumeSource`, field: 'fsType', default: 'ext4' },
  { def: `${CORE}.AzureDiskVolumeSource`, field: 'readOnly', default: false },
  { def: `${CORE}.AzureDiskVolumeSource`, field: 'kind', default: 'Shared' },

  // core/v1 — persistent volumes and claims (claims in StatefulSet volumeClaimTemplates included, as upstream)
  { def: `${CORE}.PersistentVolume`, field: 'status', default: {} },
  { def: `${CORE}.PersistentVolumeStatus`, field: 'phase', default: 'Pending' },
  { def: `${CORE}.PersistentVolumeSpec`, field: 'persistentVolumeReclaimPolicy', default: 'Retain' },
  { def: `${CORE}.PersistentVolumeSpec`, field: 'volumeMode', default: 'Filesystem' },
  { def: `${CORE}.PersistentVolumeClaim`, field: 'status', default: {} },
  { def: `${CORE}.PersistentVolumeClaimStatus`, field: 'phase', default: 'Pending' },
  { def: `${CORE}.PersistentVolumeClaimSpec`, field: 'volumeMode', default: 'Filesystem' },

  // core/v1 — services, endpoints, secrets, replication controllers
  { def: `${CORE}.ServiceSpec`, field: 'type', default: 'ClusterIP' },
  { def: `${CORE}.ServiceSpec`, field: 'sessionAffinity', default: 'None' },
  { def: `${CORE}.ServicePort`, field: 'protocol', default: 'TCP' },
  { def: `${CORE}.EndpointPort`, field: 'protocol', default: 'TCP' },
  { def: `${CORE}.Secret`, field: 'type', default: 'Opaque' },
  { def: `${CORE}.ReplicationControllerSpec`, field: 'replicas', default: 1 },

  // apps/v1
  { def: `${APPS}.DeploymentSpec`, field: 'replicas', default: 1 },
  { def: `${APPS}.DeploymentSpec`, field: 'revisionHistoryLimit', default: 10 },
  { def: `${APPS}.DeploymentSpec`, field: 'progressDeadlineSeconds', default: 600 },
  { def: `${APPS}.DeploymentSpec`, field: 'strategy', default: {} },
  { def: `${APPS}.DeploymentStrategy`, field: 'type', default: 'RollingUpdate' },
  { def: `${APPS}.ReplicaSetSpec`, field: 'replicas', default: 1 },
  { def: `${APPS}.StatefulSetSpec`, field: 'replicas', default: 1 },
  { def: `${APPS}.StatefulSetSpec`, field: 'revisionHistoryLimit', default: 10 },
  { def: `${APPS}.StatefulSetSpec`, field: 'podManagementPolicy', default: 'OrderedReady' },
  { def: `${APPS}.StatefulSetSpec`, field: 'persistentVolumeClaimRetentionPolicy', default: {} },
  { def: `${APPS}.StatefulSetPersistentVolumeClaimRetentionPolicy`, field: 'whenDeleted', default: 'Retain' },
  { def: `${APPS}.StatefulSetPersistentVolumeClaimRetentionPolicy`, field: 'whenScaled', default: 'Retain' },
  // Not a default: a value field without omitempty in the reference, so always written (0).
  { def: `${APPS}.StatefulSetStatus`, field: 'availableReplicas', default: 0 },
  { def: `${APPS}.DaemonSetSpec`, field: 'revisionHistoryLimit', default: 10 },
  { def: `${APPS}.DaemonSetSpec`, field: 'updateStrategy', default: {} },
  { def: `${APPS}.DaemonSetUpdateStrategy`, field: 'type', default: 'RollingUpdate' },

  // batch/v1 (JobSpec defaults are Job-only, see above)
  { def: `${BATCH}.PodFailurePolicyOnPodConditionsPattern`, field: 'status', default: 'True' },
  { def: `${BATCH}.CronJobSpec`, field: 'concurrencyPolicy', default: 'Allow' },
  { def: `${BATCH}.CronJobSpec`, field: 'suspend', default: false },
  { def: `${BATCH}.CronJobSpec`, field: 'successfulJobsHistoryLimit', default: 3 },
  { def: `${BATCH}.CronJobSpec`, field: 'failedJobsHistoryLimit', default: 1 },

  // networking/v1
  { def: `${NET}.NetworkPolicyPort`, field: 'protocol', default: 'TCP' },
  { def: `${NET}.IngressClassParametersReference`, field: 'scope', default: 'Cluster' },

  // storage/v1 (SetDefaults_StorageClass, SetDefaults_CSIDriver)
  { def: `${STORAGE}.StorageClass`, field: 'reclaimPolicy', default: 'Delete' },
  { def: `${STORAGE}.StorageClass`, field: 'volumeBindingMode', default: 'Immediate' },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'attachRequired', default: true },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'podInfoOnMount', default: false },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'storageCapacity', default: false },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'fsGroupPolicy', default: 'ReadWriteOnceWithFSType' },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'volumeLifecycleModes', default: ['Persistent'] },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'requiresRepublish', default: false },
  { def: `${STORAGE}.CSIDriverSpec`, field: 'seLinuxMount', default: false },

  // discovery/v1 (SetDefaults_EndpointPort)
  { def: `${DISCOVERY}.EndpointPort`, field: 'name', default: '' },
  { def: `${DISCOVERY}.EndpointPort`, field: 'protocol', default: 'TCP' },

  // rbac/v1 (RoleRef occurs only in RoleBinding and ClusterRoleBinding)
  { def: `${RBAC}.RoleRef`, field: 'apiGroup', default: 'rbac.authorization.svc.io' },

  // flowcontrol/v1
  { def: `${FLOW}.FlowSchemaSpec`, field: 'matchingPrecedence', default: 1000 },
  { def: `${FLOW}.LimitedPriorityLevelConfiguration`, field: 'nominalConcurrencyShares', default: 30 },
  { def: `${FLOW}.LimitedPriorityLevelConfiguration`, field: 'lendablePercent', default: 0 },
  { def: `${FLOW}.ExemptPriorityLevelConfiguration`, field: 'nominalConcurrencyShares', default: 0 },
  { def: `${FLOW}.ExemptPriorityLevelConfiguration`, field: 'lendablePercent', default: 0 },
  { def: `${FLOW}.QueuingConfiguration`, field: 'handSize', default: 8 },
  { def: `${FLOW}.QueuingConfiguration`, field: 'queues', default: 64 },
  { def: `${FLOW}.QueuingConfiguration`, field: 'queueLengthLimit', default: 50 },

  // admissionregistration/v1
  { def: `${ADM}.ValidatingAdmissionPolicySpec`, field: 'failurePolicy', default: 'Fail' },
  { def: `${ADM}.MatchResources`, field: 'matchPolicy', default: 'Equivalent' },
  { def: `${ADM}.MatchResources`, field: 'namespaceSelector', default: {} },
  { def: `${ADM}.MatchResources`, field: 'objectSelector', default: {} },
  { def: `${ADM}.NamedRuleWithOperations`, field: 'scope', default: '*' },
  // admissionregistration/v1 webhook configurations (SetDefaults_ValidatingWebhook, SetDefaults_MutatingWebhook, SetDefaults_Rule)
  ...(['ValidatingWebhook', 'MutatingWebhook'] as const).flatMap((w): Overlay[] => [
    { def: `${ADM}.${w}`, field: 'failurePolicy', default: 'Fail' },
    { def: `${ADM}.${w}`, field: 'matchPolicy', default: 'Equivalent' },
    { def: `${ADM}.${w}`, field: 'namespaceSelector', default: {} },
    { def: `${ADM}.${w}`, field: 'objectSelector', default: {} },
    { def: `${ADM}.${w}`, field: 'timeoutSeconds', default: 10 },
  ]),
  { def: `${ADM}.MutatingWebhook`, field: 'reinvocationPolicy', default: 'Never' },
  { def: `${ADM}.RuleWithOperations`, field: 'scope', default: '*' },
  { def: `${ADM}.ServiceReference`, field: 'port', default: 443 },
  // scheduling/v1 (SetDefaults_PriorityClass)
  { def: 'io.svc.api.scheduling.v1.PriorityClass', field: 'preemptionPolicy', default: 'PreemptLowerPriority' },
  // apiregistration/v1 (SetDefaults_ServiceReference)
  { def: 'io.svc.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference', field: 'port', default: 443 },

  // apiextensions/v1
  { def: `${APIEXT}.CustomResourceDefinitionSpec`, field: 'conversion', default: { strategy: 'None' } },
  { def: `${APIEXT}.ServiceReference`, field: 'port', default: 443 },

  // autoscaling/v1 and v2 (the v2 CPU default when no metric is given: src/kinds/validation/autoscaling.ts)
  { def: 'io.svc.api.autoscaling.v1.HorizontalPodAutoscalerSpec', field: 'minReplicas', default: 1 },
  { def: 'io.svc.api.autoscaling.v2.HorizontalPodAutoscalerSpec', field: 'minReplicas', default: 1 },
];
