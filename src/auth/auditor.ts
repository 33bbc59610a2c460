/**
 * Audit records of requests (src/auth/audit.ts has the policy and the log): begin() at
 * authentication writes RequestReceived (unless omitted) and answers the record the chain fills:
 * the authorization decision, then the response (ResponseStarted for watches, ResponseComplete
 * otherwise), with the request and response bodies at the levels that want them.
 */
import type { RequestInfo, RequestUrl } from '../api/request-info';
import type { UserInfo } from '../api/user';
import { type AuditLevel, type AuditLog, type AuditPolicy, levelOf, objectRef, type Stage } from './audit';
import { requestAnnotations } from './request-user';

export interface AuditRecord {
  done: boolean;
  decide(allowed: boolean): void;
  /** The request failed before a response was made (403). */
  complete(code: number, status?: { status?: string; message?: string; reason?: string }): void;
  respond(res: Response, longRunning: boolean): void;
  /** The handler failed unexpectedly (the reference's recovered panic): stage Panic, 500. */
  panic(message: string): void;
}

const atLeast = (level: AuditLevel, want: AuditLevel) =>
  ['None', 'Metadata', 'Request', 'RequestResponse'].indexOf(level) >= ['None', 'Metadata', 'Request', 'RequestResponse'].indexOf(want);

function withoutManagedFields(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object') {
      const { managedFields: _m, ...metadata } = o.metadata as Record<string, unknown>;
      return { ...o, metadata };
    }
  }
  return v;
}

export class Auditor {
  constructor(
    private readonly policy: AuditPolicy,
    private readonly log: AuditLog,
  ) {}

  begin(
    req: Request,
    info: RequestInfo,
    url: RequestUrl,
    user: UserInfo,
    impersonator: UserInfo | undefined,
    auditID: string,
  ): AuditRecord | undefined {
    const { level, omit, omitManagedFields } = levelOf(this.policy, user, info);
    if (level === 'None') return undefined;
    const received = new Date().toISOString();
    const who = (u: UserInfo) => ({ username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups });
    const base: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level,
      auditID,
      requestURI: url.searchParams.size > 0 ? `${url.pathname}?${url.searchParams}` : url.pathname,
      verb: info.verb,
      user: who(impersonator ?? user),
      ...(impersonator ? { impersonatedUser: who(user) } : {}),
      sourceIPs: (req.headers.get('x-forwarded-for') ?? '127.0.0.1').split(',').map((s) => s.trim()),
      userAgent: req.headers.get('user-agent') ?? '',
      ...(objectRef(info) ? { objectRef: objectRef(info) } : {}),
      requestReceivedTimestamp: received,
    };
    // Shared with admission, which adds its own (policy audit annotations) during the request.
    const annotations = requestAnnotations(req);
    // The request body, read from a copy before the handler consumes the original.
    const body = atLeast(level, 'Request') && req.body !== null ? req.clone().text() : undefined;
    const emit = (stage: Stage, extra: Record<string, unknown>) => {
      if (omit.has(stage)) return;
      this.log.add({
        ...base,
        stage,
        ...extra,
        stageTimestamp: new Date().toISOString(),
        ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
      });
    };
    const parse = (text: string): unknown => {
      try {
        const v = JSON.parse(text);
        return omitManagedFields ? withoutManagedFields(v) : v;
      } catch {
        return undefined;
      }
    };
    emit('RequestReceived', {});
    const record: AuditRecord = {
      done: false,
      decide(allowed) {
        annotations['authorization.k8s.io/decision'] = allowed ? 'allow' : 'forbid';
        annotations['authorization.k8s.io/reason'] = '';
      },
      complete(code, status) {
        record.done = true;
        const responseStatus: Record<string, unknown> = { metadata: {}, code };
        if (status) for (const k of ['status', 'message', 'reason'] as const) if (status[k] !== undefined) responseStatus[k] = status[k];
        emit('ResponseComplete', { responseStatus });
      },
      panic(message) {
        record.done = true;
        emit('Panic', {
          responseStatus: { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${message}`, reason: 'InternalError', code: 500 },
        });
      },
      respond(res, longRunning) {
        record.done = true;
        void (async () => {
          const extra: Record<string, unknown> = { responseStatus: { metadata: {}, code: res.status } };
          if (body) {
            const o = parse(await body);
            if (o !== undefined) extra.requestObject = o;
          }
          if (longRunning) {
            emit('ResponseStarted', extra);
            return;
          }
          const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
          if (res.status >= 400 && json) {
            const st = parse(await res.clone().text()) as Record<string, unknown> | undefined;
            if (st)
              for (const k of ['status', 'message', 'reason'])
                if (st[k] !== undefined) (extra.responseStatus as Record<string, unknown>)[k] = st[k];
          } else if (atLeast(level, 'RequestResponse') && json) {
            const o = parse(await res.clone().text());
            if (o !== undefined) extra.responseObject = o;
          }
          emit('ResponseComplete', extra);
        })();
      },
    };
    return record;
  }
}
