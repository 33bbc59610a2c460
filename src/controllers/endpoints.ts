/**
 * The Endpoints controller, as the reference's pkg/controller/endpoint: every Service with a
 * selector (not ExternalName) has an Endpoints object of its name whose subsets list the pods it
 * selects that have an IP:
 *
 *   addresses         ready pods (every pod when publishNotReadyAddresses), notReadyAddresses the
 *                     others; each with ip, nodeName, targetRef (and hostname when the pod's
 *                     subdomain is the service's name)
 *   ports             per service port, the target port resolved on each pod (a named target
 *                     port looked up in the pod's container ports; a pod without it is left out of
 *                     that port); pods are grouped into subsets by their resolved ports
 *                     (RepackSubsets); a headless Service without ports lists addresses only
 *   labels            the Service's, plus service.kubernetes.io/headless for clusterIP None
 *   annotations       endpoints.kubernetes.io/last-change-trigger-time (the earliest change of a
 *                     pod or the service since the last sync); at most 1000 addresses, the rest
 *                     cut proportionally per subset (ready ones kept first) with
 *                     endpoints.kubernetes.io/over-capacity: truncated
 *
 * The Endpoints of a deleted Service are deleted. Services without a selector are left alone
 * (their Endpoints are the user's; the mirroring controller copies them to EndpointSlices).
 *
 * The `kubernetes` Service of default: the reference's apiserver writes its Endpoints (labelled
 * endpointslice.kubernetes.io/skip-mirror, so that the mirroring controller leaves them) and an
 * EndpointSlice `kubernetes` with its advertise address (--advertise-address, else --bind-address,
 * else for 0.0.0.0 the host's address). This server's address is --bind-address, by default
 * 127.0.0.1: a loopback address is invalid in Endpoints and EndpointSlices (validation refuses
 * it) and no simulated pod could reach the host's loopback anyway, so then nothing is published
 * (the Service has no endpoints, as a selectorless Service nobody fills). With a routable IPv4
 * bind address, or 0.0.0.0 and a host with a non-loopback IPv4 address, this controller writes
 * both (`apiserver`), port `https` = --port.
 */
import * as os from 'node:os';
import { deepEqual, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import { isPodReady, writeOptions } from './controller-utils';
import {
  findPort,
  HEADLESS_LABEL,
  LAST_CHANGE_TRIGGER_TIME,
  nodeNameOf,
  podIPOf,
  podsOfService,
  podTriggerTime,
  rfc3339Nano,
  type ServicePort,
  SKIP_MIRROR_LABEL,
  seenOf,
  servicesOfPod,
  shouldPodBeInEndpoints,
  specOf,
  TriggerTimes,
} from './service-endpoints';
import { follow, followChanges, WorkQueue } from './workqueue';

export const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
export const MAX_ENDPOINTS_CAPACITY = 1000;
const W = () => writeOptions('endpoint-controller');

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

const portKey = (p: EndpointPort): string => `${p.name ?? ''}/${p.port}/${p.protocol}/${p.appProtocol ?? ''}`;
const addrKey = (a: EndpointAddress): string => `${a.ip}/${a.targetRef?.uid ?? ''}`;

/**
 * RepackSubsets: addresses grouped by their set of ports; a ready address wins over the same
 * not-ready one; subsets, addresses and ports sorted as the reference's SortSubsets.
 */
export function repackSubsets(subsets: EndpointSubset[]): EndpointSubset[] {
  const byAddr = new Map<string, { addr: EndpointAddress; ready: boolean; ports: Map<string, EndpointPort> }>();
  for (const s of subsets) {
    const entries = [...(s.addresses ?? []).map((a) => [a, true] as const), ...(s.notReadyAddresses ?? []).map((a) => [a, false] as const)];
    for (const [a, ready] of entries) {
      const k = addrKey(a);
      let e = byAddr.get(k);
      if (!e) {
        e = { addr: a, ready, ports: new Map() };
        byAddr.set(k, e);
      }
      if (ready) e.ready = true;
      for (const p of s.ports ?? []) e.ports.set(portKey(p), p);
    }
  }
  const groups = new Map<string, EndpointSubset>();
  for (const e of byAddr.values()) {
    const ports = [...e.ports.values()].sort((a, b) => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0));
    const k = ports.map(portKey).join(',');
    let g = groups.get(k);
    if (!g) {
      g = ports.length > 0 ? { ports } : {};
      groups.set(k, g);
    }
    const field = e.ready ? 'addresses' : 'notReadyAddresses';
    const list = g[field] ?? [];
    list.push(e.addr);
    g[field] = list;
  }
  const byIp = (a: EndpointAddress, b: EndpointAddress) => (addrKey(a) < addrKey(b) ? -1 : addrKey(a) > addrKey(b) ? 1 : 0);
  const out = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
  for (const g of out) {
    g.addresses?.sort(byIp);
    g.notReadyAddresses?.sort(byIp);
  }
  return out;
}

/** truncateEndpoints: at most MAX_ENDPOINTS_CAPACITY addresses; whether any were cut. */
export function truncateSubsets(subsets: EndpointSubset[], max = MAX_ENDPOINTS_CAPACITY): boolean {
  let ready = 0;
  let notReady = 0;
  for (const s of subsets) {
    ready += s.addresses?.length ?? 0;
    notReady += s.notReadyAddresses?.length ?? 0;
  }
  if (ready + notReady <= max) return false;
  const truncateReady = ready > max;
  const room = truncateReady ? max : max - ready;
  const total = truncateReady ? ready : notReady;
  let canBeAdded = room;
  for (const s of subsets) {
    const n = truncateReady ? (s.addresses?.length ?? 0) : (s.notReadyAddresses?.length ?? 0);
    const add = Math.min(canBeAdded, Math.ceil((n / total) * room));
    if (truncateReady) {
      s.addresses = (s.addresses ?? []).slice(0, add);
      delete s.notReadyAddresses;
      canBeAdded -= s.addresses.length;
    } else {
      s.notReadyAddresses = (s.notReadyAddresses ?? []).slice(0, add);
      canBeAdded -= s.notReadyAddresses.length;
    }
    if (s.addresses?.length === 0) delete s.addresses;
    if (s.notReadyAddresses?.length === 0) delete s.notReadyAddresses;
  }
  return true;
}

/** The address of a pod in a Service's endpoints (podToEndpointAddressForService). */
export function podAddress(pod: Obj, svc: Obj): EndpointAddress {
  const a: EndpointAddress = { ip: podIPOf(pod) };
  const spec = (pod.spec ?? {}) as { hostname?: string; subdomain?: string };
  if (spec.hostname && spec.subdomain === svc.metadata.name && pod.metadata.namespace === svc.metadata.namespace)
    a.hostname = spec.hostname;
  const node = nodeNameOf(pod);
  if (node) a.nodeName = node;
  a.targetRef = {
    kind: 'Pod',
    namespace: pod.metadata.namespace as string,
    name: pod.metadata.name as string,
    uid: pod.metadata.uid as string,
  };
  return a;
}

/** The subsets of a Service from its pods (the reference's syncService, before packing). */
export function computeSubsets(svc: Obj, pods: Obj[]): EndpointSubset[] {
  const spec = specOf(svc);
  const tolerate = spec.publishNotReadyAddresses === true;
  const subsets: EndpointSubset[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, tolerate)) continue;
    const addr = podAddress(pod, svc);
    const ready = tolerate || isPodReady(pod);
    const add = (ports: EndpointPort[]) => subsets.push(ready ? { addresses: [addr], ports } : { notReadyAddresses: [addr], ports });
    const ports = spec.ports ?? [];
    if (ports.length === 0) {
      if (spec.clusterIP === 'None') add([]);
      continue;
    }
    for (const sp of ports) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      add([endpointPort(sp, port)]);
    }
  }
  return repackSubsets(subsets);
}

export function endpointPort(sp: ServicePort, port: number): EndpointPort {
  const p: EndpointPort = { port, protocol: sp.protocol ?? 'TCP' };
  if (sp.name) p.name = sp.name;
  if (sp.appProtocol) p.appProtocol = sp.appProtocol;
  return p;
}

const routableIPv4 = (ip: string): boolean => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m || m.slice(1).some((x) => Number(x) > 255)) return false;
  const first = Number(m[1]);
  return !(first === 0 || first === 127 || first >= 224 || (first === 169 && Number(m[2]) === 254));
};

/**
 * The address the `kubernetes` Service publishes: a routable IPv4 --bind-address, or for 0.0.0.0
 * the first of `hostAddresses` (the host's non-internal IPv4 addresses) that is routable.
 */
export function apiserverAddress(
  bindAddress: string,
  port: number,
  hostAddresses: readonly string[] = [],
): { ip: string; port: number } | undefined {
  if (bindAddress === '0.0.0.0') {
    const ip = hostAddresses.find(routableIPv4);
    return ip ? { ip, port } : undefined;
  }
  return routableIPv4(bindAddress) ? { ip: bindAddress, port } : undefined;
}

/** The host's non-internal IPv4 addresses. */
export function hostIPv4Addresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i) => i !== undefined && i.family === 'IPv4' && !i.internal)
    .map((i) => (i as { address: string }).address);
}

/** The Endpoints and EndpointSlice of the `kubernetes` Service for an apiserver address. */
export function apiserverObjects(a: { ip: string; port: number }): { endpoints: Obj; slice: Obj } {
  return {
    endpoints: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { [SKIP_MIRROR_LABEL]: 'true' } },
      subsets: [{ addresses: [{ ip: a.ip }], ports: [{ name: 'https', port: a.port, protocol: 'TCP' }] }],
    } as Obj,
    slice: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [a.ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port: a.port, protocol: 'TCP' }],
    } as Obj,
  };
}

export class EndpointsController {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  private readonly triggers = new TriggerTimes();
  /** The labels of the last pod version seen per key (a label change concerns the services that selected it). */
  private readonly seen = new Map<string, Obj>();

  constructor(
    private readonly services: ResourceStore,
    private readonly serviceCache: WatchCache,
    private readonly endpoints: ResourceStore,
    private readonly endpointsCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly opts: {
      log?: (msg: string) => void;
      /** The `kubernetes` Service's address, and the slices it is published to. */
      apiserver?: { ip: string; port: number; slices: ResourceStore };
    } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`endpoints controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.serviceCache.start(), this.endpointsCache.start(), this.podCache.start()]);
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
      // Endpoints changed or deleted by another: put back as their Service says (Endpoints
      // without a Service are not this controller's business until a Service goes).
      followChanges(
        this.endpointsCache,
        () => {},
        (o) => {
          if (this.serviceCache.get(this.services.key(o.metadata.namespace as string, o.metadata.name as string))) this.queue.add(key(o));
        },
      ),
    );
  }

  stop(): void {
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const svc = this.serviceCache.get(this.services.key(ns, name))?.obj;
    const cur = this.endpointsCache.get(this.endpoints.key(ns, name))?.obj;
    if (!svc) {
      this.triggers.take(key);
      if (!cur) return;
      // Only Endpoints this controller would have written: a Service's that is gone.
      try {
        await this.endpoints.delete(ns, name, { dryRun: false, preconditions: { uid: cur.metadata.uid as string } });
      } catch (e) {
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
      }
      return;
    }
    const spec = specOf(svc);
    if (ns === 'default' && name === 'kubernetes' && this.opts.apiserver && spec.selector === undefined) return this.publishApiserver(cur);
    if (spec.type === 'ExternalName' || spec.selector === undefined) return;
    const subsets = computeSubsets(svc, podsOfService(svc, this.podCache, this.pods.prefix));
    const truncated = truncateSubsets(subsets);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (spec.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];
    const trigger = this.triggers.take(key);
    const curAnn = (cur?.metadata.annotations ?? {}) as Record<string, string>;
    if (
      cur &&
      deepEqual(cur.subsets ?? [], subsets) &&
      deepEqual(cur.metadata.labels ?? {}, labels) &&
      (curAnn[OVER_CAPACITY] === 'truncated') === truncated
    )
      return;
    const annotations: Record<string, string> = { ...curAnn };
    // A change seen in the cache before its event was noted has no trigger time yet: the
    // annotation keeps its value (a new object takes the Service's creation).
    if (trigger > 0) annotations[LAST_CHANGE_TRIGGER_TIME] = rfc3339Nano(trigger);
    else if (!annotations[LAST_CHANGE_TRIGGER_TIME]) {
      const created = Date.parse(svc.metadata.creationTimestamp ?? '');
      if (created) annotations[LAST_CHANGE_TRIGGER_TIME] = rfc3339Nano(created);
    }
    if (truncated) annotations[OVER_CAPACITY] = 'truncated';
    else delete annotations[OVER_CAPACITY];
    const meta = (m: Obj['metadata']): Obj['metadata'] => {
      const out: Obj['metadata'] = { ...m, labels };
      if (Object.keys(annotations).length > 0) out.annotations = annotations;
      else delete out.annotations;
      return out;
    };
    if (!cur) {
      try {
        await this.endpoints.create(ns, { apiVersion: 'v1', kind: 'Endpoints', metadata: meta({ name, namespace: ns }), subsets }, W());
      } catch (e) {
        // 409 (created meanwhile, or a cache behind) is retried; 404: the namespace is going.
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
      return;
    }
    const uid = cur.metadata.uid;
    await this.endpoints.updateFrom(ns, name, '', W(), (c) => {
      if (c.metadata.uid !== uid) throw new StatusError(409, 'Conflict', 'replaced');
      return { ...c, metadata: meta(c.metadata), subsets } as Obj;
    });
  }

  /** The apiserver's own endpoints (the reference's endpoint reconciler), written when they differ. */
  private async publishApiserver(cur: Obj | undefined): Promise<void> {
    const a = this.opts.apiserver as NonNullable<typeof this.opts.apiserver>;
    const want = apiserverObjects(a);
    const put = async (store: ResourceStore, obj: Obj, current: Obj | undefined, same: (c: Obj) => boolean) => {
      if (current && same(current)) return;
      if (!current) {
        try {
          await store.create('default', structuredClone(obj), W());
          return;
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 409)) throw e;
        }
      }
      await store.updateFrom('default', 'kubernetes', '', W(), (c) => {
        const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj;
        return {
          ...c,
          ...structuredClone(rest),
          metadata: { ...c.metadata, labels: { ...(c.metadata.labels ?? {}), ...obj.metadata.labels } },
        } as Obj;
      });
    };
    await put(this.endpoints, want.endpoints, cur, (c) => deepEqual(c.subsets, want.endpoints.subsets) && labelsMatch(c, want.endpoints));
    let slice: Obj | undefined;
    try {
      slice = await a.slices.get('default', 'kubernetes').then((kv) => decodeStored(kv));
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
    const ws = want.slice as { endpoints?: unknown; ports?: unknown };
    await put(a.slices, want.slice, slice, (c) => {
      const cs = c as { endpoints?: unknown; ports?: unknown };
      return deepEqual(cs.endpoints, ws.endpoints) && deepEqual(cs.ports, ws.ports) && labelsMatch(c, want.slice);
    });
  }
}

const labelsMatch = (c: Obj, want: Obj): boolean =>
  Object.entries(want.metadata.labels ?? {}).every(([k, v]) => c.metadata.labels?.[k] === v);
