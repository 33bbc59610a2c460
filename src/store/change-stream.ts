/**
 * A change stream of the embedded store (KV.watch): the events of one key range from a revision
 * on, handed out in batches of durable revisions. The store's change log (change-log.ts) tells
 * open streams which revisions hold an event of their range (matched), so a stream skips the
 * revisions that hold none without scanning them and never fails when those are compacted away.
 */
import { type ChangeEvent, type ChangeStream, prefixEnd, type Revision, StoreError } from './types';

/** What a stream reads of its store (MvccStore). */
export interface StreamSource {
  /** Newest applied revision (durable or not). */
  readonly appliedRevision: Revision;
  /** Newest durable revision: streams hand out nothing past it. */
  readonly committedRevision: Revision;
  readonly isClosed: boolean;
  /** Events of revisions from `from` on (at most a batch, none past committed) of the keys `covers` takes. */
  eventsBetween(from: Revision, covers: { covers(key: string): boolean }): { events: ChangeEvent[]; next: Revision };
  /** Resolves on the next commit, close or failure. */
  nextSignal(): Promise<void>;
  /** The stream closed: stop telling it of matches. */
  unregister(s: MvccChangeStream): void;
}

/** `key` when [key, end) is exactly the keys starting with it, else undefined. */
function prefixOf(key: string | undefined, end: string | undefined): string | undefined {
  return key && key.charCodeAt(key.length - 1) !== 0xffff && end === prefixEnd(key) ? key : undefined;
}

/** Whether `k` is in [key, end) (end undefined: exactly `key`; '\0': every key from `key` on). */
export function inRange(k: string, key: string, end: string | undefined): boolean {
  if (end === undefined) return k === key;
  return k >= key && (end === '\0' || k < end);
}

export class MvccChangeStream implements ChangeStream {
  private done = false;
  /** The range as a key prefix, when it is one. */
  readonly prefix: string | undefined;
  /** Newest revision applied with an event in this stream's range, as far as known. */
  private lastMatch: Revision;
  /**
   * First revision that may hold an event of this stream not scanned yet (undefined: none).
   * Revisions before it hold none: the stream neither scans them nor fails when they are
   * compacted away.
   */
  private firstPending: Revision | undefined;
  /** Where the next batch starts once the consumer comes back for it (see ChangeStream.position). */
  private handedOut: Revision | undefined;

  constructor(
    private readonly store: StreamSource,
    public position: Revision,
    private readonly key: string | undefined,
    private readonly end: string | undefined,
  ) {
    this.prefix = prefixOf(key, end);
    // History from before the stream opened is unknown here: scan it.
    this.lastMatch = store.appliedRevision;
    this.firstPending = this.lastMatch >= position ? position : undefined;
  }

  /** @internal Whether `key` is in this stream's range (a prefix range: one startsWith). */
  covers(key: string): boolean {
    if (this.key === undefined) return true;
    return this.prefix !== undefined ? key.startsWith(this.prefix) : inRange(key, this.key, this.end);
  }

  /** @internal The store applied revision `rev` with an event in this stream's range. */
  matched(rev: Revision): void {
    this.lastMatch = rev;
    if (this.firstPending === undefined) this.firstPending = rev;
  }

  async next(): Promise<ChangeEvent[]> {
    if (this.handedOut !== undefined) {
      this.position = this.handedOut;
      this.handedOut = undefined;
    }
    for (;;) {
      if (this.done || this.store.isClosed) {
        this.close();
        throw new StoreError('closed', 'change stream is closed');
      }
      const committed = this.store.committedRevision;
      // Revisions before the first that may hold our events are skipped unscanned.
      const skipTo = Math.min(this.firstPending ?? Number.POSITIVE_INFINITY, committed + 1);
      if (skipTo > this.position) this.position = skipTo;
      if (committed >= this.position) {
        let r: ReturnType<StreamSource['eventsBetween']>;
        try {
          r = this.store.eventsBetween(this.position, this);
        } catch (e) {
          this.close();
          throw e;
        }
        // Scanned up to r.next - 1: what may remain starts after it.
        this.firstPending = this.lastMatch >= r.next ? r.next : undefined;
        if (r.events.length > 0) {
          this.handedOut = r.next;
          return r.events;
        }
        this.position = r.next;
        continue;
      }
      await this.store.nextSignal();
    }
  }

  close(): void {
    this.done = true;
    this.store.unregister(this);
  }
}
