/**
 * Aggregated APIs (src/aggregation/) end to end: a real HTTPS backend started here (its own CA,
 * a certificate for `wardle.aggregation-test.svc`) serves a tiny API group, registered as a
 * Service, an EndpointSlice pointing at this host's address and the backend's port (loopback
 * addresses are invalid in EndpointSlices, as in the reference) and an APIService with the CA
 * bundle.
 * kubectl reaches it through the server (discovery, aggregated discovery, get, create, a watch);
 * the backend sees the user as X-Remote-User/Group, after this server authorized the request; a
 * wrong CA bundle fails verification; the Available condition gives the reference's reasons; a
 * backend that stops answers 503 and turns Available False, and True again when it is back.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import * as os from 'node:os';
import { generateCertificates } from '../src/auth/certs';
import { KUBECTL, type Server, STATIC_SERVICES_STORAGE, serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const NS = 'aggregation-test';
const SVC = 'wardle';
const GROUP = 'wardle.example.io';
const GV = `${GROUP}/v1alpha1`;
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** This host's first IPv4 address that is not loopback: the backend's endpoint. */
const HOST = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

const srv = serverForFile({ args: [STATIC_SERVICES_STORAGE] });

/** kubectl without blocking this process (the backend answers from it). */
async function kubectl(s: Server, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${s.kubeconfig}`, ...args], {
    env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, stdout, stderr };
}

interface Seen {
  path: string;
  user: string | null;
  groups: string | null;
  authorization: string | null;
  impersonate: string | null;
  auditId: string | null;
}

const seen: Seen[] = [];
let backend: ReturnType<typeof Bun.serve> | undefined;
let backendPort = 0;
let ca = '';
let otherCa = '';

const flunder = (name: string): Any => ({
  apiVersion: GV,
  kind: 'Flunder',
  metadata: { name, namespace: NS, resourceVersion: '1', creationTimestamp: '2026-11-26T00:00:00Z' },
});

/** The backend's OpenAPI v3 document of its group version. */
const FLUNDER_OPENAPI = {
  openapi: '3.0.0',
  info: { title: 'wardle', version: 'v1alpha1' },
  paths: {
    [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`]: {
      get: {
        operationId: 'readFlunder',
        responses: {
          '200': {
            description: 'OK',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/io.example.wardle.v1alpha1.Flunder' } } },
          },
        },
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': { group: GROUP, version: 'v1alpha1', kind: 'Flunder' },
      },
    },
  },
  components: {
    schemas: {
      'io.example.wardle.v1alpha1.Flunder': {
        description: 'A flunder of the wardle API.',
        type: 'object',
        properties: {
          apiVersion: { type: 'string', description: 'APIVersion of the object.' },
          kind: { type: 'string', description: 'Kind of the object.' },
          spec: {
            type: 'object',
            description: 'What the flunder wants.',
            properties: { reference: { type: 'string', description: 'The flunder this one refers to.' } },
          },
        },
        'x-kubernetes-group-version-kind': [{ group: GROUP, version: 'v1alpha1', kind: 'Flunder' }],
      },
    },
  },
};

/** The tiny aggregated API server: discovery of its group version and flunders (list and watch). */
function serveBackend(cert: string, key: string, port = 0): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: '0.0.0.0',
    port,
    tls: { cert, key },
    fetch(req) {
      const url = new URL(req.url);
      const h = req.headers;
      seen.push({
        path: url.pathname,
        user: h.get('x-remote-user'),
        groups: h.get('x-remote-group'),
        authorization: h.get('authorization'),
        impersonate: h.get('impersonate-user'),
        auditId: h.get('audit-id'),
      });
      // Requests come from the aggregator only, with the user in X-Remote-User.
      if (!h.get('x-remote-user')) return Response.json({ kind: 'Status', status: 'Failure', code: 401 }, { status: 401 });
      const p = url.pathname.replace(/\/$/, '');
      if (p.endsWith('/v1alpha1') && p.startsWith('/apis/')) {
        return Response.json({
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: p.slice('/apis/'.length),
          resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list', 'watch'] }],
        });
      }
      // OpenAPI v3: the index and the group version's document (kubectl explain).
      if (p === '/openapi/v3')
        return Response.json({ paths: { [`apis/${GV}`]: { serverRelativeURL: `/openapi/v3/apis/${GV}?hash=F00D` } } });
      if (p === `/openapi/v3/apis/${GV}`) return Response.json(FLUNDER_OPENAPI);
      // A create echoes the body with server-set fields.
      if (req.method === 'POST' && p === `/apis/${GV}/namespaces/${NS}/flunders`) {
        return req.json().then((b) => {
          const o = b as Any;
          return Response.json({ ...o, metadata: { ...o.metadata, namespace: NS, uid: 'u-1', resourceVersion: '2' } }, { status: 201 });
        });
      }
      if (p === `/apis/${GV}/namespaces/${NS}/flunders` || p === `/apis/${GV}/flunders`) {
        if (url.searchParams.get('watch') === 'true') {
          const line = `${JSON.stringify({ type: 'ADDED', object: flunder('first') })}\n`;
          // The event, then the stream stays open until the client goes.
          const body = new ReadableStream({
            start(ctl) {
              ctl.enqueue(new TextEncoder().encode(line));
            },
          });
          return new Response(body, { headers: { 'content-type': 'application/json' } });
        }
        return Response.json({ kind: 'FlunderList', apiVersion: GV, metadata: { resourceVersion: '1' }, items: [flunder('first')] });
      }
      return Response.json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }, { status: 404 });
    },
  });
}

beforeAll(async () => {
  if (!HOST) throw new Error('this test needs a network interface with an IPv4 address other than loopback');
  const certs = await generateCertificates([`${SVC}.${NS}.svc`]);
  ca = certs.ca;
  otherCa = (await generateCertificates([`${SVC}.${NS}.svc`])).ca;
  backend = serveBackend(certs.cert, certs.key);
  backendPort = backend.port as number;
});

afterAll(() => {
  backend?.stop(true);
});

const apiService = (version: string, group: string, caPem: string): Any => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: `${version}.${group}` },
  spec: {
    group,
    version,
    service: { namespace: NS, name: SVC },
    caBundle: Buffer.from(caPem).toString('base64'),
    groupPriorityMinimum: 1000,
    versionPriority: 15,
  },
});

const available = async (name: string): Promise<Any> => {
  const r = await srv.json('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
  return (r.body.status?.conditions ?? []).find((c: Any) => c.type === 'Available');
};

test('an APIService with a service is Available once its backend answers discovery', async () => {
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  // Before its Service and endpoints exist, the condition says why it is not available.
  expect((await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', apiService('v1alpha1', GROUP, ca))).status).toBe(201);
  const noService = await until(
    () => available(`v1alpha1.${GROUP}`),
    (c) => c?.status === 'False',
    5000,
  );
  expect(noService).toMatchObject({ status: 'False', reason: 'ServiceNotFound', message: `service/${SVC} in "${NS}" is not present` });
  const svc = await srv.json('POST', `/api/v1/namespaces/${NS}/services`, {
    metadata: { name: SVC },
    spec: { ports: [{ name: 'https', port: 443, targetPort: backendPort }] },
  });
  expect(svc.status).toBe(201);
  const missing = await until(
    () => available(`v1alpha1.${GROUP}`),
    (c) => c?.reason !== 'ServiceNotFound',
    5000,
  );
  expect(missing).toMatchObject({ status: 'False', reason: 'EndpointsNotFound' });
  expect(missing.message).toBe(`cannot find endpointslices for service/${SVC} in "${NS}"`);
  const slice = await srv.json('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
    metadata: { name: `${SVC}-1`, labels: { 'kubernetes.io/service-name': SVC } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [HOST], conditions: { ready: true } }],
    ports: [{ name: 'https', port: backendPort, protocol: 'TCP' }],
  });
  expect(slice.status).toBe(201);
  const c = await until(
    () => available(`v1alpha1.${GROUP}`),
    (x) => x?.status === 'True',
    5000,
  );
  expect(c).toMatchObject({ status: 'True', reason: 'Passed', message: 'all checks passed' });
  // The health check identifies itself as the reference's does.
  expect(seen.some((s) => s.user === 'system:kube-aggregator' && s.groups === 'system:masters')).toBe(true);
  const table = await kubectl(srv, ['get', 'apiservice', `v1alpha1.${GROUP}`]);
  expect(table.stdout).toContain(`${NS}/${SVC}`);
  expect(table.stdout).toContain('True');
});

test('discovery lists the aggregated group; kubectl api-resources and kubectl get reach the backend', async () => {
  const apis = await srv.json('GET', '/apis');
  const g = apis.body.groups.find((x: Any) => x.name === GROUP);
  expect(g).toEqual({
    name: GROUP,
    versions: [{ groupVersion: GV, version: 'v1alpha1' }],
    preferredVersion: { groupVersion: GV, version: 'v1alpha1' },
  });
  const group = await srv.json('GET', `/apis/${GROUP}`);
  expect(group.body).toMatchObject({ kind: 'APIGroup', name: GROUP, preferredVersion: { version: 'v1alpha1' } });
  // /apis/<group>/<version> is the backend's own document.
  const rl = await srv.json('GET', `/apis/${GV}`);
  expect(rl.status).toBe(200);
  expect(rl.body.resources.map((r: Any) => r.name)).toEqual(['flunders']);

  // The aggregated discovery document (what kubectl asks for first) has the backend's resources.
  const v2 = await until(
    () =>
      srv
        .fetch('/apis', { headers: { accept: `${V2};q=1, application/json;q=0.5` } })
        .then(async (r) => ({ r, body: (await r.json()) as Any })),
    (x) => x.body.items?.find((i: Any) => i.metadata.name === GROUP)?.versions[0]?.freshness === 'Current',
    5000,
  );
  expect(v2.r.headers.get('content-type')).toBe(V2);
  expect(v2.body.items.find((i: Any) => i.metadata.name === GROUP)).toEqual({
    metadata: { name: GROUP, creationTimestamp: null },
    versions: [
      {
        version: 'v1alpha1',
        freshness: 'Current',
        resources: [
          {
            resource: 'flunders',
            responseKind: { group: GROUP, version: 'v1alpha1', kind: 'Flunder' },
            scope: 'Namespaced',
            singularResource: 'flunder',
            verbs: ['get', 'list', 'watch'],
          },
        ],
      },
    ],
  });
  const res = await kubectl(srv, ['api-resources', `--api-group=${GROUP}`]);
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(new RegExp(`flunders\\s+${GV.replace(/\./g, '\\.')}\\s+true\\s+Flunder`));

  seen.length = 0;
  const get = await kubectl(srv, ['get', 'flunders', '-n', NS]);
  expect(get.stderr).toBe('');
  expect(get.code).toBe(0);
  expect(get.stdout).toContain('first');
  // The backend saw the authenticated user, not the bearer token.
  const list = seen.find((s) => s.path === `/apis/${GV}/namespaces/${NS}/flunders`) as Seen;
  expect(list).toBeDefined();
  expect(list.user).toBeTruthy();
  expect(list.groups).toContain('system:authenticated');
  expect(list.authorization).toBeNull();
  expect(list.auditId).toBeTruthy();
});

test('kubectl create sends the body through', async () => {
  const manifest = `apiVersion: ${GV}\nkind: Flunder\nmetadata:\n  name: second\n  namespace: ${NS}\nspec:\n  reference: first\n`;
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${srv.kubeconfig}`, 'create', '-f', '-', '-o', 'json'], {
    stdin: new TextEncoder().encode(manifest),
    env: { ...process.env, KUBECONFIG: srv.kubeconfig, HOME: srv.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  expect(stderr).toBe('');
  expect(await p.exited).toBe(0);
  expect(JSON.parse(stdout)).toMatchObject({ kind: 'Flunder', metadata: { name: 'second', uid: 'u-1' }, spec: { reference: 'first' } });
});

test("the backend's OpenAPI v3 document is listed and proxied: kubectl explain", async () => {
  const index = await until(
    () => srv.json('GET', '/openapi/v3'),
    (r) => r.body.paths?.[`apis/${GV}`] !== undefined,
    5000,
  );
  expect(index.body.paths[`apis/${GV}`]).toEqual({ serverRelativeURL: `/openapi/v3/apis/${GV}?hash=F00D` });
  expect(index.body.paths['apis/apps/v1']).toBeDefined();
  const explain = await kubectl(srv, ['explain', 'flunders.spec']);
  expect(explain.stderr).toBe('');
  expect(explain.stdout).toContain('KIND:       Flunder');
  expect(explain.stdout).toContain('What the flunder wants.');
  expect(explain.stdout).toContain('The flunder this one refers to.');
});

test('the user is authorized here first; an impersonated user reaches the backend as X-Remote-User', async () => {
  // bob may not list flunders: this server says 403, the backend is not asked.
  seen.length = 0;
  const denied = await srv.json('GET', `/apis/${GV}/namespaces/${NS}/flunders`, undefined, { 'Impersonate-User': 'bob' });
  expect(denied.status).toBe(403);
  expect(denied.body.message).toBe(
    `flunders.wardle.example.io is forbidden: User "bob" cannot list resource "flunders" in API group "${GROUP}" in the namespace "${NS}"`,
  );
  // (Health checks and discovery refreshes may reach it meanwhile; none lists flunders.)
  expect(seen.filter((x) => x.path.endsWith('/flunders'))).toEqual([]);
  const r = await srv.fetch(`/apis/${GV}/namespaces/${NS}/flunders`, {
    headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters' },
  });
  expect(r.status).toBe(200);
  expect(((await r.json()) as Any).items[0].metadata.name).toBe('first');
  const s = seen.find((x) => x.path.endsWith('/flunders')) as Seen;
  expect(s.user).toBe('alice');
  // One X-Remote-Group line per group (Bun's server shows them joined).
  expect(s.groups?.split(', ').sort()).toEqual(['system:authenticated', 'system:masters']);
  expect(s.impersonate).toBeNull();
  // Unauthenticated: 401 here.
  expect((await srv.fetch(`/apis/${GV}/flunders`, { token: null })).status).toBe(401);
});

test('a watch streams through the proxy', async () => {
  const ctl = new AbortController();
  const r = await srv.fetch(`/apis/${GV}/namespaces/${NS}/flunders?watch=true`, { signal: ctl.signal });
  expect(r.status).toBe(200);
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  // The first event arrives while the backend keeps the stream open.
  const first = await Promise.race([reader.read(), Bun.sleep(3000).then(() => undefined)]);
  expect(first?.done).toBe(false);
  const ev = JSON.parse(new TextDecoder().decode(first?.value).trim());
  expect(ev).toMatchObject({ type: 'ADDED', object: { kind: 'Flunder', metadata: { name: 'first' } } });
  ctl.abort();
});

test('a caBundle that did not sign the backend certificate fails verification (503)', async () => {
  const other = apiService('v1alpha1', 'badca.example.io', otherCa);
  expect((await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', other)).status).toBe(201);
  // The health check does not verify (as the reference): the APIService is available...
  const c = await until(
    () => available('v1alpha1.badca.example.io'),
    (x) => x?.status === 'True',
    5000,
  );
  expect(c?.status).toBe('True');
  // ...but proxied requests verify the caBundle against <service>.<namespace>.svc.
  const r = await srv.fetch('/apis/badca.example.io/v1alpha1/namespaces/default/flunders');
  expect(r.status).toBe(503);
  expect(await r.text()).toBe('tls: failed to verify certificate: x509: certificate signed by unknown authority\n');
  expect((await srv.fetch('/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.badca.example.io', { method: 'DELETE' })).status).toBe(200);
});

test('the reference reasons: a port the Service lacks, endpoints not ready', async () => {
  const wrongPort = apiService('v1alpha1', 'ports.example.io', ca);
  wrongPort.spec.service.port = 8443;
  expect((await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', wrongPort)).status).toBe(201);
  expect(
    (
      await srv.json('POST', `/api/v1/namespaces/${NS}/services`, {
        metadata: { name: 'idle' },
        spec: { ports: [{ name: 'https', port: 443 }] },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await srv.json('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
        metadata: { name: 'idle-1', labels: { 'kubernetes.io/service-name': 'idle' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [HOST], conditions: { ready: false } }],
        ports: [{ name: 'https', port: backendPort, protocol: 'TCP' }],
      })
    ).status,
  ).toBe(201);
  const notReady = apiService('v1alpha1', 'idle.example.io', ca);
  notReady.spec.service.name = 'idle';
  expect((await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', notReady)).status).toBe(201);
  const port = await until(
    () => available('v1alpha1.ports.example.io'),
    (c) => c?.status === 'False',
    5000,
  );
  expect(port).toMatchObject({ reason: 'ServicePortError', message: `service/${SVC} in "${NS}" is not listening on port 8443` });
  const idle = await until(
    () => available('v1alpha1.idle.example.io'),
    (c) => c?.status === 'False',
    5000,
  );
  expect(idle).toMatchObject({
    reason: 'MissingEndpoints',
    message: `endpointslices for service/idle in "${NS}" have no addresses with port name "https"`,
  });
  // Not available: the proxy answers for it.
  const r = await srv.fetch('/apis/idle.example.io/v1alpha1/namespaces/default/flunders');
  expect(r.status).toBe(503);
  expect(await r.text()).toBe('service unavailable\n');
  for (const name of ['v1alpha1.ports.example.io', 'v1alpha1.idle.example.io']) {
    expect((await srv.fetch(`/apis/apiregistration.k8s.io/v1/apiservices/${name}`, { method: 'DELETE' })).status).toBe(200);
  }
});

test('an ExternalName Service reaches the backend by name (no endpoint checks)', async () => {
  const svc = await srv.json('POST', `/api/v1/namespaces/${NS}/services`, {
    metadata: { name: 'wardle-external' },
    spec: { type: 'ExternalName', externalName: 'localhost' },
  });
  expect(svc.status).toBe(201);
  const o = apiService('v1alpha1', 'external.example.io', ca);
  // The certificate names wardle.<ns>.svc: verification is skipped for this one.
  o.spec.service = { namespace: NS, name: 'wardle-external', port: backendPort };
  o.spec.caBundle = undefined;
  o.spec.insecureSkipTLSVerify = true;
  expect((await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', o)).status).toBe(201);
  const c = await until(
    () => available('v1alpha1.external.example.io'),
    (x) => x?.status === 'True',
    5000,
  );
  expect(c).toMatchObject({ status: 'True', reason: 'Passed' });
  const r = await srv.json('GET', '/apis/external.example.io/v1alpha1');
  expect(r.status).toBe(200);
  expect(r.body.groupVersion).toBe('external.example.io/v1alpha1');
  expect((await srv.fetch('/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.external.example.io', { method: 'DELETE' })).status).toBe(
    200,
  );
});

test('a stopped backend: 503 service unavailable and Available False (FailedDiscoveryCheck)', async () => {
  backend?.stop(true);
  const first = await srv.fetch(`/apis/${GV}/namespaces/${NS}/flunders`);
  expect(first.status).toBe(503);
  expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  // The failed proxy queues a check: the condition turns False at once.
  const c = await until(
    () => available(`v1alpha1.${GROUP}`),
    (x) => x?.status === 'False',
    5000,
  );
  expect(c).toMatchObject({ status: 'False', reason: 'FailedDiscoveryCheck' });
  const url = `https://${HOST}:${backendPort}/apis/${GV}`;
  expect(c.message).toBe(
    `failing or missing response from ${url}: Get "${url}": dial tcp ${HOST}:${backendPort}: connect: connection refused`,
  );
  const r = await srv.fetch(`/apis/${GV}/namespaces/${NS}/flunders`);
  expect(r.status).toBe(503);
  expect(await r.text()).toBe('service unavailable\n');
  const metrics = await (await srv.fetch('/metrics')).text();
  expect(metrics).toContain(`aggregator_unavailable_apiservice{name="v1alpha1.${GROUP}"} 1`);
  expect(metrics).toContain(`aggregator_unavailable_apiservice{name="v1.apps"} 0`);
  expect(metrics).toContain(`aggregator_unavailable_apiservice_total{name="v1alpha1.${GROUP}",reason="FailedDiscoveryCheck"} 1`);
  // Discovery still lists the group (as the reference); kubectl reports the group it cannot read.
  const apis = await srv.json('GET', '/apis');
  expect(apis.body.groups.some((x: Any) => x.name === GROUP)).toBe(true);
  const stale = await until(
    () => srv.fetch('/apis', { headers: { accept: V2 } }).then(async (x) => (await x.json()) as Any),
    (b) => b.items.find((i: Any) => i.metadata.name === GROUP)?.versions[0]?.freshness === 'Stale',
  );
  expect(stale.items.find((i: Any) => i.metadata.name === GROUP)?.versions[0]?.freshness).toBe('Stale');
  const get = await kubectl(srv, ['get', 'flunders', '-n', NS]);
  expect(get.code).not.toBe(0);
  expect(get.stderr).toContain('the server is currently unable to handle the request');
  // The backend comes back on the same port: Available True again.
  const certs = await generateCertificates([`${SVC}.${NS}.svc`]);
  backend = serveBackend(certs.cert, certs.key, backendPort);
  const patched = await srv.json(
    'PATCH',
    `/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.${GROUP}`,
    { spec: { caBundle: Buffer.from(certs.ca).toString('base64') } },
    { 'content-type': 'application/merge-patch+json' },
  );
  expect(patched.status).toBe(200);
  const back = await until(
    () => available(`v1alpha1.${GROUP}`),
    (x) => x?.status === 'True',
    10_000,
  );
  expect(back?.reason).toBe('Passed');
  expect((await srv.fetch(`/apis/${GV}/namespaces/${NS}/flunders`)).status).toBe(200);
});
