/**
 * Fault injection (issue 40, feature gate FaultInjection): testing.svc.io/v1alpha1
 * FaultInjection objects make the server misbehave on purpose for the requests they match
 * (matched as FlowSchemas match, decided by a seeded generator, so a run replays).
 *
 *   compile.ts     an object → the matcher, window, limit, actions and generator
 *   engine.ts      which faults fire for a request (FaultSet.decide), their Status errors
 *   controller.ts  follows the kind's watch cache; writes matched/injected and conditions back
 *   watch.ts       a watch's action, handed to the watch handler (close, 410, delays, bookmarks)
 *   read.ts        a stale GET's revision, handed to the resource handler
 *   own-writes.ts  faults in the server's own writes (controllers, scheduler, kubelets)
 *   index.ts       the front end's filter: delay, answer with the error, stale lists and GETs,
 *                  store faults (a failed write; a slow disk: the embedded store's WAL holds its
 *                  fsync while the matched write is in flight; a compaction now), the annotation
 *                  `faults.svc.io/injected`, the Warning header, the metrics
 *
 * Faults apply to requests that arrive over HTTP, in the front end, after authentication,
 * authorization and priority and fairness (a delay holds its seat, as a slow server would). The
 * server's own controllers write in-process through the registry, not over HTTP: their writes
 * are faulted in the admission chain, and only by rules that name them (own-writes.ts). Requests on faultinjections themselves are never faulted (so a fault on
 * every resource can still be deleted). Who may create faults is the business of the
 * FaultInjectionAuthorization admission plugin (src/admission/fault-injection.ts); the kind's
 * schema and rules are in src/kinds (specs/testing.ts, validation/fault-injection.ts).
 */
import type { RequestInfo, RequestUrl } from '../api/request-info';
import { StatusError } from '../api/status';
import { warningHeader } from '../api/warning';
import { requestAnnotations, requestUser } from '../auth/request-user';
import { TESTING_GROUP } from '../kinds/specs/testing';
import type { Plugin } from '../registry/admission';
import type { ApiRegistry } from '../registry/api-registry';
import { StoreError } from '../store/types';
import { FaultController } from './controller';
import { describe, FaultSet, type Injection } from './engine';
import { ownWritesPlugin } from './own-writes';
import { setStaleRead } from './read';
import { setWatchFault } from './watch';

export const INJECTED_ANNOTATION = 'faults.svc.io/injected';

export interface FaultsDeps {
  api: ApiRegistry;
  /** Where /metrics collects its text from. */
  metrics: { readonly sources: ((out: string[]) => void)[] };
  /** The store's newest and compacted revisions (stale lists read below the newest, above the compacted). */
  revisions: () => { revision: number; compacted: number };
  /** Compact the store at its newest revision (a store fault's `compact`). */
  compact?: () => Promise<void>;
  /**
   * Slow the store's fsync by `ms` until the returned release is called (a store fault's
   * `slowFsyncMs`; StoreBackend.slowFsync). Absent or undefined (etcd, a store in memory): the
   * matched write's answer is delayed that long instead.
   */
  slowFsync?: (ms: number) => (() => void) | undefined;
  log: (msg: string) => void;
}

export class Faults {
  readonly set = new FaultSet();
  readonly controller: FaultController | undefined;
  /** The admission plugin that injects faults into the server's own writes (own-writes.ts). */
  readonly ownWrites: Plugin;

  constructor(private readonly d: FaultsDeps) {
    this.ownWrites = ownWritesPlugin({
      set: this.set,
      writeFailure: (info) => this.writeFailure(info),
      log: d.log,
      exempt: (group, resource) => group === TESTING_GROUP && resource === 'faultinjections',
    });
    const store = d.api.lookup(TESTING_GROUP, 'v1alpha1', 'faultinjections');
    this.controller = store ? new FaultController(this.set, store, d.log) : undefined;
    d.metrics.sources.push((out) => this.metricLines(out));
  }

  /** Whether any fault is configured: the request path's one branch. */
  get active(): boolean {
    return this.set.active;
  }

  start(): Promise<void> {
    return this.controller?.start() ?? Promise.resolve();
  }

  stop(): void {
    this.controller?.stop();
  }

  /**
   * Serve a request with the faults that fire for it: `next` serves it as usual. An error answer
   * is thrown as the StatusError it is (the chain renders it, Warning header included).
   */
  serve(info: RequestInfo, req: Request, url: RequestUrl, next: () => Promise<Response>): Promise<Response> {
    // The faults themselves are never faulted: a fault on every resource can still be deleted.
    if (info.isResourceRequest && info.resource === 'faultinjections' && info.group === TESTING_GROUP) return next();
    const user = requestUser(req);
    const inj = user && this.set.decide(user, info, url);
    return inj ? this.inject(inj, info, req, url, next) : next();
  }

  private async inject(inj: Injection, info: RequestInfo, req: Request, url: RequestUrl, next: () => Promise<Response>): Promise<Response> {
    const text = describe(inj);
    requestAnnotations(req)[INJECTED_ANNOTATION] = text;
    const warning = inj.warn ? warningHeader(`fault injected: ${text}`) : undefined;
    if (inj.delayBeforeMs > 0) await Bun.sleep(inj.delayBeforeMs);
    if (inj.compact) await this.d.compact?.().catch((e) => this.d.log(`fault compaction: ${e instanceof Error ? e.message : String(e)}`));
    if (!inj.error && inj.failWrite) inj.error = this.writeFailure(info);
    if (inj.error) {
      if (inj.delayAfterMs > 0) await Bun.sleep(inj.delayAfterMs);
      if (warning) inj.error.headers = { ...inj.error.headers, Warning: warning };
      throw inj.error;
    }
    if (inj.watch) setWatchFault(req, inj.watch);
    if (inj.stale !== undefined) this.staleRead(info, req, url, inj.stale);
    let res: Response;
    const release = inj.slowFsyncMs > 0 ? this.d.slowFsync?.(inj.slowFsyncMs) : undefined;
    if (inj.slowFsyncMs > 0 && !release) inj.delayAfterMs += inj.slowFsyncMs;
    try {
      res = await next();
    } finally {
      release?.();
    }
    if (inj.delayAfterMs > 0) await Bun.sleep(inj.delayAfterMs);
    if (warning) res.headers.append('Warning', warning);
    return res;
  }

  /** A write the store could not persist, answered as the registry answers one (500 InternalError). */
  private writeFailure(info: RequestInfo): StatusError {
    const e = new StoreError('unavailable', 'wal: fdatasync: input/output error (fault injected)');
    const store = info.isResourceRequest ? this.d.api.lookup(info.group, info.version, info.resource) : undefined;
    const t = store ? store.translate(e, info.isResourceRequest ? info.name : '') : e;
    return t instanceof StatusError
      ? t
      : new StatusError(500, 'InternalError', `Internal error occurred: ${e.message}`, { causes: [{ message: e.message }] });
  }

  /**
   * A stale read, as a cache lagging `stale` revisions behind would answer: at the revision that
   * far below the newest (never at or below the compacted one, never above the newest). A list
   * is read exactly there; a GET gets the object's newest version at or below it (404 when it
   * did not exist then).
   */
  private staleRead(info: RequestInfo, req: Request, url: RequestUrl, stale: number): void {
    const { revision, compacted } = this.d.revisions();
    const at = Math.min(Math.max(revision - stale, compacted + 1, 1), Math.max(revision, 1));
    if (info.isResourceRequest && info.verb === 'get') {
      setStaleRead(req, at);
      return;
    }
    url.searchParams.set('resourceVersion', String(at));
    url.searchParams.set('resourceVersionMatch', 'Exact');
  }

  /** svc_fault_matched_total{fault} and svc_fault_injections_total{fault,action}. */
  private metricLines(out: string[]): void {
    if (this.set.faults.length === 0) return;
    out.push('# HELP svc_fault_matched_total Requests a FaultInjection matched while active.', '# TYPE svc_fault_matched_total counter');
    for (const f of this.set.faults) out.push(`svc_fault_matched_total{fault="${f.name}"} ${this.set.counts.get(f.uid)?.matched ?? 0}`);
    out.push(
      '# HELP svc_fault_injections_total Faults injected, by FaultInjection and action.',
      '# TYPE svc_fault_injections_total counter',
    );
    for (const f of this.set.faults) {
      const c = this.set.counts.get(f.uid);
      for (const a of f.actions) out.push(`svc_fault_injections_total{action="${a}",fault="${f.name}"} ${c?.byAction[a] ?? 0}`);
    }
  }
}

/** The faults of the server: undefined unless the kind is served (the gate FaultInjection). */
export function createFaults(d: FaultsDeps): Faults | undefined {
  if (!d.api.lookup(TESTING_GROUP, 'v1alpha1', 'faultinjections')) return undefined;
  return new Faults(d);
}
