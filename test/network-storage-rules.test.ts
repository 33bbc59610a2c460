/**
 * The rules of the networking, discovery, node and storage kinds beyond create (see
 * network-storage-kinds.test.ts): defaults the server fills in, immutable fields, the updates
 * the reference allows (a ServiceCIDR becoming dual-stack), status subresources, and the
 * reference's further validation messages. Over HTTPS against a real server.
 */
import { expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

const srv = serverForFile();

// biome-ignore lint/suspicious/noExplicitAny: decoded bodies of the responses under test
type Json = Record<string, any>;

async function create(path: string, body: Json): Promise<Json> {
  const r = await srv.json('POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** PUT `obj` changed by `change`; the answer. */
async function update(path: string, obj: Json, change: (o: Json) => void): Promise<{ status: number; body: Json }> {
  const next = structuredClone(obj);
  change(next);
  return srv.json('PUT', path, next);
}

function expectCause(r: { status: number; body: Json }, field: string, message: string): void {
  expect(r.status).toBe(422);
  const causes = (r.body.details?.causes ?? []) as { field: string; message: string }[];
  if (!causes.some((c) => c.field === field && c.message.includes(message)))
    throw new Error(`no cause ${field}: ${message} in ${JSON.stringify(causes)}`);
}

const SC = '/apis/storage.svc.io/v1/storageclasses';
const CSI = '/apis/storage.svc.io/v1/csidrivers';
const VA = '/apis/storage.svc.io/v1/volumeattachments';
const NET = '/apis/networking.svc.io/v1';
const ES = '/apis/discovery.svc.io/v1/namespaces/default/endpointslices';
const RC = '/apis/node.svc.io/v1/runtimeclasses';

test('StorageClass: reclaimPolicy Delete and volumeBindingMode Immediate by default; provisioner, parameters, reclaimPolicy and volumeBindingMode fixed', async () => {
  const sc = await create(SC, { metadata: { name: 'std' }, provisioner: 'example.com/std', parameters: { a: 'b' } });
  expect(sc.reclaimPolicy).toBe('Delete');
  expect(sc.volumeBindingMode).toBe('Immediate');
  expectCause(
    await update(`${SC}/std`, sc, (o) => {
      o.provisioner = 'example.com/other';
    }),
    'provisioner',
    'Forbidden: updates to provisioner are forbidden.',
  );
  expectCause(
    await update(`${SC}/std`, sc, (o) => {
      o.parameters = { a: 'c' };
    }),
    'parameters',
    'Forbidden: updates to parameters are forbidden.',
  );
  expectCause(
    await update(`${SC}/std`, sc, (o) => {
      o.reclaimPolicy = 'Retain';
    }),
    'reclaimPolicy',
    'Forbidden: updates to reclaimPolicy are forbidden.',
  );
  expectCause(
    await update(`${SC}/std`, sc, (o) => {
      o.volumeBindingMode = 'WaitForFirstConsumer';
    }),
    'volumeBindingMode',
    'field is immutable',
  );
  const ok = await update(`${SC}/std`, sc, (o) => {
    o.allowVolumeExpansion = true;
    o.metadata.annotations = { 'storageclass.kubernetes.io/is-default-class': 'true' };
  });
  expect(ok.status).toBe(200);
  expectCause(await srv.json('POST', SC, { metadata: { name: 'noprov' } }), 'provisioner', 'Required value');
  expectCause(
    await srv.json('POST', SC, { metadata: { name: 'badprov' }, provisioner: 'Example.com/Bad_' }),
    'provisioner',
    'Invalid value: "example.com/bad_": name part must consist of alphanumeric characters',
  );
  expectCause(
    await srv.json('POST', SC, {
      metadata: { name: 'topo' },
      provisioner: 'x.io/y',
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a', 'a'] }] }],
    }),
    'allowedTopologies[0].matchLabelExpressions[0].values[1]',
    'Duplicate value: "a"',
  );
  expectCause(
    await srv.json('POST', SC, { metadata: { name: 'wffc' }, provisioner: 'x.io/y', volumeBindingMode: 'Later' }),
    'volumeBindingMode',
    'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
  );
});

test('CSIDriver: the reference defaults; attachRequired and volumeLifecycleModes fixed, podInfoOnMount may change', async () => {
  const d = await create(CSI, { metadata: { name: 'defaults.example.com' }, spec: {} });
  expect(d.spec).toEqual({
    attachRequired: true,
    podInfoOnMount: false,
    storageCapacity: false,
    fsGroupPolicy: 'ReadWriteOnceWithFSType',
    volumeLifecycleModes: ['Persistent'],
    requiresRepublish: false,
    seLinuxMount: false,
  });
  const empty = await create(CSI, { metadata: { name: 'empty-modes.example.com' }, spec: { volumeLifecycleModes: [] } });
  expect(empty.spec.volumeLifecycleModes).toEqual(['Persistent']);
  expectCause(
    await update(`${CSI}/defaults.example.com`, d, (o) => {
      o.spec.attachRequired = false;
    }),
    'spec.attachedRequired',
    'Invalid value: false: field is immutable',
  );
  expectCause(
    await update(`${CSI}/defaults.example.com`, d, (o) => {
      o.spec.volumeLifecycleModes = ['Persistent', 'Ephemeral'];
    }),
    'spec.volumeLifecycleModes',
    'field is immutable',
  );
  const ok = await update(`${CSI}/defaults.example.com`, d, (o) => {
    o.spec.podInfoOnMount = true;
  });
  expect(ok.status).toBe(200);
  expectCause(
    await srv.json('POST', CSI, { metadata: { name: 'modes.example.com' }, spec: { volumeLifecycleModes: ['Sometimes'] } }),
    'spec.volumeLifecycleModes',
    'Unsupported value: "Sometimes": supported values: "Ephemeral", "Persistent"',
  );
  expectCause(
    await srv.json('POST', CSI, {
      metadata: { name: 'tokens.example.com' },
      spec: { tokenRequests: [{ audience: 'a', expirationSeconds: 60 }] },
    }),
    'spec.tokenRequests[0].expirationSeconds',
    'may not specify a duration less than 10 minutes',
  );
});

test('CSINode: nodeID required; an existing driver entry never changes, drivers may be added', async () => {
  const path = '/apis/storage.svc.io/v1/csinodes';
  expectCause(
    await srv.json('POST', path, { metadata: { name: 'n-bad' }, spec: { drivers: [{ name: 'a.example.com' }] } }),
    'spec.drivers[0].nodeID',
    'Required value',
  );
  const n = await create(path, { metadata: { name: 'n-1' }, spec: { drivers: [{ name: 'a.example.com', nodeID: 'x' }] } });
  expectCause(
    await update(`${path}/n-1`, n, (o) => {
      o.spec.drivers[0].nodeID = 'y';
    }),
    'spec.drivers',
    'Invalid value: storage.CSINodeDriver{Name:"a.example.com", NodeID:"y", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable',
  );
  const added = await update(`${path}/n-1`, n, (o) => {
    o.spec.drivers.push({ name: 'b.example.com', nodeID: 'x' });
  });
  expect(added.status).toBe(200);
});

test('CSIStorageCapacity: storageClassName and nodeTopology fixed, capacity may change but not below 0', async () => {
  const path = '/apis/storage.svc.io/v1/namespaces/default/csistoragecapacities';
  const c = await create(path, {
    metadata: { name: 'cap-rules' },
    storageClassName: 'fast',
    nodeTopology: { matchLabels: { zone: 'a' } },
    capacity: '1Gi',
  });
  expectCause(
    await update(`${path}/cap-rules`, c, (o) => {
      o.storageClassName = 'slow';
    }),
    'storageClassName',
    'Invalid value: "slow": field is immutable',
  );
  expectCause(
    await update(`${path}/cap-rules`, c, (o) => {
      o.nodeTopology = { matchLabels: { zone: 'b' } };
    }),
    'nodeTopology',
    'field is immutable',
  );
  const ok = await update(`${path}/cap-rules`, c, (o) => {
    o.capacity = '2Gi';
  });
  expect(ok.status).toBe(200);
  expectCause(
    await srv.json('POST', path, { metadata: { name: 'cap-neg' }, storageClassName: 'fast', capacity: '-1Gi' }),
    'capacity',
    'Invalid value: "-1Gi": must be greater than or equal to 0',
  );
});

test('VolumeAttachment: spec immutable; status through the status subresource only', async () => {
  const va = await create(VA, {
    metadata: { name: 'va-rules' },
    spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } },
    status: { attached: true },
  });
  expect(va.status).toEqual({ attached: false });
  expectCause(
    await update(`${VA}/va-rules`, va, (o) => {
      o.spec.nodeName = 'node-2';
    }),
    'spec',
    'field is immutable',
  );
  const st = await update(`${VA}/va-rules/status`, va, (o) => {
    o.status = { attached: true, attachmentMetadata: { dev: '/dev/xvdb' } };
  });
  expect(st.status).toBe(200);
  expect(st.body.status.attached).toBe(true);
  const both = await srv.json('POST', VA, {
    metadata: { name: 'va-both' },
    spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1', inlineVolumeSpec: {} } },
  });
  expectCause(both, 'spec.source', 'Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName');
});

test('Ingress: status starts as loadBalancer {}; backends, path types and the class annotation as the reference', async () => {
  const path = `${NET}/namespaces/default/ingresses`;
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const ing = await create(path, { metadata: { name: 'ing-rules' }, spec: { defaultBackend: backend } });
  expect(ing.status).toEqual({ loadBalancer: {} });
  const rule = (p: Json) => ({ metadata: { name: 'ing-bad' }, spec: { rules: [{ host: 'a.example.com', http: { paths: [p] } }] } });
  expectCause(
    await srv.json('POST', path, rule({ path: '/', backend })),
    'spec.rules[0].http.paths[0].pathType',
    'pathType must be specified',
  );
  expectCause(
    await srv.json('POST', path, rule({ path: '/', pathType: 'Regex', backend })),
    'spec.rules[0].http.paths[0].pathType',
    'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
  );
  expectCause(
    await srv.json('POST', path, rule({ path: '/a/../b', pathType: 'Prefix', backend })),
    'spec.rules[0].http.paths[0].path',
    "must not contain '/../'",
  );
  expectCause(
    await srv.json('POST', path, rule({ path: '/', pathType: 'Prefix', backend: { ...backend, resource: { kind: 'Bucket', name: 'b' } } })),
    'spec.rules[0].http.paths[0].backend',
    'cannot set both resource and service backends',
  );
  expectCause(
    await srv.json('POST', path, rule({ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: {} } } })),
    'spec.rules[0].http.paths[0].backend',
    'Required value: port name or number is required',
  );
  expectCause(
    await srv.json('POST', path, { metadata: { name: 'ing-none' }, spec: {} }),
    'spec',
    'either `defaultBackend` or `rules` must be specified',
  );
  expectCause(
    await srv.json('POST', path, {
      metadata: { name: 'ing-tls' },
      spec: { defaultBackend: backend, tls: [{ hosts: ['*.a.*.com'] }] },
    }),
    'spec.tls[0].hosts[0]',
    "a wildcard DNS-1123 subdomain must start with '*.'",
  );
  expectCause(
    await srv.json('POST', path, {
      metadata: { name: 'ing-class', annotations: { 'kubernetes.io/ingress.class': 'a' } },
      spec: { ingressClassName: 'b', defaultBackend: backend },
    }),
    'annotations.kubernetes.io/ingress.class',
    'must match `ingressClassName` when both are specified',
  );
});

test('IngressClass: controller immutable; parameters scope Cluster by default, Namespace needs a namespace', async () => {
  const path = `${NET}/ingressclasses`;
  const ic = await create(path, {
    metadata: { name: 'ic-rules' },
    spec: { controller: 'example.com/c', parameters: { kind: 'P', name: 'p' } },
  });
  expect(ic.spec.parameters.scope).toBe('Cluster');
  expectCause(
    await update(`${path}/ic-rules`, ic, (o) => {
      o.spec.controller = 'example.com/d';
    }),
    'spec.controller',
    'field is immutable',
  );
  expectCause(
    await srv.json('POST', path, {
      metadata: { name: 'ic-ns' },
      spec: { controller: 'example.com/c', parameters: { kind: 'P', name: 'p', scope: 'Namespace' } },
    }),
    'spec.parameters.namespace',
    "`parameters.scope` is set to 'Namespace'",
  );
  expectCause(
    await srv.json('POST', path, {
      metadata: { name: 'ic-cl' },
      spec: { controller: 'example.com/c', parameters: { kind: 'P', name: 'p', scope: 'Cluster', namespace: 'x' } },
    }),
    'spec.parameters.namespace',
    "Forbidden: `parameters.scope` is set to 'Cluster'",
  );
});

test('IPAddress: parentRef required and immutable; names must be IP addresses', async () => {
  const path = `${NET}/ipaddresses`;
  expectCause(await srv.json('POST', path, { metadata: { name: '10.0.0.9' }, spec: {} }), 'spec.parentRef', 'Required value');
  expectCause(
    await srv.json('POST', path, { metadata: { name: 'not-an-ip' }, spec: { parentRef: { resource: 'services', name: 'a' } } }),
    'metadata.name',
    'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  );
  expectCause(
    await srv.json('POST', path, { metadata: { name: '10.0.0.10' }, spec: { parentRef: { name: 'a' } } }),
    'spec.parentRef.resource',
    'Required value',
  );
  const ip = await create(path, {
    metadata: { name: '10.0.0.11' },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'a' } },
  });
  expectCause(
    await update(`${path}/10.0.0.11`, ip, (o) => {
      o.spec.parentRef.name = 'b';
    }),
    'spec.parentRef',
    'Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"default", Name:"b"}: field is immutable',
  );
});

test('ServiceCIDR: a single-stack CIDR may gain the other family; nothing else changes', async () => {
  const path = `${NET}/servicecidrs`;
  const sc = await create(path, { metadata: { name: 'cidr-rules' }, spec: { cidrs: ['10.210.0.0/24'] } });
  expect(sc.status).toEqual({});
  expectCause(
    await update(`${path}/cidr-rules`, sc, (o) => {
      o.spec.cidrs = ['10.211.0.0/24'];
    }),
    'spec.cidrs[0]',
    'Invalid value: "10.211.0.0/24": field is immutable',
  );
  expectCause(
    await update(`${path}/cidr-rules`, sc, (o) => {
      o.spec.cidrs = ['10.210.0.0/24', '10.212.0.0/24'];
    }),
    'spec.cidrs',
    'may specify no more than one IP for each IP family',
  );
  const dual = await update(`${path}/cidr-rules`, sc, (o) => {
    o.spec.cidrs = ['10.210.0.0/24', 'fd00:10:96::/112'];
  });
  expect(dual.status).toBe(200);
  expectCause(
    await update(`${path}/cidr-rules`, dual.body, (o) => {
      o.spec.cidrs = ['10.210.0.0/24'];
    }),
    'spec.cidrs',
    'field is immutable',
  );
  expectCause(
    await srv.json('POST', path, { metadata: { name: 'cidr-bits' }, spec: { cidrs: ['10.0.0.1/24'] } }),
    'spec.cidrs[0]',
    'must be in canonical form ("10.0.0.0/24")',
  );
  expectCause(await srv.json('POST', path, { metadata: { name: 'cidr-none' }, spec: {} }), 'spec.cidrs', 'at least one CIDR required');
});

test('EndpointSlice: protocol TCP by default; generation 1; v1 drops deprecatedTopology; addressType immutable; unique port names; the service-name label selects', async () => {
  const es = await create(ES, {
    metadata: { name: 'es-rules', labels: { 'kubernetes.io/service-name': 'api' } },
    addressType: 'FQDN',
    endpoints: [{ addresses: ['api.example.com'] }],
    ports: [{ name: 'http', port: 80 }],
  });
  expect(es.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP' }]);
  expect(es.metadata.generation).toBe(1);
  const topo = await create(ES, {
    metadata: { name: 'es-topo' },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.9.9.9'], deprecatedTopology: { 'kubernetes.io/hostname': 'node-a' } }],
  });
  expect(topo.endpoints).toEqual([{ addresses: ['10.9.9.9'] }]);
  expectCause(
    await update(`${ES}/es-rules`, es, (o) => {
      o.addressType = 'IPv6';
    }),
    'addressType',
    'field is immutable',
  );
  expectCause(
    await srv.json('POST', ES, {
      metadata: { name: 'es-dup' },
      addressType: 'IPv6',
      endpoints: [{ addresses: ['fe80::1'] }],
      ports: [
        { name: 'a', port: 1 },
        { name: 'a', port: 2 },
      ],
    }),
    'ports[1].name',
    'Duplicate value: "a"',
  );
  expectCause(
    await srv.json('POST', ES, { metadata: { name: 'es-ll' }, addressType: 'IPv6', endpoints: [{ addresses: ['fe80::1'] }] }),
    'endpoints[0].addresses[0]',
    'may not be in the link-local range (169.254.0.0/16, fe80::/10)',
  );
  expectCause(
    await srv.json('POST', ES, { metadata: { name: 'es-type' }, addressType: 'IP', endpoints: [] }),
    'addressType',
    'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
  );
  expectCause(
    await srv.json('POST', ES, { metadata: { name: 'es-empty' }, addressType: 'IPv4', endpoints: [{ addresses: [] }] }),
    'endpoints[0].addresses',
    'must contain at least 1 address',
  );
  const sel = await srv.json('GET', `${ES}?labelSelector=${encodeURIComponent('kubernetes.io/service-name=api')}`);
  expect(sel.body.items.map((i: Json) => i.metadata.name)).toEqual(['es-rules']);
});

test('RuntimeClass: handler immutable; overhead and scheduling validated', async () => {
  const rc = await create(RC, { metadata: { name: 'kata' }, handler: 'kata', scheduling: { nodeSelector: { sandbox: 'yes' } } });
  expectCause(
    await update(`${RC}/kata`, rc, (o) => {
      o.handler = 'kata2';
    }),
    'handler',
    'Invalid value: "kata2": field is immutable',
  );
  expectCause(
    await srv.json('POST', RC, {
      metadata: { name: 'rc-tol' },
      handler: 'x',
      scheduling: { tolerations: [{ operator: 'Equal', value: 'v' }] },
    }),
    'scheduling.tolerations[0].operator',
    'operator must be Exists when `key` is empty',
  );
  expectCause(
    await srv.json('POST', RC, { metadata: { name: 'rc-oh' }, handler: 'x', overhead: { podFixed: { cpu: '-1' } } }),
    'overhead.limits[cpu]',
    'must be greater than or equal to 0',
  );
});

test('DefaultIngressClass: an Ingress created without a class gets the newest default IngressClass; a named class or the annotation stays', async () => {
  const classes = `${NET}/ingressclasses`;
  const ingresses = `${NET}/namespaces/default/ingresses`;
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const noClass = await create(ingresses, { metadata: { name: 'dic-none' }, spec: { defaultBackend: backend } });
  expect(noClass.spec.ingressClassName).toBeUndefined();
  const annotation = { 'ingressclass.kubernetes.io/is-default-class': 'true' };
  await create(classes, { metadata: { name: 'dic-old', annotations: annotation }, spec: { controller: 'example.com/c' } });
  // creationTimestamp has seconds: the next default is newer.
  await Bun.sleep(1100);
  await create(classes, { metadata: { name: 'dic-new', annotations: annotation }, spec: { controller: 'example.com/c' } });
  for (const path of [ingresses, '/apis/networking.k8s.io/v1/namespaces/default/ingresses']) {
    const name = `dic-${path.includes('k8s.io') ? 'k8s' : 'svc'}`;
    const r = await srv.json('POST', path, { metadata: { name }, spec: { defaultBackend: backend } });
    expect(r.status).toBe(201);
    expect(r.body.spec.ingressClassName).toBe('dic-new');
  }
  const named = await create(ingresses, { metadata: { name: 'dic-named' }, spec: { ingressClassName: 'other', defaultBackend: backend } });
  expect(named.spec.ingressClassName).toBe('other');
  const annotated = await create(ingresses, {
    metadata: { name: 'dic-annotated', annotations: { 'kubernetes.io/ingress.class': 'legacy' } },
    spec: { defaultBackend: backend },
  });
  expect(annotated.spec.ingressClassName).toBeUndefined();
  // Updates are left alone.
  const upd = await update(`${ingresses}/dic-none`, noClass, (o) => {
    o.metadata.labels = { touched: 'yes' };
  });
  expect(upd.body.spec.ingressClassName).toBeUndefined();
});

test('Ingress status: written through /status, IPs and hostnames checked', async () => {
  const path = `${NET}/namespaces/default/ingresses`;
  const ing = await create(path, {
    metadata: { name: 'ing-status' },
    spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
  });
  const ok = await update(`${path}/ing-status/status`, ing, (o) => {
    o.status = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.com' }] } };
  });
  expect(ok.status).toBe(200);
  expect(ok.body.status.loadBalancer.ingress).toEqual([{ ip: '192.0.2.10' }, { hostname: 'lb.example.com' }]);
  expectCause(
    await update(`${path}/ing-status/status`, ok.body, (o) => {
      o.status.loadBalancer.ingress.push({ ip: '192.0.2.011' });
    }),
    'status.loadBalancer.ingress[2].ip',
    'Invalid value: "192.0.2.011": must not have leading 0s',
  );
  expectCause(
    await update(`${path}/ing-status/status`, ok.body, (o) => {
      o.status.loadBalancer.ingress.push({ hostname: '192.0.2.12' });
    }),
    'status.loadBalancer.ingress[2].hostname',
    'must be a DNS name, not an IP address',
  );
  const t = srv.kubectl(['get', 'ing', 'ing-status', '-n', 'default', '--no-headers']);
  expect(t.stdout).toContain('192.0.2.10,lb.example.com');
});
