/**
 * A watch cache's watchers: every registered one, and the index the fan-out offers an event by.
 * Watchers whose selection has an index (Selection.index) are kept by field and value, watchers
 * of one namespace (no field index) by their key prefix `<prefix><namespace>/`, the others in one
 * set. An event goes to every unindexed watcher, to the watchers of its namespace and, per
 * indexed field, to the watchers of its object's value and of its previous version's: with 5,000
 * kubelets each watching its node's pods, a pod's event is offered to one or two of them, not to
 * 5,000.
 *
 * The cache's core (cache.ts) registers a watcher once it has its initial objects or has
 * replayed its history to it, hands every applied event to offer(), and signals the watchers
 * that got events once per store batch (signalTouched); this file knows nothing of the state or
 * the history. What one watcher selects, and its queue, are the Watcher's own (watcher.ts).
 */
import type { Revision } from '../store/types';
import { type CacheEvent, viewField } from './events';
import { addTo, removeFrom } from './sets';
import type { SelectionMemo, Watcher } from './watcher';

export class WatcherSet {
  private readonly watchers = new Set<Watcher>();
  /** Watchers whose selection is not `all` (they match events by views). */
  private selectingCount = 0;
  /** Watchers with a selection index (Selection.index), by field and value. */
  private readonly indexed = new Map<string, Map<string, Set<Watcher>>>();
  /** Watchers of one namespace (no field index), by their key prefix `<prefix><namespace>/`. */
  private readonly byNamespace = new Map<string, Set<Watcher>>();
  private readonly unindexed = new Set<Watcher>();
  /** Watchers that got an event in the batch being applied: only they are signalled after it. */
  private readonly touched = new Set<Watcher>();

  /** `prefix`: the resource's key prefix (a namespace's watchers are under `<prefix><namespace>/`). */
  constructor(private readonly prefix: string) {}

  get size(): number {
    return this.watchers.size;
  }

  /** Watchers whose selection is not `all`: while there are any, events need selector views. */
  get selecting(): number {
    return this.selectingCount;
  }

  /** Whether `keyPrefix` is one namespace's (`<prefix><namespace>/`), which byNamespace indexes. */
  private isNamespacePrefix(keyPrefix: string): boolean {
    return (
      keyPrefix.length > this.prefix.length &&
      keyPrefix.startsWith(this.prefix) &&
      keyPrefix.indexOf('/', this.prefix.length) === keyPrefix.length - 1
    );
  }

  add(w: Watcher): void {
    this.watchers.add(w);
    if (w.sel.all !== true) this.selectingCount++;
    const ix = w.sel.index;
    if (ix !== undefined) {
      let byValue = this.indexed.get(ix.field);
      if (byValue === undefined) {
        byValue = new Map();
        this.indexed.set(ix.field, byValue);
      }
      addTo(byValue, ix.value, w);
    } else if (this.isNamespacePrefix(w.sel.keyPrefix)) addTo(this.byNamespace, w.sel.keyPrefix, w);
    else this.unindexed.add(w);
  }

  remove(w: Watcher): void {
    if (!this.watchers.delete(w)) return;
    if (w.sel.all !== true) this.selectingCount--;
    this.touched.delete(w);
    const ix = w.sel.index;
    if (ix !== undefined) {
      const byValue = this.indexed.get(ix.field);
      if (byValue === undefined) return;
      removeFrom(byValue, ix.value, w);
      if (byValue.size === 0) this.indexed.delete(ix.field);
    } else if (this.isNamespacePrefix(w.sel.keyPrefix)) removeFrom(this.byNamespace, w.sel.keyPrefix, w);
    else this.unindexed.delete(w);
  }

  /** The fan-out of one event: offered to the watchers that may select it (see the header); no wake-ups. */
  offer(e: CacheEvent): void {
    if (this.watchers.size === 0) return;
    const memo: SelectionMemo | undefined = this.watchers.size > 1 ? new Map() : undefined;
    for (const w of this.unindexed) if (w.offer(e, memo)) this.touched.add(w);
    if (this.byNamespace.size > 0) {
      const slash = e.key.indexOf('/', this.prefix.length);
      const ns = slash > 0 ? this.byNamespace.get(e.key.slice(0, slash + 1)) : undefined;
      if (ns) for (const w of ns) if (w.offer(e, memo)) this.touched.add(w);
    }
    if (this.indexed.size === 0) return;
    const pv = e.type === 'ADDED' ? undefined : e.prevView;
    for (const [field, byValue] of this.indexed) {
      const v = viewField(e.view, field);
      const now = byValue.get(v);
      if (now) for (const w of now) if (w.offer(e, memo)) this.touched.add(w);
      if (pv === undefined) continue;
      const p = viewField(pv, field);
      const before = p === v ? undefined : byValue.get(p);
      if (before) for (const w of before) if (w.offer(e, memo)) this.touched.add(w);
    }
  }

  /** Signal the watchers that got events since the last call (once per store batch). */
  signalTouched(): void {
    for (const w of this.touched) w.signal();
    this.touched.clear();
  }

  /** End every watcher (each leaves the set as it ends). */
  endAll(reason: 'closed' | 'reset'): void {
    for (const w of [...this.watchers]) w.end(reason);
  }

  /** The watcher furthest behind the cache's revision `rev` (see WatchCache.backlog). */
  backlog(rev: Revision): { maxQueued: number; maxLagRevisions: number } {
    let maxQueued = 0;
    let maxLag = 0;
    for (const w of this.watchers) {
      const q = w.pending;
      if (q === 0) continue;
      if (q > maxQueued) maxQueued = q;
      if (rev - w.delivered > maxLag) maxLag = rev - w.delivered;
    }
    return { maxQueued, maxLagRevisions: maxLag };
  }
}
