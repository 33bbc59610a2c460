/**
 * Discovery documents (/api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}) and
 * /version, built from the registry, and again after the registry changes (custom resources).
 */
import { upstreamGroup } from '../api/brand';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';

export const VERSION_INFO = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0+svc',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: 'go1.24.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function resourceEntries(s: ResourceStore): Record<string, unknown>[] {
  const d = s.def;
  const main: Record<string, unknown> = {
    name: d.plural,
    singularName: d.singular,
    namespaced: d.namespaced,
    kind: d.kind,
    verbs: d.virtual ? ['create'] : d.deleteCollection ? ALL_VERBS : ALL_VERBS.filter((v) => v !== 'deletecollection'),
  };
  if (d.shortNames.length > 0) main.shortNames = d.shortNames;
  if (d.categories.length > 0) main.categories = d.categories;
  main.storageVersionHash = Buffer.from(new Bun.CryptoHasher('sha256').update(`${d.group}/${d.version}/${d.kind}`).digest())
    .subarray(0, 8)
    .toString('base64');
  const out = [main];
  if (d.finalize) out.push({ name: `${d.plural}/finalize`, singularName: '', namespaced: false, kind: d.kind, verbs: ['update'] });
  // Binding (a scheduler's assignment of a pod to a node) and eviction (a policy/v1 Eviction:
  // kubectl drain looks for it here).
  if (d.group === '' && d.plural === 'pods')
    out.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
  if (d.group === '' && d.plural === 'pods')
    out.push({
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
  if (d.group === '' && d.plural === 'serviceaccounts')
    out.push({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  for (const part of d.specSubresources ?? [])
    out.push({
      name: `${d.plural}/${part.name}`,
      singularName: '',
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: ['get', 'patch', 'update'],
    });
  if (d.status)
    out.push({ name: `${d.plural}/status`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] });
  if (d.scale) {
    out.push({
      name: `${d.plural}/scale`,
      singularName: '',
      namespaced: d.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  }
  return out;
}

function withoutShortcuts(r: Record<string, unknown>): Record<string, unknown> {
  const { shortNames: _s, categories: _c, ...rest } = r;
  return rest;
}

export class Discovery {
  private docs = new Map<string, unknown>();
  private built = -1;

  constructor(
    private readonly api: ApiRegistry,
    private readonly serverAddress: string,
    /** Which spelling of a branded group comes first, with its short names (see --discovery-group-order). */
    private readonly order: 'upstream-first' | 'svc-first' = 'upstream-first',
  ) {
    this.build();
  }

  /** Builds the documents from the registry (again when kinds were added or removed since). */
  private build(): void {
    const api = this.api;
    const serverAddress = this.serverAddress;
    this.built = api.generation;
    this.docs = new Map();
    this.docs.set('/api', {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    });
    const groups: Record<string, unknown>[] = [];
    const aliases: Record<string, unknown>[] = [];
    const upstreamFirst = this.order === 'upstream-first';
    for (const g of api.groups()) {
      // A branded group is listed twice: under its upstream name (what manifests written for the
      // reference name, `apiVersion: apiextensions.k8s.io/v1`) and under its svc name. The one
      // listed first (--discovery-group-order) comes before every group of the other spelling
      // and alone has the short names and categories, so kubectl maps a plain resource name
      // to it: upstream-first by default, since kubectl's typed commands (set subject, create
      // token, drain, auth reconcile, ...) decode objects into Go types of the k8s.io groups.
      const upstream = upstreamGroup(g.group);
      for (const name of upstream === g.group ? [g.group] : [g.group, upstream]) {
        const primary = upstream === g.group || (name === upstream) === upstreamFirst;
        const versions = g.versions.map((v) => ({ groupVersion: name ? `${name}/${v}` : v, version: v }));
        for (const v of g.versions) {
          const gv = name ? `${name}/${v}` : v;
          const path = name ? `/apis/${name}/${v}` : `/api/${v}`;
          this.docs.set(path, {
            kind: 'APIResourceList',
            apiVersion: 'v1',
            groupVersion: gv,
            // The second spelling lists no short names or categories: `kubectl get crd` and
            // `get all` resolve to one group (no "could also match" warning, no double rows).
            resources: api
              .resources(g.group, v)
              .flatMap(resourceEntries)
              .map((r) => (primary ? r : withoutShortcuts(r))),
          });
        }
        if (!name) continue;
        const group = { name, versions, preferredVersion: versions[0] };
        (primary ? groups : aliases).push(group);
        this.docs.set(`/apis/${name}`, { kind: 'APIGroup', apiVersion: 'v1', ...group });
      }
    }
    this.docs.set('/apis', { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groups, ...aliases] });
    this.docs.set('/version', VERSION_INFO);
  }

  /** The document at `path` (trailing slash ignored), or undefined. */
  get(path: string): unknown {
    if (this.built !== this.api.generation) this.build();
    return this.docs.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  }
}
