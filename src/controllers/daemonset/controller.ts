/**
 * The DaemonSet controller, as the reference's pkg/controller/daemon: one pod per eligible node
 * (placement.ts), created with a required node affinity to that node for the scheduler to bind;
 * pods on nodes that no longer qualify or no longer exist deleted; RollingUpdate (maxUnavailable,
 * maxSurge) or OnDelete (update.ts); ControllerRevisions `<ds>-<hash>` labelled
 * `controller-revision-hash` (revisions.ts), the current one's hash and the template generation
 * on each pod; and the status numbers. Expectations (as the ReplicaSet controller's) keep a burst
 * of events from creating or deleting twice. Events: SuccessfulCreate "Created pod: x",
 * FailedCreate, SuccessfulDelete, FailedDaemonPod.
 *
 * It follows the watch caches of DaemonSets, pods, nodes and ControllerRevisions and writes
 * through the registry.
 */

import { clone, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { decodeStored } from '../../codec/stored';
import type { EventRecorder } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import {
  availableAt,
  claim,
  computeHash,
  controllerOf,
  intOr,
  labelsOf,
  selectorOf,
  slowStartBatch,
  writeOptions,
} from '../controller-utils';
import { OwnerIndex } from '../owner-index';
import { Expectations } from '../replicaset';
import {
  createRevision,
  equalRevision,
  newRevision,
  nextRevision,
  ownedRevisions,
  REVISION_HASH_LABEL,
  type RevisionStore,
  renumberRevision,
  templatePatch,
  truncateHistory,
} from '../revisions';
import { follow, followChanges, WorkQueue } from '../workqueue';
import { daemonProbe, dsSpec, isRollingUpdate, minReadyOf, newDaemonPod, shouldRunOn, targetNode } from './placement';
import { type DsStatus, daemonStatus, type NodeView, type Plan, planManage, planRollingUpdate } from './update';

const W = () => writeOptions('daemonset-controller');
const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const is = (e: unknown, ...codes: number[]): boolean => e instanceof StatusError && codes.includes(e.code);
/** The most pods one sync creates (the reference's BurstReplicas). */
const BURST = 250;

export interface DaemonSetStores {
  sets: ResourceStore;
  pods: ResourceStore;
  revisions: ResourceStore;
  nodes: ResourceStore;
}

export class DaemonSetController {
  readonly expectations = new Expectations();
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  private readonly setCache: WatchCache;
  private readonly podCache: WatchCache;
  private readonly nodeCache: WatchCache;
  private readonly revs: RevisionStore;
  /** The pods by controller uid (shared with the other pod controllers): a sync reads its own pods and the orphans. */
  private readonly index: OwnerIndex;
  /** Each node's labels and taints as last seen: only a change to them (or a node coming or going) syncs every DaemonSet. */
  private readonly nodeSignatures = new Map<string, string>();

  constructor(
    private readonly s: DaemonSetStores,
    private readonly recorder: EventRecorder,
    private readonly opts: { log?: (msg: string) => void; index?: OwnerIndex } = {},
  ) {
    this.index = opts.index ?? new OwnerIndex(s.pods.watchCache(), s.pods.prefix);
    this.setCache = s.sets.watchCache();
    this.podCache = s.pods.watchCache();
    this.nodeCache = s.nodes.watchCache();
    this.revs = { store: s.revisions, cache: s.revisions.watchCache(), w: W };
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`daemonset controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.index.start(), this.setCache.start(), this.podCache.start(), this.nodeCache.start(), this.revs.cache.start()]);
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
          if (!podWatched) {
            podWatched = true;
            return;
          }
          this.expectations.clear();
          this.queueAll();
        },
        (p, type) => this.onPod(p, type),
      ),
      follow(
        this.nodeCache,
        (objs) => {
          for (const n of objs) this.nodeSignatures.set(n.metadata.name as string, this.nodeSignature(n));
          this.queueAll();
        },
        (n, type) => {
          const name = n.metadata.name as string;
          const sig = type === 'DELETED' ? undefined : this.nodeSignature(n);
          if (this.nodeSignatures.get(name) === sig) return;
          if (sig === undefined) this.nodeSignatures.delete(name);
          else this.nodeSignatures.set(name, sig);
          this.queueAll();
        },
      ),
    );
  }

  stop(): void {
    this.index.stop();
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private nodeSignature(n: Obj): string {
    return JSON.stringify([n.metadata.labels ?? {}, (n.spec as { taints?: unknown } | undefined)?.taints ?? []]);
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private queueAll(): void {
    for (const c of this.setCache.list()) this.queue.add(this.keyOf(c.obj));
  }

  private onPod(p: Obj, type: string): void {
    const ns = p.metadata.namespace as string;
    const ref = controllerOf(p);
    if (ref) {
      if (ref.kind !== 'DaemonSet') return;
      const ds = this.setCache.get(this.s.sets.key(ns, ref.name))?.obj;
      if (!ds || ds.metadata.uid !== ref.uid) return;
      const key = this.keyOf(ds);
      if (type === 'DELETED' || p.metadata.deletionTimestamp) this.expectations.deletionObserved(key, this.keyOf(p));
      else if (type === 'ADDED') this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    if (type === 'DELETED' || p.metadata.deletionTimestamp) return;
    for (const c of this.setCache.list(`${this.s.sets.prefix}${ns}/`)) {
      if (selectorOf(c.obj)?.matches(labelsOf(p))) this.queue.add(this.keyOf(c.obj));
    }
  }

  private fresh(ns: string, name: string): () => Promise<Obj | undefined> {
    return async () => {
      try {
        return decodeStored(await this.s.sets.get(ns, name));
      } catch {
        return undefined;
      }
    };
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cached = this.setCache.get(this.s.sets.key(ns, name))?.obj;
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const ds = clone(cached);
    const sel = selectorOf(ds);
    if (!sel || sel.empty) {
      this.opts.log?.(`daemonset controller: ${key}: invalid selector`);
      return;
    }
    const candidates = this.index.candidates(ns, ds.metadata.uid as string);
    const pods = await claim(ds, 'apps/v1', 'DaemonSet', sel, candidates, this.s.pods, W(), this.fresh(ns, name));
    const revisions = await ownedRevisions(this.revs, ds, 'DaemonSet', this.fresh(ns, name));
    const { cur, hash, collisionCount } = await this.constructHistory(ds, revisions);
    const probe = daemonProbe(ds);
    const nodes: NodeView[] = this.nodeCache.list().map((c) => ({ name: c.obj.metadata.name as string, ...shouldRunOn(probe, c.obj) }));
    const byNode = new Map<string, Obj[]>();
    for (const p of pods) {
      const node = targetNode(p);
      if (!node) continue;
      const list = byNode.get(node);
      if (list) list.push(p);
      else byNode.set(node, [p]);
    }
    const now = Date.now();
    let err: unknown;
    if (this.expectations.satisfied(key) && !ds.metadata.deletionTimestamp) {
      const manage = planManage(ds, nodes, byNode, hash);
      err = await this.syncNodes(key, ds, manage, hash);
      const acted = manage.create.length > 0 || manage.delete.length > 0;
      if (!acted && err === undefined && isRollingUpdate(ds))
        err = await this.syncNodes(key, ds, planRollingUpdate(ds, nodes, byNode, hash, now), hash);
      // cleanupHistory: revisions no pod uses, beyond revisionHistoryLimit.
      const hashes = new Set(pods.map((p) => labelsOf(p)[REVISION_HASH_LABEL]));
      const live = new Set<string>([cur.metadata.name as string]);
      for (const r of revisions) if (hashes.has(labelsOf(r)[REVISION_HASH_LABEL])) live.add(r.metadata.name as string);
      await truncateHistory(this.revs, revisions, live, intOr(dsSpec(ds).revisionHistoryLimit, 10));
    }
    await this.writeStatus(ds, { ...daemonStatus(ds, nodes, byNode, hash, now), collisionCount });
    if (err !== undefined) throw err;
    const next = pods.map((p) => availableAt(p, minReadyOf(ds), now)).filter((t): t is number => t !== undefined);
    if (next.length > 0) this.queue.after(key, Math.min(...next) - now + 50);
  }

  /** constructHistory: the revision of the current template (created, or renumbered when an older one matches) and its hash. */
  private async constructHistory(ds: Obj, revisions: Obj[]): Promise<{ cur: Obj; hash: string; collisionCount: number }> {
    let collisionCount = intOr((ds.status as { collisionCount?: number } | undefined)?.collisionCount, 0);
    const template = dsSpec(ds).template ?? {};
    const data = templatePatch(ds);
    const candidate = newRevision(ds, 'DaemonSet', data, nextRevision(revisions));
    const equal = revisions.filter((r) => equalRevision(r, candidate));
    let cur = equal[equal.length - 1];
    if (cur && cur !== revisions[revisions.length - 1]) cur = await renumberRevision(this.revs, cur, nextRevision(revisions));
    if (!cur) {
      const out = await createRevision(this.revs, ds, candidate, collisionCount, (cc) => computeHash(template, cc), REVISION_HASH_LABEL);
      cur = out.rev;
      collisionCount = out.collisionCount;
    }
    const hash = labelsOf(cur)[REVISION_HASH_LABEL] ?? (cur.metadata.name as string).slice((ds.metadata.name as string).length + 1);
    return { cur, hash, collisionCount };
  }

  /** syncNodes: creates the plan's pods (slow start) and deletes its pods; answers the first error. */
  private async syncNodes(key: string, ds: Obj, plan: Plan, hash: string): Promise<unknown> {
    const create = plan.create.slice(0, BURST);
    if (create.length === 0 && plan.delete.length === 0) return undefined;
    for (const p of plan.failed) {
      void this.recorder.event(
        ds,
        'Warning',
        'FailedDaemonPod',
        `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${targetNode(p)}, will try to kill it`,
      );
    }
    this.expectations.expect(
      key,
      create.length,
      plan.delete.map((p) => this.keyOf(p)),
    );
    let next = 0;
    const { ok, err } = await slowStartBatch(create.length, 1, () => this.createPod(ds, create[next++] as string, hash));
    for (let i = ok; i < create.length; i++) this.expectations.creationObserved(key);
    const results = await Promise.allSettled(plan.delete.map((p) => this.deletePod(ds, p)));
    let first = err;
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') continue;
      this.expectations.deletionObserved(key, this.keyOf(plan.delete[i] as Obj));
      if (!is(r.reason, 404, 409)) first ??= r.reason;
    }
    return first;
  }

  private async createPod(ds: Obj, node: string, hash: string): Promise<void> {
    try {
      const pod = await this.s.pods.create(ds.metadata.namespace as string, newDaemonPod(ds, node, hash), W());
      void this.recorder.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
    } catch (e) {
      void this.recorder.event(ds, 'Warning', 'FailedCreate', `Error creating: ${errText(e)}`);
      throw e;
    }
  }

  private async deletePod(ds: Obj, p: Obj): Promise<void> {
    try {
      await this.s.pods.delete(p.metadata.namespace as string, p.metadata.name as string, {
        dryRun: false,
        preconditions: { uid: p.metadata.uid as string },
      });
      void this.recorder.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
    } catch (e) {
      if (!is(e, 404, 409)) void this.recorder.event(ds, 'Warning', 'FailedDelete', `Error deleting: ${errText(e)}`);
      throw e;
    }
  }

  private async writeStatus(ds: Obj, s: DsStatus & { collisionCount: number }): Promise<void> {
    const cur = (ds.status ?? {}) as Record<string, unknown>;
    if ((Object.keys(s) as (keyof typeof s)[]).every((k) => intOr(cur[k], 0) === s[k])) return;
    const uid = ds.metadata.uid;
    try {
      await this.s.sets.updateFrom(ds.metadata.namespace as string, ds.metadata.name as string, 'status', W(), (c) => {
        if (c.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...c, status: { ...((c.status ?? {}) as Record<string, unknown>), ...s } };
      });
    } catch (e) {
      if (!is(e, 404)) throw e;
    }
  }
}
