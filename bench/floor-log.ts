/**
 * What the bench floors (bench/create-floor.ts, bench/apply-floor.ts) share: their TLS server and
 * their durable log, in which each write's
 * JSON in a frame checksummed as src/store/wal.ts's (length, revision, CRC-32), acknowledged only
 * once a shared fdatasync covers it (group commit: frames that arrive during a flush share the
 * next write and fdatasync), into a preallocated file, as src/store/wal.ts writes. The floors
 * keep no history: writes wrap around to the file's start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Preallocated log size. */
const LOG_BYTES = 256 << 20;
const HEADER = 12;

export interface FloorLog {
  /** Resolves once the frame of `text` (or of the encoded bytes) at revision `rev` is on disk. */
  append(rev: number, text: string | Uint8Array): Promise<void>;
}

export function floorLog(dir: string): FloorLog {
  const fd = fs.openSync(path.join(dir, 'floor.log'), 'w+');
  const zeros = Buffer.alloc(1 << 20);
  for (let at = 0; at < LOG_BYTES; at += zeros.length) fs.writeSync(fd, zeros, 0, zeros.length, at);
  fs.fdatasyncSync(fd);

  let offset = 0;
  let batch: Buffer[] = [];
  let waiting: (() => void)[] = [];
  let flushing = false;

  const write = (buf: Buffer, at: number): Promise<void> =>
    new Promise((resolve, reject) => fs.write(fd, buf, 0, buf.length, at, (e) => (e ? reject(e) : resolve())));
  const sync = (): Promise<void> => new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));

  /** One flush at a time; frames that arrive meanwhile share the next write and fdatasync. */
  const flush = async (): Promise<void> => {
    flushing = true;
    while (batch.length > 0) {
      const frames = batch;
      const done = waiting;
      batch = [];
      waiting = [];
      const buf = Buffer.concat(frames);
      if (offset + buf.length > LOG_BYTES) offset = 0;
      await write(buf, offset);
      offset += buf.length;
      await sync();
      for (const resolve of done) resolve();
    }
    flushing = false;
  };

  return {
    append(rev, text) {
      const n = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
      const frame = Buffer.allocUnsafe(HEADER + n);
      if (typeof text === 'string') frame.write(text, HEADER);
      else frame.set(text, HEADER);
      frame.writeUInt32LE(n, 0);
      frame.writeUInt32LE(rev, 4);
      frame.writeUInt32LE(Bun.hash.crc32(frame.subarray(HEADER)), 8);
      batch.push(frame);
      const acked = new Promise<void>((resolve) => waiting.push(resolve));
      if (!flushing) void flush();
      return acked;
    },
  };
}

/** The floor's Bun.serve over TLS on a free loopback port (certificate and key in C and K); prints the port. */
export function serveFloor(fetch: (req: Request) => Promise<Response>): void {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert: process.env.C, key: process.env.K }, fetch });
  console.log(server.port);
}
