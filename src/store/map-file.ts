/**
 * A file's bytes mapped rather than read (private: nothing written through them reaches the
 * file): no copy of files that can be a gigabyte at a restart (a 1M-object snapshot took 0.46 s
 * to read), only page faults as the load touches them, and the values that stay views into them
 * live in the page cache rather than on the heap.
 *
 * Only for files that are never changed while mapped: snapshots (written aside, renamed into
 * place, then only deleted) and sealed WAL segments (the log appends to its last segment only).
 * Deleting a mapped file leaves the mapping valid; truncating it would not. Where mapping fails
 * (or the runtime has no Bun.mmap), the file is read.
 */
import * as fs from 'node:fs';

export function mapFile(file: string): Uint8Array {
  try {
    if (typeof Bun !== 'undefined' && typeof Bun.mmap === 'function' && fs.statSync(file).size > 0)
      return Bun.mmap(file, { shared: false });
  } catch {
    // fall through to reading it
  }
  return fs.readFileSync(file);
}
