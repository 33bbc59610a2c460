/**
 * A watcher of the watch cache: its selection (a key prefix and a predicate on selector views),
 * its bounded queue of events as it sees them (an update that leaves the selection is a DELETED
 * of the previous content), and the signals that hand them to its consumer. Fan-out offers every
 * event and never waits: a watcher whose queue is full ends as 'slow'.
 */
import type { Obj } from '../api/meta';
import type { Revision } from '../store/types';
import { type CacheEvent, type EventType, exitedSelection, type SelectorView } from './events';

/** A watcher's selection: key range plus a predicate on objects' selector views. */
export interface Selection {
  /** Only keys starting with this (a namespace prefix), or '' for all of the resource. */
  keyPrefix: string;
  match: (v: SelectorView) => boolean;
  /**
   * `match` accepts every object (no selectors): the initial listing does not consult views,
   * which objects loaded at start make only when asked for (parsing them).
   */
  all?: boolean;
  /**
   * Watchers whose selections have the same key select the same objects: an event is matched
   * once for all of them (fan-out evaluates each distinct selection once per event).
   */
  key?: string;
  /**
   * A value every selected object has in one selector field (an `=` requirement of the field
   * selector, the watched name, the namespace): the cache then offers this watcher only the
   * events whose object, or whose previous version, has that value (an index, as the reference's
   * indexed triggers for spec.nodeName), instead of every event of the resource.
   */
  index?: { field: string; value: string };
}

/** Per event during fan-out: the match results of each selection key seen so far. */
export type SelectionMemo = Map<string, number>;
const NOW = 1;
const BEFORE = 2;

/**
 * An event as one watcher gets it: its type after filtering, and the event's object, or for an
 * update that moved the object out of the watcher's selection, the previous content (`gone`).
 */
export class WatcherEvent {
  constructor(
    readonly type: EventType,
    readonly event: CacheEvent,
    private readonly gone?: { obj: Obj; text: string },
  ) {}

  get obj(): Obj {
    return this.gone ? this.gone.obj : this.event.obj;
  }

  get text(): string {
    return this.gone ? this.gone.text : this.event.text;
  }

  /** Whether it carries the event's own object (its encoded lines can be shared by every watcher). */
  get shared(): boolean {
    return this.gone === undefined;
  }
}

const NO_EVENTS: readonly WatcherEvent[] = Object.freeze([]);

export class Watcher {
  private queue: WatcherEvent[] = [];
  private wake: (() => void) | undefined;
  /** Set when the watcher ended: 'closed' (by the client or server), 'slow', 'reset' (cache relisted). */
  ended: 'closed' | 'slow' | 'reset' | undefined;
  /** Revision of the last event handed out (or of the start point). */
  delivered: Revision;
  /** Resolves when the watcher ends. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(
    readonly sel: Selection,
    from: Revision,
    private readonly maxQueue: number,
    private readonly onEnd: (w: Watcher) => void,
  ) {
    this.delivered = from;
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** @internal Called by fan-out; never blocks. True when it queued an event (or ended the watcher). */
  offer(e: CacheEvent, memo?: SelectionMemo): boolean {
    if (this.ended) return false;
    if (!this.sel.keyPrefix || e.key.startsWith(this.sel.keyPrefix)) {
      const k = this.sel.key;
      let m = memo && k !== undefined ? memo.get(k) : undefined;
      if (m === undefined) {
        // A selection of everything needs no views (they are made only when a selector asks).
        if (this.sel.all === true) m = NOW | (e.type !== 'ADDED' && e.hasPrev ? BEFORE : 0);
        else {
          const pv = e.type === 'ADDED' ? undefined : e.prevView;
          m = (this.sel.match(e.view) ? NOW : 0) | (pv !== undefined && this.sel.match(pv) ? BEFORE : 0);
        }
        if (memo && k !== undefined) memo.set(k, m);
      }
      const now = (m & NOW) !== 0;
      const before = (m & BEFORE) !== 0;
      let type: EventType | undefined;
      if (e.type === 'DELETED') type = before || now ? 'DELETED' : undefined;
      else if (now && before) type = 'MODIFIED';
      else if (now) type = 'ADDED';
      else if (before) type = 'DELETED';
      if (type !== undefined) {
        if (this.queue.length >= this.maxQueue) {
          this.end('slow');
          return true;
        }
        if (type === 'DELETED' && e.type !== 'DELETED') {
          // Moved out of the selection: as the reference, the previous content at this event's version.
          this.queue.push(new WatcherEvent(type, e, exitedSelection(e)));
        } else {
          this.queue.push(new WatcherEvent(type, e));
        }
        return true;
      }
    }
    // No wake-up here: the cache signals the watchers that got events once per store batch
    // (follow), so a watcher takes all of a batch's events in one go.
    return false;
  }

  /**
   * Push mode: called synchronously on every signal (events queued, progress, timer, end)
   * instead of resolving a next() promise. A consumer that can write without waiting (a watch
   * stream) takes its events in the fan-out itself: no promise, no async resumption per watcher
   * and event. Errors it throws are its own; fan-out goes on.
   */
  onSignal: (() => void) | undefined;

  /** @internal The cache advanced (an event for another key, or progress). */
  signal(): void {
    const push = this.onSignal;
    if (push) {
      try {
        push();
      } catch {
        // the consumer's failure ends only its own stream (it handles that itself)
      }
      return;
    }
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Events queued so far, without waiting (push mode). */
  take(): readonly WatcherEvent[] {
    const out = this.queue;
    if (out.length === 0) return NO_EVENTS;
    this.queue = [];
    this.delivered = (out[out.length - 1] as WatcherEvent).event.rv;
    return out;
  }

  /** Sets (or moves earlier) this watcher's one timer: a signal at `at` (ms since epoch). */
  wakeAt(at: number): void {
    this.armTimer(at);
  }

  /** Events queued so far (possibly none after a progress signal); resolves when there is news. */
  async next(timeoutMs: number): Promise<readonly WatcherEvent[]> {
    if (this.queue.length === 0 && !this.ended) {
      if (timeoutMs < Number.POSITIVE_INFINITY) this.armTimer(Date.now() + Math.max(0, timeoutMs));
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return this.take();
  }

  /**
   * One timer per watcher, kept across next() calls and moved only when an earlier wake-up is
   * needed: with many watchers and frequent events, a timer per next() call (set, then cleared
   * on the event) was a measurable share of fan-out. A timer that fires early just causes a
   * wake-up with no events, which callers handle.
   */
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = 0;

  private armTimer(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.signal();
      },
      Math.max(0, at - Date.now()),
    );
  }

  get pending(): number {
    return this.queue.length;
  }

  end(reason: 'closed' | 'slow' | 'reset'): void {
    if (this.ended) return;
    this.ended = reason;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.onEnd(this);
    this.signal();
    this.resolveDone();
  }
}
