/**
 * The work queue of the workload controllers (ReplicaSet, Deployment), as client-go's rate-limited
 * queue serves them: a key queued several times before its sync runs is synced once; one worker
 * syncs keys in turn; `after` queues a key later (minReadySeconds, progress deadlines); a failed
 * sync is retried with per-key exponential back-off (5 ms doubling, at most `maxBackoffMs`), and
 * `forget` resets it after a success. Also the watch-following loop these controllers share: a
 * watcher that ends (slow, cache relisted) is replaced and everything is queued again.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { WatchCache } from '../watch/cache';
import type { CachedObject, EventType } from '../watch/events';
import { sharedObjects } from '../watch/slices';
import type { Watcher } from '../watch/watcher';

export class WorkQueue {
  private readonly queue = new Set<string>();
  private readonly timers = new Map<string, { at: number; t: ReturnType<typeof setTimeout> }>();
  private readonly failures = new Map<string, number>();
  private draining = false;
  private stopped = false;

  constructor(
    private readonly sync: (key: string) => Promise<void>,
    private readonly log: (msg: string) => void,
    private readonly maxBackoffMs = 60_000,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.queue.add(key);
    this.drain();
  }

  /** Queue `key` in `ms` (an earlier pending `after` for it wins). */
  after(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const cur = this.timers.get(key);
    if (cur && cur.at <= at) return;
    if (cur) clearTimeout(cur.t);
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref?.();
    this.timers.set(key, { at, t });
  }

  /** Retry `key` after its back-off (AddRateLimited). */
  retry(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.after(key, Math.min(this.maxBackoffMs, 5 * 2 ** n));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  stop(): void {
    this.stopped = true;
    for (const { t } of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
  }

  private drain(): void {
    if (this.draining || this.stopped) return;
    this.draining = true;
    setTimeout(async () => {
      try {
        while (this.queue.size > 0 && !this.stopped) {
          const key = this.queue.values().next().value as string;
          this.queue.delete(key);
          try {
            await this.sync(key);
            this.forget(key);
          } catch (e) {
            // A conflict (a cache behind a write) is retried without a word, as the reference's.
            if (!(e instanceof StatusError && e.code === 409)) this.log(`${key}: ${e instanceof Error ? e.message : String(e)}`);
            this.retry(key);
          }
        }
      } finally {
        this.draining = false;
      }
    }, 0);
  }
}

/**
 * Follow every event of `cache` until `stop()`: `initial` gets the objects present at the start
 * (and again after a watcher had to be replaced), `onEvent` each change. The objects are the
 * cache's shared parsed ones (CachedObject.shared, as events' are): read them, never change them.
 * A restart with 100k pods had each of a dozen controllers parse every pod anew, 24 s of a
 * blocked event loop and 10 GiB of RSS before the server answered (2026-11-29). They are parsed
 * in slices that let other requests in (watch/slices.ts): `initial` may come after `follow`
 * returns; events follow it, in order.
 */
export function follow(cache: WatchCache, initial: (objs: Obj[]) => void, onEvent: (obj: Obj, type: EventType) => void): { stop(): void } {
  return following(
    cache,
    (cached, stopped) => {
      const objs = sharedObjects(cached, stopped);
      if (!(objs instanceof Promise)) return initial(objs);
      return objs.then((o) => inTurn(() => stopped() || initial(o)));
    },
    () => {},
    onEvent,
  );
}

/**
 * The long initial lists' callbacks, one per turn of the event loop: the followers of one cache
 * finish parsing together, and their callbacks (filing 100k pods in an index, say) back to back
 * held the loop for 0.7 s (2026-11-29). Each runs whole, as a resync must (a controller's sync
 * never sees half an index).
 */
let initialTurns: Promise<void> = Promise.resolve();
function inTurn(fn: () => void): Promise<void> {
  const run = initialTurns.then(
    () =>
      new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          try {
            fn();
            resolve();
          } catch (e) {
            reject(e);
          }
        }),
      ),
  );
  initialTurns = run.catch(() => {});
  return run;
}

/** As `follow` for a caller that needs no initial objects: `reset` is called where `initial` would be, nothing is parsed. */
export function followChanges(cache: WatchCache, reset: () => void, onEvent: (obj: Obj, type: EventType) => void): { stop(): void } {
  return following(cache, undefined, reset, onEvent);
}

function following(
  cache: WatchCache,
  initial: ((cached: CachedObject[], stopped: () => boolean) => void | Promise<void>) | undefined,
  reset: () => void,
  onEvent: (obj: Obj, type: EventType) => void,
): { stop(): void } {
  let stopped = false;
  let current: Watcher | undefined;
  const isStopped = (): boolean => stopped;
  const everything = { keyPrefix: '', match: () => true, all: true };
  void (async () => {
    while (!stopped) {
      if (initial === undefined) {
        current = cache.watchChanges(everything);
        reset();
      } else {
        const w = cache.watch(everything, 'now');
        current = w.watcher;
        const started = initial(w.initial, isStopped);
        if (started instanceof Promise) await started;
      }
      const watcher = current;
      while (!stopped && !watcher.ended) for (const e of await watcher.next(Number.POSITIVE_INFINITY)) onEvent(e.obj, e.type);
    }
  })();
  return {
    stop: () => {
      stopped = true;
      current?.end('closed');
    },
  };
}
