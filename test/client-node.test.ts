/**
 * @kubernetes/client-node (the official JavaScript client, unmodified) against the real server,
 * with the admin kubeconfig: list namespaces, create configmaps, page through them with
 * limit + continue until done, errors as ApiException carrying the Status body.
 *
 * Under Bun the client runs in a child process with NODE_EXTRA_CA_CERTS=<data dir>/ca.crt. Why:
 * client-node 2.x sends requests with `fetch` from `undici`, passing the kubeconfig's CA (and
 * client certificates) in an undici `Agent` as `dispatcher`. Bun replaces the `undici` module
 * with its own built-in stub, whose `Agent` is a no-op and whose fetch ignores `dispatcher`; the
 * request then goes out with Bun's default trust store and fails with
 * "unable to verify the first certificate" (UNABLE_TO_VERIFY_LEAF_SIGNATURE). Bun reads
 * NODE_EXTRA_CA_CERTS at process start, so the CA has to be given to a new process. The bearer
 * token from the kubeconfig works unchanged (client-node sets the Authorization header itself).
 */
import { expect, test } from 'bun:test';
import { runClient as runClientIn } from './helpers/client-node';
import { serverForFile } from './helpers/server';

const srv = serverForFile();

const runClient = (body: string) => runClientIn(srv, body);

test('list namespaces', async () => {
  const r = await runClient(`
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const l = await core.listNamespace();
    return { kind: l.kind, apiVersion: l.apiVersion, rv: l.metadata?.resourceVersion, names: l.items.map((n) => n.metadata.name),
             phases: l.items.map((n) => n.status?.phase) };
  `);
  expect(r.kind).toBe('NamespaceList');
  expect(r.apiVersion).toBe('v1');
  expect(r.rv).toMatch(/^\d+$/);
  expect(r.names).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
  expect(r.phases).toEqual(['Active', 'Active', 'Active', 'Active']);
}, 30_000);

test('create configmaps, then list with limit + continue until done', async () => {
  const r = await runClient(`
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'paging' } } });
    const created = [];
    for (let i = 0; i < 23; i++) {
      const name = 'cm-' + String(i).padStart(2, '0');
      const c = await core.createNamespacedConfigMap({ namespace: 'paging', body: { metadata: { name, labels: { parity: i % 2 ? 'odd' : 'even' } }, data: { i: String(i) } } });
      created.push({ name: c.metadata.name, uid: c.metadata.uid, rv: c.metadata.resourceVersion });
    }
    const pages = [];
    let cont = undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: 'paging', limit: 5, _continue: cont });
      pages.push({ names: page.items.map((x) => x.metadata.name), rv: page.metadata.resourceVersion,
                   remaining: page.metadata.remainingItemCount ?? null, cont: page.metadata._continue ?? null });
      cont = page.metadata._continue;
      if (pages.length === 1) await core.createNamespacedConfigMap({ namespace: 'paging', body: { metadata: { name: 'cm-late' } } });
    } while (cont);
    const selected = [];
    cont = undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: 'paging', limit: 4, labelSelector: 'parity=odd', _continue: cont });
      selected.push(...page.items.map((x) => x.metadata.name));
      cont = page.metadata._continue;
    } while (cont);
    return { created, pages, selected };
  `);
  expect(r.created).toHaveLength(23);
  for (const c of r.created) {
    expect(c.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.rv).toMatch(/^\d+$/);
  }
  expect(r.pages).toHaveLength(5);
  const names = r.pages.flatMap((p: { names: string[] }) => p.names);
  expect(names).toEqual(r.created.map((c: { name: string }) => c.name));
  expect(names).not.toContain('cm-late');
  expect(new Set(r.pages.map((p: { rv: string }) => p.rv)).size).toBe(1);
  expect(r.pages.map((p: { remaining: number | null }) => p.remaining)).toEqual([18, 13, 8, 3, null]);
  expect(r.pages[4].cont).toBeNull();
  expect(r.selected).toEqual(r.created.filter((_: unknown, i: number) => i % 2 === 1).map((c: { name: string }) => c.name));
}, 60_000);

test('read, replace, delete and errors (ApiException with the Status body)', async () => {
  const r = await runClient(`
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const c = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rw' }, data: { a: '1' } } });
    const got = await core.readNamespacedConfigMap({ name: 'rw', namespace: 'default' });
    got.data = { a: '2' };
    const replaced = await core.replaceNamespacedConfigMap({ name: 'rw', namespace: 'default', body: got });
    let conflict = null;
    try {
      await core.replaceNamespacedConfigMap({ name: 'rw', namespace: 'default', body: { ...c, data: { a: '3' } } });
    } catch (e) { conflict = { code: e.code, body: JSON.parse(e.body) }; }
    let missing = null;
    try { await core.readNamespacedConfigMap({ name: 'nope', namespace: 'default' }); }
    catch (e) { missing = { code: e.code, body: JSON.parse(e.body) }; }
    const del = await core.deleteNamespacedConfigMap({ name: 'rw', namespace: 'default' });
    const d = await apps.createNamespacedDeployment({ namespace: 'default', body: {
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } },
              template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } } });
    const dl = await apps.listNamespacedDeployment({ namespace: 'default' });
    return { data: replaced.data, rvChanged: replaced.metadata.resourceVersion !== c.metadata.resourceVersion, conflict, missing,
             del: { status: del.status, details: del.details }, deployGen: d.metadata.generation, deployKinds: dl.items.map((x) => x.metadata.name) };
  `);
  expect(r.data).toEqual({ a: '2' });
  expect(r.rvChanged).toBe(true);
  expect(r.conflict.code).toBe(409);
  expect(r.conflict.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
  expect(r.missing).toEqual({
    code: 404,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'configmaps' },
      code: 404,
    },
  });
  expect(r.del.status).toBe('Success');
  expect(r.del.details).toMatchObject({ name: 'rw', kind: 'configmaps' });
  expect(r.deployGen).toBe(1);
  expect(r.deployKinds).toEqual(['web']);
}, 30_000);
