/**
 * The faults in force and the decision, per request, of which of them fire.
 *
 * Every FaultInjection sees every request (in name order); one whose rules match, that is inside
 * its schedule, under its limit, and that has an action for this kind of request counts the
 * request as matched and draws from its own seeded generator: below `probability` it fires. So
 * each fault's sequence of decisions depends only on its seed and the requests it matched, and
 * the same seed with the same request sequence gives the same injections. The faults that fire
 * combine: delays add up, the first error (by name) answers, the first watch and stale actions
 * apply.
 *
 * Which action applies to which request: error to any (409 Conflict only to writes), delay to
 * any, watch to watches, stale to lists (not to their continuations) and to GETs of an object
 * or its status, store to writes (its `compact` to any).
 *
 * With no FaultInjection `active` is false and the request path takes one branch.
 */
import { type CompiledFlowSchema, flowSchemaMatches } from '../apf/classify';
import type { RequestInfo, RequestUrl } from '../api/request-info';
import { StatusError, tooManyRequests } from '../api/status';
import type { UserInfo } from '../api/user';
import { type ActionKind, type CompiledFault, type Counts, newCounts, type WatchAction } from './compile';

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** What the request path does to one request. */
export interface Injection {
  /** The faults that fired, with the actions each applied. */
  fired: { fault: CompiledFault; actions: ActionKind[] }[];
  delayBeforeMs: number;
  delayAfterMs: number;
  error: StatusError | undefined;
  watch: WatchAction | undefined;
  stale: number | undefined;
  /**
   * A store fault's slow disk for this write (the longest of those that fired): the embedded
   * store's fsync is held that long while the write is in flight (see Faults.serve).
   */
  slowFsyncMs: number;
  /** A store fault failing the write (the first by name). */
  failWrite: boolean;
  /** A store fault compacting the store now. */
  compact: boolean;
  /** Some fired fault asks for a Warning header. */
  warn: boolean;
}

/** The error a fault answers with, in the reference's Status shape for its code. */
export function faultError(f: CompiledFault, info: RequestInfo): StatusError {
  const e = f.error;
  if (!e) throw new Error('bug: faultError without an error action');
  const target = info.isResourceRequest ? (info.group ? `${info.resource}.${info.group}` : info.resource) : '';
  switch (e.code) {
    case 429: {
      const err = tooManyRequests(e.retryAfterSeconds ?? 1);
      return e.message ? new StatusError(429, 'TooManyRequests', e.message, err.details) : err;
    }
    case 409: {
      const name = info.isResourceRequest ? info.name : '';
      const why = e.message || 'the object has been modified; please apply your changes to the latest version and try again';
      const details = info.isResourceRequest
        ? { ...(name ? { name } : {}), ...(info.group ? { group: info.group } : {}), kind: info.resource }
        : undefined;
      return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${target} "${name}": ${why}`, details);
    }
    case 503: {
      const retry = e.retryAfterSeconds;
      const message = e.message || 'the server is currently unable to handle the request';
      const err = new StatusError(503, 'ServiceUnavailable', message, retry === undefined ? {} : { retryAfterSeconds: retry });
      if (retry !== undefined) err.headers = { 'Retry-After': String(retry) };
      return err;
    }
    case 504:
      return new StatusError(
        504,
        'Timeout',
        e.message || 'Timeout: request did not complete within requested timeout - context deadline exceeded',
        {},
      );
    default: {
      const message = e.message || 'fault injected';
      return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
    }
  }
}

/** The actions of `f` that apply to this request. */
function applicable(f: CompiledFault, info: RequestInfo, url: RequestUrl): ActionKind[] {
  const out: ActionKind[] = [];
  for (const a of f.actions) {
    if (a === 'error' && f.error?.code === 409 && !(info.isResourceRequest && WRITES.has(info.verb))) continue;
    if (a === 'watch' && !(info.isResourceRequest && info.verb === 'watch')) continue;
    if (a === 'stale' && !staleApplies(info, url)) continue;
    if (a === 'store' && !f.store?.compact && !(info.isResourceRequest && WRITES.has(info.verb))) continue;
    out.push(a);
  }
  return out;
}

/** A stale read applies to a first list page and to a GET of an object (or of its status). */
function staleApplies(info: RequestInfo, url: RequestUrl): boolean {
  if (!info.isResourceRequest) return false;
  if (info.verb === 'list') return !url.searchParams.has('continue');
  return info.verb === 'get' && (info.subresource === '' || info.subresource === 'status');
}

/**
 * The namespaces a fault can match requests in, when its every rule names them (no '*', no
 * cluster scope, no non-resource rule): it is looked at only for requests in those namespaces.
 */
function onlyNamespaces(f: CompiledFault): string[] | undefined {
  const out = new Set<string>();
  for (const r of f.match.rules) {
    if (r.nonResourceRules.length > 0) return undefined;
    for (const rr of r.resourceRules) {
      if (rr.anyNamespace || rr.clusterScope) return undefined;
      for (const ns of rr.namespaces) out.add(ns);
    }
  }
  return [...out];
}

/** Whether a rule that names `user` itself (as a User or a ServiceAccount) matches the request. */
function namedAndMatches(fs: CompiledFlowSchema, user: UserInfo, info: RequestInfo): boolean {
  const rules = fs.rules.filter((r) => r.users.has(user.name) || r.accounts.has(user.name));
  return rules.length > 0 && flowSchemaMatches({ ...fs, rules }, user, info);
}

const byName = (a: CompiledFault, b: CompiledFault) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export class FaultSet {
  /** In name order. */
  faults: CompiledFault[] = [];
  readonly counts = new Map<string, Counts>();
  /** Whether any fault is configured (the request path's one branch). */
  active = false;
  /**
   * Where decide() looks: faults that name their namespaces under each of them, the others in
   * `general`; so faults scoped to other namespaces cost a request one map lookup in all.
   */
  private general: CompiledFault[] = [];
  private byNamespace = new Map<string, CompiledFault[]>();

  /** Replace the faults (counts of faults that stay are kept; `initial` seeds new ones). */
  configure(faults: CompiledFault[], initial: (f: CompiledFault) => Counts = () => newCounts()): void {
    faults.sort(byName);
    const uids = new Set(faults.map((f) => f.uid));
    for (const uid of this.counts.keys()) if (!uids.has(uid)) this.counts.delete(uid);
    const general: CompiledFault[] = [];
    const byNamespace = new Map<string, CompiledFault[]>();
    for (const f of faults) {
      let c = this.counts.get(f.uid);
      if (!c) {
        c = initial(f);
        this.counts.set(f.uid, c);
      }
      f.counts = c;
      const nss = onlyNamespaces(f);
      if (!nss) general.push(f);
      else
        for (const ns of nss) {
          const l = byNamespace.get(ns);
          if (l) l.push(f);
          else byNamespace.set(ns, [f]);
        }
    }
    this.faults = faults;
    this.general = general;
    this.byNamespace = byNamespace;
    this.active = faults.length > 0;
  }

  /**
   * The injection for a request, or undefined when no fault fires. `own`: a write of the
   * server's own (a controller's, the scheduler's, a simulated kubelet's), matched only by rules
   * that name its identity itself (a User or ServiceAccount subject, not a group or '*').
   */
  decide(user: UserInfo, info: RequestInfo, url: RequestUrl, now: () => number = Date.now, own = false): Injection | undefined {
    const scoped = info.isResourceRequest && info.namespace !== '' ? this.byNamespace.get(info.namespace) : undefined;
    if (this.general.length === 0 && scoped === undefined) return undefined;
    let inj: Injection | undefined;
    let at = 0;
    for (const list of scoped ? [this.general, scoped] : [this.general]) {
      for (const f of list) {
        if (own ? !namedAndMatches(f.match, user, info) : !flowSchemaMatches(f.match, user, info)) continue;
        if (at === 0) at = now();
        if (at < f.startAt || at >= f.endAt) continue;
        const c = f.counts;
        if (c.injected >= f.limit) continue;
        const actions = applicable(f, info, url);
        if (actions.length === 0) continue;
        c.matched++;
        if (!(f.rng.next() < f.probability)) continue;
        c.injected++;
        inj ??= {
          fired: [],
          delayBeforeMs: 0,
          delayAfterMs: 0,
          error: undefined,
          watch: undefined,
          stale: undefined,
          slowFsyncMs: 0,
          failWrite: false,
          compact: false,
          warn: false,
        };
        inj.fired.push({ fault: f, actions });
        inj.warn ||= f.warn;
        for (const a of actions) {
          c.byAction[a]++;
          if (a === 'delay' && f.delay) {
            const ms = f.delay.fixedMs + (f.delay.jitterMs > 0 ? Math.floor(f.rng.next() * (f.delay.jitterMs + 1)) : 0);
            if (f.delay.after) inj.delayAfterMs += ms;
            else inj.delayBeforeMs += ms;
          } else if (a === 'store' && f.store) {
            const write = info.isResourceRequest && WRITES.has(info.verb);
            if (write && f.store.slowFsyncMs > inj.slowFsyncMs) inj.slowFsyncMs = f.store.slowFsyncMs;
            inj.failWrite ||= write && f.store.failWrites;
            inj.compact ||= f.store.compact;
          }
        }
      }
    }
    if (!inj) return undefined;
    // The first fault by name that has each of the other actions supplies it.
    inj.fired.sort((a, b) => byName(a.fault, b.fault));
    for (const { fault: f, actions } of inj.fired) {
      if (actions.includes('error')) inj.error ??= faultError(f, info);
      if (actions.includes('watch')) inj.watch ??= f.watch;
      if (actions.includes('stale')) inj.stale ??= f.stale;
    }
    return inj;
  }
}

/** The audit annotation and Warning text of an injection: `name:action,action; name2:action`. */
export function describe(inj: Injection): string {
  return inj.fired.map((x) => `${x.fault.name}:${x.actions.join(',')}`).join('; ');
}
