/**
 * One process at a time in a store's directory: an exclusive `flock` on `<dir>/LOCK`, taken when
 * the store opens and held until it closes or the process ends (the kernel drops it then, a
 * SIGKILL included, so a crash leaves no stale lock behind). etcd locks its WAL files the same
 * way. Without it, a second server started on the same data directory (by hand, or a supervisor
 * restarting one that had not finished stopping) replayed the same log and appended to it
 * beside the first: two histories interleaved in one file.
 *
 * A lock is held per open file: a second open of the directory in the same process is refused
 * too. libc's flock is called through `bun:ffi` (Node's fs has no file locks); where libc cannot
 * be loaded (not Linux), or the file system refuses locks (errno other than EWOULDBLOCK), the
 * directory is not locked and the lock says so (`held` false) rather than the store not opening.
 */
import { dlopen, FFIType, read } from 'bun:ffi';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from './types';

const LOCK_EX = 2;
const LOCK_NB = 4;
/** EWOULDBLOCK (= EAGAIN) on Linux: another open file holds the lock. */
const EWOULDBLOCK = 11;

/** 0, or the errno of a failed flock. */
type Flock = (fd: number, op: number) => number;
/** null: not tried yet; undefined: not available. */
let flock: Flock | undefined | null = null;

function flockOf(): Flock | undefined {
  if (flock !== null) return flock;
  flock = undefined;
  if (process.platform !== 'linux') return undefined;
  try {
    const { symbols } = dlopen('libc.so.6', {
      flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      __errno_location: { args: [], returns: FFIType.ptr },
    });
    flock = (fd, op) => {
      if (symbols.flock(fd, op) === 0) return 0;
      const at = symbols.__errno_location();
      return at === null ? -1 : read.i32(at, 0);
    };
  } catch {
    flock = undefined;
  }
  return flock;
}

/** The data directory is held by another process (or another open store of this one). */
export class DirLockedError extends StoreError {
  constructor(
    readonly dir: string,
    readonly file: string,
  ) {
    super('unavailable', `the store's directory ${dir} is in use by another process: ${file} is locked`);
  }
}

export interface DirLock {
  readonly file: string;
  /** False where no lock could be taken (see above): `reason` says why. */
  readonly held: boolean;
  readonly reason?: string;
  /** Lets the directory go (closing the lock's file drops the lock). */
  release(): void;
}

/** Locks `dir` (created if absent) for this store; throws DirLockedError when it is held. */
export function lockDir(dir: string): DirLock {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'LOCK');
  const fd = fs.openSync(file, 'a');
  const f = flockOf();
  const errno = f === undefined ? undefined : f(fd, LOCK_EX | LOCK_NB);
  if (errno === EWOULDBLOCK) {
    fs.closeSync(fd);
    throw new DirLockedError(dir, file);
  }
  let open = true;
  return {
    file,
    held: errno === 0,
    reason: errno === undefined ? 'file locks are not available here' : errno === 0 ? undefined : `flock failed with errno ${errno}`,
    release() {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}
