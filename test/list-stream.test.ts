/**
 * Long lists streamed in every media type (issue 15 item 4), with the codec pool's workers and
 * inline: a streamed list is the same bytes as the whole list encoded at once (JSON, protobuf,
 * CBOR; gzip or not; both brands), and other requests are answered while long lists are written.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as zlib from 'node:zlib';
import { CborCodec } from '../src/codec/cbor';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { type Server, startServer } from './helpers/server';

const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
const pb = new ProtobufCodec(schemas);
const cbor = new CborCodec(schemas);
const LIST = 'io.svc.api.core.v1.ConfigMapList';
const N = 1000;

type List = { kind: string; apiVersion: string; metadata: { resourceVersion: string }; items: { metadata: { name: string } }[] };

for (const poolSize of [1, 0]) {
  describe(`--codec-pool-size=${poolSize}`, () => {
    let srv: Server;
    const NS = 'long';
    const P = `/api/v1/namespaces/${NS}/configmaps`;
    beforeAll(async () => {
      // JSON lists stream from 500 items here as every encoding does (they are written whole
      // under 4 MiB by default: src/http/list-stream.ts WHOLE_JSON_BYTES, tested in api-lists.test.ts).
      // Without the pool, protobuf's first pass may hold ~300 kB of encodings for its second
      // (the default holds these lists whole): some chunks held, the rest encoded twice.
      srv = await startServer({
        args: [`--codec-pool-size=${poolSize}`, '--feature-gates=CBORServingAndStorage=true'],
        env: { SVC_LIST_WHOLE_JSON_BYTES: '0', ...(poolSize === 0 ? { SVC_LIST_HOLD_BYTES: '300000' } : {}) },
      });
      expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
      for (let i = 0; i < N; i += 100) {
        const rs = await Promise.all(
          Array.from({ length: 100 }, (_, j) => {
            const n = i + j;
            // Byte fields (binaryData) and non-ASCII text: what CBOR and protobuf write differently from JSON.
            const body: Record<string, unknown> = {
              metadata: { name: `cm-${n}`, labels: { n: String(n) } },
              data: { v: `é-${'x'.repeat(n % 700)}` },
            };
            if (n % 3 === 0) body.binaryData = { b: Buffer.from(`bytes ${n}`).toString('base64') };
            return srv.json('POST', P, body);
          }),
        );
        for (const r of rs) expect(r.status).toBe(201);
      }
    }, 60_000);
    afterAll(async () => {
      await srv?.stop();
    });

    /** The list at `rv` in JSON (streamed: N > 500), parsed. */
    async function jsonAt(rv: string, prefix = '/api/v1'): Promise<{ list: List; text: string }> {
      const r = await srv.fetch(`${prefix}/namespaces/${NS}/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`, {
        headers: { 'accept-encoding': 'identity' },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-length')).toBeNull();
      const text = await r.text();
      return { list: JSON.parse(text) as List, text };
    }

    test('JSON, protobuf and CBOR lists of 1,000 items are the bytes of the whole list encoded at once, with and without gzip', async () => {
      const first = await srv.fetch(P);
      const rv = ((await first.json()) as List).metadata.resourceVersion;
      const { list, text } = await jsonAt(rv);
      expect(list.items).toHaveLength(N);
      expect(new Set(list.items.map((i) => i.metadata.name)).size).toBe(N);
      // The stored texts joined: the same document as JSON.stringify of the parsed list.
      expect(text).toBe(`${JSON.stringify(list)}\n`);
      const want = {
        protobuf: pb.encode(list, LIST),
        cbor: cbor.encode(list, LIST),
        json: new TextEncoder().encode(text),
      };
      for (const [media, accept] of [
        ['protobuf', 'application/vnd.svc.protobuf'],
        ['cbor', 'application/cbor'],
        ['json', 'application/json'],
      ] as const) {
        for (const encoding of ['identity', 'gzip']) {
          const r = await srv.fetch(`${P}?resourceVersion=${rv}&resourceVersionMatch=Exact`, {
            headers: { accept, 'accept-encoding': encoding },
            decompress: false,
          } as RequestInit);
          expect(r.status).toBe(200);
          expect(r.headers.get('content-type')).toBe(accept);
          expect(r.headers.get('content-length')).toBeNull();
          let bytes = new Uint8Array(await r.arrayBuffer());
          if (encoding === 'gzip') {
            expect(r.headers.get('content-encoding')).toBe('gzip');
            // One gzip member (any gunzip reads it, not only multi-member readers).
            expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
            bytes = new Uint8Array(zlib.gunzipSync(bytes));
          } else expect(r.headers.get('content-encoding')).toBeNull();
          expect(Buffer.from(bytes).equals(Buffer.from(want[media]))).toBe(true);
        }
      }
      // Several chunks per list; with a pool, the protobuf and CBOR lists' chunks are shared
      // between its worker and the event loop (the first of each list to the worker), and JSON
      // with gzip, alone, is compressed inline (see back-pressure).
      const metrics = await (await srv.fetch('/metrics')).text();
      const tasks = /^svc_codec_pool_tasks_total (\d+)$/m.exec(metrics);
      if (poolSize === 0) expect(tasks).toBeNull();
      else expect(Number(tasks?.[1])).toBeGreaterThanOrEqual(4);
      expect(Number(/^svc_list_chunks_encoded_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(6 * 3);
    }, 60_000);

    test('a short list (a page of 40) in protobuf or CBOR goes to the pool too (16 KB of stored bytes pay for it), a JSON one does not', async () => {
      const tasks = async () => Number(/^svc_codec_pool_tasks_total (\d+)$/m.exec(await (await srv.fetch('/metrics')).text())?.[1] ?? 0);
      const page = `${P}?limit=40`;
      const json = (await (await srv.fetch(page)).json()) as List;
      expect(json.items).toHaveLength(40);
      const at = `${page}&resourceVersion=${json.metadata.resourceVersion}&resourceVersionMatch=Exact`;
      const before = await tasks();
      const same = (await (await srv.fetch(at)).json()) as List;
      expect(await tasks()).toBe(before);
      const p = await srv.fetch(at, { headers: { accept: 'application/vnd.svc.protobuf', 'accept-encoding': 'identity' } });
      // The continue token names the time it was made: compare with the answer's own list metadata.
      const pbytes = new Uint8Array(await p.arrayBuffer());
      const pmeta = (pb.decode(pbytes, LIST) as List).metadata;
      expect(Buffer.from(pbytes).equals(Buffer.from(pb.encode({ ...same, metadata: pmeta }, LIST)))).toBe(true);
      const c = await srv.fetch(at, { headers: { accept: 'application/cbor', 'accept-encoding': 'identity' } });
      const cbytes = new Uint8Array(await c.arrayBuffer());
      const cmeta = (cbor.decode(cbytes, LIST) as List).metadata;
      expect(Buffer.from(cbytes).equals(Buffer.from(cbor.encode({ ...same, metadata: cmeta }, LIST)))).toBe(true);
      expect(await tasks()).toBe(poolSize === 0 ? 0 : before + 2);
    });

    test('Tables stream too (kubectl get, pages of 500): the rows of every item, the columns of a short Table', async () => {
      const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json';
      const short = (await (await srv.fetch(`${P}?limit=2`, { headers: { accept } })).json()) as { columnDefinitions: unknown[] };
      const tasks = async () => Number(/^svc_codec_pool_tasks_total (\d+)$/m.exec(await (await srv.fetch('/metrics')).text())?.[1] ?? 0);
      const before = await tasks();
      const r = await srv.fetch(P, { headers: { accept, 'accept-encoding': 'identity' } });
      expect(r.headers.get('content-type')).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
      expect(r.headers.get('content-length')).toBeNull();
      const t = (await r.json()) as {
        kind: string;
        columnDefinitions: unknown[];
        rows: { cells: unknown[]; object: { kind: string; metadata: { name: string } } }[];
      };
      expect(t.kind).toBe('Table');
      // Rendered in the pool's worker, a chunk at a time (~3 chunks here).
      const rendered = (await tasks()) - before;
      if (poolSize === 0) expect(rendered).toBe(0);
      else expect(rendered).toBeGreaterThanOrEqual(2);
      expect(t.columnDefinitions).toEqual(short.columnDefinitions);
      expect(t.rows).toHaveLength(N);
      for (const row of t.rows) {
        expect(row.cells[0]).toBe(row.object.metadata.name);
        expect(row.object.kind).toBe('PartialObjectMetadata');
      }
      const k = srv.kubectl(['get', 'configmaps', '-n', NS, '--no-headers']);
      expect(k.code).toBe(0);
      expect(k.stdout.trim().split('\n')).toHaveLength(N);
    });

    test('the upstream group spelling and the newest list (from the watch cache) stream too', async () => {
      const r = await srv.fetch(P, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
      const decoded = pb.decode(new Uint8Array(await r.arrayBuffer()), LIST) as List;
      expect(decoded.kind).toBe('ConfigMapList');
      expect(decoded.apiVersion).toBe('v1');
      expect(decoded.items).toHaveLength(N);
      const c = await srv.fetch(`${P}?resourceVersion=0`, { headers: { accept: 'application/cbor' } });
      const items = (cbor.decode(new Uint8Array(await c.arrayBuffer()), LIST) as List).items;
      expect(items).toHaveLength(N);
      expect(items.find((i) => i.metadata.name === 'cm-3')).toMatchObject({ binaryData: { b: Buffer.from('bytes 3').toString('base64') } });
      // A named group in its upstream spelling: each item's apiVersion is rewritten (JSON and CBOR items carry it).
      for (let i = 0; i < 600; i += 100) {
        await Promise.all(
          Array.from({ length: 100 }, (_, j) =>
            srv.json('POST', `/apis/coordination.svc.io/v1/namespaces/${NS}/leases`, {
              metadata: { name: `l-${i + j}` },
              spec: { holderIdentity: 'h' },
            }),
          ),
        );
      }
      for (const group of ['coordination.k8s.io', 'coordination.svc.io']) {
        const path = `/apis/${group}/v1/namespaces/${NS}/leases`;
        const c = await srv.fetch(path, { headers: { accept: 'application/cbor', 'accept-encoding': 'gzip' } });
        const leases = cbor.decode(new Uint8Array(await c.arrayBuffer()), 'io.svc.api.coordination.v1.LeaseList') as List;
        const j = (await (await srv.fetch(path)).json()) as List;
        for (const l of [leases, j]) {
          expect(l.apiVersion).toBe(`${group}/v1`);
          expect(l.items).toHaveLength(600);
          expect(new Set(l.items.map((x) => (x as unknown as { apiVersion: string }).apiVersion))).toEqual(new Set([`${group}/v1`]));
        }
      }
    });

    test('a client that stops reading a long list mid-way does not stop the server from answering others', async () => {
      const heldBytes = async () => Number(/^svc_list_held_bytes (\d+)$/m.exec(await (await srv.fetch('/metrics')).text())?.[1]);
      for (let i = 0; i < 3; i++) {
        const r = await srv.fetch(P, { headers: { accept: 'application/vnd.svc.protobuf' } });
        const reader = (r.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        await reader.cancel();
      }
      // The protobuf encodings held between the passes of the answers cancelled are given back.
      for (let i = 0; i < 100 && (await heldBytes()) !== 0; i++) await Bun.sleep(20);
      expect(await heldBytes()).toBe(0);
      const small = await srv.json('GET', `/api/v1/namespaces/${NS}/configmaps/cm-1`);
      expect(small.status).toBe(200);
      const again = await srv.fetch(P, { headers: { accept: 'application/cbor' } });
      expect((cbor.decode(new Uint8Array(await again.arrayBuffer()), LIST) as List).items).toHaveLength(N);
    });
  });
}

describe('back-pressure', () => {
  let srv: Server;
  const NS = 'wide';
  const COUNT = 800;
  beforeAll(async () => {
    srv = await startServer({ args: ['--codec-pool-size=1', '--feature-gates=CBORServingAndStorage=true'] });
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
    const value = 'w'.repeat(100_000);
    for (let i = 0; i < COUNT; i += 50) {
      const rs = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          srv.json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: `w-${i + j}` }, data: { v: value } }),
        ),
      );
      for (const r of rs) expect(r.status).toBe(201);
    }
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  });

  test('a JSON list with gzip is compressed on the event loop while no other request comes in, through the pool while others do', async () => {
    const tasks = async () => Number(/^svc_codec_pool_tasks_total (\d+)$/m.exec(await (await srv.fetch('/metrics')).text())?.[1] ?? 0);
    const path = `/api/v1/namespaces/${NS}/configmaps`;
    const list = async () => {
      const r = await srv.fetch(path, { headers: { 'accept-encoding': 'gzip' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-encoding')).toBe('gzip');
      const l = (await r.json()) as { items: { metadata: { name: string } }[] };
      expect(l.items).toHaveLength(COUNT);
      expect(new Set(l.items.map((i) => i.metadata.name)).size).toBe(COUNT);
    };
    const alone = await tasks();
    await list();
    expect(await tasks()).toBe(alone);
    // Small requests all along: the chunks after each go to the worker.
    let stop = false;
    const others = Array.from({ length: 2 }, async () => {
      let n = 0;
      for (; !stop; n++) expect((await srv.fetch(`/api/v1/namespaces/${NS}`)).status).toBe(200);
      return n;
    });
    const busy = await tasks();
    await list();
    stop = true;
    const answered = (await Promise.all(others)).reduce((a, b) => a + b, 0);
    expect(answered).toBeGreaterThan(0);
    expect((await tasks()) - busy).toBeGreaterThan(0);
  }, 60_000);

  test('a CBOR list alone has every other chunk encoded on the event loop, the rest in the pool; with other requests coming in, most in the pool', async () => {
    const counts = async () => {
      const m = await (await srv.fetch('/metrics')).text();
      return {
        pool: Number(/^svc_codec_pool_tasks_total (\d+)$/m.exec(m)?.[1]),
        all: Number(/^svc_list_chunks_encoded_total (\d+)$/m.exec(m)?.[1]),
      };
    };
    // Read with a pause after each part (busy): the server encodes a chunk as the one before is
    // taken, so with others GETting all along, requests come in before nearly every chunk's turn.
    const list = async (pauseMs = 0) => {
      const r = await srv.fetch(`/api/v1/namespaces/${NS}/configmaps`, {
        headers: { accept: 'application/cbor', 'accept-encoding': 'identity' },
      });
      expect(r.status).toBe(200);
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      let bytes = 0;
      for (let c = await reader.read(); !c.done; c = await reader.read()) {
        bytes += c.value.length;
        if (pauseMs > 0) await Bun.sleep(pauseMs);
      }
      expect(bytes).toBeGreaterThan(COUNT * 100_000);
    };
    const share = async (during: () => Promise<void>) => {
      const a = await counts();
      await during();
      const b = await counts();
      expect(b.all - a.all).toBeGreaterThan(200);
      return (b.pool - a.pool) / (b.all - a.all);
    };
    const alone = await share(() => list());
    expect(alone).toBeGreaterThan(0.45);
    expect(alone).toBeLessThan(0.55);
    let stop = false;
    const others = Array.from({ length: 8 }, async () => {
      while (!stop) expect((await srv.fetch(`/api/v1/namespaces/${NS}`)).status).toBe(200);
    });
    const busy = await share(() => list(5));
    stop = true;
    await Promise.all(others);
    expect(busy).toBeGreaterThan(0.7);
  }, 60_000);

  test('a list of 80 MB is encoded as fast as the client reads it: nothing more while it pauses, the rest once it reads', async () => {
    const tasks = async () => Number(/^svc_list_chunks_encoded_total (\d+)$/m.exec(await (await srv.fetch('/metrics')).text())?.[1] ?? 0);
    const before = await tasks();
    const r = await srv.fetch(`/api/v1/namespaces/${NS}/configmaps`, {
      headers: { accept: 'application/cbor', 'accept-encoding': 'identity' },
    });
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let bytes = (await reader.read()).value?.length ?? 0;
    await Bun.sleep(1000);
    const paused = await tasks();
    await Bun.sleep(1000);
    // Socket buffers took some chunks; then the server waits for the client.
    expect(await tasks()).toBe(paused);
    for (let c = await reader.read(); !c.done; c = await reader.read()) bytes += c.value.length;
    expect(bytes).toBeGreaterThan(COUNT * 100_000);
    const total = (await tasks()) - before;
    // About 3 items of 100 KB per 256 KB chunk: ~270 chunks, most of them encoded after the pause.
    expect(total).toBeGreaterThan(200);
    expect(paused - before).toBeLessThan(total / 2);
  }, 60_000);
});
