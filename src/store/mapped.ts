/**
 * A store seen through a mapping of its values: what is read is `read(value)`, what is written is
 * `write(value)`. Keys, revisions and every other fact are the underlying store's. The registry
 * serves one kind in a second form with it (the reference's conversion between the version a
 * client speaks and the version objects are stored in): the second form's resource reads and
 * writes the same keys as the first, each value converted on the way.
 *
 *   const v1 = mappedKV(kv, { read: toV1, write: toV2 });   // objects stored as v2
 *   await v1.txn({ success: [{ op: 'put', key, value: v1Bytes }] });   // stores toV2(v1Bytes)
 *   (await v1.range(key)).kvs[0].value                                  // toV1(stored bytes)
 *
 * A `value` compare compares the written form. A mapping that throws fails that read or write
 * (a value the mapping cannot convert is reported by the caller as corrupt data).
 */
import {
  type ChangeEvent,
  type ChangeStream,
  type KeyValue,
  type KV,
  type OpResponse,
  type RangeResult,
  StoreError,
  type Txn,
  type TxnOp,
  type TxnResult,
} from './types';

export interface ValueMapping {
  /** Stored value → the value as this view's readers see it. */
  read(value: Uint8Array): Uint8Array;
  /** This view's value → the stored value. */
  write(value: Uint8Array): Uint8Array;
}

export function mappedKV(kv: KV, m: ValueMapping): KV {
  // A deleted key's event may carry no value (etcd): nothing to map.
  const readKv = (x: KeyValue): KeyValue => (x.value.byteLength === 0 ? x : { ...x, value: m.read(x.value) });
  // A conflict names the key's current version: in this view's form too.
  const readError = (e: unknown): never => {
    if (e instanceof StoreError && e.current) throw new StoreError(e.code, e.message, readKv(e.current));
    throw e;
  };
  const readOpt = (x: KeyValue | undefined): KeyValue | undefined => (x ? readKv(x) : undefined);
  const writeOp = (op: TxnOp): TxnOp => (op.op === 'put' ? { ...op, value: m.write(op.value) } : op);
  const readResponse = (r: OpResponse): OpResponse => {
    switch (r.op) {
      case 'put':
        return { ...r, prev: readOpt(r.prev) };
      case 'delete':
        return { ...r, deleted: r.deleted.map(readKv) };
      case 'get':
        return { ...r, kv: readOpt(r.kv) };
    }
  };
  const out: KV = {
    currentRevision: () => kv.currentRevision(),
    compactedRevision: () => kv.compactedRevision(),
    async range(key, opts): Promise<RangeResult> {
      const r = await kv.range(key, opts).catch(readError);
      return { ...r, kvs: r.kvs.map(readKv) };
    },
    async txn(t: Txn): Promise<TxnResult> {
      const mapped: Txn = {
        compare: t.compare?.map((c) => (c.target === 'value' && c.value instanceof Uint8Array ? { ...c, value: m.write(c.value) } : c)),
        success: t.success?.map(writeOp),
        failure: t.failure?.map(writeOp),
      };
      const r = await kv.txn(mapped).catch(readError);
      return { ...r, responses: r.responses.map(readResponse) };
    },
    compact: (revision) => kv.compact(revision),
    watch(fromRevision, opts): ChangeStream {
      const s = kv.watch(fromRevision, opts);
      const mappedStream: ChangeStream = {
        async next(): Promise<ChangeEvent[]> {
          const events = await s.next();
          return events.map((e) => ({ type: e.type, kv: readKv(e.kv), prev: readOpt(e.prev) }));
        },
        get position() {
          return s.position;
        },
        close: () => s.close(),
      };
      if (s.progress) mappedStream.progress = () => s.progress?.();
      return mappedStream;
    },
    close: () => kv.close(),
  };
  if (kv.latest) out.latest = (key) => readOpt(kv.latest?.(key));
  if (kv.durable) out.durable = (revision) => (kv.durable as (r: number) => Promise<void>)(revision);
  if (kv.fresh) out.fresh = () => (kv.fresh as () => Promise<number>)();
  return out;
}
