/**
 * History off the heap: the values of superseded versions, spilled to files.
 *
 * The newest version of every key stays on the heap (every read, compare and write needs it).
 * A version that a later write superseded is needed only by reads at old revisions and by change
 * streams catching up, so once it has been superseded for `afterMs` its value is written to a
 * spill file under `<dir>/history`, and the index keeps a number in its place: a slot of this
 * spill's table, which holds the version's revisions, its version number and where its bytes are
 * in 32 bytes of typed arrays (no JS object per version: a million of them would cost 80 MB of
 * heap, and more of RSS). Readers get a SpilledValue made from the slot; reading its `value`
 * reads the bytes back (from the page cache, nearly always).
 *
 * Spill files are a cache of what the WAL already made durable, not a second log: they are never
 * synced, and a restart deletes them (history older than the last snapshot is gone after a
 * restart anyway; the WAL's replay rebuilds the rest and spills it again).
 *
 * Compaction reclaims the space by whole files: a version superseded at revision S is dropped by
 * any compaction at a revision >= S, so a file whose newest superseding revision is <= the
 * compacted revision holds nothing readable and is deleted. Versions are spilled in the order they
 * were superseded, so files fall due oldest first.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Entry, KeyIndex, SpillSlots } from './key-index';
import { PackedKeyValue } from './packed';
import { type KeyValue, type Revision, StoreError } from './types';

export interface SpillOptions {
  /** How long a superseded value stays on the heap (watchers read it right away). Default 5 s. */
  afterMs?: number;
  /** Spill at once, whatever their age, when superseded values on the heap exceed this. Default 64 MiB. */
  maxPendingBytes?: number;
  /** Values shorter than this stay on the heap (spilled, they would save little). Default 128. */
  minValueBytes?: number;
  /** Size at which a spill file is closed and the next one begun. Default 64 MiB (at most 2 GiB). */
  fileBytes?: number;
}

/** A descriptor of an unlinked file stays open this long, for readers that still hold its versions. */
const CLOSE_DELAY_MS = 30_000;
/** After a failed spill write, values stay on the heap this long before the next try. */
const PAUSE_MS = 10_000;

class SpillFile {
  readonly fd: number;
  /** Its number in the slot table. */
  readonly id: number;
  size = 0;
  /** Newest revision that superseded a version held here: compaction there frees the whole file. */
  maxSuccessor: Revision = 0;
  closed = false;

  constructor(
    readonly file: string,
    id: number,
    /** A WAL segment or snapshot the store loaded: read from, never written or deleted here. */
    readonly borrowed = false,
  ) {
    this.id = id;
    this.fd = fs.openSync(file, borrowed ? 'r' : 'w+');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/** A superseded version whose value lives in a spill file. */
export class SpilledValue implements KeyValue {
  constructor(
    readonly key: string,
    readonly createRevision: Revision,
    readonly modRevision: Revision,
    readonly version: number,
    private readonly file: SpillFile,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  /** Read back on every access: holding it would put the value back on the heap. */
  get value(): Uint8Array {
    const f = this.file;
    if (f.closed) throw new StoreError('compacted', `mvcc: the value of ${this.key} at revision ${this.modRevision} has been compacted`);
    const buf = new Uint8Array(this.length);
    for (let done = 0; done < this.length; ) {
      const n = fs.readSync(f.fd, buf, done, this.length - done, this.offset + done);
      if (n <= 0) throw new StoreError('unavailable', `mvcc: spill file ${f.file} ends at ${this.offset + done}`);
      done += n;
    }
    return buf;
  }
}

/** Values past this length stay on the heap (the slot table keeps lengths in 32 bits). */
const MAX_SPILLED = 2 ** 31;

export class HistorySpill implements SpillSlots {
  private readonly afterMs: number;
  private readonly maxPendingBytes: number;
  /** Superseded bytes per generation at most: a step of spilling over the bound (see spillDue). */
  private readonly genBytes: number;
  private readonly minValueBytes: number;
  private readonly fileBytes: number;
  private files: SpillFile[] = [];
  /** The spill file being written (the next spill begins a new one when it is full or released). */
  private current: SpillFile | undefined;
  /** Open files by id (deleted files leave when released). */
  private readonly byId = new Map<number, SpillFile>();
  private seq = 0;
  /** The slot table: modRevision and createRevision per slot, then version, file, offset, length. */
  private revs = new Float64Array(2 * 1024);
  private meta = new Uint32Array(4 * 1024);
  private nextSlot = 0;
  private readonly free: number[] = [];
  /** Files the store loaded whole, by the buffer holding them (see borrow). */
  private readonly loaded = new Map<ArrayBufferLike, { file: SpillFile; base: number }>();
  /** Superseded versions still on the heap, by the tick they were superseded in (oldest first). */
  private gens: { at: number; kvs: KeyValue[]; hs: Entry[][]; bytes: number }[] = [];
  private pendingBytes = 0;
  private pausedUntil = 0;
  stats = { spilled: 0, bytes: 0, filesDeleted: 0 };

  constructor(
    private readonly dir: string,
    private readonly index: KeyIndex,
    opts: SpillOptions = {},
    private readonly log: (msg: string) => void = () => {},
    private readonly clock: () => number = Date.now,
  ) {
    this.afterMs = opts.afterMs ?? 5_000;
    this.maxPendingBytes = opts.maxPendingBytes ?? 64 << 20;
    this.genBytes = Math.max(1, Math.min(1 << 20, this.maxPendingBytes / 16));
    this.minValueBytes = opts.minValueBytes ?? 128;
    this.fileBytes = Math.min(opts.fileBytes ?? 64 << 20, 2 ** 31);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    index.slots = this;
  }

  // ---- the slot table (SpillSlots) ------------------------------------------------------

  modRevision(slot: number): Revision {
    return this.revs[2 * slot] as number;
  }

  materialize(slot: number, key: string): KeyValue {
    const m = this.meta;
    const file = this.byId.get(m[4 * slot + 1] as number);
    if (file === undefined) throw new StoreError('compacted', `mvcc: a version of ${key} has been compacted`);
    return new SpilledValue(
      key,
      this.revs[2 * slot + 1] as number,
      this.revs[2 * slot] as number,
      m[4 * slot] as number,
      file,
      m[4 * slot + 2] as number,
      m[4 * slot + 3] as number,
    );
  }

  drop(slot: number): void {
    this.free.push(slot);
  }

  private allocSlot(kv: KeyValue, file: SpillFile, offset: number, length: number): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.nextSlot++;
      if (2 * slot >= this.revs.length) {
        const revs = new Float64Array(this.revs.length * 2);
        revs.set(this.revs);
        this.revs = revs;
        const meta = new Uint32Array(this.meta.length * 2);
        meta.set(this.meta);
        this.meta = meta;
      }
    }
    this.revs[2 * slot] = kv.modRevision;
    this.revs[2 * slot + 1] = kv.createRevision;
    const m = this.meta;
    m[4 * slot] = kv.version;
    m[4 * slot + 1] = file.id;
    m[4 * slot + 2] = offset;
    m[4 * slot + 3] = length;
    return slot;
  }

  /** Slots in use (spilled versions the index still holds). */
  get slotsInUse(): number {
    return this.nextSlot - this.free.length;
  }

  /**
   * The store loaded `file` (a snapshot or WAL segment) into `buf`, and loaded values are views
   * into it. A superseded value in such a buffer is already on disk: its slot points into the
   * file instead of copying the bytes to a spill file (at restart, every replayed update would
   * otherwise be written again). The file is opened for reading now, so it stays readable when
   * the WAL releases it after a snapshot; its descriptor closes when compaction frees it.
   */
  borrow(file: string, buf: Uint8Array): void {
    // Only a buffer that is exactly the file (not a slice of a shared pool) maps offsets safely.
    if (buf.byteOffset !== 0 || buf.byteLength !== buf.buffer.byteLength) return;
    const id = this.seq++;
    let f: SpillFile;
    try {
      f = new SpillFile(file, id, true);
    } catch {
      return; // Out of descriptors, say: its superseded values are copied to spill files instead.
    }
    this.files.push(f);
    this.byId.set(id, f);
    this.loaded.set(buf.buffer, { file: f, base: 0 });
  }

  /**
   * `kv` was just superseded by a later version of its key (a put or a delete), the last entry of
   * `h` (the key's history).
   */
  superseded(kv: KeyValue, h: Entry[]): void {
    if (kv instanceof SpilledValue) return;
    // A packed value's `value` inflates it: its length is known without that, and it was not
    // loaded from a file the store read.
    const packed = kv instanceof PackedKeyValue;
    const n = packed ? kv.packed.length : kv.value.length;
    if (n < this.minValueBytes || n >= MAX_SPILLED) return;
    const loaded = packed ? undefined : this.loaded.get(kv.value.buffer);
    if (loaded !== undefined && h[h.length - 2] === kv) {
      // Loaded from a file the store read at open (replay, mostly): already on disk, no wait.
      this.borrowSlot(h, h.length - 2, kv, loaded, (h[h.length - 1] as KeyValue).modRevision);
      return;
    }
    const now = this.clock();
    let g = this.gens[this.gens.length - 1];
    // One generation per 100 ms keeps the age check coarse and cheap; at most genBytes each, so
    // that spilling over the byte bound takes small steps whatever the write rate.
    if (g === undefined || now - g.at >= 100 || g.bytes >= this.genBytes) {
      g = { at: now, kvs: [], hs: [], bytes: 0 };
      this.gens.push(g);
    }
    g.kvs.push(kv);
    g.hs.push(h);
    g.bytes += n;
    this.pendingBytes += n;
  }

  private borrowSlot(h: Entry[], i: number, kv: KeyValue, loaded: { file: SpillFile; base: number }, successor: Revision): void {
    const f = loaded.file;
    h[i] = this.allocSlot(kv, f, loaded.base + kv.value.byteOffset, kv.value.length);
    if (successor > f.maxSuccessor) f.maxSuccessor = successor;
    this.stats.spilled++;
  }

  /** Whether pending values passed the byte bound (the store then spills before going on). */
  get overBound(): boolean {
    return this.pendingBytes > this.maxPendingBytes;
  }

  /**
   * Spill what has waited `afterMs`; over the byte bound, also the oldest generations until the
   * pending bytes are a sixteenth of the bound under it. Not everything at once: at 18 MB/s of
   * superseded values (13k patches/s of 1.4 KB) the bound is passed before the age, and spilling
   * the whole 64 MiB in one go stalled the event loop for ~200 ms each time (writes' p99 300 ms).
   */
  spillDue(): void {
    const cutoff = this.clock() - this.afterMs;
    const gens = this.gens;
    let n = 0;
    let left = this.pendingBytes;
    while (n < gens.length && (gens[n] as { at: number }).at <= cutoff) left -= (gens[n++] as { bytes: number }).bytes;
    const lowWater = this.maxPendingBytes - this.maxPendingBytes / 16;
    if (this.overBound) while (n < gens.length && left > lowWater) left -= (gens[n++] as { bytes: number }).bytes;
    if (n === 0) return;
    const due = this.gens.splice(0, n);
    for (const g of due) this.spill(g.kvs, g.hs);
  }

  private spill(kvs: KeyValue[], hs: Entry[][]): void {
    // Each value read once (a packed one is inflated on each read of `value`).
    const found: { h: Entry[]; i: number; successor: Revision; v: Uint8Array }[] = [];
    let total = 0;
    for (let k = 0; k < kvs.length; k++) {
      const kv = kvs[k] as KeyValue;
      const h = hs[k] as Entry[];
      const packed = kv instanceof PackedKeyValue;
      this.pendingBytes -= packed ? kv.packed.length : kv.value.length;
      // The key's history array (compaction empties it in place, or drops the key).
      const i = this.index.indexOf(h, kv.modRevision);
      // Gone (compacted) or already replaced: nothing to do.
      if (i < 0 || h[i] !== kv || i + 1 >= h.length) continue;
      const successor = this.index.modOf(h[i + 1] as Entry);
      const v = kv.value;
      const loaded = packed ? undefined : this.loaded.get(v.buffer);
      if (loaded !== undefined) {
        // Already on disk where the store loaded it from.
        this.borrowSlot(h, i, kv, loaded, successor);
        continue;
      }
      found.push({ h, i, successor, v });
      total += v.length;
    }
    if (found.length === 0 || this.clock() < this.pausedUntil) return;
    let file = this.current;
    let at = 0;
    try {
      if (file === undefined || file.size + total > this.fileBytes) {
        const id = this.seq++;
        file = new SpillFile(path.join(this.dir, `${id.toString(16).padStart(8, '0')}.val`), id);
        this.files.push(file);
        this.byId.set(id, file);
        this.current = file;
      }
      const buf = Buffer.allocUnsafe(total);
      for (const f of found) {
        buf.set(f.v, at);
        at += f.v.length;
      }
      for (let done = 0; done < total; ) done += fs.writeSync(file.fd, buf, done, total - done, file.size + done);
    } catch (e) {
      // A full disk or an I/O error: the versions stay on the heap as they were (nothing was
      // replaced), and spilling pauses. Never a failure of the write that triggered it.
      this.pausedUntil = this.clock() + PAUSE_MS;
      this.log(`store: history spill failed, superseded values stay in memory for now: ${String(e)}`);
      return;
    }
    at = file.size;
    for (const f of found) {
      const kv = f.h[f.i] as KeyValue;
      const len = f.v.length;
      f.h[f.i] = this.allocSlot(kv, file, at, len);
      at += len;
      if (f.successor > file.maxSuccessor) file.maxSuccessor = f.successor;
    }
    file.size += total;
    this.stats.spilled += found.length;
    this.stats.bytes += total;
  }

  /**
   * The index was compacted at `rev`: delete the files holding only versions it dropped. The
   * files are unlinked off the event loop (a 64 MiB unlink takes ~15 ms); the promise says when.
   */
  release(rev: Revision): Promise<void> {
    const keep: SpillFile[] = [];
    const removals: Promise<void>[] = [];
    for (const f of this.files) {
      if (f.maxSuccessor > rev) {
        keep.push(f);
        continue;
      }
      // A borrowed file is the WAL's or the snapshot's to delete.
      if (!f.borrowed) removals.push(fs.promises.rm(f.file, { force: true }));
      if (f === this.current) this.current = undefined;
      this.byId.delete(f.id);
      for (const [b, l] of this.loaded) if (l.file === f) this.loaded.delete(b);
      this.stats.filesDeleted++;
      setTimeout(() => f.close(), CLOSE_DELAY_MS).unref();
    }
    this.files = keep;
    return Promise.all(removals).then(() => undefined);
  }

  get fileCount(): number {
    return this.files.length;
  }

  close(): void {
    for (const f of this.files) f.close();
    this.files = [];
    this.current = undefined;
    this.byId.clear();
    this.loaded.clear();
    this.gens = [];
    this.pendingBytes = 0;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
