/**
 * Service → address (shared by the aggregator's proxy and the admission and conversion webhooks),
 * as the reference's aggregator resolves a backend with endpoint routing
 * (k8s.io/apiserver/pkg/util/proxy ResolveEndpoint): the Service from the watch cache, its port
 * by number, then one ready address of its EndpointSlices (label kubernetes.io/service-name)
 * with the port of the same name; without slices, its Endpoints object. There is no service
 * network here, so a cluster IP is never dialled: a local process registered as an endpoint
 * (127.0.0.1) is reached directly. ExternalName Services resolve to their external name.
 */
import type { Obj } from '../api/meta';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

/** A resource's store and watch cache (reads come from the cache). */
export interface Cached {
  store: ResourceStore;
  cache: WatchCache;
}

/** Why a Service does not resolve: the reference's error text. */
export class ResolveError extends Error {}

export interface ServicePort {
  name: string;
  port: number;
}

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** host:port, with brackets around an IPv6 address (net.JoinHostPort). */
export const joinHostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Whether an endpoint counts as ready (a missing condition is ready, as the reference reads it). */
const ready = (e: Record<string, unknown>): boolean => (e.conditions as { ready?: boolean } | undefined)?.ready !== false;

export class ServiceResolver {
  constructor(
    private readonly services: Cached,
    private readonly slices: Cached | undefined,
    private readonly endpoints: Cached | undefined,
  ) {}

  service(namespace: string, name: string): Obj | undefined {
    return this.services.cache.get(this.services.store.key(namespace, name))?.obj;
  }

  /** The Service's port numbered `port`, or undefined. */
  servicePort(svc: Obj, port: number): ServicePort | undefined {
    const p = arr((svc.spec as Record<string, unknown> | undefined)?.ports).find((x) => x.port === port);
    return p ? { name: str(p.name), port } : undefined;
  }

  /** The Service's EndpointSlices. */
  slicesOf(namespace: string, name: string): Obj[] {
    if (!this.slices) return [];
    return this.slices.cache
      .list(`${this.slices.store.prefix}${namespace}/`)
      .map((c) => c.obj)
      .filter((o) => o.metadata.labels?.[SERVICE_NAME_LABEL] === name);
  }

  /** Whether some slice has a ready endpoint and the port named `portName` (hasAvailableEndpoint). */
  hasAvailableEndpoint(slices: Obj[], portName: string): boolean {
    return slices.some(
      (s) => arr(s.endpoints).some(ready) && arr(s.ports).some((p) => str(p.name) === portName && typeof p.port === 'number'),
    );
  }

  /** The addresses (host:port) of the Service's ready endpoints for `portName`. */
  private addresses(namespace: string, name: string, portName: string): string[] | undefined {
    const slices = this.slicesOf(namespace, name);
    const out: string[] = [];
    if (slices.length > 0) {
      for (const s of slices) {
        const type = str(s.addressType);
        if (type !== 'IPv4' && type !== 'IPv6') continue;
        for (const p of arr(s.ports)) {
          if (str(p.name) !== portName || typeof p.port !== 'number') continue;
          for (const e of arr(s.endpoints)) {
            if (!ready(e)) continue;
            for (const a of Array.isArray(e.addresses) ? e.addresses : []) out.push(joinHostPort(String(a), p.port));
          }
        }
      }
      return out;
    }
    // No slices (the mirroring controller is off): the Endpoints object of the same name.
    const ep = this.endpoints?.cache.get(this.endpoints.store.key(namespace, name))?.obj;
    if (!ep) return undefined;
    for (const sub of arr(ep.subsets)) {
      const port = arr(sub.ports).find((p) => str(p.name) === portName);
      if (!port || typeof port.port !== 'number') continue;
      for (const a of arr(sub.addresses)) if (str(a.ip)) out.push(joinHostPort(str(a.ip), port.port));
    }
    return out;
  }

  /**
   * One address (host:port) of the Service's endpoints for its port `port`, chosen at random.
   * Throws ResolveError with the reference's messages.
   */
  resolve(namespace: string, name: string, port: number): string {
    const svc = this.service(namespace, name);
    if (!svc) throw new ResolveError(`service "${name}" not found`);
    const spec = (svc.spec ?? {}) as Record<string, unknown>;
    const type = str(spec.type) || 'ClusterIP';
    if (type === 'ExternalName') return joinHostPort(str(spec.externalName), port);
    if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') {
      throw new ResolveError(`unsupported service type "${type}"`);
    }
    const sp = this.servicePort(svc, port);
    if (!sp) throw new ResolveError(`no service port ${port} found for service "${name}"`);
    const all = this.addresses(namespace, name, sp.name);
    if (!all || all.length === 0) throw new ResolveError(`no endpoints available for service "${name}"`);
    return all[Math.floor(Math.random() * all.length)] as string;
  }
}
