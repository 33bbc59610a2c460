/**
 * The etcd v3 messages the etcd store sends and reads, in protobuf wire format, written by hand
 * (field numbers from etcd's api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto).
 *
 * Why not protobufjs (a dependency already) or the `etcd3` client's generated types: int64 fields
 * come back as `Long` objects there, and the per-message reflection is most of the ~40 us per call
 * the `etcd3` client spent above a bare call (bench/etcd-client.ts). Revisions, versions and
 * counts fit in a double (etcd's revisions stay below 2^53), so they are read as numbers here;
 * the uint64 ids of the header (cluster, member) are skipped unread.
 */

// ── wire format ──

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

/** A growing byte buffer of one message. */
export class Writer {
  private buf = new Uint8Array(256);
  private n = 0;

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }

  varint(v: number): void {
    this.room(10);
    // Non-negative integers up to 2^53 (revisions, lengths, enums).
    while (v >= 0x80) {
      this.buf[this.n++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.n++] = v;
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** An int64 / enum / bool field, left out at its default 0 as proto3 does. */
  int(field: number, v: number | boolean): void {
    const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    if (x === 0) return;
    this.tag(field, WIRE_VARINT);
    this.varint(x);
  }

  bytes(field: number, b: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }

  /** A nested message written by `f` (its length is patched in once known). */
  message(field: number, f: (w: Writer) => void): void {
    this.tag(field, WIRE_LEN);
    // Reserve 3 bytes of length (up to 2 MiB of nested message), moved if it needs more or fewer.
    this.room(3);
    const at = this.n;
    this.n += 3;
    f(this);
    const len = this.n - at - 3;
    let lenBytes = 1;
    for (let v = len; v >= 0x80; v = Math.floor(v / 0x80)) lenBytes++;
    if (lenBytes !== 3) {
      this.room(lenBytes);
      this.buf.copyWithin(at + lenBytes, at + 3, this.n);
      this.n += lenBytes - 3;
    }
    let v = len;
    for (let i = 0; i < lenBytes; i++) {
      this.buf[at + i] = i < lenBytes - 1 ? (v % 0x80) | 0x80 : v;
      v = Math.floor(v / 0x80);
    }
  }

  /** The message framed for gRPC: no compression flag, 4-byte big-endian length. */
  grpcFrame(): Uint8Array {
    const out = new Uint8Array(5 + this.n);
    new DataView(out.buffer).setUint32(1, this.n);
    out.set(this.buf.subarray(0, this.n), 5);
    return out;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.n);
  }
}

/** Reads one message's fields in order: `next()` gives the field number, then one read call. */
export class Reader {
  pos: number;
  wire = 0;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** The next field's number, or 0 at the message's end. */
  next(): number {
    if (this.pos >= this.end) return 0;
    const t = this.varint();
    this.wire = t % 8;
    return Math.floor(t / 8);
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('etcd: truncated protobuf message');
      const b = this.buf[this.pos++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
  }

  /** A length-delimited field's bounds [start, end) (the reader moves past it). */
  span(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('etcd: truncated protobuf message');
    return [start, this.pos];
  }

  bytes(): Uint8Array {
    const [s, e] = this.span();
    return this.buf.subarray(s, e);
  }

  sub(): Reader {
    const [s, e] = this.span();
    return new Reader(this.buf, s, e);
  }

  skip(): void {
    switch (this.wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.span();
        return;
      case WIRE_I32:
        this.pos += 4;
        return;
      default:
        throw new Error(`etcd: protobuf wire type ${this.wire} is not supported`);
    }
  }
}

// ── messages ──

export interface PbKeyValue {
  key: Uint8Array;
  value: Uint8Array;
  createRevision: number;
  modRevision: number;
  version: number;
}

export type PbCompare = {
  key: Uint8Array;
  /** CompareTarget: VERSION 0, CREATE 1, MOD 2, VALUE 3. */
  target: 0 | 1 | 2 | 3;
  /** CompareResult: EQUAL 0, GREATER 1, LESS 2, NOT_EQUAL 3. */
  result: 0 | 1 | 2 | 3;
  number?: number;
  value?: Uint8Array;
};

export type PbRequestOp =
  | { put: { key: Uint8Array; value: Uint8Array } }
  | { delete: { key: Uint8Array; end?: Uint8Array } }
  | { range: { key: Uint8Array } };

export interface PbRangeRequest {
  key: Uint8Array;
  end?: Uint8Array;
  limit?: number;
  revision?: number;
  countOnly?: boolean;
}

export interface PbRangeResponse {
  revision: number;
  kvs: PbKeyValue[];
  more: boolean;
  count: number;
}

export type PbResponseOp =
  | { kind: 'put'; prev: PbKeyValue | undefined }
  | { kind: 'delete'; prev: PbKeyValue[] }
  | { kind: 'range'; kvs: PbKeyValue[] };

export interface PbTxnResponse {
  revision: number;
  succeeded: boolean;
  responses: PbResponseOp[];
}

export interface PbEvent {
  /** Event.EventType: PUT 0, DELETE 1. */
  type: number;
  kv: PbKeyValue;
  prev: PbKeyValue | undefined;
}

export interface PbWatchResponse {
  revision: number;
  watchId: number;
  created: boolean;
  canceled: boolean;
  compactRevision: number;
  cancelReason: string;
  fragment: boolean;
  events: PbEvent[];
}

const text = new TextDecoder();

function rangeRequest(w: Writer, r: PbRangeRequest): void {
  w.bytes(1, r.key);
  if (r.end) w.bytes(2, r.end);
  w.int(3, r.limit ?? 0);
  w.int(4, r.revision ?? 0);
  w.int(9, r.countOnly ?? false);
}

export function encodeRange(r: PbRangeRequest): Uint8Array {
  const w = new Writer();
  rangeRequest(w, r);
  return w.grpcFrame();
}

export function encodeTxn(compare: PbCompare[], success: PbRequestOp[], failure: PbRequestOp[]): Uint8Array {
  const w = new Writer();
  for (const c of compare) {
    w.message(1, (m) => {
      m.int(1, c.result);
      m.int(2, c.target);
      m.bytes(3, c.key);
      // The oneof target_union: an explicit 0 must be sent (`mod_revision = 0` means "absent").
      if (c.target === 3) m.bytes(7, c.value ?? new Uint8Array(0));
      else {
        m.tag(c.target === 0 ? 4 : c.target === 1 ? 5 : 6, WIRE_VARINT);
        m.varint(c.number ?? 0);
      }
    });
  }
  const ops = (field: number, list: PbRequestOp[]) => {
    for (const op of list) {
      w.message(field, (m) => {
        if ('put' in op) {
          m.message(2, (p) => {
            p.bytes(1, op.put.key);
            p.bytes(2, op.put.value);
            p.int(4, true); // prev_kv
          });
        } else if ('delete' in op) {
          m.message(3, (d) => {
            d.bytes(1, op.delete.key);
            if (op.delete.end) d.bytes(2, op.delete.end);
            d.int(3, true); // prev_kv
          });
        } else m.message(1, (r) => rangeRequest(r, { key: op.range.key }));
      });
    }
  };
  ops(2, success);
  ops(3, failure);
  return w.grpcFrame();
}

export function encodeCompact(revision: number, physical: boolean): Uint8Array {
  const w = new Writer();
  w.int(1, revision);
  w.int(2, physical);
  return w.grpcFrame();
}

export function encodeWatchCreate(key: Uint8Array, end: Uint8Array | undefined, startRevision: number): Uint8Array {
  const w = new Writer();
  w.message(1, (c) => {
    c.bytes(1, key);
    if (end) c.bytes(2, end);
    c.int(3, startRevision);
    c.int(6, true); // prev_kv
  });
  return w.grpcFrame();
}

export function encodeWatchProgress(): Uint8Array {
  const w = new Writer();
  w.message(3, () => {});
  return w.grpcFrame();
}

/** ResponseHeader: only the revision is read. */
function headerRevision(r: Reader): number {
  let rev = 0;
  for (let f = r.next(); f; f = r.next()) {
    if (f === 3) rev = r.varint();
    else r.skip();
  }
  return rev;
}

function keyValue(r: Reader): PbKeyValue {
  const kv: PbKeyValue = { key: EMPTY, value: EMPTY, createRevision: 0, modRevision: 0, version: 0 };
  for (let f = r.next(); f; f = r.next()) {
    if (f === 1) kv.key = r.bytes();
    else if (f === 2) kv.createRevision = r.varint();
    else if (f === 3) kv.modRevision = r.varint();
    else if (f === 4) kv.version = r.varint();
    else if (f === 5) kv.value = r.bytes();
    else r.skip();
  }
  return kv;
}
const EMPTY = new Uint8Array(0);

function rangeResponse(r: Reader): PbRangeResponse {
  const out: PbRangeResponse = { revision: 0, kvs: [], more: false, count: 0 };
  for (let f = r.next(); f; f = r.next()) {
    if (f === 1) out.revision = headerRevision(r.sub());
    else if (f === 2) out.kvs.push(keyValue(r.sub()));
    else if (f === 3) out.more = r.varint() !== 0;
    else if (f === 4) out.count = r.varint();
    else r.skip();
  }
  return out;
}

export function decodeRange(b: Uint8Array): PbRangeResponse {
  return rangeResponse(new Reader(b));
}

function responseOp(r: Reader): PbResponseOp {
  for (let f = r.next(); f; f = r.next()) {
    if (f === 1) return { kind: 'range', kvs: rangeResponse(r.sub()).kvs };
    if (f === 2) {
      const p = r.sub();
      let prev: PbKeyValue | undefined;
      for (let g = p.next(); g; g = p.next()) {
        if (g === 2) prev = keyValue(p.sub());
        else p.skip();
      }
      return { kind: 'put', prev };
    }
    if (f === 3) {
      const d = r.sub();
      const prev: PbKeyValue[] = [];
      for (let g = d.next(); g; g = d.next()) {
        if (g === 3) prev.push(keyValue(d.sub()));
        else d.skip();
      }
      return { kind: 'delete', prev };
    }
    r.skip();
  }
  throw new Error('etcd: a transaction answered an operation of an unknown kind');
}

export function decodeTxn(b: Uint8Array): PbTxnResponse {
  const r = new Reader(b);
  const out: PbTxnResponse = { revision: 0, succeeded: false, responses: [] };
  for (let f = r.next(); f; f = r.next()) {
    if (f === 1) out.revision = headerRevision(r.sub());
    else if (f === 2) out.succeeded = r.varint() !== 0;
    else if (f === 3) out.responses.push(responseOp(r.sub()));
    else r.skip();
  }
  return out;
}

export function decodeWatch(b: Uint8Array): PbWatchResponse {
  const r = new Reader(b);
  const out: PbWatchResponse = {
    revision: 0,
    watchId: 0,
    created: false,
    canceled: false,
    compactRevision: 0,
    cancelReason: '',
    fragment: false,
    events: [],
  };
  for (let f = r.next(); f; f = r.next()) {
    if (f === 1) out.revision = headerRevision(r.sub());
    else if (f === 2) out.watchId = r.varint();
    else if (f === 3) out.created = r.varint() !== 0;
    else if (f === 4) out.canceled = r.varint() !== 0;
    else if (f === 5) out.compactRevision = r.varint();
    else if (f === 6) out.cancelReason = text.decode(r.bytes());
    else if (f === 7) out.fragment = r.varint() !== 0;
    else if (f === 11) {
      const e = r.sub();
      const ev: PbEvent = { type: 0, kv: undefined as unknown as PbKeyValue, prev: undefined };
      for (let g = e.next(); g; g = e.next()) {
        if (g === 1) ev.type = e.varint();
        else if (g === 2) ev.kv = keyValue(e.sub());
        else if (g === 3) ev.prev = keyValue(e.sub());
        else e.skip();
      }
      if (!ev.kv) throw new Error('etcd: a watch event without its key');
      out.events.push(ev);
    } else r.skip();
  }
  return out;
}
