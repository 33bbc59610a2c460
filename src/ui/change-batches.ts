/**
 * The objects page's change stream, batched: a watch's events are folded per object (the
 * newest change of each) and handed out at most once per interval, as one message carrying
 * only what the page shows of each object (namespace, name, creation time, resourceVersion).
 * More changes in one interval than a page would apply in one go become a single `resync`
 * marker instead (the browser reads its page again, at most once per interval of its own):
 * under a write flood an open page costs one small message per interval, not one per write.
 *
 * Worked example (intervalMs 300, maxChanges 2):
 *   t=0    ADDED a          -> due now: {changes: [a]}            (a lone change goes at once)
 *   t=10   ADDED b          -> held until t=300
 *   t=20   MODIFIED b       -> still one change for b (the newest)
 *   t=300  flush            -> {changes: [b]}
 *   t=310  ADDED c, d, e    -> three objects > maxChanges: the held changes are dropped
 *   t=600  flush            -> {resync: true}
 */

import type { ObjectsBatch as Batch, Change } from './client/types';

export type { Batch, Change };

export interface BatchOptions {
  /**
   * Least time between two messages. 300 ms: a change still shows "at once" to a person, and a
   * flood costs the server and the browser ~3 small messages a second.
   */
  intervalMs: number;
  /**
   * Most objects one message names; more in one interval are a resync. 100: what a page of 500
   * rows applies without a visible pause, ~10 KB of JSON.
   */
  maxChanges: number;
}

export const BATCH_DEFAULTS: BatchOptions = { intervalMs: 300, maxChanges: 100 };

/** A change as the watch hands it: its key (for folding) and how to describe it, made only if sent. */
export interface PendingChange {
  key: string;
  describe(): Change;
}

export class ChangeBatcher {
  private held = new Map<string, PendingChange>();
  private overflow = false;
  private lastSent = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: BatchOptions = BATCH_DEFAULTS) {}

  /** Fold in one change (the newest of an object replaces the one held). */
  add(c: PendingChange): void {
    if (this.overflow) return;
    this.held.set(c.key, c);
    if (this.held.size > this.opts.maxChanges) {
      this.held.clear();
      this.overflow = true;
    }
  }

  /** Whether anything waits to be sent. */
  get pending(): boolean {
    return this.overflow || this.held.size > 0;
  }

  /** When the held changes may go (ms; now or later); undefined when nothing is held. */
  dueAt(now: number): number | undefined {
    if (!this.pending) return undefined;
    return Math.max(now, this.lastSent + this.opts.intervalMs);
  }

  /** The message to send now, if one is due (the held changes are then cleared). */
  take(now: number, revision: number, total: number): Batch | undefined {
    const due = this.dueAt(now);
    if (due === undefined || due > now) return undefined;
    this.lastSent = now;
    if (this.overflow) {
      this.overflow = false;
      return { revision, total, resync: true };
    }
    const changes = [...this.held.values()].map((c) => c.describe());
    this.held.clear();
    return { revision, total, changes };
  }
}
