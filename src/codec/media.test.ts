/**
 * One contract, every negotiated codec (src/codec/media.ts): JSON, pretty JSON, YAML, protobuf
 * (both brands' media types), CBOR, Table and PartialObjectMetadata, in the svc spelling and in
 * the upstream one. Byte-for-byte answers against the reference are the end-to-end tests'
 * (test/api-media, test/api-protobuf, test/api-cbor, test/table); here the codecs agree with
 * themselves: an object reads back as what was written, a streamed list is the same bytes as
 * the whole list, a watch's initial event is the same bytes as the live one.
 */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { SchemaSet } from '../schema/engine';
import generated from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions } from '../schema/types';
import type { KeyValue } from '../store/types';
import { cborCodec, protobufCodec } from './binary-media';
import { brandView } from './brand-view';
import { CborCodec } from './cbor';
import { jsonCodec, yamlCodec } from './json-media';
import type { EncodeContext, ListItems, MediaCodec } from './media';
import { PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE_UPSTREAM, ProtobufCodec } from './protobuf';
import { decodeStored, encodeStored, storedText } from './stored';
import { metadataCodec, tableCodec } from './table-media';

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const pb = new ProtobufCodec(schemas);
const cbor = new CborCodec(schemas);
const dec = new TextDecoder();
const NOW = Date.parse('2026-01-02T03:04:05Z');

const json = jsonCodec(false);
const codecs: [string, MediaCodec][] = [
  ['json', json],
  ['pretty json', jsonCodec(true)],
  ['yaml', yamlCodec()],
  ['protobuf', protobufCodec(pb, PROTOBUF_MEDIA_TYPE, json)],
  ['protobuf (upstream type)', protobufCodec(pb, PROTOBUF_MEDIA_TYPE_UPSTREAM, json)],
  ['cbor', cborCodec(cbor)],
  ['table', tableCodec('meta.k8s.io', 'v1', false)],
  ['pretty table', tableCodec('meta.svc.io', 'v1', true)],
  ['metadata', metadataCodec('meta.k8s.io', 'v1', false)],
];

/** A kind and objects of it as the store holds them (resourceVersion = modRevision). */
function kindOf(brand: 'svc' | 'k8s') {
  const lease = brand === 'k8s';
  const group = lease ? 'coordination.svc.io' : '';
  const def = {
    kind: lease ? 'Lease' : 'ConfigMap',
    listKind: lease ? 'LeaseList' : 'ConfigMapList',
    schema: lease ? 'io.svc.api.coordination.v1.Lease' : 'io.svc.api.core.v1.ConfigMap',
    columns: [{ name: 'Name length', type: 'integer' as const, priority: 0, cell: (o: Obj) => (o.metadata.name ?? '').length }],
  };
  const apiVersion = lease ? 'coordination.svc.io/v1' : 'v1';
  const kvs: KeyValue[] = Array.from({ length: 5 }, (_, i) => {
    const obj: Obj = {
      kind: def.kind,
      apiVersion,
      metadata: { name: `o${i}`, namespace: 'ns', uid: `u${i}`, creationTimestamp: '2026-01-01T00:00:00Z' },
      ...(lease ? { spec: { holderIdentity: `h${i}`, leaseDurationSeconds: 10 + i } } : { data: { k: `v${i}` } }),
    };
    // A copy of the bytes: this process's own recent writes (the writer's hints) must not answer.
    return {
      key: `/registry/x/ns/o${i}`,
      value: new Uint8Array(encodeStored(obj)),
      createRevision: 10 + i,
      modRevision: 10 + i,
      version: 1,
    };
  });
  const ctx: EncodeContext = { kind: def, view: brandView({ group, version: 'v1' }, brand), now: () => NOW };
  const items: ListItems = {
    count: kvs.length,
    key: (i) => (kvs[i] as KeyValue).key,
    value: (i) => (kvs[i] as KeyValue).value,
    rv: (i) => (kvs[i] as KeyValue).modRevision,
    text: (i) => storedText(kvs[i] as KeyValue),
    obj: (i) => decodeStored(kvs[i] as KeyValue),
  };
  return { def, kvs, ctx, items };
}

const bytes = (b: string | Uint8Array): Uint8Array => (typeof b === 'string' ? new TextEncoder().encode(b) : b);
const concat = (parts: (string | Uint8Array)[]): Uint8Array => Buffer.concat(parts.map((p) => Buffer.from(bytes(p))));

describe.each(codecs)('%s', (_name, codec) => {
  describe.each(['svc', 'k8s'] as const)('in the %s spelling', (brand) => {
    const { kvs, ctx, items } = kindOf(brand);
    const kv = kvs[0] as KeyValue;

    test('an object as stored and the same object decoded are one answer', () => {
      const stored = codec.object({ kv }, ctx);
      const decoded = codec.object({ obj: decodeStored(kv) }, ctx);
      expect(decoded.contentType).toBe(stored.contentType);
      if (!codec.binary && stored.contentType.startsWith('application/json')) {
        expect(JSON.parse(dec.decode(bytes(decoded.body)))).toEqual(JSON.parse(dec.decode(bytes(stored.body))));
      } else expect(bytes(decoded.body)).toEqual(bytes(stored.body));
    });

    test('what it writes of an object, it reads back (in the request spelling)', () => {
      const e = codec.object({ kv }, ctx);
      if (e.contentType.includes(';as=')) return; // Tables and metadata are answers only.
      const back = codec.decode(codec.binary ? bytes(e.body) : dec.decode(bytes(e.body)), ctx.kind.schema, []);
      expect(back).toEqual(JSON.parse(JSON.stringify(ctx.view.obj(decodeStored(kv)))));
    });

    test('a streamed list is the same bytes as the whole list', () => {
      const stream = codec.stream;
      if (!stream) return;
      const meta = { resourceVersion: '99' };
      const spec = { ...stream.spec(ctx), comma: false };
      const cctx = { view: ctx.view, columns: ctx.kind.columns };
      const first = { ...items, count: 2 };
      const rest = {
        count: 3,
        key: (i: number) => items.key(i + 2),
        value: (i: number) => items.value(i + 2),
        rv: (i: number) => items.rv(i + 2),
      };
      const chunks = [stream.chunk(first, spec, cctx), stream.chunk(rest, { ...spec, comma: true }, cctx)];
      const length = chunks.reduce((n, c) => n + c.length, 0);
      const { head, tail } = stream.parts(meta, ctx, items.count, length);
      const whole = codec.list(meta, items, ctx);
      expect(stream.contentType).toBe(whole.contentType);
      expect(concat([head, ...chunks, tail])).toEqual(Buffer.from(bytes(whole.body)));
    });

    test("a watch's initial event is the same bytes as the live one", () => {
      const c = { key: kv.key, value: kv.value, rv: kv.modRevision, text: storedText(kv), obj: decodeStored(kv) };
      const parts: (string | Uint8Array)[] = [];
      const last = codec.watch.initial(c, ctx, (p) => parts.push(p));
      expect(concat([...parts, last])).toEqual(concat([codec.watch.event('ADDED', c, ctx)]));
    });

    test('errors: the binary encodings write their own Status, the text ones leave it to the chain', () => {
      const status = new StatusError(404, 'NotFound', 'gone', {}).body();
      const e = codec.error(status);
      if (!codec.binary) return expect(e).toBeUndefined();
      expect(codec.decode((e as { body: Uint8Array }).body, 'io.svc.apimachinery.pkg.apis.meta.v1.Status', [])).toMatchObject({
        kind: 'Status',
        code: 404,
        reason: 'NotFound',
      });
    });
  });

  test('a malformed body is 400 Bad Request', () => {
    const garbage = codec.binary ? new Uint8Array([1, 2, 3]) : '{"a": ';
    expect(() => codec.decode(garbage, 'io.svc.api.core.v1.ConfigMap', [])).toThrow(StatusError);
    try {
      codec.decode(garbage, 'io.svc.api.core.v1.ConfigMap', []);
    } catch (e) {
      expect((e as StatusError).code).toBe(400);
    }
  });
});

test('values (a Status, the deleted objects): JSON, YAML and CBOR as themselves, protobuf in JSON', () => {
  const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  for (const [name, codec] of codecs) {
    const e = codec.value(status, undefined);
    if (name === 'yaml') expect(e.contentType).toBe('application/yaml');
    else if (name === 'cbor') expect(e.contentType).toBe('application/cbor');
    else {
      expect(e.contentType).toBe('application/json');
      expect(JSON.parse(dec.decode(bytes(e.body)))).toEqual(status);
    }
  }
});
