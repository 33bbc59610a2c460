/**
 * The write-ahead log: an append-only sequence of segment files holding framed records.
 *
 * Frame (4-byte aligned, little-endian):
 *
 *     u32 len | u32 lenCheck | u32 crc(rev..body) | f64 rev | body | zero padding to 4
 *
 * `len` counts rev + body; `lenCheck` is a hash of `len`, so a reader can tell a real frame start
 * from arbitrary bytes without trusting `len`. It also names the crc: frames written since
 * 2026-11-29 carry the IEEE CRC-32 (`Bun.hash.crc32`, 0.22 us for 1.5 KB here) under `lenCheck32`,
 * older ones Castagnoli's (`crc32c` of @node-rs/crc32, 1.53 us, ~2.7% of a create's main thread)
 * under `lenCheck`; a reader accepts either, so logs written before stay readable.
 *
 * A zero `len` is the end of the written part: segments are preallocated full of zeros (as etcd's
 * filePipeline does) so that fdatasync does not also have to write file-size metadata.
 *
 * Segments are named `<seq>-<firstRev>.wal` (16 hex digits each). A segment holds the records from
 * its first record's revision up to the next segment's. Snapshots make older segments removable
 * (releaseThrough).
 *
 * Group commit: append() puts the frame in the current batch and returns the batch's promise.
 * One flush at a time writes a batch and fdatasyncs it; appends that arrive meanwhile form the next
 * batch, so concurrent writers share one fdatasync. A batch's promise resolves only once durable,
 * after `onDurable(lastRev)` has run. With fsync 'none' (throwaway benchmark runs) it resolves after
 * the write() to the page cache.
 *
 * A slow disk on purpose (holdFsync, a fault injection's `store.slowFsyncMs`): while a hold is in
 * force every batch waits the longest hold before its fdatasync (less if every hold is released
 * meanwhile), so every write in it, and every append queued behind it, waits as it would on a
 * disk that slow. Without a hold a flush pays one size check.
 *
 * Recovery (open): frames are read in order. A bad frame in the last segment is a torn write, and
 * is truncated and reported, when nothing valid follows it or its sectors hold unwritten (zero)
 * 512-byte blocks; any other bad frame, in any segment, stops recovery with a WalCorruptError
 * naming the file and offset. Nothing is ever skipped silently.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { mapFile } from './map-file';
import { type Revision, StoreError } from './types';

export interface WalOptions {
  dir: string;
  /** 'always' (default): a write is acknowledged after fdatasync. 'none': after write(). */
  fsync?: 'always' | 'none';
  /** Preallocated size of each segment. 64 MiB as etcd's default: rollover stays rare. */
  segmentBytes?: number;
  logger?: (msg: string) => void;
}

export interface TornTail {
  file: string;
  offset: number;
  bytes: number;
}

export interface WalRecoveryReport {
  segments: number;
  records: number;
  /** Bytes of the records replayed (written after the snapshot). */
  bytes: number;
  torn?: TornTail;
}

export class WalCorruptError extends StoreError {
  constructor(
    readonly file: string,
    readonly offset: number,
    detail: string,
  ) {
    super('corrupt', `wal: corrupt record in ${file} at offset ${offset}: ${detail}`);
  }
}

const HEADER = 12;
const MIN_LEN = 9; // f64 rev + at least one body byte
const SECTOR = 512;
const ZERO = new Uint8Array(1 << 20);

/** The length check of a frame whose crc is crc32c (the format until 2026-11-29). */
function lenCheck(len: number): number {
  return (Math.imul(len ^ 0x5356_4357, 0x9e37_79b1) ^ 0x7a31_c0de) >>> 0;
}

/** The length check of a frame whose crc is the IEEE CRC-32 (what append writes). */
function lenCheck32(len: number): number {
  return (Math.imul(len ^ 0x5356_4357, 0x9e37_79b1) ^ 0x2c91_e3a5) >>> 0;
}

/** The IEEE CRC-32 of a frame's rev and body, as append writes it. */
export const frameCrc = (bytes: Uint8Array): number => Bun.hash.crc32(bytes);
/** A frame's revision as its 8 bytes (append's CRC). */
const revBytes8 = new Uint8Array(8);
const revBytes = new DataView(revBytes8.buffer);

function segmentName(seq: number, firstRev: Revision): string {
  return `${seq.toString(16).padStart(16, '0')}-${firstRev.toString(16).padStart(16, '0')}.wal`;
}

interface Segment {
  seq: number;
  firstRev: Revision;
  file: string;
}

function listSegments(dir: string): Segment[] {
  const out: Segment[] = [];
  for (const name of fs.readdirSync(dir)) {
    const m = /^([0-9a-f]{16})-([0-9a-f]{16})\.wal$/.exec(name);
    if (m)
      out.push({ seq: Number.parseInt(m[1] as string, 16), firstRev: Number.parseInt(m[2] as string, 16), file: path.join(dir, name) });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** fdatasync on libuv's thread pool (the event loop goes on meanwhile). */
export const fdatasync = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
const writeAsync = (fd: number, buf: Uint8Array, pos: number): Promise<number> =>
  new Promise((resolve, reject) => fs.write(fd, buf, 0, buf.length, pos, (e, n) => (e ? reject(e) : resolve(n))));

/** Write all of `buf` at `pos` on libuv's thread pool, continuing after short writes. */
export async function writeAll(fd: number, buf: Uint8Array, pos: number): Promise<void> {
  for (let done = 0; done < buf.length; ) {
    const n = await writeAsync(fd, buf.subarray(done), pos + done);
    if (n <= 0) throw new Error(`write made no progress at ${pos + done}`);
    done += n;
  }
}

function isZero(buf: Uint8Array, from: number, to: number): boolean {
  for (let at = from; at < to; at += ZERO.length) {
    const end = Math.min(to, at + ZERO.length);
    if (Buffer.compare(buf.subarray(at, end), ZERO.subarray(0, end - at)) !== 0) return false;
  }
  return true;
}

/** Whether a valid frame starts at `p` in `buf`; returns its padded size or 0. */
function frameAt(buf: Uint8Array, view: DataView, p: number): number {
  if (p + HEADER > buf.length) return 0;
  const len = view.getUint32(p, true);
  if (len < MIN_LEN || p + HEADER + len > buf.length) return 0;
  const check = view.getUint32(p + 4, true);
  const crc = check === lenCheck32(len) ? frameCrc : check === lenCheck(len) ? crc32c : undefined;
  if (crc === undefined || crc(buf.subarray(p + HEADER, p + HEADER + len)) !== view.getUint32(p + 8, true)) return 0;
  return (HEADER + len + 3) & ~3;
}

interface Batch {
  buf: Uint8Array;
  view: DataView;
  len: number;
  firstRev: Revision;
  lastRev: Revision;
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

function newBatch(capacity: number): Batch {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody awaits (e.g. after close) must not raise an unhandled rejection.
  promise.catch(() => {});
  const buf = new Uint8Array(capacity);
  return { buf, view: new DataView(buf.buffer), len: 0, firstRev: 0, lastRev: 0, promise, resolve, reject };
}

export class Wal {
  /** Called with the last revision of each batch once it is durable, before its promise resolves. */
  onDurable: (rev: Revision) => void = () => {};

  private readonly dir: string;
  private readonly fsyncMode: 'always' | 'none';
  private readonly segmentBytes: number;
  private readonly log: (msg: string) => void;

  private segments: Segment[];
  private fd = -1;
  private offset = 0;
  private nextSeq: number;
  private batch: Batch;
  private flushing: Promise<void> | undefined;
  private failed: unknown;
  private closed = false;
  private prealloc: Promise<string> | undefined;
  private spare: Uint8Array | undefined;
  /** The holds in force (holdFsync), each its milliseconds. */
  private readonly holds = new Set<{ ms: number }>();
  /** Ends the hold being waited out (every hold was released). */
  private unhold: (() => void) | undefined;

  /** Bytes appended not yet covered by a snapshot (drives snapshot scheduling; the store lowers it). */
  bytesSinceRelease = 0;
  stats = { batches: 0, records: 0, fsyncs: 0, bytes: 0 };

  private constructor(opts: WalOptions, segments: Segment[]) {
    this.dir = opts.dir;
    this.fsyncMode = opts.fsync ?? 'always';
    this.segmentBytes = opts.segmentBytes ?? 64 << 20;
    this.log = opts.logger ?? (() => {});
    this.segments = segments;
    this.nextSeq = (segments[segments.length - 1]?.seq ?? -1) + 1;
    this.batch = newBatch(64 << 10);
  }

  /**
   * Open the log in `opts.dir`, replaying every record with revision > afterRev in order.
   * Throws WalCorruptError on corruption other than a torn tail.
   */
  static open(
    opts: WalOptions,
    afterRev: Revision,
    replay: (rev: Revision, body: Uint8Array) => void,
    /** Called with each segment's path and the buffer holding it before its records replay (their bodies are views into it). */
    onSegment?: (file: string, buf: Uint8Array) => void,
  ): { wal: Wal; report: WalRecoveryReport } {
    fs.mkdirSync(opts.dir, { recursive: true });
    for (const name of fs.readdirSync(opts.dir)) if (name.endsWith('.tmp')) fs.rmSync(path.join(opts.dir, name));
    const all = listSegments(opts.dir);
    let start = 0;
    for (let i = 0; i < all.length; i++) if ((all[i] as Segment).firstRev <= afterRev) start = i;
    const wal = new Wal(opts, all.slice(start));
    // Segments wholly before the snapshot: a crash between snapshot and release can leave them.
    for (const s of all.slice(0, start)) fs.rmSync(s.file);
    const report: WalRecoveryReport = { segments: wal.segments.length, records: 0, bytes: 0 };
    for (let i = 0; i < wal.segments.length; i++) {
      const seg = wal.segments[i] as Segment;
      const last = i === wal.segments.length - 1;
      const end = wal.readSegment(seg, last, afterRev, replay, report, onSegment);
      if (last) {
        wal.fd = fs.openSync(seg.file, 'r+');
        wal.offset = end;
      }
    }
    // What was replayed is not covered by a snapshot either: counted, a server restarted more
    // often than it writes a snapshot's worth still takes one, and its replay stays bounded
    // (counted from zero, a crash loop never snapshotted and every restart replayed all of it).
    wal.bytesSinceRelease = report.bytes;
    return { wal, report };
  }

  /** Replay one segment; returns the offset after its last valid frame. */
  private readSegment(
    seg: Segment,
    last: boolean,
    afterRev: Revision,
    replay: (rev: Revision, body: Uint8Array) => void,
    report: WalRecoveryReport,
    onSegment: ((file: string, buf: Uint8Array) => void) | undefined,
  ): number {
    // The last segment is appended to (and a torn tail zeroed): read it; the others are sealed.
    const buf: Uint8Array = last ? fs.readFileSync(seg.file) : mapFile(seg.file);
    onSegment?.(seg.file, buf);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let p = 0;
    while (p + 4 <= buf.length) {
      const len = view.getUint32(p, true);
      if (len === 0) {
        if (isZero(buf, p, buf.length)) return p;
        // Zeros where a frame should start, with data after: unwritten sectors of a torn batch,
        // or damage. The torn-tail rule below decides.
      } else {
        const size = frameAt(buf, view, p);
        if (size > 0) {
          const rev = view.getFloat64(p + HEADER, true);
          if (rev > afterRev) {
            try {
              replay(rev, buf.subarray(p + HEADER + 8, p + HEADER + view.getUint32(p, true)));
            } catch (e) {
              throw new WalCorruptError(seg.file, p, `record at revision ${rev} does not apply: ${(e as Error).message}`);
            }
            report.records++;
            report.bytes += size;
          }
          p += size;
          continue;
        }
      }
      return this.badFrame(seg, last, buf, view, p, report);
    }
    // 1-3 bytes of a frame cut short at the very end of the file.
    if (p < buf.length && !isZero(buf, p, buf.length)) return this.badFrame(seg, last, buf, view, p, report);
    return p;
  }

  private badFrame(seg: Segment, last: boolean, buf: Uint8Array, view: DataView, p: number, report: WalRecoveryReport): number {
    const cut = p + 4 > buf.length;
    const len = cut ? 0 : view.getUint32(p, true);
    const detail = cut ? 'frame header cut short' : len === 0 ? 'zero length with data after it' : 'bad length or checksum';
    if (!last) throw new WalCorruptError(seg.file, p, detail);
    let next = buf.length; // start of the first valid frame after p
    for (let q = p + 4; q + HEADER <= buf.length; q += 4) {
      if (view.getUint32(q, true) !== 0 && frameAt(buf, view, q) > 0) {
        next = q;
        break;
      }
    }
    const validAfter = next < buf.length;
    // A torn batch: sectors of the frame never reached the disk (still preallocated zeros). The
    // frame ends before the next valid one, whatever its (possibly damaged) length says.
    const extent = Math.min(next, len >= MIN_LEN ? p + HEADER + len : p + SECTOR * 2);
    let unwrittenSector = false;
    for (let s = Math.ceil(p / SECTOR) * SECTOR; s + SECTOR <= extent; s += SECTOR) {
      if (isZero(buf, s, s + SECTOR)) {
        unwrittenSector = true;
        break;
      }
    }
    if (validAfter && !unwrittenSector) throw new WalCorruptError(seg.file, p, `${detail}, with valid records after it`);
    const torn = { file: seg.file, offset: p, bytes: buf.length - p };
    // Zero the torn tail so the next append starts on a clean end marker.
    const fd = fs.openSync(seg.file, 'r+');
    try {
      for (let at = p; at < buf.length; at += ZERO.length) fs.writeSync(fd, ZERO, 0, Math.min(ZERO.length, buf.length - at), at);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    report.torn = torn;
    this.log(`wal: truncated torn tail of ${seg.file} at offset ${p} (${torn.bytes} bytes discarded)`);
    return p;
  }

  /**
   * Append a record for revision `rev` (revisions must not decrease). Resolves once durable.
   * Rejects with StoreError 'unavailable' after any write or sync failure, or 'closed'.
   */
  append(rev: Revision, body: Uint8Array): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(new StoreError('unavailable', `wal failed: ${String(this.failed)}`));
    if (this.closed) return Promise.reject(new StoreError('closed', 'wal is closed'));
    const b = this.batch;
    const len = 8 + body.length;
    const size = (HEADER + len + 3) & ~3;
    if (b.len + size > b.buf.length) {
      let cap = Math.max(b.buf.length * 2, 4096);
      while (cap < b.len + size) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(b.buf.subarray(0, b.len));
      b.buf = next;
      b.view = new DataView(next.buffer);
    }
    const p = b.len;
    b.view.setUint32(p, len, true);
    b.view.setUint32(p + 4, lenCheck32(len), true);
    b.view.setFloat64(p + HEADER, rev, true);
    b.buf.set(body, p + HEADER + 8);
    // The frame's CRC (revision, then body) chained over the two, without a view of the frame.
    revBytes.setFloat64(0, rev, true);
    b.view.setUint32(p + 8, Bun.hash.crc32(body, frameCrc(revBytes8)), true);
    b.buf.fill(0, p + HEADER + len, p + size);
    b.len += size;
    if (b.firstRev === 0) b.firstRev = rev;
    b.lastRev = rev;
    this.stats.records++;
    if (this.flushing === undefined) this.flushing = this.flushLoop();
    return b.promise;
  }

  private async flushLoop(): Promise<void> {
    // Let appends issued in the same tick join the first batch.
    await Promise.resolve();
    while (this.batch.len > 0 && this.failed === undefined) {
      const b = this.batch;
      this.batch = newBatch(0);
      const reuse = this.spare && this.spare.length >= 64 << 10 ? this.spare : new Uint8Array(64 << 10);
      this.spare = undefined;
      this.batch.buf = reuse;
      this.batch.view = new DataView(reuse.buffer);
      try {
        await this.ensureRoom(b);
        const data = b.buf.subarray(0, b.len);
        // A synchronous write: measured against writing on libuv's pool (writeAll), it keeps
        // single-writer latency (one pool hop per batch, the fdatasync, instead of two) at no
        // cost to API creates (bench/README.md, store.ts).
        for (let done = 0; done < data.length; ) done += fs.writeSync(this.fd, data, done, data.length - done, this.offset + done);
        this.offset += b.len;
        this.bytesSinceRelease += b.len;
        this.stats.bytes += b.len;
        this.stats.batches++;
        this.spare = b.buf;
        if (this.holds.size > 0) await this.held();
        if (this.fsyncMode === 'always') {
          await fdatasync(this.fd);
          this.stats.fsyncs++;
        }
      } catch (e) {
        this.failed = e;
        this.log(`wal: write failed, refusing further writes: ${String(e)}`);
        const err = new StoreError('unavailable', `wal write failed: ${String(e)}`);
        b.reject(err);
        this.batch.reject(err);
        break;
      }
      this.onDurable(b.lastRev);
      b.resolve();
    }
    this.flushing = undefined;
  }

  /**
   * Slow the disk until the returned release is called: each batch flushed meanwhile waits `ms`
   * (the longest of the holds in force) between its write and its fdatasync (with fsync 'none',
   * before it resolves); the last release cuts a hold being waited out short. A release called
   * twice releases once.
   */
  holdFsync(ms: number): () => void {
    const h = { ms };
    this.holds.add(h);
    return () => {
      if (this.holds.delete(h) && this.holds.size === 0) this.unhold?.();
    };
  }

  /** Wait out the longest hold in force, or less when every hold is released meanwhile. */
  private held(): Promise<void> {
    let ms = 0;
    for (const h of this.holds) if (h.ms > ms) ms = h.ms;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.unhold = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.unhold = done;
    });
  }

  /** Make sure the current segment can take batch `b`, cutting over to a new segment if not. */
  private async ensureRoom(b: Batch): Promise<void> {
    if (this.fd >= 0 && (this.offset + b.len <= this.segmentBytes || this.offset === 0)) return;
    const tmp = await (this.prealloc ?? this.preallocate());
    this.prealloc = undefined;
    if (this.fd >= 0) fs.closeSync(this.fd); // everything written to it was synced by the previous flush
    const seg = { seq: this.nextSeq++, firstRev: b.firstRev, file: path.join(this.dir, segmentName(this.nextSeq - 1, b.firstRev)) };
    fs.renameSync(tmp, seg.file);
    fsyncDir(this.dir);
    this.fd = fs.openSync(seg.file, 'r+');
    this.offset = 0;
    this.segments.push(seg);
    this.prealloc = this.preallocate();
    this.prealloc.catch(() => {});
  }

  /** Create the next segment file, full of zeros, off the write path. */
  private async preallocate(): Promise<string> {
    const tmp = path.join(this.dir, `prealloc-${this.nextSeq}.tmp`);
    const fd = fs.openSync(tmp, 'w');
    try {
      for (let at = 0; at < this.segmentBytes; at += ZERO.length) {
        await writeAsync(fd, ZERO.subarray(0, Math.min(ZERO.length, this.segmentBytes - at)), at);
      }
      if (this.fsyncMode === 'always') await fdatasync(fd);
    } catch (e) {
      // A segment that could not be written in full (a full disk) gives its space back.
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      throw e;
    }
    fs.closeSync(fd);
    return tmp;
  }

  /** Resolves when everything appended so far is durable (or rejects if the log failed). */
  async sync(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failed !== undefined) throw new StoreError('unavailable', `wal failed: ${String(this.failed)}`);
  }

  /**
   * Remove segments holding only records with revision <= rev (covered by a snapshot). They are
   * unlinked off the event loop (a 64 MiB unlink takes ~15 ms); a segment left by a crash before
   * its unlink is removed at the next open, as one older than the snapshot.
   */
  async releaseThrough(rev: Revision): Promise<void> {
    const removals: Promise<void>[] = [];
    while (this.segments.length > 1 && (this.segments[1] as Segment).firstRev <= rev) {
      const s = this.segments.shift() as Segment;
      removals.push(fs.promises.rm(s.file, { force: true }));
    }
    await Promise.all(removals);
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  async close(): Promise<void> {
    await this.sync().catch(() => {});
    this.closed = true;
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    const tmp = await this.prealloc?.catch(() => undefined);
    if (tmp) fs.rmSync(tmp, { force: true });
  }
}
