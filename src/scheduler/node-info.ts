/**
 * The scheduler's view of the cluster (the reference's internal cache and NodeInfo): per node,
 * its allocatable resources, labels and taints, the pods bound to it and what they request and
 * which host ports they hold. It is fed incrementally from the nodes' and pods' watch caches
 * (one event touches one node), and holds the pods the scheduler has just bound but not yet
 * seen bound (assumed), so that a burst of pods never overcommits a node.
 *
 *   pod event (bound) ──▶ addPod: node.requested += pod.requests, ports, pods
 *   schedule ──▶ assume(pod, node) ──▶ bind ──▶ watch event ──▶ addPod (the assumed entry is replaced)
 *                                   └─ bind fails ──▶ forget(pod)
 *
 * Nominated pods (preemptors waiting for their victims to go) are kept per node too: lower
 * priority pods must not take the room preemption made for them.
 */
import { isObject, type Obj } from '../api/meta';
import { addResources, emptyResources, nodeAllocatable, podRequests, type Resources } from './resources';

export interface Taint {
  key: string;
  value: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface HostPort {
  protocol: string;
  hostIP: string;
  port: number;
}

/** What the scheduler keeps of a pod (parsed once per event). */
export interface PodInfo {
  /** `<namespace>/<name>`. */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  nodeName: string;
  schedulerName: string;
  priority: number;
  preemptionPolicy: string;
  /** Creation (or start) time in ms: older pods are more important among equals. */
  startTime: number;
  deleting: boolean;
  terminal: boolean;
  gated: boolean;
  nominatedNodeName: string;
  requests: Resources;
  /** Requests with the defaults for unset cpu/memory (scoring). */
  nonZero: Resources;
  ports: HostPort[];
  nodeSelector: Record<string, string> | undefined;
  affinity: Record<string, unknown> | undefined;
  tolerations: Toleration[];
  topologySpreadConstraints: Record<string, unknown>[];
  /** No nodeName, nodeSelector, required node affinity or host ports: on a node without taints that is not cordoned, only resources decide. */
  plain: boolean;
  /** Requests of cpu and memory only (no ephemeral storage, no scalar resources), not all zero. */
  cpuMemoryOnly: boolean;
  /** The controlling owner reference (PodTopologySpread's default selector). */
  controller: { apiVersion: string; kind: string; name: string } | undefined;
  /** Has pod affinity or anti-affinity of any kind (InterPodAffinity's score reads its terms). */
  hasPodAffinity: boolean;
  /** The spec's scheduling-relevant parts as text: an update that changes it is worth retrying ('' for bound pods). */
  signature: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Parts of PodInfos that many pods have alike, made once and shared: every PodInfo is read-only
 * once made. The cache holds one PodInfo per pod for the pod's life; at 150,000 simulated pods
 * its own objects (empty labels, ports and spread constraints, requests, the default
 * tolerations kept from the decoded pod, the controller reference) were ~10 of each pod's ~52
 * heap objects. A table is cleared when it grows past a bound (the values are only shared, never
 * compared by identity).
 */
class Shared<T> {
  private readonly m = new Map<string, T>();
  constructor(private readonly bound = 4096) {}
  of(key: string, make: () => T): T {
    let v = this.m.get(key);
    if (v === undefined) {
      v = make();
      if (this.m.size >= this.bound) this.m.clear();
      this.m.set(key, v);
    }
    return v;
  }
}
const NO_LABELS: Record<string, string> = {};
const NO_PORTS: HostPort[] = [];
const NO_CONSTRAINTS: Record<string, unknown>[] = [];
const NO_TOLERATIONS: Toleration[] = [];
const sharedTolerations = new Shared<Toleration[]>();
const sharedRequests = new Shared<Resources>();
const sharedControllers = new Shared<NonNullable<PodInfo['controller']>>();
// Room for the node names of a large simulated cluster (5,000 nodes and more).
const sharedStrings = new Shared<string>(65_536);
/** Namespaces, node and scheduler names: one string each, not one per decoded pod. */
const shareString = (v: string): string => (v === '' ? v : sharedStrings.of(v, () => v));

/** Tolerations as shared copies, by their fields (a few per pod: the defaults most have). */
function tolerationsOf(v: unknown): Toleration[] {
  if (!Array.isArray(v) || v.length === 0) return NO_TOLERATIONS;
  if (v.length > 8) return v as Toleration[];
  let key = '';
  for (const t of v as Record<string, unknown>[]) {
    if (!isObject(t)) return v as Toleration[];
    key += `${str(t.key)}\u0000${str(t.operator)}\u0000${str(t.value)}\u0000${str(t.effect)}\u0000${String(t.tolerationSeconds ?? '')}\u0001`;
  }
  return sharedTolerations.of(key, () => structuredClone(v) as Toleration[]);
}

/** Requests without scalar resources, shared by their figures. */
function shareRequests(r: Resources): Resources {
  if (r.scalar.size !== 0) return r;
  return sharedRequests.of(`${r.milliCPU}/${r.memory}/${r.ephemeralStorage}`, () => r);
}

/** The pod's host ports (containers' ports with a hostPort), as the reference's GetHostPorts. */
function hostPorts(spec: Record<string, unknown>): HostPort[] {
  const out: HostPort[] = [];
  for (const c of (spec.containers ?? []) as { ports?: { hostPort?: number; protocol?: string; hostIP?: string }[] }[]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ protocol: p.protocol || 'TCP', hostIP: p.hostIP || '0.0.0.0', port: p.hostPort });
    }
  }
  return out;
}

function controllerOf(refs: unknown): PodInfo['controller'] {
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs as { apiVersion?: unknown; kind?: unknown; name?: unknown; controller?: unknown }[]) {
    if (r.controller === true) {
      const apiVersion = str(r.apiVersion);
      const kind = str(r.kind);
      const name = str(r.name);
      return sharedControllers.of(`${apiVersion}\u0000${kind}\u0000${name}`, () => ({ apiVersion, kind, name }));
    }
  }
  return undefined;
}

export function podInfo(o: Obj): PodInfo {
  const m = o.metadata;
  const spec = (isObject(o.spec) ? o.spec : {}) as Record<string, unknown>;
  const status = (isObject(o.status) ? o.status : {}) as Record<string, unknown>;
  const phase = str(status.phase);
  const start = Date.parse(str(status.startTime) || str(m.creationTimestamp));
  const nodeSelector = isObject(spec.nodeSelector) ? (spec.nodeSelector as Record<string, string>) : undefined;
  const affinity = isObject(spec.affinity) ? spec.affinity : undefined;
  const tolerations = tolerationsOf(spec.tolerations);
  const tsc =
    Array.isArray(spec.topologySpreadConstraints) && spec.topologySpreadConstraints.length > 0
      ? (spec.topologySpreadConstraints as Record<string, unknown>[])
      : NO_CONSTRAINTS;
  const labels = (m.labels && Object.keys(m.labels).length > 0 ? m.labels : NO_LABELS) as Record<string, string>;
  const requests = shareRequests(podRequests(spec));
  const nonZero = shareRequests(podRequests(spec, true));
  const found = hostPorts(spec);
  const ports = found.length > 0 ? found : NO_PORTS;
  return {
    key: `${m.namespace}/${m.name}`,
    namespace: shareString(m.namespace ?? ''),
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    labels,
    nodeName: shareString(str(spec.nodeName)),
    schedulerName: shareString(str(spec.schedulerName) || 'default-scheduler'),
    priority: typeof spec.priority === 'number' ? spec.priority : 0,
    preemptionPolicy: shareString(str(spec.preemptionPolicy) || 'PreemptLowerPriority'),
    startTime: Number.isNaN(start) ? 0 : start,
    deleting: Boolean(m.deletionTimestamp),
    terminal: phase === 'Succeeded' || phase === 'Failed',
    gated: Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0,
    nominatedNodeName: str(status.nominatedNodeName),
    requests,
    nonZero,
    ports,
    nodeSelector,
    affinity,
    tolerations,
    topologySpreadConstraints: tsc,
    controller: controllerOf(m.ownerReferences),
    hasPodAffinity: affinity !== undefined && (isObject(affinity.podAffinity) || isObject(affinity.podAntiAffinity)),
    cpuMemoryOnly: requests.ephemeralStorage === 0 && requests.scalar.size === 0 && (requests.milliCPU > 0 || requests.memory > 0),
    plain:
      !spec.nodeName &&
      nodeSelector === undefined &&
      ports.length === 0 &&
      !(affinity?.nodeAffinity as { requiredDuringSchedulingIgnoredDuringExecution?: unknown } | undefined)
        ?.requiredDuringSchedulingIgnoredDuringExecution,
    // Only the queue compares it (pending pods); bound pods' events skip the stringify.
    signature: spec.nodeName
      ? ''
      : JSON.stringify([labels, nodeSelector, affinity, tolerations, tsc, spec.containers, spec.initContainers, spec.schedulingGates]),
  };
}

/** The pod has required anti-affinity terms (other pods must check them). */
export const hasRequiredAntiAffinity = (p: PodInfo): boolean => {
  const a = p.affinity?.podAntiAffinity as { requiredDuringSchedulingIgnoredDuringExecution?: unknown[] } | undefined;
  return (a?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;
};

export class NodeInfo {
  /** The Node object is known (a pod may name a node not seen yet). */
  present = false;
  labels: Record<string, string> = {};
  taints: Taint[] = [];
  unschedulable = false;
  allocatable: Resources = emptyResources();
  allowedPods = 0;
  /**
   * allocatable - requested for cpu and memory, and pod slots left, kept as plain numbers on the
   * node: the common filter reads three fields of one object (with 5,000 nodes the nested
   * objects' cache misses were most of a filter's cost).
   */
  freeMilliCPU = 0;
  freeMemory = 0;
  freePods = 0;
  /** The same for the scores: allocatable, requested and non-zero requested cpu and memory. */
  allocMilliCPU = 0;
  allocMemory = 0;
  reqMilliCPU = 0;
  reqMemory = 0;
  nonZeroMilliCPU = 0;
  nonZeroMemory = 0;
  readonly requested: Resources = emptyResources();
  readonly nonZeroRequested: Resources = emptyResources();
  readonly pods = new Map<string, PodInfo>();
  /** The same pods by namespace (spread and affinity count one namespace's pods). */
  private readonly byNamespace = new Map<string, Map<string, PodInfo>>();
  /** `<protocol>/<port>` → host IPs holding it, with counts. */
  readonly usedPorts = new Map<string, Map<string, number>>();
  /** Scheduling-relevant node fields as text (labels, taints, allocatable, unschedulable). */
  signature = '';
  /** Bumped on every change of the node's pods (countMatching's memo). */
  private version = 0;
  private readonly counted = new Map<string, Map<string, { version: number; n: number }>>();

  constructor(readonly name: string) {}

  setNode(node: Obj): boolean {
    const spec = (isObject(node.spec) ? node.spec : {}) as { taints?: Taint[]; unschedulable?: boolean };
    const status = isObject(node.status) ? node.status : {};
    const labels = (node.metadata.labels ?? {}) as Record<string, string>;
    const sig = JSON.stringify([labels, spec.taints ?? [], spec.unschedulable === true, status.allocatable ?? {}]);
    const changed = sig !== this.signature || !this.present;
    this.present = true;
    if (!changed) return false;
    this.signature = sig;
    this.labels = labels;
    this.taints = (spec.taints ?? []).map((t) => ({ key: str(t.key), value: str(t.value), effect: str(t.effect) }));
    this.unschedulable = spec.unschedulable === true;
    const a = nodeAllocatable(status);
    this.allocatable = a.resources;
    this.allowedPods = a.pods;
    this.refreshFree();
    return true;
  }

  hasPodsIn(namespace: string): boolean {
    return this.byNamespace.has(namespace);
  }

  /** The node's pods of one namespace. */
  podsIn(namespace: string): Iterable<PodInfo> {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }

  /**
   * How many of the node's pods of `namespace` `matches` (a function of the pod alone, named by
   * `key`), counted again only after the node's pods change.
   */
  countMatching(key: string, namespace: string, matches: (q: PodInfo) => boolean): number {
    // By namespace, then key: no string built per node and pod scheduled.
    let byKey = this.counted.get(namespace);
    const memo = byKey?.get(key);
    if (memo !== undefined && memo.version === this.version) return memo.n;
    let n = 0;
    for (const q of this.podsIn(namespace)) if (matches(q)) n++;
    if (byKey === undefined) {
      if (this.counted.size >= 16) this.counted.clear();
      byKey = new Map();
      this.counted.set(namespace, byKey);
    } else if (memo === undefined && byKey.size >= 64) byKey.clear();
    byKey.set(key, { version: this.version, n });
    return n;
  }

  private refreshFree(): void {
    this.allocMilliCPU = this.allocatable.milliCPU;
    this.allocMemory = this.allocatable.memory;
    this.reqMilliCPU = this.requested.milliCPU;
    this.reqMemory = this.requested.memory;
    this.nonZeroMilliCPU = this.nonZeroRequested.milliCPU;
    this.nonZeroMemory = this.nonZeroRequested.memory;
    this.freeMilliCPU = this.allocMilliCPU - this.reqMilliCPU;
    this.freeMemory = this.allocMemory - this.reqMemory;
    this.freePods = this.allowedPods - this.pods.size;
  }

  addPod(p: PodInfo): void {
    this.version++;
    this.pods.set(p.key, p);
    let ns = this.byNamespace.get(p.namespace);
    if (!ns) {
      ns = new Map();
      this.byNamespace.set(p.namespace, ns);
    }
    ns.set(p.key, p);
    addResources(this.requested, p.requests);
    addResources(this.nonZeroRequested, p.nonZero);
    this.refreshFree();
    for (const hp of p.ports) {
      const k = `${hp.protocol}/${hp.port}`;
      let ips = this.usedPorts.get(k);
      if (!ips) {
        ips = new Map();
        this.usedPorts.set(k, ips);
      }
      ips.set(hp.hostIP, (ips.get(hp.hostIP) ?? 0) + 1);
    }
  }

  removePod(key: string): PodInfo | undefined {
    const p = this.pods.get(key);
    if (!p) return undefined;
    this.version++;
    this.pods.delete(key);
    const ns = this.byNamespace.get(p.namespace);
    ns?.delete(key);
    if (ns?.size === 0) this.byNamespace.delete(p.namespace);
    addResources(this.requested, p.requests, -1);
    addResources(this.nonZeroRequested, p.nonZero, -1);
    this.refreshFree();
    for (const hp of p.ports) {
      const k = `${hp.protocol}/${hp.port}`;
      const ips = this.usedPorts.get(k);
      const n = (ips?.get(hp.hostIP) ?? 0) - 1;
      if (n > 0) ips?.set(hp.hostIP, n);
      else ips?.delete(hp.hostIP);
      if (ips?.size === 0) this.usedPorts.delete(k);
    }
    return p;
  }

  /** A copy with the same pods (preemption's what-if). */
  clone(): NodeInfo {
    const c = new NodeInfo(this.name);
    c.present = this.present;
    c.labels = this.labels;
    c.taints = this.taints;
    c.unschedulable = this.unschedulable;
    c.allocatable = this.allocatable;
    c.allowedPods = this.allowedPods;
    c.refreshFree();
    c.signature = this.signature;
    for (const p of this.pods.values()) c.addPod(p);
    return c;
  }
}

/** The bound pods a default spread selector matches, counted per node and kept up to date (ClusterCache.spreadCounts). */
interface SpreadMemo {
  namespace: string;
  matches: (q: PodInfo) => boolean;
  perNode: Map<string, number>;
  /** The same pods per zone of the present nodes, while `zonesAt` is the cache's topology version. */
  perZone: Map<string, number> | undefined;
  zonesAt: number;
}

/** Kept counts of a default spread selector (ClusterCache.spreadCounts). Read-only. */
export interface SpreadCounts {
  /** Matching bound pods by node name. */
  perNode: ReadonlyMap<string, number>;
  /** Matching bound pods of the present nodes by their zone label ('' for none). */
  perZone(): ReadonlyMap<string, number>;
}

/** The zone label (topology.ts's ZONE): the default spread's second constraint counts per its values. */
const ZONE_LABEL = 'topology.kubernetes.io/zone';
const zoneOf = (n: NodeInfo): string => n.labels[ZONE_LABEL] ?? '';

/** Spread memos kept at most (the most recently used): each costs a selector match per pod change in its namespace. */
const SPREAD_MEMOS = 64;

export class ClusterCache {
  readonly nodes = new Map<string, NodeInfo>();
  /** Names of the present nodes, in the order filtering walks them (round robin over it). */
  readonly order: string[] = [];
  private readonly podNode = new Map<string, string>();
  private readonly assumed = new Set<string>();
  /** Bound pods with required anti-affinity terms (every pod being scheduled must respect them). */
  readonly antiAffinityPods = new Set<PodInfo>();
  /** Bound pods with pod affinity or anti-affinity of any kind (the reference's PodsWithAffinity). */
  readonly affinityPods = new Set<PodInfo>();
  /** Bound pods by namespace, then by label (`key=value`): the default spread counts look pods up here. */
  private readonly byLabel = new Map<string, Map<string, Set<PodInfo>>>();
  /** Node → pods nominated to it (preemptors), and pod → node. */
  private readonly nominated = new Map<string, Map<string, PodInfo>>();
  private readonly nominatedOf = new Map<string, string>();
  /** Spread memos by namespace and selector text, least recently used first. */
  private readonly spreadMemos = new Map<string, SpreadMemo>();
  private readonly spreadByNamespace = new Map<string, Set<SpreadMemo>>();
  /** Bumped when a node comes, goes or changes zone (the memos' zone counts are made again). */
  private topologyVersion = 0;

  private nodeInfo(name: string): NodeInfo {
    let n = this.nodes.get(name);
    if (!n) {
      n = new NodeInfo(name);
      this.nodes.set(name, n);
    }
    return n;
  }

  /** Add or update a node; true when a scheduling-relevant field changed (or it is new). */
  setNode(node: Obj): boolean {
    const n = this.nodeInfo(node.metadata.name ?? '');
    const was = n.present;
    const zone = was ? zoneOf(n) : undefined;
    const changed = n.setNode(node);
    if (!was || zoneOf(n) !== zone) this.topologyVersion++;
    if (!was) this.order.push(n.name);
    return changed;
  }

  removeNode(name: string): void {
    const n = this.nodes.get(name);
    if (!n) return;
    n.present = false;
    n.signature = '';
    this.topologyVersion++;
    const i = this.order.indexOf(name);
    if (i >= 0) this.order.splice(i, 1);
    if (n.pods.size === 0) this.nodes.delete(name);
  }

  /** A bound pod as the pods' watch cache has it (replaces an assumed or older version). */
  addPod(p: PodInfo): void {
    this.removePod(p.key);
    this.podNode.set(p.key, p.nodeName);
    this.nodeInfo(p.nodeName).addPod(p);
    let ns = this.byLabel.get(p.namespace);
    if (!ns) {
      ns = new Map();
      this.byLabel.set(p.namespace, ns);
    }
    for (const k in p.labels) {
      const kv = `${k}=${p.labels[k]}`;
      let set = ns.get(kv);
      if (!set) {
        set = new Set();
        ns.set(kv, set);
      }
      set.add(p);
    }
    if (hasRequiredAntiAffinity(p)) this.antiAffinityPods.add(p);
    if (p.hasPodAffinity) this.affinityPods.add(p);
    const memos = this.spreadByNamespace.get(p.namespace);
    if (memos) for (const m of memos) if (m.matches(p)) this.countSpread(m, p.nodeName, 1);
  }

  private countSpread(m: SpreadMemo, node: string, delta: 1 | -1): void {
    const k = (m.perNode.get(node) ?? 0) + delta;
    if (k > 0) m.perNode.set(node, k);
    else m.perNode.delete(node);
    if (m.perZone === undefined || m.zonesAt !== this.topologyVersion) return;
    const n = this.nodes.get(node);
    if (!n?.present) return;
    const zone = zoneOf(n);
    const z = (m.perZone.get(zone) ?? 0) + delta;
    if (z > 0) m.perZone.set(zone, z);
    else m.perZone.delete(zone);
  }

  /** Forget a pod (deleted, finished, or its bind failed); answers what it was. */
  removePod(key: string): PodInfo | undefined {
    this.assumed.delete(key);
    const node = this.podNode.get(key);
    if (node === undefined) return undefined;
    this.podNode.delete(key);
    const n = this.nodes.get(node);
    const p = n?.removePod(key);
    if (p) {
      this.antiAffinityPods.delete(p);
      this.affinityPods.delete(p);
      const ns = this.byLabel.get(p.namespace);
      if (ns) {
        for (const k in p.labels) {
          const kv = `${k}=${p.labels[k]}`;
          const set = ns.get(kv);
          set?.delete(p);
          if (set?.size === 0) ns.delete(kv);
        }
        if (ns.size === 0) this.byLabel.delete(p.namespace);
      }
      const memos = this.spreadByNamespace.get(p.namespace);
      if (memos) for (const m of memos) if (m.matches(p)) this.countSpread(m, node, -1);
    }
    if (n && !n.present && n.pods.size === 0) this.nodes.delete(node);
    return p;
  }

  /**
   * The bound pods of `namespace` that `matches` (a default spread selector, `key` its text)
   * counted per node, from `seed` (a superset: the pods carrying one label it requires) the
   * first time, then kept up to date as pods come and go. A ReplicaSet's pods are scheduled one
   * after another with the same selector: counting its pods for each made scheduling a set of
   * 3,000 quadratic (a quarter of the main thread at 150,000 pods, 2026-11-27). Read-only.
   */
  spreadCounts(namespace: string, key: string, matches: (q: PodInfo) => boolean, seed: Iterable<PodInfo>): SpreadCounts {
    const id = `${namespace}\0${key}`;
    let m = this.spreadMemos.get(id);
    if (m) {
      // Most recently used last.
      this.spreadMemos.delete(id);
      this.spreadMemos.set(id, m);
      return this.countsOf(m);
    }
    m = { namespace, matches, perNode: new Map(), perZone: undefined, zonesAt: -1 };
    for (const q of seed) if (matches(q)) m.perNode.set(q.nodeName, (m.perNode.get(q.nodeName) ?? 0) + 1);
    this.spreadMemos.set(id, m);
    let set = this.spreadByNamespace.get(namespace);
    if (!set) {
      set = new Set();
      this.spreadByNamespace.set(namespace, set);
    }
    set.add(m);
    if (this.spreadMemos.size > SPREAD_MEMOS) {
      const [oldId, old] = this.spreadMemos.entries().next().value as [string, SpreadMemo];
      this.spreadMemos.delete(oldId);
      const of = this.spreadByNamespace.get(old.namespace);
      of?.delete(old);
      if (of?.size === 0) this.spreadByNamespace.delete(old.namespace);
    }
    return this.countsOf(m);
  }

  private countsOf(m: SpreadMemo): SpreadCounts {
    return {
      perNode: m.perNode,
      perZone: () => {
        if (m.perZone === undefined || m.zonesAt !== this.topologyVersion) {
          const z = new Map<string, number>();
          for (const [name, k] of m.perNode) {
            const n = this.nodes.get(name);
            if (n?.present) z.set(zoneOf(n), (z.get(zoneOf(n)) ?? 0) + k);
          }
          m.perZone = z;
          m.zonesAt = this.topologyVersion;
        }
        return m.perZone;
      },
    };
  }

  /** The bound pods of `namespace` labelled `key`=`value`. */
  podsLabelled(namespace: string, key: string, value: string): Iterable<PodInfo> {
    return this.byLabel.get(namespace)?.get(`${key}=${value}`) ?? [];
  }

  hasPod(key: string): boolean {
    return this.podNode.has(key);
  }

  /** The pod is being bound to `node`: count it there now. */
  assume(p: PodInfo, node: string): void {
    this.addPod({ ...p, nodeName: node });
    this.assumed.add(p.key);
  }

  isAssumed(key: string): boolean {
    return this.assumed.has(key);
  }

  /** Record (or with '' clear) the node a pending pod is nominated to. */
  nominate(p: PodInfo, node: string): void {
    const old = this.nominatedOf.get(p.key);
    if (old !== undefined) {
      const m = this.nominated.get(old);
      m?.delete(p.key);
      if (m?.size === 0) this.nominated.delete(old);
      this.nominatedOf.delete(p.key);
    }
    if (!node) return;
    let m = this.nominated.get(node);
    if (!m) {
      m = new Map();
      this.nominated.set(node, m);
    }
    m.set(p.key, p);
    this.nominatedOf.set(p.key, node);
  }

  hasNominated(node: string): boolean {
    return this.nominated.size > 0 && this.nominated.has(node);
  }

  /** The pods nominated to `node`. */
  nominatedTo(node: string): Iterable<PodInfo> {
    return this.nominated.get(node)?.values() ?? [];
  }
}
