/**
 * The watch cache: one per resource, fed by one store change stream over the resource's key
 * prefix. It keeps
 *
 *   - the current state (key → object, in key order: state.ts) at `revision`, for initial events
 *     and resourceVersion="0" / NotOlderThan lists, with its objects counted per namespace and its
 *     undecodable keys remembered as corrupt;
 *   - a history window of events (default 5 minutes: history.ts), so watchers resume from any
 *     resourceVersion inside it; older ones get 410 Gone;
 *   - the watchers, each with a bounded queue (watcher.ts), indexed for the fan-out (watchers.ts);
 *   - indexes of its objects by selector field, built for field-selected lists (object-indexes.ts).
 *
 * Every store event is decoded and encoded once, here; fan-out hands the same event object (and
 * its lazily built JSON line) to every matching watcher. Fan-out never waits: a watcher whose
 * queue is full is terminated ('slow'), and its client resumes from its last resourceVersion.
 *
 *     store ──change stream──▶ WatchCache.apply ──▶ state, history ──▶ watcher queues ──▶ HTTP
 *
 * This file is the core that ties them together: loading the state, following the store, making
 * each change into a CacheEvent once (apply), the counts and corrupt keys, and the cache's public
 * face (lists, watches, metrics). Each other part is a small class the cache owns and calls
 * directly, with no callbacks between them: apply runs for every write in the system, so it
 * reaches each part with a plain method call, nothing allocated or looked up for the call.
 * Imports point one way: the parts import what they hold (events.ts, watcher.ts, the state they
 * read), never this file.
 */
import type { Obj } from '../api/meta';
import { CorruptObjectError, decodeStoredAt, hintText, looksStored, storedTextAt, writtenHint } from '../codec/stored';
import { type HeldValue, PackedKeyValue, PackedValue } from '../store/packed';
import type { ChangeEvent, ChangeStream, KeyValue, KV, RangeResult, Revision } from '../store/types';
import { isStoreError, prefixEnd } from '../store/types';
import { ColdValues } from './cold';
import { CachedObject, CacheEvent, type ObjectFamily, selectorView } from './events';
import { EventHistory } from './history';
import { ObjectIndexes } from './object-indexes';
import { CacheState } from './state';
import { type Selection, Watcher } from './watcher';
import { WatcherSet } from './watchers';

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
  private readonly state = new CacheState();
  /** Objects per namespace key prefix ('' = all): O(1) totals for paged lists. */
  private readonly counts = new Map<string, number>();
  private readonly corrupt = new Set<string>();
  /** This cache's own part of its stateTag (random: no other cache or process shares it). */
  private readonly tag = crypto.randomUUID().slice(0, 13);
  /** The events applied, for watches resuming from a revision (history.ts). */
  private readonly history: EventHistory;
  private rev: Revision = 0;
  /** Events applied since start (the dashboard's events per second; one increment per event). */
  private applied = 0;
  /** Changes of the state: each event applied, each load. */
  private changes = 0;
  private stream: ChangeStream | undefined;
  /** The watchers, indexed for the fan-out of each event (watchers.ts). */
  private readonly watchers: WatcherSet;
  /** The objects' keys by selector field values, for field-selected lists (object-indexes.ts). */
  private readonly objectIndexes = new ObjectIndexes(this.state);
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
    this.watchers = new WatcherSet(prefix);
    this.maxQueue = opts.maxQueue ?? 10_000;
    this.clock = opts.clock ?? Date.now;
    this.history = new EventHistory(
      {
        historyMs: opts.historyMs ?? 5 * 60_000,
        maxHistory: opts.maxHistory ?? 102_400,
        maxHistoryBytes: opts.maxHistoryBytes ?? 64 * 1024 * 1024,
      },
      this.clock,
    );
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
    this.history.reset(r.revision);
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
          this.watchers.endAll('reset');
          this.ready = this.load();
          return;
        }
        this.log(`watch cache ${this.prefix}: stream ended: ${String(e)}`);
        return;
      }
      const now = this.clock();
      for (const ce of batch) this.apply(ce, now);
      this.history.evict(now);
      this.history.releaseLater();
      this.watchers.signalTouched();
    }
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
      const view =
        this.keepParsed || this.watchers.selecting > 0 || this.objectIndexes.size > 0 ? selectorView(obj, this.fields) : undefined;
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

  /** The namespace prefix count() used last. */
  private lastNamespace = '';

  private count(key: string, delta: number): void {
    this.counts.set('', (this.counts.get('') ?? 0) + delta);
    // For namespaced resources the key is <prefix><namespace>/<name>.
    const slash = key.indexOf('/', this.prefix.length);
    if (slash > 0) {
      // The last key's namespace prefix when it is this one's too (writes come in runs in one
      // namespace): a string whose hash the map has, not a new one to hash.
      const last = this.lastNamespace;
      const ns = last.length === slash + 1 && key.startsWith(last) ? last : key.slice(0, slash + 1);
      this.lastNamespace = ns;
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
      if (before && this.objectIndexes.size > 0) this.objectIndexes.update(ce.kv.key, before, undefined);
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
      if (this.objectIndexes.size > 0) this.objectIndexes.update(ce.kv.key, before, put?.c);
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
    this.watchers.offer(e);
  }

  /** The revision the cache state reflects (all changes up to it are applied). */
  get revision(): Revision {
    const pos = this.stream ? this.stream.position - 1 : 0;
    return Math.max(this.rev, pos);
  }

  /** Oldest resourceVersion a watch may start from (events after it are all retained). */
  get oldestResumable(): Revision {
    return this.history.oldest;
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
    return this.watchers.backlog(this.revision);
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
  readonly listsServed = this.objectIndexes.served;

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
    this.objectIndexes.note(index);
  }

  /**
   * The current objects under `keyPrefix` whose selector field `field` has `value`, in key
   * order, read from the field's index (object-indexes.ts: built now, in one pass over the
   * state, if this is the first list by `field`); undefined when the cache already keeps
   * MAX_OBJECT_INDEXES other indexes or most objects have `value` (the caller then filters
   * list()).
   */
  listWhere(keyPrefix: string, field: string, value: string): CachedObject[] | undefined {
    return this.objectIndexes.list(keyPrefix || this.prefix, field, value);
  }

  /**
   * Register a watcher for events after `from`. With `initial`, the current state is returned
   * too (taken in the same tick as the registration, so nothing falls between them).
   * Throws TooOldError if `from` is older than the history window.
   */
  watch(sel: Selection, from: Revision | 'now'): { watcher: Watcher; initial: CachedObject[]; revision: Revision } {
    const w = new Watcher(sel, from === 'now' ? this.rev : from, this.maxQueue, (x) => this.watchers.remove(x));
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
      this.watchers.add(w);
      return { watcher: w, initial, revision };
    }
    if (from < this.history.oldest) throw new TooOldError(from, this.history.oldest);
    // Replay retained events after `from`, then live ones.
    this.watchers.add(w);
    this.history.replay(w, from);
    return { watcher: w, initial: [], revision: this.revision };
  }

  /** A watcher for the changes after now, without the current objects (a follower that needs none of them). */
  watchChanges(sel: Selection): Watcher {
    const w = new Watcher(sel, this.rev, this.maxQueue, (x) => this.watchers.remove(x));
    w.delivered = this.revision;
    this.watchers.add(w);
    return w;
  }

  stop(): void {
    this.stopped = true;
    this.cold?.stop();
    this.history.stop();
    this.stream?.close();
    this.watchers.endAll('closed');
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
