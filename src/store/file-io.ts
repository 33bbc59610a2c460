/**
 * The store's file primitives on libuv's thread pool: writes that continue after short ones,
 * fdatasync, and a directory's fsync. Shared by the log (wal.ts) and the files written past the
 * page cache (direct-file.ts: snapshots, the log's new segments).
 */
import * as fs from 'node:fs';

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
export const writeAsync = (fd: number, buf: Uint8Array, pos: number): Promise<number> =>
  new Promise((resolve, reject) => fs.write(fd, buf, 0, buf.length, pos, (e, n) => (e ? reject(e) : resolve(n))));

/** Write all of `buf` at `pos` on libuv's thread pool, continuing after short writes. */
export async function writeAll(fd: number, buf: Uint8Array, pos: number): Promise<void> {
  for (let done = 0; done < buf.length; ) {
    const n = await writeAsync(fd, buf.subarray(done), pos + done);
    if (n <= 0) throw new Error(`write made no progress at ${pos + done}`);
    done += n;
  }
}
