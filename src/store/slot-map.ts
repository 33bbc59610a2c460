/**
 * A map from string keys to objects, held as a Map from key to slot number and an array of the
 * slots: what the store's key index and the watch cache keep their (hundreds of thousands of)
 * entries in.
 *
 * Why: JavaScriptCore's young collections grow costly when a large, old Map keeps receiving new
 * entries whose values are objects. A scratch script (2026-11-30, this machine): a Map of 400,000
 * entries made old by a full collection, then 1,000,000 operations each parsing ~300 bytes of JSON
 * (garbage) and adding an entry: 1.40-1.50 us an operation with the object as the Map's value
 * (young collections of 99, 307, then 1,143 ms) against 0.39-0.40 us with the slot number as the
 * value and the object in an array; 0.45-0.50 us parsing alone. A Map whose values are numbers, or
 * an old array receiving new objects, showed no such cost.
 *
 * Slots of deleted keys are reused; the array never shrinks below the most keys held at once.
 */
/** Slots per chunk of the slot array (a power of two). */
const CHUNK_BITS = 10;
const CHUNK_MASK = (1 << CHUNK_BITS) - 1;
/** New keys held apart until this many, then moved into the old index at once. */
const YOUNG_KEYS = 16_384;

export class SlotMap<V> {
  /** Keys set since the last move, and all older ones: every key is in exactly one. */
  private young = new Map<string, number>();
  private readonly old = new Map<string, number>();
  private readonly chunks: (V | undefined)[][] = [];
  private slotCount = 0;
  private readonly free: number[] = [];

  /** `youngKeys`: new keys held apart until this many (tests make it small). */
  constructor(private readonly youngKeys = YOUNG_KEYS) {}

  get size(): number {
    return this.young.size + this.old.size;
  }

  private slotOf(key: string): number | undefined {
    const i = this.young.get(key);
    return i !== undefined ? i : this.old.get(key);
  }

  private at(i: number): V | undefined {
    return (this.chunks[i >>> CHUNK_BITS] as (V | undefined)[])[i & CHUNK_MASK];
  }

  private put(i: number, value: V | undefined): void {
    (this.chunks[i >>> CHUNK_BITS] as (V | undefined)[])[i & CHUNK_MASK] = value;
  }

  get(key: string): V | undefined {
    const i = this.slotOf(key);
    return i === undefined ? undefined : this.at(i);
  }

  has(key: string): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  /** Set `key` to `value`; true when the key was not there. */
  set(key: string, value: V): boolean {
    const i = this.slotOf(key);
    if (i !== undefined) {
      this.put(i, value);
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
      if ((slot & CHUNK_MASK) === 0) this.chunks.push([]);
    }
    this.put(slot, value);
    this.young.set(key, slot);
    if (this.young.size >= this.youngKeys) {
      for (const [k, i] of this.young) this.old.set(k, i);
      this.young = new Map();
    }
  }

  /** Remove `key`; true when it was there. */
  delete(key: string): boolean {
    let i = this.young.get(key);
    if (i !== undefined) this.young.delete(key);
    else {
      i = this.old.get(key);
      if (i === undefined) return false;
      this.old.delete(key);
    }
    this.put(i, undefined);
    this.free.push(i);
    return true;
  }

  clear(): void {
    this.young = new Map();
    this.old.clear();
    this.chunks.length = 0;
    this.slotCount = 0;
    this.free.length = 0;
  }

  /** `f` on every key and value, in the order the keys were first set (as a Map's). */
  forEach(f: (value: V, key: string) => void): void {
    for (const [k, i] of this.old) f(this.at(i) as V, k);
    for (const [k, i] of this.young) f(this.at(i) as V, k);
  }

  /** Every value, in no particular order. */
  values(): V[] {
    const out: V[] = new Array(this.size);
    let n = 0;
    for (const i of this.old.values()) out[n++] = this.at(i) as V;
    for (const i of this.young.values()) out[n++] = this.at(i) as V;
    return out;
  }
}
