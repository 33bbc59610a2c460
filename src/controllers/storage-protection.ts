/**
 * The reference's pvc-protection and pv-protection controllers, the other half of the
 * StorageObjectInUseProtection admission plugin (src/admission/storage.ts): a
 * PersistentVolumeClaim or PersistentVolume without its finalizer gets it
 * (kubernetes.io/pvc-protection, kubernetes.io/pv-protection), and one being deleted loses it
 * once nothing uses it, so that the delete completes:
 *
 *   a claim is in use while a scheduled pod in its namespace that is not shut down (terminal
 *   phase, or deleted with grace period 0) names it in a persistentVolumeClaim volume, or in an
 *   ephemeral volume (claim `<pod>-<volume>`) of a running pod;
 *   a volume is in use while its phase is Bound.
 *
 * Runs from the watch caches of claims, volumes and pods (claims are looked at again when a pod
 * of their namespace changes, and on a resync) and writes through the registry.
 */
import { PV_PROTECTION, PVC_PROTECTION } from '../admission/storage';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

export { PV_PROTECTION, PVC_PROTECTION };

const MANAGER = 'storage-protection-controller';

interface PodVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string };
  ephemeral?: unknown;
}

/** podIsShutDown: a terminal phase, or deleted with grace period 0 (stopped, or never ran). */
function podIsShutDown(pod: Obj): boolean {
  if (pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0) return true;
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Whether a claim is used by one of `pods` (the pods of its namespace). */
export function claimInUse(claim: Obj, pods: readonly Obj[]): boolean {
  const name = claim.metadata.name;
  return pods.some((pod) => {
    if (pod.metadata.namespace !== claim.metadata.namespace || podIsShutDown(pod)) return false;
    const spec = (pod.spec ?? {}) as { nodeName?: string; volumes?: PodVolume[] };
    // Only scheduled pods: the kubelet starts no pod whose claim is being deleted.
    if (!spec.nodeName) return false;
    return (spec.volumes ?? []).some(
      (v) =>
        v.persistentVolumeClaim?.claimName === name ||
        // ephemeral.VolumeClaimName and VolumeIsForPod: the claim the pod's volume made.
        (v.ephemeral !== undefined &&
          `${pod.metadata.name}-${v.name}` === name &&
          (claim.metadata.ownerReferences ?? []).some((o) => o.controller && o.uid === pod.metadata.uid)),
    );
  });
}

/** Whether a volume is in use: bound to a claim. */
export function volumeInUse(volume: Obj): boolean {
  return (volume.status as { phase?: string } | undefined)?.phase === 'Bound';
}

/**
 * What the controller does to an object: add its finalizer, remove it (being deleted, not in
 * use), or nothing.
 */
export function protectionAction(o: Obj, finalizer: string, inUse: () => boolean): 'add' | 'remove' | undefined {
  const has = (o.metadata.finalizers ?? []).includes(finalizer);
  if (o.metadata.deletionTimestamp) return has && !inUse() ? 'remove' : undefined;
  return has ? undefined : 'add';
}

export interface StorageProtectionOptions {
  resyncMs?: number;
  log?: (msg: string) => void;
}

export class StorageProtectionController {
  /** Keys `c/<namespace>/<name>` (claims) and `v/<name>` (volumes). */
  private readonly queue = new Set<string>();
  private draining = false;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly claims: ResourceStore,
    private readonly claimCache: WatchCache,
    private readonly volumes: ResourceStore,
    private readonly volumeCache: WatchCache,
    /** The pods' cache and its key prefix (`<prefix><namespace>/` lists a namespace's pods). */
    private readonly pods: { cache: WatchCache; prefix: string },
    private readonly opts: StorageProtectionOptions = {},
  ) {}

  async start(): Promise<void> {
    await Promise.all([this.claimCache.start(), this.volumeCache.start(), this.pods.cache.start()]);
    const all = { keyPrefix: '', match: () => true, all: true };
    const c = this.claimCache.watch(all, 'now');
    const v = this.volumeCache.watch(all, 'now');
    const p = this.pods.cache.watch(all, 'now');
    for (const x of c.initial) this.enqueueClaim(x.obj);
    for (const x of v.initial) this.enqueueVolume(x.obj);
    const follow = async (w: typeof c.watcher, onEvent: (o: Obj, deleted: boolean) => void) => {
      while (!this.stopped && !w.ended) for (const e of await w.next(Number.POSITIVE_INFINITY)) onEvent(e.obj, e.type === 'DELETED');
    };
    void follow(c.watcher, (o, deleted) => deleted || this.enqueueClaim(o));
    void follow(v.watcher, (o, deleted) => deleted || this.enqueueVolume(o));
    // A pod that stops, goes or changes may free the claims of its namespace being deleted.
    void follow(p.watcher, (pod) => this.enqueueTerminatingClaims(pod.metadata.namespace ?? ''));
    this.timer = setInterval(() => {
      for (const x of this.claimCache.list()) this.enqueueClaim(x.obj);
      for (const x of this.volumeCache.list()) this.enqueueVolume(x.obj);
    }, this.opts.resyncMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private enqueueClaim(o: Obj): void {
    this.queue.add(`c/${o.metadata.namespace}/${o.metadata.name}`);
    this.drain();
  }

  private enqueueVolume(o: Obj): void {
    this.queue.add(`v/${o.metadata.name}`);
    this.drain();
  }

  private enqueueTerminatingClaims(namespace: string): void {
    for (const x of this.claimCache.list(`${this.claims.prefix}${namespace}/`))
      if (x.obj.metadata.deletionTimestamp) this.enqueueClaim(x.obj);
  }

  private drain(): void {
    if (this.draining || this.stopped) return;
    this.draining = true;
    setTimeout(async () => {
      try {
        while (this.queue.size > 0 && !this.stopped) {
          const keys = [...this.queue];
          this.queue.clear();
          for (const key of keys) {
            await this.sync(key).catch((e) => this.opts.log?.(`storage protection: ${key}: ${String(e)}`));
          }
        }
      } finally {
        this.draining = false;
      }
    }, 0);
  }

  private async sync(key: string): Promise<void> {
    const claim = key.startsWith('c/');
    const [namespace, name] = claim ? (key.slice(2).split('/') as [string, string]) : ['', key.slice(2)];
    const store = claim ? this.claims : this.volumes;
    const cache = claim ? this.claimCache : this.volumeCache;
    const cur = cache.list(store.key(namespace, name)).find((x) => x.obj.metadata.name === name)?.obj;
    if (!cur) return;
    const finalizer = claim ? PVC_PROTECTION : PV_PROTECTION;
    const inUse = claim
      ? () =>
          claimInUse(
            cur,
            this.pods.cache.list(`${this.pods.prefix}${namespace}/`).map((x) => x.obj),
          )
      : () => volumeInUse(cur);
    const action = protectionAction(cur, finalizer, inUse);
    if (!action) return;
    try {
      await store.updateFrom(
        namespace,
        name,
        '',
        { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: MANAGER },
        (o) => {
          const finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
          if (action === 'add') finalizers.push(finalizer);
          return { ...o, metadata: { ...o.metadata, finalizers } };
        },
      );
    } catch (e) {
      // 404: gone meanwhile; 409: its next event brings it back.
      if (!(e instanceof StatusError) || (e.code !== 404 && e.code !== 409)) throw e;
    }
  }
}
