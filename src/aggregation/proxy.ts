/**
 * The proxy to an aggregated API server (the reference's kube-aggregator proxyHandler). A request
 * reaches it after this server's own chain (authentication, impersonation, audit, authorization,
 * priority and fairness), as in the reference, where the aggregator's handler chain runs before
 * the proxy; the backend authorizes again on its side.
 *
 * To the backend go the request's method, path (the group spelled as the APIService spells it),
 * query, body and headers, minus Authorization, Impersonate-* and hop-by-hop headers, plus the
 * user as X-Remote-User, X-Remote-Uid (with RemoteRequestHeaderUID), X-Remote-Group (one per
 * group), X-Remote-Extra-<key> (the key %-escaped as client-go escapes it) and the request's
 * Audit-ID. The answer comes back as it is, streamed (watches pass through chunk by chunk).
 * Answers of the proxy itself are plain text, as the reference's http.Error: `service
 * unavailable` (503) while the APIService is not Available or its Service has no endpoint, the
 * transport's error (503) when the backend cannot be reached. Upgrade requests (exec, attach,
 * port-forward of an aggregated API) go through upgrade.ts: WebSockets, message by message.
 */

import type * as https from 'node:https';
import type { UserInfo } from '../api/user';
import type { ServiceResolver } from '../kinds/service-resolver';
import type { RemoteApiService } from './api-services';
import { backendTls, HOP_BY_HOP, type ProxyClientCert, proxyError, send, splitHostPort, transportError } from './transport';
import { type AcceptUpgrade, isUpgrade, proxyUpgrade } from './upgrade';

export { proxyError } from './transport';

/** Discovery requests (/apis/<group>/<version>) get this long (NewRequestForProxy's 5 s). */
const DISCOVERY_TIMEOUT_MS = 5000;

/** RFC 7230 token characters but '%': the bytes client-go leaves unescaped in a header key. */
const TOKEN = /^[!#$&'*+\-.^_`|~0-9A-Za-z]$/;

/** An X-Remote-Extra- key as client-go writes it (headerKeyEscape). */
export function headerKeyEscape(key: string): string {
  let out = '';
  for (const b of Buffer.from(key, 'utf8')) {
    const ch = String.fromCharCode(b);
    out += b < 0x7f && TOKEN.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The headers sent to the backend (SetAuthProxyHeaders over the client's headers). */
export function backendHeaders(from: Headers, user: UserInfo, auditId: string, withUid = false): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  for (const [k, v] of from) {
    const key = k.toLowerCase();
    if (HOP_BY_HOP.has(key) || key === 'host' || key === 'authorization' || key === 'content-length') continue;
    if (key.startsWith('impersonate-') || key.startsWith('x-remote-') || key === 'audit-id') continue;
    h[key] = v;
  }
  h['X-Remote-User'] = user.name;
  // RemoteRequestHeaderUID (beta, on, in 1.33): the UID too, when the user has one.
  if (withUid && user.uid) h['X-Remote-Uid'] = user.uid;
  if (user.groups.length > 0) h['X-Remote-Group'] = [...user.groups];
  for (const [k, values] of Object.entries(user.extra ?? {})) {
    if (values.length > 0) h[`X-Remote-Extra-${headerKeyEscape(k)}`] = [...values];
  }
  h['Audit-ID'] = auditId;
  return h;
}

export interface ProxyTarget {
  remote: RemoteApiService;
  /** The path as the backend gets it, and the query. */
  path: string;
  query: string;
  /** A discovery request (/apis/<group>/<version>): the short timeout applies. */
  discovery: boolean;
}

export interface ProxyOptions {
  /** RemoteRequestHeaderUID: the user's UID as X-Remote-Uid. */
  withUid?: boolean;
  /** --proxy-client-cert-file / --proxy-client-key-file. */
  clientCert?: ProxyClientCert;
  /** The front end's WebSocket upgrade (absent: upgrade requests are refused). */
  accept?: AcceptUpgrade;
}

/**
 * Send `req` to the backend of `t.remote` and answer with what it says (an upgrade request:
 * upgrade.ts). `unreachable` is told when the backend could not be reached (the availability
 * controller checks it again at once).
 */
export async function proxy(
  req: Request,
  t: ProxyTarget,
  user: UserInfo,
  auditId: string,
  resolver: ServiceResolver,
  agent: https.Agent,
  unreachable: (r: RemoteApiService) => void,
  o: ProxyOptions = {},
): Promise<Response> {
  const { remote } = t;
  if (!remote.available) return proxyError('service unavailable', 503);
  let hostPort: string;
  try {
    hostPort = resolver.resolve(remote.service.namespace, remote.service.name, remote.service.port);
  } catch {
    return proxyError('service unavailable', 503);
  }
  const method = req.method.toUpperCase();
  const tls = backendTls(remote, o.clientCert);
  const path = `${t.path}${t.query ? `?${t.query}` : ''}`;
  const headers = backendHeaders(req.headers, user, auditId, o.withUid === true);
  if (isUpgrade(req.headers)) {
    const [host, port] = splitHostPort(hostPort);
    try {
      return await proxyUpgrade(req, { host, port, hostPort, path, headers, tls, signal: req.signal }, o.accept);
    } catch (e) {
      unreachable(remote);
      return proxyError(transportError(e, hostPort, tls.serverName), 503);
    }
  }
  const body = method === 'GET' || method === 'HEAD' ? undefined : new Uint8Array(await req.arrayBuffer());
  const signal = t.discovery ? AbortSignal.any([req.signal, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS)]) : req.signal;
  try {
    return await send({
      hostPort,
      path,
      method,
      headers,
      body,
      tls,
      signal,
      agent,
    });
  } catch (e) {
    unreachable(remote);
    return proxyError(transportError(e, hostPort, tls.serverName), 503);
  }
}
