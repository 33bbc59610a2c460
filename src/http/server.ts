/**
 * The request path, in one place (as the reference's DefaultBuildHandlerChain):
 *
 *   request info → health (unauthenticated) → authentication → authorization
 *     → priority and fairness (src/apf/; or the two in-flight limits when it is off)
 *     → faults (src/faults/, while any FaultInjection exists) → handler (aggregated API proxy / resource / discovery / openapi / metrics)
 *
 * plus metrics and the one error renderer around it all. This is the only file that knows how
 * a request arrives; handlers receive parsed RequestInfo.
 */

import type { Aggregator } from '../aggregation/builder';
import type { FlowControl } from '../apf/flow-control';
import { prettyPrint } from '../api/query';
import { parseRequestInfo, type RequestInfo, type RequestUrl, requestUrl } from '../api/request-info';
import { pathNotFound, StatusError, tooManyRequests, unauthorized } from '../api/status';
import type { Auditor, AuditRecord } from '../auth/auditor';
import type { Authorizer } from '../auth/authz';
import { impersonated } from '../auth/impersonation';
import { requestUser, setRequestUser } from '../auth/request-user';
import type { TokenAuthenticator } from '../auth/tokens';
import type { Faults } from '../faults';
import { isStorageFailure, undecodableStatus } from '../registry/storage-errors';
import type { Discovery } from './discovery';
import { DISCOVERY_V2_MEDIA_TYPE, discoveryV2, wantsDiscoveryV2 } from './discovery-v2';
import type { Metrics } from './metrics';
import { chooseOutput } from './negotiate';
import type { OpenApi } from './openapi/handler';
import type { ResourceHandler } from './resources';
import { lateReply, reply, replyError, replyText, requestTurn } from './respond';

export interface ChainDeps {
  authn: TokenAuthenticator;
  authz: Authorizer;
  /** The audit log (--audit-log-path with --audit-policy-file); absent: no auditing. */
  audit?: Auditor;
  discovery: Discovery;
  /** Aggregated APIs (src/aggregation/): remote group versions are proxied, and listed in discovery. */
  aggregator?: Aggregator;
  openapi: OpenApi;
  resources: ResourceHandler;
  metrics: Metrics;
  /** API Priority and Fairness; absent (--enable-priority-and-fairness=false): the in-flight limits. */
  apf?: FlowControl;
  /** --max-requests-inflight / --max-mutating-requests-inflight (0: unlimited), without APF. */
  maxInflight: number;
  maxMutatingInflight: number;
  /** --request-timeout in ms for non-long-running requests. */
  requestTimeoutMs: number;
  /** Fault injection (gate FaultInjection); absent: off. */
  faults?: Faults;
  log: (msg: string) => void;
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const METRIC_VERB: Record<string, string> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETE',
};

/** Whether an error answer is indented (?pretty, or a browser's or curl's user agent). */
function prettyOf(req: Request): boolean {
  return prettyPrint(requestUrl(req.url).searchParams, req.headers.get('user-agent'));
}

function isLongRunning(info: RequestInfo): boolean {
  return info.isResourceRequest && info.verb === 'watch';
}

interface Deadline {
  at: number;
  reject: (e: unknown) => void;
}

/**
 * The chain as the front end calls it: `chain(req)` runs all of it; `chain.guarded(req, serve)`
 * runs authentication and authorization for an endpoint the front end routes itself (/metrics,
 * /version, /debug/*) and then `serve`.
 */
export type Chain = ((req: Request) => Promise<Response>) & {
  guarded(req: Request, serve: () => Response | Promise<Response>): Promise<Response>;
};

export function buildHandler(d: ChainDeps): Chain {
  let inflight = 0;
  let mutatingInflight = 0;
  // One sweeper for all request deadlines instead of a timer per request.
  const deadlines = new Set<Deadline>();
  setInterval(() => {
    const now = Date.now();
    for (const x of deadlines) {
      if (now < x.at) continue;
      deadlines.delete(x);
      x.reject(
        new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded', {}),
      );
    }
  }, 200).unref();

  async function route(info: RequestInfo, req: Request, url: RequestUrl, auditID: string): Promise<Response> {
    const remote = d.aggregator?.route(req, info, url, auditID);
    if (remote) return remote;
    if (info.isResourceRequest) return d.resources.handle(info, req, url);
    const method = req.method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') throw pathNotFound();
    const path = url.pathname;
    if (path.startsWith('/openapi/')) return d.openapi.handle(path, url.searchParams, req, d.aggregator?.openapiV3Paths());
    const root = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    if ((root === '/api' || root === '/apis') && wantsDiscoveryV2(req.headers.get('accept'))) {
      const doc = discoveryV2(d.discovery, root === '/api' ? 'api' : 'apis', d.aggregator?.groupVersions() ?? []);
      const res = replyText(JSON.stringify(doc), 200, DISCOVERY_V2_MEDIA_TYPE);
      res.headers.set('vary', 'Accept');
      return res;
    }
    const local = d.discovery.get(path);
    const doc = d.aggregator ? d.aggregator.discovery(path, local) : local;
    if (doc === undefined) throw pathNotFound();
    chooseOutput(req.headers.get('accept'), false);
    const res = reply(doc);
    // /api and /apis have two forms (aggregated or not) by Accept: caches must keep them apart.
    if (root === '/api' || root === '/apis') res.headers.set('vary', 'Accept');
    return res;
  }

  async function withSlot(info: RequestInfo, req: Request, url: RequestUrl, f: () => Promise<Response>): Promise<Response> {
    const mutating = info.isResourceRequest && MUTATING.has(info.verb);
    if (d.apf) {
      const user = requestUser(req);
      if (user) return d.apf.serve(user, info, url.searchParams, req.signal, () => withDeadline(mutating, f));
    }
    if (isLongRunning(info)) return f();
    if (
      mutating ? d.maxMutatingInflight > 0 && mutatingInflight >= d.maxMutatingInflight : d.maxInflight > 0 && inflight >= d.maxInflight
    ) {
      throw tooManyRequests(1);
    }
    if (mutating) mutatingInflight++;
    else inflight++;
    try {
      return await withDeadline(mutating, f);
    } finally {
      if (mutating) mutatingInflight--;
      else inflight--;
    }
  }

  async function withDeadline(mutating: boolean, f: () => Promise<Response>): Promise<Response> {
    // Reads are served from memory with bounded waits (resourceVersion waits end in 504 after
    // 3 s), so only writes, which wait on the disk, get a deadline.
    if (!mutating || d.requestTimeoutMs <= 0) return f();
    // One promise settled by the handler or by the deadline, whichever comes first (what
    // Promise.race of the handler and a timeout promise does, with two promises fewer).
    let deadline: Deadline | undefined;
    const answer = new Promise<Response>((resolve, reject) => {
      deadline = { at: Date.now() + d.requestTimeoutMs, reject };
      deadlines.add(deadline);
      f().then(resolve, reject);
    });
    try {
      return await answer;
    } finally {
      if (deadline) deadlines.delete(deadline);
    }
  }

  /**
   * Authentication, impersonation, authorization: throws the 401 or 403; records the user. With
   * an audit log, the request's audit record starts here (RequestReceived) and carries the
   * authorization decision.
   */
  async function admit(req: Request, info: RequestInfo, auditID: string, url?: RequestUrl): Promise<AuditRecord | undefined> {
    const authenticated = await d.authn.authenticate(req);
    if (!authenticated) throw unauthorized();
    const user = impersonated(req, authenticated, d.authz);
    if (user instanceof StatusError) throw user;
    setRequestUser(req, user);
    const record =
      d.audit && url ? d.audit.begin(req, info, url, user, user === authenticated ? undefined : authenticated, auditID) : undefined;
    const denied = d.authz.authorize(user, info);
    record?.decide(denied === undefined);
    if (denied) {
      record?.complete(denied.code, denied.body());
      throw denied;
    }
    return record;
  }

  async function guarded(req: Request, serve: () => Response | Promise<Response>): Promise<Response> {
    const enteredIn = requestTurn();
    const auditID = auditIdOf(req);
    let res: Response;
    try {
      const url = requestUrl(req.url);
      const info = parseRequestInfo(req.method, url.pathname, url.searchParams);
      await admit(req, info, auditID);
      res = await withSlot(info, req, url, async () => serve());
    } catch (e) {
      res = replyError(e, { pretty: prettyOf(req) }, d.log);
    }
    res.headers.set(AUDIT_ID_HEADER, auditID);
    return lateReply(res, enteredIn);
  }

  async function handle(req: Request): Promise<Response> {
    const enteredIn = requestTurn();
    const started = performance.now();
    const auditID = auditIdOf(req);
    const url = requestUrl(req.url);
    let info: RequestInfo | undefined;
    let res: Response;
    let record: AuditRecord | undefined;
    try {
      info = parseRequestInfo(req.method, url.pathname, url.searchParams);
      record = await admit(req, info, auditID, url);
      const i = info;
      const serve = () => route(i, req, url, auditID);
      const faults = d.faults;
      res = await withSlot(i, req, url, faults?.active ? () => faults.serve(i, req, url, serve) : serve);
    } catch (e) {
      // Anything but an API error or a known store condition is a failure of the server itself:
      // audited as the reference audits a recovered panic.
      if (record && !record.done && !(e instanceof StatusError) && !isStorageFailure(e)) {
        record.panic(e instanceof Error ? e.message : String(e));
      }
      res = replyError(undecodableStatus(e) ?? e, { pretty: prettyOf(req) }, d.log);
    }
    res.headers.set(AUDIT_ID_HEADER, auditID);
    if (record && !record.done) record.respond(res, info !== undefined && isLongRunning(info));
    if (info?.isResourceRequest) {
      d.metrics.observe(
        {
          verb: METRIC_VERB[info.verb] ?? req.method,
          dryRun: url.searchParams.has('dryRun') ? 'All' : '',
          group: info.group,
          version: info.version,
          resource: info.resource,
          subresource: info.subresource,
          scope: info.name || info.verb === 'create' ? 'resource' : info.namespace ? 'namespace' : 'cluster',
          component: 'apiserver',
          code: String(res.status),
        },
        (performance.now() - started) / 1000,
      );
    }
    return lateReply(res, enteredIn);
  }

  return Object.assign(handle, { guarded });
}

/**
 * Every answer names its request's audit ID, as the reference's WithAuditInit filter does for
 * every request, audited or not: the client's Audit-ID header when it sent one (kept as sent), else
 * a new UUID. The audit log's events carry the same ID.
 */
const AUDIT_ID_HEADER = 'Audit-Id';

function auditIdOf(req: Request): string {
  return req.headers.get('audit-id') || crypto.randomUUID();
}

/** An answer made outside the chain (health checks) with its request's Audit-Id. */
export function withAuditId(req: Request, res: Response): Response {
  res.headers.set(AUDIT_ID_HEADER, auditIdOf(req));
  return res;
}
