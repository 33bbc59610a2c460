/**
 * Snapshots of the embedded store: every live key at one revision, so recovery replays only the
 * WAL after it. File `snap/<rev as 16 hex>.snap`:
 *
 *     "SVCSNAP3" | f64 revision | records... | u32 0xFFFFFFFF | f64 count | u32 crc32
 *
 * A record is an entry (codec.encodeEntry: key, revisions, version, value), or, for a key whose
 * value is held packed (cold, store/packed.ts), the same with the value's length field
 * 0x80000000 | d followed by u32 raw length and the packed bytes, d the index of a dictionary
 * record written before it: u32 0xFFFFFFFE | u32 d | u32 length | bytes. Packed values are
 * written as they are held (inflating each one cost the event loop ~3.5 us a pod and a garbage
 * buffer of its size, a GB per snapshot at 150,000 pods) and loaded packed. `count` counts
 * entries. "SVCSNAP2" files (the same, their crc Castagnoli's crc32c, which is ~7× slower than the
 * IEEE CRC-32 of `Bun.hash.crc32`: 0.2 s of the event loop for a 200 MB snapshot, as much again to
 * load it) and "SVCSNAP1" files (no packed values, no dictionaries; crc32c) load as well.
 *
 * The crc covers everything before it. A snapshot is written to a .tmp file, fdatasynced, renamed
 * into place and the directory synced, so a snapshot file that exists is complete; a damaged one
 * is corruption (SnapshotCorruptError), never skipped.
 *
 * The file is written past the page cache where the file system allows it (direct-file.ts):
 * through it, a snapshot's bytes cost the kernel one to three times the CPU of encoding them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { decodeEntry, encodeEntry, Reader, Writer } from './codec';
import { DirectFile } from './direct-file';
import { mapFile } from './map-file';
import { PackedKeyValue, PackedValue } from './packed';
import { type KeyValue, type Revision, StoreError } from './types';
import { fsyncDir } from './wal';

const MAGIC = new TextEncoder().encode('SVCSNAP3');
/** The same records under crc32c (until 2026-11-29); loaded as well. */
const MAGIC_V2 = new TextEncoder().encode('SVCSNAP2');
/** The format before packed values; loaded as well. */
const MAGIC_V1 = new TextEncoder().encode('SVCSNAP1');
const END = 0xffff_ffff;
/** A dictionary record, where an entry's key length would be. */
const DICT = 0xffff_fffe;
/** The high bit of an entry's value length: the value is packed (the rest: its dictionary). */
const PACKED = 0x8000_0000;

/** An entry; a packed value as held, its dictionary written before its first use. */
function writeEntry(w: Writer, kv: KeyValue, dicts: Map<Uint8Array, number>): void {
  if (!(kv instanceof PackedKeyValue)) {
    encodeEntry(w, kv);
    return;
  }
  const p = kv.packed;
  let d = dicts.get(p.dictionary);
  if (d === undefined) {
    d = dicts.size;
    dicts.set(p.dictionary, d);
    w.u32(DICT);
    w.u32(d);
    w.bytes(p.dictionary);
  }
  w.str(kv.key);
  w.f64(kv.createRevision);
  w.f64(kv.modRevision);
  w.u32(kv.version);
  w.u32((PACKED | d) >>> 0);
  w.u32(p.length);
  w.bytes(p.bytes);
}

/** The next entry of a v2 snapshot (dictionary records already read into `dicts`). */
function readEntry(r: Reader, view: DataView, dicts: Uint8Array[]): KeyValue {
  const at = r.pos;
  const keyLen = view.getUint32(at, true);
  // Where the value's length is: after the key, the two revisions and the version.
  const lenAt = at + 4 + keyLen + 8 + 8 + 4;
  if (lenAt + 4 > view.byteLength || (view.getUint32(lenAt, true) & PACKED) === 0) return decodeEntry(r);
  const key = r.str();
  const createRevision = r.f64();
  const modRevision = r.f64();
  const version = r.u32();
  const d = (r.u32() & ~PACKED) >>> 0;
  const dict = dicts[d];
  if (dict === undefined) throw new RangeError(`packed value of ${key} names dictionary ${d}, not written before it`);
  const length = r.u32();
  const bytes = r.bytes();
  return new PackedKeyValue(key, new PackedValue(bytes, dict, length), createRevision, modRevision, version);
}
/**
 * A snapshot being written is synced every this many bytes (see writeSnapshot): a WAL fdatasync
 * that comes during a sync waits for the data it flushes. `bench/snapshot-sync.ts` (a WAL-like
 * writer beside a 1 GiB snapshot, three runs, 2026-11-27): the WAL's fdatasync p99 with syncs
 * every 4 MiB / every 32 MiB 7.6 / 6.3, 7.4 / 15.9 and 7.6 / 15.1 ms (the maxima, 18-340 ms, vary
 * too much between runs to rank); the snapshot took 1.7-2.1 s instead of 0.8-4.0 s.
 */
const SYNC_BYTES = 4 << 20;

/**
 * A snapshot written in the background goes at most this fast. Writing one costs ~2 s of CPU per
 * GB on this VM, two thirds of it in the kernel (a scratch script: 450,000 keys, 1 GB, user
 * 0.64-0.75 s, system 1.1-1.5 s, 2026-11-27), whatever the sync size. At full speed that came
 * in 5-9 s at 150,000 simulated pods created at 1,000 a second, on a server already at ~80% of
 * a core: in each of six runs the worst create-to-Ready latencies were of the pods sent while a
 * large snapshot was written (bench/simulation.ts prints them per 10 s window), and the p99 was
 * 2.2-3.8 s; without snapshots, 849 ms. Paced at 64 MiB/s: 2.5 s; at 32 MiB/s: 607 ms, no window
 * over 650 ms (2026-11-27, bench/history.md). A GB takes ~30 s at this rate; the log it covers
 * grows meanwhile by what is written, which the next snapshot covers.
 */
export const SNAPSHOT_PACE_BYTES_PER_S = 32 << 20;

export class SnapshotCorruptError extends StoreError {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super('corrupt', `snapshot ${file} is corrupt: ${detail}`);
  }
}

function snapshotFiles(dir: string): { rev: Revision; file: string }[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .flatMap((name) => {
      const m = /^([0-9a-f]{16})\.snap$/.exec(name);
      return m ? [{ rev: Number.parseInt(m[1] as string, 16), file: path.join(dir, name) }] : [];
    })
    .sort((a, b) => a.rev - b.rev);
}

/**
 * Write a snapshot at `rev`. `nextChunk(after)` returns the next live keys at `rev` after key
 * `after` (undefined: from the start), an empty array at the end; it is called between awaits,
 * so writes may continue meanwhile. Older snapshots are removed once the new one is in place.
 * `pace`: the most bytes a second to write, asked after each chunk (0: no limit).
 */
export async function writeSnapshot(
  dir: string,
  rev: Revision,
  nextChunk: (after: string | undefined) => KeyValue[],
  fsyncMode: 'always' | 'none' = 'always',
  /** While it returns a rate (bytes/s), the writer keeps to it; 0: as fast as it goes. */
  pace: () => number = () => 0,
  /** Past the page cache where the file system allows it (src/store/direct-file.ts); false: never. */
  direct = true,
): Promise<{ file: string; bytes: number; keys: number }> {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${rev.toString(16).padStart(16, '0')}.snap`);
  const tmp = `${file}.tmp`;
  const out = DirectFile.open(tmp, direct);
  let crc = 0;
  let keys = 0;
  const began = performance.now();
  try {
    const w = new Writer(1 << 20);
    let synced = 0;
    const flush = async () => {
      const data = w.take();
      crc = Bun.hash.crc32(data, crc);
      await out.write(data);
      w.len = 0;
      // Synced as it goes, SYNC_BYTES at a time: one fdatasync of the whole file at the end
      // flushed hundreds of MB at once, and the WAL's own fdatasyncs queued behind it.
      if (fsyncMode === 'always' && out.length - synced >= SYNC_BYTES) {
        await out.sync();
        synced = out.length;
      }
      // Paced: ahead of `rate` bytes a second since the start, wait (a little at a time, so that
      // a rate lifted meanwhile takes effect at once).
      for (let rate = pace(); rate > 0; rate = pace()) {
        const ahead = (out.length * 1000) / rate - (performance.now() - began);
        if (ahead <= 0) break;
        await new Promise((r) => setTimeout(r, Math.min(ahead, 100)));
      }
    };
    w.buf.set(MAGIC);
    w.len = MAGIC.length;
    w.f64(rev);
    let after: string | undefined;
    const dicts = new Map<Uint8Array, number>();
    for (;;) {
      const chunk = nextChunk(after);
      if (chunk.length === 0) break;
      for (const kv of chunk) writeEntry(w, kv, dicts);
      keys += chunk.length;
      after = (chunk[chunk.length - 1] as KeyValue).key;
      // A turn of the event loop between chunks either way (requests between two chunks' work).
      if (w.len >= 4 << 20) await flush();
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    w.u32(END);
    w.f64(keys);
    await flush();
    const tail = new Uint8Array(4);
    new DataView(tail.buffer).setUint32(0, crc, true);
    await out.write(tail);
    await out.finish();
    if (fsyncMode === 'always') await out.sync();
  } catch (e) {
    // A half-written snapshot (a full disk, most likely) must not keep its space.
    out.close();
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  out.close();
  fs.renameSync(tmp, file);
  if (fsyncMode === 'always') fsyncDir(dir);
  // Unlinked off the event loop: a snapshot's file is as large as the store (~30 ms per 130 MB).
  await Promise.all(snapshotFiles(dir).flatMap((old) => (old.rev < rev ? [fs.promises.rm(old.file, { force: true })] : [])));
  return { file, bytes: out.length, keys };
}

/**
 * Load the newest snapshot in `dir`, calling `onEntry` for each key in key order.
 * Returns its revision, or 0 when there is none.
 */
/**
 * Load the newest snapshot, calling `onEntry` for each key. `onFile` gets the file's path and the
 * buffer holding it first: the entries' values are views into that buffer.
 */
export function loadSnapshot(dir: string, onEntry: (kv: KeyValue) => void, onFile?: (file: string, buf: Uint8Array) => void): Revision {
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) if (name.endsWith('.tmp')) fs.rmSync(path.join(dir, name));
  const newest = snapshotFiles(dir).pop();
  if (newest === undefined) return 0;
  const buf = mapFile(newest.file);
  onFile?.(newest.file, buf);
  const head = buf.subarray(0, MAGIC.length);
  const v3 = Buffer.compare(head, MAGIC) === 0;
  const v2 = v3 || Buffer.compare(head, MAGIC_V2) === 0;
  if (buf.length < MAGIC.length + 8 + 16 || (!v2 && Buffer.compare(head, MAGIC_V1) !== 0)) {
    throw new SnapshotCorruptError(newest.file, 'bad header');
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const want = view.getUint32(buf.length - 4, true);
  const crc = v3 ? Bun.hash.crc32 : crc32c;
  if (crc(buf.subarray(0, buf.length - 4)) !== want) throw new SnapshotCorruptError(newest.file, 'checksum mismatch');
  const r = new Reader(buf, MAGIC.length, buf.length - 4);
  const rev = r.f64();
  if (rev !== newest.rev) throw new SnapshotCorruptError(newest.file, `holds revision ${rev}, named ${newest.rev}`);
  let keys = 0;
  try {
    const dicts: Uint8Array[] = [];
    for (let m = view.getUint32(r.pos, true); m !== END; m = view.getUint32(r.pos, true)) {
      if (v2 && m === DICT) {
        r.u32();
        const d = r.u32();
        dicts[d] = r.bytes();
        continue;
      }
      onEntry(v2 ? readEntry(r, view, dicts) : decodeEntry(r));
      keys++;
    }
    r.u32();
    if (r.f64() !== keys) throw new RangeError('entry count mismatch');
  } catch (e) {
    if (e instanceof SnapshotCorruptError) throw e;
    throw new SnapshotCorruptError(newest.file, (e as Error).message);
  }
  // Older snapshots are superseded by this complete one; a process killed between writing it
  // and removing them left them behind.
  for (const old of snapshotFiles(dir)) if (old.rev < rev) fs.rmSync(old.file, { force: true });
  return rev;
}
