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
 */
import { svcApiVersion } from '../api/brand';
import type { SchemaSet } from '../schema/engine';
import type { DefName, Schema } from '../schema/types';
import { formatDuration, formatTime, parseDuration, parsedNanos, parseTime } from './go-time';
import { I32, I64, keyBytes, LEN, Reader, VARINT, Writer } from './protobuf-wire';

export { formatDuration, parseDuration } from './go-time';

/** The 4-byte prefix of every envelope. */
export const PROTOBUF_PREFIX: Readonly<Uint8Array> = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);
/** The media type of this project's protobuf encoding. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.svc.protobuf';
/** The media type unmodified upstream clients send and accept (same encoding). */
export const PROTOBUF_MEDIA_TYPE_UPSTREAM = 'application/vnd.kubernetes.protobuf';
/** What follows a list's items in its envelope (see ProtobufCodec.listHead): contentEncoding and contentType, empty. */
export const PROTOBUF_LIST_TAIL: Readonly<Uint8Array> = new Uint8Array([0x1a, 0x00, 0x22, 0x00]);

const STATUS_DEF = 'io.svc.apimachinery.pkg.apis.meta.v1.Status';
const META = 'io.svc.apimachinery.pkg.apis.meta.v1';
const APIEXT = 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1';

/** What a field's value is on the wire and in JSON. */
enum V {
  String,
  Bytes,
  Bool,
  /** int32, int64, uint32, uint64 (JSON number). */
  Varint,
  /** sint32, sint64 (zigzag). */
  ZigZag,
  Double,
  Float,
  Struct,
  /** A Go-inlined struct: a nested message whose fields live in the parent JSON object. */
  Inline,
  Time,
  MicroTime,
  Duration,
  IntOrString,
  Quantity,
  /** `{raw = 1}` holding JSON text: RawExtension, FieldsV1, apiextensions JSON. */
  RawJson,
  /** `{items = 1}`, repeated string, a JSON array: meta v1 Verbs, ExtraValue. */
  StringList,
  /** apiextensions JSONSchemaPropsOrArray `{schema = 1, jSONSchemas = 2}`: a JSON schema object or an array of them. */
  SchemaOrArray,
  /** apiextensions JSONSchemaPropsOrBool `{allows = 1, schema = 2}`: a JSON boolean or a schema object. */
  SchemaOrBool,
  /** apiextensions JSONSchemaPropsOrStringArray `{schema = 1, property = 2}`: a schema object or a string array. */
  SchemaOrStringArray,
}

enum Card {
  Single,
  Repeated,
  Map,
}

interface Field {
  /** JSON property name ('' for an Inline group). */
  name: string;
  tag: number;
  /** The field key's varint bytes for the wire type this field is written with. */
  key: Uint8Array;
  kind: V;
  card: Card;
  /** Struct / Inline message. */
  msg: Msg | null;
  /** Wire type a single value has (repeated scalars also accept LEN: packed). */
  wt: number;
  /** Scratch mark of writeSorted: the call that found this field present. */
  mark: number;
  /**
   * A scalar value field with omitempty (not keepZero, not required): Go writes it to protobuf
   * even when zero, and its JSON omits a zero, so the decoder leaves a zero out.
   */
  dropZero: boolean;
}

interface Msg {
  name: string;
  /** Fields by number, ascending. */
  fields: Field[];
  /** Fields by number (sparse). */
  byTag: (Field | undefined)[];
  /**
   * Position of each property in schema (Go struct) order, when decoding in field-number order
   * would not give that order.
   */
  order: Map<string, number> | null;
  /** The same order as a list of names (when `order` is set). */
  orderNames: string[];
  /** Fields by JSON name (not the Inline ones): encoding walks the object's own keys, usually far fewer than the fields. */
  byName: Map<string, Field>;
  /** The Inline fields (always written), by number. */
  inlines: Field[];
  /** Scalar fields written as their zero value when absent (ALWAYS_WRITTEN). */
  zeros: Set<Field> | null;
}

/**
 * Go value fields that the encoder writes even when the JSON object lacks them, by message. Go
 * writes every value field; elsewhere leaving a zero out decodes the same in Go and costs less,
 * but CRD schemas nest many empty schemas (`items: {}`, `properties: {x: {}}`) and are compared
 * byte for byte with the reference's encoding of them.
 */
const ALWAYS_WRITTEN: Record<string, readonly string[]> = {
  [`${APIEXT}.JSONSchemaProps`]: [
    'id',
    '$schema',
    'description',
    'type',
    'format',
    'title',
    'exclusiveMaximum',
    'exclusiveMinimum',
    'pattern',
    'uniqueItems',
    'nullable',
    'x-svc-embedded-resource',
    'x-svc-int-or-string',
  ],
};

/** Special messages, by (rebranded) message name. */
const SPECIAL: Record<string, V> = {
  [`${META}.Time`]: V.Time,
  [`${META}.MicroTime`]: V.MicroTime,
  [`${META}.Duration`]: V.Duration,
  [`${META}.FieldsV1`]: V.RawJson,
  [`${META}.Verbs`]: V.StringList,
  'io.svc.apimachinery.pkg.util.intstr.IntOrString': V.IntOrString,
  'io.svc.apimachinery.pkg.api.resource.Quantity': V.Quantity,
  'io.svc.apimachinery.pkg.api.resource.QuantityValue': V.Quantity,
  'io.svc.apimachinery.pkg.runtime.RawExtension': V.RawJson,
  [`${APIEXT}.JSON`]: V.RawJson,
  'io.svc.api.authentication.v1.ExtraValue': V.StringList,
  'io.svc.api.authentication.v1.AttestationValue': V.StringList,
  'io.svc.api.authorization.v1.ExtraValue': V.StringList,
  [`${APIEXT}.JSONSchemaPropsOrArray`]: V.SchemaOrArray,
  [`${APIEXT}.JSONSchemaPropsOrBool`]: V.SchemaOrBool,
  [`${APIEXT}.JSONSchemaPropsOrStringArray`]: V.SchemaOrStringArray,
};

/** The kinds whose message wraps a JSONSchemaProps. */
function wrapsSchema(kind: V): boolean {
  return kind === V.SchemaOrArray || kind === V.SchemaOrBool || kind === V.SchemaOrStringArray;
}

/** Seconds of Go's zero time (0001-01-01T00:00:00Z) since the Unix epoch. */
const ZERO_TIME_SECONDS = -62135596800;

type Json = Record<string, unknown>;

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** Go's string order (UTF-8 bytes), which differs from UTF-16 code units only around surrogates. */
function goCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after U+E000–U+FFFF in UTF-8.
    if (x >= 0xd800 && x < 0xe000) x += 0x2000;
    else if (x >= 0xe000) x -= 0x800;
    if (y >= 0xd800 && y < 0xe000) y += 0x2000;
    else if (y >= 0xe000) y -= 0x800;
    return x - y;
  }
  return a.length - b.length;
}

const textDecoder = new TextDecoder();

// ---------------------------------------------------------------------------------------------
// The codec
// ---------------------------------------------------------------------------------------------

/** Wire type a single value of `kind` is written with. */
function wireType(kind: V): number {
  switch (kind) {
    case V.Bool:
    case V.Varint:
    case V.ZigZag:
      return VARINT;
    case V.Double:
      return I64;
    case V.Float:
      return I32;
    default:
      return LEN;
  }
}

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

export class ProtobufCodec {
  private readonly msgs = new Map<DefName, Msg>();
  private readonly w = new Writer();
  /** Counter for Field.mark. */
  private marks = 0;
  /** Envelopes being decoded inside RawExtensions (bounded). */
  private embedded = 0;
  /** Definition name by `apiVersion/kind` (the kinds' gvk), for envelopes inside RawExtensions. */
  private gvkIndex: Map<string, DefName> | null = null;

  constructor(private readonly schemas: SchemaSet) {}

  /** Whether `defName` has a protobuf encoding (a reference .proto message). */
  supports(defName: DefName): boolean {
    const d = this.schemas.get(defName);
    return d !== undefined && d.type === 'object' && d.protoMessage !== undefined;
  }

  /** The envelope of `obj` (a JSON object of definition `defName`). */
  encode(obj: object, defName: DefName): Uint8Array {
    const w = this.w;
    w.reset();
    this.writeEnvelope(obj as Json, defName, undefined);
    return w.take();
  }

  /** The envelope of a meta v1 Status (apiVersion v1, kind Status unless `status` says otherwise). */
  encodeStatus(status: object): Uint8Array {
    const w = this.w;
    w.reset();
    this.writeEnvelope(status as Json, STATUS_DEF, { apiVersion: 'v1', kind: 'Status' });
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
    const msg = this.msg(listDef);
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
    const msg = this.msg(listDef);
    const f = msg.byName.get('items');
    if (f === undefined) throw new Error(`protobuf: ${listDef} has no items`);
    const w = this.w;
    w.reset();
    this.writeField(msg, f, objs);
    return w.take();
  }

  /** The object's message alone (no prefix, no Unknown wrapper). */
  encodeMessage(obj: object, defName: DefName): Uint8Array {
    const w = this.w;
    w.reset();
    this.writeMessage(this.msg(defName), obj as Json);
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
    this.writeEnvelope(obj as Json, defName, defName === STATUS_DEF ? { apiVersion: 'v1', kind: 'Status' } : undefined);
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
    return this.readEnvelope(bytes).typeMeta;
  }

  /**
   * The JSON object of an envelope. `defName` is the expected definition; without it the
   * definition is found from the envelope's apiVersion and kind.
   */
  decode(bytes: Uint8Array, defName?: DefName): object {
    const env = this.readEnvelope(bytes);
    const tm = env.typeMeta;
    const msg = this.msg(defName ?? this.defOf(tm));
    const out: Json = {};
    if (tm.kind !== '') out.kind = tm.kind;
    if (tm.apiVersion !== '') out.apiVersion = tm.apiVersion;
    if (msg.order === null) {
      this.readFields(msg, env.r, out);
      return out;
    }
    const body = this.readMessage(msg, env.r, {});
    for (const k in body) out[k] = body[k];
    return out;
  }

  /** The JSON object of a bare message (no prefix, no Unknown wrapper). */
  decodeMessage(bytes: Uint8Array, defName: DefName): object {
    return this.readMessage(this.msg(defName), new Reader(bytes, 0, bytes.length), {});
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

  // -------------------------------------------------------------------------------------------
  // Envelope
  // -------------------------------------------------------------------------------------------

  private writeEnvelope(obj: Json, defName: DefName, fallback: TypeMeta | undefined): void {
    const msg = this.msg(defName);
    const tm = this.typeMetaFor(obj, defName, fallback);
    const w = this.w;
    w.ensure(4);
    w.buf.set(PROTOBUF_PREFIX, w.pos);
    w.pos += 4;
    w.byte(0x0a);
    const t = w.begin();
    w.byte(0x0a);
    w.string(tm.apiVersion);
    w.byte(0x12);
    w.string(tm.kind);
    w.end(t);
    w.byte(0x12);
    const raw = w.begin();
    this.writeMessage(msg, obj);
    w.end(raw);
    // contentEncoding and contentType, empty (Go writes its value fields always).
    w.ensure(4);
    w.buf[w.pos++] = 0x1a;
    w.buf[w.pos++] = 0;
    w.buf[w.pos++] = 0x22;
    w.buf[w.pos++] = 0;
  }

  private typeMetaFor(obj: Json, defName: DefName, fallback: TypeMeta | undefined): TypeMeta {
    let apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    let kind = typeof obj.kind === 'string' ? obj.kind : '';
    if (apiVersion === '' || kind === '') {
      let gv = fallback;
      if (!gv) {
        const d = this.schemas.get(defName);
        const g = d?.type === 'object' ? d.gvk?.[0] : undefined;
        if (g) gv = { apiVersion: g.group === '' ? g.version : `${g.group}/${g.version}`, kind: g.kind };
      }
      if (gv) {
        if (apiVersion === '') apiVersion = gv.apiVersion;
        if (kind === '') kind = gv.kind;
      }
    }
    return { apiVersion, kind };
  }

  /** The envelope's type and a reader positioned on its raw message. */
  private readEnvelope(bytes: Uint8Array): { typeMeta: TypeMeta; r: Reader } {
    if (bytes.length < 4 || bytes[0] !== 0x6b || bytes[1] !== 0x38 || bytes[2] !== 0x73 || bytes[3] !== 0x00) {
      const got = Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
      throw new Error(`protobuf: the body does not start with the envelope prefix 6b 38 73 00 (got ${got || 'nothing'})`);
    }
    const r = new Reader(bytes, 4, bytes.length);
    const typeMeta: TypeMeta = { apiVersion: '', kind: '' };
    let rawStart = 0;
    let rawEnd = 0;
    let contentEncoding = '';
    let contentType = '';
    while (r.pos < r.end) {
      const k = r.uvarint32();
      switch (k) {
        case 0x0a: {
          const n = r.len();
          const end = r.end;
          r.end = r.pos + n;
          while (r.pos < r.end) {
            const k2 = r.uvarint32();
            if (k2 === 0x0a) typeMeta.apiVersion = r.string();
            else if (k2 === 0x12) typeMeta.kind = r.string();
            else r.skip(k2 & 7, k2 >>> 3);
          }
          if (r.pos !== r.end) throw r.truncated();
          r.end = end;
          break;
        }
        case 0x12: {
          const n = r.len();
          rawStart = r.pos;
          rawEnd = r.pos + n;
          r.pos = rawEnd;
          break;
        }
        case 0x1a:
          contentEncoding = r.string();
          break;
        case 0x22:
          contentType = r.string();
          break;
        default:
          r.skip(k & 7, k >>> 3);
      }
    }
    if (contentEncoding !== '') throw new Error(`protobuf: unsupported content encoding ${JSON.stringify(contentEncoding)}`);
    if (contentType !== '' && contentType !== PROTOBUF_MEDIA_TYPE && contentType !== PROTOBUF_MEDIA_TYPE_UPSTREAM) {
      throw new Error(`protobuf: unsupported content type ${JSON.stringify(contentType)} in the envelope`);
    }
    r.pos = rawStart;
    r.end = rawEnd;
    return { typeMeta, r };
  }

  private defOf(tm: TypeMeta): DefName {
    if (!this.gvkIndex) {
      const idx = new Map<string, DefName>();
      // SchemaSet has no public listing: its definitions record is read directly (empty if absent).
      const all = (this.schemas as unknown as { defs?: Record<DefName, Schema> }).defs ?? {};
      for (const name in all) {
        const d = all[name]!;
        if (d.type !== 'object' || !d.gvk || d.protoMessage === undefined) continue;
        for (const g of d.gvk) {
          const key = `${g.group === '' ? g.version : `${g.group}/${g.version}`}/${g.kind}`;
          if (!idx.has(key)) idx.set(key, name);
        }
      }
      this.gvkIndex = idx;
    }
    // The index holds svc group names; an envelope may name the upstream group (the reference's clients).
    const def = this.gvkIndex.get(`${svcApiVersion(tm.apiVersion)}/${tm.kind}`);
    if (!def)
      throw new Error(`protobuf: no protobuf definition for apiVersion ${JSON.stringify(tm.apiVersion)}, kind ${JSON.stringify(tm.kind)}`);
    return def;
  }

  // -------------------------------------------------------------------------------------------
  // Compilation
  // -------------------------------------------------------------------------------------------

  private msg(defName: DefName): Msg {
    const m = this.msgs.get(defName);
    if (m) return m;
    const def = this.schemas.get(defName);
    if (!def) throw new Error(`protobuf: unknown definition ${defName}`);
    const s = this.schemas.resolve(def);
    if (s.type !== 'object' || s.protoMessage === undefined || !s.properties) {
      throw new Error(`protobuf: ${defName} has no protobuf encoding`);
    }
    const msg: Msg = { name: defName, fields: [], byTag: [], order: null, orderNames: [], byName: new Map(), inlines: [], zeros: null };
    // Register first: recursive messages close the loop.
    this.msgs.set(defName, msg);
    try {
      this.fill(defName, s.properties, s.required ?? [], msg);
      const always = ALWAYS_WRITTEN[defName];
      if (always) msg.zeros = new Set(always.map((n) => msg.byName.get(n)!));
    } catch (e) {
      this.msgs.delete(defName);
      throw e;
    }
    return msg;
  }

  private fill(defName: DefName, properties: Record<string, Schema>, required: readonly string[], msg: Msg): void {
    const groups = new Map<string, Msg>();
    const group = (path: number[]): Msg => {
      if (path.length === 0) return msg;
      const key = path.join('.');
      let g = groups.get(key);
      if (g) return g;
      g = { name: `${defName}.${key}`, fields: [], byTag: [], order: null, orderNames: [], byName: new Map(), inlines: [], zeros: null };
      groups.set(key, g);
      const parent = group(path.slice(0, -1));
      const tag = path[path.length - 1]!;
      addField(parent, {
        name: '',
        tag,
        key: keyBytes(tag, LEN),
        kind: V.Inline,
        card: Card.Single,
        msg: g,
        wt: LEN,
        mark: 0,
        dropZero: false,
      });
      return g;
    };
    const addField = (m: Msg, f: Field) => {
      if (m.byTag[f.tag]) throw new Error(`protobuf: ${defName}: field number ${f.tag} used twice`);
      m.byTag[f.tag] = f;
      m.fields.push(f);
    };
    const names: string[] = [];
    for (const name in properties) {
      const p = properties[name]!;
      const path = p.protoTag !== undefined ? [p.protoTag] : p.protoPath;
      if (!path || path.length === 0) continue;
      names.push(name);
      const tag = path[path.length - 1]!;
      addField(group(path.slice(0, -1)), this.field(defName, name, p, tag, required.includes(name)));
    }
    const sortFields = (m: Msg): string[] => {
      m.fields.sort((a, b) => a.tag - b.tag);
      for (const f of m.fields) {
        if (f.kind === V.Inline) m.inlines.push(f);
        else m.byName.set(f.name, f);
      }
      const wire: string[] = [];
      for (const f of m.fields) {
        if (f.kind === V.Inline) wire.push(...sortFields(f.msg!));
        else wire.push(f.name);
      }
      return wire;
    };
    const wire = sortFields(msg);
    if (wire.some((n, i) => n !== names[i])) {
      msg.order = new Map(names.map((n, i) => [n, i]));
      msg.orderNames = names;
    }
  }

  private field(defName: DefName, name: string, p: Schema, tag: number, required: boolean): Field {
    const where = `${defName}.${name}`;
    let card = Card.Single;
    let value: Schema = p;
    if (p.type === 'array') {
      card = Card.Repeated;
      value = p.items;
    } else if (p.type === 'object' && !p.properties && p.additionalProperties) {
      card = Card.Map;
      value = p.additionalProperties;
    }
    const pt = p.protoType;
    let kind: V;
    let msg: Msg | null = null;
    switch (pt) {
      case 'string':
        kind = V.String;
        break;
      case 'bytes':
        kind = V.Bytes;
        break;
      case 'bool':
        kind = V.Bool;
        break;
      case 'int32':
      case 'int64':
      case 'uint32':
      case 'uint64':
        kind = V.Varint;
        break;
      case 'sint32':
      case 'sint64':
        kind = V.ZigZag;
        break;
      case 'double':
        kind = V.Double;
        break;
      case 'float':
        kind = V.Float;
        break;
      case 'message': {
        const special = SPECIAL[p.protoMessage ?? ''];
        if (special !== undefined) {
          kind = special;
          // A named []string wrapped in a message: the JSON array is one message, not repeated.
          if (special === V.StringList && card === Card.Repeated) card = Card.Single;
          if (wrapsSchema(special)) msg = this.msg(`${APIEXT}.JSONSchemaProps`);
          break;
        }
        kind = V.Struct;
        const ref = value.type === 'ref' ? value.ref : undefined;
        const target = ref ?? p.protoMessage;
        if (!target) throw new Error(`protobuf: ${where}: no message for a message field`);
        msg = this.msg(target);
        break;
      }
      default:
        throw new Error(`protobuf: ${where}: no protoType`);
    }
    const wt = wireType(kind);
    const scalar = kind <= V.Float;
    const dropZero = scalar && card === Card.Single && !required && p.keepZero !== true;
    return { name, tag, key: keyBytes(tag, card === Card.Map ? LEN : wt), kind, card, msg, wt, mark: 0, dropZero };
  }

  // -------------------------------------------------------------------------------------------
  // Encoding
  // -------------------------------------------------------------------------------------------

  private writeMessage(msg: Msg, obj: Json): void {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      throw new Error(`protobuf: ${msg.name}: expected an object, got ${describe(obj)}`);
    }
    const byName = msg.byName;
    const w = this.w;
    if (msg.inlines.length === 0 && msg.order === null && msg.zeros === null) {
      // The object's keys, usually in field-number order already (schema order is field-number
      // order here); if not, start again sorted.
      const start = w.pos;
      let last = 0;
      for (const k in obj) {
        const f = byName.get(k);
        if (f === undefined) continue;
        if (f.tag < last) {
          w.pos = start;
          this.writeSorted(msg, obj);
          return;
        }
        last = f.tag;
        const v = obj[k];
        if (v !== undefined && v !== null) this.writeField(msg, f, v);
      }
      return;
    }
    this.writeSorted(msg, obj);
  }

  /** The fields present in `obj` and the inlined structs, by number. */
  private writeSorted(msg: Msg, obj: Json): void {
    const byName = msg.byName;
    // Mark the fields present (a number unique to this call), then collect them in field order
    // before writing anything (writing may recurse into this same message type).
    const mark = ++this.marks;
    for (const k in obj) {
      const f = byName.get(k);
      if (f === undefined) continue;
      const v = obj[k];
      if (v !== undefined && v !== null) f.mark = mark;
    }
    const fields = msg.fields;
    const present: Field[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.mark === mark || f.kind === V.Inline || msg.zeros?.has(f)) present.push(f);
    }
    const w = this.w;
    for (let i = 0; i < present.length; i++) {
      const f = present[i]!;
      if (f.kind === V.Inline) {
        // Go always writes an inlined (embedded value) struct.
        w.key(f.key);
        const start = w.begin();
        this.writeMessage(f.msg!, obj);
        w.end(start);
      } else this.writeField(msg, f, f.mark === mark ? obj[f.name] : null);
    }
  }

  private writeField(msg: Msg, f: Field, v: unknown): void {
    if (f.card === Card.Single) {
      this.writeValue(f, f.key, v);
    } else if (f.card === Card.Repeated) {
      if (!Array.isArray(v)) throw new Error(`protobuf: ${msg.name}.${f.name}: expected an array, got ${describe(v)}`);
      for (let j = 0; j < v.length; j++) this.writeValue(f, f.key, v[j]);
    } else {
      this.writeMap(msg, f, v);
    }
  }

  /** Key and value of one occurrence of field `f` (null: the zero value). */
  private writeValue(f: Field, key: Uint8Array, v: unknown): void {
    const w = this.w;
    switch (f.kind) {
      case V.String:
        if (typeof v !== 'string') {
          if (v !== null) throw this.typeError(f, 'string', v);
          v = '';
        }
        w.key(key);
        w.string(v as string);
        return;
      case V.Bool:
        if (typeof v !== 'boolean') {
          if (v !== null) throw this.typeError(f, 'boolean', v);
          v = false;
        }
        w.key(key);
        w.byte(v ? 1 : 0);
        return;
      case V.Varint:
        if (typeof v !== 'number' || !Number.isInteger(v)) {
          if (v !== null) throw this.typeError(f, 'integer', v);
          v = 0;
        }
        w.key(key);
        w.varint(v as number);
        return;
      case V.Struct:
        w.key(key);
        {
          const start = w.begin();
          if (v !== null) this.writeMessage(f.msg!, v as Json);
          w.end(start);
        }
        return;
      default:
        w.key(key);
        this.writeOther(f, v);
    }
  }

  /** The value (after its key) of the less common kinds. */
  private writeOther(f: Field, v: unknown): void {
    const w = this.w;
    switch (f.kind) {
      case V.Bytes:
        if (typeof v !== 'string') {
          if (v !== null) throw this.typeError(f, 'base64 string', v);
          v = '';
        }
        w.bytes(Buffer.from(v as string, 'base64'));
        return;
      case V.ZigZag: {
        if (typeof v !== 'number' || !Number.isInteger(v)) {
          if (v !== null) throw this.typeError(f, 'integer', v);
          v = 0;
        }
        const n = v as number;
        w.varint(n >= 0 ? n * 2 : -n * 2 - 1);
        return;
      }
      case V.Double:
        if (typeof v !== 'number') throw this.typeError(f, 'number', v);
        w.double(v);
        return;
      case V.Float:
        if (typeof v !== 'number') throw this.typeError(f, 'number', v);
        w.float(v);
        return;
      case V.Time:
      case V.MicroTime: {
        const start = w.begin();
        if (typeof v === 'string') {
          const secs = parseTime(v, f.name);
          // Time drops sub-second precision; MicroTime keeps microseconds. The zero time is empty.
          const ns = f.kind === V.Time ? 0 : parsedNanos - (parsedNanos % 1000);
          if (secs !== ZERO_TIME_SECONDS || ns !== 0) {
            w.byte(0x08);
            w.varint(secs);
            w.byte(0x10);
            w.varint(ns);
          }
        } else if (v !== null) throw this.typeError(f, 'RFC 3339 string', v);
        w.end(start);
        return;
      }
      case V.Duration: {
        if (typeof v !== 'string') throw this.typeError(f, 'duration string', v);
        const start = w.begin();
        w.byte(0x08);
        w.varint(parseDuration(v, f.name));
        w.end(start);
        return;
      }
      case V.IntOrString: {
        const start = w.begin();
        if (typeof v === 'number') {
          if (!Number.isInteger(v)) throw this.typeError(f, 'integer or string', v);
          w.byte(0x08);
          w.byte(0);
          w.byte(0x10);
          w.varint(v);
          w.byte(0x1a);
          w.byte(0);
        } else if (typeof v === 'string') {
          w.byte(0x08);
          w.byte(1);
          w.byte(0x10);
          w.byte(0);
          w.byte(0x1a);
          w.string(v);
        } else if (v === null) {
          w.byte(0x08);
          w.byte(0);
          w.byte(0x10);
          w.byte(0);
          w.byte(0x1a);
          w.byte(0);
        } else throw this.typeError(f, 'integer or string', v);
        w.end(start);
        return;
      }
      case V.Quantity: {
        const start = w.begin();
        w.byte(0x0a);
        if (typeof v === 'string') w.string(v);
        else if (typeof v === 'number') w.string(String(v));
        else if (v === null) w.string('0');
        else throw this.typeError(f, 'quantity string', v);
        w.end(start);
        return;
      }
      case V.RawJson: {
        const start = w.begin();
        if (v !== null && v !== undefined) {
          w.byte(0x0a);
          w.string(JSON.stringify(v));
        }
        w.end(start);
        return;
      }
      case V.SchemaOrArray:
      case V.SchemaOrBool:
      case V.SchemaOrStringArray: {
        const start = w.begin();
        this.writeSchemaOr(f, v);
        w.end(start);
        return;
      }
      case V.StringList: {
        if (!Array.isArray(v)) throw this.typeError(f, 'array', v);
        const start = w.begin();
        for (const s of v) {
          w.byte(0x0a);
          w.string(typeof s === 'string' ? s : s === null ? '' : String(s));
        }
        w.end(start);
        return;
      }
      default:
        throw new Error(`protobuf: ${f.name}: cannot encode kind ${V[f.kind]}`);
    }
  }

  /**
   * The body of a JSONSchemaPropsOr* message, as the reference's Go types hold the JSON: an object
   * is the schema (OrBool: `allows` true with it); an array is the list of schemas or of property
   * names; a boolean is OrBool's `allows` alone. `allows` is a Go value field, always written.
   */
  private writeSchemaOr(f: Field, v: unknown): void {
    const w = this.w;
    const schema = (tag: number, s: unknown) => {
      w.byte((tag << 3) | LEN);
      const start = w.begin();
      this.writeMessage(f.msg!, s as Json);
      w.end(start);
    };
    const isObject = typeof v === 'object' && v !== null && !Array.isArray(v);
    if (f.kind === V.SchemaOrBool) {
      if (typeof v !== 'boolean' && !isObject) throw this.typeError(f, 'boolean or object', v);
      w.byte(0x08);
      w.byte(isObject || v === true ? 1 : 0);
      if (isObject) schema(2, v);
      return;
    }
    if (isObject) {
      schema(1, v);
      return;
    }
    if (!Array.isArray(v)) throw this.typeError(f, f.kind === V.SchemaOrArray ? 'object or array' : 'object or string array', v);
    for (const item of v) {
      if (f.kind === V.SchemaOrArray) schema(2, item);
      else {
        if (typeof item !== 'string') throw this.typeError(f, 'string array', v);
        w.byte(0x12);
        w.string(item);
      }
    }
  }

  private writeMap(msg: Msg, f: Field, v: unknown): void {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new Error(`protobuf: ${msg.name}.${f.name}: expected an object, got ${describe(v)}`);
    }
    const m = v as Json;
    const keys = Object.keys(m);
    for (let i = 1; i < keys.length; i++) {
      if (goCompare(keys[i - 1]!, keys[i]!) > 0) {
        keys.sort(goCompare);
        break;
      }
    }
    const w = this.w;
    // The value's key is field 2 with the value's wire type.
    const valueKey = (2 << 3) | f.wt;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      w.key(f.key);
      const start = w.begin();
      w.byte(0x0a);
      w.string(k);
      const val = m[k];
      if (f.kind === V.String) {
        w.byte(valueKey);
        w.string(typeof val === 'string' ? val : val === null || val === undefined ? '' : String(val));
      } else {
        this.writeValue(f, VALUE_KEYS[f.wt]!, val === undefined ? null : val);
      }
      w.end(start);
    }
  }

  private typeError(f: Field, want: string, got: unknown): Error {
    return new Error(`protobuf: field ${f.name}: expected ${want}, got ${describe(got)}`);
  }

  // -------------------------------------------------------------------------------------------
  // Decoding
  // -------------------------------------------------------------------------------------------

  /** Decodes the message in `r` (up to r.end) into `out`; returns it (reordered when needed). */
  private readMessage(msg: Msg, r: Reader, out: Json): Json {
    this.readFields(msg, r, out);
    const order = msg.order;
    if (order === null) return out;
    // Usually few of the fields are present, often already in order.
    let last = -1;
    let sorted = true;
    for (const k in out) {
      const i = order.get(k) ?? -1;
      if (i < last) {
        sorted = false;
        break;
      }
      last = i;
    }
    if (sorted) return out;
    const keys = Object.keys(out);
    const res: Json = {};
    if (keys.length * 4 > order.size) {
      // Many fields: walk the schema order.
      const names = msg.orderNames;
      for (let i = 0; i < names.length; i++) {
        const k = names[i]!;
        const v = out[k];
        if (v !== undefined) res[k] = v;
      }
      return res;
    }
    keys.sort((a, b) => (order.get(a) ?? -1) - (order.get(b) ?? -1));
    for (const k of keys) res[k] = out[k];
    return res;
  }

  private readFields(msg: Msg, r: Reader, out: Json): void {
    const byTag = msg.byTag;
    while (r.pos < r.end) {
      const key = r.uvarint32();
      const tag = key >>> 3;
      const wt = key & 7;
      const f = tag < byTag.length ? byTag[tag] : undefined;
      if (f === undefined) {
        if (tag === 0) throw new Error(`protobuf: ${msg.name}: invalid field number 0`);
        r.skip(wt, tag);
        continue;
      }
      if (f.card === Card.Single) {
        if (f.kind === V.Inline) {
          if (wt !== LEN) throw this.wireError(msg, f, wt);
          const n = r.len();
          const end = r.end;
          r.end = r.pos + n;
          this.readFields(f.msg!, r, out);
          r.end = end;
          continue;
        }
        if (wt !== f.wt) throw this.wireError(msg, f, wt);
        if (f.kind === V.Struct) {
          // A repeated occurrence of a message field merges into the first.
          const prev = out[f.name];
          out[f.name] = this.readSub(f.msg!, r, typeof prev === 'object' && prev !== null ? (prev as Json) : {});
        } else {
          const v = this.readValue(f, r);
          if (v === undefined || (f.dropZero && (v === '' || v === 0 || v === false))) delete out[f.name];
          else out[f.name] = v;
        }
      } else if (f.card === Card.Repeated) {
        let arr = out[f.name] as unknown[] | undefined;
        if (arr === undefined) {
          arr = [];
          out[f.name] = arr;
        }
        if (wt === f.wt) {
          arr.push(f.kind === V.Struct ? this.readSub(f.msg!, r, {}) : this.readItem(f, r));
        } else if (wt === LEN && f.wt !== LEN) {
          // Packed scalars.
          const n = r.len();
          const end = r.end;
          r.end = r.pos + n;
          while (r.pos < r.end) arr.push(this.readItem(f, r));
          r.end = end;
        } else throw this.wireError(msg, f, wt);
      } else {
        if (wt !== LEN) throw this.wireError(msg, f, wt);
        let m = out[f.name] as Json | undefined;
        if (m === undefined) {
          m = {};
          out[f.name] = m;
        }
        this.readEntry(msg, f, r, m);
      }
    }
    if (r.pos > r.end) throw r.truncated();
  }

  private readSub(msg: Msg, r: Reader, into: Json): Json {
    const n = r.len();
    const end = r.end;
    r.end = r.pos + n;
    const v = this.readMessage(msg, r, into);
    r.end = end;
    return v;
  }

  /** A repeated item: never undefined (a zero time in a list is kept as null). */
  private readItem(f: Field, r: Reader): unknown {
    const v = this.readValue(f, r);
    return v === undefined ? null : v;
  }

  /** One value of field `f` (not Struct/Inline); undefined when Go's JSON would have null. */
  private readValue(f: Field, r: Reader): unknown {
    switch (f.kind) {
      case V.String:
        return r.string();
      case V.Bool:
        return r.varint() !== 0;
      case V.Varint:
        return r.varint();
      case V.Struct:
        return this.readSub(f.msg!, r, {});
      case V.Bytes:
        return Buffer.from(r.bytes()).toString('base64');
      case V.ZigZag: {
        const n = r.varint();
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      case V.Double:
        return r.double();
      case V.Float:
        return r.float();
      default:
        return this.readSpecial(f, r);
    }
  }

  private readSpecial(f: Field, r: Reader): unknown {
    const n = r.len();
    const outer = r.end;
    r.end = r.pos + n;
    const v = this.readSpecialBody(f, r, n);
    if (r.pos !== r.end) throw r.truncated();
    r.end = outer;
    return v;
  }

  /** The body of a special message (r.end is its end; r.pos ends there). */
  private readSpecialBody(f: Field, sub: Reader, n: number): unknown {
    switch (f.kind) {
      case V.Time:
      case V.MicroTime: {
        if (n === 0) return undefined;
        let secs = 0;
        let nanos = 0;
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x08) secs = sub.varint();
          else if (k === 0x10) nanos = sub.varint() | 0;
          else sub.skip(k & 7, k >>> 3);
        }
        // Go's zero time marshals to JSON null.
        if (secs === ZERO_TIME_SECONDS && nanos === 0) return undefined;
        return formatTime(secs, nanos, f.kind === V.MicroTime);
      }
      case V.Duration: {
        let ns = 0;
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x08) ns = sub.varint();
          else sub.skip(k & 7, k >>> 3);
        }
        return formatDuration(ns);
      }
      case V.IntOrString: {
        let type = 0;
        let intVal = 0;
        let strVal = '';
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x08) type = sub.varint();
          else if (k === 0x10) intVal = sub.varint() | 0;
          else if (k === 0x1a) strVal = sub.string();
          else sub.skip(k & 7, k >>> 3);
        }
        return type === 1 ? strVal : intVal;
      }
      case V.Quantity: {
        let s = '';
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x0a) s = sub.string();
          else sub.skip(k & 7, k >>> 3);
        }
        return s === '' ? '0' : s;
      }
      case V.RawJson: {
        let raw: Uint8Array | null = null;
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x0a) raw = sub.bytes();
          else sub.skip(k & 7, k >>> 3);
        }
        if (raw === null) return undefined;
        if (raw.length >= 4 && raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0x00) {
          if (this.embedded >= 8) throw new Error('protobuf: envelopes nested too deeply');
          this.embedded++;
          try {
            return this.decode(raw);
          } finally {
            this.embedded--;
          }
        }
        const text = textDecoder.decode(raw);
        try {
          return JSON.parse(text);
        } catch {
          throw new Error(`protobuf: field ${f.name}: raw value is neither JSON nor a protobuf envelope`);
        }
      }
      case V.StringList: {
        const out: string[] = [];
        while (sub.pos < sub.end) {
          const k = sub.uvarint32();
          if (k === 0x0a) out.push(sub.string());
          else sub.skip(k & 7, k >>> 3);
        }
        return out;
      }
      case V.SchemaOrArray:
      case V.SchemaOrBool:
      case V.SchemaOrStringArray:
        return this.readSchemaOr(f, sub);
      default:
        throw new Error(`protobuf: field ${f.name}: cannot decode kind ${V[f.kind]}`);
    }
  }

  /** The JSON form of a JSONSchemaPropsOr* body: the schema if present, else the list (or OrBool's `allows`). */
  private readSchemaOr(f: Field, sub: Reader): unknown {
    const schemaTag = f.kind === V.SchemaOrBool ? 2 : 1;
    let schema: Json | undefined;
    let allows = false;
    const list: unknown[] = [];
    while (sub.pos < sub.end) {
      const k = sub.uvarint32();
      const tag = k >>> 3;
      if (tag === schemaTag && (k & 7) === LEN) schema = this.readSub(f.msg!, sub, {});
      else if (f.kind === V.SchemaOrBool && k === 0x08) allows = sub.varint() !== 0;
      else if (f.kind === V.SchemaOrArray && k === 0x12) list.push(this.readSub(f.msg!, sub, {}));
      else if (f.kind === V.SchemaOrStringArray && k === 0x12) list.push(sub.string());
      else sub.skip(k & 7, tag);
    }
    if (schema !== undefined) return schema;
    return f.kind === V.SchemaOrBool ? allows : list;
  }

  private readEntry(msg: Msg, f: Field, r: Reader, into: Json): void {
    const n = r.len();
    const end = r.end;
    r.end = r.pos + n;
    let key = '';
    let value: unknown;
    while (r.pos < r.end) {
      const k = r.uvarint32();
      if (k === 0x0a) key = r.string();
      else if (k >>> 3 === 2) {
        if ((k & 7) !== f.wt) throw this.wireError(msg, f, k & 7);
        value = f.kind === V.Struct ? this.readSub(f.msg!, r, {}) : this.readValue(f, r);
      } else r.skip(k & 7, k >>> 3);
    }
    if (r.pos !== r.end) throw r.truncated();
    r.end = end;
    into[key] = value === undefined ? zero(f) : value;
  }

  private wireError(msg: Msg, f: Field, wt: number): Error {
    return new Error(`protobuf: ${msg.name}: field ${f.name || '(inlined)'} = ${f.tag} has wire type ${wt}, want ${f.wt}`);
  }
}

/** Keys of a map entry's value (field 2) by wire type. */
const VALUE_KEYS: Uint8Array[] = [0, 1, 2, 3, 4, 5].map((wt) => keyBytes(2, wt));

/** A map value absent from its entry: Go's zero value in JSON form. */
function zero(f: Field): unknown {
  switch (f.kind) {
    case V.String:
    case V.Bytes:
      return '';
    case V.Bool:
      return false;
    case V.Varint:
    case V.ZigZag:
    case V.Double:
    case V.Float:
    case V.IntOrString:
      return 0;
    case V.Quantity:
      return '0';
    case V.Struct:
      return {};
    case V.StringList:
      return [];
    default:
      return null;
  }
}
