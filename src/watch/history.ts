/**
 * A watch cache's history window: the events it applied, oldest first, kept so that a watch can
 * resume from any resourceVersion inside the window (older ones get 410 Gone). It is bounded by
 * age (default 5 minutes), by count and by bytes (the stored bytes its events keep alive); and
 * recent events give up what only the fan-out needs once it has taken it: their parsed objects
 * past PARSED_MS, their texts and encoded lines past HOT_MS (CacheEvent.dropParsed, release).
 *
 * It is apart from the cache's core (cache.ts) because it is one data structure with its own
 * bounds and cursors: the core pushes each applied event (push), trims it once per store batch
 * (evict, then releaseLater for the end of a burst), and replays it to a watch resuming from a
 * revision (replay). It knows nothing of the store, the state or the watchers' index.
 */
import type { Revision } from '../store/types';
import type { CacheEvent } from './events';
import type { Watcher } from './watcher';

/** What an event weighs in the history's byte bound (the stored bytes it keeps alive). */
function eventBytes(e: CacheEvent): number {
  return e.bytes();
}

/**
 * How long an event keeps its parsed object and encoded lines (see CacheEvent): long enough for
 * the fan-out, which takes them at once. It was 10 s: under a burst of writes that kept every
 * object of the last 10 s parsed and as text on the heap (~190k objects, ~600 MB at 19k
 * creates/s), all surviving young collections only to die in full ones. At 100 ms (and
 * HINTS 2048): 60.1 -> 57.4 us of server CPU per create (bench/front-end.ts, 2026-11-26). A
 * watch resuming from further back decodes the stored bytes, as it did past 10 s.
 */
const HOT_MS = 100;

/**
 * How long an event keeps its parsed objects (the largest part of what HOT_MS holds: a tree of
 * objects each, where the text is one string): the fan-out reads them at once, and a reader after
 * this parses the bytes again once (kept until HOT_MS). Held for HOT_MS, with the write hints
 * (src/codec/stored.ts), the object of every create survived a young collection and died in a
 * full one; at 20 ms with 256 hints a create took 38.0-40.1 us in process against 41.9-42.1
 * (bench/in-process.ts, 2026-11-30): 20 ms or 256 hints alone, 40.6-42.1.
 */
const PARSED_MS = 20;

/** The bounds of a history window (WatchCacheOptions' historyMs, maxHistory, maxHistoryBytes). */
export interface HistoryBounds {
  /** How long events are kept for resumption. */
  historyMs: number;
  /** Most events kept regardless of age. */
  maxHistory: number;
  /** Most bytes of events kept. */
  maxHistoryBytes: number;
}

export class EventHistory {
  /** Events from head on; the slots before it are emptied (undefined) until the next slice. */
  private events: (CacheEvent | undefined)[] = [];
  private head = 0;
  /** Index of the first event not yet released (see HOT_MS). */
  private released = 0;
  /** Index of the first event that may still hold parsed objects (see PARSED_MS). */
  private unparsed = 0;
  /** Events before this revision are not in the history (cache start or eviction). */
  private oldestRev: Revision = 0;
  /** Bytes of event text in the history (from head on). */
  private bytes = 0;
  private releaseTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly historyMs: number;
  private readonly maxHistory: number;
  private readonly maxHistoryBytes: number;

  constructor(
    bounds: HistoryBounds,
    private readonly clock: () => number,
  ) {
    this.historyMs = bounds.historyMs;
    this.maxHistory = bounds.maxHistory;
    this.maxHistoryBytes = bounds.maxHistoryBytes;
  }

  /** Oldest resourceVersion a watch may start from (events after it are all retained). */
  get oldest(): Revision {
    return this.oldestRev;
  }

  /** Empty the window: it starts after `rev` (a load of the state at `rev`). */
  reset(rev: Revision): void {
    this.oldestRev = rev;
    this.events = [];
    this.head = 0;
    this.bytes = 0;
    this.released = 0;
    this.unparsed = 0;
  }

  /** Append an applied event (the newest). */
  push(e: CacheEvent): void {
    this.events.push(e);
    this.bytes += eventBytes(e);
  }

  /** Offer `w` the retained events after `from`, oldest first (a watch resuming from `from`). */
  replay(w: Watcher, from: Revision): void {
    for (let i = this.head; i < this.events.length; i++) {
      const e = this.events[i] as CacheEvent;
      if (e.rv > from) w.offer(e);
    }
  }

  /** Release recent events past HOT_MS and PARSED_MS, and drop the events past the bounds. */
  evict(now: number): void {
    // Events past HOT_MS keep only their bytes (CacheEvent); past PARSED_MS, no parsed objects.
    let r = Math.max(this.released, this.head);
    while (r < this.events.length && now - (this.events[r] as CacheEvent).at > HOT_MS) (this.events[r++] as CacheEvent).release();
    this.released = r;
    let q = Math.max(this.unparsed, r);
    while (q < this.events.length && now - (this.events[q] as CacheEvent).at > PARSED_MS) (this.events[q++] as CacheEvent).dropParsed();
    this.unparsed = q;
    let h = this.head;
    const size = this.events.length - h;
    let drop = Math.max(0, size - this.maxHistory);
    let bytes = this.bytes;
    for (let i = h; i < h + drop; i++) bytes -= eventBytes(this.events[i] as CacheEvent);
    // Past the byte bound the oldest go too (the newest event always stays).
    while (h + drop < this.events.length - 1 && bytes > this.maxHistoryBytes) bytes -= eventBytes(this.events[h + drop++] as CacheEvent);
    while (h + drop < this.events.length && now - (this.events[h + drop] as CacheEvent).at > this.historyMs)
      bytes -= eventBytes(this.events[h + drop++] as CacheEvent);
    this.bytes = bytes;
    if (drop === 0) return;
    this.oldestRev = (this.events[h + drop - 1] as CacheEvent).rv;
    // Dropped events leave the array now, not when it is next sliced: until then they would keep
    // their bytes, and their parsed forms too when the bounds drop them before HOT_MS.
    for (let i = h; i < h + drop; i++) this.events[i] = undefined;
    h += drop;
    if (h > 4096 && h > this.events.length / 2) {
      this.events = this.events.slice(h);
      this.released = Math.max(0, this.released - h);
      this.unparsed = Math.max(0, this.unparsed - h);
      h = 0;
    }
    this.head = h;
  }

  /**
   * Recent events are released (and the history trimmed by age) when the next batch arrives;
   * after the last batch of a burst, a timer does it, or the burst's parsed objects and texts
   * would stay until the resource's next write.
   */
  releaseLater(): void {
    if (this.releaseTimer !== undefined || this.released >= this.events.length || this.stopped) return;
    const first = this.events[Math.max(this.released, this.head)] as CacheEvent | undefined;
    const wait = first ? Math.max(0, first.at + HOT_MS - this.clock()) + 50 : HOT_MS;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      this.evict(this.clock());
      this.releaseLater();
    }, wait);
    this.releaseTimer.unref();
  }

  /** No more timers (the cache stopped). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.releaseTimer);
  }
}
