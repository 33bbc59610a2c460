/**
 * The ordered in-memory index: a B+ tree from key to the key's revision history.
 *
 * A key's history is the list of its versions, oldest first. A delete appends a tombstone
 * (version 0, empty value); a later put starts a new generation with a new createRevision.
 * Worked example (as etcd's key_index.go draws it): put a@1, put a@3, delete a@5, put a@7:
 *
 *     history(a) = [ {mod 1, create 1, v1}, {mod 3, create 1, v2}, tomb@5, {mod 7, create 7, v1} ]
 *     at(a, 4) = v2@3   at(a, 6) = absent (tombstone)   at(a, 7) = v1@7
 *     compact(6): drops the versions older than the newest one <= 6 (tomb@5); a tombstone that
 *     would be the oldest left is dropped too → [ {mod 7} ]
 *
 * Only keys with more than one version or a trailing tombstone can lose anything to compaction;
 * they are tracked in `compactable`, so compaction does not walk the whole tree.
 *
 * Point lookups (every get, every compare and write of a transaction) go through a hash map that
 * shares the history arrays with the tree: O(1) instead of O(log n) string compares, for about
 * 80 bytes per key. The tree is touched only to add or remove a key and for ordered scans.
 */
import BTree from 'sorted-btree';
import type { KeyValue, Revision } from './types';

const EMPTY = new Uint8Array(0);

export function tombstone(key: string, revision: Revision): KeyValue {
  return { key, value: EMPTY, createRevision: 0, modRevision: revision, version: 0 };
}

export function isTombstone(kv: KeyValue): boolean {
  return kv.version === 0;
}

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The version of `history` visible at `rev` (the newest with modRevision <= rev), or undefined. */
function versionAt(history: KeyValue[], rev: Revision): KeyValue | undefined {
  const last = history[history.length - 1];
  if (last === undefined) return undefined;
  let found: KeyValue | undefined;
  if (last.modRevision <= rev) found = last;
  else {
    let lo = 0;
    let hi = history.length - 1; // history[hi].modRevision > rev
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((history[mid] as KeyValue).modRevision <= rev) lo = mid + 1;
      else hi = mid;
    }
    found = lo > 0 ? history[lo - 1] : undefined;
  }
  return found === undefined || isTombstone(found) ? undefined : found;
}

export class KeyIndex {
  private readonly tree = new BTree<string, KeyValue[]>(undefined, compareKeys, 64);
  private readonly map = new Map<string, KeyValue[]>();
  private readonly compactable = new Set<string>();

  /** Number of keys with any retained history (live or tombstoned). */
  get size(): number {
    return this.tree.size;
  }

  /** Newest version of `key` if it is live (including writes not yet durable). */
  latest(key: string): KeyValue | undefined {
    const h = this.map.get(key);
    const last = h?.[h.length - 1];
    return last === undefined || isTombstone(last) ? undefined : last;
  }

  /**
   * The key's versions, oldest first: the array the index itself reads. Only the history spill
   * replaces entries in it (a version by its spilled form, same revisions).
   */
  versions(key: string): KeyValue[] | undefined {
    return this.map.get(key);
  }

  /** The live version of `key` at revision `rev`. */
  at(key: string, rev: Revision): KeyValue | undefined {
    const h = this.map.get(key);
    return h === undefined ? undefined : versionAt(h, rev);
  }

  /** Record a new version (a put, or a tombstone). Its modRevision must exceed the key's last one. */
  append(kv: KeyValue): void {
    const h = this.map.get(kv.key);
    if (h === undefined) {
      const fresh = [kv];
      this.tree.set(kv.key, fresh);
      this.map.set(kv.key, fresh);
      if (isTombstone(kv)) this.compactable.add(kv.key);
      return;
    }
    const last = h[h.length - 1];
    if (last !== undefined && last.modRevision >= kv.modRevision) {
      throw new Error(`bug: version of ${kv.key} at ${kv.modRevision} not after ${last.modRevision}`);
    }
    h.push(kv);
    this.compactable.add(kv.key);
  }

  /** Insert a key known to be absent with a single live version (snapshot loading). */
  unsafeLoad(kv: KeyValue): void {
    const fresh = [kv];
    this.tree.set(kv.key, fresh);
    this.map.set(kv.key, fresh);
  }

  /**
   * Visit live keys in [key, end) at `rev` in order. `end` undefined: only `key`; "\0": no upper
   * bound. The visitor returns false to stop.
   */
  scan(key: string, end: string | undefined, rev: Revision, visit: (kv: KeyValue) => boolean): void {
    if (end === undefined) {
      const kv = this.at(key, rev);
      if (kv !== undefined) visit(kv);
      return;
    }
    const unbounded = end === '\0';
    const pair: [string, KeyValue[]] = ['', []];
    for (const [k, h] of this.tree.entries(key, pair as (string | KeyValue[])[])) {
      if (!unbounded && k >= end) break;
      const kv = versionAt(h, rev);
      if (kv !== undefined && !visit(kv)) break;
    }
  }

  /** Every live key at `rev`, in key order (for snapshots). Resumes after `afterKey` when given. */
  *liveAt(rev: Revision, afterKey?: string): Generator<KeyValue> {
    const pair: [string, KeyValue[]] = ['', []];
    for (const [k, h] of this.tree.entries(afterKey ?? '', pair as (string | KeyValue[])[])) {
      if (afterKey !== undefined && k === afterKey) continue;
      const kv = versionAt(h, rev);
      if (kv !== undefined) yield kv;
    }
  }

  /** Drop every version older than the newest one <= rev; drop tombstones left oldest. */
  compact(rev: Revision): void {
    for (const key of this.compactable) {
      const h = this.map.get(key);
      if (h === undefined) {
        this.compactable.delete(key);
        continue;
      }
      let keepFrom = -1;
      for (let i = h.length - 1; i >= 0; i--) {
        if ((h[i] as KeyValue).modRevision <= rev) {
          keepFrom = i;
          break;
        }
      }
      if (keepFrom < 0) continue;
      if (isTombstone(h[keepFrom] as KeyValue)) keepFrom++;
      if (keepFrom > 0) h.splice(0, keepFrom);
      if (h.length === 0) {
        this.tree.delete(key);
        this.map.delete(key);
        this.compactable.delete(key);
      } else if (h.length === 1 && !isTombstone(h[0] as KeyValue)) {
        this.compactable.delete(key);
      }
    }
  }
}
