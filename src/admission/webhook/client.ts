/**
 * Calling a webhook (the reference's util/webhook client manager and service resolver): the URL
 * of `clientConfig.url`, or `https://<name>.<namespace>.svc:<port><path>` of
 * `clientConfig.service` resolved to one of the Service's ready endpoints (its EndpointSlices, so
 * a local process registered as an endpoint is reached) with the certificate checked against
 * `<name>.<namespace>.svc`; `caBundle` (PEM) as the only trusted roots when given. A POST of JSON
 * with `?timeout=<n>s`, as the reference's REST client tells the webhook its deadline, through
 * the keep-alive connections of http1.ts (why not fetch: there).
 *
 * Failures are CallErrors whose text is the reference's (a Go url.Error):
 *
 *   Post "https://127.0.0.1:9443/validate?timeout=10s": context deadline exceeded
 *   Post "https://...": dial tcp 127.0.0.1:9443: connect: connection refused
 *   Post "https://...": tls: failed to verify certificate: x509: certificate signed by unknown authority
 */

import { type Http1Address, type Http1Answer, post1 } from './http1';

/** A Service port resolved to an address that serves it. */
export interface Endpoint {
  host: string;
  port: number;
}

/** Resolves a Service's port to one ready endpoint; throws an Error naming why not. */
export type ServiceResolver = (namespace: string, name: string, port: number) => Endpoint;

export class CallError extends Error {
  /** The HTTP status the webhook answered (absent: no answer). */
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

export interface Target extends Http1Address {
  /** The URL as the reference shows it in errors (the service's DNS name). */
  display: string;
  /** The URL connected to. */
  url: string;
}

/**
 * The targets of `url` configurations, which depend on nothing else: parsing the URL and decoding
 * the CA bundle on every call was ~5 us of each (a service's target follows its endpoints).
 * Targets are read-only once made.
 */
const urlTargets = new Map<string, Target>();

/** Where a call goes, with `?timeout=`; throws an Error when a service cannot be resolved. */
export function target(
  config: { url: string } | { service: { namespace: string; name: string; port: number; path: string } },
  caBundle: string | undefined,
  timeoutSeconds: number,
  resolve: ServiceResolver,
): Target {
  const urlKey = 'url' in config ? `${config.url}\u0000${caBundle ?? ''}\u0000${timeoutSeconds}` : undefined;
  const known = urlKey === undefined ? undefined : urlTargets.get(urlKey);
  if (known) return known;
  const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
  const query = `timeout=${timeoutSeconds}s`;
  const withQuery = (u: string) => `${u}${u.includes('?') ? '&' : '?'}${query}`;
  if ('url' in config) {
    const u = withQuery(config.url);
    const p = new URL(u);
    const t: Target = { display: u, url: u, ca, ...addressOf(p), hostHeader: p.host };
    if (urlTargets.size >= 1_000) urlTargets.clear();
    urlTargets.set(urlKey as string, t);
    return t;
  }
  const s = config.service;
  const host = `${s.name}.${s.namespace}.svc`;
  const path = s.path.startsWith('/') || s.path === '' ? s.path : `/${s.path}`;
  const display = withQuery(`https://${host}:${s.port}${path}`);
  const ep = resolve(s.namespace, s.name, s.port);
  const address = ep.host.includes(':') ? `[${ep.host}]` : ep.host;
  const url = withQuery(`https://${address}:${ep.port}${path}`);
  return { display, url, ca, serverName: host, ...addressOf(new URL(url)), hostHeader: `${host}:${s.port}` };
}

const addressOf = (u: URL) => ({
  host: u.hostname.replace(/^\[|\]$/g, ''),
  port: Number(u.port || 443),
  path: `${u.pathname}${u.search}`,
});

/** Go's words for a failed connection, from Bun's error codes. */
function networkError(e: unknown, t: Target): string {
  const err = e as { name?: string; code?: string; message?: string };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'context deadline exceeded';
  const code = err?.code ?? '';
  const where = (() => {
    try {
      const u = new URL(t.url);
      return `${u.hostname.replace(/^\[|\]$/g, '')}:${u.port || 443}`;
    } catch {
      return t.url;
    }
  })();
  if (code === 'ConnectionRefused' || code === 'ECONNREFUSED') return `dial tcp ${where}: connect: connection refused`;
  if (code === 'ENOTFOUND' || code === 'DNSException') return `dial tcp: lookup ${where.slice(0, where.lastIndexOf(':'))}: no such host`;
  if (code === 'ConnectionClosed' || code === 'ECONNRESET') return 'EOF';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
      return `tls: failed to verify certificate: x509: certificate is valid for other names, not ${t.serverName ?? where}`;
    return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  }
  return err?.message ?? String(e);
}

/**
 * POSTs `body` and answers the decoded JSON of a 2xx answer. A non-2xx answer is a CallError
 * with its code: the Status it carries, or the reference's words for one without.
 */
export async function post(t: Target, body: string, timeoutMs: number): Promise<unknown> {
  let res: Http1Answer;
  try {
    res = await post1({
      ...t,
      body,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, */*' },
      timeoutMs,
    });
  } catch (e) {
    throw new CallError(`Post "${t.display}": ${networkError(e, t)}`);
  }
  const text = res.body;
  if (res.status < 200 || res.status > 299) {
    let message = '';
    try {
      const s = JSON.parse(text) as { kind?: string; message?: string };
      if (s?.kind === 'Status' && typeof s.message === 'string') message = s.message;
    } catch {}
    if (!message) {
      message =
        text.trim() === ''
          ? `the server responded with the status code ${res.status} but did not return more information`
          : `an error on the server (${JSON.stringify(text.trim().slice(0, 256))}) has prevented the request from succeeding`;
    }
    throw new CallError(message, res.status);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CallError(`couldn't get version/kind; json parse error: ${(e as Error).message}`, res.status);
  }
}
