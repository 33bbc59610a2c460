/**
 * How this server talks to a backend: HTTPS over node:https (fetch would join a repeated header
 * such as X-Remote-Group into one line; the backend reads one group per line), with keep-alive
 * connections, TLS as the APIService says (its caBundle verified for the name
 * `<service>.<namespace>.svc`, or no verification with insecureSkipTLSVerify), the answer
 * streamed back as it arrives, and failures told in the words of Go's transport, which clients
 * and users of the reference see.
 */
import * as https from 'node:https';
import type { RemoteApiService } from './api-services';

/** Headers that describe a connection, not a request (RFC 7230 6.1): never forwarded either way. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface BackendTls {
  ca?: string;
  serverName?: string;
  rejectUnauthorized: boolean;
  /** The client certificate presented (--proxy-client-cert-file), PEM. */
  cert?: string;
  key?: string;
}

/** The front proxy's client certificate and key (PEM), presented to every backend. */
export interface ProxyClientCert {
  cert: string;
  key: string;
}

export interface BackendRequest {
  /** host:port ([v6]:port). */
  hostPort: string;
  /** Path and query. */
  path: string;
  method: string;
  /** Header name → value, or values sent as one line each. */
  headers: Record<string, string | string[]>;
  body?: Uint8Array;
  tls: BackendTls;
  signal: AbortSignal;
  agent: https.Agent;
}

/** A plain-text answer of the proxy itself (Go's http.Error). */
export function proxyError(message: string, status: number): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  });
}

export function splitHostPort(hostPort: string): [string, number] {
  const i = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return [host, Number(hostPort.slice(i + 1))];
}

/**
 * Send a request to a backend; resolves with its answer once the status and headers arrived (the
 * body streams, with back pressure), rejects when it cannot be sent or the signal aborts first.
 */
export function send(r: BackendRequest): Promise<Response> {
  const [host, port] = splitHostPort(r.hostPort);
  return new Promise((resolve, reject) => {
    const req = https.request({
      host,
      port,
      path: r.path,
      method: r.method,
      headers: r.headers,
      agent: r.agent,
      ca: r.tls.ca,
      servername: r.tls.serverName,
      rejectUnauthorized: r.tls.rejectUnauthorized,
      cert: r.tls.cert,
      key: r.tls.key,
      signal: r.signal,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const headers = new Headers();
      const raw = res.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const k = raw[i] as string;
        const key = k.toLowerCase();
        if (HOP_BY_HOP.has(key) || key === 'content-length') continue;
        headers.append(k, raw[i + 1] as string);
      }
      const body = new ReadableStream<Uint8Array>({
        start(ctl) {
          res.on('data', (chunk: Buffer) => {
            ctl.enqueue(new Uint8Array(chunk));
            if ((ctl.desiredSize ?? 1) <= 0) res.pause();
          });
          res.on('end', () => ctl.close());
          res.on('error', (e) => ctl.error(e));
        },
        pull() {
          res.resume();
        },
        cancel() {
          res.destroy();
        },
      });
      const status = res.statusCode ?? 502;
      resolve(new Response(r.method === 'HEAD' || status === 204 || status === 304 ? null : body, { status, headers }));
    });
    req.end(r.body);
  });
}

/** The TLS options of a request to the APIService's backend, presenting `client` when given. */
export function backendTls(r: RemoteApiService, client?: ProxyClientCert): BackendTls {
  if (r.insecureSkipTLSVerify) return { rejectUnauthorized: false, ...client };
  // The reference's transport config: ServerName <service>.<namespace>.svc, the caBundle as roots.
  const serverName = `${r.service.name}.${r.service.namespace}.svc`;
  return r.caPem ? { ca: r.caPem, serverName, rejectUnauthorized: true, ...client } : { serverName, rejectUnauthorized: true, ...client };
}

/**
 * TLS for the availability check: no verification (the reference checks with Insecure: true),
 * the proxy's client certificate presented (a backend requiring one would refuse the check).
 */
export const checkTls = (client?: ProxyClientCert): BackendTls => ({ rejectUnauthorized: false, ...client });

/** A fetch failure as Go's transport words it (`dial tcp 127.0.0.1:443: connect: connection refused`). */
export function transportError(e: unknown, hostPort: string, serverName?: string): string {
  const code = (e as { code?: string; name?: string } | undefined)?.code ?? '';
  const name = (e as { name?: string } | undefined)?.name ?? '';
  if (name === 'TimeoutError' || name === 'AbortError') return 'context deadline exceeded';
  switch (code) {
    case 'ECONNREFUSED':
    case 'ConnectionRefused':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ECONNRESET':
    case 'ConnectionClosed':
      return `read tcp ${hostPort}: read: connection reset by peer`;
    case 'ETIMEDOUT':
      return `dial tcp ${hostPort}: i/o timeout`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID': {
      // Node's "... is not in the cert's altnames: DNS:a, DNS:b": Go names the valid ones.
      const names = /.*altnames: (.*)$/.exec((e as Error).message)?.[1]?.replace(/\b(DNS|IP Address):/g, '');
      const host = serverName ?? hostPort;
      return names
        ? `tls: failed to verify certificate: x509: certificate is valid for ${names}, not ${host}`
        : `tls: failed to verify certificate: x509: certificate is not valid for ${host}`;
    }
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    default:
      return e instanceof Error ? e.message : String(e);
  }
}
