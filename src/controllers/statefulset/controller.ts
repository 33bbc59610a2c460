/**
 * The StatefulSet controller, as the reference's pkg/controller/statefulset: each StatefulSet's
 * pods `<set>-<ordinal>` are claimed (orphans its selector matches adopted), its revisions
 * (ControllerRevisions `<set>-<hash>`, revisions.ts) give the current and update templates, the
 * pods are brought toward the spec (control.ts), history beyond revisionHistoryLimit is
 * truncated, and the status written (replicas, ready, current, updated, available, the two
 * revisions, collisionCount, observedGeneration). Events as the reference's StatefulPodControl:
 * SuccessfulCreate "create Pod web-0 in StatefulSet web successful", FailedCreate, SuccessfulDelete,
 * FailedDelete, and the same for claims.
 *
 * It follows the watch caches of StatefulSets, pods, ControllerRevisions and claims and writes
 * through the registry.
 */

import { clone, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { decodeStored } from '../../codec/stored';
import type { EventRecorder } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import { availableAt, claim, computeHash, controllerOf, intOr, labelsOf, selectorOf, writeOptions } from '../controller-utils';
import { OwnerIndex } from '../owner-index';
import {
  createRevision,
  equalRevision,
  newRevision,
  nextRevision,
  ownedRevisions,
  type RevisionStore,
  renumberRevision,
  revisionTemplate,
  templatePatch,
  truncateHistory,
} from '../revisions';
import { follow, followChanges, WorkQueue } from '../workqueue';
import { completeRollingUpdate, type Revisions, type SetOps, updateStatefulSet } from './control';
import { claimOwnerRefs, ordinalOf, podClaims, podRevision, type SetStatus, sspec } from './identity';

const W = () => writeOptions('statefulset-controller');
const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const is = (e: unknown, ...codes: number[]): boolean => e instanceof StatusError && codes.includes(e.code);

export interface StatefulSetStores {
  sets: ResourceStore;
  pods: ResourceStore;
  revisions: ResourceStore;
  claims: ResourceStore;
}

export class StatefulSetController implements SetOps {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  private readonly setCache: WatchCache;
  private readonly podCache: WatchCache;
  private readonly claimCache: WatchCache;
  private readonly revs: RevisionStore;
  /** The pods by controller uid (shared with the other pod controllers): a sync reads its own pods and the orphans. */
  private readonly index: OwnerIndex;

  constructor(
    private readonly s: StatefulSetStores,
    private readonly recorder: EventRecorder,
    private readonly opts: { log?: (msg: string) => void; index?: OwnerIndex } = {},
  ) {
    this.index = opts.index ?? new OwnerIndex(s.pods.watchCache(), s.pods.prefix);
    this.setCache = s.sets.watchCache();
    this.podCache = s.pods.watchCache();
    this.claimCache = s.claims.watchCache();
    this.revs = { store: s.revisions, cache: s.revisions.watchCache(), w: W };
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`statefulset controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.index.start(), this.setCache.start(), this.podCache.start(), this.claimCache.start(), this.revs.cache.start()]);
    this.follows.push(
      follow(
        this.setCache,
        (objs) => {
          for (const o of objs) this.queue.add(this.keyOf(o));
        },
        (o) => this.queue.add(this.keyOf(o)),
      ),
      followChanges(
        this.podCache,
        () => {},
        (p, type) => this.onPod(p, type),
      ),
    );
  }

  stop(): void {
    this.index.stop();
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  now(): number {
    return Date.now();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private onPod(p: Obj, type: string): void {
    const ns = p.metadata.namespace as string;
    const ref = controllerOf(p);
    if (ref) {
      if (ref.kind === 'StatefulSet') this.queue.add(`${ns}/${ref.name}`);
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
    if (!cached) return;
    const set = clone(cached);
    const sel = selectorOf(set);
    if (!sel || sel.empty) {
      this.opts.log?.(`statefulset controller: ${key}: invalid selector`);
      return;
    }
    const candidates = this.index.candidates(ns, set.metadata.uid as string).filter((p) => ordinalOf(set, p) >= 0);
    const pods = await claim(set, 'apps/v1', 'StatefulSet', sel, candidates, this.s.pods, W(), this.fresh(ns, name));
    const revisions = await ownedRevisions(this.revs, set, 'StatefulSet', this.fresh(ns, name));
    const { current, update, collisionCount } = await this.setRevisions(set, revisions);
    const revs: Revisions = {
      current: { name: current.metadata.name as string, template: revisionTemplate(current) },
      update: { name: update.metadata.name as string, template: revisionTemplate(update) },
    };
    const status = await updateStatefulSet(this, set, revs, pods);
    status.collisionCount = collisionCount;
    completeRollingUpdate(set, status);
    await this.writeStatus(set, status);
    const live = new Set<string>([status.currentRevision, status.updateRevision, ...pods.map(podRevision)]);
    await truncateHistory(this.revs, [...revisions, update], live, intOr(sspec(set).revisionHistoryLimit, 10));
    // A pod Ready but not yet available (minReadySeconds): sync again then.
    const minReady = intOr(sspec(set).minReadySeconds, 0);
    const now = Date.now();
    const next = pods.map((p) => availableAt(p, minReady, now)).filter((t): t is number => t !== undefined);
    if (next.length > 0) this.queue.after(key, Math.min(...next) - now + 50);
  }

  /** getStatefulSetRevisions: the current revision (status.currentRevision) and the update revision (the spec's template). */
  private async setRevisions(set: Obj, revisions: Obj[]): Promise<{ current: Obj; update: Obj; collisionCount: number }> {
    const st = (set.status ?? {}) as { collisionCount?: number; currentRevision?: string };
    let collisionCount = intOr(st.collisionCount, 0);
    const data = templatePatch(set);
    const candidate = newRevision(set, 'StatefulSet', data, nextRevision(revisions));
    const equal = revisions.filter((r) => equalRevision(r, candidate));
    let update: Obj;
    const last = equal[equal.length - 1];
    if (last && last === revisions[revisions.length - 1]) update = last;
    else if (last) update = await renumberRevision(this.revs, last, nextRevision(revisions));
    else {
      const out = await createRevision(this.revs, set, candidate, collisionCount, (cc) => computeHash(data, cc));
      update = out.rev;
      collisionCount = out.collisionCount;
    }
    const current = revisions.find((r) => r.metadata.name === st.currentRevision) ?? update;
    return { current, update, collisionCount };
  }

  private async writeStatus(set: Obj, s: SetStatus): Promise<void> {
    const cur = (set.status ?? {}) as Record<string, unknown>;
    if ((Object.keys(s) as (keyof SetStatus)[]).every((k) => (cur[k] ?? (typeof s[k] === 'number' ? 0 : '')) === s[k])) return;
    const uid = set.metadata.uid;
    try {
      await this.s.sets.updateFrom(set.metadata.namespace as string, set.metadata.name as string, 'status', W(), (c) => {
        if (c.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...c, status: { ...((c.status ?? {}) as Record<string, unknown>), ...s } };
      });
    } catch (e) {
      if (!is(e, 404)) throw e;
    }
  }

  private event(set: Obj, ok: boolean, verb: string, what: string, e?: unknown): void {
    const reason = `${ok ? 'Successful' : 'Failed'}${verb[0]?.toUpperCase()}${verb.slice(1)}`;
    const msg = ok
      ? `${verb} ${what} in StatefulSet ${set.metadata.name} successful`
      : `${verb} ${what} in StatefulSet ${set.metadata.name} failed error: ${errText(e)}`;
    void this.recorder.event(set, ok ? 'Normal' : 'Warning', reason, msg);
  }

  // --- SetOps ---

  async createPod(set: Obj, pod: Obj, ord: number): Promise<boolean> {
    const ns = set.metadata.namespace as string;
    for (const c of podClaims(set, ord).values()) {
      const cname = c.metadata.name as string;
      const existing = this.claimCache.get(this.s.claims.key(ns, cname))?.obj;
      if (existing) {
        if (existing.metadata.deletionTimestamp) throw new StatusError(409, 'Conflict', `pvc ${cname} is being deleted`);
        continue;
      }
      const refs = claimOwnerRefs(set, undefined, ord, c);
      if (refs) c.metadata.ownerReferences = refs;
      try {
        await this.s.claims.create(ns, c, W());
        void this.recorder.event(
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${cname} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`,
        );
      } catch (e) {
        if (is(e, 409)) continue;
        void this.recorder.event(
          set,
          'Warning',
          'FailedCreate',
          `create Claim ${cname} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errText(e)}`,
        );
        throw e;
      }
    }
    try {
      await this.s.pods.create(ns, pod, W());
      this.event(set, true, 'create', `Pod ${pod.metadata.name}`);
      return true;
    } catch (e) {
      if (is(e, 409)) return false;
      this.event(set, false, 'create', `Pod ${pod.metadata.name}`, e);
      throw e;
    }
  }

  async deletePod(set: Obj, pod: Obj): Promise<void> {
    try {
      await this.s.pods.delete(pod.metadata.namespace as string, pod.metadata.name as string, {
        dryRun: false,
        preconditions: { uid: pod.metadata.uid as string },
      });
      this.event(set, true, 'delete', `Pod ${pod.metadata.name}`);
    } catch (e) {
      if (is(e, 404, 409)) return;
      this.event(set, false, 'delete', `Pod ${pod.metadata.name}`, e);
      throw e;
    }
  }

  async updatePod(set: Obj, pod: Obj): Promise<void> {
    try {
      await this.s.pods.update(pod.metadata.namespace as string, pod.metadata.name as string, pod, W(), '');
      this.event(set, true, 'update', `Pod ${pod.metadata.name}`);
    } catch (e) {
      if (is(e, 404, 409)) return;
      this.event(set, false, 'update', `Pod ${pod.metadata.name}`, e);
      throw e;
    }
  }

  async syncClaims(set: Obj, pod: Obj, ord: number): Promise<void> {
    const ns = set.metadata.namespace as string;
    for (const c of podClaims(set, ord).values()) {
      const existing = this.claimCache.get(this.s.claims.key(ns, c.metadata.name as string))?.obj;
      if (!existing || existing.metadata.deletionTimestamp || !claimOwnerRefs(set, pod, ord, existing)) continue;
      try {
        await this.s.claims.updateFrom(ns, c.metadata.name as string, '', W(), (cur) => {
          const refs = claimOwnerRefs(set, pod, ord, cur as Obj);
          if (!refs) return cur;
          const meta: Obj['metadata'] = { ...cur.metadata, ownerReferences: refs };
          if (refs.length === 0) delete meta.ownerReferences;
          return { ...cur, metadata: meta };
        });
      } catch (e) {
        if (!is(e, 404)) throw e;
      }
    }
  }
}
