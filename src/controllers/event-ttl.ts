/**
 * Events expire as the reference's --event-ttl makes them (default 1 h): there, each write of an
 * Event attaches an etcd lease of that TTL, so an Event goes that long after its last write.
 * Here the leader follows the Events' watch cache (keys and revisions only: no Event is parsed
 * for it) and deletes, through the registry, each one whose newest write is older than the TTL,
 * with that write's resourceVersion as a precondition (a newer write, which restarts its TTL,
 * makes the delete a 409 and the Event stays). Without it the server kept every Event for ever:
 * ~60 a second under a steady controller workload (bench/soak.ts), memory never given back.
 *
 * The writes arrive in time order and the TTL is one for all, so the expiries form a queue.
 * After a restart (or a change of leader) the Events there get their TTL from their newest
 * timestamp (lastTimestamp, eventTime, series.lastObservedTime, creationTimestamp), as near
 * the lease's expiry as the object tells.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import type { Watcher } from '../watch/watcher';

interface Expiry {
  at: number;
  key: string;
  rv: number;
}

/** The newest time an Event carries (ms), NaN when it has none. */
export function lastWrittenAt(e: Obj): number {
  const o = e as Obj & { lastTimestamp?: string; eventTime?: string; series?: { lastObservedTime?: string } };
  const times = [o.lastTimestamp, o.series?.lastObservedTime, o.eventTime, o.metadata.creationTimestamp].map((t) =>
    typeof t === 'string' ? Date.parse(t) : Number.NaN,
  );
  const valid = times.filter((t) => !Number.isNaN(t));
  return valid.length > 0 ? Math.max(...valid) : Number.NaN;
}

export class EventTtl {
  private readonly queue: Expiry[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private watcher: Watcher | undefined;
  private stopped = false;
  /** Events deleted so far (for tests and the log). */
  expired = 0;

  constructor(
    private readonly events: ResourceStore,
    private readonly cache: WatchCache,
    private readonly ttlMs: number,
    private readonly opts: { log?: (msg: string) => void; now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  async start(): Promise<void> {
    await this.cache.start();
    let watcher = this.follow();
    void (async () => {
      while (!this.stopped) {
        // A watch the cache ended (too slow, relisted) starts again from the whole state.
        if (watcher.ended) watcher = this.follow();
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.type === 'DELETED') continue;
          this.queue.push({ at: this.now() + this.ttlMs, key: e.event.key, rv: e.event.rv });
        }
        this.arm();
      }
    })();
  }

  /** A watch of the Events from now on; the queue becomes the current ones' expiries. */
  private follow(): Watcher {
    const { watcher, initial } = this.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    this.watcher = watcher;
    const now = this.now();
    const found = initial.map((c) => {
      const t = lastWrittenAt(c.obj);
      return { at: (Number.isNaN(t) ? now : Math.min(t, now)) + this.ttlMs, key: c.key, rv: c.rv };
    });
    found.sort((a, b) => a.at - b.at);
    this.queue.length = 0;
    this.head = 0;
    this.queue.push(...found);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.arm();
    return watcher;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.end('closed');
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A timer for the first expiry (at most one pending). */
  private arm(): void {
    if (this.stopped || this.timer || this.head >= this.queue.length) return;
    const first = this.queue[this.head] as Expiry;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.sweep();
      },
      Math.max(0, first.at - this.now()),
    );
    this.timer.unref?.();
  }

  /** Delete what has expired, then wait for the next expiry. */
  private async sweep(): Promise<void> {
    const now = this.now();
    const due: Expiry[] = [];
    while (this.head < this.queue.length && (this.queue[this.head] as Expiry).at <= now) due.push(this.queue[this.head++] as Expiry);
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    const prefix = this.events.prefix;
    await Promise.all(
      due.map(async (x) => {
        // A newer write has its own, later entry; one gone needs nothing.
        if (this.cache.get(x.key)?.rv !== x.rv) return;
        const rest = x.key.slice(prefix.length);
        const slash = rest.indexOf('/');
        try {
          await this.events.delete(rest.slice(0, slash), rest.slice(slash + 1), {
            dryRun: false,
            preconditions: { resourceVersion: String(x.rv) },
          });
          this.expired++;
        } catch (e) {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) {
            this.opts.log?.(`event TTL: deleting ${rest}: ${e instanceof Error ? e.message : String(e)}`);
          }
        }
      }),
    );
    this.arm();
  }
}
