/**
 * The durable create floor, spawned by bench/api.ts: a bare Bun.serve over TLS that does the
 * least a create the server acknowledges can do. It parses the body, gives the object its
 * metadata (uid, resourceVersion, creationTimestamp), refuses a name it already holds (409),
 * appends the object's JSON to a log in a frame checksummed as src/store/wal.ts's (CRC-32), acknowledges it only once a shared
 * fdatasync covers it (group commit, into a preallocated file, as src/store/wal.ts; bench/floor-log.ts), keeps the
 * bytes in a Map and answers 201 with the object. No authentication, no validation, no defaults,
 * no managedFields, no index of revisions, no watch cache, no metrics: whatever a create costs
 * here, the server's cannot be less on this runtime and machine.
 *
 * Environment: C, K (certificate and key), DIR (for the log). Prints the port.
 */
import { floorLog, serveFloor } from './floor-log';

const log = floorLog(process.env.DIR as string);
const objects = new Map<string, Uint8Array>();
let rev = 1;
const json = { 'content-type': 'application/json' };

serveFloor(async (req) => {
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
  await log.append(rev, text);
  return new Response(text, { status: 201, headers: json });
});
