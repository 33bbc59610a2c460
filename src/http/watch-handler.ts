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
 *
 * A watch fault (src/faults) may end the stream after N events or T seconds (with a 410 Expired
 * ERROR event when it says `expire`), hold each batch of events, or withhold the bookmarks.
 */
import { includeObject, queryBool, queryInt } from '../api/query';
import type { ResourceRequest } from '../api/request-info';
import { badRequest, resourceExpired, StatusError } from '../api/status';
import type { BrandView } from '../codec/brand-view';
import type { EncodeContext, MediaCodec, StoredObject, WatchEventType } from '../codec/media';
import { watchFaultOf } from '../faults/watch';
import type { ResourceStore } from '../registry/generic';
import type { WatchEvent, WatchStart, WatchStream } from '../registry/watch';
import { listOptions } from './list-options';

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

const INITIAL_EVENTS_END = ['svc.io/initial-events-end', 'k8s.io/initial-events-end'];

export class WatchHandler {
  /** Streams currently open (ended on shutdown). */
  readonly open = new Set<WatchStream>();

  /** Watchers whose socket is blocked, with when it blocked (see drained() in serve). */
  private readonly blocked = new Map<WatchStream, { since: number; what: string }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly opts: WatchHandlerOptions) {}

  /**
   * One sweeper for all blocked watchers (instead of a timer per write): a watcher whose socket
   * has been blocked for slowWatcherMs while events wait in its queue is ended as too slow.
   */
  private watchBlocked(w: WatchStream, what: string): void {
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

  async serve(
    store: ResourceStore,
    info: ResourceRequest,
    req: Request,
    q: URLSearchParams,
    codec: MediaCodec,
    view: BrandView,
  ): Promise<Response> {
    const lo = listOptions(q, store);
    const sendInitial = queryBool(q, 'sendInitialEvents');
    const initialEvents = sendInitial === true;
    const rvParam = q.get('resourceVersion') ?? '';
    const rvm = q.get('resourceVersionMatch') ?? '';
    if (sendInitial !== undefined) {
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
    const bookmarks = queryBool(q, 'allowWatchBookmarks') === true;
    const fault = watchFaultOf(req);
    // Periodic and last bookmarks (a fault may withhold them; never the initial-events-end one).
    const periodic = bookmarks && fault?.withholdBookmarks !== true;
    const timeoutParam = queryInt(q, 'timeoutSeconds');
    // Unset (or 0, as the reference): a random time between the minimum request timeout and twice it.
    const timeoutSec = timeoutParam ? timeoutParam : this.opts.minRequestTimeoutSec * (1 + Math.random());
    if (timeoutSec < 0) throw badRequest(`timeoutSeconds: Invalid value: "${timeoutParam}": must be greater than or equal to 0`);

    const def = store.def;
    // Events in the negotiated encoding: JSON lines, Table rows, protobuf or CBOR frames.
    const events = codec.watch;
    const ctx: EncodeContext = { kind: def, view, now: Date.now, includeObject: includeObject(q) };
    // An event's encoding is the same bytes for every watcher in the svc spelling: built once
    // per event, type and encoding, then shared (fan-out neither copies nor encodes an object
    // per watcher). Watches naming the upstream group get theirs built per watcher.
    const share = events.shareKey !== undefined && view.brand === 'svc';
    const keys: Record<WatchEventType, string> = {
      ADDED: `${events.shareKey}:ADDED`,
      MODIFIED: `${events.shareKey}:MODIFIED`,
      DELETED: `${events.shareKey}:DELETED`,
    };
    const line = (e: WatchEvent): string | Uint8Array => {
      if (!share || !e.shared) return events.event(e.type, e, ctx);
      if (e.event.encoded === undefined) e.event.encoded = {};
      const key = keys[e.type];
      let l = e.event.encoded[key];
      if (l === undefined) {
        const x = events.event(e.type, e, ctx);
        l = typeof x === 'string' ? Buffer.from(x) : x;
        e.event.encoded[key] = l;
      }
      return l;
    };
    const bookmark = (rv: number, initialEnd: boolean): string | Uint8Array => {
      const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
      if (initialEnd) metadata.annotations = Object.fromEntries(INITIAL_EVENTS_END.map((k) => [k, 'true']));
      return events.bookmark({ kind: def.kind, apiVersion: view.apiVersion, metadata }, ctx);
    };

    let reg: WatchStart | undefined;
    let tooOld: StatusError | undefined;
    try {
      reg = await store.watch({
        namespace: info.namespace,
        name: info.name,
        selectors: lo,
        // Watches with the same namespace, name and selector strings share one match per event.
        selectionKey: `${info.namespace}\u0000${info.name}\u0000${q.get('labelSelector') ?? ''}\u0000${q.get('fieldSelector') ?? ''}`,
        resourceVersion: rvParam,
        initialEvents,
        freshnessTimeoutMs: this.opts.freshnessTimeoutMs ?? 3000,
      });
    } catch (e) {
      // A start older than the history window is answered in the stream, as the reference does.
      if (!(e instanceof StatusError) || e.code !== 410) throw e;
      tooOld = e;
    }
    const open = this.open;
    const bookmarkEvery = this.opts.bookmarkIntervalMs ?? 60_000;
    const log = this.opts.log ?? (() => {});
    const blocked = this.blocked;
    const watchBlocked = (x: WatchStream) => this.watchBlocked(x, def.plural);
    const body = new ReadableStream({
      type: 'direct',
      async pull(controller) {
        if (tooOld || !reg) {
          const err = view.error(tooOld ?? resourceExpired('too old resource version')) as StatusError;
          controller.write(events.error(err.body(), ctx));
          controller.close();
          return;
        }
        const { stream: w, initial, revision, from, newest } = reg;
        open.add(w);
        try {
          // What goes out before live events: synthetic ADDED events, the initial-events-end
          // bookmark; or, when nothing would, one byte of JSON whitespace (which every watch
          // decoder skips): Bun sends the end of the header block only with the first body
          // bytes, so a quiet watch would leave its client waiting for the response headers.
          // Initial lines are built as they are sent and not kept: a client that does not read
          // holds at most what its socket buffers take.
          const afterInitial: (string | Uint8Array)[] = [];
          if (initialEvents && bookmarks) afterInitial.push(bookmark(revision, true));
          if (initial.length === 0 && afterInitial.length === 0 && w.pending === 0) {
            // A binary stream has no ignorable byte: a bookmark when the client takes them,
            // else the headers wait for the first event.
            if (events.idle !== undefined) afterInitial.push(events.idle);
            else if (periodic) afterInitial.push(bookmark(revision, false));
          }
          // Resource version of the last event actually written: what a bookmark may claim.
          let sentRv = from === 'now' ? revision : from;
          const faultDeadline = fault?.closeAfterMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + fault.closeAfterMs;
          const deadline = Math.min(Date.now() + timeoutSec * 1000, faultDeadline);
          // Events a fault's closeAfterEvents still lets through; set when the fault ends the stream.
          let eventsLeft = fault?.closeAfterEvents ?? Number.POSITIVE_INFINITY;
          let faultClosed = false;
          let holdUntil = 0;
          let nextBookmark = Date.now() + bookmarkEvery;
          /**
           * One pump writes the whole stream: the head, then live events (the cache's fan-out
           * calls it synchronously once per store batch, and on this watcher's timer), then a
           * last bookmark. What is queued since the last call goes out as one write and one
           * flush (one TLS record, one send); no promise or async resumption per watcher and
           * event. Bun's sink signals backpressure by returning a Promise from write()/flush():
           * then the pump waits for the drain. A client that stops reading while events wait in
           * its queue for slowWatcherMs is ended as too slow (the sweeper), so the server never
           * buffers more than a queue per stalled watcher.
           */
          await new Promise<void>((finish) => {
            let stopped = false;
            let waiting = false;
            // Written but not flushed yet (a write the socket did not take at once is flushed
            // once it drains, even when nothing new comes).
            let unflushed = false;
            let initialAt = 0;
            let afterAt = 0;
            let closing = false;
            let lastBookmarkSent = false;
            const stop = (): void => {
              if (stopped) return;
              stopped = true;
              w.onSignal = undefined;
              req.signal.removeEventListener('abort', stop);
              finish();
            };
            /** false when the socket did not take it: the pump resumes when it drains. */
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
            const send = (chunk: string | Uint8Array): boolean => {
              unflushed = true;
              return took(controller.write(chunk) as number | Promise<number>);
            };
            const write = (part: string | Uint8Array): void => {
              controller.write(part);
            };
            const pump = (): void => {
              if (stopped) return;
              if (req.signal.aborted || w.ended === 'slow') {
                stop();
                return;
              }
              if (waiting) return;
              while (initialAt < initial.length) {
                const c = initial[initialAt++] as StoredObject;
                if (!send(events.initial(c, ctx, write))) return;
              }
              while (afterAt < afterInitial.length) if (!send(afterInitial[afterAt++] as string | Uint8Array)) return;
              const now = Date.now();
              if (!closing && (w.ended === 'reset' || now >= deadline)) {
                closing = true;
                faultClosed = now >= faultDeadline;
              }
              if (!closing && eventsLeft <= 0) {
                closing = true;
                faultClosed = true;
              }
              if (!closing && fault && fault.eventDelayMs > 0 && w.pending > 0) {
                // Hold the batch: it goes out eventDelayMs after the first event of it arrived.
                if (holdUntil === 0) {
                  holdUntil = now + fault.eventDelayMs;
                  setTimeout(safePump, fault.eventDelayMs);
                }
                if (now < holdUntil) {
                  if (unflushed) {
                    unflushed = false;
                    took(controller.flush() as number | Promise<number>);
                  }
                  return;
                }
                holdUntil = 0;
              }
              if (!closing) {
                let evs = w.take();
                if (evs.length >= eventsLeft) {
                  evs = evs.slice(0, eventsLeft);
                  closing = true;
                  faultClosed = true;
                }
                eventsLeft -= evs.length;
                if (evs.length > 0) {
                  const last = evs.length - 1;
                  for (let i = 0; i < last; i++) controller.write(line(evs[i] as WatchEvent));
                  sentRv = (evs[last] as WatchEvent).event.rv;
                  if (!send(line(evs[last] as WatchEvent))) return;
                }
                if (periodic && now >= nextBookmark && w.pending === 0) {
                  sentRv = Math.max(sentRv, newest());
                  nextBookmark = now + bookmarkEvery;
                  if (!send(bookmark(sentRv, false))) return;
                }
                if (w.ended) closing = true;
                else if (!closing) {
                  if (unflushed) {
                    unflushed = false;
                    if (!took(controller.flush() as number | Promise<number>)) return;
                  }
                  w.wakeAt(periodic ? Math.min(deadline, nextBookmark) : deadline);
                  return;
                }
              }
              // The server ends the stream: a last bookmark tells the client where to resume
              // (never past an event it did not get); stop once it is flushed.
              if (faultClosed && fault?.expire && !lastBookmarkSent) {
                // The fault's end: a 410, after which the client must list again.
                lastBookmarkSent = true;
                if (!send(events.error((view.error(resourceExpired('too old resource version')) as StatusError).body(), ctx))) return;
              }
              if (periodic && !lastBookmarkSent) {
                lastBookmarkSent = true;
                // After a fault dropped events, only what was sent.
                const at = w.pending === 0 && !faultClosed ? Math.max(sentRv, newest()) : sentRv;
                if (!send(bookmark(at, false))) return;
              }
              if (unflushed) {
                unflushed = false;
                if (!took(controller.flush() as number | Promise<number>)) return;
              }
              stop();
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
        } catch (e) {
          if (e instanceof StatusError) controller.write(events.error((view.error(e) as StatusError).body(), ctx));
          else if (!req.signal.aborted) log(`watch ${def.plural}: ${String(e)}`);
        } finally {
          w.end('closed');
          open.delete(w);
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
      headers: { 'Content-Type': events.contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' },
    });
  }
}
