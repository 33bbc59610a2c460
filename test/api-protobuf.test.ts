/** Protobuf over HTTP: what kubectl and client-go send for built-in kinds. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { type Server, startServer } from './helpers/server';

let srv: Server;
const pb = new ProtobufCodec(new SchemaSet(definitions as unknown as Definitions, overlays));
const PREFIX = [0x6b, 0x38, 0x73, 0x00];

beforeAll(async () => {
  srv = await startServer();
}, 30_000);
afterAll(async () => {
  await srv.stop();
});

test('kubectl create <kind> (protobuf bodies) works for configmaps, secrets, namespaces and deployments', () => {
  for (const args of [
    ['create', 'configmap', 'pb-cm', '--from-literal=a=b'],
    ['create', 'secret', 'generic', 'pb-secret', '--from-literal=k=v'],
    ['create', 'namespace', 'pb-ns'],
    ['create', 'deployment', 'pb-web', '--image=nginx:1.25', '--replicas=2'],
  ]) {
    const r = srv.kubectl(args);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  }
  const cm = srv.kubectl(['get', 'cm', 'pb-cm', '-o', 'jsonpath={.data.a}']);
  expect(cm.stdout).toBe('b');
  const dep = srv.kubectl(['get', 'deploy', 'pb-web', '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}']);
  expect(dep.stdout).toBe('2 nginx:1.25');
});

test('GET and LIST with Accept protobuf answer the envelope; both brands; JSON fallback for the rest', async () => {
  await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'pb-get' }, data: { x: 'y' } });
  for (const type of ['application/vnd.svc.protobuf', 'application/vnd.kubernetes.protobuf']) {
    const r = await srv.fetch('/api/v1/namespaces/default/configmaps/pb-get', { headers: { accept: `${type}, application/json` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(type);
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual(PREFIX);
    const obj = pb.decode(bytes, 'io.svc.api.core.v1.ConfigMap') as { data: Record<string, string>; metadata: { name: string } };
    expect(obj.metadata.name).toBe('pb-get');
    expect(obj.data).toEqual({ x: 'y' });
  }
  const list = await srv.fetch('/api/v1/namespaces/default/configmaps', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  const decoded = pb.decode(new Uint8Array(await list.arrayBuffer()), 'io.svc.api.core.v1.ConfigMapList') as {
    items: { metadata: { name: string } }[];
  };
  expect(decoded.items.map((i) => i.metadata.name)).toContain('pb-get');
});

test('a POST with a protobuf body creates the object; a damaged body is 400', async () => {
  const body = pb.encode(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb-post' }, data: { k: 'v' } },
    'io.svc.api.core.v1.ConfigMap',
  );
  const r = await srv.fetch('/api/v1/namespaces/default/configmaps', {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    body,
  });
  expect(r.status).toBe(201);
  expect(((await r.json()) as { data: Record<string, string> }).data).toEqual({ k: 'v' });
  const bad = await srv.fetch('/api/v1/namespaces/default/configmaps', {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    body: new Uint8Array([1, 2, 3, 4, 5]),
  });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { reason: string }).reason).toBe('BadRequest');
});

/** Frames of a protobuf watch stream: 4-byte big-endian length, then a WatchEvent {type = 1, object = 2 {raw = 1}}. */
function watchFrames(bytes: Uint8Array): { type: string; raw: Uint8Array }[] {
  const out: { type: string; raw: Uint8Array }[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = (b: Uint8Array, i: { p: number }): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const x = b[i.p++] as number;
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  };
  while (at < bytes.length) {
    const len = view.getUint32(at);
    const msg = bytes.subarray(at + 4, at + 4 + len);
    expect(msg.length).toBe(len);
    at += 4 + len;
    let type = '';
    let raw: Uint8Array = new Uint8Array();
    const i = { p: 0 };
    while (i.p < msg.length) {
      const key = varint(msg, i);
      const n = varint(msg, i);
      const field = msg.subarray(i.p, i.p + n);
      i.p += n;
      if (key === 0x0a) type = new TextDecoder().decode(field);
      else if (key === 0x12) {
        const j = { p: 0 };
        expect(varint(field, j)).toBe(0x0a);
        const m = varint(field, j);
        raw = field.subarray(j.p, j.p + m);
      }
    }
    out.push({ type, raw });
  }
  return out;
}

test('a protobuf watch: ;stream=watch, length-prefixed WatchEvent frames with enveloped objects, in both brands', async () => {
  for (const [type, group] of [
    ['application/vnd.svc.protobuf', 'coordination.svc.io'],
    ['application/vnd.kubernetes.protobuf', 'coordination.k8s.io'],
  ] as const) {
    const ns = `/apis/${group}/v1/namespaces/default/leases`;
    const rv = (await srv.json('GET', ns)).body.metadata.resourceVersion;
    const name = `pw-${type.includes('svc') ? 's' : 'k'}`;
    const watch = srv.fetch(`${ns}?watch=1&resourceVersion=${rv}&timeoutSeconds=1&allowWatchBookmarks=true`, { headers: { accept: type } });
    await srv.json('POST', ns, { metadata: { name }, spec: { holderIdentity: 'a' } });
    await srv.json('PATCH', `${ns}/${name}`, { spec: { holderIdentity: 'b' } }, { 'content-type': 'application/merge-patch+json' });
    await srv.json('DELETE', `${ns}/${name}`);
    const r = await watch;
    expect(r.headers.get('content-type')).toBe(`${type};stream=watch`);
    const frames = watchFrames(new Uint8Array(await r.arrayBuffer()));
    const events = frames
      .filter((f) => f.type !== 'BOOKMARK')
      .map((f) => {
        expect([...f.raw.subarray(0, 4)]).toEqual(PREFIX);
        const o = pb.decode(f.raw) as { apiVersion: string; metadata: { name: string }; spec: { holderIdentity: string } };
        return [f.type, o.apiVersion, o.metadata.name, o.spec.holderIdentity];
      });
    expect(events).toEqual([
      ['ADDED', `${group}/v1`, name, 'a'],
      ['MODIFIED', `${group}/v1`, name, 'b'],
      ['DELETED', `${group}/v1`, name, 'b'],
    ]);
    // The last frame is the closing bookmark, in protobuf too.
    const last = frames[frames.length - 1] as { type: string; raw: Uint8Array };
    expect(last.type).toBe('BOOKMARK');
    expect(pb.typeMeta(last.raw)).toEqual({ apiVersion: `${group}/v1`, kind: 'Lease' });
  }
});

test('a protobuf watch from a resourceVersion older than the history: an ERROR frame holding the 410 Status', async () => {
  const short = await startServer({ args: ['--watch-history-window=2s'] });
  try {
    const cms = '/api/v1/namespaces/default/configmaps';
    const old = (await short.json('POST', cms, { metadata: { name: 'e1' } })).body;
    await short.json('PUT', `${cms}/e1`, { ...old, data: { k: '2' } });
    await Bun.sleep(2600);
    // The window moves when the cache sees newer events.
    await short.json('POST', cms, { metadata: { name: 'e2' } });
    await short.json('POST', cms, { metadata: { name: 'e3' } });
    const r = await short.fetch(`${cms}?watch=1&resourceVersion=${old.metadata.resourceVersion}`, {
      headers: { accept: 'application/vnd.svc.protobuf' },
    });
    expect(r.headers.get('content-type')).toBe('application/vnd.svc.protobuf;stream=watch');
    const frames = watchFrames(new Uint8Array(await r.arrayBuffer()));
    expect(frames.map((f) => f.type)).toEqual(['ERROR']);
    const status = pb.decode((frames[0] as { raw: Uint8Array }).raw) as { kind: string; code: number; reason: string; message: string };
    expect(status).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(status.message).toContain('too old resource version');
  } finally {
    await short.stop();
  }
}, 20_000);

test('errors in the negotiated type: a protobuf Status for a client asking for protobuf, JSON otherwise', async () => {
  const path = '/api/v1/namespaces/default/configmaps/does-not-exist';
  const p = await srv.fetch(path, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  expect(p.status).toBe(404);
  expect(p.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
  const status = pb.decode(new Uint8Array(await p.arrayBuffer())) as { kind: string; reason: string; code: number; message: string };
  expect(status).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404, message: 'configmaps "does-not-exist" not found' });
  const j = await srv.fetch(path, { headers: { accept: 'application/json' } });
  expect(j.headers.get('content-type')).toBe('application/json');
  expect(((await j.json()) as { reason: string }).reason).toBe('NotFound');
  // A protobuf write refused by validation: the 422 Status with its causes, in protobuf.
  const bad = await srv.fetch('/api/v1/namespaces/default/configmaps', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/vnd.svc.protobuf, application/json' },
    body: JSON.stringify({ metadata: { name: 'Bad_Name' } }),
  });
  expect(bad.status).toBe(422);
  const invalid = pb.decode(new Uint8Array(await bad.arrayBuffer())) as { reason: string; details: { causes: { field: string }[] } };
  expect(invalid.reason).toBe('Invalid');
  expect(invalid.details.causes[0]?.field).toBe('metadata.name');
});
