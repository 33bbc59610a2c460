/**
 * The embedded store's change log, and the routing of its change streams (KV.watch) by key: which
 * keys each retained revision wrote, which open streams to tell of a revision (matched), and the
 * events of a run of revisions read back for a stream (eventsBetween).
 *
 * The log holds key names only, one entry per revision: the events themselves are read back from
 * the key index (eventAt), so the log holds no versions. The store (mvcc.ts) appends every
 * revision it applies (append), forgets the revisions a compaction made unreadable (dropBefore),
 * and registers and unregisters its streams here; what a stream has handed out, and when it
 * waits, is the stream's own (change-stream.ts).
 *
 * It is apart from the store because it is one structure with its own indexes (the streams by
 * prefix and by parent path) that knows nothing of transactions, the WAL or snapshots. append
 * runs for every write: the store calls it as a plain method of an object it owns, as it called
 * its own appendLog when this code was part of it, with nothing allocated or looked up for the
 * call.
 */
import type { MvccChangeStream } from './change-stream';
import { isTombstone, type KeyIndex, tombstone } from './key-index';
import { type ChangeEvent, type Revision, StoreError } from './types';

export class ChangeLog {
  /** Open change streams, by prefix range (see add) and the rest. */
  private readonly prefixStreams = new Map<string, Set<MvccChangeStream>>();
  private readonly otherStreams = new Set<MvccChangeStream>();
  /**
   * log[i] names the keys written at revision logStart + i (one key, the usual case, or several);
   * the events themselves are read back from the index (eventAt), so the log holds no versions.
   */
  private log: (string | string[])[] = [];
  private logStart: Revision = 1;

  /** `index`: the store's key index, which the events are read back from. */
  constructor(private readonly index: KeyIndex) {}

  /** Revisions retained (StoreStats.retainedRevisions). */
  get size(): number {
    return this.log.length;
  }

  /** The log starts after `rev`: a store opened from a snapshot at `rev` has no history before it. */
  startAfter(rev: Revision): void {
    this.logStart = rev + 1;
  }

  /** Forget the revisions before `rev` (a compaction): a stream still wanting them fails as compacted. */
  dropBefore(rev: Revision): void {
    const drop = rev - this.logStart;
    if (drop > 0) {
      this.log = this.log.slice(drop);
      this.logStart += drop;
    }
  }

  /** A stream opened: from now on it learns the revisions with an event in its range. */
  add(s: MvccChangeStream): void {
    // A stream over keys under a prefix ending in '/' (every watch cache's) is found from an
    // event's key by the key's own '/'-prefixes; any other range is checked on every event.
    const prefix = s.prefix?.endsWith('/') ? s.prefix : undefined;
    if (prefix !== undefined) {
      let set = this.prefixStreams.get(prefix);
      if (!set) {
        set = new Set();
        this.prefixStreams.set(prefix, set);
        this.streamsByParent.clear();
      }
      set.add(s);
    } else this.otherStreams.add(s);
  }

  /** A stream is closed: no more marking. */
  remove(s: MvccChangeStream): void {
    this.otherStreams.delete(s);
    for (const [p, set] of this.prefixStreams)
      if (set.delete(s) && set.size === 0) {
        this.prefixStreams.delete(p);
        this.streamsByParent.clear();
      }
  }

  /**
   * The events of a revision go to the log, and each open stream whose range holds one of them
   * learns that revision (matched): a stream scans the log only from the first revision that
   * may hold one of its events, and skips ahead when none can (with a cache per resource, most
   * streams match no event of a write).
   */
  append(rev: Revision, keys: string | string[]): void {
    this.log.push(keys);
    if (typeof keys === 'string') this.markStreams(rev, keys);
    else for (const key of keys) this.markStreams(rev, key);
  }

  private markStreams(rev: Revision, key: string): void {
    for (const s of this.otherStreams) if (s.covers(key)) s.matched(rev);
    if (this.prefixStreams.size === 0) return;
    for (const set of this.streamSetsOf(key)) for (const st of set) st.matched(rev);
  }

  /**
   * Events of revisions [from, to] (to <= committed: the store bounds the batch) of the keys
   * `covers` takes, and the revision to read from next.
   */
  eventsBetween(from: Revision, to: Revision, covers: { covers(key: string): boolean }): { events: ChangeEvent[]; next: Revision } {
    if (from < this.logStart) throw new StoreError('compacted', `mvcc: required revision ${from} has been compacted`);
    const events: ChangeEvent[] = [];
    for (let r = from; r <= to; r++) {
      const keys = this.log[r - this.logStart] as string | string[];
      if (typeof keys === 'string') {
        if (covers.covers(keys)) events.push(this.eventAt(keys, r));
      } else for (const key of keys) if (covers.covers(key)) events.push(this.eventAt(key, r));
    }
    return { events, next: Math.max(from, to + 1) };
  }

  /**
   * The event of `key` at `rev` (a revision in the log), read from the key's versions. The log
   * keeps the compacted revision itself, whose versions the index may have dropped: a delete there
   * left no tombstone, and what either kind of write superseded is gone (as etcd, whose watch
   * from the compacted revision has no previous values either).
   */
  private eventAt(key: string, rev: Revision): ChangeEvent {
    const w = this.index.written(key, rev);
    if (w === undefined) return { type: 'delete', kv: tombstone(key, rev), prev: undefined };
    return { type: isTombstone(w.kv) ? 'delete' : 'put', kv: w.kv, prev: w.prev };
  }

  /**
   * The prefix streams' sets whose prefix is one of the key's own '/'-prefixes, found once per
   * parent path (`/registry/core/configmaps/ns/`) rather than by a slice and a lookup per '/'
   * on every write. Cleared when a prefix gains its first stream or loses its last.
   */
  private readonly streamsByParent = new Map<string, Set<MvccChangeStream>[]>();

  private streamSetsOf(key: string): Set<MvccChangeStream>[] {
    const parent = key.slice(0, key.lastIndexOf('/') + 1);
    let sets = this.streamsByParent.get(parent);
    if (sets === undefined) {
      sets = [];
      for (let i = parent.indexOf('/'); i >= 0; i = parent.indexOf('/', i + 1)) {
        const set = this.prefixStreams.get(parent.slice(0, i + 1));
        if (set) sets.push(set);
      }
      if (this.streamsByParent.size >= 10_000) this.streamsByParent.clear();
      this.streamsByParent.set(parent, sets);
    }
    return sets;
  }
}
