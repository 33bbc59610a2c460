/**
 * A lean HTTP/1.1 client for webhook calls: POSTs over TLS sockets of `Bun.connect`, kept alive
 * and reused per origin and TLS configuration.
 *
 * Why not fetch: Bun's fetch hands every request to its own HTTP client thread and wakes the
 * main thread through an eventfd for each answer. Profiled under bench/webhooks.ts (1,000
 * creates/s, one validating webhook), that thread took 20% of the server's CPU samples, and a
 * call cost 58-66 us of CPU against 37-40 us on a socket of the event loop's own
 * (/tmp experiment recorded in bench/history.md, "webhook client"). node:https and node:tls
 * cost 51-53 us. A webhook call is the simplest of HTTP exchanges (one POST of JSON, one answer
 * with a length or chunked), so the client stays small:
 *
 * - a connection is opened with the TLS configuration's roots and server name, and used only
 *   once its handshake verified the server's certificate (Bun.connect reports the verdict
 *   without closing, so this client refuses an unverified peer itself);
 * - one request at a time per connection; an idle connection goes back to its pool (at most
 *   MAX_IDLE per pool) and leaves it when the server closes it;
 * - a request on a reused connection that is closed before any byte of the answer arrived is
 *   sent once more on a new connection (the server closed an idle connection as the request
 *   went out: Go's transport retries the same case);
 * - answers with Content-Length, chunked, or read to the end of the connection.
 *
 * Errors carry the codes the caller maps to Go's words: ECONNREFUSED, ENOTFOUND, the TLS
 * verification codes, ConnectionClosed, and a TimeoutError when the deadline passes.
 */
import type { Socket } from 'bun';

export interface Http1Answer {
  status: number;
  body: string;
  /** The server closes the connection after it (`Connection: close`, or an answer read to the end). */
  close: boolean;
}

/** Where a request goes: the address connected to, the TLS roots and name checked, the Host header. */
export interface Http1Address {
  host: string;
  port: number;
  /** Path and query. */
  path: string;
  /** The Host header (the name the caller addressed). */
  hostHeader: string;
  ca?: string;
  serverName?: string;
}

export interface Http1Request extends Http1Address {
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

const MAX_IDLE = 64;

class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string,
    name?: string,
  ) {
    super(message);
    if (name) this.name = name;
  }
}

/** One answer being read: the bytes so far and where the head ends. */
class Reader {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(
    private readonly done: (a: Http1Answer) => void,
    private readonly fail: (e: Error) => void,
  ) {}
  /** Whether any byte of the answer came. */
  private received = false;

  push(d: Uint8Array): void {
    this.received = true;
    this.chunks.push(Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    this.size += d.byteLength;
    this.parse(false);
  }

  /** The connection ended: an answer read to the end, or a failure. */
  end(): void {
    this.parse(true);
  }

  private parse(ended: boolean): void {
    const buf = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
    this.chunks = [buf];
    const headEnd = buf.indexOf('\r\n\r\n');
    if (headEnd < 0) {
      if (ended) this.fail(Object.assign(new CodedError('EOF', 'ConnectionClosed'), { unanswered: !this.received }));
      return;
    }
    const head = buf.toString('latin1', 0, headEnd);
    const status = Number(head.slice(9, 12));
    if (!(status >= 100 && status <= 999)) {
      this.fail(new CodedError(`malformed HTTP response ${JSON.stringify(head.slice(0, 32))}`, 'BadResponse'));
      return;
    }
    if (status === 100) {
      // An interim answer: what follows it is the real one.
      this.chunks = [buf.subarray(headEnd + 4)];
      this.size = buf.length - headEnd - 4;
      this.parse(ended);
      return;
    }
    const lower = head.toLowerCase();
    const start = headEnd + 4;
    const length = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
    if (length) {
      const n = Number(length[1]);
      if (buf.length - start >= n) this.done({ status, body: buf.toString('utf8', start, start + n), close: closes(lower) });
      else if (ended) this.fail(new CodedError('unexpected EOF', 'ConnectionClosed'));
      return;
    }
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
      const body = dechunk(buf, start);
      if (body !== undefined) this.done({ status, body, close: closes(lower) });
      else if (ended) this.fail(new CodedError('unexpected EOF', 'ConnectionClosed'));
      return;
    }
    if (status === 204 || status === 304) this.done({ status, body: '', close: closes(lower) });
    else if (ended) this.done({ status, body: buf.toString('utf8', start), close: true });
  }
}

/** Whether the answer's head asks to close the connection. */
const closes = (lowerHead: string) => /\r\nconnection:[^\r]*close/.test(lowerHead);

/** The body of a chunked answer, or undefined while it is incomplete. */
function dechunk(buf: Buffer, start: number): string | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts).toString('utf8');
    if (buf.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** A kept-alive connection; `reader` is the answer it is reading (none while idle). */
interface Conn {
  socket: Socket<Conn>;
  reader: Reader | undefined;
  closed: boolean;
}

const pools = new Map<string, Conn[]>();

function open(r: Http1Request, pool: Conn[]): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const conn = { reader: undefined, closed: false } as unknown as Conn;
    let settled = false;
    const settle = (e?: Error) => {
      if (settled) return;
      settled = true;
      if (e) reject(e);
      else resolve(conn);
    };
    const gone = () => {
      conn.closed = true;
      const i = pool.indexOf(conn);
      if (i >= 0) pool.splice(i, 1);
      conn.reader?.end();
      settle(new CodedError('the connection closed during its handshake', 'ConnectionClosed'));
    };
    Bun.connect<Conn>({
      hostname: r.host,
      port: r.port,
      data: conn,
      tls: { ca: r.ca, serverName: r.serverName ?? r.host },
      socket: {
        open(s) {
          conn.socket = s;
        },
        handshake(s, ok, err) {
          if (ok) return settle();
          const e = err as unknown as { code?: string; message?: string } | null;
          settle(new CodedError(e?.message ?? 'certificate verification failed', e?.code ?? 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'));
          conn.closed = true;
          s.terminate();
        },
        data(_s, d) {
          conn.reader?.push(d);
        },
        end: gone,
        close: gone,
        error(_s, e) {
          settle(e);
          gone();
        },
        connectError(_s, e) {
          settle(e);
        },
      },
    }).catch((e: unknown) => settle(e as Error));
  });
}

function send(conn: Conn, r: Http1Request): Promise<Http1Answer> {
  return new Promise((resolve, reject) => {
    let headers = `POST ${r.path} HTTP/1.1\r\nHost: ${r.hostHeader}\r\nContent-Length: ${Buffer.byteLength(r.body)}\r\n`;
    for (const [k, v] of Object.entries(r.headers)) headers += `${k}: ${v}\r\n`;
    conn.reader = new Reader(
      (a) => {
        conn.reader = undefined;
        resolve(a);
      },
      (e) => {
        conn.reader = undefined;
        reject(e);
      },
    );
    conn.socket.write(`${headers}\r\n${r.body}`);
  });
}

/** POSTs a request and answers the status and body; rejects with a coded Error. */
export async function post1(r: Http1Request): Promise<Http1Answer> {
  const key = `${r.host}\n${r.port}\n${r.serverName ?? ''}\n${r.ca ?? ''}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = [];
    pools.set(key, pool);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let conn: Conn | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Rejected before the socket is closed, so the deadline, not the close, is the answer.
      reject(new CodedError('The operation timed out.', 'ETIMEDOUT', 'TimeoutError'));
      if (conn && !conn.closed) conn.socket.terminate();
    }, r.timeoutMs);
  });
  deadline.catch(() => {});
  try {
    for (let attempt = 0; ; attempt++) {
      const reused = pool.pop();
      if (reused) conn = reused;
      else {
        const opening = open(r, pool);
        // A connection that opens after the deadline is closed, not leaked.
        deadline.catch(() =>
          opening.then(
            (c) => c.socket.end(),
            () => {},
          ),
        );
        conn = await Promise.race([opening, deadline]);
      }
      try {
        const answer = await Promise.race([send(conn, r), deadline]);
        if (!conn.closed && !answer.close && pool.length < MAX_IDLE) pool.push(conn);
        else if (!conn.closed) conn.socket.end();
        return answer;
      } catch (e) {
        if (!conn.closed) conn.socket.terminate();
        if (reused && attempt === 0 && (e as { unanswered?: boolean }).unanswered) continue;
        throw e;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
