/**
 * Building responses: bodies a codec wrote (src/codec/media.ts) or JSON, Warning headers, gzip,
 * and the one place Status errors become HTTP responses.
 */
import { internal, StatusError } from '../api/status';
import { warningHeader } from '../api/warning';
import { JSON_MEDIA_TYPE, jsonText } from '../codec/json-media';
import type { Encoded } from '../codec/media';
import { unavailableStatus } from '../registry/storage-errors';

/** Compress only responses at least this large, as the reference (defaultGzipThresholdBytes). */
export const GZIP_THRESHOLD = 128 * 1024;

export interface ReplyOptions {
  status?: number;
  pretty?: boolean;
  gzip?: boolean;
  warnings?: string[];
  headers?: Record<string, string>;
}

/** Header pairs (a plain array is much cheaper for Response than a Headers object). */
export function headersFor(contentType: string, o: ReplyOptions): [string, string][] {
  const h: [string, string][] = [
    ['Content-Type', contentType],
    ['Cache-Control', 'no-cache, private'],
  ];
  // One Warning field per warning. Bun.serve joins fields of one name into one line
  // (`299 - "a", 299 - "b"`, the list form RFC 9110 §5.3 makes equivalent) and refuses CR/LF in
  // a value, so clients see one header with each warning as a list element; client-go, kubectl
  // and the Python client split it as they split separate fields.
  if (o.warnings) for (const w of o.warnings) h.push(['Warning', warningHeader(w)]);
  if (o.headers) for (const k in o.headers) h.push([k, o.headers[k] as string]);
  return h;
}

/**
 * The common case (no warnings, no extra headers, no gzip): one Headers object per content type,
 * shared by every response (Response copies it; building headers from pairs per response cost
 * about twice as much).
 */
const plainHeaders = new Map<string, Headers>();

function finish(body: string | Uint8Array<ArrayBuffer>, contentType: string, o: ReplyOptions): Response {
  if (!o.warnings?.length && !o.headers && !(o.gzip && body.length >= GZIP_THRESHOLD)) {
    let shared = plainHeaders.get(contentType);
    if (!shared) {
      shared = new Headers(headersFor(contentType, {}));
      plainHeaders.set(contentType, shared);
    }
    return keep(new Response(body, { status: o.status ?? 200, headers: shared }), body);
  }
  const h = headersFor(contentType, o);
  if (o.gzip && body.length >= GZIP_THRESHOLD) {
    h.push(['Content-Encoding', 'gzip'], ['Vary', 'Accept-Encoding']);
    // Level 1, as the reference's gzip writer (defaultGzipContentEncodingLevel).
    const zipped = Bun.gzipSync(body, { level: 1 });
    return keep(new Response(zipped, { status: o.status ?? 200, headers: h }), zipped);
  }
  return keep(new Response(body, { status: o.status ?? 200, headers: h }), body);
}

/**
 * Late answers. Bun.serve (1.4.5) writes a response corked, in one send, only while the
 * request's own socket callback runs (the handler and the microtasks it leaves). A response that
 * completes later (after a queue's wait in priority and fairness, a disk or network wait) with a
 * body past uWS's 16 KB cork buffer goes out in many small sends and TLS records: a 58 KB list
 * cost the server 100-160 us against 38 us (and the client as much again), where the same bytes
 * given as a direct stream cost 48-55 us either way (oven-sh/bun#41341 proposes corking every
 * write). So large bodies are kept beside their Response, and `lateReply` sends one that
 * completes after its request's turn of the event loop as a stream. A direct stream is sent
 * chunked (Bun drops its Content-Length); HTTP/1.1 clients read both.
 */
const LATE_STREAM_MIN_BYTES = 16 * 1024;
const bodies = new WeakMap<Response, string | Uint8Array>();

function keep(res: Response, body: string | Uint8Array): Response {
  if (body.length >= LATE_STREAM_MIN_BYTES) bodies.set(res, body);
  return res;
}

/**
 * The event loop's turn: it moves on in the check phase. While requests come in, the step stays
 * scheduled from one check phase to the next, so it runs before the immediates a turn's callbacks
 * schedule (the seats priority and fairness releases): a request those dispatch sees a new turn.
 */
let turn = 0;
let turnArmed = false;
let entered = false;
const nextTurn = () => {
  turn++;
  if (entered) {
    entered = false;
    setImmediate(nextTurn);
  } else turnArmed = false;
};

/** Requests entered so far (`contention`). */
let seen = 0;

/** The turn a request enters in; `lateReply` compares it with the turn its response completes in. */
export function requestTurn(): number {
  seen++;
  entered = true;
  if (!turnArmed) {
    turnArmed = true;
    setImmediate(nextTurn);
  }
  return turn;
}

/**
 * A probe of other requests: each call answers whether any request entered since the call before
 * (the first, since the probe was made). A long list asks it before each chunk (`adaptiveEncoder`).
 */
export function contention(): () => boolean {
  let last = seen;
  return () => {
    const busy = seen !== last;
    last = seen;
    return busy;
  };
}

/** `res`, or for a large body completing after the turn its request entered in, the same answer as a direct stream. */
export function lateReply(res: Response, enteredIn: number): Response {
  if (enteredIn === turn) return res;
  const body = bodies.get(res);
  if (body === undefined) return res;
  const stream = new ReadableStream({
    type: 'direct',
    pull(c) {
      c.write(body);
      c.close();
    },
  });
  return new Response(stream, { status: res.status, headers: res.headers });
}

/** An object (or list, Status, discovery document) in the chosen encoding. */
export function reply(obj: unknown, o: ReplyOptions = {}): Response {
  return finish(jsonText(obj, o.pretty === true), JSON_MEDIA_TYPE, o);
}

/** A body a codec wrote (src/codec/media.ts). */
export function replyEncoded(e: Encoded, o: ReplyOptions = {}): Response {
  return finish(e.body as string | Uint8Array<ArrayBuffer>, e.contentType, o);
}

/** Plain text (health checks, metrics). */
export function replyText(text: string, status = 200, contentType = 'text/plain; charset=utf-8'): Response {
  return new Response(text, { status, headers: { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' } });
}

/**
 * The only place errors become responses: a StatusError as its Status, an unreachable store as
 * 503, anything else a logged 500.
 */
export function replyError(e: unknown, o: ReplyOptions = {}, log: (msg: string) => void = console.error): Response {
  let err = e instanceof StatusError ? e : unavailableStatus(e);
  if (err === undefined) {
    log(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    err = internal(e instanceof Error ? e.message : String(e));
  }
  return reply(err.body(), { ...o, status: err.code, headers: { ...o.headers, ...err.headers } });
}
