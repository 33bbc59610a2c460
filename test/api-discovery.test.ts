/**
 * Discovery (/api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}, /version), kubectl
 * api-resources, health endpoints (/livez, /readyz, /healthz) and /metrics.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });
/** The spelling of a group/version discovery lists first (the default --discovery-group-order=upstream-first). */
const primary = (gv: string): string => gv.replace(/\.svc\.io\//, '.k8s.io/');

/** Reference facts per resource: [groupVersion, plural, kind, namespaced, shortNames, categories, status subresource]. */
const KINDS: [string, string, string, boolean, string[], string[], boolean][] = [
  ['v1', 'namespaces', 'Namespace', false, ['ns'], [], true],
  ['v1', 'configmaps', 'ConfigMap', true, ['cm'], [], false],
  ['v1', 'secrets', 'Secret', true, [], [], false],
  ['v1', 'pods', 'Pod', true, ['po'], ['all'], true],
  ['v1', 'nodes', 'Node', false, ['no'], [], true],
  ['v1', 'services', 'Service', true, ['svc'], ['all'], true],
  ['v1', 'events', 'Event', true, ['ev'], [], false],
  ['v1', 'serviceaccounts', 'ServiceAccount', true, ['sa'], [], false],
  ['v1', 'limitranges', 'LimitRange', true, ['limits'], [], false],
  ['v1', 'resourcequotas', 'ResourceQuota', true, ['quota'], [], true],
  ['coordination.svc.io/v1', 'leases', 'Lease', true, [], [], false],
  ['apps/v1', 'deployments', 'Deployment', true, ['deploy'], ['all'], true],
  ['apps/v1', 'replicasets', 'ReplicaSet', true, ['rs'], ['all'], true],
  ['flowcontrol.apiserver.svc.io/v1', 'flowschemas', 'FlowSchema', false, [], [], true],
  ['flowcontrol.apiserver.svc.io/v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, [], [], true],
  ['networking.svc.io/v1', 'networkpolicies', 'NetworkPolicy', true, ['netpol'], [], false],
  ['policy/v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, ['pdb'], [], true],
  ['admissionregistration.svc.io/v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, [], ['api-extensions'], true],
  [
    'admissionregistration.svc.io/v1',
    'validatingadmissionpolicybindings',
    'ValidatingAdmissionPolicyBinding',
    false,
    [],
    ['api-extensions'],
    false,
  ],
];

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

type Resource = {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
};

const discoveryPath = (gv: string) => (gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`);

describe('discovery', () => {
  test('/api: APIVersions', async () => {
    const r = await srv.json('GET', '/api');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.kind).toBe('APIVersions');
    expect(r.body.versions).toEqual(['v1']);
    expect(r.body.serverAddressByClientCIDRs).toEqual([{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${srv.port}` }]);
  });

  test('/apis: APIGroupList with every named group, preferredVersion', async () => {
    const r = await srv.json('GET', '/apis');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1' });
    const groups = new Map<string, { versions: { groupVersion: string; version: string }[]; preferredVersion: { groupVersion: string } }>(
      r.body.groups.map((g: { name: string }) => [g.name, g]),
    );
    for (const gv of new Set(KINDS.map((k) => k[0]).filter((g) => g.includes('/')))) {
      const [group, version] = gv.split('/') as [string, string];
      const g = groups.get(group);
      expect(g).toBeDefined();
      expect(g?.versions).toContainEqual({ groupVersion: gv, version });
      expect(g?.preferredVersion.groupVersion).toBe(gv);
    }
    expect(groups.has('')).toBe(false);
  });

  test('/apis/{group}: APIGroup', async () => {
    const r = await srv.json('GET', '/apis/apps');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    expect((await srv.json('GET', '/apis/nope.example.com')).status).toBe(404);
    expect((await srv.json('GET', '/apis/apps/v9')).status).toBe(404);
  });

  test('APIResourceList per group/version: name, singularName, namespaced, kind, verbs, shortNames, categories, status subresources', async () => {
    const byGv = new Map<string, Resource[]>();
    for (const gv of new Set(KINDS.flatMap((k) => [k[0], primary(k[0])]))) {
      const r = await srv.json('GET', discoveryPath(gv));
      expect([gv, r.status]).toEqual([gv, 200]);
      expect(r.body).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv });
      byGv.set(gv, r.body.resources);
    }
    for (const [gv, plural, kind, namespaced, shortNames, categories, status] of KINDS) {
      const list = byGv.get(gv) as Resource[];
      const main = list.find((x) => x.name === plural);
      expect(main).toBeDefined();
      if (!main) continue;
      expect([plural, main.singularName, main.namespaced, main.kind]).toEqual([plural, kind.toLowerCase(), namespaced, kind]);
      // Short names and categories are the first-listed spelling's (--discovery-group-order):
      // by default the upstream name of a svc.io group; the other spelling has none.
      const first = (byGv.get(primary(gv)) as Resource[]).find((x) => x.name === plural);
      expect([plural, first?.shortNames ?? []]).toEqual([plural, shortNames]);
      expect([plural, first?.categories ?? []]).toEqual([plural, categories]);
      if (primary(gv) !== gv) expect([plural, main.shortNames, main.categories]).toEqual([plural, undefined, undefined]);
      // Namespaces cannot be deleted as a collection.
      const verbs = plural === 'namespaces' ? ALL_VERBS.filter((v) => v !== 'deletecollection') : ALL_VERBS;
      expect([plural, [...main.verbs].sort()]).toEqual([plural, verbs]);
      const st = list.find((x) => x.name === `${plural}/status`);
      if (status) {
        expect(st).toBeDefined();
        expect([plural, st?.kind, st?.namespaced, [...(st?.verbs ?? [])].sort()]).toEqual([
          plural,
          kind,
          namespaced,
          ['get', 'patch', 'update'],
        ]);
      } else {
        expect([plural, st]).toEqual([plural, undefined]);
      }
    }
    // namespaces/finalize is served (update only).
    const fin = (byGv.get('v1') as Resource[]).find((x) => x.name === 'namespaces/finalize');
    expect(fin).toMatchObject({ name: 'namespaces/finalize', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  });

  test('/version', async () => {
    const r = await srv.json('GET', '/version');
    expect(r.status).toBe(200);
    expect(r.body.major).toBe('1');
    expect(r.body.minor).toMatch(/^\d+$/);
    expect(r.body.gitVersion).toMatch(/^v1\.\d+\.\d+/);
    for (const k of ['gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'])
      expect(typeof r.body[k]).toBe('string');
    const kv = srv.kubectl(['version', '-o', 'json']);
    expect(kv.code).toBe(0);
    expect(JSON.parse(kv.stdout).serverVersion.gitVersion).toBe(r.body.gitVersion);
  });

  test('trailing slash and unknown paths', async () => {
    expect((await srv.json('GET', '/api/v1/')).body.kind).toBe('APIResourceList');
    const r = await srv.json('GET', '/no/such/path');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  test('kubectl api-resources lists every kind with its short names, scope and kind', () => {
    const r = srv.kubectl(['api-resources', '--no-headers']);
    expect(r.code).toBe(0);
    const rows = new Map<string, string[]>();
    for (const line of r.stdout.split('\n').filter(Boolean)) {
      const cols = line.trim().split(/\s+/);
      // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
      const name = cols[0] as string;
      const kind = cols[cols.length - 1] as string;
      const namespaced = cols[cols.length - 2] as string;
      const apiVersion = cols[cols.length - 3] as string;
      const shortNames = cols.length === 5 ? (cols[1] as string) : '';
      rows.set(`${apiVersion}/${name}`, [shortNames, namespaced, kind]);
    }
    for (const [gv, plural, kind, namespaced, shortNames] of KINDS) {
      expect([gv, plural, rows.get(`${primary(gv)}/${plural}`)]).toEqual([gv, plural, [shortNames.join(','), String(namespaced), kind]]);
      if (primary(gv) !== gv) expect([gv, plural, rows.get(`${gv}/${plural}`)]).toEqual([gv, plural, ['', String(namespaced), kind]]);
    }
    // Short names resolve.
    const cm = srv.kubectl(['get', 'cm', '-n', 'kube-system', '-o', 'name']);
    expect(cm.code).toBe(0);
    const ns = srv.kubectl(['get', 'ns', 'default', '-o', 'name']);
    expect(ns.stdout.trim()).toBe('namespace/default');
  });
});

describe('health', () => {
  const plain = (p: string) => srv.fetch(p, { token: null });

  test('/livez, /readyz, /healthz answer plain ok without authentication', async () => {
    for (const p of ['/livez', '/readyz', '/healthz']) {
      const r = await plain(p);
      expect([p, r.status]).toEqual([p, 200]);
      expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await r.text()).toBe('ok');
    }
  });

  test('?verbose lists [+]name ok lines and ends with "<endpoint> check passed"', async () => {
    for (const ep of ['livez', 'readyz', 'healthz']) {
      const r = await plain(`/${ep}?verbose`);
      expect(r.status).toBe(200);
      const lines = (await r.text()).split('\n');
      expect(lines[lines.length - 1]).toBe('');
      expect(lines[lines.length - 2]).toBe(`${ep} check passed`);
      const checks = lines.slice(0, -2);
      for (const l of checks) expect(l).toMatch(/^\[\+\][\w/-]+ ok$/);
      expect(checks).toContain('[+]ping ok');
      expect(checks).toContain('[+]etcd ok');
      if (ep === 'readyz') expect(checks).toContain('[+]shutdown ok');
    }
    // verbose=true works too.
    expect(await (await plain('/readyz?verbose=true')).text()).toEndWith('readyz check passed\n');
  });

  test('exclude= skips a check: "[+]etcd excluded: ok"; combined with verbose', async () => {
    const r = await plain('/readyz?verbose&exclude=etcd');
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('[+]etcd excluded: ok\n');
    expect(text).not.toContain('[+]etcd ok');
    const two = await (await plain('/livez?verbose&exclude=etcd&exclude=ping')).text();
    expect(two).toContain('[+]etcd excluded: ok');
    expect(two).toContain('[+]ping excluded: ok');
    // Without verbose, exclude still answers ok.
    expect(await (await plain('/healthz?exclude=etcd')).text()).toBe('ok');
    // An unknown name is reported.
    const unk = await (await plain('/livez?verbose&exclude=nonesuch')).text();
    expect(unk).toContain('warn: some health checks cannot be excluded: no matches for "nonesuch"');
  });

  test('per-check paths: /livez/ping, /readyz/etcd; unknown check 404', async () => {
    for (const p of ['/livez/ping', '/readyz/ping', '/healthz/ping', '/livez/etcd', '/readyz/shutdown']) {
      const r = await plain(p);
      expect([p, r.status]).toEqual([p, 200]);
      expect(await r.text()).toBe('ok');
    }
    const r = await plain('/livez/nonesuch');
    expect(r.status).toBe(404);
    await r.text();
  });

  test('health checks also accept a token (authenticated callers)', async () => {
    const r = await srv.fetch('/readyz');
    expect(await r.text()).toBe('ok');
    const bad = await srv.fetch('/livez', { token: 'wrong' });
    expect(bad.status).toBe(200);
    await bad.text();
  });
});

describe('metrics', () => {
  function parse(text: string, name: string): { labels: Record<string, string>; value: number }[] {
    const out: { labels: Record<string, string>; value: number }[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      const m = /^[^{]+\{(.*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const labels: Record<string, string> = {};
      for (const lm of (m[1] as string).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1] as string] = lm[2] as string;
      out.push({ labels, value: Number(m[2]) });
    }
    return out;
  }

  test('apiserver_request_total with verb/group/version/resource/subresource/scope/component/code; duration histogram', async () => {
    // Generate traffic of known shape.
    await srv.json('GET', '/api/v1/namespaces/default/configmaps/nope-metrics');
    await srv.json('GET', '/api/v1/namespaces/default/configmaps');
    await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'm1' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    await srv.json('GET', '/apis/apps/v1/namespaces/default/deployments/m1/status');
    await srv.json('GET', '/api/v1/nodes');
    const r = await srv.fetch('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toStartWith('text/plain');
    const text = await r.text();
    expect(text).toContain('# TYPE apiserver_request_total counter');
    expect(text).toContain('# TYPE apiserver_request_duration_seconds histogram');
    const total = parse(text, 'apiserver_request_total');
    const find = (want: Record<string, string>) => total.find((s) => Object.entries(want).every(([k, v]) => s.labels[k] === v));
    for (const s of total) {
      for (const k of ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'])
        expect(k in s.labels).toBe(true);
    }
    expect(
      find({
        verb: 'GET',
        group: '',
        version: 'v1',
        resource: 'configmaps',
        subresource: '',
        scope: 'resource',
        component: 'apiserver',
        code: '404',
      })?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find({ verb: 'LIST', resource: 'configmaps', scope: 'namespace', code: '200' })?.value).toBeGreaterThanOrEqual(1);
    // A dry-run create is counted with dry_run="All".
    await srv.json('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'metrics-dry' } });
    const after = parse(await (await srv.fetch('/metrics')).text(), 'apiserver_request_total');
    expect(after.find((x) => x.labels.verb === 'POST' && x.labels.dry_run === 'All' && x.labels.code === '201')?.value).toBe(1);
    expect(find({ verb: 'LIST', resource: 'nodes', scope: 'cluster', code: '200' })?.value).toBeGreaterThanOrEqual(1);
    expect(
      find({ verb: 'GET', group: 'apps', resource: 'deployments', subresource: 'status', scope: 'resource', code: '200' }),
    ).toBeDefined();
    // The reference counts a create at scope "resource" (CleanScope: verb create).
    expect(find({ verb: 'POST', group: 'apps', version: 'v1', resource: 'deployments', scope: 'resource', code: '201' })?.value).toBe(1);
    const buckets = parse(text, 'apiserver_request_duration_seconds_bucket');
    const lb = buckets.filter((b) => b.labels.verb === 'LIST' && b.labels.resource === 'configmaps');
    expect(lb.length).toBeGreaterThan(5);
    expect(lb.find((b) => b.labels.le === '+Inf')?.value).toBeGreaterThanOrEqual(1);
    expect(lb[0]?.labels).toMatchObject({ component: 'apiserver', group: '', version: 'v1', scope: 'namespace', subresource: '' });
    // Cumulative buckets: each le counts every request at or below it, +Inf all of them.
    const series = lb.filter((b) => b.labels.scope === lb[0]?.labels.scope && b.labels.dry_run === lb[0]?.labels.dry_run);
    for (let i = 1; i < series.length; i++) expect(series[i]?.value).toBeGreaterThanOrEqual(series[i - 1]?.value as number);
    expect(series.find((b) => b.labels.le === '60')?.value).toBe(series.find((b) => b.labels.le === '+Inf')?.value);
    expect(parse(text, 'apiserver_request_duration_seconds_count').some((s) => s.labels.verb === 'POST')).toBe(true);
  });

  test('deletecollection is counted by its HTTP method (DELETE) at the collection scope', async () => {
    await srv.json('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=none%3Dnone');
    const text = await (await srv.fetch('/metrics')).text();
    const total = parse(text, 'apiserver_request_total');
    expect(total.some((s) => s.labels.verb === 'DELETE' && s.labels.resource === 'configmaps' && s.labels.scope === 'namespace')).toBe(
      true,
    );
  });

  test('/metrics needs authentication', async () => {
    const r = await srv.fetch('/metrics', { token: null });
    expect(r.status).toBe(401);
    await r.text();
  });
});
