/**
 * The Protobuf encoding of built-in kinds (spec 1-api-conventions, "Protobuf envelope"), byte for
 * byte as the reference (Go, gogo proto2) writes it, driven by the schema set: each property's
 * `protoTag` / `protoPath` (fields of Go-inlined structs), `protoType` and `protoMessage`.
 *
 * Envelope: the prefix `6b 38 73 00`, then a `runtime.Unknown` message:
 * `typeMeta {apiVersion = 1, kind = 2} = 1`, `raw = 2` (the object's message, which has no
 * apiVersion/kind of its own), `contentEncoding = 3`, `contentType = 4` (both written empty, as
 * the reference does).
 *
 * Wire facts the encoder follows (checked against the reference fixtures):
 *  - fields in field-number order; a Go-inlined struct is one nested message, always written;
 *  - repeated scalars unpacked (one key per item); the decoder also reads packed ones;
 *  - map entries `{key = 1, value = 2}` sorted by key (Go byte order), key and value always written;
 *  - Time and MicroTime as `{seconds = 1, nanos = 2}` (both always written; Time's nanos are 0,
 *    MicroTime's are truncated to microseconds; the zero time as an empty message);
 *  - IntOrString as `{type = 1, intVal = 2, strVal = 3}`, all three always written;
 *  - Quantity as `{string = 1}`; Duration as `{duration = 1}` (nanoseconds);
 *  - RawExtension, FieldsV1 and apiextensions JSON as `{raw = 1}` holding the JSON text;
 *  - meta v1 Verbs (a named []string) as `{items = 1}` (repeated).
 * An object's fields are written when present in the JSON object (a Go value field that is zero
 * and omitted from JSON is not written; a Go decoder reads both forms the same).
 *
 * Decoding gives the JSON form the API uses: Time → RFC 3339 seconds, MicroTime → RFC 3339 with
 * microseconds, IntOrString → number or string, Quantity → string, bytes → base64,
 * RawExtension → the parsed JSON value (or, when it holds an envelope, the decoded object), with
 * properties in schema (Go struct) order. Unknown field numbers are skipped. Go writes every value
 * field, set or not; a zero string/number/bool of a scalar field that is neither `keepZero` (Go
 * pointers, from the generator) nor required is left out, as Go's JSON encoding would omit it
 * (so `restartPolicy: ""` from a Go client stays absent and gets its default). Empty structs are
 * kept (`status: {}`), as Go's JSON writes them too; a zero Time is left out (Go: null).
 *
 * This file is the codec's public face (with the list and watch-stream framing); the parts are
 * ./protobuf-envelope (prefix, media types, the Unknown wrapper), ./protobuf-messages (descriptors
 * from the schema set), ./protobuf-encode, ./protobuf-decode and ../wire/protobuf.
 */
import type { SchemaSet } from '../schema/engine';
import type { DefName } from '../schema/types';
import { Reader, Writer } from '../wire/protobuf';
import { ProtobufDecoder } from './protobuf-decode';
import { ProtobufEncoder } from './protobuf-encode';
import { readEnvelope, type TypeMeta } from './protobuf-envelope';
import { Card, type Json, MessageTable } from './protobuf-messages';

export { formatDuration, parseDuration } from './go-time';
export {
  PROTOBUF_LIST_TAIL,
  PROTOBUF_MEDIA_TYPE,
  PROTOBUF_MEDIA_TYPE_UPSTREAM,
  PROTOBUF_PREFIX,
  type TypeMeta,
} from './protobuf-envelope';

const STATUS_DEF = 'io.svc.apimachinery.pkg.apis.meta.v1.Status';

export class ProtobufCodec {
  private readonly messages: MessageTable;
  private readonly w = new Writer();
  private readonly encoder: ProtobufEncoder;
  private readonly decoder: ProtobufDecoder;

  constructor(schemas: SchemaSet) {
    this.messages = new MessageTable(schemas);
    this.encoder = new ProtobufEncoder(this.messages, this.w);
    this.decoder = new ProtobufDecoder(this.messages);
  }

  /** Whether `defName` has a protobuf encoding (a reference .proto message). */
  supports(defName: DefName): boolean {
    const d = this.messages.schemas.get(defName);
    return d !== undefined && d.type === 'object' && d.protoMessage !== undefined;
  }

  /** The envelope of `obj` (a JSON object of definition `defName`). */
  encode(obj: object, defName: DefName): Uint8Array {
    const w = this.w;
    w.reset();
    this.encoder.writeEnvelope(obj as Json, defName, undefined);
    return w.take();
  }

  /** The envelope of a meta v1 Status (apiVersion v1, kind Status unless `status` says otherwise). */
  encodeStatus(status: object): Uint8Array {
    const w = this.w;
    w.reset();
    this.encoder.writeEnvelope(status as Json, STATUS_DEF, { apiVersion: 'v1', kind: 'Status' });
    return w.take();
  }

  /**
   * A long list written in parts (streamed): the envelope of `list` (its items left out) up to the
   * point where the items go, with the raw message's length counting `itemsLength` more bytes.
   * The stream is then `listHead` + `listItems` of every chunk of items + LIST_TAIL, the same bytes
   * as `encode` of the whole list. Items are the list message's last field in every list kind
   * (metadata = 1, items = 2); a list kind where they are not is refused here.
   */
  listHead(list: object, listDef: DefName, itemsLength: number): Uint8Array {
    const msg = this.messages.msg(listDef);
    const items = msg.byName.get('items');
    const lastTag = msg.fields[msg.fields.length - 1]?.tag;
    if (items === undefined || items.card !== Card.Repeated || items.tag !== lastTag)
      throw new Error(`protobuf: ${listDef} cannot be written in parts`);
    const whole = this.encode({ ...list, items: [] }, listDef);
    // prefix (4), 0a len typeMeta, 12 len raw, 1a 00 22 00
    const r = new Reader(whole, 4, whole.length);
    if (r.uvarint32() !== 0x0a) throw new Error('protobuf: unexpected envelope');
    const typeMetaLen = r.len();
    r.pos += typeMetaLen;
    const rawKey = r.pos;
    if (r.uvarint32() !== 0x12) throw new Error('protobuf: unexpected envelope');
    const rawLen = r.len();
    const body = whole.subarray(r.pos, r.pos + rawLen);
    const w = this.w;
    w.reset();
    w.ensure(rawKey + 11 + body.length);
    w.buf.set(whole.subarray(0, rawKey), 0);
    w.pos = rawKey;
    w.byte(0x12);
    w.uvarint(rawLen + itemsLength);
    w.buf.set(body, w.pos);
    w.pos += body.length;
    return w.take();
  }

  /** The items field entries of `objs` (items of list kind `listDef`), for `listHead`. */
  listItems(objs: readonly object[], listDef: DefName): Uint8Array {
    const msg = this.messages.msg(listDef);
    const f = msg.byName.get('items');
    if (f === undefined) throw new Error(`protobuf: ${listDef} has no items`);
    const w = this.w;
    w.reset();
    this.encoder.writeField(msg, f, objs);
    return w.take();
  }

  /** The object's message alone (no prefix, no Unknown wrapper). */
  encodeMessage(obj: object, defName: DefName): Uint8Array {
    const w = this.w;
    w.reset();
    this.encoder.writeMessage(this.messages.msg(defName), obj as Json);
    return w.take();
  }

  /**
   * One frame of a protobuf watch stream (`;stream=watch`): a 4-byte big-endian length, then a
   * meta v1 WatchEvent `{type = 1, object = 2}` (no prefix, no Unknown wrapper) whose
   * RawExtension holds the object's envelope. An ERROR event carries a Status (defName = the
   * Status definition, or use `encodeWatchStatus`).
   */
  encodeWatchEvent(type: string, obj: object, defName: DefName): Uint8Array {
    const w = this.w;
    w.reset();
    w.ensure(4);
    w.pos = 4;
    w.byte(0x0a);
    w.string(type);
    w.byte(0x12);
    const ext = w.begin();
    w.byte(0x0a);
    const raw = w.begin();
    this.encoder.writeEnvelope(obj as Json, defName, defName === STATUS_DEF ? { apiVersion: 'v1', kind: 'Status' } : undefined);
    w.end(raw);
    w.end(ext);
    const len = w.pos - 4;
    w.buf[0] = len >>> 24;
    w.buf[1] = (len >>> 16) & 0xff;
    w.buf[2] = (len >>> 8) & 0xff;
    w.buf[3] = len & 0xff;
    return w.take();
  }

  /** An ERROR watch event carrying a Status. */
  encodeWatchStatus(status: object): Uint8Array {
    return this.encodeWatchEvent('ERROR', status, STATUS_DEF);
  }

  /** apiVersion and kind of an envelope (checks the prefix). */
  typeMeta(bytes: Uint8Array): TypeMeta {
    return readEnvelope(bytes).typeMeta;
  }

  /**
   * The JSON object of an envelope. `defName` is the expected definition; without it the
   * definition is found from the envelope's apiVersion and kind.
   */
  decode(bytes: Uint8Array, defName?: DefName): object {
    return this.decoder.decode(bytes, defName);
  }

  /** The JSON object of a bare message (no prefix, no Unknown wrapper). */
  decodeMessage(bytes: Uint8Array, defName: DefName): object {
    return this.decoder.readMessage(this.messages.msg(defName), new Reader(bytes, 0, bytes.length), {});
  }

  /** Reads one frame of a watch stream written by encodeWatchEvent: {type, object} and the frame size. */
  decodeWatchEvent(bytes: Uint8Array, defName?: DefName): { type: string; object: object; size: number } {
    if (bytes.length < 4) throw new Error('protobuf: watch frame shorter than its length prefix');
    const len = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
    if (bytes.length < 4 + len) throw new Error('protobuf: watch frame cut short');
    const r = new Reader(bytes, 4, 4 + len);
    let type = '';
    let raw: Uint8Array | null = null;
    while (r.pos < r.end) {
      const k = r.uvarint32();
      if (k === 0x0a) type = r.string();
      else if (k === 0x12) {
        // RawExtension {raw = 1}.
        const n = r.len();
        const end = r.end;
        r.end = r.pos + n;
        while (r.pos < r.end) {
          const k2 = r.uvarint32();
          if (k2 === 0x0a) raw = r.bytes();
          else r.skip(k2 & 7, k2 >>> 3);
        }
        if (r.pos !== r.end) throw r.truncated();
        r.end = end;
      } else r.skip(k & 7, k >>> 3);
    }
    if (r.pos !== r.end) throw r.truncated();
    if (!raw) throw new Error('protobuf: watch event without an object');
    return { type, object: this.decode(raw, type === 'ERROR' ? STATUS_DEF : defName), size: 4 + len };
  }
}
