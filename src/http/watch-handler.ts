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
import { queryBool, queryInt } from '../api/query';
import type { ResourceRequest } from '../api/request-info';
import { badRequest, resourceExpired, StatusError } from '../api/status';
import type { BrandView } from '../codec/brand-view';
import { CBOR_SEQ_MEDIA_TYPE, type CborCodec } from '../codec/cbor';
import type { ProtobufCodec } from '../codec/protobuf';
import { storedJsonChunks } from '../codec/stored';
import { toTable } from '../codec/table';
import type { ResourceStore } from '../registry/generic';
import type { StoredItem } from '../registry/stored-item';
import type { WatchEvent, WatchStart, WatchStream } from '../registry/watch';
import type { Output } from './negotiate';
import { listOptions } from './resources';

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
  /** The protobuf codec, for watches asking for `application/vnd.svc.protobuf;stream=watch`. */
  protobuf?: ProtobufCodec;
  /** The CBOR codec (gate CBORServingAndStorage), for watches asking for `application/cbor`. */
  cbor?: CborCodec;
  log?: (msg: string) => void;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** A JSON watch event line is eventHead(type), the object's text, EVENT_END. */
const eventHead = (type: EventType): string => `{"type":"${type}","object":`;
const EVENT_END = '}\n';
/** The same parts as bytes, for initial events written around the cached text. */
const ADDED_HEAD = Buffer.from(eventHead('ADDED'));
const EVENT_TAIL = Buffer.from(EVENT_END);
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
    out: Output,
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
    const timeoutParam = queryInt(q, 'timeoutSeconds');
    // Unset (or 0, as the reference): a random time between the minimum request timeout and twice it.
    const timeoutSec = timeoutParam ? timeoutParam : this.opts.minRequestTimeoutSec * (1 + Math.random());
    if (timeoutSec < 0) throw badRequest(`timeoutSeconds: Invalid value: "${timeoutParam}": must be greater than or equal to 0`);

    const def = store.def;
    // Binary streams. Protobuf: each event a length-prefixed WatchEvent frame holding the object's
    // envelope. CBOR (application/cbor-seq): each event one self-described {type, object} item.
    const pb = out.kind === 'protobuf' ? this.opts.protobuf : undefined;
    const cbor = out.kind === 'cbor' ? this.opts.cbor : undefined;
    const objOf = (text: string, obj?: Obj): Obj => view.obj(obj ?? (JSON.parse(text) as Obj));
    const frame = pb
      ? (type: EventType, text: string, obj?: Obj): Uint8Array =>
          type === 'ERROR' ? pb.encodeWatchStatus(JSON.parse(text)) : pb.encodeWatchEvent(type, objOf(text, obj), def.schema)
      : cbor
        ? (type: EventType, text: string, obj?: Obj): Uint8Array =>
            type === 'ERROR' ? cbor.encodeWatchEvent(type, JSON.parse(text)) : cbor.encodeWatchEvent(type, objOf(text, obj), def.schema)
        : undefined;
    const frameKey = `${out.kind}:`;
    const encode = (type: EventType, text: string, obj?: Obj): string | Uint8Array => {
      if (frame) return frame(type, text, obj);
      if (out.kind === 'table' && obj && type !== 'ERROR' && type !== 'BOOKMARK') {
        // Table rows carry partial metadata (meta group), which has no brand of the kind's group.
        return `${eventHead(type)}${JSON.stringify(toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, out.group, Date.now()))}${EVENT_END}`;
      }
      return `${eventHead(type)}${text}${EVENT_END}`;
    };
    // A JSON event line is the same bytes for every watcher that gets it: built and UTF-8
    // encoded once per event and type, then shared (fan-out neither copies nor encodes object
    // text per watcher).
    const line = (e: WatchEvent): string | Uint8Array => {
      if (frame) {
        // Frames are shared like JSON lines: built once per event and type, for svc-spelled watches.
        if (view.brand !== 'svc' || !e.shared) return frame(e.type, e.text, e.obj);
        if (e.event.frames === undefined) e.event.frames = {};
        let f = e.event.frames[frameKey + e.type];
        if (f === undefined) {
          f = frame(e.type, e.text, e.obj);
          e.event.frames[frameKey + e.type] = f;
        }
        return f;
      }
      // Events for a watch naming the upstream group are built per watcher (the shared lines carry svc apiVersions).
      if (view.brand !== 'svc') return encode(e.type, view.text(e.text), e.obj);
      if (out.kind !== 'json' || !e.shared) return encode(e.type, e.text, e.obj);
      if (e.event.lines === undefined) e.event.lines = {};
      const lines = e.event.lines;
      let l = lines[e.type];
      if (l === undefined) {
        l = Buffer.from(encode(e.type, e.text));
        lines[e.type] = l;
      }
      return l;
    };
    const bookmark = (rv: number, initialEnd: boolean): string | Uint8Array => {
      const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
      if (initialEnd) metadata.annotations = Object.fromEntries(INITIAL_EVENTS_END.map((k) => [k, 'true']));
      return encode('BOOKMARK', JSON.stringify({ kind: def.kind, apiVersion: view.apiVersion, metadata }));
    };

    let reg: WatchStart | undefined;
    let tooOld: StatusError | undefined;
    try {
      reg = await store.watch({
        namespace: info.namespace,
        name: info.name,
        selectors: lo,
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
          controller.write(encode('ERROR', JSON.stringify(err.body())));
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
            if (!frame) afterInitial.push(' ');
            else if (bookmarks) afterInitial.push(bookmark(revision, false));
          }
          // Resource version of the last event actually written: what a bookmark may claim.
          let sentRv = from === 'now' ? revision : from;
          const deadline = Date.now() + timeoutSec * 1000;
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
            const pump = (): void => {
              if (stopped) return;
              if (req.signal.aborted || w.ended === 'slow') {
                stop();
                return;
              }
              if (waiting) return;
              while (initialAt < initial.length) {
                const c = initial[initialAt++] as StoredItem;
                // Binary frames and table rows encode the object (given, its text is not read).
                if (frame) {
                  if (!send(frame('ADDED', '', c.obj))) return;
                } else if (out.kind === 'table') {
                  if (!send(encode('ADDED', '', c.obj))) return;
                } else if (view.brand === 'svc') {
                  // The stored bytes go out as they are, with the resourceVersion spliced in,
                  // between the event's two fixed parts: no per-watcher copy of the object is
                  // built (100 watches reading 1,500 2 KB objects made 300 MB of short-lived
                  // strings when each built its own).
                  const [before, field, after] = storedJsonChunks(c.key, c.value, c.rv);
                  controller.write(ADDED_HEAD);
                  controller.write(before);
                  controller.write(field);
                  controller.write(after);
                  if (!send(EVENT_TAIL)) return;
                } else {
                  controller.write(ADDED_HEAD);
                  controller.write(view.text(c.text));
                  if (!send(EVENT_TAIL)) return;
                }
              }
              while (afterAt < afterInitial.length) if (!send(afterInitial[afterAt++] as string | Uint8Array)) return;
              const now = Date.now();
              if (!closing && (w.ended === 'reset' || now >= deadline)) closing = true;
              if (!closing) {
                const evs = w.take();
                if (evs.length > 0) {
                  const last = evs.length - 1;
                  for (let i = 0; i < last; i++) controller.write(line(evs[i] as WatchEvent));
                  sentRv = (evs[last] as WatchEvent).event.rv;
                  if (!send(line(evs[last] as WatchEvent))) return;
                }
                if (bookmarks && now >= nextBookmark && w.pending === 0) {
                  sentRv = Math.max(sentRv, newest());
                  nextBookmark = now + bookmarkEvery;
                  if (!send(bookmark(sentRv, false))) return;
                }
                if (w.ended) closing = true;
                else {
                  if (unflushed) {
                    unflushed = false;
                    if (!took(controller.flush() as number | Promise<number>)) return;
                  }
                  w.wakeAt(bookmarks ? Math.min(deadline, nextBookmark) : deadline);
                  return;
                }
              }
              // The server ends the stream: a last bookmark tells the client where to resume
              // (never past an event it did not get); stop once it is flushed.
              if (bookmarks && !lastBookmarkSent) {
                lastBookmarkSent = true;
                if (!send(bookmark(w.pending === 0 ? Math.max(sentRv, newest()) : sentRv, false))) return;
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
          if (e instanceof StatusError) controller.write(encode('ERROR', JSON.stringify((view.error(e) as StatusError).body())));
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
    const contentType =
      out.kind === 'protobuf' ? `${out.mediaType};stream=watch` : out.kind === 'cbor' ? CBOR_SEQ_MEDIA_TYPE : 'application/json';
    return new Response(body, {
      status: 200,
      headers: { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' },
    });
  }
}
