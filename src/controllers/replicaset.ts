/**
 * The ReplicaSet controller, as the reference's pkg/controller/replicaset: each ReplicaSet keeps
 * `spec.replicas` active pods that its selector matches and it controls.
 *
 *   claim      orphans the selector matches are adopted (ownerReferences controller=true,
 *              blockOwnerDeletion), owned pods it no longer matches are released
 *   scale up   pods from the template, generateName `<rs>-`, in slow-start batches 1, 2, 4, ...
 *              (at most 500 per sync); events SuccessfulCreate / FailedCreate
 *   scale down the lowest ranked pods (ActivePodsWithRanks: unassigned, Pending < Unknown <
 *              Running, not ready, lower pod-deletion-cost, more pods of the same owner on the
 *              node, ready for less time, more restarts, newer) are deleted; SuccessfulDelete
 *   expectations  after creating or deleting, the ReplicaSet is not scaled again until the watch
 *              has shown those pods (or five minutes passed), so a burst of events never creates
 *              or deletes too many
 *   status     replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (Ready for
 *              minReadySeconds), observedGeneration, and the ReplicaFailure condition
 *              (FailedCreate / FailedDelete) while creating or deleting fails (a quota's 403)
 *
 * It follows the watch caches of ReplicaSets and pods and writes through the registry. The same
 * code runs the ReplicationController controller (the reference's pkg/controller/replication runs
 * the ReplicaSet controller over RCs converted to ReplicaSets): an `OwnerKind` adapter says the
 * kind, its apiVersion, how its selector reads (a LabelSelector, or an RC's plain label map) and
 * the controller's name (events, field manager); an RC's status and its ReplicaFailure condition
 * have the same fields as a ReplicaSet's.
 */
import type { Obj } from '../api/meta';
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import type { CachedObject } from '../watch/events';
import {
  availableAt,
  claim,
  controllerOf,
  controllerRef,
  intOr,
  isPodActive,
  isPodAvailable,
  isPodReady,
  labelsOf,
  phaseOf,
  podReadyTime,
  selectorOf,
  slowStartBatch,
  timeText,
  writeOptions,
} from './controller-utils';
import { OwnerIndex } from './owner-index';
import { follow, followChanges, WorkQueue } from './workqueue';

/** The most pods one sync creates or deletes (the reference's burstReplicas). */
export const BURST_REPLICAS = 500;
/** Expectations not met within this are dropped (the reference's ExpectationsTimeout). */
const EXPECTATIONS_TTL_MS = 5 * 60_000;
const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** What differs between the kinds the controller serves. */
export interface OwnerKind {
  kind: string;
  apiVersion: string;
  /** The controller's name: events' component, field manager, log prefix. */
  name: string;
  selector(o: Obj): SelectorMatcher | undefined;
}

export const REPLICA_SET: OwnerKind = { kind: 'ReplicaSet', apiVersion: 'apps/v1', name: 'replicaset-controller', selector: selectorOf };

/** An RC's selector is a label map (set by defaulting from the template's labels when absent). */
export const REPLICATION_CONTROLLER: OwnerKind = {
  kind: 'ReplicationController',
  apiVersion: 'v1',
  name: 'replicationcontroller-controller',
  selector: (o) => {
    const sel = (o.spec as { selector?: unknown } | undefined)?.selector;
    return selectorMatcher({ matchLabels: sel && typeof sel === 'object' ? sel : {} });
  },
};

/** ControllerExpectations, with deletions tracked by pod key (UIDTrackingControllerExpectations). */
export class Expectations {
  private readonly m = new Map<string, { add: number; del: Set<string>; at: number }>();

  satisfied(key: string): boolean {
    const e = this.m.get(key);
    if (!e) return true;
    return (e.add <= 0 && e.del.size === 0) || Date.now() - e.at > EXPECTATIONS_TTL_MS;
  }
  expectCreations(key: string, n: number): void {
    this.expect(key, n, []);
  }
  /** SetExpectations: `n` creations and the deletions of `pods` (keys) at once. */
  expect(key: string, n: number, pods: string[]): void {
    this.m.set(key, { add: n, del: new Set(pods), at: Date.now() });
  }
  expectDeletions(key: string, pods: string[]): void {
    this.m.set(key, { add: 0, del: new Set(pods), at: Date.now() });
  }
  creationObserved(key: string): void {
    const e = this.m.get(key);
    if (e) e.add--;
  }
  deletionObserved(key: string, pod: string): void {
    this.m.get(key)?.del.delete(pod);
  }
  delete(key: string): void {
    this.m.delete(key);
  }
  clear(): void {
    this.m.clear();
  }
}

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function deletionCost(p: Obj): number {
  const v = p.metadata.annotations?.[DELETION_COST];
  if (v === undefined || !/^[-+]?\d+$/.test(v)) return 0;
  const n = Number(v);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n : 0;
}

const maxRestarts = (p: Obj): number =>
  Math.max(
    0,
    ...((p.status as { containerStatuses?: { restartCount?: number }[] } | undefined)?.containerStatuses ?? []).map(
      (c) => c.restartCount ?? 0,
    ),
  );

/** logarithmicRankDiff: the difference of the log2 buckets of the ages (in ns) of two moments. */
function logRankDiff(t1: number, t2: number, now: number): number {
  const r = (t: number) => (now > t ? Math.floor(Math.log2((now - t) * 1e6)) : -1);
  return r(t1) - r(t2);
}

/** afterOrZero: a zero time first, then the later. */
const afterOrZero = (t1: number, t2: number): boolean => (t1 === 0 || t2 === 0 ? t1 === 0 : t1 > t2);

/** ActivePodsWithRanks.Less (LogarithmicScaleDown and PodDeletionCost on, as in 1.33): `a` goes first. */
export function rankLess(a: Obj, ra: number, b: Obj, rb: number, now: number): boolean {
  const na = (a.spec as { nodeName?: string } | undefined)?.nodeName ?? '';
  const nb = (b.spec as { nodeName?: string } | undefined)?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const pa = PHASE_ORDINAL[phaseOf(a)] ?? 0;
  const pb = PHASE_ORDINAL[phaseOf(b)] ?? 0;
  if (pa !== pb) return pa < pb;
  if (isPodReady(a) !== isPodReady(b)) return !isPodReady(a);
  const ca = deletionCost(a);
  const cb = deletionCost(b);
  if (ca !== cb) return ca < cb;
  if (ra !== rb) return ra > rb;
  const uidLess = () => (a.metadata.uid as string) < (b.metadata.uid as string);
  if (isPodReady(a) && isPodReady(b)) {
    const ta = podReadyTime(a);
    const tb = podReadyTime(b);
    if (ta !== tb) {
      if (ta === 0 || tb === 0) return afterOrZero(ta, tb);
      const d = logRankDiff(ta, tb, now);
      return d === 0 ? uidLess() : d < 0;
    }
  }
  const xa = maxRestarts(a);
  const xb = maxRestarts(b);
  if (xa !== xb) return xa > xb;
  const ka = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const kb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ka !== kb) {
    if (ka === 0 || kb === 0) return afterOrZero(ka, kb);
    const d = logRankDiff(ka, kb, now);
    return d === 0 ? uidLess() : d < 0;
  }
  return false;
}

/**
 * getPodsToDelete: the `n` pods of `owned` to delete first, ranked by the active pods of `related`
 * (the pods of every ReplicaSet with the same owner) on the same node.
 */
export function podsToDelete(owned: Obj[], related: Obj[], n: number, now = Date.now()): Obj[] {
  if (n >= owned.length) return owned.slice(0, n);
  const onNode = new Map<string, number>();
  for (const p of related) {
    if (!isPodActive(p)) continue;
    const node = (p.spec as { nodeName?: string } | undefined)?.nodeName ?? '';
    onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  const ranked = owned.map((p) => ({ p, r: onNode.get((p.spec as { nodeName?: string } | undefined)?.nodeName ?? '') ?? 0 }));
  ranked.sort((x, y) => (rankLess(x.p, x.r, y.p, y.r, now) ? -1 : rankLess(y.p, y.r, x.p, x.r, now) ? 1 : 0));
  return ranked.slice(0, n).map((x) => x.p);
}

interface RsStatus {
  replicas: number;
  fullyLabeledReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  observedGeneration: number;
  conditions?: Record<string, unknown>[];
}

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class ReplicaSetController {
  readonly expectations = new Expectations();
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];

  constructor(
    private readonly sets: ResourceStore,
    private readonly setCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly recorder: EventRecorder,
    private readonly opts: { log?: (msg: string) => void; kind?: OwnerKind; index?: OwnerIndex } = {},
  ) {
    this.kind = opts.kind ?? REPLICA_SET;
    this.index = opts.index ?? new OwnerIndex(podCache, pods.prefix);
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`${this.kind.name}: ${m}`),
    );
  }

  private readonly kind: OwnerKind;
  /** The pods by controller (shared with the other controllers of pods). */
  private readonly index: OwnerIndex;
  /** Per pod version, what a sync reads of it (digestOf). */
  private readonly digests = new WeakMap<CachedObject, Obj>();

  private w() {
    return writeOptions(this.kind.name);
  }

  async start(): Promise<void> {
    await Promise.all([this.setCache.start(), this.podCache.start()]);
    await this.index.start();
    let podWatched = false;
    this.follows.push(
      follow(
        this.setCache,
        (objs) => {
          for (const o of objs) this.queue.add(this.keyOf(o));
        },
        (o, type) => {
          if (type === 'DELETED') this.expectations.delete(this.keyOf(o));
          this.queue.add(this.keyOf(o));
        },
      ),
      followChanges(
        this.podCache,
        () => {
          // A new pod watcher (at start, or after one ended): the events in between are not
          // seen, so expectations cannot be trusted; every ReplicaSet is synced from the cache.
          if (!podWatched) {
            podWatched = true;
            return;
          }
          this.expectations.clear();
          for (const c of this.setCache.list()) this.queue.add(this.keyOf(c.obj));
        },
        (p, type) => this.onPod(p, type),
      ),
    );
  }

  stop(): void {
    this.index.stop();
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private setOf(ns: string, name: string): Obj | undefined {
    return this.setCache.get(this.sets.key(ns, name))?.shared;
  }

  /** The ReplicaSet controlling a pod (by its controller reference, same uid). */
  private ownerOf(p: Obj): Obj | undefined {
    const ref = controllerOf(p);
    if (ref?.kind !== this.kind.kind) return undefined;
    const rs = this.setOf(p.metadata.namespace as string, ref.name);
    return rs && rs.metadata.uid === ref.uid ? rs : undefined;
  }

  private onPod(p: Obj, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    const podKey = this.keyOf(p);
    const ref = controllerOf(p);
    if (ref) {
      const rs = this.ownerOf(p);
      if (!rs) return;
      const key = this.keyOf(rs);
      if (type === 'DELETED' || p.metadata.deletionTimestamp) this.expectations.deletionObserved(key, podKey);
      else if (type === 'ADDED') this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    // An orphan: every ReplicaSet that may adopt it.
    if (type === 'DELETED' || p.metadata.deletionTimestamp) return;
    const ns = p.metadata.namespace as string;
    for (const c of this.setCache.list(`${this.sets.prefix}${ns}/`)) {
      if (this.kind.selector(c.obj)?.matches(labelsOf(p))) this.queue.add(this.keyOf(c.obj));
    }
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const rs = this.setOf(ns, key.slice(slash + 1));
    if (!rs) {
      this.expectations.delete(key);
      return;
    }
    const sel = this.kind.selector(rs);
    if (!sel || sel.empty) {
      this.opts.log?.(`${this.kind.name}: ${key}: invalid selector`);
      return;
    }
    const needsSync = this.expectations.satisfied(key);
    // Its pods and the namespace's orphans (from the owner index: not every pod of the namespace),
    // as digests made once per pod version (see digestOf).
    const candidates = this.index.candidateEntries(ns, rs.metadata.uid as string).map((c) => this.digestOf(c));
    const owned = await this.claimPods(rs, sel, candidates.filter(isPodActive));
    let err: unknown;
    if (needsSync && !rs.metadata.deletionTimestamp) err = await this.manage(key, rs, owned);
    const now = Date.now();
    const status = this.calculateStatus(rs, owned, err, now);
    await this.writeStatus(rs, status);
    if (err !== undefined) throw err;
    // A pod Ready but not yet for minReadySeconds: sync again when it becomes available.
    const minReady = intOr((rs.spec as { minReadySeconds?: number }).minReadySeconds, 0);
    const next = owned.map((p) => availableAt(p, minReady, now)).filter((t): t is number => t !== undefined);
    if (next.length > 0) this.queue.after(key, Math.min(...next) - now + 50);
  }

  /**
   * What a sync reads of a pod (metadata but annotations and managedFields, phase, the Ready
   * condition), made once per version of the pod. A set's sync reads every one of its pods, and
   * each of its pods' changes queues a sync: at 3,000 pods a set, parsing them all again on each
   * sync (the cache's shared parse is dropped at every collection) held up the requests that came
   * as a density scenario's saturation ended (2026-11-27). Scaling down reads the whole pods.
   */
  private digestOf(c: CachedObject): Obj {
    let d = this.digests.get(c);
    if (d === undefined) {
      const p = c.shared;
      const { annotations: _a, managedFields: _m, ...meta } = p.metadata;
      const st = (p.status ?? {}) as { phase?: string; conditions?: { type?: string }[] };
      const ready = st.conditions?.find((x) => x.type === 'Ready');
      d = { apiVersion: p.apiVersion, kind: p.kind, metadata: meta, status: { phase: st.phase, conditions: ready ? [ready] : [] } };
      this.digests.set(c, d);
    }
    return d;
  }

  /** The whole pod of a digest (its current version), for scaling down. */
  private wholePod(d: Obj): Obj {
    return this.podCache.get(this.pods.key(d.metadata.namespace as string, d.metadata.name as string))?.shared ?? d;
  }

  private claimPods(rs: Obj, sel: SelectorMatcher, active: Obj[]): Promise<Obj[]> {
    const ns = rs.metadata.namespace as string;
    const name = rs.metadata.name as string;
    return claim(rs, this.kind.apiVersion, this.kind.kind, sel, active, this.pods, this.w(), async () => {
      try {
        return decodeStored(await this.sets.get(ns, name));
      } catch {
        return undefined;
      }
    });
  }

  /** manageReplicas: create or delete pods toward spec.replicas; answers the error, if any. */
  private async manage(key: string, rs: Obj, owned: Obj[]): Promise<unknown> {
    const want = intOr((rs.spec as { replicas?: number }).replicas, 1);
    const diff = owned.length - want;
    if (diff < 0) {
      const n = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, n);
      const { ok, err } = await slowStartBatch(n, 1, () => this.createPod(rs));
      for (let i = ok; i < n; i++) this.expectations.creationObserved(key);
      return err;
    }
    if (diff > 0) {
      const n = Math.min(diff, BURST_REPLICAS);
      const victims = podsToDelete(
        owned.map((d) => this.wholePod(d)),
        this.relatedPods(rs),
        n,
      );
      this.expectations.expectDeletions(
        key,
        victims.map((p) => this.keyOf(p)),
      );
      const results = await Promise.allSettled(victims.map((p) => this.deletePod(rs, p)));
      for (const [i, r] of results.entries()) {
        if (r.status === 'fulfilled') continue;
        this.expectations.deletionObserved(key, this.keyOf(victims[i] as Obj));
        if (!(r.reason instanceof StatusError && r.reason.code === 404)) return r.reason;
      }
    }
    return undefined;
  }

  /** getIndirectlyRelatedPods: the pods of every ReplicaSet controlled by the same owner. */
  private relatedPods(rs: Obj): Obj[] {
    const owner = controllerOf(rs);
    const uids = new Set<string>([rs.metadata.uid as string]);
    if (owner) {
      for (const c of this.setCache.list(`${this.sets.prefix}${rs.metadata.namespace}/`)) {
        if (controllerOf(c.obj)?.uid === owner.uid) uids.add(c.obj.metadata.uid as string);
      }
    }
    return [...uids].flatMap((uid) => this.index.owned(uid, true));
  }

  private async createPod(rs: Obj): Promise<void> {
    const ns = rs.metadata.namespace as string;
    const t = ((rs.spec as { template?: Obj }).template ?? {}) as { metadata?: Obj['metadata']; spec?: unknown };
    const tm = t.metadata ?? {};
    const name = rs.metadata.name as string;
    const prefix = `${name}-`.length <= 253 ? `${name}-` : name;
    const meta: Obj['metadata'] = {
      generateName: prefix,
      namespace: ns,
      ownerReferences: [controllerRef(rs, this.kind.apiVersion, this.kind.kind)],
    };
    if (tm.labels && Object.keys(tm.labels).length > 0) meta.labels = { ...tm.labels };
    if (tm.annotations) meta.annotations = { ...tm.annotations };
    if (tm.finalizers) meta.finalizers = [...tm.finalizers];
    const body = { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: structuredClone(t.spec ?? {}) };
    try {
      const pod = await this.pods.create(ns, body, this.w());
      void this.recorder.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
    } catch (e) {
      void this.recorder.event(rs, 'Warning', 'FailedCreate', `Error creating: ${errText(e)}`);
      throw e;
    }
  }

  private async deletePod(rs: Obj, p: Obj): Promise<void> {
    try {
      await this.pods.delete(p.metadata.namespace as string, p.metadata.name as string, { dryRun: false });
      void this.recorder.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) {
        void this.recorder.event(rs, 'Warning', 'FailedDelete', `Error deleting: ${errText(e)}`);
      }
      throw e;
    }
  }

  /** calculateStatus. */
  private calculateStatus(rs: Obj, owned: Obj[], err: unknown, now: number): RsStatus {
    const spec = rs.spec as { replicas?: number; minReadySeconds?: number; template?: { metadata?: { labels?: Record<string, string> } } };
    const tl = spec.template?.metadata?.labels ?? {};
    const minReady = intOr(spec.minReadySeconds, 0);
    const cur = (rs.status ?? {}) as { conditions?: Record<string, unknown>[] };
    const s: RsStatus = {
      replicas: owned.length,
      fullyLabeledReplicas: owned.filter((p) => Object.entries(tl).every(([k, v]) => labelsOf(p)[k] === v)).length,
      readyReplicas: owned.filter(isPodReady).length,
      availableReplicas: owned.filter((p) => isPodAvailable(p, minReady, now)).length,
      observedGeneration: rs.metadata.generation ?? 0,
    };
    let conditions = [...(cur.conditions ?? [])];
    const failure = conditions.find((c) => c.type === 'ReplicaFailure');
    if (err !== undefined && !failure) {
      const diff = owned.length - intOr(spec.replicas, 1);
      const reason = diff < 0 ? 'FailedCreate' : diff > 0 ? 'FailedDelete' : '';
      conditions.push({ type: 'ReplicaFailure', status: 'True', lastTransitionTime: timeText(now), reason, message: errText(err) });
    } else if (err === undefined && failure) {
      conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
    }
    if (conditions.length > 0) s.conditions = conditions;
    return s;
  }

  private async writeStatus(rs: Obj, s: RsStatus): Promise<void> {
    const cur = (rs.status ?? {}) as Record<string, unknown>;
    const same =
      (['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'] as const).every(
        (k) => intOr(cur[k], 0) === s[k],
      ) && JSON.stringify(cur.conditions ?? []) === JSON.stringify(s.conditions ?? []);
    if (same) return;
    const uid = rs.metadata.uid;
    try {
      await this.sets.updateFrom(rs.metadata.namespace as string, rs.metadata.name as string, 'status', this.w(), (c) => {
        if (c.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        const status: Record<string, unknown> = { ...((c.status ?? {}) as Record<string, unknown>), ...s };
        if (!s.conditions) delete status.conditions;
        return { ...c, status };
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}
