/**
 * Discovery documents (/api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}) and
 * /version, built from the registry. Documents are built once: the set of kinds is fixed at
 * start-up.
 */
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
    verbs: d.deleteCollection ? ALL_VERBS : ALL_VERBS.filter((v) => v !== 'deletecollection'),
  };
  if (d.shortNames.length > 0) main.shortNames = d.shortNames;
  if (d.categories.length > 0) main.categories = d.categories;
  main.storageVersionHash = Buffer.from(new Bun.CryptoHasher('sha256').update(`${d.group}/${d.version}/${d.kind}`).digest())
    .subarray(0, 8)
    .toString('base64');
  const out = [main];
  if (d.finalize) out.push({ name: `${d.plural}/finalize`, singularName: '', namespaced: false, kind: d.kind, verbs: ['update'] });
  // Eviction (a policy/v1 Eviction): kubectl drain looks for it here.
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

export class Discovery {
  private readonly docs = new Map<string, unknown>();

  constructor(api: ApiRegistry, serverAddress: string) {
    this.docs.set('/api', {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    });
    const groups: Record<string, unknown>[] = [];
    for (const g of api.groups()) {
      const versions = g.versions.map((v) => ({ groupVersion: g.group ? `${g.group}/${v}` : v, version: v }));
      for (const v of g.versions) {
        const gv = g.group ? `${g.group}/${v}` : v;
        const path = g.group ? `/apis/${g.group}/${v}` : `/api/${v}`;
        this.docs.set(path, {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: gv,
          resources: api.resources(g.group, v).flatMap(resourceEntries),
        });
      }
      if (!g.group) continue;
      const group = { name: g.group, versions, preferredVersion: versions[0] };
      groups.push(group);
      this.docs.set(`/apis/${g.group}`, { kind: 'APIGroup', apiVersion: 'v1', ...group });
    }
    this.docs.set('/apis', { kind: 'APIGroupList', apiVersion: 'v1', groups });
    this.docs.set('/version', VERSION_INFO);
  }

  /** The document at `path` (trailing slash ignored), or undefined. */
  get(path: string): unknown {
    return this.docs.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  }
}
