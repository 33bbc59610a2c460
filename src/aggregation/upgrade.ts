/**
 * Upgrade requests to an aggregated API (the reference's UpgradeAwareHandler: kubectl exec,
 * attach and port-forward of a backend's resources). The front end (Bun.serve) hands over no raw
 * connection, only WebSocket upgrades, so a WebSocket upgrade is proxied message by message:
 *
 *   1. a TLS connection to the backend (its caBundle, the proxy's client certificate) carries the
 *      request as HTTP/1.1 with `Connection: Upgrade`, the client's Upgrade and Sec-WebSocket-*
 *      headers (no extensions: messages are re-framed here) and the user's X-Remote-* headers;
 *   2. the backend's answer: anything but 101 goes back to the client as it is (a refusal, a 404);
 *      101 accepts the client's upgrade with the subprotocol the backend chose
 *      (v5.channel.k8s.io and the like);
 *   3. then each message goes across as it is (text as text, binary as binary), pings are
 *      answered on each side, a close on either side closes the other with its code and reason.
 *
 * An upgrade to anything but a WebSocket (SPDY/3.1) is answered 400: the front end cannot pass
 * it through (kubectl speaks WebSocket first, SPDY only when that fails).
 */
import * as tls from 'node:tls';
import { type BackendTls, proxyError } from './transport';
import { closePayload, encodeFrame, FrameReader, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT } from './ws-frames';

/** The client's side of an accepted WebSocket (Bun's ServerWebSocket, as the front end hands it). */
export interface ClientSocket {
  /** -1: queued under back pressure (drain follows), 0: dropped, > 0: sent. */
  send(data: string | Uint8Array): number;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

export interface SocketHandlers {
  open(ws: ClientSocket): void;
  message(ws: ClientSocket, m: string | Uint8Array): void;
  close(ws: ClientSocket, code: number, reason: string): void;
  drain(ws: ClientSocket): void;
}

/** The front end accepting `req`'s WebSocket upgrade with these response headers; false when it cannot. */
export type AcceptUpgrade = (req: Request, headers: Record<string, string>, h: SocketHandlers) => boolean;

/** Whether `req` asks for a protocol upgrade (Connection: upgrade and an Upgrade header). */
export function isUpgrade(h: Headers): boolean {
  const c = h.get('connection');
  return (
    c !== null &&
    h.get('upgrade') !== null &&
    c
      .toLowerCase()
      .split(/\s*,\s*/)
      .includes('upgrade')
  );
}

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Head {
  status: number;
  reason: string;
  headers: [string, string][];
  /** Bytes after the head. */
  rest: Uint8Array;
}

function indexOfCrlf2(b: Uint8Array): number {
  for (let i = 3; i < b.byteLength; i++) if (b[i] === 10 && b[i - 1] === 13 && b[i - 2] === 10 && b[i - 3] === 13) return i - 3;
  return -1;
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** A chunked body decoded, or undefined while its last chunk has not arrived. */
function dechunk(b: Uint8Array): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    let eol = -1;
    for (let i = at + 1; i < b.byteLength; i++)
      if (b[i] === 10 && b[i - 1] === 13) {
        eol = i - 1;
        break;
      }
    if (eol < 0) return undefined;
    const size = Number.parseInt(dec.decode(b.subarray(at, eol)), 16);
    if (Number.isNaN(size)) return join(new Uint8Array(0), b);
    if (size === 0) break;
    if (b.byteLength < eol + 2 + size + 2) return undefined;
    parts.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return parts.reduce((x, p) => join(x, p), new Uint8Array(0));
}

/** Reads from a socket until a condition on what arrived holds; rejects when it ends first. */
function readUntil<T>(
  socket: tls.TLSSocket,
  start: Uint8Array,
  done: (b: Uint8Array) => T | undefined,
  atEnd?: (b: Uint8Array) => T,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = start;
    const first = done(buf);
    if (first !== undefined) return resolve(first);
    const onData = (chunk: Buffer) => {
      buf = join(buf, new Uint8Array(chunk));
      const r = done(buf);
      if (r !== undefined) {
        off();
        resolve(r);
      }
    };
    const onEnd = () => {
      off();
      if (atEnd) resolve(atEnd(buf));
      else reject(Object.assign(new Error('unexpected EOF'), { code: 'ECONNRESET' }));
    };
    const onError = (e: Error) => {
      off();
      reject(e);
    };
    const off = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onError);
  });
}

function parseHead(b: Uint8Array): Head | undefined {
  const end = indexOfCrlf2(b);
  if (end < 0) return undefined;
  const lines = dec.decode(b.subarray(0, end)).split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0] ?? '');
  if (!m) throw new Error(`malformed HTTP response ${JSON.stringify(lines[0] ?? '')}`);
  const headers: [string, string][] = [];
  for (const l of lines.slice(1)) {
    const colon = l.indexOf(':');
    if (colon > 0) headers.push([l.slice(0, colon).trim(), l.slice(colon + 1).trim()]);
  }
  return { status: Number(m[1]), reason: m[2] ?? '', headers, rest: b.slice(end + 4) };
}

export interface UpgradeTarget {
  host: string;
  port: number;
  /** host:port, the Host header. */
  hostPort: string;
  /** Path and query. */
  path: string;
  /** The backend's headers (backendHeaders: the user, no credentials, no hop-by-hop headers). */
  headers: Record<string, string | string[]>;
  tls: BackendTls;
  signal: AbortSignal;
}

/** Connects to the backend; rejects as the transport does (the caller words the 503). */
function connect(t: UpgradeTarget): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: t.host,
      port: t.port,
      ca: t.tls.ca,
      servername: t.tls.serverName,
      rejectUnauthorized: t.tls.rejectUnauthorized,
      cert: t.tls.cert,
      key: t.tls.key,
      ALPNProtocols: ['http/1.1'],
    });
    const onAbort = () => socket.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    t.signal.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => {
      t.signal.removeEventListener('abort', onAbort);
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Proxies `req`'s upgrade to the backend. Resolves with the backend's answer when it refused the
 * upgrade, or with a placeholder the front end discards once the client's upgrade is accepted;
 * rejects when the backend cannot be reached.
 */
export async function proxyUpgrade(req: Request, t: UpgradeTarget, accept: AcceptUpgrade | undefined): Promise<Response> {
  const protocol = req.headers.get('upgrade') ?? '';
  if (!accept || protocol.toLowerCase() !== 'websocket')
    return proxyError(`upgrade to ${JSON.stringify(protocol)} is not supported by this server; use a WebSocket`, 400);
  const socket = await connect(t);
  const lines = [`${req.method.toUpperCase()} ${t.path} HTTP/1.1`, `Host: ${t.hostPort}`, 'Connection: Upgrade', `Upgrade: ${protocol}`];
  for (const [k, v] of Object.entries(t.headers)) {
    if (k.toLowerCase() === 'sec-websocket-extensions') continue;
    for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
  }
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  // A client gone (or the request's deadline) before the backend answered: the connection goes too.
  const onAbort = () => socket.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' }));
  t.signal.addEventListener('abort', onAbort, { once: true });
  let head: Head;
  try {
    head = await readUntil(socket, new Uint8Array(0), parseHead);
  } catch (e) {
    socket.destroy();
    throw e;
  } finally {
    t.signal.removeEventListener('abort', onAbort);
  }
  const get = (name: string) => head.headers.find(([k]) => k.toLowerCase() === name)?.[1];
  if (head.status !== 101) return refused(socket, head, get);
  const headers: Record<string, string> = {};
  const chosen = get('sec-websocket-protocol');
  if (chosen) headers['Sec-WebSocket-Protocol'] = chosen;
  const bridge = new Bridge(socket);
  if (!accept(req, headers, bridge.handlers())) {
    socket.destroy();
    return proxyError('the WebSocket upgrade could not be accepted', 400);
  }
  bridge.start(head.rest);
  return new Response(null, { status: 101 });
}

/** The backend's non-101 answer, read whole (Content-Length, chunked, or to the end). */
async function refused(socket: tls.TLSSocket, head: Head, get: (name: string) => string | undefined): Promise<Response> {
  const length = get('content-length');
  const chunked = get('transfer-encoding')?.toLowerCase().includes('chunked') === true;
  let body: Uint8Array;
  try {
    body = await readUntil(
      socket,
      head.rest,
      (b) =>
        length !== undefined
          ? b.byteLength >= Number(length)
            ? b.subarray(0, Number(length))
            : undefined
          : chunked
            ? dechunk(b)
            : undefined,
      (b) => b,
    );
  } finally {
    socket.destroy();
  }
  const headers = new Headers();
  for (const [k, v] of head.headers) {
    const key = k.toLowerCase();
    if (key === 'content-length' || key === 'transfer-encoding' || key === 'connection' || key === 'upgrade') continue;
    headers.append(k, v);
  }
  return new Response(body.byteLength > 0 ? body : null, { status: head.status, headers });
}

/** The two sides of one proxied WebSocket. */
class Bridge {
  private client: ClientSocket | undefined;
  private readonly reader = new FrameReader();
  /** Messages from the backend before the client's side opened. */
  private pending: { opcode: number; payload: Uint8Array }[] = [];
  private closed = false;

  constructor(private readonly socket: tls.TLSSocket) {}

  handlers(): SocketHandlers {
    return {
      open: (ws) => {
        this.client = ws;
        const queued = this.pending;
        this.pending = [];
        for (const m of queued) this.toClient(m.opcode, m.payload);
      },
      message: (_ws, m) => {
        if (this.closed) return;
        this.socket.write(typeof m === 'string' ? encodeFrame(OP_TEXT, enc.encode(m)) : encodeFrame(OP_BINARY, m));
      },
      close: (_ws, code, reason) => {
        if (this.closed) return;
        this.closed = true;
        // 1005/1006 are never sent in a close frame.
        const sendable = code >= 1000 && code !== 1005 && code !== 1006 ? code : undefined;
        this.socket.end(encodeFrame(OP_CLOSE, closePayload(sendable, reason)));
      },
      drain: () => this.socket.resume(),
    };
  }

  start(rest: Uint8Array): void {
    const feed = (chunk: Uint8Array) => {
      for (const m of this.reader.push(chunk)) {
        if (this.client) this.toClient(m.opcode, m.payload);
        else this.pending.push(m);
      }
    };
    this.socket.on('data', (chunk: Buffer) => feed(new Uint8Array(chunk)));
    this.socket.on('close', () => {
      if (this.closed) return;
      this.closed = true;
      this.client?.terminate();
    });
    this.socket.on('error', () => this.socket.destroy());
    if (rest.byteLength > 0) feed(rest);
  }

  private toClient(opcode: number, payload: Uint8Array): void {
    const ws = this.client as ClientSocket;
    switch (opcode) {
      case OP_TEXT:
      case OP_BINARY: {
        // Back pressure: stop reading the backend until the client's side drains.
        if (ws.send(opcode === OP_TEXT ? dec.decode(payload) : payload) === -1) this.socket.pause();
        return;
      }
      case OP_PING:
        this.socket.write(encodeFrame(OP_PONG, payload));
        return;
      case OP_CLOSE: {
        if (this.closed) {
          this.socket.end();
          return;
        }
        this.closed = true;
        const code = payload.byteLength >= 2 ? ((payload[0] as number) << 8) | (payload[1] as number) : undefined;
        const reason = payload.byteLength > 2 ? dec.decode(payload.subarray(2)) : undefined;
        // The close answered to the backend, then the client's side closed with its code.
        this.socket.end(encodeFrame(OP_CLOSE, payload.subarray(0, Math.min(payload.byteLength, 2))));
        ws.close(code, reason);
        return;
      }
      default:
        return;
    }
  }
}
