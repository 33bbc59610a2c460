/**
 * CBOR (RFC 8949) as the reference writes and reads it (apimachinery's cbor serializer, behind the
 * CBORServingAndStorage gate). Objects stay JSON-shaped everywhere else in the server; this codec
 * converts at the edge, with the kind's schema for the one thing JSON cannot tell: which strings
 * are bytes.
 *
 * Writing (the reference's deterministic encode mode):
 *   - every data item is enclosed in the self-described CBOR tag 55799 (prefix d9 d9 f7);
 *   - strings and map keys are byte strings (major type 2), not text strings;
 *   - map keys (struct fields too) sorted bytewise by their encoding: shorter first, then by bytes;
 *   - integers as integers, other numbers as the shortest float that keeps the value;
 *   - `format: byte` fields (JSON base64) as tag 22 ("expected base64") around the raw bytes.
 *
 * Reading (the reference's decode mode): the self-described tag optional, any other tag's content
 * taken; text strings must be valid UTF-8; byte strings read as strings (base64 for byte fields);
 * duplicate map keys, non-string map keys, NaN/Inf, integers outside int64, more than 64 levels
 * of nesting or more than 1024 items in one array or map, and trailing bytes are refused.
 *
 *   encode({kind: 'ConfigMap', data: {a: 'b'}})  → d9d9f7 a2 44 64617461 a1 41 61 41 62 44 6b696e64 49 436f6e6669674d6170
 *                                                  ("data" sorts before "kind": same length, d < k)
 *
 * Why not cbor-x (the design card's package): it writes text strings and keeps insertion order,
 * silently keeps the last of duplicate keys and has no nesting or size limits, so neither
 * direction matches the reference's profile; the tests use it as an independent decoder of what
 * this codec writes.
 */
import type { SchemaSet } from '../schema/engine';
import type { Schema } from '../schema/types';

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
export const SELF_DESCRIBED = new Uint8Array([0xd9, 0xd9, 0xf7]);

/** The map key "items" (a byte string of 5) followed by an empty array: where a list's items go. */
const ITEMS_EMPTY = new Uint8Array([0x45, 0x69, 0x74, 0x65, 0x6d, 0x73, 0x80]);
const MAX_DEPTH = 64;
const MAX_ITEMS = 1024;
const TAG_BASE64 = 22;
/** Tags 21-23: "expected later encoding" of the byte string they enclose. */
const LATER_ENCODING: Record<number, BufferEncoding> = { 21: 'base64url', [TAG_BASE64]: 'base64', 23: 'hex' };

/** A malformed or refused CBOR input (the request's fault: 400). */
export class CborError extends Error {}

const enc = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Lax = new TextDecoder('utf-8');

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

class Out {
  buf = new Uint8Array(4096);
  pos = 0;

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
  }

  /** An initial byte with its argument (major type `major`, unsigned `n`). */
  head(major: number, n: number): void {
    this.ensure(9);
    const m = major << 5;
    const b = this.buf;
    if (n < 24) b[this.pos++] = m | n;
    else if (n < 0x100) {
      b[this.pos++] = m | 24;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos++] = m | 25;
      b[this.pos++] = n >>> 8;
      b[this.pos++] = n & 0xff;
    } else if (n < 0x100000000) {
      b[this.pos++] = m | 26;
      b[this.pos++] = n >>> 24;
      b[this.pos++] = (n >>> 16) & 0xff;
      b[this.pos++] = (n >>> 8) & 0xff;
      b[this.pos++] = n & 0xff;
    } else {
      b[this.pos++] = m | 27;
      const hi = Math.floor(n / 0x100000000);
      const lo = n >>> 0;
      for (const w of [hi, lo]) {
        b[this.pos++] = w >>> 24;
        b[this.pos++] = (w >>> 16) & 0xff;
        b[this.pos++] = (w >>> 8) & 0xff;
        b[this.pos++] = w & 0xff;
      }
    }
  }

  bytes(major: number, data: Uint8Array): void {
    this.head(major, data.length);
    this.ensure(data.length);
    this.buf.set(data, this.pos);
    this.pos += data.length;
  }

  /** A string as a byte string: ASCII written in place, anything else through TextEncoder. */
  str(v: string): void {
    const n = v.length;
    if (n < 64) {
      let ascii = true;
      for (let i = 0; i < n; i++) {
        if (v.charCodeAt(i) > 0x7f) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        this.head(2, n);
        this.ensure(n);
        const b = this.buf;
        let p = this.pos;
        for (let i = 0; i < n; i++) b[p++] = v.charCodeAt(i);
        this.pos = p;
        return;
      }
    }
    this.bytes(2, enc.encode(v));
  }

  take(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

/** Encoded map keys (byte strings), cached: the same few field names come back all the time. */
const keyCache = new Map<string, Uint8Array>();
function keyBytes(k: string): Uint8Array {
  let b = keyCache.get(k);
  if (b === undefined) {
    b = enc.encode(k);
    if (keyCache.size < 10_000) keyCache.set(k, b);
  }
  return b;
}

/** RFC 8949 4.2.1 order of byte-string keys: by encoded length, then bytewise. */
function compareKeys(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return 0;
}

const f32 = new Float32Array(1);

/** Half-precision bits of `v` when it is exact in float16, else -1. */
function float16Bits(v: number): number {
  f32[0] = v;
  if (f32[0] !== v) return -1;
  const bits = new Uint32Array(f32.buffer)[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const frac = bits & 0x7fffff;
  if (exp === 0 && frac === 0) return sign;
  const e = exp - 127 + 15;
  if (e >= 31) return -1;
  if (e <= 0) {
    // Subnormal half: the value must be a multiple of 2^-24.
    const shift = 14 - e;
    if (shift > 24) return -1;
    const m = frac | 0x800000;
    if (m & ((1 << shift) - 1)) return -1;
    return sign | (m >>> shift);
  }
  if (frac & 0x1fff) return -1;
  return sign | (e << 10) | (frac >>> 13);
}

function writeFloat(o: Out, v: number): void {
  if (!Number.isFinite(v)) throw new CborError(`cbor: unsupported value: ${v}`);
  o.ensure(9);
  const h = float16Bits(v);
  const view = new DataView(o.buf.buffer, o.buf.byteOffset);
  if (h >= 0) {
    o.buf[o.pos++] = 0xf9;
    view.setUint16(o.pos, h);
    o.pos += 2;
    return;
  }
  f32[0] = v;
  if (f32[0] === v) {
    o.buf[o.pos++] = 0xfa;
    view.setFloat32(o.pos, v);
    o.pos += 4;
    return;
  }
  o.buf[o.pos++] = 0xfb;
  view.setFloat64(o.pos, v);
  o.pos += 8;
}

export class CborCodec {
  constructor(private readonly schemas: SchemaSet) {}

  /** One data item in the self-described tag; `defName` tells which strings are bytes. */
  encode(value: unknown, defName?: string): Uint8Array {
    const o = new Out();
    o.ensure(3);
    o.buf.set(SELF_DESCRIBED, 0);
    o.pos = 3;
    this.write(o, value, defName ? this.schemas.get(defName) : undefined);
    return o.take();
  }

  /**
   * A long list written in parts (streamed): `list`'s encoding (its items left out) split where the
   * items go, with the items array's header for `count` items at the end of `head`. The stream is
   * `head` + `listItems` of every chunk + `tail`, the same bytes as `encode` of the whole list (a
   * CBOR array is counted in items, not bytes, so nothing waits for the items' sizes).
   */
  listParts(list: object, listDef: string, count: number): { head: Uint8Array; tail: Uint8Array } {
    const whole = this.encode({ ...list, items: [] }, listDef);
    // The key "items" (byte string of 5) and an empty array.
    const at = Buffer.from(whole.buffer, whole.byteOffset, whole.length).indexOf(ITEMS_EMPTY);
    if (at < 0) throw new Error(`cbor: ${listDef} has no items to write in parts`);
    const o = new Out();
    o.ensure(at + 6);
    o.buf.set(whole.subarray(0, at + 6), 0);
    o.pos = at + 6;
    o.head(4, count);
    return { head: o.take(), tail: whole.slice(at + 7) };
  }

  /** The items of a list written in parts (see listParts), each of definition `itemDef`. */
  listItems(objs: readonly unknown[], itemDef: string | undefined): Uint8Array {
    const o = new Out();
    const s = itemDef ? this.schemas.get(itemDef) : undefined;
    for (const v of objs) this.write(o, v, s);
    return o.take();
  }

  /**
   * A watch event of an `application/cbor-seq` stream: `{type, object}` in the self-described tag,
   * the object itself enclosed in its own tag (as the reference embeds the object's encoding).
   */
  encodeWatchEvent(type: string, obj: unknown, defName?: string): Uint8Array {
    const object = this.encode(obj, defName);
    const o = new Out();
    o.ensure(3);
    o.buf.set(SELF_DESCRIBED, 0);
    o.pos = 3;
    o.head(5, 2);
    o.bytes(2, keyBytes('type'));
    o.bytes(2, enc.encode(type));
    o.bytes(2, keyBytes('object'));
    o.ensure(object.length);
    o.buf.set(object, o.pos);
    o.pos += object.length;
    return o.take();
  }

  private write(o: Out, v: unknown, schema: Schema | undefined): void {
    const s = schema && this.resolve(schema);
    if (v === null || v === undefined) {
      o.ensure(1);
      o.buf[o.pos++] = 0xf6;
      return;
    }
    switch (typeof v) {
      case 'boolean':
        o.ensure(1);
        o.buf[o.pos++] = v ? 0xf5 : 0xf4;
        return;
      case 'number':
        if (Number.isSafeInteger(v)) {
          if (v >= 0) o.head(0, v);
          else o.head(1, -1 - v);
        } else writeFloat(o, v);
        return;
      case 'string':
        if (s?.type === 'string' && s.format === 'byte') {
          o.head(6, TAG_BASE64);
          o.bytes(2, Buffer.from(v, 'base64'));
        } else o.str(v);
        return;
      case 'object': {
        if (Array.isArray(v)) {
          o.head(4, v.length);
          const items = s?.type === 'array' ? s.items : undefined;
          for (const x of v) this.write(o, x, items);
          return;
        }
        const obj = v as Record<string, unknown>;
        const keys: { k: string; b: Uint8Array }[] = [];
        for (const k in obj) if (obj[k] !== undefined) keys.push({ k, b: keyBytes(k) });
        keys.sort((a, b) => compareKeys(a.b, b.b));
        o.head(5, keys.length);
        for (const { k, b } of keys) {
          o.bytes(2, b);
          this.write(o, obj[k], s && childSchema(s, k));
        }
        return;
      }
      default:
        throw new CborError(`cbor: unsupported type ${typeof v}`);
    }
  }

  private resolve(s: Schema): Schema | undefined {
    let cur: Schema | undefined = s;
    for (let i = 0; cur?.type === 'ref' && i < 8; i++) cur = this.schemas.get(cur.ref);
    return cur;
  }

  // -------------------------------------------------------------------------------------------
  // Reading
  // -------------------------------------------------------------------------------------------

  /** The JSON-shaped value of one CBOR data item (the whole input). Throws CborError. */
  decode(bytes: Uint8Array, defName?: string): unknown {
    const r = new Reader(bytes, this);
    const v = r.item(defName ? this.schemas.get(defName) : undefined, 0);
    if (r.pos !== bytes.length) {
      throw new CborError(`cbor: ${bytes.length - r.pos} bytes of extraneous data starting at index ${r.pos}`);
    }
    return v;
  }

  /** Every data item of a CBOR sequence (RFC 8742), as an `application/cbor-seq` watch writes them. */
  decodeSequence(bytes: Uint8Array): unknown[] {
    const r = new Reader(bytes, this);
    const out: unknown[] = [];
    while (r.pos < bytes.length) out.push(r.item(undefined, 0));
    return out;
  }

  /** @internal the schema a reader descends into. */
  schemaOf(s: Schema | undefined): Schema | undefined {
    return s && this.resolve(s);
  }
}

function childSchema(s: Schema, key: string): Schema | undefined {
  if (s.type !== 'object') return undefined;
  return s.properties?.[key] ?? s.additionalProperties;
}

class Reader {
  pos = 0;
  private readonly view: DataView;
  /** The input as a Buffer, for its latin1/utf8 slicing (no subarray per string). */
  private readonly buf: Buffer;

  constructor(
    private readonly b: Uint8Array,
    private readonly codec: CborCodec,
  ) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  /** A string of major type 2 or 3 with argument `n` as text; text strings must be valid UTF-8. */
  private text(major: number, n: number): string {
    if (n < 0) return text(this.stringBytes(major, n), major === 3);
    if (n === Number.POSITIVE_INFINITY) throw new CborError('cbor: string too long');
    this.need(n);
    const start = this.pos;
    const end = start + n;
    this.pos = end;
    const b = this.b;
    let ascii = true;
    for (let i = start; i < end; i++) {
      if ((b[i] as number) > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      if (n <= 32) {
        // Short ASCII (field names, most values): char codes straight from the input.
        let out = '';
        for (let i = start; i < end; i++) out += String.fromCharCode(b[i] as number);
        return out;
      }
      return this.buf.toString('latin1', start, end);
    }
    if (major === 2) return this.buf.toString('utf8', start, end);
    return text(b.subarray(start, end), true);
  }

  private need(n: number): void {
    if (this.pos + n > this.b.length) throw new CborError('cbor: unexpected EOF');
  }

  /** The argument of an initial byte with additional info `ai`; -1 for indefinite length. */
  private arg(ai: number): number {
    if (ai < 24) return ai;
    switch (ai) {
      case 24:
        this.need(1);
        return this.b[this.pos++] as number;
      case 25: {
        this.need(2);
        const v = this.view.getUint16(this.pos);
        this.pos += 2;
        return v;
      }
      case 26: {
        this.need(4);
        const v = this.view.getUint32(this.pos);
        this.pos += 4;
        return v;
      }
      case 27: {
        this.need(8);
        const v = this.view.getBigUint64(this.pos);
        this.pos += 8;
        if (v > BigInt(Number.MAX_SAFE_INTEGER)) return Number.POSITIVE_INFINITY;
        return Number(v);
      }
      case 31:
        return -1;
      default:
        throw new CborError(`cbor: invalid additional information ${ai}`);
    }
  }

  /** The bytes of a (possibly indefinite-length) string of major type `major`. */
  private stringBytes(major: number, n: number): Uint8Array {
    if (n >= 0) {
      if (n === Number.POSITIVE_INFINITY) throw new CborError('cbor: string too long');
      this.need(n);
      const out = this.b.subarray(this.pos, this.pos + n);
      this.pos += n;
      return out;
    }
    const parts: Uint8Array[] = [];
    for (;;) {
      this.need(1);
      const ib = this.b[this.pos++] as number;
      if (ib === 0xff) break;
      if (ib >> 5 !== major || (ib & 31) === 31) throw new CborError('cbor: wrong type in indefinite-length string chunk');
      parts.push(this.stringBytes(major, this.arg(ib & 31)));
    }
    return Buffer.concat(parts);
  }

  item(schema: Schema | undefined, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new CborError(`cbor: exceeded max nested level ${MAX_DEPTH}`);
    const s = this.codec.schemaOf(schema);
    this.need(1);
    const ib = this.b[this.pos++] as number;
    const major = ib >> 5;
    const ai = ib & 31;
    switch (major) {
      case 0:
      case 1: {
        const n = this.arg(ai);
        if (n < 0) throw new CborError('cbor: indefinite length for an integer');
        if (n > Number.MAX_SAFE_INTEGER) throw new CborError('cbor: integer overflows int64 (or is not exact in a double)');
        return major === 0 ? n : -1 - n;
      }
      case 2: {
        if (s?.type === 'string' && s.format === 'byte') return Buffer.from(this.stringBytes(2, this.arg(ai))).toString('base64');
        return this.text(2, this.arg(ai));
      }
      case 3:
        return this.text(3, this.arg(ai));
      case 4: {
        const n = this.arg(ai);
        const items = s?.type === 'array' ? s.items : undefined;
        const out: unknown[] = [];
        for (let i = 0; n < 0 ? !this.atBreak() : i < n; i++) {
          if (i >= MAX_ITEMS) throw new CborError(`cbor: exceeded max number of elements ${MAX_ITEMS} for CBOR array`);
          out.push(this.item(items, depth + 1));
        }
        return out;
      }
      case 5: {
        const n = this.arg(ai);
        const out: Record<string, unknown> = {};
        for (let i = 0; n < 0 ? !this.atBreak() : i < n; i++) {
          if (i >= MAX_ITEMS) throw new CborError(`cbor: exceeded max number of key-value pairs ${MAX_ITEMS} for CBOR map`);
          const key = this.key();
          if (Object.hasOwn(out, key)) throw new CborError(`cbor: found duplicate map key "${key}" at map element index ${i}`);
          const v = this.item(s && childSchema(s, key), depth + 1);
          // A null field is dropped later by the schema pass, as for JSON. `__proto__` is an own
          // field like any other (as JSON.parse makes it), never the object's prototype.
          if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
          else out[key] = v;
        }
        return out;
      }
      case 6: {
        const tag = this.arg(ai);
        // Bytes expected to become text later (tags 21, 22, 23): a string in that encoding.
        const later = LATER_ENCODING[tag];
        if (later && this.b[this.pos] !== undefined && (this.b[this.pos] as number) >> 5 === 2) {
          this.pos++;
          return Buffer.from(this.stringBytes(2, this.arg((this.b[this.pos - 1] as number) & 31))).toString(later);
        }
        // The self-described tag and every other: their content (UnrecognizedTagContentToAny).
        return this.item(schema, depth + 1);
      }
      default:
        return this.simple(ai);
    }
  }

  private atBreak(): boolean {
    this.need(1);
    if (this.b[this.pos] === 0xff) {
      this.pos++;
      return true;
    }
    return false;
  }

  private key(): string {
    this.need(1);
    const ib = this.b[this.pos++] as number;
    const major = ib >> 5;
    if (major === 2 || major === 3) return this.text(major, this.arg(ib & 31));
    throw new CborError(`cbor: map keys must be strings (major type ${major})`);
  }

  private simple(ai: number): unknown {
    let v: number;
    switch (ai) {
      case 20:
        return false;
      case 21:
        return true;
      case 22:
      case 23:
        return null;
      case 25: {
        this.need(2);
        v = halfToFloat(this.view.getUint16(this.pos));
        this.pos += 2;
        break;
      }
      case 26:
        this.need(4);
        v = this.view.getFloat32(this.pos);
        this.pos += 4;
        break;
      case 27:
        this.need(8);
        v = this.view.getFloat64(this.pos);
        this.pos += 8;
        break;
      case 31:
        throw new CborError('cbor: unexpected "break" code');
      default:
        throw new CborError(`cbor: unsupported simple value ${ai}`);
    }
    if (Number.isNaN(v)) throw new CborError('cbor: floating-point NaN cannot be decoded');
    if (!Number.isFinite(v)) throw new CborError('cbor: floating-point infinity cannot be decoded');
    return v;
  }
}

/** A string's bytes as text; text strings (major type 3) must be valid UTF-8. */
function text(b: Uint8Array, strict: boolean): string {
  if (!strict) return utf8Lax.decode(b);
  try {
    return utf8Strict.decode(b);
  } catch {
    throw new CborError('cbor: invalid UTF-8 string');
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
