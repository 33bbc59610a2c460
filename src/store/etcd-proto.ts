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

import { LEN, VARINT, Reader as WireReader, Writer } from '../wire/protobuf';

// ── writing ──

/**
 * The one writer of every message (encoding is synchronous; frame() copies each message out),
 * so that a call does not allocate a buffer of its own.
 */
const w = new Writer();

/** Starts a message: its gRPC frame's 5 bytes of header come first. */
function begin(): void {
  w.reset();
  w.pos = 5;
}

/** The message framed for gRPC: no compression flag, 4-byte big-endian length. */
function frame(): Uint8Array {
  const out = w.take(0);
  out[0] = 0;
  new DataView(out.buffer).setUint32(1, out.length - 5);
  return out;
}

function bytesField(field: number, b: Uint8Array): void {
  w.tag(field, LEN);
  w.bytes(b);
}

/** An int64 / enum / bool field, left out at its default 0 as proto3 does. */
function intField(field: number, v: number | boolean): void {
  const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  if (x === 0) return;
  w.tag(field, VARINT);
  w.varint(x);
}

/** A nested message written by `f` (its length is written once known). */
function messageField(field: number, f: () => void): void {
  w.tag(field, LEN);
  const at = w.begin();
  f();
  w.end(at);
}

// ── reading ──

/** Reads one message's fields in order: `next()` gives the field number, then one read call. */
class Reader extends WireReader {
  /** The wire type of the field next() returned. */
  wire = 0;
  private field = 0;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    super(buf, start, end);
  }

  /** The next field's number, or 0 at the message's end. */
  next(): number {
    if (this.pos >= this.end) return 0;
    const k = this.uvarint32();
    this.wire = k & 7;
    this.field = k >>> 3;
    return this.field;
  }

  /** The nested message of a length-delimited field. */
  sub(): Reader {
    const n = this.len();
    const start = this.pos;
    this.pos = start + n;
    return new Reader(this.buf, start, start + n);
  }

  /** Skips the value of the field next() returned. */
  skipField(): void {
    this.skip(this.wire, this.field);
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

function rangeRequest(r: PbRangeRequest): void {
  bytesField(1, r.key);
  if (r.end) bytesField(2, r.end);
  intField(3, r.limit ?? 0);
  intField(4, r.revision ?? 0);
  intField(9, r.countOnly ?? false);
}

export function encodeRange(r: PbRangeRequest): Uint8Array {
  begin();
  rangeRequest(r);
  return frame();
}

export function encodeTxn(compare: PbCompare[], success: PbRequestOp[], failure: PbRequestOp[]): Uint8Array {
  begin();
  for (const c of compare) {
    messageField(1, () => {
      intField(1, c.result);
      intField(2, c.target);
      bytesField(3, c.key);
      // The oneof target_union: an explicit 0 must be sent (`mod_revision = 0` means "absent").
      if (c.target === 3) bytesField(7, c.value ?? new Uint8Array(0));
      else {
        w.tag(c.target === 0 ? 4 : c.target === 1 ? 5 : 6, VARINT);
        w.varint(c.number ?? 0);
      }
    });
  }
  const ops = (field: number, list: PbRequestOp[]) => {
    for (const op of list) {
      messageField(field, () => {
        if ('put' in op) {
          messageField(2, () => {
            bytesField(1, op.put.key);
            bytesField(2, op.put.value);
            intField(4, true); // prev_kv
          });
        } else if ('delete' in op) {
          messageField(3, () => {
            bytesField(1, op.delete.key);
            if (op.delete.end) bytesField(2, op.delete.end);
            intField(3, true); // prev_kv
          });
        } else messageField(1, () => rangeRequest({ key: op.range.key }));
      });
    }
  };
  ops(2, success);
  ops(3, failure);
  return frame();
}

export function encodeCompact(revision: number, physical: boolean): Uint8Array {
  begin();
  intField(1, revision);
  intField(2, physical);
  return frame();
}

export function encodeWatchCreate(key: Uint8Array, end: Uint8Array | undefined, startRevision: number): Uint8Array {
  begin();
  messageField(1, () => {
    bytesField(1, key);
    if (end) bytesField(2, end);
    intField(3, startRevision);
    intField(6, true); // prev_kv
  });
  return frame();
}

export function encodeWatchProgress(): Uint8Array {
  begin();
  messageField(3, () => {});
  return frame();
}

/** ResponseHeader: only the revision is read. */
function headerRevision(r: Reader): number {
  let rev = 0;
  for (let f = r.next(); f; f = r.next()) {
    if (f === 3) rev = r.varint();
    else r.skipField();
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
    else r.skipField();
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
    else r.skipField();
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
        else p.skipField();
      }
      return { kind: 'put', prev };
    }
    if (f === 3) {
      const d = r.sub();
      const prev: PbKeyValue[] = [];
      for (let g = d.next(); g; g = d.next()) {
        if (g === 3) prev.push(keyValue(d.sub()));
        else d.skipField();
      }
      return { kind: 'delete', prev };
    }
    r.skipField();
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
    else r.skipField();
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
        else e.skipField();
      }
      if (!ev.kv) throw new Error('etcd: a watch event without its key');
      out.events.push(ev);
    } else r.skipField();
  }
  return out;
}
