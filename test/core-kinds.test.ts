/**
 * The core/v1 kinds of issue 35 over HTTPS against the real server: Endpoints,
 * PersistentVolume, PersistentVolumeClaim, PodTemplate and ReplicationController (create, get,
 * list, watch, server-side apply, one invalid object each, their subresources, `kubectl get`),
 * and the pod's spec subresources pods/ephemeralcontainers and pods/resize.
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { FIXTURES } from './helpers/fixtures';
import { needs } from './helpers/needs';
import { STATIC_SERVICES_STORAGE, serverForFile } from './helpers/server';
import { openWatch } from './helpers/watch';

const srv = serverForFile({ args: [STATIC_SERVICES_STORAGE] });

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON
type Any = any;
const NS = '/api/v1/namespaces/default';

const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
});

interface Case {
  kind: string;
  collection: string;
  name: string;
  valid: Any;
  /** A server-side apply body's change and where to read it back. */
  apply: Any;
  applied: (o: Any) => unknown;
  invalid: Any;
  /** The reference's cause for the invalid object. */
  cause: { field: string; message: string };
  /** kubectl get: resource name and the header the reference prints. */
  resource: string;
  header: string[];
}

const CASES: Case[] = [
  {
    kind: 'Endpoints',
    collection: `${NS}/endpoints`,
    name: 'web',
    valid: { subsets: [{ addresses: [{ ip: '10.1.2.3' }, { ip: '10.1.2.4' }], ports: [{ port: 8080 }] }] },
    apply: { metadata: { labels: { tier: 'front' } } },
    applied: (o) => o.metadata.labels.tier,
    invalid: { subsets: [{ addresses: [{ ip: '127.0.0.1' }] }] },
    cause: {
      field: 'subsets[0].addresses[0].ip',
      message: 'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    },
    resource: 'ep',
    header: ['NAME', 'ENDPOINTS', 'AGE'],
  },
  {
    kind: 'PersistentVolume',
    collection: '/api/v1/persistentvolumes',
    name: 'pv1',
    valid: { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } } },
    apply: { spec: { storageClassName: 'slow' } },
    applied: (o) => o.spec.storageClassName,
    invalid: {
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' }, nfs: { server: 's', path: '/x' } },
    },
    cause: { field: 'spec.nfs', message: 'Forbidden: may not specify more than 1 volume type' },
    resource: 'pv',
    header: [
      'NAME',
      'CAPACITY',
      'ACCESS MODES',
      'RECLAIM POLICY',
      'STATUS',
      'CLAIM',
      'STORAGECLASS',
      'VOLUMEATTRIBUTESCLASS',
      'REASON',
      'AGE',
    ],
  },
  {
    kind: 'PersistentVolumeClaim',
    collection: `${NS}/persistentvolumeclaims`,
    name: 'data',
    valid: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    apply: { metadata: { annotations: { note: 'x' } } },
    applied: (o) => o.metadata.annotations.note,
    invalid: { spec: { accessModes: [], resources: { requests: { storage: '1Gi' } } } },
    cause: { field: 'spec.accessModes', message: 'Required value: at least 1 access mode is required' },
    resource: 'pvc',
    header: ['NAME', 'STATUS', 'VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'AGE'],
  },
  {
    kind: 'PodTemplate',
    collection: `${NS}/podtemplates`,
    name: 'tmpl',
    valid: { template: template('t') },
    apply: { template: { metadata: { labels: { app: 't', extra: 'y' } } } },
    applied: (o) => o.template.metadata.labels.extra,
    invalid: { template: { spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 70000 }] }] } } },
    cause: {
      field: 'template.spec.containers[0].ports[0].containerPort',
      message: 'Invalid value: 70000: must be between 1 and 65535, inclusive',
    },
    resource: 'podtemplates',
    header: ['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS'],
  },
  {
    kind: 'ReplicationController',
    collection: `${NS}/replicationcontrollers`,
    name: 'rc1',
    valid: { spec: { replicas: 2, template: template('rc1') } },
    apply: { metadata: { annotations: { note: 'rc' } } },
    applied: (o) => o.metadata.annotations.note,
    invalid: { spec: { replicas: 1, selector: { app: 'other' }, template: template('rc1') } },
    cause: {
      field: 'spec.template.metadata.labels',
      message: 'Invalid value: map[string]string{"app":"rc1"}: `selector` does not match template `labels`',
    },
    resource: 'rc',
    header: ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'],
  },
];

const body = (c: Case, name: string, extra: Any) => ({ apiVersion: 'v1', kind: c.kind, metadata: { name }, ...extra });
const yaml = { 'content-type': 'application/apply-patch+yaml' };

describe.each(CASES)('$kind', (c) => {
  test('create, get, list, watch, server-side apply', async () => {
    const w = await openWatch(srv, `${c.collection}?watch=1`);
    const created = await srv.json('POST', c.collection, body(c, c.name, c.valid));
    expect(created.status).toBe(201);
    const got = await srv.json('GET', `${c.collection}/${c.name}`);
    expect(got.status).toBe(200);
    expect(got.body.kind).toBe(c.kind);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);
    const list = await srv.json('GET', c.collection);
    expect(list.body.kind).toBe(`${c.kind}List`);
    expect(list.body.items.map((i: Any) => i.metadata.name)).toContain(c.name);
    const [ev] = await w.take(1, 5000);
    expect(ev?.type).toBe('ADDED');
    expect(ev?.object.metadata.name).toBe(c.name);
    await w.close();
    const applied = await srv.json(
      'PATCH',
      `${c.collection}/${c.name}?fieldManager=test`,
      JSON.stringify({ apiVersion: 'v1', kind: c.kind, metadata: { name: c.name }, ...c.apply }),
      yaml,
    );
    expect(applied.status).toBe(200);
    expect(c.applied(applied.body)).toEqual(c.applied({ metadata: {}, ...c.apply }));
    expect(applied.body.metadata.managedFields.map((m: Any) => m.manager)).toContain('test');
  });

  test("an invalid object is 422 with the reference's cause", async () => {
    const r = await srv.json('POST', c.collection, body(c, `${c.name}-bad`, c.invalid));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes).toContainEqual({ reason: expect.any(String), field: c.cause.field, message: c.cause.message });
  });

  test('kubectl get shows the reference columns', () => {
    const out = srv.kubectl(['get', c.resource, c.name]);
    expect(out.stderr).toBe('');
    const [header, row] = out.stdout.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(c.header);
    expect(row?.startsWith(c.name)).toBe(true);
  });
});

describe('defaults and cells', () => {
  test('a persistent volume is Pending with Retain and Filesystem; kubectl shows them', async () => {
    const pv = (await srv.json('GET', '/api/v1/persistentvolumes/pv1')).body;
    expect(pv.status.phase).toBe('Pending');
    expect(pv.status.lastPhaseTransitionTime).toMatch(/Z$/);
    expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.spec.volumeMode).toBe('Filesystem');
    const row = srv.kubectl(['get', 'pv', 'pv1', '--no-headers']).stdout.trim().split(/\s+/);
    expect(row.slice(0, 5)).toEqual(['pv1', '1Gi', 'RWO', 'Retain', 'Pending']);
  });

  test('a claim is Pending with volumeMode Filesystem', async () => {
    const pvc = (await srv.json('GET', `${NS}/persistentvolumeclaims/data`)).body;
    expect(pvc.status).toEqual({ phase: 'Pending' });
    expect(pvc.spec.volumeMode).toBe('Filesystem');
  });

  test('a replication controller takes its selector and labels from the template', async () => {
    const rc = (await srv.json('GET', `${NS}/replicationcontrollers/rc1`)).body;
    expect(rc.spec.selector).toEqual({ app: 'rc1' });
    expect(rc.metadata.labels).toEqual({ app: 'rc1' });
    expect(rc.metadata.generation).toBeGreaterThanOrEqual(1);
    const wide = srv.kubectl(['get', 'rc', 'rc1', '-o', 'wide', '--no-headers']).stdout.trim().split(/\s+/);
    expect(wide.slice(-3)).toEqual(['c', 'nginx:1.27', 'app=rc1']);
  });

  test('endpoints ports default to TCP; the cell lists ip:port', async () => {
    const ep = (await srv.json('GET', `${NS}/endpoints/web`)).body;
    expect(ep.subsets[0].ports[0].protocol).toBe('TCP');
    const row = srv.kubectl(['get', 'ep', 'web', '--no-headers']).stdout.trim().split(/\s+/);
    expect(row[1]).toBe('10.1.2.3:8080,10.1.2.4:8080');
  });

  test('field selectors: name on volumes and claims (kept by the reference), status.replicas on controllers', async () => {
    const pvc = await srv.json('GET', `${NS}/persistentvolumeclaims?fieldSelector=name%3Ddata`);
    expect(pvc.body.items.map((i: Any) => i.metadata.name)).toEqual(['data']);
    const pv = await srv.json('GET', '/api/v1/persistentvolumes?fieldSelector=name%3Dnone');
    expect(pv.body.items).toEqual([]);
    const rc = await srv.json('GET', `${NS}/replicationcontrollers?fieldSelector=status.replicas%3D0`);
    expect(rc.body.items.map((i: Any) => i.metadata.name)).toContain('rc1');
    const ep = await srv.json('GET', `${NS}/endpoints?fieldSelector=name%3Dweb`);
    expect(ep.status).toBe(400);
  });

  test('the pod template shows its pod labels', () => {
    const row = srv.kubectl(['get', 'podtemplates', 'tmpl', '--no-headers']).stdout.trim().split(/\s+/);
    expect(row).toEqual(['tmpl', 'c', 'nginx:1.27', 'app=t,extra=y']);
  });
});

describe('subresources', () => {
  test('persistentvolumes/status and persistentvolumeclaims/status change only the status', async () => {
    const pv = (await srv.json('GET', '/api/v1/persistentvolumes/pv1')).body;
    const r = await srv.json('PUT', '/api/v1/persistentvolumes/pv1/status', {
      ...pv,
      spec: { ...pv.spec, storageClassName: 'ignored' },
      status: { phase: 'Available' },
    });
    expect(r.status).toBe(200);
    expect(r.body.status.phase).toBe('Available');
    // The phase changed and the writer set no transition time: the server stamps one.
    expect(r.body.status.lastPhaseTransitionTime).toMatch(/Z$/);
    expect(r.body.spec.storageClassName).toBe(pv.spec.storageClassName);
    const pvc = await srv.json('PATCH', `${NS}/persistentvolumeclaims/data/status`, JSON.stringify({ status: { phase: 'Lost' } }), {
      'content-type': 'application/merge-patch+json',
    });
    expect(pvc.body.status.phase).toBe('Lost');
  });

  test('replicationcontrollers/scale: a Scale with the selector map rendered as a=b', async () => {
    const scale = await srv.json('GET', `${NS}/replicationcontrollers/rc1/scale`);
    expect(scale.status).toBe(200);
    expect(scale.body.kind).toBe('Scale');
    expect(scale.body.status.selector).toBe('app=rc1');
    const put = await srv.json('PUT', `${NS}/replicationcontrollers/rc1/scale`, { ...scale.body, spec: { replicas: 5 } });
    expect(put.body.spec.replicas).toBe(5);
    expect((await srv.json('GET', `${NS}/replicationcontrollers/rc1`)).body.spec.replicas).toBe(5);
    expect(srv.kubectl(['scale', 'rc', 'rc1', '--replicas=1']).code).toBe(0);
    const st = await srv.json(
      'PATCH',
      `${NS}/replicationcontrollers/rc1/status`,
      JSON.stringify({ status: { replicas: 1, readyReplicas: 2 } }),
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(st.status).toBe(422);
    expect(st.body.details.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'status.readyReplicas',
      message: 'Invalid value: 2: cannot be greater than status.replicas',
    });
  });

  test('discovery lists pods/ephemeralcontainers and pods/resize', async () => {
    const d = (await srv.json('GET', '/api/v1')).body;
    const names = d.resources.map((r: Any) => r.name);
    for (const n of ['pods/ephemeralcontainers', 'pods/resize', 'replicationcontrollers/scale', 'persistentvolumes/status'])
      expect(names).toContain(n);
    const rc = d.resources.find((r: Any) => r.name === 'replicationcontrollers');
    expect(rc.shortNames).toEqual(['rc']);
    expect(rc.categories).toEqual(['all']);
  });

  test('pods/ephemeralcontainers: GET answers the pod; PATCH adds one, nothing else changes; existing ones stay', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'dbg' }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };
    expect((await srv.json('POST', `${NS}/pods`, pod)).status).toBe(201);
    const got = await srv.json('GET', `${NS}/pods/dbg/ephemeralcontainers`);
    expect(got.body.kind).toBe('Pod');
    const patch = {
      metadata: { labels: { ignored: 'yes' } },
      spec: { ephemeralContainers: [{ name: 'debugger', image: 'busybox', targetContainerName: 'app' }], activeDeadlineSeconds: 5 },
    };
    const r = await srv.json('PATCH', `${NS}/pods/dbg/ephemeralcontainers`, JSON.stringify(patch), {
      'content-type': 'application/strategic-merge-patch+json',
    });
    expect(r.status).toBe(200);
    expect(r.body.spec.ephemeralContainers[0].name).toBe('debugger');
    expect(r.body.spec.ephemeralContainers[0].terminationMessagePolicy).toBe('File');
    expect(r.body.spec.activeDeadlineSeconds).toBeUndefined();
    expect(r.body.metadata.labels).toBeUndefined();
    const removed = await srv.json('PUT', `${NS}/pods/dbg/ephemeralcontainers`, {
      ...r.body,
      spec: { ...r.body.spec, ephemeralContainers: [] },
    });
    expect(removed.status).toBe(422);
    expect(removed.body.details.causes[0]).toEqual({
      reason: 'FieldValueForbidden',
      field: 'spec.ephemeralContainers',
      message: 'Forbidden: existing ephemeral containers "debugger" may not be removed\n',
    });
    const bad = await srv.json(
      'PATCH',
      `${NS}/pods/dbg/ephemeralcontainers`,
      JSON.stringify({ spec: { ephemeralContainers: [{ name: 'p', image: 'busybox', ports: [{ containerPort: 80 }] }] } }),
      {
        'content-type': 'application/strategic-merge-patch+json',
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toContainEqual({
      reason: 'FieldValueForbidden',
      field: 'spec.ephemeralContainers[0].ports',
      message: 'Forbidden: cannot be set for an Ephemeral Container',
    });
    const direct = await srv.json('POST', `${NS}/pods`, {
      ...pod,
      metadata: { name: 'dbg2' },
      spec: { ...pod.spec, ephemeralContainers: [{ name: 'e', image: 'busybox' }] },
    });
    expect(direct.status).toBe(422);
    expect(direct.body.details.causes).toContainEqual({
      reason: 'FieldValueForbidden',
      field: 'spec.ephemeralContainers',
      message: 'Forbidden: cannot be set on create',
    });
  });

  test('pods/resize: container resources change; anything else is refused', async () => {
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'rs' },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources }] },
    };
    expect((await srv.json('POST', `${NS}/pods`, pod)).status).toBe(201);
    const smp = { 'content-type': 'application/strategic-merge-patch+json' };
    const up = {
      spec: { containers: [{ name: 'app', image: 'ignored:1', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] },
    };
    const r = await srv.json('PATCH', `${NS}/pods/rs/resize`, JSON.stringify(up), smp);
    expect(r.status).toBe(200);
    expect(r.body.spec.containers[0].resources.requests.cpu).toBe('150m');
    expect(r.body.spec.containers[0].image).toBe('nginx:1.27');
    const lower = { spec: { containers: [{ name: 'app', resources: { limits: { memory: '64Mi' } } }] } };
    const bad = await srv.json('PATCH', `${NS}/pods/rs/resize`, JSON.stringify(lower), smp);
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toContainEqual({
      reason: 'FieldValueForbidden',
      field: 'spec.containers[0].resources.limits[memory]',
      message: 'Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer',
    });
    const qos = { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '300m', memory: '128Mi' } } }] } };
    const q = await srv.json('PATCH', `${NS}/pods/rs/resize`, JSON.stringify(qos), smp);
    expect(q.status).toBe(422);
    expect(q.body.details.causes).toContainEqual({
      reason: 'FieldValueInvalid',
      field: 'spec',
      message: 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing',
    });
    expect((await srv.json('DELETE', `${NS}/pods/rs/resize`)).status).toBe(405);
  });

  test('kubectl debug adds an ephemeral container; kubectl patch --subresource resize changes resources', async () => {
    const debug = srv.kubectl(['debug', 'dbg', '--image=busybox:1', '-c', 'shell', '--attach=false', '--profile=general']);
    expect(debug.code).toBe(0);
    const pod = (await srv.json('GET', `${NS}/pods/dbg`)).body;
    expect(pod.spec.ephemeralContainers.map((c: Any) => c.name)).toEqual(['debugger', 'shell']);
    const patch = JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu: '180m' } } }] } });
    const r = srv.kubectl(['patch', 'pod', 'rs', '--subresource', 'resize', '-p', patch]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await srv.json('GET', `${NS}/pods/rs`)).body.spec.containers[0].resources.requests.cpu).toBe('180m');
  });
});

describe('protobuf', () => {
  const pb = new ProtobufCodec(new SchemaSet(definitions as unknown as Definitions, overlays));

  test.each(CASES)('$kind: GET in protobuf decodes to the JSON object', async (c) => {
    const json = (await srv.json('GET', `${c.collection}/${c.name}`)).body;
    const r = await srv.fetch(`${c.collection}/${c.name}`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(r.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
    const decoded = pb.decode(new Uint8Array(await r.arrayBuffer()), `io.svc.api.core.v1.${c.kind}`);
    expect(decoded).toEqual(json);
  });

  needs('reference').test('the reference PodTemplate protobuf fixture decodes to its JSON fixture', () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'core.v1.PodTemplate.pb')));
    const want = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'core.v1.PodTemplate.json'), 'utf8'));
    expect(pb.decode(bytes, 'io.svc.api.core.v1.PodTemplate')).toEqual(want);
  });
});
