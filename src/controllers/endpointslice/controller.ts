/**
 * The EndpointSlice controller, as the reference's pkg/controller/endpointslice: every Service
 * with a selector (not ExternalName) has EndpointSlices `<service>-<random5>` (addressType IPv4)
 * labelled kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by:
 * endpointslice-controller.k8s.io (and the Service's own labels), controlled by the Service
 * (ownerReference; the garbage collector deletes them with it), with at most
 * `maxEndpointsPerSlice` (100) endpoints each:
 *
 *   an endpoint per pod the Service selects that has an IP (terminating pods too): addresses,
 *   conditions ready (Ready and not terminating, or publishNotReadyAddresses), serving (Ready),
 *   terminating; hostname (the pod's, when its subdomain is the service), nodeName, zone (the
 *   node's topology.kubernetes.io/zone), targetRef;
 *   ports: the service ports resolved on the pod (named target ports from its container ports);
 *   pods with different resolved ports go to different slices.
 *
 * Slices are reused as the reference's reconciler does (src/controllers/endpointslice/reconciler.ts).
 * Only slices managed by this controller are touched.
 */
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import { controllerRef, isPodReady, labelsOf } from '../controller-utils';
import {
  findPort,
  HEADLESS_LABEL,
  MANAGED_BY_LABEL,
  nodeNameOf,
  podIPOf,
  podsOfService,
  podTriggerTime,
  SERVICE_NAME_LABEL,
  seenOf,
  servicesOfPod,
  shouldPodBeInEndpoints,
  specOf,
  TriggerTimes,
} from '../service-endpoints';
import { follow, followChanges, WorkQueue } from '../workqueue';
import { type DesiredGroup, MAX_ENDPOINTS_PER_SLICE, planSlices, type SliceEndpoint, type SlicePort } from './reconciler';
import { cacheCaughtUp, type Written, writePlan } from './writer';

export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** podToEndpoint. */
export function podEndpoint(pod: Obj, svc: Obj, zone: string | undefined): SliceEndpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  const ready = specOf(svc).publishNotReadyAddresses === true || (serving && !terminating);
  const e: SliceEndpoint = { addresses: [podIPOf(pod)], conditions: { ready, serving, terminating } };
  const spec = (pod.spec ?? {}) as { hostname?: string; subdomain?: string };
  if (spec.hostname && spec.subdomain === svc.metadata.name) e.hostname = spec.hostname;
  const node = nodeNameOf(pod);
  if (node) e.nodeName = node;
  if (zone) e.zone = zone;
  e.targetRef = {
    kind: 'Pod',
    namespace: pod.metadata.namespace as string,
    name: pod.metadata.name as string,
    uid: pod.metadata.uid as string,
  };
  return e;
}

/** The desired endpoints of a Service, grouped by resolved ports (IPv4 pods only). */
export function desiredGroups(svc: Obj, pods: Obj[], zoneOf: (node: string) => string | undefined): DesiredGroup[] {
  const groups: DesiredGroup[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, true) || !IPV4.test(podIPOf(pod))) continue;
    const ports: SlicePort[] = [];
    for (const sp of specOf(svc).ports ?? []) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      const p: SlicePort = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
      if (sp.appProtocol) p.appProtocol = sp.appProtocol;
      ports.push(p);
    }
    groups.push({ ports, endpoints: [podEndpoint(pod, svc, zoneOf(nodeNameOf(pod)))] });
  }
  return groups;
}

/** The labels of a Service's slices (setEndpointSliceLabels). */
export function sliceLabels(svc: Obj, managedBy: string): Record<string, string> {
  const l: Record<string, string> = {};
  for (const [k, v] of Object.entries(labelsOf(svc))) if (k !== SERVICE_NAME_LABEL && k !== MANAGED_BY_LABEL) l[k] = v;
  if (specOf(svc).clusterIP === 'None') l[HEADLESS_LABEL] = '';
  else delete l[HEADLESS_LABEL];
  l[SERVICE_NAME_LABEL] = svc.metadata.name as string;
  l[MANAGED_BY_LABEL] = managedBy;
  return l;
}

const sameLabels = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

export class EndpointSliceController {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  /** Per service, what its last sync wrote (the cache must show it before the next sync). */
  private readonly written = new Map<string, { w: Written; at: number }>();
  private readonly triggers = new TriggerTimes();
  /** The labels of the last pod version seen per key (a label change concerns the services that selected it). */
  private readonly seen = new Map<string, Obj>();
  /** Each node's zone label ('' when none): only a change of it concerns the services. */
  private readonly zones = new Map<string, string>();

  constructor(
    private readonly services: ResourceStore,
    private readonly serviceCache: WatchCache,
    private readonly slices: ResourceStore,
    private readonly sliceCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly nodes: { cache: WatchCache; prefix: string },
    private readonly opts: { maxEndpointsPerSlice?: number; log?: (msg: string) => void } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`endpointslice controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.serviceCache.start(), this.sliceCache.start(), this.podCache.start(), this.nodes.cache.start()]);
    const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;
    this.follows.push(
      follow(
        this.serviceCache,
        (objs) => {
          for (const o of objs) this.queue.add(key(o));
        },
        (o, type) => {
          if (type === 'ADDED') this.triggers.note(key(o), Date.parse(o.metadata.creationTimestamp ?? '') || 0);
          this.queue.add(key(o));
        },
      ),
      follow(
        this.podCache,
        (objs) => {
          for (const o of objs) this.seen.set(key(o), seenOf(o));
        },
        (p, type) => {
          const k = key(p);
          const old = this.seen.get(k);
          if (type === 'DELETED') this.seen.delete(k);
          else this.seen.set(k, seenOf(p));
          for (const s of servicesOfPod(p, old, this.serviceCache, this.services.prefix)) {
            this.triggers.note(key(s), type === 'DELETED' ? Date.now() : podTriggerTime(p));
            this.queue.add(key(s));
          }
        },
      ),
      // A managed slice changed or deleted by another: its Service is synced again.
      followChanges(
        this.sliceCache,
        () => {},
        (s) => {
          const l = labelsOf(s);
          if (l[MANAGED_BY_LABEL] === CONTROLLER_NAME && l[SERVICE_NAME_LABEL])
            this.queue.add(`${s.metadata.namespace}/${l[SERVICE_NAME_LABEL]}`);
        },
      ),
      // A node's zone label changed: the services with endpoints on it. Only a change of the
      // zone counts (a node's status heartbeat is not one), and its pods come from the pod
      // cache's spec.nodeName index: 5,000 nodes heartbeating once read every pod 5,000 times.
      follow(
        this.nodes.cache,
        (objs) => {
          for (const n of objs) this.zones.set(n.metadata.name as string, labelsOf(n)[ZONE_LABEL] ?? '');
        },
        (n, type) => {
          const name = n.metadata.name as string;
          const zone = labelsOf(n)[ZONE_LABEL] ?? '';
          const before = this.zones.get(name);
          if (type === 'DELETED') this.zones.delete(name);
          else this.zones.set(name, zone);
          if (type !== 'MODIFIED' || before === undefined || before === zone) return;
          const pods =
            this.podCache.listWhere('', 'spec.nodeName', name) ??
            this.podCache.list().filter((c) => c.view.fields?.['spec.nodeName'] === name);
          for (const c of pods) {
            const p = c.obj;
            if (nodeNameOf(p) !== name) continue;
            for (const s of servicesOfPod(p, undefined, this.serviceCache, this.services.prefix)) this.queue.add(key(s));
          }
        },
      ),
    );
  }

  stop(): void {
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  /** Refuses (409: retried after a back-off) to sync a service on a cache behind its last writes (for at most 5 s). */
  private checkCaughtUp(key: string, ns: string): void {
    const last = this.written.get(key);
    if (!last) return;
    if (Date.now() - last.at < 5000 && !cacheCaughtUp(last.w, (n) => this.sliceCache.get(this.slices.key(ns, n))?.obj))
      throw new StatusError(409, 'Conflict', 'the slice cache is behind the last writes');
    this.written.delete(key);
  }

  private zoneOf(node: string): string | undefined {
    if (!node) return undefined;
    return labelsOf(this.nodes.cache.get(`${this.nodes.prefix}${node}`)?.obj ?? { metadata: {} })[ZONE_LABEL];
  }

  /** The slices this controller manages for a Service. */
  private slicesOf(ns: string, name: string): Obj[] {
    return this.sliceCache
      .list(`${this.slices.prefix}${ns}/`)
      .map((c) => c.obj)
      .filter((s) => {
        const l = labelsOf(s);
        return l[SERVICE_NAME_LABEL] === name && l[MANAGED_BY_LABEL] === CONTROLLER_NAME && !s.metadata.deletionTimestamp;
      });
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const svc = this.serviceCache.get(this.services.key(ns, name))?.obj;
    // A deleted Service's slices go with it (garbage collector: they are its dependents).
    if (!svc || svc.metadata.deletionTimestamp) {
      this.triggers.take(key);
      return;
    }
    const spec = specOf(svc);
    if (spec.type === 'ExternalName' || spec.selector === undefined) return;
    const pods = podsOfService(svc, this.podCache, this.pods.prefix);
    this.checkCaughtUp(key, ns);
    const existing = this.slicesOf(ns, name);
    const owner = controllerRef(svc, 'v1', 'Service');
    const ownedElsewhere = existing.filter((s) => !(s.metadata.ownerReferences ?? []).some((r) => r.uid === owner.uid));
    const plan = planSlices(
      desiredGroups(svc, pods, (n) => this.zoneOf(n)),
      existing,
      this.opts.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE,
    );
    // A Service without endpoints keeps one empty slice (placeholder), as the reference's.
    if (plan.create.length === 0 && plan.update.length === 0 && plan.unchanged.length === 0) {
      const empty = (x: Obj) =>
        ((x as { endpoints?: unknown[] }).endpoints ?? []).length === 0 && ((x as { ports?: unknown[] }).ports ?? []).length === 0;
      const i = plan.delete.findIndex(empty);
      const reuse = i >= 0 ? undefined : plan.delete.pop();
      if (i >= 0) plan.unchanged.push(...plan.delete.splice(i, 1));
      else if (reuse) plan.update.push({ slice: reuse, ports: [], endpoints: [] });
      else plan.create.push({ ports: [], endpoints: [] });
    }
    const labels = sliceLabels(svc, CONTROLLER_NAME);
    // Slices otherwise unchanged whose labels or owner are stale are written too.
    for (const s of [...plan.unchanged]) {
      if (sameLabels(labelsOf(s), labels) && !ownedElsewhere.includes(s)) continue;
      plan.unchanged.splice(plan.unchanged.indexOf(s), 1);
      plan.update.push({
        slice: s,
        ports: ((s as { ports?: SlicePort[] }).ports ?? []) as SlicePort[],
        endpoints: ((s as { endpoints?: SliceEndpoint[] }).endpoints ?? []) as SliceEndpoint[],
      });
    }
    const trigger = this.triggers.take(key);
    if (plan.create.length + plan.update.length + plan.delete.length === 0) return;
    const w: Written = new Map();
    this.written.set(key, { w, at: Date.now() });
    await writePlan(
      this.slices,
      plan,
      {
        namespace: ns,
        serviceName: name,
        labels,
        ownerReferences: [owner],
        addressType: 'IPv4',
        trigger,
        fieldManager: 'endpointslice-controller',
      },
      w,
    );
  }
}
