/**
 * The watch cache: one per resource, fed by one store change stream over the resource's key
 * prefix. It keeps
 *
 *   - the current state (key → object, in key order) at `revision`, for initial events and
 *     resourceVersion="0" / NotOlderThan lists;
 *   - a history window of events (default 5 minutes), so watchers resume from any resourceVersion
 *     inside it; older ones get 410 Gone;
 *   - the watchers, each with a bounded queue.
 *
 * Every store event is decoded and encoded once, here; fan-out hands the same event object (and
 * its lazily built JSON line) to every matching watcher. Fan-out never waits: a watcher whose
 * queue is full is terminated ('slow'), and its client resumes from its last resourceVersion.
 *
 *     store ──change stream──▶ WatchCache.apply ──▶ state, history ──▶ watcher queues ──▶ HTTP
 */
import type { Obj } from '../api/meta';
import { CorruptObjectError, decodeStoredAt, hintText, looksStored, storedTextAt, writtenHint } from '../codec/stored';
import { type HeldValue, PackedKeyValue, PackedValue } from '../store/packed';
import type { ChangeEvent, ChangeStream, KeyValue, KV, RangeResult, Revision } from '../store/types';
import { isStoreError, prefixEnd } from '../store/types';
import { ColdValues } from './cold';
import { CachedObject, CacheEvent, type ObjectFamily, selectorView, viewField } from './events';
import { CacheState } from './state';
import { type Selection, type SelectionMemo, Watcher } from './watcher';

/** Fields a watch cache indexes its objects by at most (see WatchCache.listWhere). */
const MAX_OBJECT_INDEXES = 4;

/** Add `v` to the set of `k` in an index (watchers by value, keys by value). */
function addTo<T>(m: Map<string, Set<T>>, k: string, v: T): void {
  let set = m.get(k);
  if (set === undefined) {
    set = new Set();
    m.set(k, set);
  }
  set.add(v);
}

/** Remove `v` from the set of `k`; a set left empty goes. */
function removeFrom<T>(m: Map<string, Set<T>>, k: string, v: T): void {
  const set = m.get(k);
  if (set === undefined) return;
  set.delete(v);
  if (set.size === 0) m.delete(k);
}

/** What an event weighs in the history's byte bound (the stored bytes it keeps alive). */
function eventBytes(e: CacheEvent): number {
  return e.bytes();
}

/**
 * How long an event keeps its parsed object and encoded lines (see CacheEvent): long enough for
 * the fan-out, which takes them at once. It was 10 s: under a burst of writes that kept every
 * object of the last 10 s parsed and as text on the heap (~190k objects, ~600 MB at 19k
 * creates/s), all surviving young collections only to die in full ones. At 100 ms (and
 * HINTS 2048): 60.1 -> 57.4 us of server CPU per create (bench/front-end.ts, 2026-11-26). A
 * watch resuming from further back decodes the stored bytes, as it did past 10 s.
 */
const HOT_MS = 100;

/**
 * How long an event keeps its parsed objects (the largest part of what HOT_MS holds: a tree of
 * objects each, where the text is one string): the fan-out reads them at once, and a reader after
 * this parses the bytes again once (kept until HOT_MS). Held for HOT_MS, with the write hints
 * (src/codec/stored.ts), the object of every create survived a young collection and died in a
 * full one; at 20 ms with 256 hints a create took 38.0-40.1 us in process against 41.9-42.1
 * (bench/in-process.ts, 2026-11-30): 20 ms or 256 hints alone, 40.6-42.1.
 */
const PARSED_MS = 20;

export interface WatchCacheOptions {
  /** How long events are kept for resumption (default 5 minutes). */
  historyMs?: number;
  /** Most events kept regardless of age (bounds memory under write bursts). */
  maxHistory?: number;
  /** Most bytes of events kept (the object's stored bytes and, for updates, the previous version's). */
  maxHistoryBytes?: number;
  /** The kind's selectable fields of an object (field selector name → value), for selector views. */
  selectableFields?: (o: Obj) => Record<string, string> | undefined;
  /** Keep the parsed form of every cached object (kinds the server reads on every request). */
  keepParsed?: boolean;
  /**
   * Objects not written for this long are held packed (compressed), by the cache and by an
   * embedded store holding the same bytes (cold.ts); 0 or absent: never. Not with keepParsed.
   */
  packAfterMs?: number;
  /** A watcher whose undelivered events exceed this is terminated as too slow. */
  maxQueue?: number;
  clock?: () => number;
  log?: (msg: string) => void;
}

export class TooOldError extends Error {
  constructor(
    readonly requested: Revision,
    readonly oldest: Revision,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

export class WatchCache {
  /** Watchers whose selection is not `all` (they match events by views). */
  private selecting = 0;
  private readonly state = new CacheState();
  /** Objects per namespace key prefix ('' = all): O(1) totals for paged lists. */
  private readonly counts = new Map<string, number>();
  private readonly corrupt = new Set<string>();
  /** This cache's own part of its stateTag (random: no other cache or process shares it). */
  private readonly tag = crypto.randomUUID().slice(0, 13);
  /** Events from historyHead on; the slots before it are emptied (undefined) until the next slice. */
  private history: (CacheEvent | undefined)[] = [];
  private historyHead = 0;
  /** History index of the first event not yet released (see HOT_MS). */
  private released = 0;
  /** History index of the first event that may still hold parsed objects (see PARSED_MS). */
  private unparsed = 0;
  /** Events before this revision are not in the history (cache start or eviction). */
  private oldest: Revision = 0;
  private rev: Revision = 0;
  /** Events applied since start (the dashboard's events per second; one increment per event). */
  private applied = 0;
  /** Changes of the state: each event applied, each load. */
  private changes = 0;
  private stream: ChangeStream | undefined;
  private readonly watchers = new Set<Watcher>();
  /**
   * Fan-out: watchers whose selection has an index (Selection.index), by field and value, and
   * the others. An event goes to every unindexed watcher, to the watchers of its namespace and,
   * per indexed field, to the watchers of its object's value and of its previous version's:
   * with 5,000 kubelets each watching its node's pods, a pod's event is offered to one or two of
   * them, not to 5,000.
   */
  private readonly indexed = new Map<string, Map<string, Set<Watcher>>>();
  /** Watchers of one namespace (no field index), by their key prefix `<prefix><namespace>/`. */
  private readonly byNamespace = new Map<string, Set<Watcher>>();
  private readonly unindexed = new Set<Watcher>();
  /** Watchers that got an event in the batch being applied: only they are signalled after it. */
  private readonly touched = new Set<Watcher>();
  /**
   * Objects by the value of a selector field (field → value → keys): built on the first list
   * that selects by that field (listWhere), then kept up to date by every change, so that a
   * kubelet's list of its node's pods reads its own pods, not all of them (the reference's
   * watch cache indexes pods by spec.nodeName). At most MAX_OBJECT_INDEXES fields.
   */
  private readonly objectIndexes = new Map<string, Map<string, Set<string>>>();
  private readonly historyMs: number;
  private readonly maxHistory: number;
  private readonly maxHistoryBytes: number;
  /** Bytes of event text in the history (from historyHead on). */
  private historyBytes = 0;
  private readonly maxQueue: number;
  private readonly clock: () => number;
  private readonly log: (msg: string) => void;
  private stopped = false;
  private ready: Promise<void> | undefined;
  private readonly end: string;
  private readonly fields: ((o: Obj) => Record<string, string> | undefined) | undefined;
  private readonly keepParsed: boolean;
  private readonly cold: ColdValues | undefined;
  /** What the cached objects share: the selectable fields, the cold values. */
  private readonly family: ObjectFamily;

  constructor(
    private readonly kv: KV,
    private readonly prefix: string,
    opts: WatchCacheOptions = {},
  ) {
    this.end = prefixEnd(prefix);
    this.historyMs = opts.historyMs ?? 5 * 60_000;
    this.maxHistory = opts.maxHistory ?? 102_400;
    this.maxHistoryBytes = opts.maxHistoryBytes ?? 64 * 1024 * 1024;
    this.maxQueue = opts.maxQueue ?? 10_000;
    this.clock = opts.clock ?? Date.now;
    this.log = opts.log ?? (() => {});
    this.fields = opts.selectableFields;
    this.keepParsed = opts.keepParsed ?? false;
    const packAfter = opts.packAfterMs ?? 0;
    this.cold = packAfter > 0 && !this.keepParsed ? new ColdValues(packAfter, prefix, this.state, kv, this.clock) : undefined;
    this.family = { fields: this.fields, cold: this.cold };
  }

  /**
   * Load the state and start following the store. Idempotent. `from`: the revision the first
   * caller needs history after (a watch's resourceVersion). A cache starts on first use, so
   * without it the window would begin at that use, and a watch from a revision a client had
   * before (from another replica, or from a write) would be 410 Expired as soon as anything else
   * was written in between: the first load then reads the state at `from` and follows the store
   * from there, when the store still has that revision (else it loads the newest state).
   */
  start(from?: Revision): Promise<void> {
    this.ready ??= this.load(from);
    return this.ready;
  }

  private async load(from?: Revision): Promise<void> {
    let r: RangeResult | undefined;
    if (from !== undefined && from > 0) {
      // Compacted, or a revision the store does not have yet: the newest state instead.
      r = await this.kv.range(this.prefix, { end: this.end, revision: from }).catch(() => undefined);
    }
    r ??= await this.kv.range(this.prefix, { end: this.end });
    this.changes++;
    this.state.clear();
    this.counts.clear();
    this.corrupt.clear();
    this.objectIndexes.clear();
    this.cold?.clear();
    const now = this.clock();
    for (const kv of r.kvs) {
      if (this.keepParsed) this.put(kv);
      else this.putUnparsed(kv);
      this.cold?.written(kv.key, kv.modRevision, now);
    }
    this.rev = r.revision;
    this.oldest = r.revision;
    this.history = [];
    this.historyHead = 0;
    this.historyBytes = 0;
    this.released = 0;
    this.unparsed = 0;
    this.stream = this.kv.watch(r.revision + 1, { key: this.prefix, end: this.end });
    void this.follow(this.stream);
  }

  private async follow(stream: ChangeStream): Promise<void> {
    for (;;) {
      let batch: ChangeEvent[];
      try {
        batch = await stream.next();
      } catch (e) {
        if (this.stopped || this.stream !== stream) return;
        if (isStoreError(e, 'compacted') || isStoreError(e, 'watch-cancelled')) {
          // Fell behind the store's history: relist; watchers must resume (they get 410 if too old).
          this.log(`watch cache ${this.prefix}: ${String(e)}; relisting`);
          for (const w of [...this.watchers]) w.end('reset');
          this.ready = this.load();
          return;
        }
        this.log(`watch cache ${this.prefix}: stream ended: ${String(e)}`);
        return;
      }
      const now = this.clock();
      for (const ce of batch) this.apply(ce, now);
      this.evict(now);
      this.releaseLater();
      for (const w of this.touched) w.signal();
      this.touched.clear();
    }
  }

  private releaseTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Recent events are released (and the history trimmed by age) when the next batch arrives;
   * after the last batch of a burst, a timer does it, or the burst's parsed objects and texts
   * would stay until the resource's next write.
   */
  private releaseLater(): void {
    if (this.releaseTimer !== undefined || this.released >= this.history.length || this.stopped) return;
    const first = this.history[Math.max(this.released, this.historyHead)] as CacheEvent | undefined;
    const wait = first ? Math.max(0, first.at + HOT_MS - this.clock()) + 50 : HOT_MS;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      this.evict(this.clock());
      this.releaseLater();
    }, wait);
    this.releaseTimer.unref();
  }

  /**
   * Insert an object into the state; undecodable ones are remembered as corrupt, not cached.
   * Returns the cached entry and the parsed object with its text (for the event: our own recent
   * writes' come from the write hint, others are decoded once here).
   */
  private put(kv: KeyValue): { c: CachedObject; obj: Obj; text: string } | undefined {
    try {
      const { obj, text } = parsedOf(kv);
      // The view is made when a selector first asks (most objects are never selected by labels
      // or fields): about 200 bytes per object that plain watches and lists never read. While
      // watchers with selectors exist, every change needs it (and the next change its previous
      // version's), so it is made now from the object parsed anyway.
      const view = this.keepParsed || this.selecting > 0 || this.objectIndexes.size > 0 ? selectorView(obj, this.fields) : undefined;
      const c = new CachedObject(kv.key, kv.modRevision, heldOf(kv), view, this.keepParsed ? obj : undefined, this.family);
      if (this.state.set(kv.key, c)) this.count(kv.key, 1);
      if (this.corrupt.size > 0) this.corrupt.delete(kv.key);
      return { c, obj, text };
    } catch (e) {
      if (!(e instanceof CorruptObjectError)) throw e;
      if (this.state.delete(kv.key)) this.count(kv.key, -1);
      this.corrupt.add(kv.key);
      this.log(`watch cache ${this.prefix}: ${e.message}`);
      return undefined;
    }
  }

  /**
   * Insert an object without parsing it (the load at start): its view is made when first asked
   * for. Bytes that are not a stored object at all are remembered as corrupt, as put() does; a
   * value that passes this check and still does not parse is found when it is read.
   */
  private putUnparsed(kv: KeyValue): void {
    const held = heldOf(kv);
    // A packed value was a stored object when it was packed.
    if (!(held instanceof PackedValue) && !looksStored(held)) {
      if (this.state.delete(kv.key)) this.count(kv.key, -1);
      this.corrupt.add(kv.key);
      this.log(`watch cache ${this.prefix}: ${new CorruptObjectError(kv.key, 'not a stored object').message}`);
      return;
    }
    const c = new CachedObject(kv.key, kv.modRevision, held, undefined, undefined, this.family);
    if (this.state.set(kv.key, c)) this.count(kv.key, 1);
    this.corrupt.delete(kv.key);
  }

  /** The current object at `key`, if any. */
  get(key: string): CachedObject | undefined {
    return this.state.get(key);
  }

  private count(key: string, delta: number): void {
    this.counts.set('', (this.counts.get('') ?? 0) + delta);
    // For namespaced resources the key is <prefix><namespace>/<name>.
    const slash = key.indexOf('/', this.prefix.length);
    if (slash > 0) {
      const ns = key.slice(0, slash + 1);
      this.counts.set(ns, (this.counts.get(ns) ?? 0) + delta);
    }
  }

  /** `keyPrefix` as the counts know it ('' the resource, `<prefix><namespace>/`), else undefined. */
  private namespaceOf(keyPrefix: string): string | undefined {
    if (keyPrefix === this.prefix) return '';
    const slash = keyPrefix.indexOf('/', this.prefix.length);
    return keyPrefix.startsWith(this.prefix) && slash === keyPrefix.length - 1 ? keyPrefix : undefined;
  }

  /** Objects under `keyPrefix` ('' = the whole resource) at `revision`, without a scan. */
  size(keyPrefix = ''): number {
    return this.counts.get(keyPrefix === this.prefix ? '' : keyPrefix) ?? 0;
  }

  /** Keys under `keyPrefix` whose stored bytes cannot be decoded. */
  corruptKeys(keyPrefix = ''): string[] {
    const from = keyPrefix || this.prefix;
    return [...this.corrupt].filter((k) => k.startsWith(from));
  }

  private apply(ce: ChangeEvent, at: number): void {
    this.changes++;
    const rv = ce.kv.modRevision;
    let e: CacheEvent;
    if (ce.type === 'delete') {
      this.corrupt.delete(ce.kv.key);
      const before = this.state.get(ce.kv.key);
      // The deleted version: the cached one, else the store's previous value (a cache that
      // started after the object's last write has it cached; this is for corrupt ones).
      let prevValue: HeldValue | undefined = before?.heldValue;
      let prevRv = before?.rv ?? 0;
      let prevView = before?.viewIfMade;
      if (!before && ce.prev) {
        try {
          prevView = selectorView(decodeStoredAt(ce.kv.key, ce.prev.value, ce.prev.modRevision), this.fields);
          prevValue = ce.prev.value;
          prevRv = ce.prev.modRevision;
        } catch {
          prevValue = undefined;
        }
      }
      if (!prevValue) return;
      if (this.state.delete(ce.kv.key)) this.count(ce.kv.key, -1);
      if (before && this.objectIndexes.size > 0) this.indexObject(ce.kv.key, before, undefined);
      e = new CacheEvent(
        'DELETED',
        rv,
        ce.kv.key,
        prevValue,
        prevView,
        undefined,
        undefined,
        prevValue,
        prevRv,
        prevView,
        undefined,
        at,
        this.fields,
      );
    } else {
      // Version 1 is the first put of the key (a create): no previous version to look up.
      const before = ce.kv.version === 1 ? undefined : this.state.get(ce.kv.key);
      const put = this.put(ce.kv);
      if (this.objectIndexes.size > 0) this.indexObject(ce.kv.key, before, put?.c);
      if (!put) return;
      this.cold?.written(ce.kv.key, rv, at);
      e = new CacheEvent(
        before ? 'MODIFIED' : 'ADDED',
        rv,
        ce.kv.key,
        ce.kv.value,
        put.c.viewIfMade,
        put.text,
        put.obj,
        before?.heldValue,
        before?.rv ?? 0,
        before?.viewIfMade,
        undefined,
        at,
        this.fields,
      );
    }
    this.rev = rv;
    this.applied++;
    this.history.push(e);
    this.historyBytes += eventBytes(e);
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

  private evict(now: number): void {
    // Events past HOT_MS keep only their bytes (CacheEvent); past PARSED_MS, no parsed objects.
    let r = Math.max(this.released, this.historyHead);
    while (r < this.history.length && now - (this.history[r] as CacheEvent).at > HOT_MS) (this.history[r++] as CacheEvent).release();
    this.released = r;
    let q = Math.max(this.unparsed, r);
    while (q < this.history.length && now - (this.history[q] as CacheEvent).at > PARSED_MS) (this.history[q++] as CacheEvent).dropParsed();
    this.unparsed = q;
    let h = this.historyHead;
    const size = this.history.length - h;
    let drop = Math.max(0, size - this.maxHistory);
    let bytes = this.historyBytes;
    for (let i = h; i < h + drop; i++) bytes -= eventBytes(this.history[i] as CacheEvent);
    // Past the byte bound the oldest go too (the newest event always stays).
    while (h + drop < this.history.length - 1 && bytes > this.maxHistoryBytes) bytes -= eventBytes(this.history[h + drop++] as CacheEvent);
    while (h + drop < this.history.length && now - (this.history[h + drop] as CacheEvent).at > this.historyMs)
      bytes -= eventBytes(this.history[h + drop++] as CacheEvent);
    this.historyBytes = bytes;
    if (drop === 0) return;
    this.oldest = (this.history[h + drop - 1] as CacheEvent).rv;
    // Dropped events leave the array now, not when it is next sliced: until then they would keep
    // their bytes, and their parsed forms too when the bounds drop them before HOT_MS.
    for (let i = h; i < h + drop; i++) this.history[i] = undefined;
    h += drop;
    if (h > 4096 && h > this.history.length / 2) {
      this.history = this.history.slice(h);
      this.released = Math.max(0, this.released - h);
      this.unparsed = Math.max(0, this.unparsed - h);
      h = 0;
    }
    this.historyHead = h;
  }

  /** The revision the cache state reflects (all changes up to it are applied). */
  get revision(): Revision {
    const pos = this.stream ? this.stream.position - 1 : 0;
    return Math.max(this.rev, pos);
  }

  /** Oldest resourceVersion a watch may start from (events after it are all retained). */
  get oldestResumable(): Revision {
    return this.oldest;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Whether something has started the cache (it loads on first use). */
  get started(): boolean {
    return this.ready !== undefined;
  }

  /**
   * Which state the cache holds: the same number for the same state (a memo key of lists), a new
   * one after any change (an event, a load), whatever the revision does. A store's progress
   * notifications move the revision alone, and some etcd versions send one before the events it
   * covers (see ResourceStore.list).
   */
  get stateGeneration(): number {
    return this.changes;
  }

  /** Events applied since the cache started. */
  get eventsApplied(): number {
    return this.applied;
  }

  /**
   * The watcher furthest behind, computed when asked (nothing is kept for it): the most events
   * queued for one watcher, and the most revisions between the cache and a watcher's last
   * delivered event among watchers with events queued.
   */
  backlog(): { maxQueued: number; maxLagRevisions: number } {
    let maxQueued = 0;
    let maxLag = 0;
    const rev = this.revision;
    for (const w of this.watchers) {
      const q = w.pending;
      if (q === 0) continue;
      if (q > maxQueued) maxQueued = q;
      if (rev - w.delivered > maxLag) maxLag = rev - w.delivered;
    }
    return { maxQueued, maxLagRevisions: maxLag };
  }

  /** Wait until the cache reflects at least `rv` (false on timeout). */
  async waitFresh(rv: Revision, timeoutMs: number): Promise<boolean> {
    await this.start();
    const deadline = this.clock() + timeoutMs;
    let asked = 0;
    while (this.revision < rv) {
      if (this.clock() >= deadline) return false;
      // A shared store (etcd) tells a stream its progress when asked: every 50 ms while waiting.
      if (this.clock() - asked >= 50) {
        asked = this.clock();
        this.stream?.progress?.();
      }
      await Bun.sleep(1);
    }
    return true;
  }

  /**
   * Current objects (in key order) under `keyPrefix` ('' = all), at `revision`; the first
   * `limit` of them when `limit` > 0 (a page costs its own size, not the resource's).
   */
  list(keyPrefix = '', limit = 0): CachedObject[] {
    const from = keyPrefix || this.prefix;
    // Nothing under the resource or the namespace: no walk of the tree. The controllers list
    // their kinds in a pod's namespace on each of its events (ReplicaSets, Jobs, Services, PDBs,
    // ...), mostly none there: ~3% of the server's main thread at 1,000 simulated pods a second.
    if (this.size(this.namespaceOf(from) ?? '') === 0) return [];
    const to = prefixEnd(from);
    return this.state.range(from, to, limit);
  }

  /**
   * A page of current objects: from `fromKey` (inclusive) to the end of `keyPrefix`'s range ('' =
   * all), in key order, at most `limit` of them.
   */
  listFrom(fromKey: string, keyPrefix: string, limit: number): CachedObject[] {
    return this.state.range(fromKey, prefixEnd(keyPrefix || this.prefix), limit);
  }

  /**
   * A name of the state the cache holds that no other state shares, in this process or any other
   * (stateGeneration with this cache's own random tag): a continue token of a page read from the
   * cache carries it, and the next page is read from the cache while it is unchanged.
   */
  get stateTag(): string {
    return `${this.tag}.${this.changes}`;
  }

  /** Lists served from the cache, by the index they read ('' none, `f:<field>` a field's). */
  readonly listsServed = new Map<string, number>();

  /**
   * Objects held packed now (a walk of the state) and values this cache has packed so far, or
   * undefined when it packs none (the svc_watch_cache_packed_* metrics: how cold a list was).
   */
  packedStats(): { now: number; total: number } | undefined {
    if (this.cold === undefined) return undefined;
    let now = 0;
    this.state.forEach((_k, c) => {
      if (c.rawIfHeld === undefined) now++;
    });
    return { now, total: this.cold.packed };
  }

  /** Count a list served from the cache (apiserver_cache_list_total). */
  noteList(index: string): void {
    this.listsServed.set(index, (this.listsServed.get(index) ?? 0) + 1);
  }

  /**
   * The current objects under `keyPrefix` whose selector field `field` has `value`, in key
   * order, read from the field's index (built now, in one pass over the state, if this is the
   * first list by `field`); undefined when the cache already keeps MAX_OBJECT_INDEXES other
   * indexes or most objects have `value` (the caller then filters list()).
   */
  listWhere(keyPrefix: string, field: string, value: string): CachedObject[] | undefined {
    let byValue = this.objectIndexes.get(field);
    if (byValue === undefined) {
      if (this.objectIndexes.size >= MAX_OBJECT_INDEXES) return undefined;
      byValue = new Map();
      this.state.forEach((key, c) => {
        addTo(byValue as Map<string, Set<string>>, viewField(c.view, field), key);
      });
      this.objectIndexes.set(field, byValue);
    }
    const keys = byValue.get(value);
    if (keys === undefined) return [];
    // A value most objects have (the unscheduled pods of a large cluster) is cheaper to filter
    // the state for (in key order already) than to sort the index's keys for.
    if (keys.size > 1024 && keys.size * 8 > this.state.size) return undefined;
    const from = keyPrefix || this.prefix;
    const out: CachedObject[] = [];
    for (const k of [...keys].sort()) {
      if (!k.startsWith(from)) continue;
      const c = this.state.get(k);
      if (c !== undefined) out.push(c);
    }
    return out;
  }

  /** Move `key` in the object indexes from `before`'s values to `after`'s (either absent). */
  private indexObject(key: string, before: CachedObject | undefined, after: CachedObject | undefined): void {
    for (const [field, byValue] of this.objectIndexes) {
      const was = before === undefined ? undefined : viewField(before.view, field);
      const now = after === undefined ? undefined : viewField(after.view, field);
      if (was === now) continue;
      if (was !== undefined) removeFrom(byValue, was, key);
      if (now !== undefined) addTo(byValue, now, key);
    }
  }

  /**
   * Register a watcher for events after `from`. With `initial`, the current state is returned
   * too (taken in the same tick as the registration, so nothing falls between them).
   * Throws TooOldError if `from` is older than the history window.
   */
  watch(sel: Selection, from: Revision | 'now'): { watcher: Watcher; initial: CachedObject[]; revision: Revision } {
    const w = new Watcher(sel, from === 'now' ? this.rev : from, this.maxQueue, (x) => this.removeWatcher(x));
    if (from === 'now') {
      const ix = sel.index;
      // A follower of every object (the controllers', `all` with no prefix) takes them in no
      // particular order: a dozen of them starting at once on 100k pods walked the keys' order
      // 11-15 ms each, in one turn.
      const everything = sel.all === true && sel.keyPrefix === '';
      const listed = everything ? this.state.all() : (ix && this.listWhere(sel.keyPrefix, ix.field, ix.value)) || this.list(sel.keyPrefix);
      const initial = sel.all === true ? listed : listed.filter((c) => sel.match(c.view));
      const revision = this.revision;
      w.delivered = revision;
      this.addWatcher(w);
      return { watcher: w, initial, revision };
    }
    if (from < this.oldest) throw new TooOldError(from, this.oldest);
    // Replay retained events after `from`, then live ones.
    this.addWatcher(w);
    for (let i = this.historyHead; i < this.history.length; i++) {
      const e = this.history[i] as CacheEvent;
      if (e.rv > from) w.offer(e);
    }
    return { watcher: w, initial: [], revision: this.revision };
  }

  /** A watcher for the changes after now, without the current objects (a follower that needs none of them). */
  watchChanges(sel: Selection): Watcher {
    const w = new Watcher(sel, this.rev, this.maxQueue, (x) => this.removeWatcher(x));
    w.delivered = this.revision;
    this.addWatcher(w);
    return w;
  }

  /** Whether `keyPrefix` is one namespace's (`<prefix><namespace>/`), which byNamespace indexes. */
  private isNamespacePrefix(keyPrefix: string): boolean {
    return (
      keyPrefix.length > this.prefix.length &&
      keyPrefix.startsWith(this.prefix) &&
      keyPrefix.indexOf('/', this.prefix.length) === keyPrefix.length - 1
    );
  }

  private addWatcher(w: Watcher): void {
    this.watchers.add(w);
    if (w.sel.all !== true) this.selecting++;
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

  private removeWatcher(w: Watcher): void {
    if (!this.watchers.delete(w)) return;
    if (w.sel.all !== true) this.selecting--;
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

  stop(): void {
    this.stopped = true;
    this.cold?.stop();
    clearTimeout(this.releaseTimer);
    this.stream?.close();
    for (const w of [...this.watchers]) w.end('closed');
  }
}

/** A version's value as a holder keeps it: packed when the store holds it packed, without inflating it. */
function heldOf(kv: KeyValue): HeldValue {
  return kv instanceof PackedKeyValue ? kv.packed : kv.value;
}

/** The object and text of a stored value: our own recent write's from its hint, else decoded. */
function parsedOf(kv: KeyValue): { obj: Obj; text: string } {
  const value = kv.value;
  const hint = writtenHint(value);
  if (!hint) {
    const text = storedTextAt(kv.key, value, kv.modRevision);
    return { obj: JSON.parse(text) as Obj, text };
  }
  // Our own write: its object, with a metadata of the cache's own carrying the revision.
  const rv = String(kv.modRevision);
  const o = hint.obj;
  const obj = { ...o, metadata: { ...o.metadata, resourceVersion: rv } } as Obj;
  return { obj, text: hintText(hint, rv) };
}
