/**
 * A store seen through an asynchronous mapping of its values (mapped.ts, for conversions that
 * take a round trip: a CRD's conversion webhook). Values read together are mapped together (a
 * range's values in one call, a watch batch's in one call); a write's value before it is
 * written. There is no `latest` (it would have to be synchronous): writers read through range.
 *
 * A read whose mapping fails fails that read. A watch whose batch cannot be mapped tries again
 * (after 100 ms, doubling to 5 s) and delivers the batch once it can: its readers (a watch
 * cache) see events late, never out of order or lost.
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

export interface AsyncValueMapping {
  /** Stored values → the values as this view's readers see them, in order. */
  readMany(values: Uint8Array[]): Promise<Uint8Array[]>;
  /** This view's value → the stored value. */
  write(value: Uint8Array): Promise<Uint8Array>;
  log?: (msg: string) => void;
}

export function asyncMappedKV(kv: KV, m: AsyncValueMapping): KV {
  /** The key-values with their values mapped (deleted keys' empty values left alone), in one call. */
  const readKvs = async (xs: (KeyValue | undefined)[]): Promise<(KeyValue | undefined)[]> => {
    const at: number[] = [];
    const values: Uint8Array[] = [];
    xs.forEach((x, i) => {
      if (x && x.value.byteLength > 0) {
        at.push(i);
        values.push(x.value);
      }
    });
    if (values.length === 0) return xs;
    const mapped = await m.readMany(values);
    const out = [...xs];
    at.forEach((i, j) => {
      out[i] = { ...(xs[i] as KeyValue), value: mapped[j] as Uint8Array };
    });
    return out;
  };
  const readError = async (e: unknown): Promise<never> => {
    if (e instanceof StoreError && e.current) {
      const [current] = await readKvs([e.current]);
      throw new StoreError(e.code, e.message, current);
    }
    throw e;
  };
  const writeOps = async (ops: TxnOp[] | undefined): Promise<TxnOp[] | undefined> =>
    ops && Promise.all(ops.map(async (op) => (op.op === 'put' ? { ...op, value: await m.write(op.value) } : op)));
  const readResponses = async (rs: OpResponse[]): Promise<OpResponse[]> =>
    Promise.all(
      rs.map(async (r): Promise<OpResponse> => {
        switch (r.op) {
          case 'put':
            return { ...r, prev: (await readKvs([r.prev]))[0] };
          case 'delete':
            return { ...r, deleted: (await readKvs(r.deleted)) as KeyValue[] };
          case 'get':
            return { ...r, kv: (await readKvs([r.kv]))[0] };
        }
      }),
    );
  const out: KV = {
    currentRevision: () => kv.currentRevision(),
    compactedRevision: () => kv.compactedRevision(),
    async range(key, opts): Promise<RangeResult> {
      const r = await kv.range(key, opts).catch(readError);
      return { ...r, kvs: (await readKvs(r.kvs)) as KeyValue[] };
    },
    async txn(t: Txn): Promise<TxnResult> {
      const compare = t.compare
        ? await Promise.all(
            t.compare.map(async (c) =>
              c.target === 'value' && c.value instanceof Uint8Array ? { ...c, value: await m.write(c.value) } : c,
            ),
          )
        : undefined;
      const mapped: Txn = { compare, success: await writeOps(t.success), failure: await writeOps(t.failure) };
      const r = await kv.txn(mapped).catch(readError);
      return { ...r, responses: await readResponses(r.responses) };
    },
    compact: (revision) => kv.compact(revision),
    watch(fromRevision, opts): ChangeStream {
      const s = kv.watch(fromRevision, opts);
      let closed = false;
      const mappedStream: ChangeStream = {
        async next(): Promise<ChangeEvent[]> {
          const events = await s.next();
          for (let wait = 100; ; wait = Math.min(wait * 2, 5000)) {
            try {
              const all = await readKvs([...events.map((e) => e.kv), ...events.map((e) => e.prev)]);
              return events.map((e, i) => ({ type: e.type, kv: all[i] as KeyValue, prev: all[events.length + i] }));
            } catch (e) {
              if (closed) return [];
              m.log?.(`W watch: cannot convert ${events.length} events (retrying in ${wait} ms): ${(e as Error).message}`);
              await Bun.sleep(wait);
            }
          }
        },
        get position() {
          return s.position;
        },
        close: () => {
          closed = true;
          s.close();
        },
      };
      if (s.progress) mappedStream.progress = () => s.progress?.();
      return mappedStream;
    },
    close: () => kv.close(),
  };
  if (kv.durable) out.durable = (revision) => (kv.durable as (r: number) => Promise<void>)(revision);
  if (kv.fresh) out.fresh = () => (kv.fresh as () => Promise<number>)();
  return out;
}
