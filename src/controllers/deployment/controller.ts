/**
 * The Deployment controller, as the reference's pkg/controller/deployment: each Deployment's
 * pods run in ReplicaSets `<deployment>-<pod-template-hash>`, the newest one with the
 * Deployment's template, rolled to by the strategy (RollingUpdate: rolling.ts; Recreate:
 * recreate.ts), scaled proportionally while a rollout is under way (sync.ts), with revisions and
 * their cleanup (history.ts) and the Progressing/Available conditions (progress.ts). A paused
 * Deployment is only scaled. `kubectl rollout undo` writes an old ReplicaSet's template into the
 * Deployment (client-side), which makes that ReplicaSet the new one again, with a new revision.
 *
 * It follows the watch caches of Deployments, ReplicaSets and pods and writes through the
 * registry: ReplicaSets (create, update conditional on the version read, delete) and the
 * Deployment's status subresource, which takes its revision annotation too (as the reference's
 * deploymentStatusStrategy: no generation bump).
 */

import { clone, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { decodeStored } from '../../codec/stored';
import type { EventRecorder, EventType } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import { claim, controllerOf, labelsOf, selectorOf, writeOptions } from '../controller-utils';
import { OwnerIndex } from '../owner-index';
import { follow, followChanges, WorkQueue } from '../workqueue';
import { checkPausedConditions } from './progress';
import { rolloutRecreate } from './recreate';
import { rolloutRolling } from './rolling';
import { getAllReplicaSetsAndSyncRevision, isScalingEvent, syncDeploymentStatus, syncScaling } from './sync';
import type { Ops } from './util';
import { dspec, dstatus } from './util';

const W = () => writeOptions('deployment-controller');

export class DeploymentController implements Ops {
  private readonly queue: WorkQueue;
  /** The pods by controller (shared with the other controllers of pods). */
  private readonly index: OwnerIndex;
  /** The ReplicaSets by owning Deployment. */
  private readonly setIndex: OwnerIndex;
  private readonly follows: { stop(): void }[] = [];
  /** The annotations and status of each Deployment as last read or written (to skip no-op writes). */
  private readonly written = new WeakMap<Obj, { annotations: string; status: string }>();

  constructor(
    private readonly deployments: ResourceStore,
    private readonly deploymentCache: WatchCache,
    private readonly sets: ResourceStore,
    private readonly setCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly recorder: EventRecorder,
    private readonly opts: { log?: (msg: string) => void; clock?: () => number; index?: OwnerIndex } = {},
  ) {
    this.index = opts.index ?? new OwnerIndex(podCache, pods.prefix);
    this.setIndex = new OwnerIndex(setCache, sets.prefix);
    this.queue = new WorkQueue(
      (k) => this.syncDeployment(k),
      (m) => opts.log?.(`deployment controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.deploymentCache.start(), this.setCache.start(), this.podCache.start()]);
    await Promise.all([this.index.start(), this.setIndex.start()]);
    this.follows.push(
      follow(
        this.deploymentCache,
        (objs) => {
          for (const o of objs) this.queue.add(this.keyOf(o));
        },
        (o) => this.queue.add(this.keyOf(o)),
      ),
      follow(
        this.setCache,
        (objs) => {
          for (const rs of objs) this.onReplicaSet(rs);
        },
        (rs) => this.onReplicaSet(rs),
      ),
      followChanges(
        this.podCache,
        () => {},
        (p, type) => {
          // Recreate waits for the old pods to go.
          if (type !== 'DELETED') return;
          const ref = controllerOf(p);
          if (ref?.kind !== 'ReplicaSet') return;
          const rs = this.setCache.get(this.sets.key(p.metadata.namespace as string, ref.name))?.obj;
          if (rs) this.onReplicaSet(rs);
        },
      ),
    );
  }

  stop(): void {
    this.index.stop();
    this.setIndex.stop();
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private onReplicaSet(rs: Obj): void {
    const ns = rs.metadata.namespace as string;
    const ref = controllerOf(rs);
    if (ref) {
      if (ref.kind === 'Deployment') this.queue.add(`${ns}/${ref.name}`);
      return;
    }
    // An orphan: every Deployment that may adopt it.
    for (const c of this.deploymentCache.list(`${this.deployments.prefix}${ns}/`)) {
      if (selectorOf(c.obj)?.matches(labelsOf(rs))) this.queue.add(this.keyOf(c.obj));
    }
  }

  // --- Ops ---

  now(): number {
    return (this.opts.clock ?? Date.now)();
  }

  async updateRS(rs: Obj): Promise<void> {
    const out = await this.sets.update(rs.metadata.namespace as string, rs.metadata.name as string, rs, W(), '');
    for (const k of Object.keys(rs)) delete rs[k];
    Object.assign(rs, clone(out));
  }

  createRS(rs: Obj): Promise<Obj> {
    return this.sets.create(rs.metadata.namespace as string, clone(rs), W());
  }

  async getRS(namespace: string, name: string): Promise<Obj | undefined> {
    try {
      return decodeStored(await this.sets.get(namespace, name));
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  async deleteRS(rs: Obj): Promise<void> {
    try {
      await this.sets.delete(rs.metadata.namespace as string, rs.metadata.name as string, {
        dryRun: false,
        preconditions: { uid: rs.metadata.uid as string },
      });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  async writeDeployment(d: Obj): Promise<void> {
    const seen = this.written.get(d);
    const annotations = JSON.stringify(d.metadata.annotations ?? {});
    const status = JSON.stringify(d.status ?? {});
    const ns = d.metadata.namespace as string;
    const name = d.metadata.name as string;
    if (seen?.annotations !== annotations || seen?.status !== status) {
      const out = await this.deployments.update(ns, name, d, W(), 'status');
      d.metadata.resourceVersion = out.metadata.resourceVersion;
    }
    this.written.set(d, { annotations, status });
  }

  event(obj: Obj, type: EventType, reason: string, message: string): void {
    void this.recorder.event(obj, type, reason, message);
  }

  requeueAfter(d: Obj, ms: number): void {
    this.queue.after(this.keyOf(d), ms);
  }

  podsByRS(d: Obj, rss: Obj[]): Map<string, Obj[]> {
    const uids = new Set(rss.map((rs) => rs.metadata.uid as string));
    const out = new Map<string, Obj[]>();
    // From the owner index: each ReplicaSet's pods, not every pod of the namespace.
    for (const uid of uids) out.set(uid, this.index.owned(uid));
    return out;
  }

  // --- the sync ---

  private async syncDeployment(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const cached = this.deploymentCache.get(this.deployments.key(ns, key.slice(slash + 1)))?.obj;
    if (!cached) return;
    const d = clone(cached);
    dstatus(d);
    this.written.set(d, { annotations: JSON.stringify(d.metadata.annotations ?? {}), status: JSON.stringify(d.status ?? {}) });
    const sel = selectorOf(d);
    if (!sel) {
      this.opts.log?.(`deployment controller: ${key}: invalid selector`);
      return;
    }
    if (sel.empty) {
      this.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((dstatus(d).observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        dstatus(d).observedGeneration = d.metadata.generation;
        await this.writeDeployment(d);
      }
      return;
    }
    // Its ReplicaSets and the namespace's orphans (from the owner index of ReplicaSets).
    const candidates = this.setIndex.candidates(ns, d.metadata.uid as string);
    const name = d.metadata.name as string;
    const claimed = await claim(d, 'apps/v1', 'Deployment', sel, candidates, this.sets, W(), async () => {
      try {
        return decodeStored(await this.deployments.get(ns, name));
      } catch {
        return undefined;
      }
    });
    const rsList = claimed.map((rs) => clone(rs));
    if (d.metadata.deletionTimestamp) {
      const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(this, d, rsList, false);
      await syncDeploymentStatus(this, [...oldRSs, ...(newRS ? [newRS] : [])], newRS, d);
      return;
    }
    await checkPausedConditions(this, d);
    if (dspec(d).paused) return syncScaling(this, d, rsList);
    if (await isScalingEvent(this, d, rsList)) return syncScaling(this, d, rsList);
    if (dspec(d).strategy?.type === 'Recreate') return rolloutRecreate(this, d, rsList);
    return rolloutRolling(this, d, rsList);
  }
}
