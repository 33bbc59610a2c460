/**
 * A set of string keys read in order, for the two ordered indexes of a write: the store's
 * (src/store/key-index.ts) and the watch cache's (src/watch/state.ts). Each keeps its values in
 * a hash map; this holds only the order.
 *
 * The order is a sorted array of keys (`base`) and the keys added since, unsorted (`added`): a
 * new key costs a Set insertion, and the array is rebuilt by one merge once the additions (or the
 * removals, remembered in `gone` and skipped) reach half of it. (A quarter, as before 2026-11-30:
 * 250,000 random keys added 0.79-0.95 us a key against 0.55-0.68 at half, a read of 500 keys
 * every 1,000 additions 0.46-0.54 ms against 0.70-0.90 ms, a first full read 45 against 51-61 ms;
 * every create adds a key to two of these.) The additions are sorted
 * when a read needs them: those since the last read sorted alone and merged into the sorted ones
 * (a read during a stream of creates, each chunk of a snapshot of 200,000 keys, sorted all of
 * up to 50,000 additions again: 46% of the server's thread while the snapshot ran).
 *
 * A B+ tree (sorted-btree) cost a descent of string compares on every new key (~17 of keys
 * sharing a long prefix, `/registry/pods/<ns>/`, at 150,000 pods), most of them cache misses in a
 * large heap: with both trees left out, a create took 16-21 us less of the server's CPU, and with
 * this in the watch cache alone 8-20 us less (bench/in-process.ts, 2026-11-28).
 *
 * The caller tells what changed: add() only keys not held, remove() only keys held.
 *
 * Memory: besides the keys held, at most MIN_PENDING plus as many keys as `added` holds wait in
 * `fresh`, and half of `base` in `gone`, whether anything reads the order or not.
 */

/** Additions (or removals) kept up to at least this many before a rebuild (then half of base). */
const MIN_PENDING = 4096;

/** The first index of `keys` (sorted) whose key is >= `key`. */
function lowerBound(keys: string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class OrderedKeys {
  /** Sorted keys as of the last rebuild (some may be in `gone`). */
  private base: string[] = [];
  /** Keys of `base` removed since the rebuild (and not added again). */
  private readonly gone = new Set<string>();
  /** Keys added since the rebuild, not in `base`. */
  private readonly added = new Set<string>();
  /**
   * `added` sorted as of the last read that needed it: since then, the keys in `fresh` were added
   * and `removedSince` of them removed (a key removed may be here still, a key added again may be
   * in both).
   */
  private addedSorted: string[] = [];
  private fresh: string[] = [];
  private removedSince = 0;

  /** `key` is not held. */
  add(key: string): void {
    // A key of base removed and added again is in base once more.
    if (this.gone.delete(key)) return;
    // Keys that come in order (a restart's snapshot, a cache's first list) go straight to base.
    const base = this.base;
    if (this.added.size === 0 && (base.length === 0 || key > (base[base.length - 1] as string))) {
      base.push(key);
      return;
    }
    this.added.add(key);
    this.fresh.push(key);
    if (this.added.size > Math.max(MIN_PENDING, this.base.length >>> 1)) this.rebuild();
    // Keys added and removed again between reads (short-lived objects: events, pods of a churn)
    // leave `added` as small as it was but stay in `fresh`, which without reads would grow
    // forever; merged once it outgrows the additions it stands for (amortized: a merge takes at
    // most as many keys again as it holds).
    else if (this.fresh.length > MIN_PENDING + this.added.size) this.sortedAdded();
  }

  /** `key` is held. */
  remove(key: string): void {
    if (this.added.delete(key)) {
      this.removedSince++;
      return;
    }
    this.gone.add(key);
    if (this.gone.size > Math.max(MIN_PENDING, this.base.length >>> 1)) this.rebuild();
  }

  /** Keys remembered besides the sorted base: additions as added, removed ones, read order (for tests). */
  pendingKeys(): number {
    return this.gone.size + this.added.size + this.addedSorted.length + this.fresh.length;
  }

  clear(): void {
    this.base = [];
    this.gone.clear();
    this.added.clear();
    this.addedSorted = [];
    this.fresh = [];
    this.removedSince = 0;
  }

  /**
   * `visit` on the keys in [from, to) in order (`to` undefined: no upper bound) until it returns
   * false. The visitor must not add or remove keys.
   */
  each(from: string, to: string | undefined, visit: (key: string) => boolean): void {
    const base = this.base;
    const added = this.sortedAdded();
    const gone = this.gone;
    let i = lowerBound(base, from);
    let j = lowerBound(added, from);
    for (;;) {
      // The smaller of the two heads (a key is never in both).
      let key: string;
      if (i < base.length && (j >= added.length || (base[i] as string) < (added[j] as string))) {
        key = base[i++] as string;
        if (to !== undefined && key >= to) return;
        if (gone.size > 0 && gone.has(key)) continue;
      } else if (j < added.length) {
        key = added[j++] as string;
        if (to !== undefined && key >= to) return;
      } else return;
      if (!visit(key)) return;
    }
  }

  /** Every key, in order (a new array). */
  toArray(): string[] {
    const out: string[] = [];
    this.each('', undefined, (k) => {
      out.push(k);
      return true;
    });
    return out;
  }

  /** `added` in order: the sorted keys of the last read, merged with those added since (sorted alone). */
  private sortedAdded(): string[] {
    if (this.fresh.length === 0 && this.removedSince === 0) return this.addedSorted;
    const added = this.added;
    const old = this.addedSorted;
    // Code-unit order, as `<` compares (the default sort compares the same way).
    const fresh = this.fresh.sort();
    const checkOld = this.removedSince > 0;
    const out = new Array<string>(added.size);
    let n = 0;
    let i = 0;
    let j = 0;
    let last: string | undefined;
    while (i < old.length || j < fresh.length) {
      let key: string;
      if (i < old.length && (j >= fresh.length || (old[i] as string) <= (fresh[j] as string))) {
        key = old[i++] as string;
        if (checkOld && !added.has(key)) continue;
      } else {
        // Added since, and perhaps removed again (or added, removed and added: here twice).
        key = fresh[j++] as string;
        if (!added.has(key)) continue;
      }
      if (key === last) continue;
      out[n++] = key;
      last = key;
    }
    out.length = n;
    this.addedSorted = out;
    this.fresh = [];
    this.removedSince = 0;
    return out;
  }

  /** base := base without `gone`, merged with `added`. */
  private rebuild(): void {
    const base = this.base;
    const added = this.sortedAdded();
    const gone = this.gone;
    const next = new Array<string>(base.length - gone.size + added.length);
    let n = 0;
    let i = 0;
    let j = 0;
    while (i < base.length || j < added.length) {
      if (i < base.length && (j >= added.length || (base[i] as string) < (added[j] as string))) {
        const k = base[i++] as string;
        if (gone.size === 0 || !gone.has(k)) next[n++] = k;
      } else next[n++] = added[j++] as string;
    }
    next.length = n;
    this.base = next;
    this.gone.clear();
    this.added.clear();
    this.addedSorted = [];
    this.fresh = [];
    this.removedSince = 0;
  }
}
