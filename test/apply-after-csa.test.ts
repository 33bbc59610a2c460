/**
 * Issue 34 item 4: server-side apply after client-side apply (the reference's lastAppliedManager
 * and lastAppliedUpdater), with kubectl as users run it: `kubectl apply` then `kubectl apply
 * --server-side` and `kubectl diff --server-side` take over what the last-applied annotation
 * records, keep that annotation up to date (`kubectl apply view-last-applied`), and still
 * conflict on fields someone else changed since, or for another field manager.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { serverForFile } from './helpers/server';

// Waits poll with deadlines of several seconds; on a loaded 2-core CI machine a test may take longer than bun's 5 s default.
setDefaultTimeout(60_000);

const srv = serverForFile();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csa-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const LAST = 'kubectl.kubernetes.io/last-applied-configuration';

function manifest(ns: string, a: string, b: string, app: string): string {
  const f = path.join(dir, `${ns}-${a}-${b}-${app}.yaml`);
  fs.writeFileSync(
    f,
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: ${ns}\n  labels: {app: ${app}}\ndata:\n  a: "${a}"\n  b: "${b}"\n`,
  );
  return f;
}

async function namespace(name: string): Promise<void> {
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name } })).status).toBe(201);
}

test('kubectl apply, then --server-side: no conflict with what was applied client-side; the annotation follows', async () => {
  await namespace('csa-1');
  expect(srv.kubectl(['apply', '-f', manifest('csa-1', '1', '2', 'one')]).code).toBe(0);
  const diff = srv.kubectl(['diff', '--server-side', '-f', manifest('csa-1', '10', '2', 'two')]);
  expect(diff.code).toBe(1);
  expect(diff.stdout).toContain('+  a: "10"');
  const r = srv.kubectl(['apply', '--server-side', '-f', manifest('csa-1', '10', '2', 'two')]);
  expect(r.stderr).toBe('');
  expect(r.stdout).toContain('configmap/cfg serverside-applied');
  const got = (await srv.json('GET', '/api/v1/namespaces/csa-1/configmaps/cfg')).body;
  expect(got.data).toEqual({ a: '10', b: '2' });
  expect(got.metadata.labels).toEqual({ app: 'two' });
  // As the reference writes it: the applied configuration without the annotation, keys sorted.
  expect(got.metadata.annotations[LAST]).toBe(
    '{"apiVersion":"v1","data":{"a":"10","b":"2"},"kind":"ConfigMap","metadata":{"labels":{"app":"two"},"name":"cfg","namespace":"csa-1"}}\n',
  );
  const kubectlEntry = got.metadata.managedFields.find((m: { manager: string }) => m.manager === 'kubectl');
  expect(kubectlEntry.operation).toBe('Apply');
  expect(kubectlEntry.fieldsV1['f:data']).toEqual({ 'f:a': {}, 'f:b': {} });
  const view = srv.kubectl(['apply', 'view-last-applied', '-n', 'csa-1', 'configmap/cfg', '-o', 'json']);
  expect(JSON.parse(view.stdout).data).toEqual({ a: '10', b: '2' });
  // And client-side apply again works from the updated annotation.
  expect(srv.kubectl(['apply', '-f', manifest('csa-1', '10', '3', 'two')]).code).toBe(0);
  expect((await srv.json('GET', '/api/v1/namespaces/csa-1/configmaps/cfg')).body.data).toEqual({ a: '10', b: '3' });
});

test('a field changed by another manager since still conflicts; so does another field manager', async () => {
  await namespace('csa-2');
  expect(srv.kubectl(['apply', '-f', manifest('csa-2', '1', '2', 'one')]).code).toBe(0);
  const other = await srv.json(
    'PATCH',
    '/api/v1/namespaces/csa-2/configmaps/cfg?fieldManager=someone-else',
    { data: { b: '5' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  expect(other.status).toBe(200);
  const r = srv.kubectl(['apply', '--server-side', '-f', manifest('csa-2', '1', '3', 'one')]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('conflict with "someone-else"');
  expect(r.stderr).toContain('.data.b');
  // Another manager than kubectl gets no such takeover.
  const m = srv.kubectl(['apply', '--server-side', '--field-manager=tool', '-f', manifest('csa-2', '9', '5', 'one')]);
  expect(m.code).not.toBe(0);
  expect(m.stderr).toContain('conflict with "kubectl-client-side-apply"');
  expect((await srv.json('GET', '/api/v1/namespaces/csa-2/configmaps/cfg')).body.data).toEqual({ a: '1', b: '5' });
});

test('defaults are not the applier’s: an apply that leaves out a defaulted field owned by another manager does not conflict', async () => {
  const ns = '/api/v1/namespaces/default/replicationcontrollers';
  const rc = {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'rc-defaults' },
    spec: {
      replicas: 2,
      selector: { app: 'rcd' },
      template: { metadata: { labels: { app: 'rcd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
  expect((await srv.json('POST', `${ns}?fieldManager=creator`, rc)).status).toBe(201);
  // The applier leaves spec.replicas out: its default (1) is not part of its configuration.
  const { replicas: _r, ...spec } = rc.spec;
  const applied = await srv.json(
    'PATCH',
    `${ns}/rc-defaults?fieldManager=applier`,
    { ...rc, spec },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  expect(applied.status).toBe(200);
  expect(applied.body.spec.replicas).toBe(2);
  const mine = applied.body.metadata.managedFields.find((m: { manager: string }) => m.manager === 'applier');
  expect(JSON.stringify(mine.fieldsV1)).not.toContain('f:replicas');
  // Created by apply without replicas: the default fills it, owned by nobody's configuration.
  const fresh = await srv.json(
    'PATCH',
    `${ns}/rc-fresh?fieldManager=applier`,
    { ...rc, metadata: { name: 'rc-fresh' }, spec },
    {
      'content-type': 'application/apply-patch+yaml',
    },
  );
  expect(fresh.status).toBe(201);
  expect(fresh.body.spec.replicas).toBe(1);
});
