/**
 * The aggregated group versions in this server's discovery documents, as the reference's
 * aggregator lists them (handler_apis.go): every remote APIService's group version appears in
 * /apis and /apis/<group>, available or not (a client then learns from /apis/<group>/<version>,
 * proxied to the backend, whether it answers: kubectl's "unable to retrieve the complete list of
 * server APIs"). A group served here too gets the remote versions added; a group only served
 * remotely is listed after the local ones, by groupPriorityMinimum (highest first), then name.
 * Versions of a remote group are ordered by versionPriority (highest first); the first is preferred.
 * /apis/<group>/<version> itself is not built here: it is the backend's (proxied).
 */
import type { RemoteApiService } from './api-services';

interface GroupVersion {
  groupVersion: string;
  version: string;
}

interface ApiGroup {
  name: string;
  versions: GroupVersion[];
  preferredVersion?: GroupVersion;
}

/** The remote APIServices by group, groups and versions in discovery order. */
function remoteGroups(remotes: RemoteApiService[]): Map<string, RemoteApiService[]> {
  const sorted = [...remotes]
    .filter((r) => r.group !== '')
    .sort(
      (a, b) =>
        b.groupPriorityMinimum - a.groupPriorityMinimum ||
        (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) ||
        b.versionPriority - a.versionPriority ||
        (a.version < b.version ? -1 : a.version > b.version ? 1 : 0),
    );
  const out = new Map<string, RemoteApiService[]>();
  for (const r of sorted) {
    const list = out.get(r.group);
    if (list) list.push(r);
    else out.set(r.group, [r]);
  }
  return out;
}

/** `local` (a group served here, or undefined) with the remote versions added. */
function mergeGroup(name: string, remotes: RemoteApiService[], local: ApiGroup | undefined): ApiGroup {
  const versions = [...(local?.versions ?? [])];
  for (const r of remotes) {
    if (!versions.some((v) => v.version === r.version)) versions.push({ groupVersion: `${name}/${r.version}`, version: r.version });
  }
  return { name, versions, preferredVersion: local?.preferredVersion ?? versions[0] };
}

/**
 * The discovery document at `path` with the remote group versions merged in: /apis and
 * /apis/<group> change, every other path keeps `local` (undefined when not served here).
 */
export function mergeDiscovery(path: string, local: unknown, remotes: RemoteApiService[]): unknown {
  if (remotes.length === 0) return local;
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segs = p.split('/');
  if (p === '/apis') {
    const list = (local ?? { kind: 'APIGroupList', apiVersion: 'v1', groups: [] }) as { groups?: ApiGroup[] };
    const groups = [...(list.groups ?? [])];
    for (const [name, rs] of remoteGroups(remotes)) {
      const i = groups.findIndex((g) => g.name === name);
      if (i >= 0) groups[i] = mergeGroup(name, rs, groups[i]);
      else groups.push(mergeGroup(name, rs, undefined));
    }
    return { ...list, groups };
  }
  if (segs.length === 3 && segs[1] === 'apis') {
    const name = segs[2] as string;
    const rs = remoteGroups(remotes).get(name);
    if (!rs) return local;
    const group = mergeGroup(name, rs, local as ApiGroup | undefined);
    return { kind: 'APIGroup', apiVersion: 'v1', ...group };
  }
  return local;
}

/** A remote group version's resources as its backend last listed them (for aggregated discovery). */
export interface RemoteGroupVersion {
  group: string;
  version: string;
  resources: Record<string, unknown>[];
  /** The last fetch succeeded and the APIService is available. */
  fresh: boolean;
}

/** What a backend says of its group version: its resources, and its OpenAPI v3 document's URL (relative, with its hash). */
export interface BackendDiscovery {
  resources: Record<string, unknown>[];
  openapi?: string;
}

export interface RemoteDiscoveryOptions {
  /** Each backend's list is fetched again this often (the reference's aggregated discovery resyncs too). */
  intervalMs: number;
  timeoutMs: number;
  log: (msg: string) => void;
}

/**
 * The resource lists of the remote group versions, fetched from their backends'
 * /apis/<group>/<version> (verified as the proxy verifies them, as system:kube-aggregator) when
 * an APIService changes and every `intervalMs`, on every replica (each serves discovery). A failed
 * fetch, or an APIService not Available, keeps the last list, marked stale.
 */
export class RemoteDiscovery {
  private readonly lists = new Map<string, { resources: Record<string, unknown>[]; fresh: boolean; openapi?: string }>();
  private readonly inflight = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly remotes: { all(): RemoteApiService[]; get(name: string): RemoteApiService | undefined },
    private readonly fetchList: (r: RemoteApiService, signal: AbortSignal) => Promise<BackendDiscovery>,
    private readonly o: RemoteDiscoveryOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.refreshAll(), this.o.intervalMs);
    this.timer.unref();
    this.refreshAll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  refreshAll(): void {
    for (const r of this.remotes.all()) void this.refresh(r.name);
    for (const name of this.lists.keys()) if (!this.remotes.get(name)) this.lists.delete(name);
  }

  async refresh(name: string): Promise<void> {
    const r = this.remotes.get(name);
    if (!r) {
      this.lists.delete(name);
      return;
    }
    const last = this.lists.get(name);
    if (!r.available) {
      this.lists.set(name, { ...last, resources: last?.resources ?? [], fresh: false });
      return;
    }
    if (this.inflight.has(name)) return;
    this.inflight.add(name);
    try {
      const d = await this.fetchList(r, AbortSignal.timeout(this.o.timeoutMs));
      this.lists.set(name, { resources: d.resources, fresh: true, openapi: d.openapi });
    } catch (e) {
      if (last?.fresh !== false) this.o.log(`apiservice ${name}: discovery of ${r.group}/${r.version} failed: ${(e as Error).message}`);
      this.lists.set(name, { ...last, resources: last?.resources ?? [], fresh: false });
    } finally {
      this.inflight.delete(name);
    }
  }

  /**
   * The /openapi/v3 index entries of the remote group versions whose backends publish one:
   * `apis/<group>/<version>` → the URL here (proxied to the backend) with the backend's hash.
   */
  openapiV3Paths(): Record<string, { serverRelativeURL: string }> {
    const out: Record<string, { serverRelativeURL: string }> = {};
    for (const r of this.remotes.all()) {
      const url = this.lists.get(r.name)?.openapi;
      if (url !== undefined && r.group !== '') out[`apis/${r.group}/${r.version}`] = { serverRelativeURL: url };
    }
    return out;
  }

  /** Every remote group version, groups by priority; stale until its first fetch succeeded. */
  groupVersions(): RemoteGroupVersion[] {
    const out: RemoteGroupVersion[] = [];
    for (const rs of remoteGroups(this.remotes.all()).values()) {
      for (const r of rs) {
        const l = this.lists.get(r.name);
        out.push({ group: r.group, version: r.version, resources: l?.resources ?? [], fresh: (l?.fresh ?? false) && r.available });
      }
    }
    return out;
  }
}
