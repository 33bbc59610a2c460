/**
 * Watch responses over the watch cache: a chunked stream of `{"type": ..., "object": ...}\n`
 * events (spec 1 "Watch", "Streaming list").
 *
 *   resourceVersion unset  → consistent: the cache catches up with the store, synthetic ADDED
 *                            events for the current state, then changes;
 *   "0"                    → the same from the cache as it is (may be stale);
 *   N                      → changes after N; N older than the history window → an ERROR event
 *                            carrying a 410 Status, as the reference does;
 *   sendInitialEvents=true → (resourceVersionMatch=NotOlderThan, gate WatchList) synthetic ADDED
 *                            events, then a BOOKMARK annotated initial-events-end, then changes.
 *
 * allowWatchBookmarks adds BOOKMARKs periodically and before the server ends a stream. A watcher
 * that cannot keep up (its queue overflows, or its socket does not drain) is ended with a final
 * BOOKMARK when one is valid; its client resumes from the last resourceVersion it saw.
 */
import type { Obj } from '../api/meta';
import type { ResourceRequest } from '../api/request-info';
import { matchesFields, matchesLabels } from '../api/selectors';
import { badRequest, resourceExpired, StatusError, tooLargeResourceVersion } from '../api/status';
import { parseResourceVersion, type ResourceStore } from '../registry/generic';
import { apiVersionOf } from '../registry/kind';
import type { KV } from '../store/types';
import { type CachedObject, TooOldError, type WatchCache, type Watcher, type WatcherEvent } from '../watch/cache';
import type { Output } from './negotiate';
import { listOptions } from './resources';
import { toTable } from './table';

export interface WatchHandlerOptions {
  /** --min-request-timeout (s): watches without timeoutSeconds end after a random time in [t, 2t]. */
  minRequestTimeoutSec: number;
  /** Interval of periodic bookmarks (the reference sends one about every minute). */
  bookmarkIntervalMs?: number;
  /** Gate WatchList (streaming lists with sendInitialEvents). */
  watchList: boolean;
  /** How long a consistent read waits for the cache to catch up before 504. */
  freshnessTimeoutMs?: number;
  /** A watch whose client has not read for this long while events wait for it is ended (default 5 s). */
  slowWatcherMs?: number;
  log?: (msg: string) => void;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const INITIAL_EVENTS_END = ['svc.io/initial-events-end', 'k8s.io/initial-events-end'];

export class WatchHandler {
  /** Streams currently open (ended on shutdown). */
  readonly open = new Set<Watcher>();

  /** Watchers whose socket is blocked, with when it blocked (see drained() in serve). */
  private readonly blocked = new Map<Watcher, { since: number; what: string }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly kv: KV,
    private readonly cacheOf: (s: ResourceStore) => WatchCache,
    private readonly opts: WatchHandlerOptions,
  ) {}

  /**
   * One sweeper for all blocked watchers (instead of a timer per write): a watcher whose socket
   * has been blocked for slowWatcherMs while events wait in its queue is ended as too slow.
   */
  private watchBlocked(w: Watcher, what: string): void {
    this.blocked.set(w, { since: Date.now(), what });
    if (this.sweeper) return;
    const slowMs = this.opts.slowWatcherMs ?? 5000;
    this.sweeper = setInterval(
      () => {
        const now = Date.now();
        for (const [x, b] of this.blocked) {
          if (now - b.since < slowMs || x.pending === 0) continue;
          this.blocked.delete(x);
          this.opts.log?.(`watch ${b.what}: client stopped reading for ${slowMs} ms with ${x.pending} events waiting; ending the watch`);
          x.end('slow');
        }
        if (this.blocked.size === 0) {
          clearInterval(this.sweeper);
          this.sweeper = undefined;
        }
      },
      Math.max(10, Math.min(250, slowMs / 4)),
    );
    this.sweeper.unref();
  }

  async serve(store: ResourceStore, info: ResourceRequest, req: Request, q: URLSearchParams, out: Output): Promise<Response> {
    const lo = listOptions(q, store);
    const sendInitial = q.get('sendInitialEvents');
    const initialEvents = sendInitial === 'true' || sendInitial === '1';
    const rvParam = q.get('resourceVersion') ?? '';
    const rvm = q.get('resourceVersionMatch') ?? '';
    if (sendInitial !== null) {
      if (!this.opts.watchList)
        throw badRequest(
          'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        );
      if (initialEvents && rvm !== 'NotOlderThan') {
        throw badRequest(`resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`);
      }
    } else if (rvm !== '') {
      throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
    const timeoutParam = q.get('timeoutSeconds');
    const timeoutSec = timeoutParam ? Number(timeoutParam) : this.opts.minRequestTimeoutSec * (1 + Math.random());
    if (!Number.isFinite(timeoutSec) || timeoutSec < 0) throw badRequest(`timeoutSeconds: Invalid value: "${timeoutParam}"`);

    const name = info.name;
    const match = (o: Obj): boolean =>
      (name === '' || o.metadata.name === name) &&
      matchesLabels(lo.labelSelector, o.metadata.labels) &&
      matchesFields(lo.fieldSelector, (f) => store.fieldValue(o, f));
    const keyPrefix = store.def.namespaced && info.namespace ? `${store.prefix}${info.namespace}/` : '';
    const cache = this.cacheOf(store);
    await cache.start();

    // Where the stream starts, and whether synthetic initial events come first.
    let from: number | 'now';
    let waitFor = 0;
    if (initialEvents || rvParam === '' || rvParam === '0') {
      from = 'now';
      if (rvParam === '') waitFor = this.kv.currentRevision();
      else if (rvParam !== '0') waitFor = parseResourceVersion(rvParam);
    } else {
      from = parseResourceVersion(rvParam);
    }
    if (waitFor > 0 && !(await cache.waitFresh(waitFor, this.opts.freshnessTimeoutMs ?? 3000))) {
      throw tooLargeResourceVersion(waitFor, cache.revision);
    }
    const def = store.def;
    const encode = (type: EventType, text: string, obj?: Obj): string => {
      if (out.kind === 'table' && obj && type !== 'ERROR' && type !== 'BOOKMARK') {
        return `{"type":"${type}","object":${JSON.stringify(toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, out.group, Date.now()))}}\n`;
      }
      return `{"type":"${type}","object":${text}}\n`;
    };
    // A JSON event line is the same bytes for every watcher that gets it: built and UTF-8
    // encoded once per event and type, then shared (fan-out neither copies nor encodes object
    // text per watcher).
    const line = (e: WatcherEvent): string | Uint8Array => {
      if (out.kind !== 'json' || e.text !== e.event.text) return encode(e.type, e.text, e.obj);
      if (e.event.lines === undefined) e.event.lines = {};
      const lines = e.event.lines;
      let l = lines[e.type];
      if (l === undefined) {
        l = Buffer.from(encode(e.type, e.text));
        lines[e.type] = l;
      }
      return l;
    };
    const bookmark = (rv: number, initialEnd: boolean): string => {
      const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
      if (initialEnd) metadata.annotations = Object.fromEntries(INITIAL_EVENTS_END.map((k) => [k, 'true']));
      return encode('BOOKMARK', JSON.stringify({ kind: def.kind, apiVersion: apiVersionOf(def), metadata }));
    };

    let reg: { watcher: Watcher; initial: CachedObject[]; revision: number } | undefined;
    let tooOld: StatusError | undefined;
    try {
      // Watches with the same namespace, name and selector strings share one match per event.
      const key = `${keyPrefix}\u0000${name}\u0000${q.get('labelSelector') ?? ''}\u0000${q.get('fieldSelector') ?? ''}`;
      reg = cache.watch({ keyPrefix, match, key }, from);
    } catch (e) {
      if (!(e instanceof TooOldError)) throw e;
      tooOld = resourceExpired(e.message);
    }
    const open = this.open;
    const bookmarkEvery = this.opts.bookmarkIntervalMs ?? 60_000;
    const log = this.opts.log ?? (() => {});
    const aborted = new Promise<void>((resolve) => {
      if (req.signal.aborted) resolve();
      req.signal.addEventListener('abort', () => resolve(), { once: true });
    });

    const blocked = this.blocked;
    const watchBlocked = (x: Watcher) => this.watchBlocked(x, def.plural);
    const body = new ReadableStream({
      type: 'direct',
      async pull(controller) {
        const w = reg?.watcher;
        // Resource version of the last event actually written: what a bookmark may claim.
        let sentRv = reg?.revision ?? 0;
        if (w && from !== 'now') sentRv = from;
        /**
         * Wait for the socket to take what was written. Bun's sink signals backpressure by
         * returning a Promise from write()/flush() (flush alone returns a number even when the
         * socket is full). A client that stops reading keeps it pending: once it has been blocked
         * for slowMs while events wait in its queue, the watcher is ended as too slow (the client
         * resumes from the last resourceVersion it got); the server never buffers more than one
         * event per stalled watcher.
         */
        const gone = Promise.race([aborted, w?.done ?? aborted]).then(() => false);
        const drained = async (p: Promise<unknown>): Promise<boolean> => {
          if (w) watchBlocked(w);
          const took = p.then(
            () => true,
            () => false,
          );
          const r = await Promise.race([took, gone]);
          if (w) blocked.delete(w);
          return r;
        };
        // Not async: when the socket takes the data at once (the common case) no promise and no
        // microtask hop is made; callers await only what can block.
        const write = (s: string): boolean | Promise<boolean> => {
          const r = controller.write(s);
          return r instanceof Promise ? drained(r) : true;
        };
        const flush = (): boolean | Promise<boolean> => {
          const r = controller.flush();
          return r instanceof Promise ? drained(r) : true;
        };
        try {
          if (tooOld || !reg || !w) {
            controller.write(encode('ERROR', JSON.stringify((tooOld ?? resourceExpired('too old resource version')).body())));
            return;
          }
          open.add(w);
          for (const c of reg.initial) if (!(await write(encode('ADDED', c.text, c.obj)))) return;
          if (initialEvents && bookmarks && !(await write(bookmark(reg.revision, true)))) return;
          if (reg.initial.length === 0 && !(initialEvents && bookmarks) && w.pending === 0) {
            // Bun sends the end of the header block only with the first body bytes, so a quiet
            // watch would leave the client waiting for its response headers (a client that opens
            // a watch and then writes would wait forever). One byte of JSON whitespace, which
            // every watch decoder skips, commits the headers now as the reference's flush does.
            if (!(await write(' '))) return;
          }
          if (!(await flush())) return;
          const deadline = Date.now() + timeoutSec * 1000;
          let nextBookmark = Date.now() + bookmarkEvery;
          // Push mode: the cache's fan-out calls pump() synchronously once per store batch (and
          // on this watcher's timer). Events go to the socket at once, as one write per wake-up
          // (one TLS record, one syscall); only a socket that does not take them makes pump
          // wait for its drain. No promise or async resumption per watcher and event.
          await new Promise<void>((finish) => {
            let stopped = false;
            let waiting = false;
            // Written but not flushed yet (a write the socket did not take at once is flushed
            // once it drains, even when no new event comes).
            let unflushed = false;
            const stop = (): void => {
              if (stopped) return;
              stopped = true;
              w.onSignal = undefined;
              req.signal.removeEventListener('abort', stop);
              finish();
            };
            /** false when the socket did not take it: pump resumes when it drains. */
            const took = (r: number | Promise<number>): boolean => {
              if (!(r instanceof Promise)) return true;
              waiting = true;
              watchBlocked(w);
              r.then(
                () => {
                  blocked.delete(w);
                  waiting = false;
                  safePump();
                },
                () => {
                  blocked.delete(w);
                  stop();
                },
              );
              return false;
            };
            const pump = (): void => {
              if (stopped) return;
              if (req.signal.aborted || (w.ended && w.ended !== 'closed')) {
                stop();
                return;
              }
              if (waiting) return;
              const evs = w.take();
              if (evs.length > 0) {
                // The sink buffers writes until flush: one TLS record and send per wake-up.
                const last = evs.length - 1;
                for (let i = 0; i < last; i++) controller.write(line(evs[i] as WatcherEvent));
                sentRv = (evs[last] as WatcherEvent).event.rv;
                unflushed = true;
                if (!took(controller.write(line(evs[last] as WatcherEvent)) as number | Promise<number>)) return;
              }
              const now = Date.now();
              if (bookmarks && now >= nextBookmark && w.pending === 0) {
                const rv = Math.max(sentRv, cache.revision);
                sentRv = rv;
                nextBookmark = now + bookmarkEvery;
                unflushed = true;
                if (!took(controller.write(bookmark(rv, false)) as number | Promise<number>)) return;
              }
              if (unflushed) {
                unflushed = false;
                if (!took(controller.flush() as number | Promise<number>)) return;
              }
              if (w.ended || now >= deadline) {
                stop();
                return;
              }
              w.wakeAt(bookmarks ? Math.min(deadline, nextBookmark) : deadline);
            };
            // A sink that throws (the stream went away under us) ends this watch, not the fan-out.
            const safePump = (): void => {
              try {
                pump();
              } catch (e) {
                if (!req.signal.aborted) log(`watch ${def.plural}: ${String(e)}`);
                stop();
              }
            };
            req.signal.addEventListener('abort', stop, { once: true });
            w.onSignal = safePump;
            safePump();
          });
          if (req.signal.aborted) return;
          // The server ends the stream: a last bookmark tells the client where to resume (never
          // past an event it did not get).
          if (bookmarks && w.ended !== 'slow') {
            controller.write(bookmark(w.pending === 0 ? Math.max(sentRv, cache.revision) : sentRv, false));
          }
          if (w.ended !== 'slow') await flush();
        } catch (e) {
          if (e instanceof StatusError) controller.write(encode('ERROR', JSON.stringify(e.body())));
          else if (!req.signal.aborted) log(`watch ${def.plural}: ${String(e)}`);
        } finally {
          if (w) {
            w.end('closed');
            open.delete(w);
          }
          try {
            controller.close();
          } catch {
            // the client went away first
          }
        }
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' },
    });
  }
}
