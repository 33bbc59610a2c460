/**
 * Writes handled a turn of the event loop at a time.
 *
 * Bun calls the fetch handler for each request as its socket is read, and the handler runs until
 * its first wait. For a write that is a long run of the server's own code (authentication,
 * decoding, admission, validation, managedFields, the store's transaction, the watch cache), and
 * between two writes come the next socket's TLS record, HTTP parse and the kernel's TCP work on
 * the same core. Measured on the 2-core VM (bench/history.md, 2026-11-28 sixth session), the same
 * JavaScript ran ~1.45x slower per request under wrk than when 64 requests went through the
 * handler back to back in process, every function alike: what each write leaves in the CPU's
 * caches is gone by the next.
 *
 * So a write is not started where it arrives: it joins the turn's batch, and the batch runs in
 * the check phase right after the poll phase that read it (one setImmediate), back to back. Reads
 * are answered where they arrive (their answers are written corked in one send only there;
 * src/http/respond.ts lateReply), and so are upgrades. A write gains no wait beyond the rest of
 * its poll phase, and the writes of a turn keep their order of arrival. A read that arrives in the
 * same poll phase as a write is answered before the write starts: the two were in flight together
 * (neither answered), so either order is one the clients could have seen. Measured with `bench/api.ts --writes` (wrk, 64 connections, ~30 writes per batch),
 * alternated runs before / after: server CPU per create 80.5 / 67.3 us, strategic merge patch
 * 117.7 / 96.2, apply 142.4 / 100.0, creates 14,147 / 17,218 a second in the fastest pair; over
 * seven runs, apply ×3.0-4.7 the durable create floor of its run (median ×3.2) against ×4.3-5.5 before.
 */

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface WriteBatching {
  (req: Request): Promise<Response>;
  /** Batches run so far (the svc_write_batches_total counter). */
  readonly batches: number;
  /** Writes that went through a batch (svc_write_batched_requests_total). */
  readonly batched: number;
}

/** `handle`, with writes started a turn's batch at a time. */
export function batchWrites(handle: (req: Request) => Promise<Response>): WriteBatching {
  let pending: { req: Request; resolve: (res: Response) => void; reject: (e: unknown) => void }[] = [];
  let batches = 0;
  let batched = 0;
  const run = () => {
    const b = pending;
    pending = [];
    batches++;
    batched += b.length;
    for (const w of b) handle(w.req).then(w.resolve, w.reject);
  };
  const f = (req: Request): Promise<Response> => {
    if (!WRITES.has(req.method) || req.headers.has('upgrade')) return handle(req);
    return new Promise<Response>((resolve, reject) => {
      if (pending.length === 0) setImmediate(run);
      pending.push({ req, resolve, reject });
    });
  };
  return Object.defineProperties(f, {
    batches: { get: () => batches },
    batched: { get: () => batched },
  }) as WriteBatching;
}
