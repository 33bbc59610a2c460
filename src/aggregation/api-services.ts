/**
 * The APIServices that name a backend (`spec.service`), as the proxy and the availability
 * controller read them: by group version (the svc spelling of the group, as requests are parsed),
 * kept in step with the APIService watch cache. Local APIServices (no `spec.service`) are not
 * here: their group versions are served by this server.
 */
import { svcGroup } from '../api/brand';
import type { Obj } from '../api/meta';
import type { WatchCache } from '../watch/cache';

/** What the proxy needs of one remote APIService (the reference's proxyHandlingInfo). */
export interface RemoteApiService {
  /** metadata.name: `<version>.<group>`. */
  name: string;
  /** spec.group as the APIService spells it: the backend is asked under this name. */
  group: string;
  version: string;
  service: { namespace: string; name: string; port: number };
  /** PEM of spec.caBundle; '' uses the system's roots. */
  caPem: string;
  insecureSkipTLSVerify: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** The Available condition is True. */
  available: boolean;
  /** The APIService as stored (the availability controller writes its status from it). */
  obj: Obj;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

/** The condition of `type` of an APIService, if any. */
export function conditionOf(o: Obj, type: string): Record<string, unknown> | undefined {
  const conds = (o.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conds) ? (conds as Record<string, unknown>[]).find((c) => c?.type === type) : undefined;
}

/** The remote view of an APIService, or undefined for a Local one. */
export function remoteOf(o: Obj): RemoteApiService | undefined {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const svc = spec.service as Record<string, unknown> | undefined | null;
  if (!svc || typeof svc !== 'object') return undefined;
  const ca = str(spec.caBundle);
  return {
    name: str(o.metadata.name),
    group: str(spec.group),
    version: str(spec.version),
    // The port defaults to 443 (the reference's defaulting of ServiceReference.port).
    service: { namespace: str(svc.namespace), name: str(svc.name), port: num(svc.port, 443) },
    caPem: ca === '' ? '' : Buffer.from(ca, 'base64').toString('utf8'),
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    groupPriorityMinimum: num(spec.groupPriorityMinimum, 0),
    versionPriority: num(spec.versionPriority, 0),
    available: conditionOf(o, 'Available')?.status === 'True',
    obj: o,
  };
}

/** `group/version` in the svc spelling: the key requests are routed by. */
export const routeKey = (group: string, version: string): string => `${svcGroup(group)}/${version}`;

export class RemoteApiServices {
  private byKey = new Map<string, RemoteApiService>();
  private byName = new Map<string, RemoteApiService>();

  constructor(private readonly cache: WatchCache) {}

  /** Read the APIServices again (after any change of one). */
  refresh(): void {
    const byKey = new Map<string, RemoteApiService>();
    const byName = new Map<string, RemoteApiService>();
    for (const c of this.cache.list()) {
      const r = remoteOf(c.obj);
      if (!r) continue;
      byName.set(r.name, r);
      byKey.set(routeKey(r.group, r.version), r);
    }
    this.byKey = byKey;
    this.byName = byName;
  }

  /** The remote APIService serving `group/version` (group in either spelling), if any. */
  route(group: string, version: string): RemoteApiService | undefined {
    return this.byKey.size === 0 ? undefined : this.byKey.get(routeKey(group, version));
  }

  get(name: string): RemoteApiService | undefined {
    return this.byName.get(name);
  }

  all(): RemoteApiService[] {
    return [...this.byName.values()];
  }

  get size(): number {
    return this.byName.size;
  }
}
