/**
 * The embedded MVCC store: the default backend of the API server.
 *
 * State lives in memory (KeyIndex: key → revision history, the keys in order, plus the change log of
 * retained revisions); durability comes from the WAL (wal.ts) and periodic snapshots
 * (snapshot.ts). Writes are serialised on the event loop: a transaction evaluates its compares,
 * takes the next revision and applies its writes to memory at once (so the next transaction's
 * compares see it), then waits for the WAL to make it durable. Readers and watchers see only
 * durable revisions (`committed`), so nothing not yet acknowledged is ever observed.
 *
 *     rev (newest, pending included) >= committed (durable, visible) >= compacted (oldest readable)
 *
 * If the WAL fails, the pending writes can never become durable: the store refuses every later
 * write with `unavailable` (reads keep serving the durable state).
 *
 * After a restart, history older than the snapshot's revision is gone: it behaves as compacted.
 */
import * as path from 'node:path';
import { inRange, MvccChangeStream } from './change-stream';
import { decodeBody, encodeCompactBody, encodeTxnBody, type LoggedOp, Writer } from './codec';
import { type DirLock, lockDir } from './dir-lock';
import { type Entry, isTombstone, KeyIndex, tombstone } from './key-index';
import type { PackedValue } from './packed';
import { valueSlabs } from './slabs';
import { loadSnapshot, SNAPSHOT_PACE_BYTES_PER_S, writeSnapshot } from './snapshot';
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
  /** Open change streams, by prefix range (see watch) and the rest. */
  private readonly prefixStreams = new Map<string, Set<MvccChangeStream>>();
  private readonly otherStreams = new Set<MvccChangeStream>();
  /**
   * log[i] names the keys written at revision logStart + i (one key, the usual case, or several);
   * the events themselves are read back from the index (eventAt), so the log holds no versions.
   */
  private log: (string | string[])[] = [];
  private logStart: Revision = 1;
  private rev: Revision = 0;
  private committed: Revision = 0;
  private compacted: Revision = 0;
  private wake = signal();
  private broken: StoreError | undefined;
  private closed = false;
  private snapshotting: Promise<void> | undefined;
  /** The snapshot being written goes at full speed (someone waits for it: snapshot(), close()). */
  private hurry = false;
  /** The index compaction in progress (compactIndex). */
  private compacting: Promise<void> | undefined;
  private deferredCompact: Revision = 0;
  private lastSnapshotBytes = 0;
  private snapshots = 0;
  private compactions = 0;
  private readonly w = new Writer(4096);

  private wal: Wal | undefined;
  /** This process's hold on the directory (dir-lock.ts), from open to close. */
  private lock: DirLock | undefined;
  private readonly spill: HistorySpill | undefined;
  private spillTimer: ReturnType<typeof setInterval> | undefined;

  private constructor(private readonly opts: MvccOptions) {
    if (opts.dir !== undefined) {
      this.spill = new HistorySpill(path.join(opts.dir, 'history'), this.index, opts.spill, opts.logger);
      this.spillTimer = setInterval(() => this.spillDue(), 250);
      this.spillTimer.unref?.();
    }
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
    store.logStart = snapRev + 1;
    const { wal, report } = Wal.open(
      { dir: path.join(dir, 'wal'), fsync: opts.fsync, segmentBytes: opts.segmentBytes, logger: opts.logger },
      snapRev,
      (rev, body) => store.replay(rev, body),
      borrow,
    );
    wal.onDurable = (rev) => store.onDurable(rev);
    store.wal = wal;
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
    this.appendLog(rev, keys.length === 1 ? (keys[0] as string) : keys);
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
    this.appendLog(rev, keys.length === 1 ? (keys[0] as string) : keys);
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
    // A stream over keys under a prefix ending in '/' (every watch cache's) is found from an
    // event's key by the key's own '/'-prefixes; any other range is checked on every event.
    const prefix = s.prefix?.endsWith('/') ? s.prefix : undefined;
    if (prefix !== undefined) {
      let set = this.prefixStreams.get(prefix);
      if (!set) {
        set = new Set();
        this.prefixStreams.set(prefix, set);
        this.streamsByParent.clear();
      }
      set.add(s);
    } else this.otherStreams.add(s);
    return s;
  }

  /** @internal A stream is closed: no more marking. */
  unregister(s: MvccChangeStream): void {
    this.otherStreams.delete(s);
    for (const [p, set] of this.prefixStreams)
      if (set.delete(s) && set.size === 0) {
        this.prefixStreams.delete(p);
        this.streamsByParent.clear();
      }
  }

  /**
   * The events of a revision go to the log, and each open stream whose range holds one of them
   * learns that revision (matched): a stream scans the log only from the first revision that
   * may hold one of its events, and skips ahead when none can (with a cache per resource, most
   * streams match no event of a write).
   */
  private appendLog(rev: Revision, keys: string | string[]): void {
    this.log.push(keys);
    if (typeof keys === 'string') this.markStreams(rev, keys);
    else for (const key of keys) this.markStreams(rev, key);
  }

  private markStreams(rev: Revision, key: string): void {
    for (const s of this.otherStreams) if (s.covers(key)) s.matched(rev);
    if (this.prefixStreams.size === 0) return;
    for (const set of this.streamSetsOf(key)) for (const st of set) st.matched(rev);
  }

  /**
   * The event of `key` at `rev` (a revision in the log), read from the key's versions. The log
   * keeps the compacted revision itself, whose versions the index may have dropped: a delete there
   * left no tombstone, and what either kind of write superseded is gone (as etcd, whose watch
   * from the compacted revision has no previous values either).
   */
  private eventAt(key: string, rev: Revision): ChangeEvent {
    const w = this.index.written(key, rev);
    if (w === undefined) return { type: 'delete', kv: tombstone(key, rev), prev: undefined };
    return { type: isTombstone(w.kv) ? 'delete' : 'put', kv: w.kv, prev: w.prev };
  }

  /** Spill the superseded values that are due (spill.ts). */
  private spillDue(): void {
    if (this.closed) return;
    this.spill?.spillDue();
  }

  /**
   * The prefix streams' sets whose prefix is one of the key's own '/'-prefixes, found once per
   * parent path (`/registry/core/configmaps/ns/`) rather than by a slice and a lookup per '/'
   * on every write. Cleared when a prefix gains its first stream or loses its last.
   */
  private readonly streamsByParent = new Map<string, Set<MvccChangeStream>[]>();

  private streamSetsOf(key: string): Set<MvccChangeStream>[] {
    const parent = key.slice(0, key.lastIndexOf('/') + 1);
    let sets = this.streamsByParent.get(parent);
    if (sets === undefined) {
      sets = [];
      for (let i = parent.indexOf('/'); i >= 0; i = parent.indexOf('/', i + 1)) {
        const set = this.prefixStreams.get(parent.slice(0, i + 1));
        if (set) sets.push(set);
      }
      if (this.streamsByParent.size >= 10_000) this.streamsByParent.clear();
      this.streamsByParent.set(parent, sets);
    }
    return sets;
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
    this.hurry = true;
    if (this.snapshotting) await this.snapshotting.catch(() => {});
    while (this.compacting) await this.compacting.catch(() => {});
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
      retainedRevisions: this.log.length,
      walSegments: this.wal?.segmentCount ?? 0,
      walBatches: this.wal?.stats.batches ?? 0,
      walFsyncs: this.wal?.stats.fsyncs ?? 0,
      walRecords: this.wal?.stats.records ?? 0,
      snapshots: this.snapshots,
      compactions: this.compactions,
      spilledVersions: this.spill?.stats.spilled ?? 0,
      spillFiles: this.spill?.fileCount ?? 0,
    };
  }

  /** Take a snapshot now (normally scheduled by WAL growth, and paced); resolves when written, at full speed. */
  async snapshot(): Promise<void> {
    this.hurry = true;
    while (this.compacting) await this.compacting.catch(() => {});
    if (!this.snapshotting) this.startSnapshot();
    await this.snapshotting;
  }

  // ---- change stream support -------------------------------------------------------------

  /** @internal Events of revisions [from, to] (to <= committed) of the keys `covers` takes. */
  eventsBetween(from: Revision, covers: { covers(key: string): boolean }): { events: ChangeEvent[]; next: Revision } {
    if (from < this.logStart) throw new StoreError('compacted', `mvcc: required revision ${from} has been compacted`);
    const to = Math.min(this.committed, from + (this.opts.watchBatchRevisions ?? 1000) - 1);
    const events: ChangeEvent[] = [];
    for (let r = from; r <= to; r++) {
      const keys = this.log[r - this.logStart] as string | string[];
      if (typeof keys === 'string') {
        if (covers.covers(keys)) events.push(this.eventAt(keys, r));
      } else for (const key of keys) if (covers.covers(key)) events.push(this.eventAt(key, r));
    }
    return { events, next: Math.max(from, to + 1) };
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
    const wal = this.wal;
    if (
      wal &&
      !this.snapshotting &&
      !this.compacting &&
      !this.closed &&
      wal.bytesSinceRelease >= Math.max(this.opts.snapshotMinBytes ?? 128 << 20, this.lastSnapshotBytes)
    ) {
      this.startSnapshot();
    }
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
   * compactIndex). Resolves when they have. `atOnce`: the index in one go (replay at open).
   */
  private applyCompact(revision: Revision, atOnce = false): Promise<void> | undefined {
    this.compacted = revision;
    const drop = Math.min(revision, this.committed + 1) - this.logStart;
    if (drop > 0) {
      this.log = this.log.slice(drop);
      this.logStart += drop;
    }
    if (atOnce) {
      this.index.compact(revision);
      return this.spill?.release(revision);
    }
    if (this.snapshotting) this.deferredCompact = Math.max(this.deferredCompact, revision);
    else return this.compactIndex(revision);
    return undefined;
  }

  /**
   * Drop old versions from the index, a step of keys per turn of the event loop, then delete the
   * spill files that held only those (unlinked off the loop). Compactions run one after another,
   * and no snapshot starts while one runs (as none runs during a snapshot: deferredCompact).
   */
  private compactIndex(revision: Revision): Promise<void> {
    const before = this.compacting?.catch(() => {}) ?? Promise.resolve();
    const run = before.then(async () => {
      await this.index.compactInSteps(revision);
      await this.spill?.release(revision);
    });
    const tracked: Promise<void> = run.finally(() => {
      if (this.compacting === tracked) this.compacting = undefined;
    });
    this.compacting = tracked;
    return tracked;
  }

  private startSnapshot(): void {
    const dir = this.opts.dir;
    const wal = this.wal;
    if (dir === undefined || wal === undefined) return;
    const rev = this.committed;
    // WAL bytes written up to now are covered by this snapshot; bytes written while it is being
    // written are not, and count toward the next one.
    const covered = wal.bytesSinceRelease;
    const run = async () => {
      const started = performance.now();
      const live = this.index.liveReader(rev);
      this.opts.logger?.(`store: snapshot at revision ${rev} begins (${covered} bytes of log since the last)`);
      const res = await writeSnapshot(
        path.join(dir, 'snap'),
        rev,
        // 1,024 keys a chunk: a cold key's value is inflated as it is written (~3.5 us a pod),
        // and 4,096 of them held the event loop ~15-25 ms per chunk (density, 2026-11-28).
        (after) => live(after, 1024),
        this.opts.fsync ?? 'always',
        () => (this.hurry ? 0 : (this.opts.snapshotPaceBytesPerSecond ?? SNAPSHOT_PACE_BYTES_PER_S)),
      );
      await wal.releaseThrough(rev);
      wal.bytesSinceRelease = Math.max(0, wal.bytesSinceRelease - covered);
      this.lastSnapshotBytes = res.bytes;
      this.snapshots++;
      this.opts.logger?.(
        `store: snapshot at revision ${rev}: ${res.keys} keys, ${res.bytes} bytes in ${Math.round(performance.now() - started)} ms`,
      );
    };
    this.snapshotting = run()
      .catch((e) => {
        this.opts.logger?.(`store: snapshot at revision ${rev} failed: ${String(e)}`);
      })
      .finally(() => {
        this.snapshotting = undefined;
        this.hurry = false;
        if (this.deferredCompact > 0) {
          const rev = this.deferredCompact;
          this.deferredCompact = 0;
          this.compactIndex(rev).catch((e) =>
            this.opts.logger?.(`store: removing history spill files after compaction at ${rev}: ${String(e)}`),
          );
        }
      });
  }
}

export { isTombstone };
