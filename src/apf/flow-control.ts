/**
 * API Priority and Fairness: the request filter and the state it works on (the reference's
 * apf_controller + apf_filter). The configuration objects (FlowSchemas and
 * PriorityLevelConfigurations, from their watch caches) give:
 *
 *   flow schemas, sorted     classify(user, request) → schema → priority level, distinguisher
 *   priority levels          Exempt: run at once (counted); Limited: a QueueSet with the
 *                            level's current seat limit (borrowing moves it every 10 s)
 *
 * A request takes seats by its estimated work (work-estimate.ts), waits in its level's queues at
 * most the wait limit (a quarter of --request-timeout), and is answered 429 with Retry-After when
 * refused. Served and refused answers carry X-Kubernetes-PF-FlowSchema-UID and
 * X-Kubernetes-PF-PriorityLevel-UID. A watch holds its seats until its handler has produced the
 * response (the initial events); the stream itself holds none.
 */

import type { Obj } from '../api/meta';
import type { RequestInfo } from '../api/request-info';
import { type StatusError, tooManyRequests } from '../api/status';
import type { UserInfo } from '../api/user';
import { ADJUSTMENT_PERIOD_MS, allocate, type LevelLimits, type LevelShares, levelLimits, SeatDemandStats } from './borrowing';
import { byPrecedence, type CompiledFlowSchema, classify, compileFlowSchema, distinguisher } from './classify';
import { type Clock, realClock } from './clock';
import { type FlowHash, hashFlow } from './dealer';
import { FlowStats } from './flow-stats';
import { Integrator } from './integrator';
import { type QueuedRequest, QueueSet, type QueuingConfig, type RejectReason } from './queueset';
import { type Counts, estimateWork } from './work-estimate';

type J = Record<string, unknown>;
const obj = (v: unknown): J => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {});
const num = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);
/** Entries a memo keeps per user (requests classified) or per flow schema (flow hashes) before it starts over. */
const MEMO_ENTRIES = 1024;

/** `make()` kept under `owner` and `key` (at most MEMO_ENTRIES keys per owner). */
function memoized<O extends object, V>(memo: WeakMap<O, Map<string, V>>, owner: O, key: string, make: () => V): V {
  let m = memo.get(owner);
  if (m === undefined) {
    m = new Map();
    memo.set(owner, m);
  }
  let v = m.get(key);
  if (v === undefined) {
    v = make();
    if (m.size >= MEMO_ENTRIES) m.clear();
    m.set(key, v);
  }
  return v;
}

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

/** What a request carries while it waits or runs (dumps, metrics). */
export interface RequestTag {
  fs: CompiledFlowSchema;
  distinguisher: string;
  user: UserInfo;
  info: RequestInfo;
  flow: FlowStats;
}

export class PriorityLevel {
  readonly integrator: Integrator;
  readonly stats = new SeatDemandStats();
  limits: LevelLimits = { nominal: 0, lendable: 0, borrowing: 0, lower: 0, upper: 0 };
  current = 0;
  /** Exempt levels: requests and seats running (Limited levels: their QueueSet's totals). */
  exemptExecuting = 0;
  dispatched = 0;
  rejected = 0;
  timedOut = 0;
  cancelled = 0;
  qs: QueueSet | undefined;

  constructor(
    public obj: Obj,
    public shares: LevelShares,
    public queuing: QueuingConfig | undefined,
    clock: Clock,
  ) {
    this.integrator = new Integrator(clock);
  }

  get name(): string {
    return this.obj.metadata.name as string;
  }

  get uid(): string {
    return String(this.obj.metadata.uid ?? '');
  }

  get exempt(): boolean {
    return this.queuing === undefined;
  }
}

export function levelSettings(o: Obj): { shares: LevelShares; queuing: QueuingConfig | undefined } {
  const spec = obj(o.spec);
  if (spec.type === 'Exempt') {
    const e = obj(spec.exempt);
    return {
      shares: { shares: num(e.nominalConcurrencyShares, 0), lendablePercent: num(e.lendablePercent, 0), borrowingLimitPercent: 0 },
      queuing: undefined,
    };
  }
  const l = obj(spec.limited);
  const lr = obj(l.limitResponse);
  const q = obj(lr.queuing);
  return {
    shares: {
      shares: num(l.nominalConcurrencyShares, 30),
      lendablePercent: num(l.lendablePercent, 0),
      borrowingLimitPercent: typeof l.borrowingLimitPercent === 'number' ? l.borrowingLimitPercent : undefined,
    },
    queuing:
      lr.type === 'Queue'
        ? { queues: num(q.queues, 64), handSize: num(q.handSize, 8), queueLengthLimit: num(q.queueLengthLimit, 50) }
        : { queues: 0, handSize: 0, queueLengthLimit: 0 },
  };
}

export interface FlowControlOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  /** How long a request may wait in a queue (a quarter of --request-timeout). */
  requestWaitLimitMs: number;
  clock?: Clock;
  /** Objects stored and watchers open for a request's resource (seat estimates). */
  counts?: Counts;
  /** LISTs take seats by the bytes they hold rather than the objects they process (gate SizeBasedListCostEstimate). */
  sizeBasedListEstimate?: boolean;
}

export class FlowControl {
  readonly clock: Clock;
  private schemas: CompiledFlowSchema[] = [];
  private levels = new Map<string, PriorityLevel>();
  private readonly flows = new Map<string, FlowStats>();
  /**
   * Memos of the per-request work that depends only on the configuration and on who asks for
   * what (each made anew by configure()): a request of a global-default user walked every
   * bootstrap schema, hashed its flow, dealt the hand and built a key for its stats, ~60% of the
   * filter's 6.4 us on the Intel VM (bench/apf.ts part 1, 2026-11-29).
   * - the flow schema, by user object and request: only for frozen users, which an
   *   authenticator shares between requests (the static tokens' users); at most
   *   MEMO_ENTRIES requests per user;
   * - the flow's hash, by schema and distinguisher (its queue set keeps the hand by hash);
   * - the flow's stats, by schema (with the level it had then).
   */
  private classified = new WeakMap<UserInfo, Map<string, CompiledFlowSchema | null>>();
  private hashes = new WeakMap<CompiledFlowSchema, Map<string, FlowHash>>();
  private flowOf = new WeakMap<CompiledFlowSchema, { pl: PriorityLevel; stats: FlowStats }>();
  private nominalSum = 0;
  private stopTimer: (() => void) | undefined;

  constructor(private readonly o: FlowControlOptions) {
    this.clock = o.clock ?? realClock;
  }

  get priorityLevels(): ReadonlyMap<string, PriorityLevel> {
    return this.levels;
  }

  get flowSchemas(): readonly CompiledFlowSchema[] {
    return this.schemas;
  }

  get flowStats(): Iterable<FlowStats> {
    return this.flows.values();
  }

  /** Borrowing adjustments every 10 s until stop(). */
  start(): void {
    this.stopTimer ??= this.clock.every(ADJUSTMENT_PERIOD_MS, () => this.adjustBorrowing());
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }

  /** The configuration objects changed: rebuild schemas and levels (queues are kept). */
  configure(flowSchemas: readonly Obj[], priorityLevels: readonly Obj[]): void {
    const levels = new Map<string, PriorityLevel>();
    for (const o of priorityLevels) {
      const name = o.metadata.name as string;
      const { shares, queuing } = levelSettings(o);
      const old = this.levels.get(name);
      const keep = old && (old.queuing === undefined) === (queuing === undefined);
      const pl = keep ? old : new PriorityLevel(o, shares, queuing, this.clock);
      pl.obj = o;
      pl.shares = shares;
      pl.queuing = queuing;
      levels.set(name, pl);
    }
    let sharesSum = 0;
    for (const pl of levels.values()) sharesSum += pl.shares.shares;
    this.nominalSum = 0;
    for (const pl of levels.values()) {
      pl.limits = levelLimits(this.o.serverConcurrencyLimit, pl.shares, sharesSum);
      this.nominalSum += pl.limits.nominal;
      pl.current = pl.limits.nominal;
      if (!pl.queuing) {
        pl.qs = undefined;
        continue;
      }
      if (pl.qs) {
        pl.qs.reconfigure(pl.queuing);
        pl.qs.setConcurrencyLimit(pl.current);
      } else {
        const integrator = pl.integrator;
        pl.qs = new QueueSet(pl.queuing, pl.current, this.clock, (d) => integrator.set(d));
      }
    }
    this.levels = levels;
    // Dangling schemas (no such level) are not used.
    this.schemas = flowSchemas
      .map(compileFlowSchema)
      .filter((fs) => levels.has(fs.priorityLevel))
      .sort(byPrecedence);
    for (const [k, f] of this.flows) if (!levels.has(f.priorityLevel)) this.flows.delete(k);
    this.classified = new WeakMap();
    this.hashes = new WeakMap();
    this.flowOf = new WeakMap();
  }

  /** classify() of the request, memoized for frozen users (see `classified`). */
  private classify(user: UserInfo, info: RequestInfo): CompiledFlowSchema | undefined {
    if (!Object.isFrozen(user)) return classify(this.schemas, user, info);
    // Everything the rules look at: resource rules the verb, group, resource, subresource and
    // namespace; non-resource rules the verb and path.
    const key = info.isResourceRequest
      ? `${info.verb}\u0000${info.group}\u0000${info.resource}\u0000${info.subresource}\u0000${info.namespace}`
      : `\u0001${info.verb}\u0000${info.path}`;
    return memoized(this.classified, user, key, () => classify(this.schemas, user, info) ?? null) ?? undefined;
  }

  /** hashFlow of the flow, kept per schema and distinguisher (see `hashes`). */
  private flowHash(fs: CompiledFlowSchema, distinguisher: string): FlowHash {
    return memoized(this.hashes, fs, distinguisher, () => hashFlow(fs.name, distinguisher));
  }

  /**
   * Runs `run` under priority and fairness: at once, after waiting in a queue, or not at all
   * (throws the 429). The response, or the error thrown, gets the PF headers.
   */
  async serve(
    user: UserInfo,
    info: RequestInfo,
    query: URLSearchParams,
    signal: AbortSignal | undefined,
    run: () => Promise<Response>,
  ): Promise<Response> {
    const fs = this.classify(user, info);
    const pl = fs ? this.levels.get(fs.priorityLevel) : undefined;
    // Without a configuration (only before the mandatory objects exist): not limited.
    if (!fs || !pl) return run();
    const headers = { [FLOW_SCHEMA_UID_HEADER]: fs.uid, [PRIORITY_LEVEL_UID_HEADER]: pl.uid };
    const flow = this.flow(fs, pl);
    const watch = info.isResourceRequest && info.verb === 'watch';
    const qs = pl.qs;
    if (!qs) {
      pl.exemptExecuting++;
      pl.dispatched++;
      pl.integrator.set(pl.exemptExecuting);
      flow.dispatch(1, 0, true);
      const started = this.clock.now();
      try {
        return withHeaders(await run(), headers);
      } catch (e) {
        tagError(e, headers);
        throw e;
      } finally {
        pl.exemptExecuting--;
        pl.integrator.set(pl.exemptExecuting);
        flow.done(1, (this.clock.now() - started) / 1000, watch);
      }
    }
    const work = estimateWork(info, query, pl.limits.nominal, this.o.counts, this.o.sizeBasedListEstimate);
    flow.estimatedSeats.observe(Math.max(work.initialSeats, work.finalSeats));
    const tag: RequestTag = { fs, distinguisher: distinguisher(fs, user, info), user, info, flow };
    const r: QueuedRequest<RequestTag> = qs.start(this.flowHash(fs, tag.distinguisher), work, tag, this.o.requestWaitLimitMs, signal);
    let waited = 0;
    if (r.state === 'waiting') {
      flow.inqueue++;
      await r.decided;
      flow.inqueue--;
      waited = (this.clock.now() - r.arrivedAt) / 1000;
    }
    if (r.state !== 'executing') {
      this.reject(pl, flow, r.reason ?? 'concurrency-limit', waited);
      const e = tooManyRequests(1);
      e.headers = { ...e.headers, ...headers };
      throw e;
    }
    pl.dispatched++;
    flow.dispatch(r.seats, waited, false);
    let res: Response;
    try {
      res = await run();
    } catch (e) {
      tagError(e, headers);
      throw e;
    } finally {
      flow.done(r.seats, (this.clock.now() - r.startedAt) / 1000, watch);
      this.release(qs, r);
    }
    return withHeaders(res, headers);
  }

  /**
   * Seats come back on the event loop's next turn, not at once: a handler that returns
   * synchronously would otherwise free its seat before the next arrival is even read, and the
   * flood that arrived first would run first, in arrival order. Held over the turn, the seats
   * make later arrivals queue, and the queues dispatch them fairly.
   */
  private release(qs: QueueSet, r: QueuedRequest<RequestTag>): void {
    this.releasing.push(qs, r);
    if (this.releasing.length === 2) setImmediate(this.releaseAll);
  }

  private readonly releasing: (QueueSet | QueuedRequest<RequestTag>)[] = [];
  private readonly releaseAll = () => {
    const batch = this.releasing.splice(0);
    for (let i = 0; i < batch.length; i += 2) (batch[i] as QueueSet).finish(batch[i + 1] as QueuedRequest<RequestTag>);
  };

  private reject(pl: PriorityLevel, flow: FlowStats, reason: RejectReason, waited: number): void {
    pl.rejected++;
    if (reason === 'time-out') pl.timedOut++;
    if (reason === 'cancelled') pl.cancelled++;
    flow.reject(reason, waited);
  }

  private flow(fs: CompiledFlowSchema, pl: PriorityLevel): FlowStats {
    const kept = this.flowOf.get(fs);
    if (kept !== undefined && kept.pl === pl) return kept.stats;
    const key = `${fs.name}\u0000${pl.name}`;
    let f = this.flows.get(key);
    if (!f) {
      f = new FlowStats(fs.name, pl.name);
      this.flows.set(key, f);
    }
    this.flowOf.set(fs, { pl, stats: f });
    return f;
  }

  /** One borrowing period: re-solve every level's current seat limit from its seat demand. */
  adjustBorrowing(): void {
    const levels = [...this.levels.values()];
    if (levels.length === 0) return;
    const items = levels.map((pl) => {
      pl.stats.update(pl.integrator.reset());
      if (pl.exempt) {
        const lower = Math.max(pl.limits.lower, pl.stats.highWatermark);
        return { lower, upper: Math.max(lower, pl.limits.nominal), target: lower };
      }
      return { lower: pl.limits.lower, upper: pl.limits.upper, target: Math.max(pl.limits.lower, pl.stats.smoothed) };
    });
    const solved = allocate(this.nominalSum, items);
    levels.forEach((pl, i) => {
      const item = items[i] as { lower: number };
      const alloc = solved ? (solved.allocs[i] as number) : item.lower;
      pl.current = pl.exempt ? Math.ceil(alloc) : Math.round(alloc);
      pl.qs?.setConcurrencyLimit(pl.current);
    });
  }
}

/** A StatusError thrown by the handler is rendered later: it carries the PF headers along. */
function tagError(e: unknown, headers: Record<string, string>): void {
  const se = e as Partial<StatusError>;
  if (e && typeof e === 'object' && typeof se.code === 'number') se.headers = { ...se.headers, ...headers };
}

function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const k in headers) res.headers.set(k, headers[k] as string);
  return res;
}
