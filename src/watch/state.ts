/**
 * The watch cache's current objects by key: a hash map for reads and writes of one key, and an
 * ordered tree for lists and ranges.
 *
 * The tree alone costs a descent of string compares on every write (~17 of keys sharing a long
 * prefix, `/registry/pods/<ns>/`, at 150,000 pods): its comparator was 2-3% of the server's CPU in
 * the simulation and density profiles (2026-11-27). The tree's values are slots that the map
 * shares, so an update of an existing key (most writes: a pod's bind and status) replaces the
 * slot's object without touching the tree; only a new key or a removed one does.
 */
import BTree from 'sorted-btree';
import type { CachedObject } from './events';

interface Slot {
  c: CachedObject;
}

// Keys are strings: a plain comparison (the library's default comparator handles mixed types
// and was a measurable share of a create).
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const STOP = { break: true } as const;

export class CacheState {
  private readonly map = new Map<string, Slot>();
  private readonly tree = new BTree<string, Slot>(undefined, compareKeys, 64);

  get size(): number {
    return this.map.size;
  }

  get(key: string): CachedObject | undefined {
    return this.map.get(key)?.c;
  }

  /** Set `key` to `c`; true when the key was not there. */
  set(key: string, c: CachedObject): boolean {
    const s = this.map.get(key);
    if (s !== undefined) {
      s.c = c;
      return false;
    }
    const fresh = { c };
    this.map.set(key, fresh);
    this.tree.set(key, fresh);
    return true;
  }

  /** Remove `key`; true when it was there. */
  delete(key: string): boolean {
    if (!this.map.delete(key)) return false;
    this.tree.delete(key);
    return true;
  }

  clear(): void {
    this.map.clear();
    this.tree.clear();
  }

  maxKey(): string | undefined {
    return this.tree.maxKey();
  }

  /** The objects with keys in [from, to) in key order; the first `limit` when `limit` > 0. */
  range(from: string, to: string, limit = 0): CachedObject[] {
    const out: CachedObject[] = [];
    const visit = (_k: string, s: Slot): { break: true } | undefined => {
      out.push(s.c);
      return limit > 0 && out.length >= limit ? STOP : undefined;
    };
    // forRange stops at a returned {break} (sorted-btree's typings declare a void callback).
    this.tree.forRange(from, to, false, visit as (k: string, s: Slot) => void);
    return out;
  }

  /** `f` on every key and object (in no particular order). */
  forEach(f: (key: string, c: CachedObject) => void): void {
    for (const [k, s] of this.map) f(k, s.c);
  }
}
