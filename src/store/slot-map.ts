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
export class SlotMap<V> {
  private readonly index = new Map<string, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly free: number[] = [];

  get size(): number {
    return this.index.size;
  }

  get(key: string): V | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.slots[i];
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  /** Set `key` to `value`; true when the key was not there. */
  set(key: string, value: V): boolean {
    const i = this.index.get(key);
    if (i !== undefined) {
      this.slots[i] = value;
      return false;
    }
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.slots.length;
    this.slots[slot] = value;
    this.index.set(key, slot);
    return true;
  }

  /** Set `key`, which the caller knows is not held, to `value` (one lookup less than set()). */
  insert(key: string, value: V): void {
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.slots.length;
    this.slots[slot] = value;
    this.index.set(key, slot);
  }

  /** Remove `key`; true when it was there. */
  delete(key: string): boolean {
    const i = this.index.get(key);
    if (i === undefined) return false;
    this.index.delete(key);
    this.slots[i] = undefined;
    this.free.push(i);
    return true;
  }

  clear(): void {
    this.index.clear();
    this.slots.length = 0;
    this.free.length = 0;
  }

  /** `f` on every key and value, in the order the keys were first set (as a Map's). */
  forEach(f: (value: V, key: string) => void): void {
    const slots = this.slots;
    for (const [k, i] of this.index) f(slots[i] as V, k);
  }

  /** Every value, in no particular order. */
  values(): V[] {
    const out: V[] = new Array(this.index.size);
    const slots = this.slots;
    let n = 0;
    for (const i of this.index.values()) out[n++] = slots[i] as V;
    return out;
  }
}
