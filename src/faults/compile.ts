/**
 * A FaultInjection object compiled for the request path: its match rules as a FlowSchema's
 * (src/apf/classify.ts matches them), its window and limit as absolute numbers, its actions as
 * plain records, and its seeded generator. The object has passed validation
 * (src/kinds/validation/fault-injection.ts), so reading it here only fills in defaults.
 */
import { type CompiledFlowSchema, compileFlowSchema } from '../apf/classify';
import type { Obj } from '../api/meta';
import { mulberry32, type Rng } from './rng';

export type ActionKind = 'error' | 'delay' | 'watch' | 'stale' | 'store';

export interface ErrorAction {
  code: number;
  /** Empty: the code's default message. */
  message: string;
  retryAfterSeconds: number | undefined;
}

export interface DelayAction {
  fixedMs: number;
  jitterMs: number;
  after: boolean;
}

/** What a watch the fault is injected into does differently (src/http/watch-handler.ts reads it). */
export interface WatchAction {
  /** End the stream after this many events (undefined: no such limit). */
  closeAfterEvents: number | undefined;
  /** End the stream this long after it starts (undefined: no such limit). */
  closeAfterMs: number | undefined;
  /** End with an ERROR event carrying 410 Expired `too old resource version`. */
  expire: boolean;
  /** Hold each batch of events this long before writing it. */
  eventDelayMs: number;
  /** Send no bookmarks but the initial-events-end one (a client waiting for it would hang). */
  withholdBookmarks: boolean;
}

/** A fault's counts: kept by uid across recompilations (a spec change keeps them). */
export interface Counts {
  matched: number;
  injected: number;
  byAction: Record<ActionKind, number>;
}

export const newCounts = (matched = 0, injected = 0): Counts => ({
  matched,
  injected,
  byAction: { error: 0, delay: 0, watch: 0, stale: 0, store: 0 },
});

/**
 * Store faults: a write fails with the error the registry answers when the store cannot persist
 * (500); or the disk is slow: while a write the fault fired for is in flight, the embedded
 * store's WAL holds each commit batch slowFsyncMs before its fsync, so the matched write and
 * every other write committed meanwhile (any user's, matched or not) wait, as on a slow disk
 * (on etcd, whose disk is not ours, only the matched write's answer is delayed that long);
 * `compact` compacts the store at its newest revision when the fault fires (watches and
 * continue tokens from before get 410).
 */
export interface StoreAction {
  failWrites: boolean;
  slowFsyncMs: number;
  compact: boolean;
}

export interface CompiledFault {
  name: string;
  uid: string;
  generation: number;
  match: CompiledFlowSchema;
  probability: number;
  rng: Rng;
  /** The window it is active in, in ms since the epoch ([startAt, endAt)). */
  startAt: number;
  endAt: number;
  limit: number;
  warn: boolean;
  error: ErrorAction | undefined;
  delay: DelayAction | undefined;
  watch: WatchAction | undefined;
  stale: number | undefined;
  store: StoreAction | undefined;
  /** The action names, for annotations, warnings and metrics ("delay,error"). */
  actions: ActionKind[];
  /** Its counts (FaultSet.configure hands over those of the fault it replaces). */
  counts: Counts;
}

type J = Record<string, unknown>;
const obj = (v: unknown): J => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function compileFault(o: Obj): CompiledFault {
  const spec = obj(o.spec);
  const name = String(o.metadata.name ?? '');
  const created = Date.parse(String(o.metadata.creationTimestamp ?? '')) || Date.now();
  const schedule = obj(spec.schedule);
  const startAt = created + (num(schedule.startAfterSeconds) ?? 0) * 1000;
  const activeFor = num(schedule.activeForSeconds);
  const f: CompiledFault = {
    name,
    uid: String(o.metadata.uid ?? ''),
    generation: num(o.metadata.generation) ?? 0,
    match: compileFlowSchema({ metadata: { name }, spec: { rules: spec.match } } as Obj),
    probability: num(spec.probability) ?? 1,
    rng: mulberry32(num(spec.seed) ?? 0),
    startAt,
    endAt: activeFor === undefined || activeFor === 0 ? Number.POSITIVE_INFINITY : startAt + activeFor * 1000,
    limit: num(spec.limit) ?? Number.POSITIVE_INFINITY,
    warn: spec.warn === true,
    error: undefined,
    delay: undefined,
    watch: undefined,
    stale: undefined,
    store: undefined,
    actions: [],
    counts: newCounts(),
  };
  for (const a of Array.isArray(spec.actions) ? spec.actions.map(obj) : []) {
    if (a.error !== undefined) {
      const e = obj(a.error);
      const code = num(e.code) ?? 500;
      f.error = {
        code,
        message: typeof e.message === 'string' ? e.message : '',
        retryAfterSeconds: num(e.retryAfterSeconds) ?? (code === 429 ? 1 : undefined),
      };
      f.actions.push('error');
    } else if (a.delay !== undefined) {
      const d = obj(a.delay);
      f.delay = { fixedMs: num(d.fixedMs) ?? 0, jitterMs: num(d.jitterMs) ?? 0, after: d.phase === 'After' };
      f.actions.push('delay');
    } else if (a.watch !== undefined) {
      const w = obj(a.watch);
      const seconds = num(w.closeAfterSeconds);
      f.watch = {
        closeAfterEvents: num(w.closeAfterEvents) ?? (w.expire === true && seconds === undefined ? 0 : undefined),
        closeAfterMs: seconds === undefined ? undefined : seconds * 1000,
        expire: w.expire === true,
        eventDelayMs: num(w.eventDelayMs) ?? 0,
        withholdBookmarks: w.withholdBookmarks === true,
      };
      f.actions.push('watch');
    } else if (a.stale !== undefined) {
      f.stale = num(obj(a.stale).revisions) ?? 1;
      f.actions.push('stale');
    } else if (a.store !== undefined) {
      const s = obj(a.store);
      f.store = { failWrites: s.failWrites === true, slowFsyncMs: num(s.slowFsyncMs) ?? 0, compact: s.compact === true };
      f.actions.push('store');
    }
  }
  return f;
}
