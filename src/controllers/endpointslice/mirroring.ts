/**
 * The EndpointSlice mirroring controller, as the reference's pkg/controller/endpointslicemirroring:
 * the Endpoints of a Service without a selector (written by a user or another controller) are
 * mirrored to EndpointSlices `<name>-<random5>` labelled kubernetes.io/service-name and
 * endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io (plus the
 * Endpoints' labels; its annotations but last-change-trigger-time and last-applied-configuration),
 * controlled by the Endpoints:
 *
 *   each subset's addresses (ready) and notReadyAddresses (ready false) become endpoints of its
 *   ports, split by address type (IPv4, IPv6; other addresses are skipped), at most 1000 per
 *   subset and per slice;
 *   Endpoints labelled endpointslice.kubernetes.io/skip-mirror: "true", or with the leader
 *   election annotation, are not mirrored; mirrored slices go when the Endpoints or the Service
 *   go, or the Service gets a selector.
 */
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import { controllerRef, labelsOf } from '../controller-utils';
import type { EndpointAddress, EndpointSubset } from '../endpoints';
import { LAST_CHANGE_TRIGGER_TIME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, SKIP_MIRROR_LABEL, specOf } from '../service-endpoints';
import { follow, followChanges, WorkQueue } from '../workqueue';
import { type DesiredGroup, planSlices, type SliceEndpoint, type SlicePort } from './reconciler';
import { cacheCaughtUp, type Written, writePlan } from './writer';

export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
/** The reference's --mirroring-max-endpoints-per-subset default. */
export const MIRRORING_MAX_ENDPOINTS = 1000;

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

const addressType = (ip: string): 'IPv4' | 'IPv6' | undefined => (IPV4.test(ip) ? 'IPv4' : ip.includes(':') ? 'IPv6' : undefined);

function addressEndpoint(a: EndpointAddress, ready: boolean): SliceEndpoint {
  const e: SliceEndpoint = { addresses: [a.ip], conditions: { ready } };
  if (a.hostname) e.hostname = a.hostname;
  if (a.nodeName) e.nodeName = a.nodeName;
  if (a.targetRef) e.targetRef = a.targetRef;
  return e;
}

/** The desired endpoints of Endpoints' subsets, by address type. */
export function mirroredGroups(subsets: EndpointSubset[]): Map<string, DesiredGroup[]> {
  const out = new Map<string, DesiredGroup[]>([
    ['IPv4', []],
    ['IPv6', []],
  ]);
  for (const s of subsets) {
    const ports: SlicePort[] = (s.ports ?? []).map((p) => {
      const sp: SlicePort = { name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' };
      if (p.appProtocol) sp.appProtocol = p.appProtocol;
      return sp;
    });
    const all = [...(s.addresses ?? []).map((a) => [a, true] as const), ...(s.notReadyAddresses ?? []).map((a) => [a, false] as const)];
    for (const [a, ready] of all.slice(0, MIRRORING_MAX_ENDPOINTS)) {
      const t = addressType(a.ip);
      if (t) out.get(t)?.push({ ports, endpoints: [addressEndpoint(a, ready)] });
    }
  }
  return out;
}

export class EndpointSliceMirroringController {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  /** Per service, what its last sync wrote (the cache must show it before the next sync). */
  private readonly written = new Map<string, { w: Written; at: number }>();

  constructor(
    private readonly services: ResourceStore,
    private readonly serviceCache: WatchCache,
    private readonly endpoints: ResourceStore,
    private readonly endpointsCache: WatchCache,
    private readonly slices: ResourceStore,
    private readonly sliceCache: WatchCache,
    opts: { log?: (msg: string) => void } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`endpointslice mirroring controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.serviceCache.start(), this.endpointsCache.start(), this.sliceCache.start()]);
    const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;
    const all = (objs: Obj[]) => {
      for (const o of objs) this.queue.add(key(o));
    };
    this.follows.push(
      follow(this.serviceCache, all, (o) => this.queue.add(key(o))),
      follow(this.endpointsCache, all, (o) => this.queue.add(key(o))),
      followChanges(
        this.sliceCache,
        () => {},
        (s) => {
          const l = labelsOf(s);
          if (l[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME && l[SERVICE_NAME_LABEL])
            this.queue.add(`${s.metadata.namespace}/${l[SERVICE_NAME_LABEL]}`);
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

  private mirrored(ns: string, name: string): Obj[] {
    return this.sliceCache
      .list(`${this.slices.prefix}${ns}/`)
      .map((c) => c.obj)
      .filter((s) => {
        const l = labelsOf(s);
        return l[SERVICE_NAME_LABEL] === name && l[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME && !s.metadata.deletionTimestamp;
      });
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const svc = this.serviceCache.get(this.services.key(ns, name))?.obj;
    const ep = this.endpointsCache.get(this.endpoints.key(ns, name))?.obj;
    this.checkCaughtUp(key, ns);
    const existing = this.mirrored(ns, name);
    const mirror =
      svc &&
      ep &&
      specOf(svc).selector === undefined &&
      labelsOf(ep)[SKIP_MIRROR_LABEL] !== 'true' &&
      ep.metadata.annotations?.[LEADER_ANNOTATION] === undefined;
    if (!mirror) {
      await this.deleteAll(ns, existing);
      return;
    }
    if (ep.metadata.deletionTimestamp) return;
    const labels: Record<string, string> = { ...labelsOf(ep), [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME };
    const annotations: Record<string, string> = { ...((ep.metadata.annotations ?? {}) as Record<string, string>) };
    delete annotations[LAST_CHANGE_TRIGGER_TIME];
    delete annotations[LAST_APPLIED];
    const owner = controllerRef(ep, 'v1', 'Endpoints');
    const w: Written = new Map();
    this.written.set(key, { w, at: Date.now() });
    const groups = mirroredGroups(((ep as { subsets?: EndpointSubset[] }).subsets ?? []) as EndpointSubset[]);
    for (const [type, desired] of groups) {
      const plan = planSlices(
        desired,
        existing.filter((s) => (s as { addressType?: string }).addressType === type),
        MIRRORING_MAX_ENDPOINTS,
      );
      for (const s of [...plan.unchanged]) {
        const same =
          JSON.stringify(Object.entries(labelsOf(s)).sort()) === JSON.stringify(Object.entries(labels).sort()) &&
          JSON.stringify(Object.entries(s.metadata.annotations ?? {}).sort()) === JSON.stringify(Object.entries(annotations).sort()) &&
          (s.metadata.ownerReferences ?? []).some((r) => r.uid === owner.uid);
        if (same) continue;
        plan.unchanged.splice(plan.unchanged.indexOf(s), 1);
        plan.update.push({
          slice: s,
          ports: ((s as { ports?: SlicePort[] }).ports ?? []) as SlicePort[],
          endpoints: ((s as { endpoints?: SliceEndpoint[] }).endpoints ?? []) as SliceEndpoint[],
        });
      }
      if (plan.create.length + plan.update.length + plan.delete.length === 0) continue;
      await writePlan(
        this.slices,
        plan,
        {
          namespace: ns,
          serviceName: name,
          labels,
          annotations,
          ownerReferences: [owner],
          addressType: type,
          trigger: 0,
          fieldManager: 'endpointslicemirroring-controller',
        },
        w,
      );
    }
  }

  private async deleteAll(ns: string, slices: Obj[]): Promise<void> {
    for (const s of slices) {
      try {
        await this.slices.delete(ns, s.metadata.name as string, { dryRun: false, preconditions: { uid: s.metadata.uid as string } });
      } catch (e) {
        if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
      }
    }
  }
}
