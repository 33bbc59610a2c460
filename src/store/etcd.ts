/**
 * The KV interface over a real etcd (its v3 gRPC API through src/store/grpc.ts), so
 * that several API server replicas share one store. Keys live under `--etcd-prefix` (the
 * reference's `/registry`); revisions are etcd's own, so resourceVersions, continue tokens and
 * watches mean the same on every replica.
 *
 *   range     Range (revision, limit, count), header revision = the read's revision
 *   txn       Txn with compares; puts and deletes ask for prev_kv; durable when etcd answers
 *   compact   Compact (physical); a compacted read or watch maps to StoreError `compacted`
 *   watch     one gRPC watch stream per ChangeStream, prev_kv on, resumed from its position
 *             (from the compacted revision itself is `compacted`: etcd drops a delete made at
 *             the compaction revision, so such a watch could miss it)
 *             after a disconnection; while its consumer waits and the store has moved past
 *             its position (writes outside its range), it asks etcd for a progress
 *             notification, so that `position` advances as the embedded store's does
 *
 * currentRevision() is the newest revision this process has seen in any etcd answer (a read,
 * a write, a watch event or progress notification). Failures to reach etcd become StoreError
 * `unreachable` (the API answers 503); the client retries and fails over between endpoints.
 */
import {
  decodeRange,
  decodeTxn,
  decodeWatch,
  encodeCompact,
  encodeRange,
  encodeTxn,
  encodeWatchCreate,
  encodeWatchProgress,
  type PbCompare,
  type PbKeyValue,
  type PbRequestOp,
  type PbResponseOp,
  type PbWatchResponse,
} from './etcd-proto';
import { type BidiStream, CANCELLED, GrpcChannel, GrpcError } from './grpc';
import {
  type ChangeEvent,
  type ChangeStream,
  type Compare,
  type KeyValue,
  type KV,
  type OpResponse,
  prefixEnd,
  type RangeOptions,
  type RangeResult,
  type Revision,
  StoreError,
  type Txn,
  type TxnOp,
  type TxnResult,
  type WatchOptions,
} from './types';

export interface EtcdOptions {
  /** Client URLs (http:// or https://); the client fails over between them. */
  endpoints: string[];
  /** Prefix of every key in etcd (`--etcd-prefix`, default `/registry`). */
  prefix?: string;
  /** PEM contents of `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`. */
  tls?: { ca: string; cert?: string; key?: string };
  /** Deadline of one unary call (default 10 s). */
  callTimeoutMs?: number;
}

/**
 * Reads retried on an unreachable etcd (another endpoint may answer): waits before each retry.
 * 3.3 s in all: right after a member dies, the client may pick its endpoint again for a while (a
 * CI run under load saw a LIST fail after 1.3 s of retries while two members were up).
 */
const READ_RETRIES_MS = [50, 250, 1000, 2000];

const enc = new TextEncoder();
const dec = new TextDecoder();
const COMPARE_TARGET = { version: 0, create: 1, mod: 2, value: 3 } as const;
const COMPARE_RESULT = { '=': 0, '>': 1, '<': 2, '!=': 3 } as const;
const KV_RANGE = '/etcdserverpb.KV/Range';
const KV_TXN = '/etcdserverpb.KV/Txn';
const KV_COMPACT = '/etcdserverpb.KV/Compact';
const WATCH = '/etcdserverpb.Watch/Watch';

/** A gRPC or etcd failure as the closed set of store errors. */
export function storeErrorOf(e: unknown): StoreError {
  if (e instanceof StoreError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  if (msg.includes('required revision has been compacted')) return new StoreError('compacted', msg);
  if (msg.includes('required revision is a future revision')) return new StoreError('future-revision', msg);
  if (e instanceof GrpcError && e.code === CANCELLED && msg.includes('closed')) return new StoreError('closed', msg);
  return new StoreError('unreachable', msg.startsWith('etcd') ? msg : `etcd: ${msg}`);
}

export class EtcdStore implements KV {
  /** @internal */
  readonly channel: GrpcChannel;
  private readonly timeoutMs: number;
  private readonly prefix: string;
  private readonly prefixBuf: Buffer;
  private rev = 0;
  private compacted = 0;
  private closed = false;
  private readonly streams = new Set<EtcdChangeStream>();
  /** Why etcd cannot be reached now (the last call failed and none succeeded since). */
  private problem: string | undefined;
  private probeTimer: ReturnType<typeof setInterval> | undefined;

  private constructor(o: EtcdOptions) {
    this.prefix = o.prefix ?? '/registry';
    this.prefixBuf = Buffer.from(this.prefix);
    this.timeoutMs = o.callTimeoutMs ?? 10_000;
    // No retries of a call: a write whose answer was lost would find its own key when sent again
    // (409 for a create that succeeded). Writes fail as 503 (their outcome unknown, as the
    // reference answers); reads are retried below. A list of 10,000 pods is ~12 MB in one
    // answer: no message size limit (the reference's client sets none either).
    this.channel = new GrpcChannel({ endpoints: o.endpoints, ...(o.tls ? { tls: o.tls } : {}) });
  }

  /** Connects and reads the current revision (throws `unavailable` when no endpoint answers). */
  static async open(o: EtcdOptions): Promise<EtcdStore> {
    const s = new EtcdStore(o);
    try {
      const r = await s.rangeCall({ key: s.k('/'), countOnly: true });
      s.seen(r.revision);
    } catch (e) {
      s.channel.close();
      throw storeErrorOf(e);
    }
    return s;
  }

  currentRevision(): Revision {
    return this.rev;
  }

  compactedRevision(): Revision {
    return this.compacted;
  }

  /** undefined while etcd answers; else why not (the /readyz `etcd` check). */
  health(): string | undefined {
    return this.closed ? 'store closed' : this.problem;
  }

  /**
   * Ask etcd every `ms` whether it answers (and learn its revision meanwhile), so that health()
   * notices an outage and a recovery without traffic.
   */
  startProbe(ms = 1000): void {
    this.probeTimer ??= setInterval(() => {
      this.fresh().catch(() => {});
    }, ms);
    this.probeTimer.unref?.();
  }

  /** Ask etcd for its revision now (a consistent read's starting point). */
  async fresh(): Promise<Revision> {
    const r = await this.read(() => this.rangeCall({ key: this.k('/'), countOnly: true }));
    return this.seen(r.revision);
  }

  /** The etcd figures /metrics and /debug/runtime show. */
  stats(): { backend: 'etcd'; revision: Revision; compacted: Revision; compactions: number; watches: number; problem: string | undefined } {
    return {
      backend: 'etcd',
      revision: this.rev,
      compacted: this.compacted,
      compactions: this.compactions,
      watches: this.streams.size,
      problem: this.problem,
    };
  }

  /** Compactions this server asked etcd for (others' are not counted). */
  private compactions = 0;

  async range(key: string, opts: RangeOptions = {}): Promise<RangeResult> {
    const r = await this.read(() =>
      this.rangeCall({
        key: this.k(key),
        ...(opts.end !== undefined ? { end: this.end(opts.end) } : {}),
        ...(opts.revision ? { revision: opts.revision } : {}),
        ...(opts.limit ? { limit: opts.limit } : {}),
      }),
    );
    const current = this.seen(r.revision);
    // etcd's header names its newest revision; a read at a past one was served at that one.
    const revision = opts.revision ? opts.revision : current;
    return { kvs: r.kvs.map((kv) => this.kv(kv)), count: r.count, more: r.more, revision };
  }

  async txn(t: Txn): Promise<TxnResult> {
    const frame = encodeTxn(
      (t.compare ?? []).map((c) => this.compare(c)),
      (t.success ?? []).map((op) => this.op(op)),
      (t.failure ?? []).map((op) => this.op(op)),
    );
    const r = await this.call(async () => decodeTxn(await this.channel.unary(KV_TXN, frame, this.timeoutMs)));
    const revision = this.seen(r.revision);
    const ops = (r.succeeded ? t.success : t.failure) ?? [];
    return { succeeded: r.succeeded, revision, responses: r.responses.map((res, i) => this.response(res, ops[i] as TxnOp, revision)) };
  }

  async compact(revision: Revision): Promise<void> {
    if (revision <= this.compacted) throw new StoreError('compacted', `revision ${revision} is already compacted (at ${this.compacted})`);
    await this.call(() => this.channel.unary(KV_COMPACT, encodeCompact(revision, true), this.timeoutMs));
    this.compactions++;
    this.compacted = Math.max(this.compacted, revision);
  }

  watch(fromRevision: Revision, opts: WatchOptions = {}): ChangeStream {
    const s = new EtcdChangeStream(this, fromRevision, opts.key ?? '', opts.end ?? (opts.key === undefined ? '\0' : undefined));
    this.streams.add(s);
    return s;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    for (const s of [...this.streams]) s.close();
    this.channel.close();
  }

  private async rangeCall(r: Parameters<typeof encodeRange>[0]) {
    return decodeRange(await this.channel.unary(KV_RANGE, encodeRange(r), this.timeoutMs));
  }

  // ── internals shared with the change streams ──

  /** @internal */
  seen(revision: string | number): Revision {
    const r = Number(revision);
    if (r > this.rev) this.rev = r;
    return r;
  }

  /** @internal a compaction learnt from a cancelled watch. */
  compactedAt(revision: Revision): void {
    if (revision > this.compacted) this.compacted = revision;
  }

  /** @internal */
  forget(s: EtcdChangeStream): void {
    this.streams.delete(s);
  }

  /** @internal the etcd key of a store key. */
  k(key: string): Buffer {
    return Buffer.concat([this.prefixBuf, Buffer.from(key)]);
  }

  /** @internal a range end: '\0' (every key from `key` on) stays inside the prefix. */
  end(end: string): Buffer {
    return end === '\0' ? Buffer.from(prefixEnd(this.prefix)) : this.k(end);
  }

  /** @internal */
  kv(kv: PbKeyValue): KeyValue {
    return {
      key: dec.decode(kv.key.subarray(this.prefixBuf.length)),
      value: kv.value,
      createRevision: kv.createRevision,
      modRevision: kv.modRevision,
      version: kv.version,
    };
  }

  /** A read: safe to repeat, so retried while etcd is unreachable (failover between endpoints). */
  private async read<T>(f: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await this.call(f);
      } catch (e) {
        const wait = READ_RETRIES_MS[i];
        if (wait === undefined || !(e instanceof StoreError) || e.code !== 'unreachable' || this.closed) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private async call<T>(f: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError('closed', 'the store is closed');
    try {
      const r = await f();
      this.problem = undefined;
      return r;
    } catch (e) {
      const se = storeErrorOf(e);
      if (se.code === 'unreachable') this.problem = se.message;
      else this.problem = undefined;
      throw se;
    }
  }

  private compare(c: Compare): PbCompare {
    const target = COMPARE_TARGET[c.target];
    const result = COMPARE_RESULT[c.result];
    if (c.target === 'value') return { key: this.k(c.key), target, result, value: c.value as Uint8Array };
    return { key: this.k(c.key), target, result, number: c.value as number };
  }

  private op(op: TxnOp): PbRequestOp {
    switch (op.op) {
      case 'put':
        return { put: { key: this.k(op.key), value: op.value } };
      case 'delete':
        return { delete: { key: this.k(op.key), ...(op.end !== undefined ? { end: this.end(op.end) } : {}) } };
      default:
        return { range: { key: this.k(op.key) } };
    }
  }

  private response(res: PbResponseOp, op: TxnOp, revision: Revision): OpResponse {
    if (res.kind === 'put') return { op: 'put', revision, prev: res.prev ? this.kv(res.prev) : undefined };
    if (res.kind === 'delete') return { op: 'delete', deleted: res.prev.map((kv) => this.kv(kv)) };
    if (op.op !== 'get') throw new StoreError('unreachable', 'etcd answered a transaction with unexpected responses');
    return { op: 'get', kv: res.kvs[0] ? this.kv(res.kvs[0]) : undefined };
  }
}

/**
 * One etcd watch as a ChangeStream. Batches are etcd's watch responses (etcd never splits one
 * revision's events across responses unless asked to fragment). A disconnection resumes from
 * the stream's position on a new gRPC stream after a short backoff; a compaction past the
 * position ends it with `compacted`.
 */
class EtcdChangeStream implements ChangeStream {
  private readonly batches: ChangeEvent[][] = [];
  private failure: StoreError | undefined;
  private waiter: { resolve: (b: ChangeEvent[]) => void; reject: (e: unknown) => void } | undefined;
  private duplex: BidiStream | undefined;
  private ended = false;
  /** Revision after everything etcd has sent (events and progress), handed out or not. */
  private next_: Revision;
  /** Revision after the last batch handed to the consumer. */
  private handed: Revision;
  /** ChangeStream.position: where the next batch starts once the consumer comes back. */
  private pos: Revision;
  private progressAsked = 0;
  private backoffMs = 50;

  constructor(
    private readonly store: EtcdStore,
    from: Revision,
    private readonly key: string,
    private readonly end: string | undefined,
  ) {
    this.next_ = this.handed = this.pos = from;
    // Not even from the compacted revision itself: etcd's compaction at R drops a delete made at
    // R, so a watch from R could miss it (the model check found this).
    if (from > 0 && from <= store.compactedRevision()) {
      this.fail(new StoreError('compacted', `revision ${from} is compacted (at ${store.compactedRevision()})`));
    } else void this.connect();
  }

  get position(): Revision {
    return this.pos;
  }

  next(): Promise<ChangeEvent[]> {
    // The consumer has applied every batch handed out: it is past them, and past any progress
    // since, unless batches it has not taken yet wait here (their changes are not in its state:
    // a position past them let a watch cache claim a revision whose objects it did not hold).
    this.pos = this.batches.length > 0 ? this.handed : this.next_;
    const b = this.batches.shift();
    if (b) {
      this.handed = (b[b.length - 1] as ChangeEvent).kv.modRevision + 1;
      return Promise.resolve(b);
    }
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.askProgress();
    });
  }

  close(): void {
    if (this.ended) return;
    this.fail(new StoreError('closed', 'the change stream is closed'));
  }

  progress(): void {
    this.askProgress();
  }

  private connect(): void {
    if (this.ended) return;
    try {
      let d: BidiStream | undefined;
      // Handlers of a stream given up (after a reconnect or close) ignore what it still says.
      d = this.store.channel.stream(WATCH, {
        message: (m) => {
          if (this.duplex !== d) return;
          let res: PbWatchResponse;
          try {
            res = decodeWatch(m);
          } catch (e) {
            this.onDisconnect(e);
            return;
          }
          this.onResponse(res);
        },
        end: (e) => this.duplex === d && this.onDisconnect(e),
      });
      this.duplex = d;
      d.write(
        encodeWatchCreate(
          this.store.k(this.key),
          this.end !== undefined ? this.store.end(this.end) : undefined,
          this.next_ > 0 ? this.next_ : this.store.currentRevision() + 1,
        ),
      );
    } catch (e) {
      this.onDisconnect(e);
    }
  }

  private onDisconnect(e: unknown): void {
    if (this.ended) return;
    this.duplex?.close();
    this.duplex = undefined;
    const se = storeErrorOf(e);
    if (se.code === 'compacted' || se.code === 'closed') {
      this.fail(se);
      return;
    }
    // Resume where we are after a backoff (the client fails over between endpoints).
    setTimeout(() => void this.connect(), this.backoffMs).unref?.();
    this.backoffMs = Math.min(this.backoffMs * 2, 2000);
  }

  private onResponse(res: PbWatchResponse): void {
    if (this.ended) return;
    this.backoffMs = 50;
    if (res.canceled || res.compactRevision > 0) {
      const at = res.compactRevision;
      if (at > 0) {
        this.store.compactedAt(at);
        this.fail(new StoreError('compacted', `revision ${this.next_} is compacted (at ${at})`));
      } else this.fail(new StoreError('watch-cancelled', `etcd cancelled the watch: ${res.cancelReason}`));
      return;
    }
    const header = this.store.seen(res.revision);
    if (res.created && res.events.length === 0) return;
    if (res.events.length === 0) {
      // A progress notification: every event up to the header's revision has been sent.
      if (header + 1 > this.next_) {
        this.next_ = header + 1;
        this.deliver([]);
      }
      return;
    }
    const batch = res.events.map((ev): ChangeEvent => {
      const kv = this.store.kv(ev.kv);
      const prev = ev.prev ? this.store.kv(ev.prev) : undefined;
      if (ev.type === 1) {
        return {
          type: 'delete',
          kv: { key: kv.key, value: new Uint8Array(0), createRevision: 0, modRevision: kv.modRevision, version: 0 },
          prev,
        };
      }
      return { type: 'put', kv, prev };
    });
    this.next_ = (batch[batch.length - 1] as ChangeEvent).kv.modRevision + 1;
    this.deliver(batch);
  }

  /** Hand a batch to the waiting consumer, or keep it; an empty batch only wakes a waiter's position. */
  private deliver(batch: ChangeEvent[]): void {
    const w = this.waiter;
    if (batch.length === 0) {
      // Progress: the consumer's position moves only when it comes back (ChangeStream.position).
      if (w && this.batches.length === 0) this.pos = this.next_;
      return;
    }
    if (w) {
      this.waiter = undefined;
      this.handed = (batch[batch.length - 1] as ChangeEvent).kv.modRevision + 1;
      w.resolve(batch);
    } else this.batches.push(batch);
  }

  /** While waiting behind the store's revision, ask etcd where this watch is (at most every 50 ms). */
  private askProgress(): void {
    if (!this.duplex || this.store.currentRevision() < this.next_) return;
    const now = Date.now();
    if (now - this.progressAsked < 50) {
      setTimeout(() => this.waiter && this.askProgress(), 50).unref?.();
      return;
    }
    this.progressAsked = now;
    try {
      this.duplex.write(encodeWatchProgress());
    } catch {
      // the disconnect handler takes over
    }
  }

  private fail(e: StoreError): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = e;
    this.store.forget(this);
    this.duplex?.close();
    this.duplex = undefined;
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(e);
  }
}

export const decodeKey = (u: Uint8Array): string => dec.decode(u);
export const encodeKey = (s: string): Uint8Array => enc.encode(s);
