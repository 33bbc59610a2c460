/**
 * The protobuf and CBOR encodings (src/codec/media.ts) over their codecs (./protobuf.ts,
 * ./cbor.ts): objects decoded from storage and written in the kind's definition. Their errors
 * are Status objects in the same encoding; their watches are frames (protobuf: length-prefixed
 * WatchEvents, `;stream=watch`; CBOR: an `application/cbor-seq` of self-described items),
 * shared by every watch of one encoding in the svc spelling.
 */
import type { Obj } from '../api/meta';
import { badRequest } from '../api/status';
import { CBOR_MEDIA_TYPE, CBOR_SEQ_MEDIA_TYPE, type CborCodec, CborError } from './cbor';
import { BodySyntaxError, objectOf, objectsOf } from './json-media';
import type { EncodeContext, ListMeta, MediaCodec, StreamCodec, WatchCodec } from './media';
import { PROTOBUF_LIST_TAIL, type ProtobufCodec } from './protobuf';
import { decodeStoredItems } from './stored';

const bytesOf = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? new TextEncoder().encode(body) : body);

/** The list envelope without its items, in the request's spelling. */
const envelope = (meta: ListMeta, ctx: EncodeContext) => ({ kind: ctx.kind.listKind, apiVersion: ctx.view.apiVersion, metadata: meta });

/** A JSON round trip: what a Status or bookmark is after JSON.stringify (undefined members dropped). */
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/**
 * Protobuf answers in `mediaType` (either brand's). `json` writes what protobuf has no answer
 * for here: a delete's Status and a deletecollection's list (see MediaCodec.value).
 */
export function protobufCodec(pb: ProtobufCodec, mediaType: string, json: MediaCodec): MediaCodec {
  const watch: WatchCodec = {
    contentType: `${mediaType};stream=watch`,
    idle: undefined,
    shareKey: 'protobuf',
    event: (type, e, ctx) => pb.encodeWatchEvent(type, ctx.view.obj(e.obj), ctx.kind.schema),
    initial: (c, ctx) => pb.encodeWatchEvent('ADDED', ctx.view.obj(c.obj), ctx.kind.schema),
    bookmark: (b, ctx) => pb.encodeWatchEvent('BOOKMARK', ctx.view.obj(plain(b) as Obj), ctx.kind.schema),
    error: (status) => pb.encodeWatchStatus(plain(status)),
  };
  const stream: StreamCodec = {
    media: 'protobuf',
    contentType: mediaType,
    sizedHead: true,
    spec: (ctx) => ({ media: 'protobuf', listDef: `${ctx.kind.schema}List`, itemDef: ctx.kind.schema }),
    parts: (meta, ctx, _count, itemsLength) => ({
      head: pb.listHead(envelope(meta, ctx), `${ctx.kind.schema}List`, itemsLength),
      tail: PROTOBUF_LIST_TAIL as Uint8Array,
    }),
    chunk: (items, spec) => pb.listItems(decodeStoredItems(items), spec.listDef),
  };
  return {
    binary: true,
    object: (input, ctx) => ({ body: pb.encode(objectOf(input, ctx.view), ctx.kind.schema), contentType: mediaType }),
    list: (meta, items, ctx) => ({
      body: pb.encode({ ...envelope(meta, ctx), items: objectsOf(items, ctx.view) }, `${ctx.kind.schema}List`),
      contentType: mediaType,
    }),
    value: (v, def) => json.value(v, def),
    error: (status) => ({ body: pb.encodeStatus(status), contentType: mediaType }),
    watch,
    stream,
    decode(body, def) {
      try {
        return pb.decode(bytesOf(body), def);
      } catch (e) {
        const m = (e as Error).message;
        // The reference's protobuf serializer's words for a body without the envelope's prefix.
        if (m.startsWith('protobuf: the body does not start with the envelope prefix')) {
          throw new BodySyntaxError(
            'protobuf',
            'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
            bytesOf(body),
          );
        }
        throw badRequest(`the body of the request could not be decoded: ${m}`);
      }
    },
  };
}

/** CBOR answers (application/cbor), watches as application/cbor-seq. */
export function cborCodec(cbor: CborCodec): MediaCodec {
  const answer = (body: Uint8Array) => ({ body, contentType: CBOR_MEDIA_TYPE });
  const watch: WatchCodec = {
    contentType: CBOR_SEQ_MEDIA_TYPE,
    idle: undefined,
    shareKey: 'cbor',
    event: (type, e, ctx) => cbor.encodeWatchEvent(type, ctx.view.obj(e.obj), ctx.kind.schema),
    initial: (c, ctx) => cbor.encodeWatchEvent('ADDED', ctx.view.obj(c.obj), ctx.kind.schema),
    bookmark: (b, ctx) => cbor.encodeWatchEvent('BOOKMARK', ctx.view.obj(plain(b) as Obj), ctx.kind.schema),
    error: (status) => cbor.encodeWatchEvent('ERROR', plain(status)),
  };
  const stream: StreamCodec = {
    media: 'cbor',
    contentType: CBOR_MEDIA_TYPE,
    sizedHead: false,
    spec: (ctx) => ({ media: 'cbor', listDef: `${ctx.kind.schema}List`, itemDef: ctx.kind.schema }),
    parts: (meta, ctx, count) => cbor.listParts(envelope(meta, ctx), `${ctx.kind.schema}List`, count),
    chunk: (items, spec, ctx) => {
      const objs = decodeStoredItems(items);
      return cbor.listItems(ctx.view.brand === 'svc' ? objs : objs.map(ctx.view.obj), spec.itemDef);
    },
  };
  return {
    binary: true,
    object: (input, ctx) => answer(cbor.encode(objectOf(input, ctx.view), ctx.kind.schema)),
    list: (meta, items, ctx) =>
      answer(cbor.encode({ ...envelope(meta, ctx), items: objectsOf(items, ctx.view) }, `${ctx.kind.schema}List`)),
    value: (v, def) => answer(cbor.encode(v, def)),
    error: (status) => answer(cbor.encode(status)),
    watch,
    stream,
    decode(body, def) {
      try {
        return cbor.decode(bytesOf(body), def);
      } catch (e) {
        if (e instanceof CborError) throw badRequest(`the body of the request could not be decoded: ${e.message}`);
        throw e;
      }
    },
  };
}
