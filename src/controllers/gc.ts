/**
 * The garbage collector: deletes dependents whose owners are gone, following ownerReferences
 * across every served kind, in the three propagation modes:
 *
 *   Background  the owner is removed at once; its dependents are deleted afterwards (here).
 *   Foreground  the owner stays Terminating with the `foregroundDeletion` finalizer while its
 *               dependents are deleted; the finalizer goes once no dependent with
 *               blockOwnerDeletion=true is left.
 *   Orphan      the owner stays Terminating with the `orphan` finalizer until its dependents no
 *               longer reference it; then the finalizer goes.
 *
 * The graph (owner uid → dependents) is rebuilt from the watch caches at start, so work left
 * by a restart (dangling dependents, pending finalizers) is picked up again.
 */
import type { Obj, OwnerReference } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ApiRegistry } from '../registry/api-registry';
import { FOREGROUND, ORPHAN } from '../registry/deletion';
import type { ResourceStore } from '../registry/generic';
import { keyPrefix } from '../registry/kind';

/** What the collector needs of an object's metadata (not the object: the graph holds every object of every kind). */
interface Meta {
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  finalizers?: string[];
  resourceVersion?: string;
}

interface Node {
  store: ResourceStore;
  namespace: string;
  name: string;
  uid: string;
  meta: Meta;
}

/** The metadata of an object with no owners, no finalizers and no deletion (most): shared. */
const PLAIN: Meta = Object.freeze({});

function metaOf(o: Obj): Meta {
  const { ownerReferences, deletionTimestamp, finalizers, resourceVersion } = o.metadata;
  if (!ownerReferences?.length && !deletionTimestamp && !finalizers?.length) return PLAIN;
  return { ownerReferences, deletionTimestamp, finalizers, resourceVersion };
}

/** Whether two versions of an object mean the same to the collector. */
function sameMeta(a: Meta, b: Meta): boolean {
  if (a.deletionTimestamp !== b.deletionTimestamp) return false;
  const fa = a.finalizers ?? [];
  const fb = b.finalizers ?? [];
  if (fa.length !== fb.length || fa.some((f, i) => f !== fb[i])) return false;
  const ra = a.ownerReferences ?? [];
  const rb = b.ownerReferences ?? [];
  return (
    ra.length === rb.length &&
    ra.every((r, i) => {
      const q = rb[i] as OwnerReference;
      return (
        r.uid === q.uid &&
        r.name === q.name &&
        r.kind === q.kind &&
        r.apiVersion === q.apiVersion &&
        r.controller === q.controller &&
        r.blockOwnerDeletion === q.blockOwnerDeletion
      );
    })
  );
}

const WRITE = { dryRun: false, fieldValidation: 'Ignore' as const, warnings: [] as string[] };

export interface GcOptions {
  /** Every this often, every dependent and every object being deleted is checked again (default RESYNC_MS). */
  resyncMs?: number;
  log?: (msg: string) => void;
}

/**
 * The collector works from changes: an object deleted queues its dependents, a dependent added or
 * changed queues itself, a failed step is retried with a back-off (RETRY_MS). As the reference's
 * graph builder, it does not check every dependent again on a short period: every 5 s it did, and
 * at 150,000 pods that was 11% of a core doing nothing (the density scenario's profile,
 * 2026-11-27: `drain` 21% of the main thread's busy time with no owner deleted). A full check
 * stays as a safety net at this period, and after a kind's watch starts again (a relist, a
 * custom kind newly served), when deletions may have gone unseen.
 */
const RESYNC_MS = 5 * 60_000;
/** A failed step is retried after this long, doubled each time up to RETRY_MAX_MS. */
const RETRY_MS = 500;
const RETRY_MAX_MS = 60_000;

const MARKERS = ['ownerReferences', 'finalizers', 'deletionTimestamp'].map((m) => Buffer.from(m));

/**
 * Whether stored bytes may hold owner references, finalizers or a deletion timestamp: they name
 * the field (unquoted, so that a binary encoding's keys match too). A value that merely mentions
 * one only costs a parse; an object that has one always names it.
 */
function mayNeedCollector(value: Uint8Array): boolean {
  const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  for (const m of MARKERS) if (b.indexOf(m) >= 0) return true;
  return false;
}

/** Queue entries processed between two turns of the event loop. */
const DRAIN_SLICE = 1000;

/** Whether a store's values are converted when read (a kind served in another form than stored). */
const converts = (s: ResourceStore) => s.def.storedAs !== undefined || s.def.convertedBy !== undefined;

export class GarbageCollector {
  /** Live objects by uid. */
  private readonly live = new Map<string, Node>();
  /** The store keys of the objects in `live`. */
  private readonly liveKeys = new Set<string>();
  /** Owner uid → dependents' uids. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly queue = new Set<string>();
  /** Failed steps waiting for their retry: uid → attempts so far. */
  private readonly retries = new Map<string, number>();
  private running = false;
  private synced = false;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly watched = new Set<ResourceStore>();
  /** The store followed for each key prefix: the objects of a kind served in several forms are followed once. */
  private readonly byPrefix = new Map<string, ResourceStore>();

  constructor(
    private readonly api: ApiRegistry,
    private readonly opts: GcOptions = {},
  ) {}

  async start(): Promise<void> {
    // Forms read without conversion first: a kind served in another form too (events.k8s.io
    // Events stored as core Events, every version of a custom resource) is followed through the
    // plain one, not converted once more for each form.
    const plainFirst = [...this.api.stores].sort((a, b) => Number(converts(a)) - Number(converts(b)));
    for (const store of plainFirst) await this.watchStore(store);
    this.synced = true;
    this.suspects();
    this.timer = setInterval(() => this.suspects(), this.opts.resyncMs ?? RESYNC_MS);
    this.timer.unref();
  }

  /**
   * Queue every dependent and every object being deleted: after a (re)start owners may have gone
   * while the server was down, after a relist while the watch was down. (Nothing else has anything
   * to do: process() returns at once for an object with neither, and queueing all of a million
   * objects cost a minute.)
   */
  private suspects(): void {
    for (const [uid, n] of this.live) if (n.meta.deletionTimestamp || (n.meta.ownerReferences?.length ?? 0) > 0) this.queue.add(uid);
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Follows a kind's objects (every built-in kind at start; a custom kind when it is served). */
  async watchStore(store: ResourceStore): Promise<void> {
    if (this.watched.has(store) || this.stopped) return;
    const prefix = keyPrefix(store.def);
    if (this.byPrefix.has(prefix)) return;
    this.byPrefix.set(prefix, store);
    this.watched.add(store);
    const cache = store.watchCache();
    await cache.start();
    const { watcher, initial } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    // Most objects have no owners, finalizers or deletion: the graph leaves them out, and an owner
    // reference to one is checked against its kind's cache (ownerPresent). Only objects whose
    // stored bytes name one of the three are parsed: a restart with 1M objects parsed them all.
    for (const c of initial) if (mayNeedCollector(c.value)) this.observe(store, c.obj, false);
    // A kind followed again (its cache relisted) or newly served (owners of it counted as present
    // until now): what changed meanwhile was not seen as changes.
    if (this.synced) this.suspects();
    else this.kick();
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
          // A change to a version that names none of the three, of an object the graph does not
          // hold (so its version before had none either, or none that counted), concerns no one
          // here: skipped unparsed, as at start. Its version before is not read: a cold object's
          // would be inflated for it (twice per patch of a cold object, 2026-11-28).
          if (e.type === 'ADDED' || e.type === 'MODIFIED') {
            if (!mayNeedCollector(e.event.value) && (e.type === 'ADDED' || !this.liveKeys.has(e.event.key))) continue;
          }
          this.observe(store, e.obj, e.type === 'DELETED');
        }
        this.kick();
      }
      this.watched.delete(store);
      if (this.byPrefix.get(prefix) === store) this.byPrefix.delete(prefix);
      // The watch ended: the cache relisted (followed again), or the form stopped being served (a
      // custom resource version removed: another form of the same objects, if any, takes over).
      const next = this.api.stores.includes(store) ? store : this.api.stores.find((s) => keyPrefix(s.def) === prefix);
      if (next && !this.stopped) setTimeout(() => void this.watchStore(next), 100).unref();
    })();
  }

  private observe(store: ResourceStore, obj: Obj, deleted: boolean): void {
    const uid = obj.metadata.uid;
    if (!uid) return;
    const prev = this.live.get(uid);
    for (const o of prev?.meta.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(uid);
    const key = store.key(obj.metadata.namespace ?? '', obj.metadata.name as string);
    if (deleted) {
      this.live.delete(uid);
      this.liveKeys.delete(key);
      // Its dependents may now be orphans; its owners may be waiting for it (foreground).
      for (const d of this.dependents.get(uid) ?? []) this.queue.add(d);
      for (const o of obj.metadata.ownerReferences ?? []) this.queue.add(o.uid);
      return;
    }
    const meta = metaOf(obj);
    if (meta === PLAIN) {
      // Nothing for the collector to do about it; as an owner it is found in its kind's cache.
      this.live.delete(uid);
      this.liveKeys.delete(key);
      return;
    }
    this.live.set(uid, { store, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name as string, uid, meta });
    this.liveKeys.add(key);
    // As the reference's graph builder, an update that changes none of the owner references,
    // finalizers or deletion is not processed again (a node's Lease renewed every 10 s, with its
    // owner reference to the node, would be checked 500 times a second at 5,000 nodes).
    const unchanged = prev !== undefined && prev.store === store && sameMeta(prev.meta, meta);
    for (const o of obj.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(o.uid);
      if (!set) {
        set = new Set();
        this.dependents.set(o.uid, set);
      }
      set.add(uid);
      if (!unchanged) this.queue.add(uid);
    }
    if (obj.metadata.deletionTimestamp && !unchanged) this.queue.add(uid);
  }

  /** Queue `uid` again after a back-off (a store that failed, an etcd member away). */
  private retry(uid: string): void {
    const attempts = this.retries.get(uid) ?? 0;
    this.retries.set(uid, attempts + 1);
    const t = setTimeout(
      () => {
        if (this.stopped || !this.live.has(uid)) {
          this.retries.delete(uid);
          return;
        }
        this.queue.add(uid);
        this.kick();
      },
      Math.min(RETRY_MS * 2 ** attempts, RETRY_MAX_MS),
    );
    t.unref?.();
  }

  private kick(): void {
    if (this.running || !this.synced || this.stopped) return;
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
      if (this.queue.size > 0) setTimeout(() => this.kick(), 10);
    });
  }

  /**
   * Process the queue in rounds: each takes what is queued now (what processing queues again
   * waits for the next round). Taking one entry at a time from the Set's front made every take
   * skip the deleted entries before it: quadratic in the queue's length. The event loop gets a
   * turn every DRAIN_SLICE entries, so a long queue never holds requests up.
   */
  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      const round = [...this.queue];
      this.queue.clear();
      let done = 0;
      for (const uid of round) {
        if (this.stopped) return;
        if (++done % DRAIN_SLICE === 0) await new Promise((r) => setImmediate(r));
        const n = this.live.get(uid);
        if (!n) continue;
        try {
          await this.process(n);
          this.retries.delete(uid);
        } catch (e) {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) {
            this.opts.log?.(`gc: ${n.store.def.plural} ${n.namespace}/${n.name}: ${String(e)}`);
            this.retry(uid);
          }
        }
      }
    }
  }

  /** The store of an owner reference's kind, or undefined for kinds this server does not serve. */
  private ownerStore(ref: OwnerReference): ResourceStore | undefined {
    const [group, version] = ref.apiVersion.includes('/') ? ref.apiVersion.split('/') : ['', ref.apiVersion];
    return this.api.byGroupVersionKind(group as string, version as string, ref.kind);
  }

  /**
   * Whether an owner reference points at a live object; owners of kinds not served count as
   * present. The graph holds only objects with owners, finalizers or a deletion; any other owner
   * is found in its kind's cache (by name, its uid compared). An owner neither has seen may simply
   * not have reached them yet (its kind's cache is behind the dependent's: a controller creating
   * an owner and then its dependents), so before a dependent is treated as orphaned the owner is
   * looked up in the store, as the reference's collector does.
   */
  private async ownerPresent(dep: Node, ref: OwnerReference): Promise<boolean> {
    const store = this.ownerStore(ref);
    if (!store) return true;
    const owner = this.live.get(ref.uid);
    if (owner !== undefined && owner.store === store && (!store.def.namespaced || owner.namespace === dep.namespace)) return true;
    const namespace = store.def.namespaced ? dep.namespace : '';
    if (store.watchCache().get(store.key(namespace, ref.name))?.view.uid === ref.uid) return true;
    try {
      const kv = await store.get(namespace, ref.name);
      return decodeStored(kv).metadata.uid === ref.uid;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return false;
      throw e;
    }
  }

  private async process(n: Node): Promise<void> {
    const meta = n.meta;
    const fins = meta.finalizers ?? [];
    if (meta.deletionTimestamp && fins.includes(ORPHAN)) return this.orphanDependents(n);
    if (meta.deletionTimestamp && fins.includes(FOREGROUND)) return this.foreground(n);
    const refs = meta.ownerReferences ?? [];
    if (refs.length === 0) return;
    const present: OwnerReference[] = [];
    for (const r of refs) if (await this.ownerPresent(n, r)) present.push(r);
    if (present.length === refs.length) {
      // An owner being deleted in the foreground takes its dependents along.
      for (const r of refs) {
        const owner = this.live.get(r.uid);
        if (owner?.meta.deletionTimestamp && owner.meta.finalizers?.includes(FOREGROUND) && !meta.deletionTimestamp) {
          await n.store.delete(n.namespace, n.name, { dryRun: false, propagationPolicy: 'Foreground', preconditions: { uid: n.uid } });
          return;
        }
      }
      return;
    }
    if (present.length === 0) {
      // Every owner is gone: delete the dependent (its own dependents follow in the background).
      if (!meta.deletionTimestamp)
        await n.store.delete(n.namespace, n.name, { dryRun: false, propagationPolicy: 'Background', preconditions: { uid: n.uid } });
      return;
    }
    // Some owners remain: drop the dangling references.
    await this.rewrite(n, (o) => {
      o.metadata.ownerReferences = present;
    });
  }

  private async foreground(owner: Node): Promise<void> {
    let blocking = 0;
    for (const d of this.dependents.get(owner.uid) ?? []) {
      const dep = this.live.get(d);
      if (!dep) continue;
      const ref = dep.meta.ownerReferences?.find((r) => r.uid === owner.uid);
      if (!ref) continue;
      if (ref.blockOwnerDeletion) blocking++;
      if (!dep.meta.deletionTimestamp) {
        await dep.store.delete(dep.namespace, dep.name, {
          dryRun: false,
          propagationPolicy: 'Foreground',
          preconditions: { uid: dep.uid },
        });
      }
    }
    if (blocking > 0) return;
    await this.rewrite(owner, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== FOREGROUND);
    });
  }

  /**
   * Orphan: every dependent loses its reference to the owner, then the owner's finalizer goes.
   * Dependents are taken from the caches themselves once each is at least at the owner's
   * revision, not only from the graph: a dependent created just before the orphaning delete may
   * not have reached the graph yet, and would otherwise be collected once the owner is gone.
   */
  private async orphanDependents(owner: Node): Promise<void> {
    const deps = new Map<string, Node>();
    for (const d of this.dependents.get(owner.uid) ?? []) {
      const dep = this.live.get(d);
      if (dep) deps.set(d, dep);
    }
    const rv = Number(owner.meta.resourceVersion ?? 0);
    for (const store of this.api.stores) {
      const cache = store.watchCache();
      await cache.waitFresh(rv, 5000);
      for (const c of cache.list()) {
        const o = c.obj;
        const m = o.metadata;
        if (!m.uid || deps.has(m.uid) || !m.ownerReferences?.some((r) => r.uid === owner.uid)) continue;
        deps.set(m.uid, { store, namespace: m.namespace ?? '', name: m.name as string, uid: m.uid, meta: metaOf(o) });
      }
    }
    for (const dep of deps.values()) {
      await this.rewrite(dep, (o) => {
        o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.uid);
        if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
      });
    }
    await this.rewrite(owner, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== ORPHAN);
    });
  }

  /** Update an object from its stored state, conditionally on it (conflicts are retried by the next pass). */
  private async rewrite(n: Node, change: (o: Obj) => void): Promise<void> {
    const next = decodeStored(await n.store.get(n.namespace, n.name));
    if (next.metadata.uid !== n.uid) return;
    change(next);
    try {
      await n.store.update(n.namespace, n.name, next, WRITE, '');
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) this.queue.add(n.uid);
      else throw e;
    }
  }
}
