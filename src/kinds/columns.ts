/**
 * Table columns per kind, as kubectl shows them (the reference's server-side printers). A kind
 * without an entry gets the default table: Name and Created At.
 *
 * The reference server always prints tables "wide" (every column, priority 1 ones included; the
 * client hides those unless -o wide), so cells here never clip. Objects are the stored (v1) JSON;
 * where the reference prints the internal form, the cells read the v1 fields it converts from
 * (podIP/podIPs, clusterIP/clusterIPs, lastState, stringData, ...), and fields that v1 defaulting
 * always sets are read with the same defaults.
 */
import type { Obj } from '../api/meta';
import { formatQuantity, parseQuantity } from '../api/quantity';
import { age, type Column, since } from '../codec/table';
// Short names for the JSON readers shared with the validation rules: o = an object or {}, a = a
// list or [].
import { list as a, type J, map as o } from './validation/common';

// ---------------------------------------------------------------------------------------------
// JSON access

function s(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}
function n(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return 0;
}
function has(v: unknown): boolean {
  return v !== undefined && v !== null;
}
/** Milliseconds since the epoch of an RFC 3339 time (micro/nano fractions allowed); 0 when absent. */
function timeMs(ts: unknown): number {
  if (typeof ts !== 'string' || ts === '') return 0;
  const t = Date.parse(ts.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(t) ? 0 : t;
}
// ---------------------------------------------------------------------------------------------
// Shared formatting (labels, selectors, quantities, int-or-string)

/** labels.FormatLabels: sorted k=v pairs, "<none>" when empty. */
export function formatLabels(m: unknown): string {
  const keys = Object.keys(o(m)).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${s(o(m)[k])}`).join(',');
}

/**
 * labels.Selector.String() of metav1.LabelSelectorAsSelector: requirements sorted by key, joined by
 * ",". A missing or empty selector prints as ""; an invalid one returns null.
 */
export function labelSelectorString(sel: unknown): string | null {
  if (!has(sel)) return '';
  const ls = o(sel);
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(o(ls.matchLabels))) reqs.push({ key: k, text: `${k}=${s(v)}` });
  for (const e of a(ls.matchExpressions)) {
    const r = o(e);
    const key = s(r.key);
    const values = a(r.values).map(s);
    switch (r.operator) {
      case 'In':
      case 'NotIn': {
        if (values.length === 0) return null;
        const op = r.operator === 'In' ? 'in' : 'notin';
        reqs.push({ key, text: `${key} ${op} (${[...values].sort().join(',')})` });
        break;
      }
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return null;
        reqs.push({ key, text: r.operator === 'Exists' ? key : `!${key}` });
        break;
      default:
        return null;
    }
  }
  reqs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** metav1.FormatLabelSelector: "<none>" when empty, "<error>" when invalid. */
export function formatLabelSelector(sel: unknown): string {
  const str = labelSelectorString(sel);
  if (str === null) return '<error>';
  return str === '' ? '<none>' : str;
}

/** The Go %v/String() of a *metav1.LabelSelector (the generated protobuf String()). */
function labelSelectorGoString(sel: unknown): string {
  const ls = o(sel);
  const labels = o(ls.matchLabels);
  const ml = Object.keys(labels)
    .sort()
    .map((k) => `${k}: ${s(labels[k])},`)
    .join('');
  const me = a(ls.matchExpressions)
    .map((e) => {
      const r = o(e);
      return `LabelSelectorRequirement{Key:${s(r.key)},Operator:${s(r.operator)},Values:[${a(r.values).map(s).join(' ')}],},`;
    })
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${ml}},MatchExpressions:[]LabelSelectorRequirement{${me}},}`;
}

/** intstr.IntOrString.String(). */
function intOrString(v: unknown): string {
  return typeof v === 'number' ? String(Math.trunc(v)) : s(v);
}

/**
 * resource.Quantity.String(): the canonical form of a quantity ("1000m" → "1", "1.5Gi" →
 * "1536Mi", "0.5Ki" → "512", "2000" → "2k"); absent is "0", unparseable input is returned as given.
 */
export function canonicalQuantity(v: unknown): string {
  if (v === undefined || v === null || v === '') return '0';
  const text = typeof v === 'number' ? String(v) : s(v).trim();
  const q = parseQuantity(text);
  return q ? formatQuantity(q) : text;
}

/** layoutContainerCells: container names and images, comma separated. */
export function containerCells(containers: unknown): { names: string; images: string } {
  const cs = a(containers).map(o);
  return { names: cs.map((c) => s(c.name)).join(','), images: cs.map((c) => s(c.image)).join(',') };
}

// ---------------------------------------------------------------------------------------------
// Descriptions

export const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const CONTAINERS_DESCRIPTION = 'Names of each container in the template.';
export const IMAGES_DESCRIPTION = 'Images referenced by each container in the template.';

export function col(name: string, type: Column['type'], description: string, cell: Column['cell'], priority = 0): Column {
  return { name, type, description, priority, cell };
}
export const AGE: Column = col('Age', 'string', AGE_DESCRIPTION, (x, now) => age(x.metadata.creationTimestamp, now));

const spec = (x: Obj): J => o(x.spec);
const status = (x: Obj): J => o(x.status);

// ---------------------------------------------------------------------------------------------
// Pod

/** podutil.IsRestartableInitContainer: a sidecar (restartPolicy Always). */
function isRestartable(c: J | undefined): boolean {
  return c !== undefined && c.restartPolicy === 'Always';
}

export interface PodSummary {
  ready: string;
  status: string;
  restarts: string;
}

/** A container's last termination time (ms since the epoch, and as written); ms 0: none. */
interface Finish {
  ms: number;
  ts: string;
}

/** The later of `cur` and the last termination of container status `c`. */
function laterFinish(cur: Finish, c: J): Finish {
  const lastTerm = o(c.lastState).terminated;
  if (!has(lastTerm)) return cur;
  const ts = s(o(lastTerm).finishedAt);
  const ms = timeMs(ts);
  return cur.ms < ms ? { ms, ts } : cur;
}

/** printPod's Ready, Status and Restarts cells. */
export function podSummary(pod: Obj, now: number): PodSummary {
  const sp = spec(pod);
  const st = status(pod);
  const conditions = a(st.conditions).map(o);
  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = a(sp.containers).length;
  let readyContainers = 0;
  let lastRestart: Finish = { ms: 0, ts: '' };
  let lastRestartableInit: Finish = { ms: 0, ts: '' };

  const phase = s(st.phase);
  let reason = phase;
  if (s(st.reason) !== '') reason = s(st.reason);
  for (const c of conditions) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initSpecs = a(sp.initContainers).map(o);
  const initByName = new Map<string, J>();
  for (const c of initSpecs) {
    initByName.set(s(c.name), c);
    if (isRestartable(c)) totalContainers++;
  }

  let initializing = false;
  const initStatuses = a(st.initContainerStatuses).map(o);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    const state = o(c.state);
    const restartable = isRestartable(initByName.get(s(c.name)));
    restarts += n(c.restartCount);
    lastRestart = laterFinish(lastRestart, c);
    if (restartable) {
      restartableInitRestarts += n(c.restartCount);
      lastRestartableInit = laterFinish(lastRestartableInit, c);
    }
    const term = has(state.terminated) ? o(state.terminated) : undefined;
    const waiting = has(state.waiting) ? o(state.waiting) : undefined;
    if (term && n(term.exitCode) === 0) continue;
    if (restartable && c.started === true) {
      if (c.ready === true) readyContainers++;
      continue;
    }
    if (term) {
      if (s(term.reason) === '') {
        reason = n(term.signal) !== 0 ? `Init:Signal:${n(term.signal)}` : `Init:ExitCode:${n(term.exitCode)}`;
      } else {
        reason = `Init:${s(term.reason)}`;
      }
    } else if (waiting && s(waiting.reason) !== '' && waiting.reason !== 'PodInitializing') {
      reason = `Init:${s(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  const initializedTrue = conditions.find((c) => c.type === 'Initialized')?.status === 'True';
  if (!initializing || initializedTrue) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInit;
    let hasRunning = false;
    const statuses = a(st.containerStatuses).map(o);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      const state = o(c.state);
      restarts += n(c.restartCount);
      lastRestart = laterFinish(lastRestart, c);
      const term = has(state.terminated) ? o(state.terminated) : undefined;
      const waiting = has(state.waiting) ? o(state.waiting) : undefined;
      if (waiting && s(waiting.reason) !== '') {
        reason = s(waiting.reason);
      } else if (term && s(term.reason) !== '') {
        reason = s(term.reason);
      } else if (term) {
        reason = n(term.signal) !== 0 ? `Signal:${n(term.signal)}` : `ExitCode:${n(term.exitCode)}`;
      } else if (c.ready === true && has(state.running)) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // Back to "Running" if at least one container still reports running.
    if (reason === 'Completed' && hasRunning) {
      reason = conditions.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }

  const deleting = has(pod.metadata.deletionTimestamp) && pod.metadata.deletionTimestamp !== '';
  if (deleting && st.reason === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartsStr = String(restarts);
  if (restarts !== 0 && lastRestart.ms !== 0) restartsStr = `${restarts} (${since(lastRestart.ts, now)} ago)`;
  return { ready: `${readyContainers}/${totalContainers}`, status: reason, restarts: restartsStr };
}

/** The pod IP the internal form carries: podIP wins, else podIPs[0]. */
function podIP(pod: Obj): string {
  const st = status(pod);
  return s(st.podIP) || s(o(a(st.podIPs)[0]).ip);
}

function readinessGates(pod: Obj): string {
  const gates = a(spec(pod).readinessGates).map(o);
  if (gates.length === 0) return '<none>';
  const conditions = a(status(pod).conditions).map(o);
  let trueConditions = 0;
  for (const g of gates) {
    const c = conditions.find((x) => x.type === g.conditionType);
    if (c && c.status === 'True') trueConditions++;
  }
  return `${trueConditions}/${gates.length}`;
}

const POD: Column[] = [
  col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', (x, now) => podSummary(x, now).ready),
  col('Status', 'string', 'The aggregate status of the containers in this pod.', (x, now) => podSummary(x, now).status),
  col(
    'Restarts',
    'string',
    'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    (x, now) => podSummary(x, now).restarts,
  ),
  AGE,
  col('IP', 'string', 'IP address allocated to the pod. Routable at least within the cluster.', (x) => podIP(x) || '<none>', 1),
  col('Node', 'string', 'NodeName is the name of the node this pod is scheduled to.', (x) => s(spec(x).nodeName) || '<none>', 1),
  col(
    'Nominated Node',
    'string',
    'nominatedNodeName is set only when this pod preempts other pods on the node.',
    (x) => s(status(x).nominatedNodeName) || '<none>',
    1,
  ),
  col('Readiness Gates', 'string', 'If specified, all readiness gates will be evaluated for pod readiness.', readinessGates, 1),
];

// ---------------------------------------------------------------------------------------------
// Node

/** findNodeRoles: node-role.kubernetes.io/<role> label keys and the kubernetes.io/role value, sorted. */
export function nodeRoles(node: Obj): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role.length > 0) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v !== '') {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

export function nodeStatus(node: Obj): string {
  let ready: J | undefined;
  for (const c of a(status(node).conditions).map(o)) if (c.type === 'Ready') ready = c;
  const out: string[] = [];
  if (ready) out.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  else out.push('Unknown');
  if (spec(node).unschedulable === true) out.push('SchedulingDisabled');
  return out.join(',');
}

function nodeAddress(node: Obj, type: string): string {
  for (const addr of a(status(node).addresses).map(o)) if (addr.type === type) return s(addr.address);
  return '<none>';
}
const nodeInfo = (x: Obj): J => o(status(x).nodeInfo);

const NODE: Column[] = [
  col('Status', 'string', 'The status of the node', nodeStatus),
  col('Roles', 'string', 'The roles of the node', (x) => nodeRoles(x).join(',') || '<none>'),
  AGE,
  col('Version', 'string', 'Kubelet Version reported by the node.', (x) => s(nodeInfo(x).kubeletVersion)),
  col('Internal-IP', 'string', 'List of addresses reachable to the node.', (x) => nodeAddress(x, 'InternalIP'), 1),
  col('External-IP', 'string', 'List of addresses reachable to the node.', (x) => nodeAddress(x, 'ExternalIP'), 1),
  col('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release.', (x) => s(nodeInfo(x).osImage) || '<unknown>', 1),
  col(
    'Kernel-Version',
    'string',
    "Kernel Version reported by the node from 'uname -r'.",
    (x) => s(nodeInfo(x).kernelVersion) || '<unknown>',
    1,
  ),
  col(
    'Container-Runtime',
    'string',
    'ContainerRuntime Version reported by the node through runtime remote API.',
    (x) => s(nodeInfo(x).containerRuntimeVersion) || '<unknown>',
    1,
  ),
];

// ---------------------------------------------------------------------------------------------
// Service

/** Service type as the internal form has it (v1 defaulting: ClusterIP). */
function serviceType(svc: Obj): string {
  return s(spec(svc).type) || 'ClusterIP';
}

/** getServiceExternalIP (wide: load-balancer addresses are never clipped). */
export function serviceExternalIP(svc: Obj): string {
  const sp = spec(svc);
  const externalIPs = a(sp.externalIPs).map(s);
  switch (serviceType(svc)) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = new Set<string>();
      for (const ing of a(o(o(status(svc).loadBalancer)).ingress).map(o)) {
        if (s(ing.ip) !== '') lb.add(s(ing.ip));
        else if (s(ing.hostname) !== '') lb.add(s(ing.hostname));
      }
      const lbIps = [...lb].sort();
      if (externalIPs.length > 0) return [...lbIps, ...externalIPs].join(',');
      return lbIps.length > 0 ? lbIps.join(',') : '<pending>';
    }
    case 'ExternalName':
      return s(sp.externalName);
  }
  return '<unknown>';
}

/** makePortString: port/protocol or port:nodePort/protocol, "<none>" without ports. */
export function servicePorts(svc: Obj): string {
  const pieces = a(spec(svc).ports)
    .map(o)
    .map((p) => {
      const proto = s(p.protocol) || 'TCP';
      return n(p.nodePort) > 0 ? `${n(p.port)}:${n(p.nodePort)}/${proto}` : `${n(p.port)}/${proto}`;
    });
  return pieces.length > 0 ? pieces.join(',') : '<none>';
}

function clusterIP(svc: Obj): string {
  const sp = spec(svc);
  return s(sp.clusterIP) || s(a(sp.clusterIPs)[0]) || '<none>';
}

const SERVICE: Column[] = [
  col('Type', 'string', 'type determines how the Service is exposed.', serviceType),
  col('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is usually assigned randomly.', clusterIP),
  col(
    'External-IP',
    'string',
    'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic.',
    serviceExternalIP,
  ),
  col('Port(s)', 'string', 'The list of ports that are exposed by this service.', servicePorts),
  AGE,
  col(
    'Selector',
    'string',
    'Route service traffic to pods with label keys and values matching this selector.',
    (x) => formatLabels(spec(x).selector),
    1,
  ),
];

// ---------------------------------------------------------------------------------------------
// Event

function eventTimes(ev: Obj, now: number): { last: string; first: string; count: number } {
  const first = has(ev.firstTimestamp) && ev.firstTimestamp !== '' ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
  let last = has(ev.lastTimestamp) && ev.lastTimestamp !== '' ? since(ev.lastTimestamp, now) : first;
  let count = n(ev.count);
  if (has(ev.series)) {
    last = since(o(ev.series).lastObservedTime, now);
    count = n(o(ev.series).count);
  } else if (count === 0) {
    count = 1;
  }
  return { last, first, count };
}

function eventObject(ev: Obj): string {
  const io = o(ev.involvedObject);
  const kind = s(io.kind).toLowerCase();
  return s(io.name) !== '' ? `${kind}/${s(io.name)}` : kind;
}

function eventSource(ev: Obj): string {
  const src = o(ev.source);
  const component = s(src.component) || s(ev.reportingComponent);
  const instance = s(src.host) || s(ev.reportingInstance);
  return instance === '' ? component : `${component}, ${instance}`;
}

/**
 * The reference's event table has no leading Name column: Name comes last, at priority 1. This
 * list carries that Name column (format "name"); the table renderer must not add its own then.
 */
const EVENT: Column[] = [
  col(
    'Last Seen',
    'string',
    'The time at which the most recent occurrence of this event was recorded.',
    (x, now) => eventTimes(x, now).last,
  ),
  col('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future', (x) => s(x.type)),
  col(
    'Reason',
    'string',
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    (x) => s(x.reason),
  ),
  col('Object', 'string', 'The object that this event is about.', eventObject),
  col(
    'Subobject',
    'string',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.',
    (x) => s(o(x.involvedObject).fieldPath),
    1,
  ),
  col('Source', 'string', 'The component reporting this event.', eventSource, 1),
  col('Message', 'string', 'A human-readable description of the status of this operation.', (x) => s(x.message).trim()),
  col('First Seen', 'string', 'The time at which the event was first recorded.', (x, now) => eventTimes(x, now).first, 1),
  col('Count', 'string', 'The number of times this event has occurred.', (x, now) => eventTimes(x, now).count, 1),
  { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 1, cell: (x) => x.metadata.name ?? '' },
];

// ---------------------------------------------------------------------------------------------
// ResourceQuota

export function resourceQuotaCells(rq: Obj): { request: string; limit: string } {
  const hard = o(status(rq).hard);
  const used = o(status(rq).used);
  const request: string[] = [];
  const limit: string[] = [];
  for (const r of Object.keys(hard).sort()) {
    const pieces = r.split('.');
    const w = pieces.length > 1 && pieces[0] === 'limits' ? limit : request;
    w.push(`${r}: ${canonicalQuantity(used[r])}/${canonicalQuantity(hard[r])}`);
  }
  return { request: request.join(', '), limit: limit.join(', ') };
}

// ---------------------------------------------------------------------------------------------
// Workloads

/** spec.replicas as the internal form has it (v1 defaulting: 1). */
function replicas(x: Obj): number {
  return has(spec(x).replicas) ? n(spec(x).replicas) : 1;
}
const templateContainers = (x: Obj): unknown => o(o(spec(x).template).spec).containers;

const DEPLOYMENT: Column[] = [
  col('Ready', 'string', 'Number of the pod with ready state', (x) => `${n(status(x).readyReplicas)}/${replicas(x)}`),
  col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', (x) =>
    n(status(x).updatedReplicas),
  ),
  col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', (x) =>
    n(status(x).availableReplicas),
  ),
  AGE,
  col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => containerCells(templateContainers(x)).names, 1),
  col('Images', 'string', IMAGES_DESCRIPTION, (x) => containerCells(templateContainers(x)).images, 1),
  col('Selector', 'string', 'Label selector for pods.', (x) => labelSelectorString(spec(x).selector) ?? '<invalid>', 1),
];

const REPLICASET: Column[] = [
  col('Desired', 'integer', 'Replicas is the number of desired replicas.', replicas),
  col('Current', 'integer', 'Replicas is the most recently observed number of replicas.', (x) => n(status(x).replicas)),
  col('Ready', 'integer', 'The number of ready replicas for this replica set.', (x) => n(status(x).readyReplicas)),
  AGE,
  col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => containerCells(templateContainers(x)).names, 1),
  col('Images', 'string', IMAGES_DESCRIPTION, (x) => containerCells(templateContainers(x)).images, 1),
  col(
    'Selector',
    'string',
    'Selector is a label query over pods that should match the replica count.',
    (x) => formatLabelSelector(spec(x).selector),
    1,
  ),
];

// ---------------------------------------------------------------------------------------------
// Flow control

function missingPL(fs: Obj): string {
  for (const c of a(status(fs).conditions).map(o)) if (c.type === 'Dangling') return s(c.status);
  return '?';
}

/** The Limited section of a PriorityLevelConfiguration, with v1 defaults filled in. */
function plcLimited(x: Obj): { ncs: unknown; queues: unknown; handSize: unknown; queueLengthLimit: unknown } {
  const none = { ncs: '<none>', queues: '<none>', handSize: '<none>', queueLengthLimit: '<none>' };
  const limited = spec(x).limited;
  if (!has(limited)) return none;
  const l = o(limited);
  const out = { ...none, ncs: has(l.nominalConcurrencyShares) ? n(l.nominalConcurrencyShares) : 30 };
  const lr = o(l.limitResponse);
  if (has(lr.queuing)) {
    const q = o(lr.queuing);
    return { ...out, queues: n(q.queues) || 64, handSize: n(q.handSize) || 8, queueLengthLimit: n(q.queueLengthLimit) || 50 };
  }
  return out;
}

const FLOWSCHEMA: Column[] = [
  col('PriorityLevel', 'string', '`name` is the name of the priority level configuration being referenced', (x) =>
    s(o(spec(x).priorityLevelConfiguration).name),
  ),
  col(
    'MatchingPrecedence',
    'string',
    '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request.',
    (x) => n(spec(x).matchingPrecedence) || 1000,
  ),
  col(
    'DistinguisherMethod',
    'string',
    '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema.',
    (x) => (has(spec(x).distinguisherMethod) ? s(o(spec(x).distinguisherMethod).type) : '<none>'),
  ),
  AGE,
  col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration', missingPL),
];

const PRIORITYLEVEL: Column[] = [
  col('Type', 'string', '`type` indicates whether this priority level is subject to limitation on request execution.', (x) =>
    s(spec(x).type),
  ),
  col(
    'NominalConcurrencyShares',
    'string',
    '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.',
    (x) => plcLimited(x).ncs,
  ),
  col('Queues', 'string', '`queues` is the number of queues for this priority level.', (x) => plcLimited(x).queues),
  col(
    'HandSize',
    'string',
    '`handSize` is a small positive number that configures the shuffle sharding of requests into queues.',
    (x) => plcLimited(x).handSize,
  ),
  col(
    'QueueLengthLimit',
    'string',
    '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.',
    (x) => plcLimited(x).queueLengthLimit,
  ),
  AGE,
];

// ---------------------------------------------------------------------------------------------
// Admission

function paramRef(x: Obj): string {
  const pr = spec(x).paramRef;
  if (!has(pr)) return '<unset>';
  const p = o(pr);
  if (s(p.name) !== '') return s(p.namespace) !== '' ? `${s(p.namespace)}/${s(p.name)}` : `*/${s(p.name)}`;
  if (has(p.selector)) return labelSelectorGoString(p.selector);
  return '<unset>';
}

// ---------------------------------------------------------------------------------------------
// The table

const COLUMNS: Record<string, Column[]> = {
  Namespace: [col('Status', 'string', 'The status of the namespace', (x) => s(status(x).phase)), AGE],
  ConfigMap: [
    col(
      'Data',
      'string',
      'Data contains the configuration data.',
      (x) => Object.keys(o(x.data)).length + Object.keys(o(x.binaryData)).length,
    ),
    AGE,
  ],
  Secret: [
    col('Type', 'string', 'Used to facilitate programmatic handling of secret data.', (x) => s(x.type)),
    col(
      'Data',
      'string',
      'Data contains the secret data.',
      (x) => new Set([...Object.keys(o(x.data)), ...Object.keys(o(x.stringData))]).size,
    ),
    AGE,
  ],
  Pod: POD,
  Node: NODE,
  Service: SERVICE,
  Event: EVENT,
  ServiceAccount: [
    col(
      'Secrets',
      'string',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
      (x) => a(x.secrets).length,
    ),
    AGE,
  ],
  ResourceQuota: [
    AGE,
    col(
      'Request',
      'string',
      'Request represents a minimum amount of cpu/memory that a container may consume.',
      (x) => resourceQuotaCells(x).request,
    ),
    col(
      'Limit',
      'string',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
      (x) => resourceQuotaCells(x).limit,
    ),
  ],
  Lease: [
    col('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.', (x) => s(spec(x).holderIdentity)),
    AGE,
  ],
  Deployment: DEPLOYMENT,
  ReplicaSet: REPLICASET,
  FlowSchema: FLOWSCHEMA,
  PriorityLevelConfiguration: PRIORITYLEVEL,
  NetworkPolicy: [
    col('Pod-Selector', 'string', 'Selects the pods to which this NetworkPolicy object applies.', (x) =>
      formatLabelSelector(o(spec(x).podSelector)),
    ),
    AGE,
  ],
  PodDisruptionBudget: [
    col('Min Available', 'string', 'The minimum number of pods that must be available.', (x) =>
      has(spec(x).minAvailable) ? intOrString(spec(x).minAvailable) : 'N/A',
    ),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.', (x) =>
      has(spec(x).maxUnavailable) ? intOrString(spec(x).maxUnavailable) : 'N/A',
    ),
    col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.', (x) =>
      n(status(x).disruptionsAllowed),
    ),
    AGE,
  ],
  ValidatingAdmissionPolicy: [
    col(
      'Validations',
      'integer',
      'Validations indicates the number of validation rules defined in this configuration',
      (x) => a(spec(x).validations).length,
    ),
    col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy', (x) => {
      const pk = spec(x).paramKind;
      return has(pk) ? `${s(o(pk).apiVersion)}/${s(o(pk).kind)}` : '<unset>';
    }),
    AGE,
  ],
  ValidatingAdmissionPolicyBinding: [
    col('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to', (x) =>
      s(spec(x).policyName),
    ),
    col('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param', paramRef),
    AGE,
  ],
};

export function columnsFor(kind: string): Column[] {
  return COLUMNS[kind] ?? [];
}
