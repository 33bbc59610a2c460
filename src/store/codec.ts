/**
 * Binary encoding of what the embedded store persists: WAL record bodies (a committed
 * transaction's writes, or a compaction) and snapshot entries. Little-endian, length-prefixed.
 *
 *   txn body:      u8 1 | u32 nOps | nOps × ( u8 1 (put) | u32 klen | key | u32 vlen | value
 *                                            | u8 2 (delete) | u32 klen | key )
 *   compact body:  u8 2 | f64 revision
 *   snapshot entry: u32 klen | key | f64 createRevision | f64 modRevision | u32 version | u32 vlen | value
 */
import type { KeyValue, Revision } from './types';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const BODY_TXN = 1;
export const BODY_COMPACT = 2;
export const OP_PUT = 1;
export const OP_DELETE = 2;

export type LoggedOp = { op: 'put'; key: string; value: Uint8Array } | { op: 'delete'; key: string };
export type Body = { type: 'txn'; ops: LoggedOp[] } | { type: 'compact'; revision: Revision };

/** A growable little-endian byte writer. */
export class Writer {
  buf: Uint8Array;
  view: DataView;
  len = 0;

  constructor(capacity = 1024) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.reserve(1);
    this.buf[this.len++] = v;
  }

  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.len, v, true);
    this.len += 4;
  }

  f64(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.len, v, true);
    this.len += 8;
  }

  bytes(b: Uint8Array): void {
    this.u32(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  str(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit.
    this.reserve(4 + s.length * 3);
    const at = this.len;
    const { written } = encoder.encodeInto(s, this.buf.subarray(at + 4));
    this.view.setUint32(at, written, true);
    this.len = at + 4 + written;
  }

  take(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** A little-endian reader; every read is bounds-checked and throws RangeError past the end. */
export class Reader {
  readonly view: DataView;
  pos: number;

  constructor(
    readonly buf: Uint8Array,
    pos = 0,
    readonly end = buf.length,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = pos;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) throw new RangeError(`truncated at ${this.pos} (+${n} > ${this.end})`);
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++] as number;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /**
   * The next length-prefixed byte string, as a view into the source buffer (no copy: recovery
   * loads values straight from the file buffers, which stay alive while any value is; copying
   * each value costs ~10x more and dominated restart time).
   */
  bytes(): Uint8Array {
    const n = this.u32();
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  str(): string {
    const n = this.u32();
    this.need(n);
    const s = decoder.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
}

export function encodeTxnBody(w: Writer, ops: readonly LoggedOp[]): void {
  w.u8(BODY_TXN);
  w.u32(ops.length);
  for (const o of ops) {
    if (o.op === 'put') {
      w.u8(OP_PUT);
      w.str(o.key);
      w.bytes(o.value);
    } else {
      w.u8(OP_DELETE);
      w.str(o.key);
    }
  }
}

export function encodeCompactBody(w: Writer, revision: Revision): void {
  w.u8(BODY_COMPACT);
  w.f64(revision);
}

export function decodeBody(body: Uint8Array): Body {
  const r = new Reader(body);
  const type = r.u8();
  if (type === BODY_COMPACT) return { type: 'compact', revision: r.f64() };
  if (type !== BODY_TXN) throw new RangeError(`unknown record body type ${type}`);
  const n = r.u32();
  const ops: LoggedOp[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.u8();
    const key = r.str();
    if (kind === OP_PUT) ops.push({ op: 'put', key, value: r.bytes() });
    else if (kind === OP_DELETE) ops.push({ op: 'delete', key });
    else throw new RangeError(`unknown op ${kind}`);
  }
  if (r.pos !== body.length) throw new RangeError(`trailing bytes in record body`);
  return { type: 'txn', ops };
}

export function encodeEntry(w: Writer, kv: KeyValue): void {
  w.str(kv.key);
  w.f64(kv.createRevision);
  w.f64(kv.modRevision);
  w.u32(kv.version);
  w.bytes(kv.value);
}

export function decodeEntry(r: Reader): KeyValue {
  const key = r.str();
  const createRevision = r.f64();
  const modRevision = r.f64();
  const version = r.u32();
  const value = r.bytes();
  return { key, value, createRevision, modRevision, version };
}
