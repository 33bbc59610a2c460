/**
 * Aggregated discovery (apidiscovery.k8s.io/v2, the reference's default since 1.30): /api and
 * /apis answer, to a client that asks for it with
 *
 *   Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList
 *
 * one APIGroupDiscoveryList holding every group, version and resource, so that kubectl needs one
 * request instead of one per group version. It is written from the same documents as the
 * per-group-version discovery (src/http/discovery.ts), group order and spellings included, plus
 * the aggregated APIs' group versions (their resources as their backends last listed them,
 * `freshness: Stale` when the last fetch failed), so the two kinds of discovery never disagree.
 */
import type { Discovery } from './discovery';

export const DISCOVERY_V2_MEDIA_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** A legacy APIResource entry (APIResourceList.resources[]). */
type Resource = Record<string, unknown>;

/** A group version served elsewhere (an aggregated API), with its backend's resource list. */
export interface ExtraGroupVersion {
  group: string;
  version: string;
  resources: Resource[];
  /** The last fetch from the backend succeeded. */
  fresh: boolean;
}

interface Gv {
  version: string;
}

/** Whether the client asks for the v2 aggregated document (JSON; the protobuf form is not served). */
export function wantsDiscoveryV2(accept: string | null): boolean {
  if (accept === null || !accept.includes('apidiscovery.k8s.io')) return false;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((p) => p.trim());
    if (type?.toLowerCase() !== 'application/json') continue;
    const p = Object.fromEntries(params.map((x) => x.split('=').map((y) => y.trim())));
    if (p.g === 'apidiscovery.k8s.io' && p.v === 'v2' && p.as === 'APIGroupDiscoveryList') return true;
  }
  return false;
}

/** The v2 resources of a legacy resource list: subresources (`pods/status`) under their resource. */
function resourcesV2(group: string, version: string, list: Resource[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const byName = new Map<string, Record<string, unknown>>();
  const kindOf = (r: Resource) => ({
    group: typeof r.group === 'string' ? r.group : group,
    version: typeof r.version === 'string' ? r.version : version,
    kind: r.kind,
  });
  for (const r of list) {
    const name = String(r.name ?? '');
    if (name === '' || name.includes('/')) continue;
    const d: Record<string, unknown> = {
      resource: name,
      responseKind: kindOf(r),
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: r.verbs ?? [],
    };
    if (Array.isArray(r.shortNames) && r.shortNames.length > 0) d.shortNames = r.shortNames;
    if (Array.isArray(r.categories) && r.categories.length > 0) d.categories = r.categories;
    byName.set(name, d);
    out.push(d);
  }
  for (const r of list) {
    const name = String(r.name ?? '');
    const slash = name.indexOf('/');
    if (slash < 0) continue;
    const parent = byName.get(name.slice(0, slash));
    if (!parent) continue;
    if (!parent.subresources) parent.subresources = [];
    const subs = parent.subresources as Record<string, unknown>[];
    subs.push({ subresource: name.slice(slash + 1), responseKind: kindOf(r), verbs: r.verbs ?? [] });
  }
  return out;
}

function versionV2(group: string, version: string, resources: Resource[], fresh = true): Record<string, unknown> {
  return { version, resources: resourcesV2(group, version, resources), freshness: fresh ? 'Current' : 'Stale' };
}

/**
 * The APIGroupDiscoveryList of /api (`prefix` 'api': the core group) or /apis (every named group,
 * then the aggregated ones not served here).
 */
export function discoveryV2(discovery: Discovery, prefix: 'api' | 'apis', extra: ExtraGroupVersion[]): unknown {
  const list = (items: unknown[]) => ({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items });
  const resourcesOf = (path: string): Resource[] =>
    ((discovery.get(path) as { resources?: Resource[] } | undefined)?.resources ?? []) as Resource[];
  if (prefix === 'api') {
    const versions = ((discovery.get('/api') as { versions?: string[] } | undefined)?.versions ?? []).map((v) =>
      versionV2('', v, resourcesOf(`/api/${v}`)),
    );
    return list([{ metadata: { creationTimestamp: null }, versions }]);
  }
  const groups = ((discovery.get('/apis') as { groups?: { name: string; versions: Gv[] }[] } | undefined)?.groups ?? []).map((g) => ({
    name: g.name,
    versions: g.versions.map((v) => v.version),
  }));
  const remote = new Map<string, ExtraGroupVersion>(extra.map((e) => [`${e.group}/${e.version}`, e]));
  const items: unknown[] = [];
  const listed = new Set<string>();
  const versionOf = (group: string, version: string) => {
    const e = remote.get(`${group}/${version}`);
    listed.add(`${group}/${version}`);
    return e ? versionV2(group, version, e.resources, e.fresh) : versionV2(group, version, resourcesOf(`/apis/${group}/${version}`));
  };
  for (const g of groups) {
    const versions = g.versions.map((v) => versionOf(g.name, v));
    for (const e of extra) if (e.group === g.name && !listed.has(`${e.group}/${e.version}`)) versions.push(versionOf(e.group, e.version));
    items.push({ metadata: { name: g.name, creationTimestamp: null }, versions });
  }
  // Aggregated groups not served here, in the order given (their APIServices' priorities).
  const more = new Map<string, Record<string, unknown>[]>();
  for (const e of extra) {
    if (listed.has(`${e.group}/${e.version}`)) continue;
    const vs = more.get(e.group) ?? [];
    vs.push(versionOf(e.group, e.version));
    more.set(e.group, vs);
  }
  for (const [name, versions] of more) items.push({ metadata: { name, creationTimestamp: null }, versions });
  return list(items);
}
