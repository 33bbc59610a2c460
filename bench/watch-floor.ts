/**
 * The watch fan-out floor, spawned by bench/watch.ts --floor: a bare Bun.serve over TLS that does
 * the least the server's fan-out does. A GET opens a watch: a direct stream (as
 * src/http/watch-handler.ts), which gets one ADDED event line at once (a client's fetch resolves
 * on the first bytes). A POST of an object gives it the next resourceVersion, writes its event
 * line to every open watch (encoded once, the same bytes for all, as the server shares an
 * event's line) once the turn is over, outside the request's handler, with one flush per watch
 * and batch (as the server's watch cache fans out each batch of its store's change feed), and
 * answers 201. No store, no
 * durability, no watch cache, no authentication, no selectors: whatever a delivery costs here,
 * the server's cannot cost less on this runtime and machine.
 *
 * Environment: C, K (certificate and key). Prints the port.
 */
import { serveFloor } from './floor-log';

interface Sink {
  write(chunk: string | Uint8Array): unknown;
  flush(): unknown;
}
const watches = new Set<Sink>();
let rv = 1;
const json = { 'content-type': 'application/json' };
const seed = `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"seed","namespace":"default","resourceVersion":"1"},"data":{}}}\n`;

serveFloor(async (req) => {
  if (req.method === 'GET') {
    const signal = req.signal;
    return new Response(
      new ReadableStream({
        type: 'direct',
        async pull(controller) {
          const sink = controller as unknown as Sink;
          sink.write(seed);
          sink.flush();
          watches.add(sink);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          watches.delete(sink);
        },
      }),
      { headers: json },
    );
  }
  const o = (await req.json()) as { metadata: Record<string, unknown> };
  o.metadata.namespace = 'default';
  o.metadata.uid = crypto.randomUUID();
  o.metadata.resourceVersion = String(++rv);
  const text = JSON.stringify(o);
  // Encoded once and the same bytes written to every watch, as the server shares an event's line.
  pending.push(Buffer.from(`{"type":"ADDED","object":${text}}\n`));
  if (pending.length === 1) setImmediate(fanOut);
  return new Response(text, { status: 201, headers: json });
});

/**
 * The events of this turn go out after it, outside any request's handler, as the server's watch
 * cache fans out the batches its store's change feed hands it: each watch gets the batch's lines
 * and one flush.
 */
let pending: Uint8Array[] = [];
function fanOut(): void {
  const batch = pending;
  pending = [];
  for (const w of watches) {
    try {
      for (const line of batch) w.write(line);
      w.flush();
    } catch {
      watches.delete(w);
    }
  }
}
