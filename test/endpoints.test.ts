/**
 * The Endpoints, EndpointSlice and EndpointSlice mirroring controllers (src/controllers/endpoints.ts,
 * src/controllers/endpointslice/), end to end on simulated nodes: a Deployment and a Service get
 * Endpoints and a slice with the ready pod IPs and the named target ports resolved; a pod going
 * not ready moves to notReadyAddresses (ready false in the slice); 150 pods make two slices (100
 * and 50); publishNotReadyAddresses; a selectorless Service's hand-made Endpoints are mirrored;
 * `kubectl describe svc` lists the endpoints; deleting the Service deletes its Endpoints.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { hostIPv4Addresses } from '../src/controllers/endpoints';
import { serverForFile, startServer } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const NS = '/api/v1/namespaces/default';
const ES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({ args: ['--simulated-nodes=2'] });

const deployment = (name: string, replicas: number, annotations: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name }, annotations },
      spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
    },
  },
});

const service = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ name: 'web', port: 80, targetPort: 'http' }], ...extra },
});

const endpoints = async (name: string): Promise<Any> => (await srv.json('GET', `${NS}/endpoints/${name}`)).body;
const slicesOf = async (name: string): Promise<Any[]> =>
  (await srv.json('GET', `${ES}?labelSelector=kubernetes.io%2Fservice-name%3D${name}`)).body.items ?? [];
const addresses = (ep: Any, field = 'addresses'): string[] =>
  (ep.subsets ?? []).flatMap((s: Any) => (s[field] ?? []).map((a: Any) => a.ip)).sort();
const readyPods = async (app: string): Promise<Any[]> =>
  ((await srv.json('GET', `${NS}/pods?labelSelector=app%3D${app}`)).body.items ?? []).filter(
    (p: Any) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True'),
  );
const sliceEndpoints = (slices: Any[]): Any[] => slices.flatMap((s) => s.endpoints ?? []);

test('a Service of a Deployment gets Endpoints and an EndpointSlice with the ready pods and the named port', async () => {
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 3))).status).toBe(201);
  expect((await srv.json('POST', `${NS}/services`, service('web'))).status).toBe(201);
  const pods = await until(
    () => readyPods('web'),
    (p) => p.length === 3,
    20_000,
  );
  const ips = pods.map((p) => p.status.podIP).sort();
  const ep = await until(
    () => endpoints('web'),
    (e) => addresses(e).join() === ips.join(),
    10_000,
  );
  expect(addresses(ep)).toEqual(ips);
  expect(ep.subsets[0].ports).toEqual([{ name: 'web', port: 8080, protocol: 'TCP' }]);
  const a = ep.subsets[0].addresses[0];
  expect(a.targetRef.kind).toBe('Pod');
  expect(a.nodeName).toMatch(/./);
  expect(ep.metadata.annotations['endpoints.kubernetes.io/last-change-trigger-time']).toMatch(/^\d{4}-\d\d-\d\dT/);

  const slices = await until(
    () => slicesOf('web'),
    (s) => sliceEndpoints(s).filter((e) => e.conditions.ready).length === 3,
    10_000,
  );
  expect(slices).toHaveLength(1);
  const slice = slices[0];
  expect(slice.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
  expect(slice.metadata.labels['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');
  expect(slice.addressType).toBe('IPv4');
  expect(slice.ports).toEqual([{ name: 'web', port: 8080, protocol: 'TCP' }]);
  expect(slice.metadata.ownerReferences[0]).toMatchObject({ kind: 'Service', name: 'web', controller: true });
  const e = slice.endpoints[0];
  expect(e.conditions).toEqual({ ready: true, serving: true, terminating: false });
  expect(e.nodeName).toMatch(/./);
  expect(e.targetRef.kind).toBe('Pod');
  expect(
    sliceEndpoints(slices)
      .flatMap((x) => x.addresses)
      .sort(),
  ).toEqual(ips);

  // A pod going not ready moves to notReadyAddresses; in the slice it is not ready, not serving.
  const victim = pods[0];
  const patch = { metadata: { annotations: { 'sim.svc.io/ready': 'false' } } };
  expect((await srv.json('PATCH', `${NS}/pods/${victim.metadata.name}`, JSON.stringify(patch), MERGE)).status).toBe(200);
  const moved = await until(
    () => endpoints('web'),
    (x) => addresses(x, 'notReadyAddresses').includes(victim.status.podIP),
    10_000,
  );
  expect(addresses(moved, 'notReadyAddresses')).toEqual([victim.status.podIP]);
  expect(addresses(moved)).not.toContain(victim.status.podIP);
  const after = await until(
    () => slicesOf('web'),
    (s) => sliceEndpoints(s).some((x) => x.addresses[0] === victim.status.podIP && !x.conditions.ready),
    10_000,
  );
  expect(sliceEndpoints(after).find((x) => x.addresses[0] === victim.status.podIP).conditions).toEqual({
    ready: false,
    serving: false,
    terminating: false,
  });
  // The same slice was updated, not replaced.
  expect(after.map((s) => s.metadata.name)).toEqual([slice.metadata.name]);

  // kubectl describe svc lists the endpoints (read from the EndpointSlices).
  const d = srv.kubectl(['describe', 'svc', 'web', '-v=6']);
  expect(d.code).toBe(0);
  // kubectl reads the Service's EndpointSlices (not its Endpoints).
  expect(d.stderr).toContain(
    '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb',
  );
  expect(d.stderr).not.toContain('/api/v1/namespaces/default/endpoints/web');
  const readyIps = ips.filter((ip) => ip !== victim.status.podIP);
  expect(d.stdout).toMatch(/Endpoints:\s+\S*:8080/);
  for (const ip of readyIps) expect(d.stdout).toContain(`${ip}:8080`);

  // Deleting the Service deletes its Endpoints (and its slices go with it).
  expect((await srv.json('DELETE', `${NS}/services/web`)).status).toBe(200);
  expect(
    (
      await until(
        () => srv.json('GET', `${NS}/endpoints/web`),
        (r) => r.status === 404,
        10_000,
      )
    ).status,
  ).toBe(404);
  expect(
    await until(
      () => slicesOf('web'),
      (s) => s.length === 0,
      10_000,
    ),
  ).toEqual([]);
});

test('150 pods make two slices of 100 and 50; Endpoints hold all of them', async () => {
  // The Service selects the pods once all are ready, so that one sync sees them all (pods
  // arriving one by one fill slices as they come: the reconciler never moves an endpoint between
  // slices just to pack them).
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('big', 150))).status).toBe(201);
  expect((await srv.json('POST', `${NS}/services`, service('big', { selector: { app: 'big', tier: 'none' } }))).status).toBe(201);
  expect(
    (
      await until(
        () => readyPods('big'),
        (p) => p.length === 150,
        40_000,
      )
    ).length,
  ).toBe(150);
  const patch = { spec: { selector: { tier: null } } };
  expect((await srv.json('PATCH', `${NS}/services/big`, JSON.stringify(patch), MERGE)).status).toBe(200);
  const slices = await until(
    () => slicesOf('big'),
    (s) => sliceEndpoints(s).filter((e) => e.conditions.ready).length === 150,
    20_000,
  );
  expect(slices.map((s) => s.endpoints.length).sort((a, b) => a - b)).toEqual([50, 100]);
  const ep = await until(
    () => endpoints('big'),
    (e) => addresses(e).length === 150,
    10_000,
  );
  expect(addresses(ep)).toHaveLength(150);
  expect(ep.metadata.annotations?.['endpoints.kubernetes.io/over-capacity']).toBeUndefined();
  expect((await srv.json('DELETE', '/apis/apps/v1/namespaces/default/deployments/big')).status).toBe(200);
});

test('publishNotReadyAddresses lists pods that are not ready as addresses', async () => {
  const dep = deployment('unready', 2, { 'sim.svc.io/ready': 'false' });
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', dep)).status).toBe(201);
  expect((await srv.json('POST', `${NS}/services`, service('unready', { publishNotReadyAddresses: true }))).status).toBe(201);
  const ep = await until(
    () => endpoints('unready'),
    (e) => addresses(e).length === 2,
    20_000,
  );
  expect(addresses(ep)).toHaveLength(2);
  expect(addresses(ep, 'notReadyAddresses')).toEqual([]);
  const slices = await until(
    () => slicesOf('unready'),
    (s) => sliceEndpoints(s).length === 2,
    10_000,
  );
  for (const e of sliceEndpoints(slices)) expect(e.conditions).toEqual({ ready: true, serving: false, terminating: false });
});

test('the Endpoints of a Service without a selector are mirrored to an EndpointSlice', async () => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'external' }, spec: { ports: [{ name: 'db', port: 5432 }] } };
  expect((await srv.json('POST', `${NS}/services`, svc)).status).toBe(201);
  const ep = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'external', labels: { team: 'data' } },
    subsets: [
      {
        addresses: [{ ip: '10.200.0.1' }, { ip: '10.200.0.2' }],
        notReadyAddresses: [{ ip: '10.200.0.3' }],
        ports: [{ name: 'db', port: 5432 }],
      },
    ],
  };
  expect((await srv.json('POST', `${NS}/endpoints`, ep)).status).toBe(201);
  const slices = await until(
    () => slicesOf('external'),
    (s) => sliceEndpoints(s).length === 3,
    10_000,
  );
  expect(slices).toHaveLength(1);
  const s = slices[0];
  expect(s.metadata.labels).toMatchObject({
    team: 'data',
    'kubernetes.io/service-name': 'external',
    'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
  });
  expect(s.metadata.ownerReferences[0]).toMatchObject({ kind: 'Endpoints', name: 'external' });
  expect(s.ports).toEqual([{ name: 'db', port: 5432, protocol: 'TCP' }]);
  const byIp = Object.fromEntries(s.endpoints.map((e: Any) => [e.addresses[0], e.conditions.ready]));
  expect(byIp).toEqual({ '10.200.0.1': true, '10.200.0.2': true, '10.200.0.3': false });
  // The Endpoints stay as the user wrote them (the Endpoints controller leaves selectorless Services alone).
  await Bun.sleep(300);
  expect(addresses(await endpoints('external'))).toEqual(['10.200.0.1', '10.200.0.2']);
  // An address removed from the Endpoints leaves the same slice.
  const patch = { subsets: [{ addresses: [{ ip: '10.200.0.1' }], ports: [{ name: 'db', port: 5432 }] }] };
  expect((await srv.json('PATCH', `${NS}/endpoints/external`, JSON.stringify(patch), MERGE)).status).toBe(200);
  const after = await until(
    () => slicesOf('external'),
    (x) => sliceEndpoints(x).length === 1,
    10_000,
  );
  expect(after.map((x) => x.metadata.name)).toEqual([s.metadata.name]);
});

test('an unnamed port and a headless Service without ports get stable Endpoints and slices', async () => {
  const dep = deployment('plain', 2);
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', dep)).status).toBe(201);
  const plain = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'plain' },
    spec: { selector: { app: 'plain' }, ports: [{ port: 80, targetPort: 8080 }] },
  };
  const headless = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'plain-headless' },
    spec: { selector: { app: 'plain' }, clusterIP: 'None' },
  };
  expect((await srv.json('POST', `${NS}/services`, plain)).status).toBe(201);
  expect((await srv.json('POST', `${NS}/services`, headless)).status).toBe(201);
  for (const name of ['plain', 'plain-headless']) {
    await until(
      () => slicesOf(name),
      (s) => sliceEndpoints(s).filter((e) => e.conditions.ready).length === 2,
      20_000,
    );
    await until(
      () => endpoints(name),
      (e) => addresses(e).length === 2,
      10_000,
    );
  }
  const versions = async () => [
    ...(await slicesOf('plain')).map((s) => s.metadata.resourceVersion),
    ...(await slicesOf('plain-headless')).map((s) => s.metadata.resourceVersion),
    (await endpoints('plain')).metadata.resourceVersion,
    (await endpoints('plain-headless')).metadata.resourceVersion,
  ];
  const before = await versions();
  await Bun.sleep(1000);
  expect(await versions()).toEqual(before);
  const hs = await slicesOf('plain-headless');
  expect(hs).toHaveLength(1);
  expect(hs[0].metadata.labels['service.kubernetes.io/headless']).toBe('');
  expect(hs[0].ports ?? []).toEqual([]);
  const ps = await slicesOf('plain');
  expect(ps[0].ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
  expect((await endpoints('plain-headless')).subsets[0].ports).toBeUndefined();
});

const hostIp = hostIPv4Addresses().find((ip) => !ip.startsWith('169.254.'));

test.skipIf(!hostIp)('the kubernetes Service publishes the host address when the server binds 0.0.0.0 (none on 127.0.0.1)', async () => {
  // The file's server binds 127.0.0.1: nothing published (loopback is invalid in both kinds).
  expect((await srv.json('GET', `${NS}/endpoints/kubernetes`)).status).toBe(404);
  const s = await startServer({ args: ['--bind-address=0.0.0.0'] });
  try {
    const ep = await until(
      async () => (await s.json('GET', `${NS}/endpoints/kubernetes`)).body,
      (e) => e.subsets !== undefined,
      10_000,
    );
    expect(ep.subsets).toEqual([{ addresses: [{ ip: hostIp }], ports: [{ name: 'https', port: s.port, protocol: 'TCP' }] }]);
    expect(ep.metadata.labels['endpointslice.kubernetes.io/skip-mirror']).toBe('true');
    // The Endpoints are written before the slice: wait for the slice too.
    const slice = await until(
      async () => (await s.json('GET', `${ES}/kubernetes`)).body,
      (b) => b.endpoints !== undefined,
      10_000,
    );
    expect(slice.endpoints).toEqual([{ addresses: [hostIp], conditions: { ready: true } }]);
    expect(slice.ports).toEqual([{ name: 'https', port: s.port, protocol: 'TCP' }]);
    // No mirrored slice besides it.
    expect((await s.json('GET', `${ES}?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes`)).body.items).toHaveLength(1);
  } finally {
    await s.stop();
  }
});

test('a pod relabelled out of a Service leaves its Endpoints and slice; relabelled back, it returns', async () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'relabel', labels: { app: 'relabel' } },
    spec: { nodeName: 'sim-node-0', containers: [{ name: 'c', image: 'i', ports: [{ name: 'http', containerPort: 8080 }] }] },
  };
  expect((await srv.json('POST', `${NS}/pods`, pod)).status).toBe(201);
  expect((await srv.json('POST', `${NS}/services`, service('relabel'))).status).toBe(201);
  const [ready] = await until(
    () => readyPods('relabel'),
    (p) => p.length === 1,
    20_000,
  );
  const ip = ready.status.podIP;
  await until(
    () => endpoints('relabel'),
    (e) => addresses(e).join() === ip,
    10_000,
  );
  const relabel = async (app: string) => {
    const body = JSON.stringify({ metadata: { labels: { app } } });
    expect((await srv.json('PATCH', `${NS}/pods/relabel`, body, MERGE)).status).toBe(200);
  };
  await relabel('elsewhere');
  const gone = await until(
    () => endpoints('relabel'),
    (e) => addresses(e).length === 0,
    10_000,
  );
  expect(addresses(gone, 'notReadyAddresses')).toEqual([]);
  await until(
    () => slicesOf('relabel'),
    (s) => sliceEndpoints(s).length === 0,
    10_000,
  );
  await relabel('relabel');
  await until(
    () => endpoints('relabel'),
    (e) => addresses(e).join() === ip,
    10_000,
  );
  await until(
    () => slicesOf('relabel'),
    (s) =>
      sliceEndpoints(s)
        .map((e) => e.addresses[0])
        .join() === ip,
    10_000,
  );
});
