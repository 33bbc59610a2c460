/**
 * The pods (or other dependents) of each controller, by the controller's uid, and each
 * namespace's orphans (no controller reference): what a controller's sync may claim, found
 * without decoding every object of the namespace (the reference's informer index by controller
 * UID). A ReplicaSet sync in a namespace of 10,000 pods reads its 10 pods and the orphans,
 * not 10,000.
 *
 *   const index = new OwnerIndex(pods.watchCache(), pods.prefix);
 *   await index.start();
 *   index.candidates('default', rs.metadata.uid)   // its pods and the namespace's orphans
 *
 * Built from the cache's events (each object decoded once per change, as the watch decodes it).
 */
import type { Obj } from '../api/meta';
import type { WatchCache } from '../watch/cache';
import type { CachedObject } from '../watch/events';
import { controllerOf } from './controller-utils';
import { follow } from './workqueue';

export class OwnerIndex {
  private readonly byOwner = new Map<string, Set<string>>();
  /** Orphans by namespace prefix (`<resource prefix><ns>/`). */
  private readonly orphans = new Map<string, Set<string>>();
  /** Where each key is filed: an owner uid, or '' (an orphan). */
  private readonly filed = new Map<string, string>();
  private following: { stop(): void } | undefined;
  private starting: Promise<void> | undefined;
  private users = 0;

  constructor(
    private readonly cache: WatchCache,
    private readonly prefix: string,
  ) {}

  /** Starts following the cache (once, for all its users); resolves when the index is built. */
  start(): Promise<void> {
    this.users++;
    this.starting ??= this.build();
    return this.starting;
  }

  /** One user is done with it; the last stops following. */
  stop(): void {
    if (--this.users > 0) return;
    this.following?.stop();
    this.starting = undefined;
  }

  private async build(): Promise<void> {
    await this.cache.start();
    let ready: () => void = () => {};
    const started = new Promise<void>((r) => {
      ready = r;
    });
    this.following = follow(
      this.cache,
      (objs) => {
        this.byOwner.clear();
        this.orphans.clear();
        this.filed.clear();
        for (const o of objs) this.file(o);
        ready();
      },
      (o, type) => (type === 'DELETED' ? this.unfile(this.keyOf(o)) : this.file(o)),
    );
    await started;
  }

  /**
   * The current objects the controller `uid` owns, then the orphans of `namespace` (read-only).
   * `shared`: the cache's shared parsed objects (CachedObject.shared) for a caller that never
   * changes them, not a parse of each per call (the ReplicaSet controller's sync: 3.7% of the
   * server's CPU in a density run).
   */
  candidates(namespace: string, uid: string, shared = false): Obj[] {
    const out: Obj[] = [];
    for (const set of [this.byOwner.get(uid), this.orphans.get(`${this.prefix}${namespace}/`)]) {
      if (!set) continue;
      for (const key of set) {
        const c = this.cache.get(key);
        if (c) out.push(shared ? c.shared : c.obj);
      }
    }
    return out;
  }

  /** As candidates, the cache's entries themselves (one per object version: a key for per-version memos). */
  candidateEntries(namespace: string, uid: string): CachedObject[] {
    const out: CachedObject[] = [];
    for (const set of [this.byOwner.get(uid), this.orphans.get(`${this.prefix}${namespace}/`)]) {
      if (!set) continue;
      for (const key of set) {
        const c = this.cache.get(key);
        if (c) out.push(c);
      }
    }
    return out;
  }

  /** The current objects the controller `uid` owns (read-only; `shared` as in candidates). */
  owned(uid: string, shared = false): Obj[] {
    const out: Obj[] = [];
    for (const key of this.byOwner.get(uid) ?? []) {
      const c = this.cache.get(key);
      if (c) out.push(shared ? c.shared : c.obj);
    }
    return out;
  }

  private keyOf(o: Obj): string {
    return `${this.prefix}${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
  }

  private file(o: Obj): void {
    const key = this.keyOf(o);
    const owner = controllerOf(o)?.uid ?? '';
    if (this.filed.get(key) === owner) return;
    this.unfile(key);
    this.filed.set(key, owner);
    const map = owner === '' ? this.orphans : this.byOwner;
    const at = owner === '' ? `${this.prefix}${o.metadata.namespace ?? ''}/` : owner;
    const set = map.get(at) ?? new Set<string>();
    map.set(at, set);
    set.add(key);
  }

  private unfile(key: string): void {
    const owner = this.filed.get(key);
    if (owner === undefined) return;
    this.filed.delete(key);
    const map = owner === '' ? this.orphans : this.byOwner;
    const at = owner === '' ? key.slice(0, key.lastIndexOf('/') + 1) : owner;
    const set = map.get(at);
    set?.delete(key);
    if (set?.size === 0) map.delete(at);
  }
}
