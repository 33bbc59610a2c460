/**
 * The ordered in-memory index: from key to the key's revision history, the keys in order
 * (src/store/ordered-keys.ts).
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
 * they are tracked in `compactable`, so compaction does not walk every key.
 *
 * Point lookups (every get, every compare and write of a transaction) go through a hash map of
 * the history arrays: O(1) instead of O(log n) string compares. The order is touched only to add
 * or remove a key and for ordered scans.
 *
 * A superseded version whose value went to the history spill (spill.ts) is held as a number: its
 * slot in the spill's table of revisions and file locations (no object per version). Readers get
 * a KeyValue made from the slot when they ask for it. The newest version is never a slot.
 */
import { OrderedKeys } from './ordered-keys';
import { PackedKeyValue, type PackedValue } from './packed';
import { SlotMap } from './slot-map';
import type { KeyValue, Revision } from './types';

/** A version in a key's history: in memory, or a slot of the history spill's table. */
export type Entry = KeyValue | number;

/** The history spill's table, as the index reads it. */
export interface SpillSlots {
  modRevision(slot: number): Revision;
  /** The version in `slot` as a KeyValue (its value is read from the spill file on access). */
  materialize(slot: number, key: string): KeyValue;
  /** Compaction dropped the version in `slot`. */
  drop(slot: number): void;
}

const EMPTY = new Uint8Array(0);

export function tombstone(key: string, revision: Revision): KeyValue {
  return { key, value: EMPTY, createRevision: 0, modRevision: revision, version: 0 };
}

export function isTombstone(kv: KeyValue): boolean {
  return kv.version === 0;
}

/** The version of `history` visible at `rev` (the newest with modRevision <= rev), or undefined. */
function versionAt(history: Entry[], rev: Revision, key: string, slots: SpillSlots | undefined): KeyValue | undefined {
  const last = history[history.length - 1] as KeyValue | undefined;
  if (last === undefined) return undefined;
  let found: Entry | undefined;
  if (last.modRevision <= rev) found = last;
  else {
    let lo = 0;
    let hi = history.length - 1; // history[hi].modRevision > rev
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (modOf(history[mid] as Entry, slots) <= rev) lo = mid + 1;
      else hi = mid;
    }
    found = lo > 0 ? history[lo - 1] : undefined;
  }
  if (found === undefined) return undefined;
  // A slot holds a superseded put, never a tombstone.
  if (typeof found === 'number') return (slots as SpillSlots).materialize(found, key);
  return isTombstone(found) ? undefined : found;
}

function modOf(e: Entry, slots: SpillSlots | undefined): Revision {
  return typeof e === 'number' ? (slots as SpillSlots).modRevision(e) : e.modRevision;
}

export class KeyIndex {
  /** The keys in order (src/store/ordered-keys.ts); their histories are in `map`. */
  private readonly order = new OrderedKeys();
  /** The histories by key (a SlotMap: see slot-map.ts for why not a Map of the arrays). */
  private readonly map = new SlotMap<Entry[]>();
  private readonly compactable = new Set<string>();
  /** The history spill's table, once the store has one. */
  slots: SpillSlots | undefined;

  /** Number of keys with any retained history (live or tombstoned). */
  get size(): number {
    return this.map.size;
  }

  /** Newest version of `key` if it is live (including writes not yet durable). */
  latest(key: string): KeyValue | undefined {
    const h = this.map.get(key);
    const last = h?.[h.length - 1] as KeyValue | undefined;
    return last === undefined || isTombstone(last) ? undefined : last;
  }

  /**
   * The key's versions, oldest first: the array the index itself reads. Only the history spill
   * replaces entries in it (a version by its spilled form, same revisions).
   */
  versions(key: string): Entry[] | undefined {
    return this.map.get(key);
  }

  /** The modRevision of a history entry. */
  modOf(e: Entry): Revision {
    return modOf(e, this.slots);
  }

  /** A history entry as a KeyValue (a slot is made into one). */
  kvOf(e: Entry, key: string): KeyValue {
    return typeof e === 'number' ? (this.slots as SpillSlots).materialize(e, key) : e;
  }

  /**
   * The version of `key` written at exactly `rev` and the live version it superseded, or
   * undefined when the index no longer holds it.
   */
  written(key: string, rev: Revision): { kv: KeyValue; prev: KeyValue | undefined } | undefined {
    const h = this.map.get(key);
    if (h === undefined) return undefined;
    const last = h.length - 1;
    const i = (h[last] as KeyValue).modRevision === rev ? last : this.indexOf(h, rev);
    if (i < 0) return undefined;
    const before = i > 0 ? (h[i - 1] as Entry) : undefined;
    const prev = before === undefined || (typeof before !== 'number' && isTombstone(before)) ? undefined : this.kvOf(before, key);
    return { kv: this.kvOf(h[i] as Entry, key), prev };
  }

  /** The position of the version with modRevision `rev` in `h`, or -1. */
  indexOf(h: Entry[], rev: Revision): number {
    let lo = 0;
    let hi = h.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const m = modOf(h[mid] as Entry, this.slots);
      if (m === rev) return mid;
      if (m < rev) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The live version of `key` at revision `rev`. */
  at(key: string, rev: Revision): KeyValue | undefined {
    const h = this.map.get(key);
    return h === undefined ? undefined : versionAt(h, rev, key, this.slots);
  }

  /** Record a new version (a put, or a tombstone). Its modRevision must exceed the key's last one. */
  append(kv: KeyValue): void {
    this.appendTo(this.map.get(kv.key), kv);
  }

  /** append() for a caller that just looked the key's history up (versions()): one lookup less. */
  appendTo(h: Entry[] | undefined, kv: KeyValue): void {
    if (h === undefined) {
      const fresh = [kv];
      this.order.add(kv.key);
      this.map.insert(kv.key, fresh);
      if (isTombstone(kv)) this.compactable.add(kv.key);
      return;
    }
    const last = h[h.length - 1] as KeyValue | undefined;
    if (last !== undefined && last.modRevision >= kv.modRevision) {
      throw new Error(`bug: version of ${kv.key} at ${kv.modRevision} not after ${last.modRevision}`);
    }
    // A key with two versions or more is in `compactable` already (compaction removes it only
    // when one live version is left).
    if (h.length < 2) this.compactable.add(kv.key);
    h.push(kv);
  }

  /**
   * Hold the key's newest version packed: when it is still the version written at `rev` with
   * exactly the bytes `raw` (the very buffer a watch cache packed), it becomes a PackedKeyValue
   * of `packed`. True when it did.
   */
  packNewest(key: string, rev: Revision, raw: Uint8Array, packed: PackedValue): boolean {
    const h = this.map.get(key);
    const last = h?.[h.length - 1];
    if (h === undefined || last === undefined || typeof last === 'number' || last instanceof PackedKeyValue) return false;
    if (last.modRevision !== rev || last.value !== raw || isTombstone(last)) return false;
    h[h.length - 1] = new PackedKeyValue(last.key, packed, last.createRevision, last.modRevision, last.version);
    return true;
  }

  /** Insert a key known to be absent with a single live version (snapshot loading). */
  unsafeLoad(kv: KeyValue): void {
    const fresh = [kv];
    this.order.add(kv.key);
    this.map.insert(kv.key, fresh);
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
    const slots = this.slots;
    this.order.each(key, end === '\0' ? undefined : end, (k) => {
      const kv = versionAt(this.map.get(k) as Entry[], rev, k, slots);
      return kv === undefined || visit(kv);
    });
  }

  /**
   * A reader of the live keys at `rev` in key order, up to `max` at a time after `afterKey` (from
   * the first key when undefined): the snapshot's chunks. It reads the keys' order once, as it is
   * now: keys added later hold only versions after `rev`, and none is removed meanwhile (only a
   * compaction removes keys, and none runs during a snapshot; a key gone all the same is skipped).
   * Reading the order again for each chunk merged the keys added since the chunk before into
   * those of the last rebuild (up to a quarter of the keys) 200 times for 200,000 keys. A callback
   * scan, not an iterator under a generator (the B+ tree's entries() walk that way cost 1.1 us per
   * key, most of a snapshot's time).
   */
  liveReader(rev: Revision): (afterKey: string | undefined, max: number) => KeyValue[] {
    const keys = this.order.toArray();
    const slots = this.slots;
    return (afterKey, max) => {
      const out: KeyValue[] = [];
      // The first key after afterKey.
      let i = 0;
      if (afterKey !== undefined) {
        let hi = keys.length;
        while (i < hi) {
          const mid = (i + hi) >>> 1;
          if ((keys[mid] as string) <= afterKey) i = mid + 1;
          else hi = mid;
        }
      }
      for (; i < keys.length && out.length < max; i++) {
        const k = keys[i] as string;
        const h = this.map.get(k);
        if (h === undefined) continue;
        const kv = versionAt(h, rev, k, slots);
        if (kv !== undefined) out.push(kv);
      }
      return out;
    };
  }

  /** Drop every version older than the newest one <= rev; drop tombstones left oldest. */
  compact(rev: Revision): void {
    for (const key of this.compactable) this.compactKey(key, rev);
  }

  /**
   * compact() a step of `step` keys at a time, the event loop served between steps (3M versions
   * held it ~300 ms in one go). Writes in between only add versions newer than `rev`, which
   * compaction keeps; keys they make compactable are visited too (a Set iterates what is added).
   */
  async compactInSteps(rev: Revision, step = 16_384): Promise<void> {
    let n = 0;
    for (const key of this.compactable) {
      this.compactKey(key, rev);
      if (++n % step === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private compactKey(key: string, rev: Revision): void {
    const h = this.map.get(key);
    if (h === undefined) {
      this.compactable.delete(key);
      return;
    }
    let keepFrom = -1;
    for (let i = h.length - 1; i >= 0; i--) {
      if (modOf(h[i] as Entry, this.slots) <= rev) {
        keepFrom = i;
        break;
      }
    }
    if (keepFrom < 0) return;
    const kept = h[keepFrom] as Entry;
    if (typeof kept !== 'number' && isTombstone(kept)) keepFrom++;
    if (keepFrom > 0) {
      const slots = this.slots;
      if (slots !== undefined) for (let i = 0; i < keepFrom; i++) if (typeof h[i] === 'number') slots.drop(h[i] as number);
      h.splice(0, keepFrom);
    }
    if (h.length === 0) {
      this.order.remove(key);
      this.map.delete(key);
      this.compactable.delete(key);
    } else if (h.length === 1 && !isTombstone(h[0] as KeyValue)) {
      this.compactable.delete(key);
    }
  }
}
