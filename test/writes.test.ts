/**
 * Writes end to end (issue "Writes"): patch types, server-side apply with managedFields and
 * conflicts, field validation, dry run — over HTTPS and with kubectl as users run it.
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: [STATIC_WORKLOADS] });

function deployment(name: string, replicas: number, image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

function writeFile(name: string, text: string): string {
  const f = path.join(srv.dataDir, name);
  fs.writeFileSync(f, text);
  return f;
}

describe('kubectl', () => {
  test('client-side apply twice with changes (strategic merge patch on the second)', () => {
    const f = writeFile('csa.json', JSON.stringify(deployment('csa', 1, 'nginx:1.25')));
    expect(srv.kubectl(['apply', '-f', f]).stdout.trim()).toBe('deployment.apps/csa created');
    writeFile('csa.json', JSON.stringify(deployment('csa', 3, 'nginx:1.26')));
    const r = srv.kubectl(['apply', '-f', f]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('deployment.apps/csa configured');
    const got = srv.kubectl([
      'get',
      'deploy',
      'csa',
      '-o',
      'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.metadata.generation}',
    ]);
    expect(got.stdout).toBe('3 nginx:1.26 2');
  });

  test('apply --server-side, a conflict between two field managers, and --force-conflicts', () => {
    const f = writeFile('ssa.json', JSON.stringify(deployment('ssa', 2, 'nginx:1.25')));
    expect(srv.kubectl(['apply', '--server-side', '-f', f]).stdout.trim()).toBe('deployment.apps/ssa serverside-applied');
    const other = writeFile('ssa-other.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\nspec:\n  replicas: 5\n');
    const c = srv.kubectl(['apply', '--server-side', '--field-manager=autoscaler', '-f', other]);
    expect(c.code).not.toBe(0);
    // An applier is named without its apiVersion (updaters get "using <apiVersion>").
    expect(c.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    const forced = srv.kubectl(['apply', '--server-side', '--field-manager=autoscaler', '--force-conflicts', '-f', other]);
    expect(forced.code).toBe(0);
    const mf = JSON.parse(srv.kubectl(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields']).stdout);
    expect(mf.spec.replicas).toBe(5);
    const managers = mf.metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`).sort();
    expect(managers).toEqual(['autoscaler/Apply', 'kubectl/Apply']);
    const kubectlEntry = mf.metadata.managedFields.find((m: { manager: string }) => m.manager === 'kubectl');
    expect(kubectlEntry.fieldsV1['f:spec']['f:replicas']).toBeUndefined();
    expect(kubectlEntry.fieldsV1['f:spec']['f:template']).toBeDefined();
  });

  test('patch --type json | merge | strategic', () => {
    srv.kubectl(['create', '-f', writeFile('p.json', JSON.stringify(deployment('pt', 1, 'busybox')))]);
    expect(srv.kubectl(['patch', 'deploy', 'pt', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":2}]']).code).toBe(
      0,
    );
    expect(srv.kubectl(['patch', 'deploy', 'pt', '--type=merge', '-p', '{"metadata":{"labels":{"m":"x"}}}']).code).toBe(0);
    // A strategic merge patch merges containers by name instead of replacing the list.
    expect(
      srv.kubectl([
        'patch',
        'deploy',
        'pt',
        '--type=strategic',
        '-p',
        '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"pause"}]}}}}',
      ]).code,
    ).toBe(0);
    const d = JSON.parse(srv.kubectl(['get', 'deploy', 'pt', '-o', 'json']).stdout);
    expect(d.spec.replicas).toBe(2);
    expect(d.metadata.labels.m).toBe('x');
    expect(d.spec.template.spec.containers.map((c: { name: string }) => c.name).sort()).toEqual(['main', 'side']);
    const bad = srv.kubectl(['patch', 'deploy', 'pt', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":9}]']);
    expect(bad.code).not.toBe(0);
  });

  test('edit-style PUT (kubectl replace) and --dry-run=server', () => {
    srv.kubectl(['create', '-f', writeFile('r.json', JSON.stringify(deployment('rp', 1, 'busybox')))]);
    const cur = JSON.parse(srv.kubectl(['get', 'deploy', 'rp', '-o', 'json']).stdout);
    cur.spec.replicas = 4;
    const r = srv.kubectl(['replace', '-f', writeFile('r2.json', JSON.stringify(cur))]);
    expect(r.stdout.trim()).toBe('deployment.apps/rp replaced');
    const d1 = srv.kubectl(['create', '-f', writeFile('dry.json', JSON.stringify(deployment('dry', 1, 'busybox'))), '--dry-run=server']);
    expect(d1.stdout.trim()).toBe('deployment.apps/dry created (server dry run)');
    expect(srv.kubectl(['get', 'deploy', 'dry']).code).not.toBe(0);
    const d2 = srv.kubectl(['delete', 'deploy', 'rp', '--dry-run=server']);
    expect(d2.stdout.trim()).toBe('deployment.apps "rp" deleted (server dry run)');
    expect(srv.kubectl(['get', 'deploy', 'rp', '-o', 'jsonpath={.spec.replicas}']).stdout).toBe('4');
  });

  test('create --validate=strict with an unknown field is refused by the server', () => {
    const f = writeFile('strict.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\nbogus: 1\n');
    const r = srv.kubectl(['create', '--validate=strict', '-f', f]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('strict decoding error: unknown field "bogus"');
  });
});

describe('scale subresource', () => {
  test('kubectl scale (with --current-replicas) and the autoscaling/v1 Scale over HTTP', async () => {
    srv.kubectl(['create', '-f', writeFile('sc.json', JSON.stringify(deployment('sc', 2, 'busybox')))]);
    expect(srv.kubectl(['scale', 'deploy', 'sc', '--replicas=4']).stdout.trim()).toBe('deployment.apps/sc scaled');
    expect(srv.kubectl(['scale', 'deploy', 'sc', '--current-replicas=4', '--replicas=6']).code).toBe(0);
    const stale = srv.kubectl(['scale', 'deploy', 'sc', '--current-replicas=4', '--replicas=7']);
    expect(stale.stderr).toContain('Expected replicas to be 4, was 6');
    const p = '/apis/apps/v1/namespaces/default/deployments/sc/scale';
    const g = await srv.json('GET', p);
    expect(g.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 6 },
      status: { replicas: 0, selector: 'app=sc' },
    });
    const neg = await srv.json('PUT', p, { ...g.body, spec: { replicas: -1 } });
    expect(neg.status).toBe(422);
    expect(neg.body.details.causes[0]).toMatchObject({ field: 'spec.replicas', reason: 'FieldValueInvalid' });
    const old = await srv.json('PUT', p, { ...g.body, metadata: { ...g.body.metadata, resourceVersion: '1' }, spec: { replicas: 2 } });
    expect(old.status).toBe(409);
    const disc = await srv.json('GET', '/apis/apps/v1');
    expect(disc.body.resources.find((r: { name: string }) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
    const d = await srv.json('GET', '/apis/apps/v1/namespaces/default/deployments/sc');
    expect(d.body.spec.replicas).toBe(6);
    expect(d.body.metadata.generation).toBe(3);
  });

  test('a merge patch of the Scale racing other writers is applied again to the newer object; a resourceVersion in it still pins it', async () => {
    srv.kubectl(['create', '-f', writeFile('race.json', JSON.stringify(deployment('race', 1, 'busybox')))]);
    const base = '/apis/apps/v1/namespaces/default/deployments/race';
    const mp = { 'content-type': 'application/merge-patch+json' };
    // Label patches of the Deployment move its resourceVersion between the Scale's read and write.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? srv.json('PATCH', `${base}/scale`, { spec: { replicas: 2 + (i % 5) } }, mp)
          : srv.json('PATCH', base, { metadata: { labels: { [`l${i}`]: 'x' } } }, mp),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
    const stale = await srv.json('PATCH', `${base}/scale`, { metadata: { resourceVersion: '1' }, spec: { replicas: 9 } }, mp);
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const d = await srv.json('GET', base);
    expect(d.body.spec.replicas).not.toBe(9);
  });
});

describe('HTTP', () => {
  test('apply creates when absent (201), needs fieldManager (400), refuses managedFields in the body', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap\ndata:\n  a: "1"\n';
    const h = { 'content-type': 'application/apply-patch+yaml' };
    const noMgr = await srv.json('PATCH', '/api/v1/namespaces/default/configmaps/ap', yaml, h);
    expect(noMgr.status).toBe(400);
    expect(noMgr.body.reason).toBe('BadRequest');
    expect(noMgr.body.message).toContain('fieldManager: Required value: is required for apply patch');
    const c = await srv.json('PATCH', '/api/v1/namespaces/default/configmaps/ap?fieldManager=m1', yaml, h);
    expect(c.status).toBe(201);
    expect(c.body.metadata.managedFields[0]).toMatchObject({ manager: 'm1', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    const withMf = await srv.json('PATCH', '/api/v1/namespaces/default/configmaps/ap?fieldManager=m1', { ...c.body }, h);
    expect(withMf.status).toBe(400);
    expect(withMf.body.message).toContain('metadata.managedFields must be nil');
  });

  test('fields an applier stops sending are removed unless another manager owns them', async () => {
    const h = { 'content-type': 'application/apply-patch+yaml' };
    const p = '/api/v1/namespaces/default/configmaps/own';
    await srv.json(
      'PATCH',
      `${p}?fieldManager=a`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'own' }, data: { x: '1', y: '2' } },
      h,
    );
    await srv.json('PATCH', `${p}?fieldManager=b`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'own' }, data: { y: '2' } }, h);
    const r = await srv.json(
      'PATCH',
      `${p}?fieldManager=a`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'own' }, data: {} },
      h,
    );
    expect(r.status).toBe(200);
    // x (owned by a only) is gone; y (shared with b) stays.
    expect(r.body.data).toEqual({ y: '2' });
  });

  test('managedFields reset with [{}] (merge patch), not with []', async () => {
    const p = '/api/v1/namespaces/default/configmaps/reset';
    await srv.json('POST', '/api/v1/namespaces/default/configmaps?fieldManager=creator', { metadata: { name: 'reset' }, data: { a: '1' } });
    const keep = await srv.json('PATCH', p, { metadata: { managedFields: [] } }, { 'content-type': 'application/merge-patch+json' });
    expect(keep.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(['creator']);
    const reset = await srv.json('PATCH', p, { metadata: { managedFields: [{}] } }, { 'content-type': 'application/merge-patch+json' });
    expect(reset.status).toBe(200);
    expect((reset.body.metadata.managedFields ?? []).map((m: { manager: string }) => m.manager)).not.toContain('creator');
  });

  test("what a create's writer owns is the decoded object: a Secret's stringData as data, not the strategy's fields", async () => {
    const s = await srv.json('POST', '/api/v1/namespaces/default/secrets?fieldManager=creator', {
      metadata: { name: 'owned-data' },
      data: { a: Buffer.from('x').toString('base64') },
      stringData: { b: 'y' },
    });
    expect(s.status).toBe(201);
    expect(s.body.data).toEqual({ a: 'eA==', b: 'eQ==' });
    const [entry] = s.body.metadata.managedFields;
    expect(entry.manager).toBe('creator');
    expect(entry.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} }, 'f:type': {} });
    // A stringData that is not a map of strings is still refused by the schema, not merged.
    const bad = await srv.json('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'bad-sd' }, stringData: { b: 1 } });
    expect(bad.status).toBe(400);
    // The namespace's finalizers come from its strategy: nobody owns them.
    const ns = await srv.json('POST', '/api/v1/namespaces?fieldManager=creator', { metadata: { name: 'owned-ns' } });
    expect(ns.body.spec.finalizers).toEqual(['kubernetes']);
    // Its name label is a default of decoding (SetDefaults_Namespace): the writer owns it.
    expect(ns.body.metadata.managedFields[0].fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } },
    });
  });

  test('a patch conditional on resourceVersion conflicts when stale (409); unsupported patch type 415', async () => {
    const c = await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cond' }, data: { a: '1' } });
    await srv.json(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cond',
      { data: { a: '2' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    const stale = await srv.json(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/cond',
      { metadata: { resourceVersion: c.body.metadata.resourceVersion }, data: { a: '3' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const u = await srv.json('PATCH', '/api/v1/namespaces/default/configmaps/cond', '{}', { 'content-type': 'text/plain' });
    expect(u.status).toBe(415);
  });

  test('a failed JSON patch test operation is 422 and changes nothing', async () => {
    await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'jt' }, data: { a: '1' } });
    const r = await srv.json(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/jt',
      [
        { op: 'test', path: '/data/a', value: '2' },
        { op: 'replace', path: '/data/a', value: '3' },
      ],
      {
        'content-type': 'application/json-patch+json',
      },
    );
    expect(r.status).toBe(422);
    expect((await srv.json('GET', '/api/v1/namespaces/default/configmaps/jt')).body.data.a).toBe('1');
  });

  test('field validation: Warn adds one Warning header per unknown or duplicate field; Strict lists them all; Ignore is silent', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv","name":"fv"},"data":{"a":"1"},"foo":1,"bar":{"x":1}}';
    const warn = await srv.fetch('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(warn.status).toBe(201);
    const warnings = (warn.headers.get('warning') ?? '').split(/,\s*(?=299)/);
    // Duplicates first, then unknown fields in document order.
    expect(warnings).toEqual([
      '299 - "duplicate field \\"metadata.name\\""',
      '299 - "unknown field \\"foo\\""',
      '299 - "unknown field \\"bar\\""',
    ]);
    const strict = await srv.json('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body.replace('"fv"', '"fv2"'));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", unknown field "foo", unknown field "bar"',
    );
    const ignore = await srv.fetch('/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body.replaceAll('"fv"', '"fv3"'),
    });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.get('warning')).toBeNull();
    // A type error is fatal at every level and reported alone.
    const typeErr = await srv.json('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', {
      metadata: { name: 'te' },
      data: { a: 1 },
      foo: 1,
    });
    expect(typeErr.status).toBe(400);
    expect(typeErr.body.message).not.toContain('unknown field');
  });

  test('dry run: same answer, nothing persisted, no watch event; a bad dryRun value is 400', async () => {
    const w = await srv.fetch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=2');
    const c = await srv.json('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
      metadata: { name: 'dry-cm' },
      data: { a: '1' },
    });
    expect(c.status).toBe(201);
    expect(c.body.metadata.name).toBe('dry-cm');
    expect((await srv.json('GET', '/api/v1/namespaces/default/configmaps/dry-cm')).status).toBe(404);
    const stream = await w.text();
    expect(stream).not.toContain('dry-cm');
    const bad = await srv.json('POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', { metadata: { name: 'x' } });
    expect(bad.status).toBe(400);
  });
});

describe('concurrent writes to one object', () => {
  // Each write is retried on its own against the newest version (no resourceVersion sent): none
  // may be lost, whatever the interleaving.
  const P = '/api/v1/namespaces/default/configmaps';
  const cases: [string, string, (i: number) => unknown, (o: Json) => number][] = [
    [
      'strategic merge',
      'application/strategic-merge-patch+json',
      (i) => ({ metadata: { labels: { [`l${i}`]: 'x' } } }),
      (o) => Object.keys(o.metadata.labels).length - 1,
    ],
    ['merge', 'application/merge-patch+json', (i) => ({ data: { [`k${i}`]: String(i) } }), (o) => Object.keys(o.data).length - 1],
    [
      'JSON patch',
      'application/json-patch+json',
      (i) => [{ op: 'add', path: `/metadata/annotations/a${i}`, value: 'v' }],
      (o) => Object.keys(o.metadata.annotations).length - 1,
    ],
    [
      'apply (one manager each)',
      'application/apply-patch+yaml',
      (i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'race' }, data: { [`m${i}`]: 'v' } }),
      (o) => Object.keys(o.data).length - 1,
    ],
  ];
  for (const [name, type, patch, count] of cases) {
    test(`${name}: 100 patches at once, each applied once`, async () => {
      await srv.json('DELETE', `${P}/race`);
      const c = await srv.json('POST', P, { metadata: { name: 'race', labels: { a: 'b' }, annotations: { z: 'z' } }, data: { a: 'b' } });
      expect(c.status).toBe(201);
      const N = 100;
      const res = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          srv.json('PATCH', `${P}/race${type.includes('apply') ? `?fieldManager=m${i}` : ''}`, patch(i), { 'content-type': type }),
        ),
      );
      expect(res.map((r) => r.status)).toEqual(Array(N).fill(200));
      const got = (await srv.json('GET', `${P}/race`)).body;
      expect(count(got)).toBe(N);
      // One revision per patch, and the responses' revisions are all distinct. (On etcd the
      // revision is shared with the controllers' Lease renewals: at least N, not exactly.)
      const after = Number(got.metadata.resourceVersion) - Number(c.body.metadata.resourceVersion);
      if (process.env.SVC_TEST_STORE === 'etcd') expect(after).toBeGreaterThanOrEqual(N);
      else expect(after).toBe(N);
      expect(new Set(res.map((r) => r.body.metadata.resourceVersion)).size).toBe(N);
    });
  }
});
