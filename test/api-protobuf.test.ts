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
