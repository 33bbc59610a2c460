/**
 * The least gRPC client the etcd store needs: unary calls and bidirectional streams over one
 * node:http2 session at a time, failing over between endpoints. Messages are framed bytes (the
 * caller encodes them, src/store/etcd-proto.ts); no compression, no retries (the caller decides:
 * a write whose answer was lost must not be sent again).
 *
 * Endpoints: calls go to one endpoint's session; when it fails (refused, closed, GOAWAY, reset
 * before an answer) the next call connects to the next endpoint, round robin, as grpc-js's
 * pick-first with a dead subchannel does. A call that fails that way rejects with a GrpcError of
 * code UNAVAILABLE (14); etcd's own errors carry its grpc-status and grpc-message.
 *
 * Why not @grpc/grpc-js (through the `etcd3` client): its call stack (interceptors, resolving,
 * retrying and load-balancing calls, metadata clones, a cockatiel policy per call) was ~40% of
 * the server's main thread on etcd (profile in bench/history.md); a bare call costs ~20 us of
 * CPU against ~60 (bench/etcd-client.ts).
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as tls from 'node:tls';

export const UNAVAILABLE = 14;
/** The reference's etcd client keepalive (storagebackend/factory/etcd3.go): a ping every 30 s, 10 s to answer. */
const KEEPALIVE_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;
export const DEADLINE_EXCEEDED = 4;
export const CANCELLED = 1;

export class GrpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'GrpcError';
  }
}

export interface ChannelOptions {
  endpoints: string[];
  /** PEM: the CA that signed the endpoints' certificates; a client certificate and key. */
  tls?: { ca: string; cert?: string; key?: string };
}

/** A bidirectional stream's handlers: each whole message, then one end (an error or the close). */
export interface StreamHandlers {
  message(m: Uint8Array): void;
  end(e: GrpcError): void;
}

export interface BidiStream {
  write(frame: Uint8Array): void;
  close(): void;
}

const { HTTP2_HEADER_STATUS } = http2.constants;

/**
 * Splits gRPC frames out of DATA chunks (a message may span many chunks, a chunk hold several):
 * a message within one chunk is handed out as a view of it; one that spans chunks is copied into
 * one buffer of its length as they come (an 80 MB list answer comes in ~16 KB chunks).
 */
export class Deframer {
  private readonly head = new Uint8Array(5);
  private headFill = 0;
  private body: Uint8Array | undefined;
  private bodyFill = 0;

  constructor(private readonly onMessage: (m: Uint8Array) => void) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.body) {
        const n = Math.min(this.body.length - this.bodyFill, chunk.length - at);
        this.body.set(chunk.subarray(at, at + n), this.bodyFill);
        this.bodyFill += n;
        at += n;
        if (this.bodyFill === this.body.length) {
          const m = this.body;
          this.body = undefined;
          this.onMessage(m);
        }
        continue;
      }
      if (this.headFill === 0 && chunk.length - at >= 5) {
        const len = this.lengthAt(chunk, at);
        if (chunk.length - at - 5 >= len) {
          this.onMessage(chunk.subarray(at + 5, at + 5 + len));
          at += 5 + len;
          continue;
        }
      }
      // A header split across chunks, or a message longer than the rest of this chunk.
      while (this.headFill < 5 && at < chunk.length) this.head[this.headFill++] = chunk[at++] as number;
      if (this.headFill < 5) return;
      this.headFill = 0;
      this.body = new Uint8Array(this.lengthAt(this.head, 0));
      this.bodyFill = 0;
      if (this.body.length === 0) {
        this.body = undefined;
        this.onMessage(new Uint8Array(0));
      }
    }
  }

  private lengthAt(b: Uint8Array, at: number): number {
    if (b[at] !== 0) throw new GrpcError(13, 'etcd answered a compressed gRPC message');
    return (b[at + 1] as number) * 0x1000000 + ((b[at + 2] as number) << 16) + ((b[at + 3] as number) << 8) + (b[at + 4] as number);
  }
}

/** grpc-status and grpc-message of headers or trailers (undefined when absent). */
function statusOf(h: http2.IncomingHttpHeaders): GrpcError | null | undefined {
  const s = h['grpc-status'];
  if (s === undefined) return undefined;
  const code = Number(s);
  if (code === 0) return null;
  const raw = h['grpc-message'];
  let msg = typeof raw === 'string' ? raw : `grpc-status ${code}`;
  try {
    msg = decodeURIComponent(msg);
  } catch {
    // keep it as sent
  }
  return new GrpcError(code, msg);
}

export class GrpcChannel {
  private session: http2.ClientHttp2Session | undefined;
  private at = 0;
  private closed = false;
  private readonly connectOpts: http2.SecureClientSessionOptions;
  private readonly keepalive: ReturnType<typeof setInterval>;

  constructor(private readonly o: ChannelOptions) {
    if (o.endpoints.length === 0) throw new Error('etcd: no endpoints');
    this.connectOpts = o.tls ? { ca: o.tls.ca, ...(o.tls.cert ? { cert: o.tls.cert } : {}), ...(o.tls.key ? { key: o.tls.key } : {}) } : {};
    // A connection that died without a FIN or RST (a partition, a host gone) would hold its
    // watches silent forever: a ping unanswered in 10 s ends the session (its watches resume on
    // the next endpoint, its calls fail as unavailable).
    this.keepalive = setInterval(() => this.ping(), KEEPALIVE_MS);
    this.keepalive.unref?.();
  }

  private ping(): void {
    const s = this.session;
    if (!s || s.closed || s.destroyed || s.connecting) return;
    const timer = setTimeout(() => this.fail(s), KEEPALIVE_TIMEOUT_MS);
    timer.unref?.();
    try {
      s.ping(() => clearTimeout(timer));
    } catch {
      clearTimeout(timer);
      this.fail(s);
    }
  }

  /** Give up a session: the next call connects to the next endpoint. */
  private fail(s: http2.ClientHttp2Session): void {
    if (this.session === s) {
      this.session = undefined;
      this.at = (this.at + 1) % this.o.endpoints.length;
    }
    s.destroy();
  }

  /** The endpoint calls go to now. */
  get endpoint(): string {
    return this.o.endpoints[this.at] as string;
  }

  private connect(): http2.ClientHttp2Session {
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return s;
    const url = new URL(this.endpoint);
    const opts: http2.SecureClientSessionOptions = { ...this.connectOpts };
    if (url.protocol === 'https:') {
      // etcd is usually reached at an IP: no SNI then (RFC 6066 allows only DNS names there),
      // and the certificate checked against that IP (its SAN).
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(host)) {
        opts.servername = '';
        opts.checkServerIdentity = (_h, cert) => tls.checkServerIdentity(host, cert);
      }
    }
    const session = http2.connect(url.origin, opts);
    const drop = () => {
      if (this.session === session) {
        this.session = undefined;
        this.at = (this.at + 1) % this.o.endpoints.length;
      }
    };
    // The 'error' handler only fails over: the calls on the session see their own errors.
    session.on('error', drop);
    session.on('goaway', drop);
    session.on('close', drop);
    this.session = session;
    return session;
  }

  private open(path: string, timeoutMs: number | undefined): [http2.ClientHttp2Stream, http2.ClientHttp2Session] {
    if (this.closed) throw new GrpcError(CANCELLED, 'the etcd client is closed');
    const session = this.connect();
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
    };
    if (timeoutMs !== undefined) headers['grpc-timeout'] = `${Math.max(1, Math.ceil(timeoutMs))}m`;
    try {
      return [session.request(headers), session];
    } catch (e) {
      // The session died between the check and the request: fail over for the next call.
      this.fail(session);
      throw new GrpcError(UNAVAILABLE, `etcd ${this.endpoint}: ${(e as Error).message}`);
    }
  }

  /**
   * Fails over when a call's stream broke before any answer: its session is suspect. (The session
   * the call was opened on, not `stream.session`: Bun clears that once the stream is closed, and a
   * session to a killed member then stayed in use, every call on it failing: seen in CI.)
   */
  private broken(session: http2.ClientHttp2Session, e: unknown): GrpcError {
    if (e instanceof GrpcError) return e;
    this.fail(session);
    return new GrpcError(UNAVAILABLE, `etcd: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** One request message, one answer message. */
  unary(path: string, frame: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      let session: http2.ClientHttp2Session;
      try {
        [stream, session] = this.open(path, timeoutMs);
      } catch (e) {
        reject(e);
        return;
      }
      let answer: Uint8Array | undefined;
      let status: GrpcError | null | undefined;
      let done = false;
      const finish = (e?: GrpcError) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (e) reject(e);
        else if (status) reject(status);
        else if (status === null && answer) resolve(answer);
        else if (status === null) reject(new GrpcError(13, 'etcd answered no message'));
        else reject(this.broken(session, new Error('the stream ended without a gRPC status')));
      };
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        // No answer at all (etcd itself answers DEADLINE_EXCEEDED at the deadline): the session
        // is suspect too; the next call connects to the next endpoint.
        this.fail(session);
        finish(new GrpcError(DEADLINE_EXCEEDED, `etcd: no answer in ${timeoutMs} ms`));
      }, timeoutMs + 100);
      const deframer = new Deframer((m) => {
        answer ??= m;
      });
      stream.on('response', (h) => {
        const st = statusOf(h);
        if (st !== undefined)
          status = st; // trailers-only: an error
        else if (Number(h[HTTP2_HEADER_STATUS]) !== 200)
          status = new GrpcError(UNAVAILABLE, `etcd answered HTTP ${h[HTTP2_HEADER_STATUS]}`);
      });
      stream.on('data', (c: Uint8Array) => {
        if (done) return;
        try {
          deframer.push(c);
        } catch (e) {
          stream.close(http2.constants.NGHTTP2_CANCEL);
          finish(e as GrpcError);
        }
      });
      stream.on('trailers', (t) => {
        const st = statusOf(t);
        if (st !== undefined) status = st;
      });
      stream.on('end', () => finish());
      stream.on('error', (e) => finish(status ? status : this.broken(session, e)));
      stream.on('close', () => {
        if (!done) finish(status === undefined ? this.broken(session, new Error('the stream closed')) : undefined);
      });
      stream.end(frame);
    });
  }

  /** A bidirectional stream (a watch): messages as they come, one end. */
  stream(path: string, h: StreamHandlers): BidiStream {
    const [stream, session] = this.open(path, undefined);
    let ended = false;
    let status: GrpcError | null | undefined;
    const end = (e: GrpcError) => {
      if (ended) return;
      ended = true;
      h.end(e);
    };
    const deframer = new Deframer((m) => !ended && h.message(m));
    stream.on('response', (hd) => {
      const st = statusOf(hd);
      if (st !== undefined) status = st;
    });
    stream.on('data', (c: Uint8Array) => {
      try {
        deframer.push(c);
      } catch (e) {
        end(e as GrpcError);
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    stream.on('trailers', (t) => {
      const st = statusOf(t);
      if (st !== undefined) status = st;
    });
    const over = (e?: unknown) => {
      if (ended) return;
      if (status) end(status);
      else if (status === null) end(new GrpcError(UNAVAILABLE, 'etcd ended the stream'));
      else end(this.broken(session, e ?? new Error('the stream closed')));
    };
    stream.on('error', over);
    stream.on('end', () => over());
    stream.on('close', () => over());
    return {
      write: (frame) => {
        if (!ended && !stream.destroyed) stream.write(frame);
      },
      close: () => {
        ended = true;
        if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.keepalive);
    this.session?.destroy();
    this.session = undefined;
  }
}
