/**
 * The conditional part of the reference's defaulting (SetDefaults_* that look at other fields),
 * as code: one function per definition, run by SchemaSet.normalize wherever the definition
 * occurs (so container defaults apply inside every pod template too), after the struct's own
 * fields and static defaults (overlays.ts) are in place. Each only fills what is absent.
 */
import { isObject, type JsonObject } from '../api/meta';
import type { DefName } from './types';

const CORE = 'io.svc.api.core.v1';
const APPS = 'io.svc.api.apps.v1';
const BATCH = 'io.svc.api.batch.v1';
const NET = 'io.svc.api.networking.v1';
const FLOW = 'io.svc.api.flowcontrol.v1';
const STORAGE = 'io.svc.api.storage.v1';
const AUTOSCALING = 'io.svc.api.autoscaling.v2';

/**
 * The tag of an image reference as the reference's parsers.ParseImageName sees it: the part
 * after the last ':' of the last path component, "latest" when there is neither a tag nor a
 * digest, "" with a digest only (or an empty image).
 */
export function imageTag(image: string): string {
  if (image === '') return '';
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > slash) return name.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

/** SetDefaults_Container (and EphemeralContainer): imagePullPolicy from the image's tag. */
function container(o: JsonObject): void {
  if (o.imagePullPolicy === undefined || o.imagePullPolicy === '') {
    o.imagePullPolicy = imageTag(typeof o.image === 'string' ? o.image : '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

/** SetDefaults_ServicePort: targetPort = port when unset, 0 or "". */
function servicePort(o: JsonObject): void {
  if ((o.targetPort === undefined || o.targetPort === 0 || o.targetPort === '') && typeof o.port === 'number') o.targetPort = o.port;
}

/** SetDefaults_Service (the spec's conditional fields). */
function serviceSpec(o: JsonObject): void {
  if (o.sessionAffinity === 'None') delete o.sessionAffinityConfig;
  if (o.sessionAffinity === 'ClientIP') {
    const cfg = isObject(o.sessionAffinityConfig) ? o.sessionAffinityConfig : {};
    const ip = isObject(cfg.clientIP) ? cfg.clientIP : {};
    if (ip.timeoutSeconds === undefined) ip.timeoutSeconds = 10800;
    cfg.clientIP = ip;
    o.sessionAffinityConfig = cfg;
  }
  const type = o.type;
  const externallyAccessible =
    type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && Array.isArray(o.externalIPs) && o.externalIPs.length > 0);
  if (externallyAccessible && (o.externalTrafficPolicy === undefined || o.externalTrafficPolicy === ''))
    o.externalTrafficPolicy = 'Cluster';
  if (o.internalTrafficPolicy === undefined && (type === 'ClusterIP' || type === 'NodePort' || type === 'LoadBalancer')) {
    o.internalTrafficPolicy = 'Cluster';
  }
  if (type === 'LoadBalancer' && o.allocateLoadBalancerNodePorts === undefined) o.allocateLoadBalancerNodePorts = true;
}

/** SetDefaults_Volume: a volume with no source is an emptyDir. */
function volume(o: JsonObject): void {
  for (const k in o) if (k !== 'name') return;
  o.emptyDir = {};
}

/** SetDefaults_Deployment's strategy part: a RollingUpdate strategy gets 25% / 25%. */
function deploymentStrategy(o: JsonObject): void {
  if (o.type !== 'RollingUpdate') return;
  const ru = isObject(o.rollingUpdate) ? o.rollingUpdate : {};
  if (ru.maxUnavailable === undefined) ru.maxUnavailable = '25%';
  if (ru.maxSurge === undefined) ru.maxSurge = '25%';
  o.rollingUpdate = ru;
}

/** SetDefaults_DaemonSet's strategy part: a RollingUpdate strategy gets maxUnavailable 1, maxSurge 0. */
function daemonSetUpdateStrategy(o: JsonObject): void {
  if (o.type !== 'RollingUpdate') return;
  const ru = isObject(o.rollingUpdate) ? o.rollingUpdate : {};
  if (ru.maxUnavailable === undefined) ru.maxUnavailable = 1;
  if (ru.maxSurge === undefined) ru.maxSurge = 0;
  o.rollingUpdate = ru;
}

/**
 * SetDefaults_StatefulSet's strategy part: no type means RollingUpdate with a rollingUpdate;
 * a RollingUpdate's rollingUpdate, when there is one, gets partition 0.
 */
function statefulSetSpec(o: JsonObject): void {
  const us = isObject(o.updateStrategy) ? o.updateStrategy : {};
  o.updateStrategy = us;
  if (us.type === undefined || us.type === '') {
    us.type = 'RollingUpdate';
    if (!isObject(us.rollingUpdate)) us.rollingUpdate = {};
  }
  if (us.type === 'RollingUpdate' && isObject(us.rollingUpdate) && us.rollingUpdate.partition === undefined) us.rollingUpdate.partition = 0;
}

/**
 * SetDefaults_Job (Job objects only: a CronJob's jobTemplate keeps its JobSpec as written):
 * completions and parallelism 1 when both are unset, backoffLimit 6 (MaxInt32 with a per-index
 * limit), completionMode NonIndexed, suspend false, podReplacementPolicy (Failed with a pod
 * failure policy), manualSelector false, and the job's labels from its template's when it has none.
 */
function job(o: JsonObject): void {
  const spec = isObject(o.spec) ? o.spec : {};
  o.spec = spec;
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  if (spec.parallelism === undefined) spec.parallelism = 1;
  if (spec.backoffLimit === undefined) spec.backoffLimit = spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  const template = isObject(spec.template) ? spec.template : undefined;
  const tmeta = template && isObject(template.metadata) ? template.metadata : undefined;
  const meta = isObject(o.metadata) ? o.metadata : undefined;
  if (meta && tmeta && isObject(tmeta.labels) && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0))
    meta.labels = { ...tmeta.labels };
  if (spec.completionMode === undefined) spec.completionMode = 'NonIndexed';
  if (spec.suspend === undefined) spec.suspend = false;
  if (spec.podReplacementPolicy === undefined)
    spec.podReplacementPolicy = spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  if (spec.manualSelector === undefined) spec.manualSelector = false;
}

/** SetDefaults_NetworkPolicy: policyTypes [Ingress], plus Egress when there are egress rules. */
function networkPolicySpec(o: JsonObject): void {
  if (Array.isArray(o.policyTypes) && o.policyTypes.length > 0) return;
  const types = ['Ingress'];
  if (Array.isArray(o.egress) && o.egress.length > 0) types.push('Egress');
  o.policyTypes = types;
}

/** SetDefaults_ReplicationController: selector and labels from the template's labels when unset. */
function replicationController(o: JsonObject): void {
  const spec = isObject(o.spec) ? o.spec : undefined;
  const template = spec && isObject(spec.template) ? spec.template : undefined;
  const tmeta = template && isObject(template.metadata) ? template.metadata : undefined;
  const labels = tmeta && isObject(tmeta.labels) ? tmeta.labels : undefined;
  if (!spec || !labels || Object.keys(labels).length === 0) return;
  if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
  const meta = isObject(o.metadata) ? o.metadata : undefined;
  if (meta && (!isObject(meta.labels) || Object.keys(meta.labels).length === 0)) meta.labels = { ...labels };
}

/** SetDefaults_NodeStatus: allocatable = capacity when unset. */
function nodeStatus(o: JsonObject): void {
  if (o.allocatable === undefined && isObject(o.capacity)) o.allocatable = { ...o.capacity };
}

/**
 * SetDefaults_Pod (Pod objects only, not templates): enableServiceLinks true; each container's
 * requests default to its limits for the resources it limits; with hostNetwork, a container
 * port's hostPort defaults to its containerPort.
 */
function pod(o: JsonObject): void {
  const spec = o.spec;
  if (!isObject(spec)) return;
  if (spec.enableServiceLinks === undefined) spec.enableServiceLinks = true;
  for (const field of ['containers', 'initContainers']) {
    const cs = spec[field];
    if (!Array.isArray(cs)) continue;
    for (const c of cs) {
      if (!isObject(c)) continue;
      const res = c.resources;
      if (isObject(res) && isObject(res.limits)) {
        const req = isObject(res.requests) ? res.requests : {};
        for (const k in res.limits) if (req[k] === undefined) req[k] = res.limits[k];
        if (Object.keys(req).length > 0) res.requests = req;
      }
      if (spec.hostNetwork === true && Array.isArray(c.ports)) {
        for (const p of c.ports) if (isObject(p) && (p.hostPort === undefined || p.hostPort === 0)) p.hostPort = p.containerPort;
      }
    }
  }
}

/**
 * SetDefaults_LimitRangeItem, for items of type Container: a missing default limit comes from
 * max, a missing default request from the default limit, else from min.
 */
function limitRangeItem(o: JsonObject): void {
  if (o.type !== 'Container') return;
  const def: JsonObject = isObject(o.default) ? o.default : {};
  const req: JsonObject = isObject(o.defaultRequest) ? o.defaultRequest : {};
  if (isObject(o.max)) for (const k in o.max) if (def[k] === undefined) def[k] = o.max[k];
  for (const k in def) if (req[k] === undefined) req[k] = def[k];
  if (isObject(o.min)) for (const k in o.min) if (req[k] === undefined) req[k] = o.min[k];
  if (Object.keys(def).length > 0) o.default = def;
  if (Object.keys(req).length > 0) o.defaultRequest = req;
}

/**
 * SetDefaults_QueuingConfiguration (flowcontrol v1): Go's zero values count as unset, so an
 * explicit 0 for handSize, queues or queueLengthLimit gets the default too (8, 64, 50).
 */
function queuingConfiguration(o: JsonObject): void {
  if (o.handSize === 0) o.handSize = 8;
  if (o.queues === 0) o.queues = 64;
  if (o.queueLengthLimit === 0) o.queueLengthLimit = 50;
}

/** SetDefaults_CSIDriver's lifecycle modes: an empty list (not only an absent one) becomes [Persistent]. */
function csiDriverSpec(o: JsonObject): void {
  if (Array.isArray(o.volumeLifecycleModes) && o.volumeLifecycleModes.length === 0) o.volumeLifecycleModes = ['Persistent'];
}

/**
 * SetDefaults_HorizontalPodAutoscalerBehavior (autoscaling/v2): a behavior given in part gets the
 * rest of the default rules (GenerateHPAScaleUpRules / GenerateHPAScaleDownRules, each field
 * taken from the given rules when set): scale up with no stabilization window, selectPolicy Max
 * and policies 4 Pods and 100 Percent per 15 s; scale down with selectPolicy Max and 100 Percent
 * per 15 s (its stabilization window, when unset, is the controller's --horizontal-pod-autoscaler-downscale-stabilization).
 */
function hpaBehavior(o: JsonObject): void {
  const rules = (given: unknown, dflt: JsonObject): JsonObject => {
    if (!isObject(given)) return dflt;
    const out: JsonObject = { ...dflt };
    for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) {
      if (given[k] !== undefined && given[k] !== null) out[k] = given[k];
    }
    return out;
  };
  o.scaleUp = rules(o.scaleUp, {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  });
  o.scaleDown = rules(o.scaleDown, { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
}

export const defaulters: Record<DefName, (o: JsonObject) => void> = {
  [`${CORE}.LimitRangeItem`]: limitRangeItem,
  [`${CORE}.Container`]: container,
  [`${CORE}.EphemeralContainer`]: container,
  [`${CORE}.ServicePort`]: servicePort,
  [`${CORE}.ServiceSpec`]: serviceSpec,
  [`${CORE}.Volume`]: volume,
  [`${CORE}.NodeStatus`]: nodeStatus,
  [`${CORE}.Pod`]: pod,
  [`${CORE}.ReplicationController`]: replicationController,
  [`${APPS}.DeploymentStrategy`]: deploymentStrategy,
  [`${APPS}.DaemonSetUpdateStrategy`]: daemonSetUpdateStrategy,
  [`${APPS}.StatefulSetSpec`]: statefulSetSpec,
  [`${BATCH}.Job`]: job,
  [`${NET}.NetworkPolicySpec`]: networkPolicySpec,
  [`${FLOW}.QueuingConfiguration`]: queuingConfiguration,
  [`${STORAGE}.CSIDriverSpec`]: csiDriverSpec,
  [`${AUTOSCALING}.HorizontalPodAutoscalerBehavior`]: hpaBehavior,
};
