/**
 * Decoding of the protobuf codec (see ./protobuf): an envelope or bare message to the JSON form the
 * API uses, driven by the message descriptors of ./protobuf-messages.
 */
import type { DefName } from '../schema/types';
import { LEN, type Reader } from '../wire/protobuf';
import { formatDuration, formatTime } from './go-time';
import { readEnvelope } from './protobuf-envelope';
import { Card, type Field, type Json, type MessageTable, type Msg, V, ZERO_TIME_SECONDS } from './protobuf-messages';

const textDecoder = new TextDecoder();

/** Reads messages into JSON objects. */
export class ProtobufDecoder {
  /** Envelopes being decoded inside RawExtensions (bounded). */
  private embedded = 0;

  constructor(private readonly messages: MessageTable) {}

  /**
   * The JSON object of an envelope. `defName` is the expected definition; without it the
   * definition is found from the envelope's apiVersion and kind.
   */
  decode(bytes: Uint8Array, defName?: DefName): object {
    const env = readEnvelope(bytes);
    const tm = env.typeMeta;
    const msg = this.messages.msg(defName ?? this.messages.defOf(tm));
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

  /** Decodes the message in `r` (up to r.end) into `out`; returns it (reordered when needed). */
  readMessage(msg: Msg, r: Reader, out: Json): Json {
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
