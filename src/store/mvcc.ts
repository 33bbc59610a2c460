/**
 * The embedded MVCC store: the default backend of the API server.
 *
 * State lives in memory (KeyIndex: key → revision history, the keys in order, plus the change log of
 * retained revisions: change-log.ts); durability comes from the WAL (wal.ts) and periodic
 * snapshots (snapshot.ts, scheduled by maintenance.ts). Writes are serialised on the event loop:
 * a transaction evaluates its compares, takes the next revision and applies its writes to memory
 * at once (so the next transaction's compares see it), then waits for the WAL to make it durable.
 * Readers and watchers see only durable revisions (`committed`), so nothing not yet acknowledged
 * is ever observed.
 *
 *     rev (newest, pending included) >= committed (durable, visible) >= compacted (oldest readable)
 *
 * If the WAL fails, the pending writes can never become durable: the store refuses every later
 * write with `unavailable` (reads keep serving the durable state).
 *
 * After a restart, history older than the snapshot's revision is gone: it behaves as compacted.
 *
 * This file is the core: opening and recovery (the snapshot loaded, the WAL replayed), reads,
 * transactions and their durability, compaction's revision. Two parts are small classes the store
 * owns and calls directly, each one concept with state of its own:
 *
 *   change-log.ts   ChangeLog: the keys each retained revision wrote, the open change streams
 *                   indexed by prefix, and the events read back for a stream
 *   maintenance.ts  Maintenance: snapshots (started by WAL growth, paced) and the index's and
 *                   spill files' part of a compaction, which exclude each other
 *
 * A transaction reaches them with plain method calls (changes.append for its revision,
 * maintenance.afterDurable once it is durable), nothing allocated or looked up for the call.
 * Imports point one way: they import what they hold (key-index.ts, change-stream.ts, wal.ts,
 * snapshot.ts), never this file.
 */
import * as path from 'node:path';
import { ChangeLog } from './change-log';
import { inRange, MvccChangeStream } from './change-stream';
import { decodeBody, encodeCompactBody, encodeTxnBody, type LoggedOp, Writer } from './codec';
import { type DirLock, lockDir } from './dir-lock';
import { type Entry, isTombstone, KeyIndex, tombstone } from './key-index';
import { Maintenance } from './maintenance';
import type { PackedValue } from './packed';
import { valueSlabs } from './slabs';
import { loadSnapshot } from './snapshot';
import { HistorySpill, type SpillOptions } from './spill';
import {
  type ChangeEvent,
  type ChangeStream,
  type Compare,
  type KeyValue,
  type KV,
  type OpResponse,
  type RangeOptions,
  type RangeResult,
  type Revision,
  StoreError,
  type Txn,
  type TxnOp,
  type TxnResult,
  type WatchOptions,
} from './types';
import { Wal, type WalRecoveryReport } from './wal';

export interface MvccOptions {
  /** Data directory. Absent: memory only, nothing persisted (unit tests, throwaway runs). */
  dir?: string;
  /** 'always' (default): acknowledged writes survive power loss. 'none': throwaway benchmarks only. */
  fsync?: 'always' | 'none';
  /** WAL segment size (default 64 MiB). */
  segmentBytes?: number;
  /**
   * Snapshot when the WAL since the last snapshot exceeds max(this, last snapshot's size):
   * replay after a restart then costs at most about one snapshot load, and snapshot writing
   * at most doubles the bytes written. Default 128 MiB, about what etcd's default
   * snapshot-count (100,000 entries) is with 1 KB objects: a store smaller than that is not
   * rewritten every 64 MiB of writes (a snapshot copies and checksums every value on the main
   * thread: ~8% of the CPU of a create burst with 64 MiB), for at most ~0.5 s more of replay.
   */
  snapshotMinBytes?: number;
  /** Most bytes a second a snapshot started by WAL growth writes (default SNAPSHOT_PACE_BYTES_PER_S; 0: no limit). */
  snapshotPaceBytesPerSecond?: number;
  /** Most revisions handed to a change stream in one batch (bounds one next()'s work). */
  watchBatchRevisions?: number;
  /** Superseded versions' values go to files under `<dir>/history` (spill.ts); only with `dir`. */
  spill?: SpillOptions;
  logger?: (msg: string) => void;
}

export interface StoreStats {
  revision: Revision;
  committed: Revision;
  compacted: Revision;
  keys: number;
  retainedRevisions: number;
  walSegments: number;
  walBatches: number;
  walFsyncs: number;
  walRecords: number;
  snapshots: number;
  /** Compactions this process made (not those replayed from the WAL at open). */
  compactions: number;
  /** Superseded versions whose values were spilled to files, and the files holding them now. */
  spilledVersions: number;
  spillFiles: number;
}

interface Signal {
  promise: Promise<void>;
  resolve: () => void;
}

function signal(): Signal {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function bytesCompare(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

export class MvccStore implements KV {
  private readonly index = new KeyIndex();
  /** The keys each retained revision wrote, and the open change streams (change-log.ts). */
  private readonly changes = new ChangeLog(this.index);
  private rev: Revision = 0;
  private committed: Revision = 0;
  private compacted: Revision = 0;
  private wake = signal();
  private broken: StoreError | undefined;
  private closed = false;
  private compactions = 0;
  private readonly w = new Writer(4096);

  private wal: Wal | undefined;
  /** This process's hold on the directory (dir-lock.ts), from open to close. */
  private lock: DirLock | undefined;
  private readonly spill: HistorySpill | undefined;
  private spillTimer: ReturnType<typeof setInterval> | undefined;
  /** Snapshots, and the index's and spill files' part of compactions (maintenance.ts). */
  private readonly maintenance: Maintenance;

  private constructor(private readonly opts: MvccOptions) {
    if (opts.dir !== undefined) {
      this.spill = new HistorySpill(path.join(opts.dir, 'history'), this.index, opts.spill, opts.logger);
      this.spillTimer = setInterval(() => this.spillDue(), 250);
      this.spillTimer.unref?.();
    }
    this.maintenance = new Maintenance(this, opts, this.index, this.spill);
  }

  /** Open (and recover) a store. Throws WalCorruptError / SnapshotCorruptError on corruption. */
  static async open(opts: MvccOptions = {}): Promise<MvccStore> {
    return MvccStore.openWithReport(opts).then((r) => r.store);
  }

  static async openWithReport(opts: MvccOptions = {}): Promise<{ store: MvccStore; report: WalRecoveryReport | undefined }> {
    const store = new MvccStore(opts);
    if (opts.dir === undefined) return { store, report: undefined };
    const lock = lockDir(opts.dir);
    if (!lock.held) opts.logger?.(`store: ${opts.dir} is not locked against a second server (${lock.reason}): run one at a time`);
    try {
      return MvccStore.load(store, opts.dir, opts, lock);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  private static load(
    store: MvccStore,
    dir: string,
    opts: MvccOptions,
    lock: DirLock,
  ): { store: MvccStore; report: WalRecoveryReport | undefined } {
    store.lock = lock;
    let maxRev = 0;
    // Loaded values are views into the files' buffers: the spill reads superseded ones back from
    // those files rather than writing them again (HistorySpill.borrow).
    const borrow = (file: string, buf: Uint8Array) => store.spill?.borrow(file, buf);
    const snapRev = loadSnapshot(
      path.join(dir, 'snap'),
      (kv) => {
        store.index.unsafeLoad(kv);
        if (kv.modRevision > maxRev) maxRev = kv.modRevision;
      },
      borrow,
    );
    if (maxRev > snapRev) throw new StoreError('corrupt', `snapshot at ${snapRev} holds a key at revision ${maxRev}`);
    store.rev = store.committed = store.compacted = snapRev;
    store.changes.startAfter(snapRev);
    const { wal, report } = Wal.open(
      { dir: path.join(dir, 'wal'), fsync: opts.fsync, segmentBytes: opts.segmentBytes, logger: opts.logger },
      snapRev,
      (rev, body) => store.replay(rev, body),
      borrow,
    );
    wal.onDurable = (rev) => store.onDurable(rev);
    store.wal = store.maintenance.wal = wal;
    return { store, report };
  }

  /** Apply one recovered WAL record. */
  private replay(rev: Revision, body: Uint8Array): void {
    const b = decodeBody(body);
    if (b.type === 'compact') {
      if (rev !== this.rev) throw new Error(`compaction logged at ${rev}, store at ${this.rev}`);
      if (b.revision > this.compacted)
        this.applyCompact(b.revision, true)?.catch((e) =>
          this.opts.logger?.(`store: removing history spill files at replay: ${String(e)}`),
        );
      return;
    }
    if (rev !== this.rev + 1) throw new Error(`revision gap: expected ${this.rev + 1}, found ${rev}`);
    const keys: string[] = [];
    for (const o of b.ops) {
      if (o.op === 'put') this.applyPut(o.key, o.value, rev, keys);
      else {
        const prev = this.index.latest(o.key);
        if (prev === undefined) throw new Error(`delete of absent key ${o.key}`);
        this.applyDelete(prev, rev, keys);
      }
    }
    this.rev = this.committed = rev;
    this.changes.append(rev, keys.length === 1 ? (keys[0] as string) : keys);
    if (this.spill?.overBound) this.spill.spillDue();
  }

  currentRevision(): Revision {
    return this.committed;
  }

  compactedRevision(): Revision {
    return this.compacted;
  }

  async range(key: string, opts: RangeOptions = {}): Promise<RangeResult> {
    return this.rangeSync(key, opts);
  }

  /** KV.latest: the newest version, durable or not (read-modify-write only). */
  adoptPacked(key: string, rev: Revision, raw: Uint8Array, packed: PackedValue): void {
    this.index.packNewest(key, rev, raw, packed);
  }

  latest(key: string): KeyValue | undefined {
    this.checkReadable();
    return this.index.latest(key);
  }

  /** KV.durable. */
  durable(revision: Revision): Promise<void> {
    return this.waitCommitted(revision);
  }

  /** range() without the promise, for in-process callers on the hot path. */
  rangeSync(key: string, opts: RangeOptions = {}): RangeResult {
    this.checkReadable();
    const rev = opts.revision || this.committed;
    if (rev > this.committed)
      throw new StoreError('future-revision', `mvcc: required revision ${rev} is a future revision (current ${this.committed})`);
    if (rev < this.compacted)
      throw new StoreError('compacted', `mvcc: required revision ${rev} has been compacted (compacted ${this.compacted})`);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Number.POSITIVE_INFINITY;
    const kvs: KeyValue[] = [];
    let count = 0;
    const skipCount = opts.skipCount === true;
    this.index.scan(key, opts.end, rev, (kv) => {
      count++;
      if (kvs.length < limit) {
        kvs.push(kv);
        return true;
      }
      return !skipCount;
    });
    return { kvs, count, more: count > kvs.length, revision: rev };
  }

  async txn(t: Txn): Promise<TxnResult> {
    this.checkWritable();
    const succeeded = (t.compare ?? []).every((c) => this.evaluate(c));
    const ops = (succeeded ? t.success : t.failure) ?? [];
    const writes = this.validate(ops);
    if (writes === 0) {
      const responses: OpResponse[] = ops.map((o) => ({ op: 'get', kv: this.index.latest(o.key) }));
      const observed = this.rev;
      // What we observed may include writes not yet durable: answer only once they are.
      if (observed > this.committed) await this.waitCommitted(observed);
      return { succeeded, revision: observed, responses };
    }
    const rev = this.rev + 1;
    const logged: LoggedOp[] = [];
    const keys: string[] = [];
    const responses: OpResponse[] = [];
    for (const o of ops) {
      if (o.op === 'get') {
        responses.push({ op: 'get', kv: this.index.latest(o.key) });
      } else if (o.op === 'put') {
        // The index keeps a copy packed into a slab, not the caller's buffer (slabs.ts).
        const prev = this.applyPut(o.key, valueSlabs.pack(o.value), rev, keys);
        logged.push(o);
        responses.push({ op: 'put', revision: rev, prev });
      } else {
        const deleted: KeyValue[] = [];
        this.index.scan(o.key, o.end, Number.POSITIVE_INFINITY, (kv) => {
          deleted.push(kv);
          return true;
        });
        for (const prev of deleted) {
          this.applyDelete(prev, rev, keys);
          logged.push({ op: 'delete', key: prev.key });
        }
        responses.push({ op: 'delete', deleted });
      }
    }
    this.rev = rev;
    this.changes.append(rev, keys.length === 1 ? (keys[0] as string) : keys);
    if (this.spill?.overBound) this.spillDue();
    await this.persist(rev, (w) => encodeTxnBody(w, logged));
    return { succeeded, revision: rev, responses };
  }

  async compact(revision: Revision): Promise<void> {
    this.checkWritable();
    if (revision > this.committed) throw new StoreError('future-revision', `mvcc: compaction revision ${revision} is a future revision`);
    if (revision <= this.compacted) throw new StoreError('compacted', `mvcc: revision ${revision} has already been compacted`);
    await this.persist(this.rev, (w) => encodeCompactBody(w, revision));
    if (revision > this.compacted) {
      this.compactions++;
      await this.applyCompact(revision);
    }
  }

  watch(fromRevision: Revision, opts: WatchOptions = {}): ChangeStream {
    const s = new MvccChangeStream(this, Math.max(1, fromRevision), opts.key, opts.end);
    this.changes.add(s);
    return s;
  }

  /** @internal A stream is closed: no more marking. */
  unregister(s: MvccChangeStream): void {
    this.changes.remove(s);
  }

  /** Spill the superseded values that are due (spill.ts). */
  private spillDue(): void {
    if (this.closed) return;
    this.spill?.spillDue();
  }

  /**
   * Slow the WAL's fsync by `ms` until the returned release is called (Wal.holdFsync): every
   * write committed meanwhile waits, as on a slow disk. undefined for a store without a WAL
   * (in memory), which has no fsync to slow.
   */
  holdFsync(ms: number): (() => void) | undefined {
    return this.wal?.holdFsync(ms);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // A snapshot being written in the background finishes at full speed.
    const snapshotting = this.maintenance.rushSnapshot();
    if (snapshotting) await snapshotting.catch(() => {});
    while (this.maintenance.compaction) await this.maintenance.compaction.catch(() => {});
    this.closed = true;
    if (this.spillTimer) clearInterval(this.spillTimer);
    this.spill?.close();
    await this.wal?.close();
    this.lock?.release();
    this.signalAll();
  }

  stats(): StoreStats {
    return {
      revision: this.rev,
      committed: this.committed,
      compacted: this.compacted,
      keys: this.index.size,
      retainedRevisions: this.changes.size,
      walSegments: this.wal?.segmentCount ?? 0,
      walBatches: this.wal?.stats.batches ?? 0,
      walFsyncs: this.wal?.stats.fsyncs ?? 0,
      walRecords: this.wal?.stats.records ?? 0,
      snapshots: this.maintenance.snapshots,
      compactions: this.compactions,
      spilledVersions: this.spill?.stats.spilled ?? 0,
      spillFiles: this.spill?.fileCount ?? 0,
    };
  }

  /** Take a snapshot now (normally scheduled by WAL growth, and paced); resolves when written, at full speed. */
  snapshot(): Promise<void> {
    return this.maintenance.snapshot();
  }

  // ---- change stream support -------------------------------------------------------------

  /** @internal Events of revisions [from, to] (to <= committed) of the keys `covers` takes. */
  eventsBetween(from: Revision, covers: { covers(key: string): boolean }): { events: ChangeEvent[]; next: Revision } {
    const to = Math.min(this.committed, from + (this.opts.watchBatchRevisions ?? 1000) - 1);
    return this.changes.eventsBetween(from, to, covers);
  }

  /** @internal Resolves on the next commit, close or failure. */
  nextSignal(): Promise<void> {
    return this.wake.promise;
  }

  /** @internal */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Why writes are refused (the WAL could not write or sync), or undefined while they work. */
  get failure(): StoreError | undefined {
    return this.broken;
  }

  /** @internal */
  get committedRevision(): Revision {
    return this.committed;
  }

  /** @internal Newest applied revision (durable or not). */
  get appliedRevision(): Revision {
    return this.rev;
  }

  // ---- internals ------------------------------------------------------------------------

  private checkReadable(): void {
    if (this.closed) throw new StoreError('closed', 'store is closed');
  }

  private checkWritable(): void {
    this.checkReadable();
    if (this.broken) throw this.broken;
  }

  private evaluate(c: Compare): boolean {
    const kv = this.index.latest(c.key);
    let cmp: number;
    if (c.target === 'value') {
      if (kv === undefined || !(c.value instanceof Uint8Array)) return false;
      cmp = bytesCompare(kv.value, c.value);
    } else {
      const have = kv === undefined ? 0 : c.target === 'mod' ? kv.modRevision : c.target === 'create' ? kv.createRevision : kv.version;
      cmp = have - (c.value as number);
    }
    switch (c.result) {
      case '=':
        return cmp === 0;
      case '!=':
        return cmp !== 0;
      case '<':
        return cmp < 0;
      case '>':
        return cmp > 0;
    }
  }

  /** Checks a branch before anything is applied; returns its number of write operations. */
  private validate(ops: readonly TxnOp[]): number {
    let writes = 0;
    let written: Set<string> | undefined;
    for (const o of ops) {
      if (o.key === '') throw new TypeError('store: empty key');
      if (o.op === 'get') continue;
      writes++;
      if (ops.length === 1) break;
      written ??= new Set();
      if (o.op === 'put') {
        if (written.has(o.key)) throw new TypeError(`store: duplicate key ${o.key} in transaction`);
        written.add(o.key);
      } else {
        this.index.scan(o.key, o.end, Number.POSITIVE_INFINITY, (kv) => {
          if (written?.has(kv.key)) throw new TypeError(`store: duplicate key ${kv.key} in transaction`);
          written?.add(kv.key);
          return true;
        });
      }
    }
    if (written && written.size > 0) {
      for (const o of ops) {
        if (o.op !== 'delete' || o.end === undefined) continue;
        for (const o2 of ops) {
          if (o2.op === 'put' && inRange(o2.key, o.key, o.end)) throw new TypeError(`store: put of ${o2.key} overlaps a deleted range`);
        }
      }
    }
    return writes;
  }

  /** Returns the version it superseded; adds the key (the index's own string) to `keys`. */
  private applyPut(key: string, value: Uint8Array, rev: Revision, keys: string[]): KeyValue | undefined {
    const h = this.index.versions(key);
    // The newest version is never a spilled slot.
    const last = h === undefined ? undefined : (h[h.length - 1] as KeyValue);
    const prev = last === undefined || isTombstone(last) ? undefined : last;
    const kv: KeyValue = {
      // Every version shares the first one's key string (the caller's is a fresh one per write).
      key: last === undefined ? key : last.key,
      value,
      createRevision: prev ? prev.createRevision : rev,
      modRevision: rev,
      version: prev ? prev.version + 1 : 1,
    };
    this.index.appendTo(h, kv);
    keys.push(kv.key);
    if (prev !== undefined) this.spill?.superseded(prev, h as Entry[]);
    return prev;
  }

  private applyDelete(prev: KeyValue, rev: Revision, keys: string[]): void {
    this.index.append(tombstone(prev.key, rev));
    keys.push(prev.key);
    this.spill?.superseded(prev, this.index.versions(prev.key) as Entry[]);
  }

  private async persist(rev: Revision, encode: (w: Writer) => void): Promise<void> {
    if (this.wal === undefined) {
      this.onDurable(rev);
      return;
    }
    this.w.len = 0;
    encode(this.w);
    try {
      await this.wal.append(rev, this.w.take());
    } catch (e) {
      this.broken ??= e instanceof StoreError ? e : new StoreError('unavailable', String(e));
      this.signalAll();
      throw this.broken;
    }
  }

  private onDurable(rev: Revision): void {
    if (rev > this.committed) this.committed = rev;
    this.signalAll();
    // A snapshot starts if the WAL grew enough since the last one (maintenance.ts).
    if (!this.closed) this.maintenance.afterDurable();
  }

  private signalAll(): void {
    const s = this.wake;
    this.wake = signal();
    s.resolve();
  }

  private async waitCommitted(rev: Revision): Promise<void> {
    while (this.committed < rev) {
      if (this.broken) throw this.broken;
      if (this.closed) throw new StoreError('closed', 'store is closed');
      await this.wake.promise;
    }
  }

  /**
   * Reads below `revision` are refused from now on; the index and the spill files follow (see
   * Maintenance.compact). Resolves when they have. `atOnce`: the index in one go (replay at open).
   */
  private applyCompact(revision: Revision, atOnce = false): Promise<void> | undefined {
    this.compacted = revision;
    this.changes.dropBefore(Math.min(revision, this.committed + 1));
    return this.maintenance.compact(revision, atOnce);
  }
}

export { isTombstone };
