/**
 * The hand-written etcd messages against protobufjs reading etcd's own .proto files (the copies
 * the `etcd3` package ships): what we encode, protobufjs decodes to the same fields; what it
 * encodes, we decode to the same values. And the gRPC deframer over any split of the bytes.
 */
import { expect, test } from 'bun:test';
import * as path from 'node:path';
import protobuf from 'protobufjs';
import {
  decodeRange,
  decodeTxn,
  decodeWatch,
  encodeCompact,
  encodeRange,
  encodeTxn,
  encodeWatchCreate,
  encodeWatchProgress,
} from './etcd-proto';
import { Deframer } from './grpc';

const root = new protobuf.Root().loadSync(path.join(import.meta.dir, '../../node_modules/etcd3/proto/rpc.proto'), { keepCase: true });
const T = (name: string) => root.lookupType(`etcdserverpb.${name}`);
const b = (s: string) => new TextEncoder().encode(s);
const s = (u: Uint8Array | undefined) => new TextDecoder().decode(u);
/** A frame's message (the 5-byte gRPC prefix checked and dropped). */
const body = (frame: Uint8Array) => {
  expect(frame[0]).toBe(0);
  expect(new DataView(frame.buffer, frame.byteOffset).getUint32(1)).toBe(frame.length - 5);
  return frame.subarray(5);
};
const plain = (type: string, bytes: Uint8Array) =>
  T(type).toObject(T(type).decode(bytes), { longs: Number, bytes: String, defaults: false, oneofs: false }) as Record<string, unknown>;
const b64 = (x: string) => Buffer.from(x).toString('base64');

test('a range request encodes every field it sets, and none it leaves at its default', () => {
  expect(
    plain('RangeRequest', body(encodeRange({ key: b('/a'), end: b('/b'), limit: 500, revision: 2 ** 40 + 3, countOnly: true }))),
  ).toEqual({
    key: b64('/a'),
    range_end: b64('/b'),
    limit: 500,
    revision: 2 ** 40 + 3,
    count_only: true,
  });
  expect(plain('RangeRequest', body(encodeRange({ key: b('/a') })))).toEqual({ key: b64('/a') });
});

test('a transaction: compares with an explicit 0, puts and deletes asking for prev_kv, a get', () => {
  const frame = encodeTxn(
    [
      { key: b('/k'), target: 1, result: 0, number: 0 },
      { key: b('/k'), target: 2, result: 3, number: 77 },
      { key: b('/k'), target: 0, result: 1, number: 2 },
      { key: b('/k'), target: 3, result: 2, value: b('v1') },
    ],
    [{ put: { key: b('/k'), value: b('x'.repeat(70_000)) } }, { delete: { key: b('/a'), end: b('/b') } }],
    [{ range: { key: b('/k') } }],
  );
  const t = T('TxnRequest').decode(body(frame)) as unknown as {
    compare: {
      result: number;
      target: number;
      key: Uint8Array;
      target_union: string;
      create_revision?: unknown;
      mod_revision?: unknown;
      version?: unknown;
      value?: Uint8Array;
    }[];
    success: {
      request_put?: { key: Uint8Array; value: Uint8Array; prev_kv: boolean };
      request_delete_range?: { key: Uint8Array; range_end: Uint8Array; prev_kv: boolean };
    }[];
    failure: { request_range?: { key: Uint8Array } }[];
  };
  expect(t.compare.map((c) => [c.result, c.target, s(c.key), c.target_union])).toEqual([
    [0, 1, '/k', 'create_revision'],
    [3, 2, '/k', 'mod_revision'],
    [1, 0, '/k', 'version'],
    [2, 3, '/k', 'value'],
  ]);
  expect(Number(t.compare[0]?.create_revision)).toBe(0);
  expect(Number(t.compare[1]?.mod_revision)).toBe(77);
  expect(Number(t.compare[2]?.version)).toBe(2);
  expect(s(t.compare[3]?.value)).toBe('v1');
  expect(s(t.success[0]?.request_put?.key)).toBe('/k');
  expect(t.success[0]?.request_put?.value.length).toBe(70_000);
  expect(t.success[0]?.request_put?.prev_kv).toBe(true);
  expect([s(t.success[1]?.request_delete_range?.key), s(t.success[1]?.request_delete_range?.range_end)]).toEqual(['/a', '/b']);
  expect(t.success[1]?.request_delete_range?.prev_kv).toBe(true);
  expect(s(t.failure[0]?.request_range?.key)).toBe('/k');
  // A nested message whose length needs 4 bytes (the writer moves what it wrote after reserving 3).
  const big = new Uint8Array(3 * 1024 * 1024).fill(5);
  const t2 = T('TxnRequest').decode(
    body(encodeTxn([], [{ put: { key: b('/big'), value: big } }, { range: { key: b('/after') } }], [])),
  ) as unknown as {
    success: { request_put?: { value: Uint8Array }; request_range?: { key: Uint8Array } }[];
  };
  expect(t2.success[0]?.request_put?.value.length).toBe(big.length);
  expect(t2.success[0]?.request_put?.value.every((x) => x === 5)).toBe(true);
  expect(s(t2.success[1]?.request_range?.key)).toBe('/after');
});

test('compaction and watch requests', () => {
  expect(plain('CompactionRequest', body(encodeCompact(12345, true)))).toEqual({ revision: 12345, physical: true });
  const w = plain('WatchRequest', body(encodeWatchCreate(b('/r/'), b('/r0'), 9))) as { create_request: Record<string, unknown> };
  expect(w.create_request).toEqual({ key: b64('/r/'), range_end: b64('/r0'), start_revision: 9, prev_kv: true });
  expect(Object.keys(plain('WatchRequest', body(encodeWatchProgress())))).toEqual(['progress_request']);
});

const kv = (key: string, value: string, rev: number) => ({
  key: b(key),
  value: b(value),
  create_revision: 1,
  mod_revision: rev,
  version: 3,
  lease: 0,
});
const header = { cluster_id: '18446744073709551615', member_id: 42, revision: 2 ** 50 + 1, raft_term: 7 };

test('range, transaction and watch answers decode with revisions past 2^32 and uint64 ids skipped', () => {
  const range = decodeRange(
    T('RangeResponse')
      .encode({ header, kvs: [kv('/a', 'A', 5), kv('/b', '', 6)], more: true, count: 10 })
      .finish(),
  );
  expect(range.revision).toBe(2 ** 50 + 1);
  expect(range.kvs.map((k) => [s(k.key), s(k.value), k.createRevision, k.modRevision, k.version])).toEqual([
    ['/a', 'A', 1, 5, 3],
    ['/b', '', 1, 6, 3],
  ]);
  expect([range.more, range.count]).toEqual([true, 10]);

  const txn = decodeTxn(
    T('TxnResponse')
      .encode({
        header,
        succeeded: true,
        responses: [
          { response_put: { header, prev_kv: kv('/k', 'old', 4) } },
          { response_put: { header } },
          { response_delete_range: { header, deleted: 2, prev_kvs: [kv('/a', '1', 2), kv('/b', '2', 3)] } },
          { response_range: { header, kvs: [kv('/k', 'v', 9)] } },
        ],
      })
      .finish(),
  );
  expect(txn.succeeded).toBe(true);
  expect(txn.revision).toBe(2 ** 50 + 1);
  const [put, bare, del, get] = txn.responses;
  expect(put?.kind === 'put' && s(put.prev?.value)).toBe('old');
  expect(bare?.kind === 'put' && bare.prev).toBeUndefined();
  expect(del?.kind === 'delete' && del.prev.map((k) => s(k.key))).toEqual(['/a', '/b']);
  expect(get?.kind === 'range' && get.kvs.map((k) => k.modRevision)).toEqual([9]);

  const watch = decodeWatch(
    T('WatchResponse')
      .encode({
        header,
        watch_id: 3,
        compact_revision: 17,
        canceled: true,
        cancel_reason: 'mvcc: required revision has been compacted',
        events: [
          { type: 0, kv: kv('/x', 'new', 20), prev_kv: kv('/x', 'old', 19) },
          { type: 1, kv: { key: b('/y'), mod_revision: 21 } },
        ],
      })
      .finish(),
  );
  expect([watch.watchId, watch.canceled, watch.compactRevision, watch.cancelReason]).toEqual([
    3,
    true,
    17,
    'mvcc: required revision has been compacted',
  ]);
  expect(watch.events.map((e) => [e.type, s(e.kv.key), s(e.kv.value), e.kv.modRevision, e.prev && s(e.prev.value)])).toEqual([
    [0, '/x', 'new', 20, 'old'],
    [1, '/y', '', 21, undefined],
  ]);
});

test('a truncated answer is an error, not a short result', () => {
  const whole = T('RangeResponse')
    .encode({ header, kvs: [kv('/a', 'A'.repeat(300), 5)] })
    .finish();
  expect(() => decodeRange(whole.subarray(0, whole.length - 10))).toThrow(/unexpected end of message/);
});

test('the deframer hands out the same messages however the bytes are split', () => {
  const messages = [b(''), b('one'), new Uint8Array(70_000).fill(7), b('x'.repeat(1000)), b('z')];
  const stream = Buffer.concat(
    messages.map((m) => {
      const f = Buffer.alloc(5 + m.length);
      f.writeUInt32BE(m.length, 1);
      f.set(m, 5);
      return f;
    }),
  );
  let seed = 1;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (const maxChunk of [1, 2, 5, 6, 100, 16_384, stream.length]) {
    const got: Uint8Array[] = [];
    const d = new Deframer((m) => got.push(m.slice()));
    for (let at = 0; at < stream.length; ) {
      const n = 1 + rand(maxChunk);
      d.push(stream.subarray(at, at + n));
      at += n;
    }
    expect(got.map((m) => Buffer.from(m).toString('base64'))).toEqual(messages.map((m) => Buffer.from(m).toString('base64')));
  }
  const compressed = new Uint8Array([1, 0, 0, 0, 1, 9]);
  expect(() => new Deframer(() => {}).push(compressed)).toThrow(/compressed/);
});
