/**
 * The networking (Ingress, IngressClass, IPAddress, ServiceCIDR), discovery (EndpointSlice), node
 * (RuntimeClass) and storage (StorageClass, CSIDriver, CSINode, CSIStorageCapacity,
 * VolumeAttachment) kinds, black-box over HTTPS: per kind a valid object created, read back
 * under both group spellings, listed, watched, applied server-side; one invalid object answered
 * 422 with the reference's field path and message; the `kubectl get` columns. The kinds' further
 * rules (immutable fields, defaults, updates) are in network-storage-rules.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { STATIC_SERVICES_STORAGE, serverForFile } from './helpers/server';
import { openWatch } from './helpers/watch';

const srv = serverForFile({ args: [STATIC_SERVICES_STORAGE] });

// biome-ignore lint/suspicious/noExplicitAny: decoded bodies of the responses under test
type Json = Record<string, any>;

interface Case {
  group: string;
  kind: string;
  plural: string;
  namespaced?: boolean;
  valid: Json;
  invalid: Json;
  /** The cause the invalid object gets: its field and (part of) its message. */
  cause: { field: string; message: string };
  /** kubectl get's header line, split. */
  headers: string[];
  /** Cells of the valid object's row (by header), checked where given. */
  cells?: Record<string, string>;
}

const upstream = (g: string) => g.replace(/\.svc\.io$/, '.k8s.io');

export const CASES: Case[] = [
  {
    group: 'networking.svc.io',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    valid: {
      metadata: { name: 'web' },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'foo.example.com',
            http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] },
          },
        ],
        tls: [{ hosts: ['foo.example.com'], secretName: 'web-tls' }],
      },
    },
    invalid: {
      metadata: { name: 'bad' },
      spec: {
        rules: [{ http: { paths: [{ path: 'foo', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http' } } } }] } }],
      },
    },
    cause: { field: 'spec.rules[0].http.paths[0].path', message: 'Invalid value: "foo": must be an absolute path' },
    headers: ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE'],
    cells: { CLASS: 'nginx', HOSTS: 'foo.example.com', PORTS: '80, 443' },
  },
  {
    group: 'networking.svc.io',
    kind: 'IngressClass',
    plural: 'ingressclasses',
    valid: {
      metadata: { name: 'nginx' },
      spec: { controller: 'example.com/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'Params', name: 'lb' } },
    },
    invalid: { metadata: { name: 'bad' }, spec: { controller: 'nginx' } },
    cause: { field: 'spec.controller', message: 'Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")' },
    headers: ['NAME', 'CONTROLLER', 'PARAMETERS', 'AGE'],
    cells: { CONTROLLER: 'example.com/ingress-nginx', PARAMETERS: 'Params.k8s.example.com/lb' },
  },
  {
    group: 'networking.svc.io',
    kind: 'IPAddress',
    plural: 'ipaddresses',
    valid: { metadata: { name: '2001:db8::5' }, spec: { parentRef: { resource: 'services', namespace: 'bar', name: 'foo' } } },
    invalid: { metadata: { name: '2001:DB8::6' }, spec: { parentRef: { resource: 'services', name: 'foo' } } },
    cause: { field: 'metadata.name', message: 'Invalid value: "2001:DB8::6": must be in canonical form ("2001:db8::6")' },
    headers: ['NAME', 'PARENTREF'],
    cells: { PARENTREF: 'services/bar/foo' },
  },
  {
    group: 'networking.svc.io',
    kind: 'ServiceCIDR',
    plural: 'servicecidrs',
    valid: { metadata: { name: 'extra' }, spec: { cidrs: ['10.200.0.0/24'] } },
    invalid: { metadata: { name: 'bad' }, spec: { cidrs: ['10.0.0.0/24', '10.1.0.0/24'] } },
    cause: { field: 'spec.cidrs', message: 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64' },
    headers: ['NAME', 'CIDRS', 'AGE'],
    cells: { CIDRS: '10.200.0.0/24' },
  },
  {
    group: 'discovery.svc.io',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
    valid: {
      metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.2.3'], hostname: 'pod-1' }, { addresses: ['10.1.2.4'] }],
      // protocol stated: ports is an atomic list, and apply (below) does not default what it applies.
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    },
    invalid: { metadata: { name: 'bad' }, addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'] }] },
    cause: { field: 'endpoints[0].addresses[0]', message: 'may not be in the loopback range (127.0.0.0/8, ::1/128)' },
    headers: ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE'],
    cells: { ADDRESSTYPE: 'IPv4', PORTS: '80', ENDPOINTS: '10.1.2.3,10.1.2.4' },
  },
  {
    group: 'node.svc.io',
    kind: 'RuntimeClass',
    plural: 'runtimeclasses',
    valid: { metadata: { name: 'gvisor' }, handler: 'runsc', overhead: { podFixed: { cpu: '250m' } } },
    invalid: { metadata: { name: 'bad' }, handler: 'Run_SC' },
    cause: { field: 'handler', message: 'Invalid value: "Run_SC": a lowercase RFC 1123 label must consist of' },
    headers: ['NAME', 'HANDLER', 'AGE'],
    cells: { HANDLER: 'runsc' },
  },
  {
    group: 'storage.svc.io',
    kind: 'StorageClass',
    plural: 'storageclasses',
    valid: {
      metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/fast',
      parameters: { type: 'ssd' },
      allowVolumeExpansion: true,
    },
    invalid: { metadata: { name: 'bad' }, provisioner: 'example.com/x', reclaimPolicy: 'Recycle' },
    cause: { field: 'reclaimPolicy', message: 'Unsupported value: "Recycle": supported values: "Delete", "Retain"' },
    headers: ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
    cells: {
      NAME: 'fast (default)',
      PROVISIONER: 'example.com/fast',
      RECLAIMPOLICY: 'Delete',
      VOLUMEBINDINGMODE: 'Immediate',
      ALLOWVOLUMEEXPANSION: 'true',
    },
  },
  {
    group: 'storage.svc.io',
    kind: 'CSIDriver',
    plural: 'csidrivers',
    valid: { metadata: { name: 'csi.example.com' }, spec: { tokenRequests: [{ audience: 'vault' }] } },
    invalid: { metadata: { name: 'bad.example.com' }, spec: { fsGroupPolicy: 'Sometimes' } },
    cause: {
      field: 'spec.fsGroupPolicy',
      message: 'Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    },
    headers: ['NAME', 'ATTACHREQUIRED', 'PODINFOONMOUNT', 'STORAGECAPACITY', 'TOKENREQUESTS', 'REQUIRESREPUBLISH', 'MODES', 'AGE'],
    cells: { ATTACHREQUIRED: 'true', PODINFOONMOUNT: 'false', TOKENREQUESTS: 'vault', MODES: 'Persistent' },
  },
  {
    group: 'storage.svc.io',
    kind: 'CSINode',
    plural: 'csinodes',
    valid: {
      metadata: { name: 'node-1' },
      spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1', topologyKeys: ['topology.example.com/zone'] }] },
    },
    invalid: {
      metadata: { name: 'node-2' },
      spec: {
        drivers: [
          { name: 'csi.example.com', nodeID: 'n2' },
          { name: 'csi.example.com', nodeID: 'n2' },
        ],
      },
    },
    cause: { field: 'spec.drivers[1].name', message: 'Duplicate value: "csi.example.com"' },
    headers: ['NAME', 'DRIVERS', 'AGE'],
    cells: { DRIVERS: '1' },
  },
  {
    group: 'storage.svc.io',
    kind: 'CSIStorageCapacity',
    plural: 'csistoragecapacities',
    namespaced: true,
    valid: { metadata: { name: 'cap-1' }, storageClassName: 'fast', capacity: '10Gi' },
    invalid: { metadata: { name: 'bad' }, storageClassName: 'Fast_Class' },
    cause: { field: 'storageClassName', message: 'Invalid value: "Fast_Class": a lowercase RFC 1123 subdomain' },
    headers: ['NAME', 'STORAGECLASSNAME', 'CAPACITY'],
    cells: { STORAGECLASSNAME: 'fast', CAPACITY: '10Gi' },
  },
  {
    group: 'storage.svc.io',
    kind: 'VolumeAttachment',
    plural: 'volumeattachments',
    valid: {
      metadata: { name: 'va-1' },
      spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } },
    },
    invalid: { metadata: { name: 'bad' }, spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: {} } },
    cause: { field: 'spec.source', message: 'Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName' },
    headers: ['NAME', 'ATTACHER', 'PV', 'NODE', 'ATTACHED', 'AGE'],
    cells: { ATTACHER: 'csi.example.com', PV: 'pv-1', NODE: 'node-1', ATTACHED: 'false' },
  },
];

export function collection(c: Pick<Case, 'group' | 'plural' | 'namespaced'>, group = c.group): string {
  return `/apis/${group}/v1/${c.namespaced ? 'namespaces/default/' : ''}${c.plural}`;
}

/** Parse kubectl's column output by the header positions. */
function parseTable(stdout: string): { headers: string[]; rows: Record<string, string>[] } {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0] ?? '';
  const cols = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], start: m.index ?? 0 }));
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    cols.forEach((c, i) => {
      row[c.name] = line.slice(c.start, i + 1 < cols.length ? cols[i + 1]!.start : line.length).trim();
    });
    return row;
  });
  return { headers: cols.map((c) => c.name), rows };
}

for (const c of CASES) {
  describe(c.kind, () => {
    const body = { apiVersion: `${c.group}/v1`, kind: c.kind, ...c.valid };
    const name = c.valid.metadata.name as string;

    test('created, read back under both group spellings, listed and watched', async () => {
      const before = await srv.json('GET', collection(c));
      expect(before.status).toBe(200);
      const w = await openWatch(srv, `${collection(c)}?watch=1&resourceVersion=${before.body.metadata.resourceVersion}`);
      const r = await srv.json('POST', collection(c), body);
      expect(r.status).toBe(201);
      expect(r.body.kind).toBe(c.kind);
      for (const g of [c.group, upstream(c.group)]) {
        const got = await srv.json('GET', `${collection(c, g)}/${name}`);
        expect(got.status).toBe(200);
        expect(got.body.apiVersion).toBe(`${g}/v1`);
        expect(got.body.metadata.uid).toBe(r.body.metadata.uid);
      }
      const list = await srv.json('GET', collection(c, upstream(c.group)));
      expect(list.body.kind).toBe(`${c.kind}List`);
      expect(list.body.items.map((i: Json) => i.metadata.name)).toContain(name);
      const evs = await w.until((e) => e.type === 'ADDED' && e.object.metadata.name === name, 5000);
      expect(evs.at(-1)?.object.kind).toBe(c.kind);
      await w.close();
    });

    test('server-side apply patches it', async () => {
      const applied = { ...body, metadata: { ...c.valid.metadata, labels: { ...c.valid.metadata.labels, applied: 'yes' } } };
      const r = await srv.fetch(`${collection(c)}/${name}?fieldManager=test`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: JSON.stringify(applied),
      });
      const out = (await r.json()) as Json;
      expect(r.status).toBe(200);
      expect(out.metadata.labels.applied).toBe('yes');
      expect(out.metadata.managedFields.some((m: Json) => m.manager === 'test' && m.operation === 'Apply')).toBe(true);
    });

    test('an invalid object is 422 with the reference field path and message', async () => {
      const r = await srv.json('POST', collection(c), { apiVersion: `${c.group}/v1`, kind: c.kind, ...c.invalid });
      expect(r.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      const causes = r.body.details.causes as { field: string; message: string }[];
      const hit = causes.find((x) => x.field === c.cause.field && x.message.includes(c.cause.message));
      if (!hit) throw new Error(`no cause ${JSON.stringify(c.cause)} in ${JSON.stringify(causes)}`);
    });

    test('kubectl get prints the reference columns', () => {
      const args = ['get', `${c.plural}.${upstream(c.group)}`, ...(c.namespaced ? ['-n', 'default'] : [])];
      const r = srv.kubectl(args);
      expect(r.stderr).toBe('');
      const t = parseTable(r.stdout);
      expect(t.headers).toEqual(c.headers);
      const row = t.rows.find((x) => (x.NAME ?? '').split(' ')[0] === name);
      expect(row).toBeDefined();
      for (const [k, v] of Object.entries(c.cells ?? {})) expect(`${k}=${row?.[k]}`).toBe(`${k}=${v}`);
    });
  });
}

test('short names: kubectl get ing, sc, ip', () => {
  for (const [short, name] of [
    ['ing', 'web'],
    ['sc', 'fast'],
    ['ip', '2001:db8::5'],
  ]) {
    const r = srv.kubectl(['get', short as string, '-o', 'name', ...(short === 'ing' ? ['-n', 'default'] : [])]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`/${name}`);
  }
});

test('protobuf: a StorageClass read as protobuf decodes to the object; a protobuf POST creates one', async () => {
  const pb = new ProtobufCodec(new SchemaSet(definitions as unknown as Definitions, overlays));
  const r = await srv.fetch('/apis/storage.k8s.io/v1/storageclasses/fast', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
  const obj = pb.decode(new Uint8Array(await r.arrayBuffer()), 'io.svc.api.storage.v1.StorageClass') as Json;
  expect(obj.provisioner).toBe('example.com/fast');
  expect(obj.parameters).toEqual({ type: 'ssd' });
  expect(obj.reclaimPolicy).toBe('Delete');
  const copy = { ...obj, metadata: { name: 'fast-pb' } };
  const post = await srv.fetch('/apis/storage.k8s.io/v1/storageclasses', {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    body: pb.encode(copy, 'io.svc.api.storage.v1.StorageClass'),
  });
  expect(post.status).toBe(201);
  const created = (await post.json()) as Json;
  expect(created.provisioner).toBe('example.com/fast');
  expect(created.allowVolumeExpansion).toBe(true);
});

test('Table JSON: the reference column definitions (VolumeAttachment formats Attacher as a name; field documentation as descriptions)', async () => {
  const r = await srv.json('GET', '/apis/storage.k8s.io/v1/volumeattachments', undefined, {
    accept: 'application/json;as=Table;g=meta.k8s.io;v=v1',
  });
  expect(r.status).toBe(200);
  const defs = r.body.columnDefinitions as { name: string; type: string; format: string; description: string }[];
  expect(defs.map((d) => `${d.name}:${d.type}:${d.format}`)).toEqual([
    'Name:string:name',
    'Attacher:string:name',
    'PV:string:',
    'Node:string:',
    'Attached:boolean:',
    'Age:string:',
  ]);
  expect(defs[1]?.description).toStartWith('attacher indicates the name of the volume driver that MUST handle this request.');
  const row = (r.body.rows as { cells: unknown[] }[]).find((x) => x.cells[0] === 'va-1');
  expect(row?.cells.slice(0, 5)).toEqual(['va-1', 'csi.example.com', 'pv-1', 'node-1', false]);
});

test('protobuf: every new kind reads back as protobuf equal to its JSON', async () => {
  const pb = new ProtobufCodec(new SchemaSet(definitions as unknown as Definitions, overlays));
  const pkg = (group: string) => group.split('.')[0];
  for (const c of CASES) {
    const path = `${collection(c, upstream(c.group))}/${c.valid.metadata.name}`;
    const json = await srv.json('GET', path);
    const r = await srv.fetch(path, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect([c.kind, r.status]).toEqual([c.kind, 200]);
    const obj = pb.decode(new Uint8Array(await r.arrayBuffer()), `io.svc.api.${pkg(c.group)}.v1.${c.kind}`) as Json;
    // The envelope's type meta names the kind; compare the content.
    const { apiVersion: _a, kind: _k, ...got } = obj;
    const { apiVersion: _b, kind: _l, ...want } = json.body;
    expect([c.kind, got]).toEqual([c.kind, want]);
  }
});

test('discovery: scope, short names, no categories and the status subresources of the reference', async () => {
  const FACTS: Record<string, { shortNames: string[]; status: boolean }> = {
    ingresses: { shortNames: ['ing'], status: true },
    ingressclasses: { shortNames: [], status: false },
    ipaddresses: { shortNames: ['ip'], status: false },
    servicecidrs: { shortNames: [], status: true },
    endpointslices: { shortNames: [], status: false },
    runtimeclasses: { shortNames: [], status: false },
    storageclasses: { shortNames: ['sc'], status: false },
    csidrivers: { shortNames: [], status: false },
    csinodes: { shortNames: [], status: false },
    csistoragecapacities: { shortNames: [], status: false },
    volumeattachments: { shortNames: [], status: true },
  };
  for (const c of CASES) {
    const r = await srv.json('GET', `/apis/${upstream(c.group)}/v1`);
    const entries = r.body.resources as { name: string; namespaced: boolean; kind: string; shortNames?: string[]; categories?: string[] }[];
    const main = entries.find((e) => e.name === c.plural);
    const facts = FACTS[c.plural];
    expect([c.plural, main?.kind, main?.namespaced, main?.shortNames ?? [], main?.categories ?? []]).toEqual([
      c.plural,
      c.kind,
      c.namespaced === true,
      facts?.shortNames,
      [],
    ]);
    expect([c.plural, entries.some((e) => e.name === `${c.plural}/status`)]).toEqual([c.plural, facts?.status === true]);
  }
});
