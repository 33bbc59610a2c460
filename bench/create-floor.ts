/**
 * The durable create floor, spawned by bench/api.ts: a bare Bun.serve over TLS that does the
 * least a create the server acknowledges can do. It parses the body, gives the object its
 * metadata (uid, resourceVersion, creationTimestamp), refuses a name it already holds (409),
 * appends the object's JSON to a log in a frame checksummed as src/store/wal.ts's (CRC-32), acknowledges it only once a shared
 * fdatasync covers it (group commit, into a preallocated file, as src/store/wal.ts), keeps the
 * bytes in a Map and answers 201 with the object. No authentication, no validation, no defaults,
 * no managedFields, no index of revisions, no watch cache, no metrics: whatever a create costs
 * here, the server's cannot be less on this runtime and machine.
 *
 * Environment: C, K (certificate and key), DIR (for the log). Prints the port.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Preallocated log size; writes wrap around to its start (the floor keeps no history). */
const LOG_BYTES = 256 << 20;
const HEADER = 12;

const file = path.join(process.env.DIR as string, 'floor.log');
const fd = fs.openSync(file, 'w+');
const zeros = Buffer.alloc(1 << 20);
for (let at = 0; at < LOG_BYTES; at += zeros.length) fs.writeSync(fd, zeros, 0, zeros.length, at);
fs.fdatasyncSync(fd);

let offset = 0;
let batch: Buffer[] = [];
let waiting: (() => void)[] = [];
let flushing = false;

function write(buf: Buffer, at: number): Promise<void> {
  return new Promise((resolve, reject) => fs.write(fd, buf, 0, buf.length, at, (e) => (e ? reject(e) : resolve())));
}

function sync(): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

/** One flush at a time; frames that arrive meanwhile share the next write and fdatasync. */
async function flush(): Promise<void> {
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
}

function append(rev: number, text: string): Promise<void> {
  const n = Buffer.byteLength(text);
  const frame = Buffer.allocUnsafe(HEADER + n);
  frame.write(text, HEADER);
  frame.writeUInt32LE(n, 0);
  frame.writeUInt32LE(rev, 4);
  frame.writeUInt32LE(Bun.hash.crc32(frame.subarray(HEADER)), 8);
  batch.push(frame);
  const acked = new Promise<void>((resolve) => waiting.push(resolve));
  if (!flushing) void flush();
  return acked;
}

const objects = new Map<string, Uint8Array>();
let rev = 1;
const json = { 'content-type': 'application/json' };

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: process.env.C, key: process.env.K },
  async fetch(req) {
    const o = (await req.json()) as { metadata: Record<string, unknown> };
    const m = o.metadata;
    const key = `default/${String(m.name)}`;
    if (objects.has(key)) return new Response('{"kind":"Status","code":409}', { status: 409, headers: json });
    m.namespace = 'default';
    m.uid = crypto.randomUUID();
    m.resourceVersion = String(++rev);
    m.creationTimestamp = `${new Date().toISOString().slice(0, 19)}Z`;
    const text = JSON.stringify(o);
    objects.set(key, Buffer.from(text));
    await append(rev, text);
    return new Response(text, { status: 201, headers: json });
  },
});
console.log(server.port);
