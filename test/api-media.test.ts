/**
 * Media types and encodings: pretty JSON, YAML bodies and responses, Table (meta.svc.io and the
 * upstream meta.k8s.io), PartialObjectMetadata, Accept fallback, 406, 415, gzip (threshold
 * 128 KiB), and the 3 MiB request body limit.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import YAML from 'yaml';
import { type Server, startServer } from './helpers/server';

let srv: Server;
// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const NS = 'media';
const P = `/api/v1/namespaces/${NS}/configmaps`;

beforeAll(async () => {
  srv = await startServer();
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  expect((await srv.json('POST', P, { metadata: { name: 'small', labels: { a: 'b' } }, data: { k: 'v' } })).status).toBe(201);
}, 30_000);
afterAll(async () => {
  await srv.stop();
});

const get = (p: string, headers: Record<string, string> = {}) => srv.fetch(p, { headers });

describe('JSON', () => {
  test('application/json by default; ?pretty=true indents', async () => {
    const plain = await get(`${P}/small`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('application/json');
    const text = await plain.text();
    expect(text).not.toContain('\n  ');
    const pretty = await get(`${P}/small?pretty=true`);
    expect(pretty.headers.get('content-type')).toBe('application/json');
    const ptext = await pretty.text();
    expect(ptext).toStartWith('{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "metadata": {\n    ');
    expect(JSON.parse(ptext)).toEqual(JSON.parse(text));
    // Lists too.
    const pl = await (await get(`${P}?pretty=true`)).text();
    expect(pl).toStartWith('{\n  "kind": "ConfigMapList",\n  "apiVersion": "v1",\n');
    expect(JSON.parse(pl).items).toHaveLength(1);
    // Errors too (Status).
    const pe = await get(`${P}/missing?pretty=true`);
    expect(pe.status).toBe(404);
    expect(JSON.parse(await pe.text())).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });

  test('?pretty=false is compact', async () => {
    const r = await get(`${P}/small?pretty=false`);
    expect(await r.text()).not.toContain('\n  ');
  });
});

describe('YAML', () => {
  test('a YAML request body creates the object; Accept: application/yaml answers YAML', async () => {
    const body =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n  labels:\n    src: yaml\ndata:\n  greeting: hello\n  flag: "on"\n';
    const r = await srv.fetch(P, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml', accept: 'application/yaml' },
      body,
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/yaml');
    const obj = YAML.parse(await r.text());
    expect(obj).toMatchObject({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'from-yaml', namespace: NS, labels: { src: 'yaml' } },
    });
    expect(obj.data).toEqual({ greeting: 'hello', flag: 'on' });
    // The stored object, read back as JSON.
    const g = await srv.json('GET', `${P}/from-yaml`);
    expect(g.body.data).toEqual({ greeting: 'hello', flag: 'on' });
  });

  test('YAML responses quote strings that YAML 1.1 readers would take as other types', async () => {
    const data = { a: 'on', b: 'yes', c: 'y', d: 'off', e: '12', f: 'true', g: 'null', h: '1.5', i: '2024-01-01' };
    await srv.json('POST', P, { metadata: { name: 'tricky' }, data });
    const r = await get(`${P}/tricky`, { accept: 'application/yaml' });
    const text = await r.text();
    // Read with YAML 1.1 rules (as sigs.k8s.io/yaml / go-yaml v2 do): every value stays a string.
    expect(YAML.parse(text, { version: '1.1' }).data).toEqual(data);
    // creationTimestamp stays a string too.
    expect(typeof YAML.parse(text, { version: '1.1' }).metadata.creationTimestamp).toBe('string');
  });

  test('a YAML list', async () => {
    const r = await get(P, { accept: 'application/yaml' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/yaml');
    const l = YAML.parse(await r.text());
    expect(l.kind).toBe('ConfigMapList');
    expect(l.apiVersion).toBe('v1');
    expect(l.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(l.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('small');
  });

  test('a YAML PUT body', async () => {
    const g = await srv.json('GET', `${P}/small`);
    const y = YAML.stringify({ ...g.body, data: { k: 'v2' } });
    const r = await srv.fetch(`${P}/small`, { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: y });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(((await r.json()) as Json).data).toEqual({ k: 'v2' });
  });

  test('malformed YAML: 400 BadRequest', async () => {
    const r = await srv.fetch(P, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: 'metadata: [unclosed\n  name: x',
    });
    expect(r.status).toBe(400);
    expect((await r.json()) as Json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
  });
});

describe('Table and PartialObjectMetadata', () => {
  for (const g of ['meta.svc.io', 'meta.k8s.io']) {
    test(`Table with g=${g}: apiVersion echoes the group (list and get)`, async () => {
      const accept = `application/json;as=Table;g=${g};v=v1`;
      const l = await get(P, { accept });
      expect(l.status).toBe(200);
      expect(l.headers.get('content-type')).toStartWith('application/json');
      const t = (await l.json()) as Json;
      expect(t.kind).toBe('Table');
      expect(t.apiVersion).toBe(`${g}/v1`);
      expect(t.metadata.resourceVersion).toMatch(/^\d+$/);
      expect(t.columnDefinitions[0]).toMatchObject({ name: 'Name', type: 'string' });
      for (const c of t.columnDefinitions) expect(typeof c.name === 'string' && typeof c.type === 'string').toBe(true);
      const rowNames = t.rows.map((r: { cells: unknown[] }) => r.cells[0]);
      expect(rowNames).toContain('small');
      for (const r of t.rows) expect(r.cells).toHaveLength(t.columnDefinitions.length);
      // Rows carry PartialObjectMetadata of the same group by default.
      expect(t.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: `${g}/v1` });
      const one = (await (await get(`${P}/small`, { accept })).json()) as Json;
      expect(one.kind).toBe('Table');
      expect(one.apiVersion).toBe(`${g}/v1`);
      expect(one.rows).toHaveLength(1);
      expect(one.rows[0].cells[0]).toBe('small');
    });
  }

  test('Table for a kind without custom columns: Name and Created At', async () => {
    const t = (await (
      await get('/api/v1/namespaces/media/secrets', { accept: 'application/json;as=Table;g=meta.svc.io;v=v1' })
    ).json()) as Json;
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type]).slice(0, 1)).toEqual([['Name', 'string']]);
  });

  test('PartialObjectMetadataList', async () => {
    const r = await get(P, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
    expect(r.status).toBe(200);
    const l = (await r.json()) as Json;
    expect(l.kind).toBe('PartialObjectMetadataList');
    expect(l.apiVersion).toBe('meta.k8s.io/v1');
    const small = l.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'small');
    expect(small).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'small', labels: { a: 'b' } },
    });
    expect(small.data).toBeUndefined();
  });
});

describe('negotiation', () => {
  test('fallback across several Accept types', async () => {
    // An unsupported type first, then JSON.
    let r = await get(`${P}/small`, { accept: 'application/xml, application/json;q=0.9' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    // Table first, then JSON: the Table is served.
    r = await get(P, { accept: 'application/json;as=Table;v=v1;g=meta.svc.io, application/json' });
    expect(((await r.json()) as Json).kind).toBe('Table');
    // A Table version that does not exist, then YAML.
    r = await get(`${P}/small`, { accept: 'application/json;as=Table;v=v9;g=meta.svc.io, application/yaml' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/yaml');
    // q-values decide the order.
    r = await get(`${P}/small`, { accept: 'application/json;q=0.5, application/yaml' });
    expect(r.headers.get('content-type')).toBe('application/yaml');
    // Wildcards.
    r = await get(`${P}/small`, { accept: '*/*' });
    expect(r.headers.get('content-type')).toBe('application/json');
    r = await get(`${P}/small`, { accept: 'application/*' });
    expect(r.headers.get('content-type')).toBe('application/json');
  });

  test('only unsupported Accept types: 406 NotAcceptable', async () => {
    for (const accept of ['text/html', 'application/xml, text/plain', 'application/json;as=Table;g=meta.example.com;v=v1']) {
      const r = await get(`${P}/small`, { accept });
      expect([accept, r.status]).toEqual([accept, 406]);
      const s = (await r.json()) as Json;
      expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotAcceptable', code: 406 });
      expect(s.message).toStartWith('only the following media types are accepted: application/json, application/yaml');
    }
  });

  test('discovery ignores as=Table and falls back to JSON', async () => {
    const r = await get('/api/v1', { accept: 'application/json;as=Table;v=v1;g=meta.svc.io, application/json' });
    expect(r.status).toBe(200);
    expect(((await r.json()) as Json).kind).toBe('APIResourceList');
  });

  test('an unsupported Content-Type on POST: 415 UnsupportedMediaType', async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const r = await srv.fetch(P, { method: 'POST', headers: { 'content-type': ct }, body: '{"metadata":{"name":"x415"}}' });
      expect([ct, r.status]).toEqual([ct, 415]);
      const s = (await r.json()) as Json;
      expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'UnsupportedMediaType', code: 415 });
      expect(s.message).toStartWith(
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
      );
    }
    expect((await srv.json('GET', `${P}/x415`)).status).toBe(404);
  });

  test('a patch media type on POST: 415', async () => {
    const r = await srv.fetch(P, { method: 'POST', headers: { 'content-type': 'application/merge-patch+json' }, body: '{}' });
    expect(r.status).toBe(415);
  });

  test('Content-Type with parameters (charset) is accepted', async () => {
    const r = await srv.fetch(P, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ metadata: { name: 'charset' } }),
    });
    expect(r.status).toBe(201);
  });
});

describe('compression', () => {
  test('a large list is gzipped with Accept-Encoding: gzip; small responses are not', async () => {
    const big = 'x'.repeat(60 * 1024);
    for (const n of ['big1', 'big2', 'big3'])
      expect((await srv.json('POST', P, { metadata: { name: n }, data: { big } })).status).toBe(201);
    const r = await srv.fetch(P, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBe('gzip');
    const raw = new Uint8Array(await r.arrayBuffer());
    expect(raw[0]).toBe(0x1f);
    expect(raw[1]).toBe(0x8b);
    const list = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(raw)));
    expect(list.kind).toBe('ConfigMapList');
    expect(raw.length).toBeLessThan(64 * 1024);
    // A single small object: below the threshold.
    const s = await srv.fetch(`${P}/small`, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(s.headers.get('content-encoding')).toBeNull();
    await s.arrayBuffer();
    // Without Accept-Encoding: gzip, no compression (identity only).
    const id = await srv.fetch(P, { headers: { 'accept-encoding': 'identity' }, decompress: false } as RequestInit);
    expect(id.headers.get('content-encoding')).toBeNull();
    expect(JSON.parse(await id.text()).items.length).toBeGreaterThanOrEqual(3);
    // A large single object (GET) is compressed too.
    const huge = 'y'.repeat(200 * 1024);
    await srv.json('POST', P, { metadata: { name: 'huge' }, data: { huge } });
    const g = await srv.fetch(`${P}/huge`, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(g.headers.get('content-encoding')).toBe('gzip');
    await g.arrayBuffer();
    for (const n of ['big1', 'big2', 'big3', 'huge']) await srv.json('DELETE', `${P}/${n}`);
  });
});

describe('malformed requests', () => {
  test('a body nested deeper than 10,000 levels: 400, not a stack overflow', async () => {
    const deep = (d: number) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
    // Go's scanner's error, worded by each handler as the reference's (the body's first 30 bytes after a create's or update's).
    const unrecognized =
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: exceeded max depth";
    for (const [method, path, type, body, message] of [
      [
        'POST',
        P,
        'application/json',
        `{"metadata":{"name":"deep"},"data":${deep(200_000)}}`,
        `${unrecognized} ({"metadata":{"name":"deep"},"d ...)`,
      ],
      [
        'PUT',
        `${P}/small`,
        'application/json',
        `{"metadata":{"name":"small"},"x":${deep(10_001)}}`,
        `${unrecognized} ({"metadata":{"name":"small"}," ...)`,
      ],
      [
        'PATCH',
        `${P}/small`,
        'application/merge-patch+json',
        `{"metadata":{"annotations":${deep(50_000)}}}`,
        'error decoding patch: exceeded max depth',
      ],
    ] as const) {
      const r = await srv.fetch(path, { method, headers: { 'content-type': type }, body });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message });
    }
    expect((await srv.json('GET', `${P}/deep`)).status).toBe(404);
  });

  test('a bad escape in the path: 400 Status', async () => {
    for (const path of ['/api/v1/namespaces/%ZZ/configmaps', `${P}/a%`]) {
      const r = await srv.json('GET', path);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect(r.body.message).toContain('invalid URL escape');
    }
  });
});

describe('request body limit', () => {
  test('a body over 3 MiB: 413 RequestEntityTooLarge', async () => {
    const body = JSON.stringify({ metadata: { name: 'too-big' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 16) } });
    const r = await srv.json('POST', P, body);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Request entity too large: limit is 3145728',
      reason: 'RequestEntityTooLarge',
      code: 413,
    });
    expect((await srv.json('GET', `${P}/too-big`)).status).toBe(404);
  });

  test('a body over 3 MiB on PUT: 413', async () => {
    const body = JSON.stringify({ metadata: { name: 'small' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 16) } });
    const r = await srv.json('PUT', `${P}/small`, body);
    expect(r.status).toBe(413);
    expect(r.body.reason).toBe('RequestEntityTooLarge');
  });
});
