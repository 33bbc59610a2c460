/**
 * Encoding of the protobuf codec (see ./protobuf): a JSON object to its envelope or bare message,
 * written into one reused Writer, driven by the message descriptors of ./protobuf-messages.
 */
import type { DefName } from '../schema/types';
import { keyBytes, LEN, type Writer } from '../wire/protobuf';
import { parseDuration, parsedNanos, parseTime } from './go-time';
import { PROTOBUF_PREFIX, type TypeMeta } from './protobuf-envelope';
import { Card, type Field, type Json, type MessageTable, type MessageWriter, type Msg, V, ZERO_TIME_SECONDS } from './protobuf-messages';

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

/** Keys of a map entry's value (field 2) by wire type. */
const VALUE_KEYS: Uint8Array[] = [0, 1, 2, 3, 4, 5].map((wt) => keyBytes(2, wt));

/**
 * A message's writer, compiled once (and kept on the message): its fields in number order, each
 * read from the object by its literal name, written when present (Go-inlined structs always, and
 * ALWAYS_WRITTEN fields as their zero when absent). Reading each field by name with the
 * property's inline cache, instead of walking the object's keys, looking each up in `byName` and
 * sorting the fields found, took a pod as the list bench stores it (2.5 KB of JSON, 1.5 KB of
 * protobuf) from 5.9-6.3 to 4.2-4.5 us (a scratch script, 2026-11-30); writing the common kinds
 * in the compiled code too (strings, booleans, integers, structs) instead of through writeField
 * made no difference.
 * Names are written as JSON string literals; a name Object.prototype also has is read only as
 * the object's own.
 */
function compileWriter(msg: Msg): MessageWriter {
  const lines: string[] = ['let v, s;'];
  msg.fields.forEach((f, i) => {
    const F = `F[${i}]`;
    if (f.kind === V.Inline) {
      // Go always writes an inlined (embedded value) struct.
      lines.push(`w.key(${F}.key); s = w.begin(); enc.writeMessage(${F}.msg, obj); w.end(s);`);
      return;
    }
    const name = JSON.stringify(f.name);
    lines.push(f.name in Object.prototype ? `v = Object.hasOwn(obj, ${name}) ? obj[${name}] : undefined;` : `v = obj[${name}];`);
    const absent = msg.zeros?.has(f) ? ` else enc.writeField(M, ${F}, null);` : '';
    lines.push(`if (v !== undefined && v !== null) enc.writeField(M, ${F}, v);${absent}`);
  });
  const make = new Function('M', 'F', `return function write(enc, w, obj) {\n${lines.join('\n')}\n};`) as (
    m: Msg,
    f: Field[],
  ) => MessageWriter;
  const write = make(msg, msg.fields);
  msg.write = write;
  return write;
}

/** Writes messages into the Writer it is given (the codec's, reset by the caller). */
export class ProtobufEncoder {
  constructor(
    private readonly messages: MessageTable,
    private readonly w: Writer,
  ) {}

  writeEnvelope(obj: Json, defName: DefName, fallback: TypeMeta | undefined): void {
    const msg = this.messages.msg(defName);
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
        const d = this.messages.schemas.get(defName);
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

  writeMessage(msg: Msg, obj: Json): void {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      throw new Error(`protobuf: ${msg.name}: expected an object, got ${describe(obj)}`);
    }
    (msg.write ?? compileWriter(msg))(this, this.w, obj);
  }

  writeField(msg: Msg, f: Field, v: unknown): void {
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
          // A tree of objects (fieldsV1) written as its JSON directly; anything else stringified.
          const raw = typeof v === 'object' ? w.begin() : -1;
          if (raw >= 0 && w.objectTree(v as object)) w.end(raw);
          else {
            if (raw >= 0) w.pos = raw - 1;
            w.string(JSON.stringify(v));
          }
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
}
