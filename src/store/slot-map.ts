/**
 * A map from string keys to objects, held as an open-addressing hash table of (hash, slot) pairs
 * in an Int32Array and two chunked arrays of slots (the keys, the values): what the store's key
 * index and the watch cache keep their (hundreds of thousands of) entries in.
 *
 * Why not a Map: the garbage collector and the misses.
 * - JavaScriptCore's young collections grow costly when a large, old Map keeps receiving new
 *   entries (every create adds a new key): a scratch script (2026-11-30, this machine), a Map of
 *   400,000 entries made old by a full collection, then 1,000,000 operations each parsing ~300
 *   bytes of JSON and adding an entry: 1.40-1.50 us an operation with the object as the Map's value
 *   against 0.39-0.40 us with a slot number as the value and the object in an array. Here the
 *   table is a typed array the collector never scans, and the slot arrays come in chunks of 1,024,
 *   so an old chunk written again (a slot reused) is a small one to rescan.
 * - A create looks its new key up first in a large table, a miss whose cache misses dominate under
 *   load: a Map's miss reads the bucket, the chained entry, its key string and that string's
 *   characters, one cache miss after another; here the hashes sit in the table, so a miss reads
 *   one line of it. A scratch script (2026-11-30, 250,000 keys, 2 MB of memory touched between
 *   operations as a server's requests do): a create's lookups and inserts in the key index and the
 *   watch cache 2.8 us with Maps (a young one beside the old, moved into it 16,384 keys at a time)
 *   against 1.3 us here; a hit the same, 2.0-2.2 us.
 *
 * The hash is FNV-1a over the key's UTF-16 units from a per-process random seed (names are
 * clients' input: a fixed function would let one choose colliding names), kept for the last key
 * hashed by any table (a create looks the same key string up several times, in the key index,
 * the keys' order and the watch cache). Linear probing at a load of at
 * most a half (the table halves when it falls under an eighth); a delete shifts the entries after
 * it back (no tombstones). Slots of deleted keys are reused; the slot arrays never shrink below the
 * most keys held at once.
 */
/** Slots per chunk of the slot arrays (a power of two). */
const CHUNK_BITS = 10;
const CHUNK_MASK = (1 << CHUNK_BITS) - 1;
/** Pairs of the smallest table. */
const MIN_PAIRS = 256;
const SEED = crypto.getRandomValues(new Uint32Array(1))[0] as number;

/** The last key hashed, by any table (a create's key goes through several) and its hash. */
let lastKey: string | undefined;
let lastHash = 0;

function hashOf(s: string): number {
  if (s === lastKey) return lastHash;
  let h = (0x811c9dc5 ^ SEED) | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  // The table indexes by the low bits: mix the high ones in.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  lastKey = s;
  lastHash = h ^ (h >>> 13);
  return lastHash;
}

export class SlotMap<V> {
  /** Pairs (hash, slot + 1); a zero second half is an empty pair. */
  private table = new Int32Array(MIN_PAIRS * 2);
  private mask = MIN_PAIRS - 1;
  private count = 0;
  private readonly keyChunks: (string | undefined)[][] = [];
  private readonly chunks: (V | undefined)[][] = [];
  private slotCount = 0;
  private readonly free: number[] = [];

  get size(): number {
    return this.count;
  }

  private hash(key: string): number {
    return hashOf(key);
  }

  private keyAt(i: number): string | undefined {
    return (this.keyChunks[i >>> CHUNK_BITS] as (string | undefined)[])[i & CHUNK_MASK];
  }

  private at(i: number): V | undefined {
    return (this.chunks[i >>> CHUNK_BITS] as (V | undefined)[])[i & CHUNK_MASK];
  }

  private put(i: number, key: string | undefined, value: V | undefined): void {
    (this.keyChunks[i >>> CHUNK_BITS] as (string | undefined)[])[i & CHUNK_MASK] = key;
    (this.chunks[i >>> CHUNK_BITS] as (V | undefined)[])[i & CHUNK_MASK] = value;
  }

  /** The pair holding `key`, or -1. */
  private find(key: string): number {
    const h = this.hash(key);
    const t = this.table;
    const m = this.mask;
    let i = h & m;
    for (;;) {
      const s = t[2 * i + 1] as number;
      if (s === 0) return -1;
      if (t[2 * i] === h && this.keyAt(s - 1) === key) return i;
      i = (i + 1) & m;
    }
  }

  get(key: string): V | undefined {
    const i = this.find(key);
    return i < 0 ? undefined : this.at((this.table[2 * i + 1] as number) - 1);
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  /** Set `key` to `value`; true when the key was not there. */
  set(key: string, value: V): boolean {
    const i = this.find(key);
    if (i >= 0) {
      const slot = (this.table[2 * i + 1] as number) - 1;
      (this.chunks[slot >>> CHUNK_BITS] as (V | undefined)[])[slot & CHUNK_MASK] = value;
      return false;
    }
    this.insert(key, value);
    return true;
  }

  /** Set `key`, which the caller knows is not held, to `value` (one lookup less than set()). */
  insert(key: string, value: V): void {
    let slot: number;
    if (this.free.length > 0) slot = this.free.pop() as number;
    else {
      slot = this.slotCount++;
      if ((slot & CHUNK_MASK) === 0) {
        this.keyChunks.push([]);
        this.chunks.push([]);
      }
    }
    this.put(slot, key, value);
    if (++this.count * 2 > this.mask + 1) this.resize((this.mask + 1) * 2);
    this.place(this.hash(key), slot + 1);
  }

  private place(h: number, s: number): void {
    const t = this.table;
    const m = this.mask;
    let i = h & m;
    while (t[2 * i + 1] !== 0) i = (i + 1) & m;
    t[2 * i] = h;
    t[2 * i + 1] = s;
  }

  private resize(pairs: number): void {
    const old = this.table;
    this.table = new Int32Array(pairs * 2);
    this.mask = pairs - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.place(old[i] as number, old[i + 1] as number);
  }

  /** Remove `key`; true when it was there. */
  delete(key: string): boolean {
    let i = this.find(key);
    if (i < 0) return false;
    const t = this.table;
    const m = this.mask;
    const slot = (t[2 * i + 1] as number) - 1;
    this.put(slot, undefined, undefined);
    this.free.push(slot);
    this.count--;
    // Shift back each following entry of the run that may no longer be reached past the hole:
    // one whose home (its hash's pair) is not cyclically within (hole, its place].
    let j = i;
    for (;;) {
      j = (j + 1) & m;
      const s = t[2 * j + 1] as number;
      if (s === 0) break;
      const home = (t[2 * j] as number) & m;
      if (i <= j ? i < home && home <= j : i < home || home <= j) continue;
      t[2 * i] = t[2 * j] as number;
      t[2 * i + 1] = s;
      i = j;
    }
    t[2 * i] = 0;
    t[2 * i + 1] = 0;
    // A table left mostly empty by deletes shrinks (at an eighth: growth at a half, so no key
    // count makes it grow and shrink in turn).
    if (m + 1 > MIN_PAIRS && this.count * 8 < m + 1) this.resize((m + 1) / 2);
    return true;
  }

  /** Remove every key; the table keeps its size (a set of additions cleared and filled again). */
  clear(): void {
    this.table.fill(0);
    this.count = 0;
    this.keyChunks.length = 0;
    this.chunks.length = 0;
    this.slotCount = 0;
    this.free.length = 0;
  }

  /** `f` on every key and value, in no particular order (their slots'). */
  forEach(f: (value: V, key: string) => void): void {
    for (let i = 0; i < this.slotCount; i++) {
      const k = this.keyAt(i);
      if (k !== undefined) f(this.at(i) as V, k);
    }
  }

  /** Every value, in no particular order (their slots'). */
  values(): V[] {
    const out: V[] = new Array(this.count);
    let n = 0;
    for (let i = 0; i < this.slotCount; i++) if (this.keyAt(i) !== undefined) out[n++] = this.at(i) as V;
    return out;
  }
}
