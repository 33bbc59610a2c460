/**
 * A new file written once, front to back, past the page cache (O_DIRECT) where the file system
 * takes it: the store's snapshots (snapshot.ts), which rewrite the whole store every time the
 * log has grown by as much.
 *
 * Why: written through the page cache, a snapshot's bytes cost the kernel a copy, dirty-page
 * accounting and a writeback each, ~0.2-2.4 ns a byte of system time on this VM (256 MiB in 4 MiB
 * writes, each synced: 55-622 ms of system CPU between runs), against ~0.05 with O_DIRECT (11-12
 * ms; a scratch script, 2026-11-29). The server pays that beside every write that grows the store
 * (bench/api.ts --writes: the snapshot is a quarter to a third of the "Bun Pool" threads' CPU per
 * create), and the pages it dirties are not the cache any reader wants.
 *
 * O_DIRECT wants the offset, the length and the memory of every write aligned to the device's
 * block: bytes are gathered in a 4 MiB staging buffer that starts on a page (its address taken
 * with bun:ffi's ptr), written a whole stage at a time at stage-aligned offsets; the last,
 * partial stage is written padded to a block and the file truncated to its length. Where the
 * file system refuses O_DIRECT (EINVAL at open, or at a write whose memory is aligned less than
 * the device wants), the file is written through the page cache, the same bytes at the same
 * offsets.
 */

import { ptr } from 'bun:ffi';
import * as fs from 'node:fs';
import { fdatasync, writeAll } from './wal';

/** The alignment O_DIRECT asks of offsets, lengths and memory (the largest logical block in use). */
const BLOCK = 4096;
/** Bytes gathered per write (a multiple of BLOCK). */
const STAGE = 4 << 20;

/** A buffer of `n` bytes whose memory starts `skew` bytes past a BLOCK boundary. */
function alignedBuffer(n: number, skew: number): Uint8Array {
  const raw = new Uint8Array(n + 2 * BLOCK);
  const off = ((BLOCK - (Number(ptr(raw)) % BLOCK)) % BLOCK) + skew;
  return raw.subarray(off, off + n);
}

export class DirectFile {
  private readonly stage: Uint8Array;
  /** Bytes in `stage`, not yet written. */
  private staged = 0;
  /** Where `stage` goes in the file (whole stages are written before it). */
  private at = 0;

  private constructor(
    readonly file: string,
    private fd: number,
    /** Whether the file is being written with O_DIRECT (else through the page cache). */
    public direct: boolean,
    skew: number,
  ) {
    this.stage = alignedBuffer(STAGE, skew);
  }

  /**
   * Create (or truncate) `file` for writing; `direct: false` never tries O_DIRECT. `skew` (tests):
   * the staging buffer starts this many bytes past a block, which O_DIRECT's first write refuses.
   */
  static open(file: string, direct = true, skew = 0): DirectFile {
    const { O_WRONLY, O_CREAT, O_TRUNC, O_DIRECT } = fs.constants;
    if (direct && O_DIRECT !== undefined) {
      try {
        return new DirectFile(file, fs.openSync(file, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0o644), true, skew);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e;
      }
    }
    return new DirectFile(file, fs.openSync(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644), false, skew);
  }

  /** Bytes given to write() so far: the file's length once finished. */
  get length(): number {
    return this.at + this.staged;
  }

  /** Append `data` (copied: the caller may reuse it once this resolves). */
  async write(data: Uint8Array): Promise<void> {
    let from = 0;
    while (from < data.length) {
      const n = Math.min(data.length - from, STAGE - this.staged);
      this.stage.set(data.subarray(from, from + n), this.staged);
      this.staged += n;
      from += n;
      if (this.staged === STAGE) {
        await this.put(this.stage);
        this.at += STAGE;
        this.staged = 0;
      }
    }
  }

  /** fdatasync: what whole stages hold is durable (the staged tail is written by finish()). */
  sync(): Promise<void> {
    return fdatasync(this.fd);
  }

  /** Write what is staged; the file then has exactly `length` bytes (not synced: sync() next). */
  async finish(): Promise<void> {
    const len = this.staged;
    if (len === 0) return;
    if (this.direct) {
      const padded = Math.ceil(len / BLOCK) * BLOCK;
      this.stage.fill(0, len, padded);
      await this.put(this.stage.subarray(0, padded));
      // The padding goes (also when put() fell back to the page cache for this last write).
      fs.ftruncateSync(this.fd, this.at + len);
    } else await this.put(this.stage.subarray(0, len));
    this.at += len;
    this.staged = 0;
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  /** `buf` at `this.at`; a file system that turns O_DIRECT writes down gets them through the page cache. */
  private async put(buf: Uint8Array): Promise<void> {
    if (this.direct) {
      try {
        await writeAll(this.fd, buf, this.at);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e;
      }
      // Written so far with O_DIRECT, the rest through the page cache: the same file, offsets
      // and bytes (the kernel keeps the two coherent).
      // The new descriptor before the old one goes: `fd` stays open whatever throws.
      const fd = fs.openSync(this.file, fs.constants.O_WRONLY);
      fs.closeSync(this.fd);
      this.fd = fd;
      this.direct = false;
    }
    await writeAll(this.fd, buf, this.at);
  }
}
