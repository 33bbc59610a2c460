/**
 * Upstream group names as aliases (issue 9, item 2): every group served as `*.svc.io` answers
 * under its `*.k8s.io` name on every verb, watch included, in the spelling the request used;
 * bodies may use either name; the store keeps one. Discovery lists both names: by default the
 * upstream ones first with the short names (issue 34 item 1: kubectl maps plain resource names to
 * groups it has Go types for, so its typed commands work), the svc ones after; with
 * --discovery-group-order=svc-first the other way round. Manifests in either spelling apply.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile, startServer } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();

const upstream = (g: string): string => g.replace(/\.svc\.io$/, '.k8s.io');

describe('every svc.io group is served under its upstream name', () => {
  test('each listable resource of each branded group answers a list in the upstream spelling', async () => {
    const groups = (await srv.json('GET', '/apis')).body.groups as Json[];
    const branded = groups.filter((g) => g.name.endsWith('.svc.io'));
    expect(branded.map((g) => g.name)).toEqual(
      expect.arrayContaining(['coordination.svc.io', 'networking.svc.io', 'flowcontrol.apiserver.svc.io', 'admissionregistration.svc.io']),
    );
    let checked = 0;
    for (const g of branded) {
      const gv = g.preferredVersion.groupVersion as string;
      const version = gv.slice(gv.indexOf('/') + 1);
      const resources = (await srv.json('GET', `/apis/${gv}`)).body.resources as Json[];
      for (const r of resources) {
        if (r.name.includes('/') || !r.verbs.includes('list')) continue;
        const res = await srv.json('GET', `/apis/${upstream(g.name)}/${version}/${r.name}`);
        expect({ path: r.name, status: res.status }).toEqual({ path: r.name, status: 200 });
        expect(res.body.apiVersion).toBe(`${upstream(g.name)}/${version}`);
        expect(res.body.kind).toBe(`${r.kind}List`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });

  test('discovery lists the upstream groups first, the svc ones after; short names resolve to the upstream group; manifests in either spelling apply', async () => {
    const groups = ((await srv.json('GET', '/apis')).body.groups as Json[]).map((g) => g.name as string);
    const firstSvc = groups.findIndex((g) => g.endsWith('.svc.io'));
    expect(firstSvc).toBeGreaterThan(0);
    expect(groups.slice(firstSvc).every((g) => g.endsWith('.svc.io'))).toBe(true);
    expect(groups.slice(0, firstSvc)).toContain('coordination.k8s.io');
    const svc = (await srv.json('GET', '/apis/coordination.svc.io/v1')).body;
    expect(svc.groupVersion).toBe('coordination.svc.io/v1');
    expect(svc.resources.find((r: Json) => r.name === 'leases').kind).toBe('Lease');
    const names = srv.kubectl(['api-resources', '--no-headers', '-o', 'name']).stdout.trim().split('\n');
    expect(names).toContain('leases.coordination.k8s.io');
    expect(names).toContain('leases.coordination.svc.io');
    // kubectl picks the upstream group for a plain resource name or short name, with no ambiguity warning.
    const get = srv.kubectl(['get', 'netpol', '-A', '-o', 'name']);
    expect(get.code).toBe(0);
    expect(get.stderr).toBe('');
    for (const [apiVersion, name] of [
      ['networking.k8s.io/v1', 'from-manifest'],
      ['networking.svc.io/v1', 'from-svc-manifest'],
    ] as const) {
      const np = srv.kubectl(
        ['apply', '-f', '-'],
        `apiVersion: ${apiVersion}\nkind: NetworkPolicy\nmetadata:\n  name: ${name}\n  namespace: kube-public\nspec:\n  podSelector: {}\n`,
      );
      expect(np.stderr).toBe('');
      expect(np.stdout).toBe(`networkpolicy.${apiVersion.split('/')[0]}/${name} created\n`);
    }
    expect(srv.kubectl(['get', 'networkpolicies.networking.svc.io', '-n', 'kube-public', '-o', 'name']).stdout).toBe(
      'networkpolicy.networking.svc.io/from-manifest\nnetworkpolicy.networking.svc.io/from-svc-manifest\n',
    );
  });

  test('--discovery-group-order=svc-first lists the svc names first, with the short names', async () => {
    const other = await startServer({ args: ['--discovery-group-order=svc-first'] });
    try {
      const groups = ((await other.json('GET', '/apis')).body.groups as Json[]).map((g) => g.name as string);
      const firstUpstream = groups.findIndex((g) => g.endsWith('.k8s.io'));
      expect(firstUpstream).toBeGreaterThan(groups.indexOf('coordination.svc.io'));
      expect(groups.slice(firstUpstream).every((g) => g.endsWith('.k8s.io'))).toBe(true);
      const netpol = (await other.json('GET', '/apis/networking.svc.io/v1')).body.resources.find((r: Json) => r.name === 'networkpolicies');
      expect(netpol.shortNames).toEqual(['netpol']);
      const r = other.kubectl(['get', 'leases', '-n', 'kube-system', '-v=6']);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('/apis/coordination.svc.io/v1/namespaces/kube-system/leases');
    } finally {
      await other.stop();
    }
    const bad = Bun.spawnSync(['bun', 'src/main.ts', '--discovery-group-order=k8s'], { cwd: `${import.meta.dir}/..` });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain(
      'invalid argument "k8s" for "--discovery-group-order" flag: must be upstream-first or svc-first',
    );
  });
});

describe('a Lease through coordination.k8s.io', () => {
  const K8S = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
  const SVC = '/apis/coordination.svc.io/v1/namespaces/default/leases';
  const lease = (name: string, apiVersion: string, holder = 'a'): Json => ({
    apiVersion,
    kind: 'Lease',
    metadata: { name },
    spec: { holderIdentity: holder },
  });

  test.each([
    ['upstream path, upstream body', K8S, 'coordination.k8s.io/v1', 'coordination.k8s.io/v1'],
    ['upstream path, svc body', K8S, 'coordination.svc.io/v1', 'coordination.k8s.io/v1'],
    ['svc path, upstream body', SVC, 'coordination.k8s.io/v1', 'coordination.svc.io/v1'],
  ])('create: %s → the path decides the answer', async (_, path, bodyVersion, answer) => {
    const name = `l-${bodyVersion.split('.')[1]}-${path === K8S ? 'k' : 's'}`;
    const r = await srv.json('POST', path, lease(name, bodyVersion));
    expect(r.status).toBe(201);
    expect(r.body.apiVersion).toBe(answer);
    // One object in the store, readable under both names.
    expect((await srv.json('GET', `${K8S}/${name}`)).body.apiVersion).toBe('coordination.k8s.io/v1');
    expect((await srv.json('GET', `${SVC}/${name}`)).body.apiVersion).toBe('coordination.svc.io/v1');
  });

  test('a body naming another group is 400', async () => {
    const r = await srv.json('POST', K8S, lease('wrong', 'networking.k8s.io/v1'));
    expect(r.status).toBe(400);
    // The reference's scheme has no Lease in networking.k8s.io/v1 (its decoder's error, through transformDecodeError).
    expect(r.body.message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: no kind "Lease" is registered for version "networking.k8s.io/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    );
  });

  test('update, patches and apply answer in the upstream spelling', async () => {
    await srv.json('POST', K8S, lease('u', 'coordination.k8s.io/v1'));
    const cur = (await srv.json('GET', `${K8S}/u`)).body;
    const put = await srv.json('PUT', `${K8S}/u`, { ...cur, spec: { holderIdentity: 'b' } });
    expect(put.status).toBe(200);
    expect(put.body.apiVersion).toBe('coordination.k8s.io/v1');
    for (const [type, body] of [
      ['application/merge-patch+json', { spec: { holderIdentity: 'c' } }],
      ['application/strategic-merge-patch+json', { spec: { holderIdentity: 'd' } }],
      ['application/json-patch+json', [{ op: 'replace', path: '/spec/holderIdentity', value: 'e' }]],
      ['application/apply-patch+yaml', lease('u', 'coordination.k8s.io/v1', 'f')],
    ] as const) {
      const force = type === 'application/apply-patch+yaml' ? '&force=true' : '';
      const r = await srv.fetch(`${K8S}/u?fieldManager=t${force}`, {
        method: 'PATCH',
        headers: { 'content-type': type },
        body: JSON.stringify(body),
      });
      const out = (await r.json()) as Json;
      expect({ type, status: r.status, apiVersion: out.apiVersion }).toEqual({ type, status: 200, apiVersion: 'coordination.k8s.io/v1' });
    }
    expect((await srv.json('GET', `${SVC}/u`)).body.spec.holderIdentity).toBe('f');
  });

  test('YAML and Table answers name the upstream group too', async () => {
    await srv.json('POST', K8S, lease('y', 'coordination.k8s.io/v1'));
    const yaml = await (await srv.fetch(`${K8S}/y`, { headers: { accept: 'application/yaml' } })).text();
    expect(yaml).toContain('apiVersion: coordination.k8s.io/v1');
    // (managedFields keep the stored name: the store keeps one spelling.)
    const list = await (await srv.fetch(K8S, { headers: { accept: 'application/yaml' } })).text();
    expect(list).toMatch(/^apiVersion: coordination\.k8s\.io\/v1\n/);
    expect(list).not.toMatch(/^ {2}- apiVersion: coordination\.svc\.io/m);
    // Objects sharing a value are written out in full, never as YAML anchors and aliases.
    expect(list).not.toContain('*a1');
  });

  test('Status errors name the group as the request did', async () => {
    const nf = await srv.json('GET', `${K8S}/missing`);
    expect(nf.status).toBe(404);
    expect(nf.body.message).toBe('leases.coordination.k8s.io "missing" not found');
    expect(nf.body.details).toEqual({ name: 'missing', group: 'coordination.k8s.io', kind: 'leases' });
    await srv.json('POST', K8S, lease('dup', 'coordination.k8s.io/v1'));
    const dup = await srv.json('POST', K8S, lease('dup', 'coordination.k8s.io/v1'));
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBe('leases.coordination.k8s.io "dup" already exists');
    const svcNf = await srv.json('GET', `${SVC}/missing`);
    expect(svcNf.body.message).toBe('leases.coordination.svc.io "missing" not found');
  });

  test('delete answers a Success Status naming the upstream group', async () => {
    await srv.json('POST', K8S, lease('d', 'coordination.k8s.io/v1'));
    const r = await srv.json('DELETE', `${K8S}/d`);
    expect(r.status).toBe(200);
    expect(r.body.details.group).toBe('coordination.k8s.io');
    expect((await srv.json('GET', `${SVC}/d`)).status).toBe(404);
  });

  test('two watches of one change: each sees it in the spelling it asked for', async () => {
    const rv = (await srv.json('GET', K8S)).body.metadata.resourceVersion;
    const q = `?watch=true&resourceVersion=${rv}&timeoutSeconds=1&allowWatchBookmarks=true`;
    const [wk, ws] = await Promise.all([srv.fetch(`${K8S}${q}`), srv.fetch(`${SVC}${q}`)]);
    await srv.json('POST', SVC, lease('w', 'coordination.svc.io/v1'));
    await srv.json('DELETE', `${SVC}/w`);
    const events = async (r: Response): Promise<Json[]> =>
      (await r.text())
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
    const [ek, es] = await Promise.all([events(wk), events(ws)]);
    const typed = (es: Json[]) => es.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object.apiVersion]);
    expect(typed(ek)).toEqual([
      ['ADDED', 'coordination.k8s.io/v1'],
      ['DELETED', 'coordination.k8s.io/v1'],
    ]);
    expect(typed(es)).toEqual([
      ['ADDED', 'coordination.svc.io/v1'],
      ['DELETED', 'coordination.svc.io/v1'],
    ]);
    const bk = ek.filter((e) => e.type === 'BOOKMARK');
    for (const b of bk) expect(b.object.apiVersion).toBe('coordination.k8s.io/v1');
  });
});

describe('other upstream groups', () => {
  test('networking.k8s.io NetworkPolicy: create, list, get, delete', async () => {
    const P = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies';
    const c = await srv.json('POST', P, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'np' },
      spec: { podSelector: {} },
    });
    expect(c.status).toBe(201);
    expect(c.body.apiVersion).toBe('networking.k8s.io/v1');
    const l = await srv.json('GET', P);
    expect(l.body.items.map((i: Json) => i.apiVersion)).toEqual(['networking.k8s.io/v1']);
    expect((await srv.json('DELETE', `${P}/np`)).status).toBe(200);
  });

  test('an unknown upstream group is 404 as an unknown svc group is', async () => {
    expect((await srv.json('GET', '/apis/nothing.k8s.io/v1/things')).status).toBe(404);
    expect((await srv.json('GET', '/apis/nothing.svc.io/v1/things')).status).toBe(404);
  });
});
