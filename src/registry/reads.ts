/**
 * The read side of a resource's store, and what every verb of the store stands on: the
 * resource's keys, its storage (the store, decorated by the resource's watch cache) and the
 * translation of store errors into Status errors. The verbs here are get, list (from the watch
 * cache when it can answer, else pages of the store, with continue tokens and selectors) and
 * watch.
 *
 * ResourceReads is the first class of ResourceStore's chain (see generic.ts): every write reads
 * the current object or list first and translates its store errors in the same way, so the
 * classes of the writes extend this one. It knows nothing of them.
 */

import type { Obj } from '../api/meta';
import { matchesFields, matchesLabels } from '../api/selectors';
import {
  alreadyExists,
  badRequest,
  conflict,
  continueExpired,
  internal,
  LIST_EXPIRED,
  methodNotAllowed,
  notFound,
  resourceExpired,
  STALE_OBJECT,
  StatusError,
  type Target,
  tooLargeResourceVersion,
} from '../api/status';
import type { StoredObject } from '../codec/media';
import { CorruptObjectError, decodeStored, storedObject } from '../codec/stored';
import { isStoreError, type KeyValue, type KV, prefixEnd, type Revision } from '../store/types';
import type { WatchCache } from '../watch/cache';
import { viewField } from '../watch/events';
import type { ResourceStorage } from '../watch/storage';
import { pageFromCache } from './cache-pages';
import { type KindDef, keyPrefix } from './kind';
import {
  CONSISTENT_LIST_WAIT_MS,
  type ContinueToken,
  decodeContinue,
  encodeContinue,
  encodeContinueToken,
  type ListResult,
  parseResourceVersion,
} from './list';
import type { ListOptions, RegistryOptions } from './options';
import { unavailableStatus } from './storage-errors';
import { startWatch, type WatchRequest, type WatchStart } from './watch';

/** The part of a store's deps (ResourceStoreDeps, creating.ts) the read side is built from. */
export interface ReadDeps {
  /** The store, decorated by the resource's watch cache (lists from memory, every watch). */
  storage: ResourceStorage;
  options?: RegistryOptions;
}

export class ResourceReads {
  readonly target: Target;
  readonly prefix: string;
  /** The resource's watch cache (serves "Any"/"not older than" and consistent lists, and watches). */
  readonly cache: WatchCache | undefined;
  protected readonly kv: KV;
  protected readonly clock: () => number;
  private readonly futureWait: number;
  private readonly continueTtl: number;

  constructor(
    readonly def: KindDef,
    d: ReadDeps,
  ) {
    this.target = { group: def.group, resource: def.plural };
    this.prefix = keyPrefix(def);
    this.kv = d.storage.kv;
    this.cache = d.storage.cache;
    const opts = d.options ?? {};
    this.clock = opts.clock ?? Date.now;
    this.futureWait = opts.futureRevisionWait ?? 3000;
    this.continueTtl = opts.continueTtlMs ?? 5 * 60_000;
  }

  key(namespace: string, name: string): string {
    return this.def.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  /** The key range of a list: one namespace, or all of them. */
  private range(namespace: string): [string, string] {
    const start = this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
    return [start, prefixEnd(start)];
  }

  /**
   * The object, newest by default. `at` reads it as it was at that revision (the newest version
   * at or below it; 404 when it did not exist then; 410 when the revision is compacted): a
   * lagging cache's answer, which a stale-read fault serves. With both, the later of `at` and
   * resourceVersion is read (a cache asked for a newer one waits until it has it).
   */
  async get(namespace: string, name: string, resourceVersion = '', at?: Revision): Promise<KeyValue> {
    let revision: Revision | undefined = at;
    if (resourceVersion !== '' && resourceVersion !== '0') {
      // "Not older than": wait for the store to reach it, then serve the newest.
      const rv = parseResourceVersion(resourceVersion);
      await this.waitFor(rv);
      if (revision !== undefined && rv > revision) revision = rv;
    }
    const r = await this.read(() => this.kv.range(this.key(namespace, name), revision ? { revision } : undefined));
    const kv = r.kvs[0];
    if (!kv) throw notFound(this.target, name);
    return kv;
  }

  async list(namespace: string, o: ListOptions): Promise<ListResult> {
    const [start, end] = this.range(namespace);
    // resourceVersionMatch combinations are checked by the handler (validateListOptions: 422).
    const rvSet = o.resourceVersion !== '';
    if (this.cache && !o.continueToken && o.limit === 0 && rvSet && o.resourceVersionMatch !== 'Exact') {
      return this.listFromCache(this.cache, namespace, o);
    }
    // "Most recent" without paging, on the embedded store: the watch cache once it holds the
    // store's newest revision (its objects are decoded, encoded and indexed already; the
    // reference's consistent list from cache); the store if the cache does not catch up within
    // CONSISTENT_LIST_WAIT_MS. A store shared with other replicas (etcd: `fresh`) serves these
    // lists itself, as the reference does with etcd before 3.4.31 / 3.5.13: the cache's
    // revision there comes from watch progress notifications, which those versions may send
    // ahead of events still to come (etcd-io/etcd#15220), so a cache at the newest revision
    // might not hold its objects yet (seen with Debian's etcd 3.4.23: 251 of 800 objects).
    if (this.cache && !this.kv.fresh && !rvSet && !o.continueToken && o.limit === 0) {
      const want = this.kv.currentRevision();
      if (this.cache.revision >= want || (await this.cache.waitFresh(want, CONSISTENT_LIST_WAIT_MS))) {
        return this.listFromCache(this.cache, namespace, o);
      }
    }
    let from = start;
    let revision: Revision | undefined;
    let tok: ContinueToken | undefined;
    if (o.continueToken) {
      if (rvSet && o.resourceVersion !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      tok = decodeContinue(o.continueToken);
      // rv -1: resume after the key at the newest version (the token a 410 hands out).
      if (tok.rv !== -1 && (tok.rv < this.kv.compactedRevision() || this.clock() - tok.t > this.continueTtl)) {
        throw continueExpired(encodeContinueToken(-1, tok.start, this.clock()));
      }
      from = start + tok.start;
      revision = tok.rv === -1 ? undefined : tok.rv;
    } else if (rvSet && o.resourceVersion !== '0') {
      const rv = parseResourceVersion(o.resourceVersion);
      await this.waitFor(rv);
      const exact = o.resourceVersionMatch === 'Exact' || (o.resourceVersionMatch === '' && o.limit > 0);
      if (exact) {
        if (rv < this.kv.compactedRevision()) throw resourceExpired(LIST_EXPIRED);
        revision = rv;
      }
    }
    // Pages of the newest state from the watch cache, as the reference's cache serves them
    // (ListFromCacheSnapshot): the embedded store only, as for the unpaged list above.
    const fromCache =
      this.cache && !this.kv.fresh && o.limit > 0 && (tok !== undefined || revision === undefined)
        ? await pageFromCache(this.cache, { start, from, newest: this.kv.currentRevision(), o, tok, now: this.clock() })
        : undefined;
    if (fromCache) return fromCache;
    if (!o.hasSelectors) {
      // remainingItemCount without scanning the whole range: a continuation knows how many were
      // left from its token; a first page at the newest revision takes the total from the watch
      // cache when the cache is at exactly that revision. Otherwise the store counts.
      const known = tok?.left ?? (revision === undefined && from === start ? this.cachedCount(start) : undefined);
      const r = await this.read(() =>
        this.kv.range(from, { end, revision, limit: o.limit, skipCount: known !== undefined && o.limit > 0 }),
      );
      const last = r.kvs[r.kvs.length - 1];
      const more = r.more && last !== undefined;
      const left = (known ?? r.count) - r.kvs.length;
      return {
        items: r.kvs.map(storedObject),
        revision: r.revision,
        continueToken: more ? encodeContinue(r.revision, last.key, start, this.clock(), left) : '',
        remainingItemCount: more ? left : undefined,
      };
    }
    // With selectors, read pages until `limit` matches are found (as the reference does).
    const items: StoredObject[] = [];
    const want = o.limit > 0 ? o.limit : Number.POSITIVE_INFINITY;
    const page = o.limit > 0 ? Math.max(o.limit, 100) : 0;
    let cursor = from;
    let rev = revision;
    let lastKey = '';
    let more = false;
    for (;;) {
      const r = await this.read(() => this.kv.range(cursor, { end, revision: rev, limit: page, skipCount: true }));
      rev = r.revision;
      let i = 0;
      for (; i < r.kvs.length && items.length < want; i++) {
        const kv = r.kvs[i] as KeyValue;
        lastKey = kv.key;
        if (this.matches(kv, o)) items.push(storedObject(kv));
      }
      if (items.length >= want) {
        // More only if anything is left after the last key examined.
        more = i < r.kvs.length || r.more;
        break;
      }
      if (!r.more || r.kvs.length === 0) break;
      cursor = `${(r.kvs[r.kvs.length - 1] as KeyValue).key}\0`;
    }
    return {
      items,
      revision: rev ?? this.kv.currentRevision(),
      continueToken: more ? encodeContinue(rev as Revision, lastKey, start, this.clock()) : '',
    };
  }

  /** "Any" (rv=0) and "not older than" lists, served from the watch cache without a store read. */
  private async listFromCache(cache: WatchCache, namespace: string, o: ListOptions): Promise<ListResult> {
    const rv = o.resourceVersion === '0' || o.resourceVersion === '' ? 0 : parseResourceVersion(o.resourceVersion);
    await cache.start();
    if (rv > 0 && !(await cache.waitFresh(rv, this.futureWait))) throw tooLargeResourceVersion(rv, cache.revision);
    const keyPrefix = this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : '';
    const bad = cache.corruptKeys(keyPrefix);
    if (bad.length > 0) throw new CorruptObjectError(bad.join(', '), `${bad.length} object(s) cannot be decoded`);
    // An `=` of the field selector (a kubelet's spec.nodeName) reads the cache's index by it.
    const eq = o.fieldSelector.find((r) => r.op === 'eq');
    const indexed = eq && cache.listWhere(keyPrefix, eq.field, eq.value);
    const all = indexed || cache.list(keyPrefix);
    cache.noteList(indexed && eq ? `f:${eq.field}` : '');
    const cached = o.hasSelectors
      ? all.filter((c) => matchesLabels(o.labelSelector, c.view.labels) && matchesFields(o.fieldSelector, (f) => viewField(c.view, f)))
      : all;
    const revision = cache.revision;
    const state = o.hasSelectors ? undefined : `${this.prefix}|${keyPrefix}|${revision}|${cache.stateGeneration}`;
    return { items: cached, revision, continueToken: '', state };
  }

  private matches(kv: KeyValue, o: ListOptions): boolean {
    const obj = decodeStored(kv);
    if (!matchesLabels(o.labelSelector, obj.metadata.labels)) return false;
    return matchesFields(o.fieldSelector, (f) => this.fieldValue(obj, f));
  }

  fieldValue(obj: Obj, field: string): string {
    if (field === 'metadata.name') return obj.metadata.name ?? '';
    if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
    return this.def.selectableFields[field]?.(obj) ?? '';
  }

  get selectableFields(): Set<string> {
    return new Set(['metadata.name', 'metadata.namespace', ...Object.keys(this.def.selectableFields)]);
  }

  /** Objects in a list range from the watch cache, if it is at the store's newest revision. */
  private cachedCount(start: string): number | undefined {
    const c = this.cache;
    if (!c || c.revision !== this.kv.currentRevision()) return undefined;
    return c.size(start);
  }

  /** Wait (up to futureRevisionWait) for the store to reach `rv`; then 504 Too large resource version. */
  private async waitFor(rv: Revision): Promise<void> {
    if (rv <= this.kv.currentRevision()) return;
    // A store shared with other replicas may be there already: ask it once.
    if (this.kv.fresh && rv <= (await this.read(() => (this.kv.fresh as () => Promise<Revision>)()))) return;
    const deadline = this.clock() + this.futureWait;
    while (this.clock() < deadline) {
      await Bun.sleep(25);
      if (rv <= this.kv.currentRevision()) return;
    }
    throw tooLargeResourceVersion(rv, this.kv.currentRevision());
  }

  /** Run a store read, translating store errors. */
  protected async read<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      throw this.translate(e, '');
    }
  }

  translate(e: unknown, name: string): unknown {
    if (e instanceof StatusError || !isStoreError(e)) return e;
    switch (e.code) {
      case 'not-found':
        return notFound(this.target, name);
      case 'exists':
        return alreadyExists(this.target, name);
      case 'conflict':
        return conflict(this.target, name, STALE_OBJECT);
      case 'compacted':
        return resourceExpired(`too old resource version: ${e.message}`);
      case 'future-revision':
        return tooLargeResourceVersion(0, this.kv.currentRevision());
      case 'unreachable':
        return unavailableStatus(e);
      default:
        return internal(e.message);
    }
  }

  /** The resource's watch cache, for the server's own controllers (which run only on a server that has caches). */
  watchCache(): WatchCache {
    if (!this.cache) throw new Error(`bug: ${this.def.group}/${this.def.plural} has no watch cache`);
    return this.cache;
  }

  /** Start a watch (from the resource's watch cache). Throws 410 Expired, 504, or 405 without a cache. */
  async watch(r: WatchRequest): Promise<WatchStart> {
    if (!this.cache) throw methodNotAllowed();
    const keyPrefix = this.def.namespaced && r.namespace ? `${this.prefix}${r.namespace}/` : '';
    return startWatch(this.kv, this.cache, keyPrefix, r);
  }
}
