/**
 * The taint eviction manager, as the reference's pkg/controller/tainteviction: a pod on a node
 * with NoExecute taints is deleted
 *   - at once, when some NoExecute taint is not tolerated by any of its tolerations;
 *   - else after the least tolerationSeconds of the tolerations matching the taints, counted from
 *     when the manager first saw the pod under them (tolerations without seconds: never);
 * and the deletion is cancelled when the taints go (or the pod comes to tolerate them forever).
 * Before the delete, the pod gets the DisruptionTarget condition (DeletionByTaintManager), and an
 * event TaintManagerEviction. Deletes use the pod's own grace period, as the reference's.
 * It follows the watch caches of nodes and pods and writes through the registry.
 */
import { isObject, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import { TimerQueue } from '../simulation/timers';
import type { WatchCache } from '../watch/cache';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export const taintsOf = (n: Obj): Taint[] => {
  const t = (n.spec as { taints?: Taint[] } | undefined)?.taints;
  return Array.isArray(t) ? t : [];
};

/** v1.Toleration.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  // Equal (the default) needs the key (an empty key only goes with Exists) and the value.
  return !!t.key && (t.value ?? '') === (taint.value ?? '');
}

/**
 * When a pod under `taints` (its node's NoExecute taints) is to be deleted: 0 at once, -1 never,
 * else milliseconds (getMatchingTolerations and getMinTolerationTime).
 */
export function evictionDelay(tolerations: Toleration[], taints: Taint[]): number {
  if (taints.length === 0) return -1;
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = tolerations.find((x) => tolerates(x, taint));
    if (!t) return 0;
    used.push(t);
  }
  let min = Number.POSITIVE_INFINITY;
  for (const t of used) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Number.POSITIVE_INFINITY ? -1 : min * 1000;
}

const WRITE = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'node-controller' });

export class TaintEviction {
  private readonly timers: TimerQueue;
  /** When each pod's eviction was first scheduled (the reference's scheduledEviction.CreatedAt). */
  private readonly scheduledAt = new Map<string, number>();
  /** The NoExecute taints of each node as last seen (keys/values/effects). */
  private readonly nodeTaints = new Map<string, string>();
  private readonly clock: () => number;
  private stopped = false;

  constructor(
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly nodeCache: WatchCache,
    private readonly nodePrefix: string,
    private readonly recorder: EventRecorder,
    private readonly opts: { clock?: () => number; log?: (msg: string) => void } = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.timers = new TimerQueue({ clock: this.clock });
  }

  async start(): Promise<void> {
    await Promise.all([this.podCache.start(), this.nodeCache.start()]);
    const n = this.nodeCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    const p = this.podCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of n.initial) this.onNode(c.obj, false);
    const follow = async (w: typeof n.watcher, f: (o: Obj, deleted: boolean) => void) => {
      while (!this.stopped && !w.ended) for (const e of await w.next(Number.POSITIVE_INFINITY)) f(e.obj, e.type === 'DELETED');
    };
    void follow(n.watcher, (o, d) => this.onNode(o, d));
    void follow(p.watcher, (o, d) => this.onPod(o, d));
  }

  stop(): void {
    this.stopped = true;
    this.timers.stop();
  }

  private noExecute(node: Obj): Taint[] {
    return taintsOf(node).filter((t) => t.effect === 'NoExecute');
  }

  private onNode(node: Obj, deleted: boolean): void {
    const name = node.metadata.name as string;
    const taints = deleted ? [] : this.noExecute(node);
    const sig = JSON.stringify(taints.map((t) => [t.key, t.value ?? '', t.effect]));
    if ((this.nodeTaints.get(name) ?? '[]') === sig) return;
    if (taints.length === 0) this.nodeTaints.delete(name);
    else this.nodeTaints.set(name, sig);
    for (const c of this.podsOn(name)) this.processPod(c, taints);
  }

  private podsOn(node: string): Obj[] {
    const indexed = this.podCache.listWhere('', 'spec.nodeName', node);
    const all = indexed ?? this.podCache.list().filter((c) => (c.obj.spec as { nodeName?: string } | undefined)?.nodeName === node);
    return all.map((c) => c.obj);
  }

  private onPod(pod: Obj, deleted: boolean): void {
    const key = this.pods.key(pod.metadata.namespace as string, pod.metadata.name as string);
    if (deleted) {
      this.cancel(key, undefined);
      return;
    }
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName || !this.nodeTaints.has(nodeName)) {
      if (this.scheduledAt.has(key)) this.cancel(key, pod);
      return;
    }
    const node = this.nodeCache.get(`${this.nodePrefix}${nodeName}`)?.obj;
    this.processPod(pod, node ? this.noExecute(node) : []);
  }

  private cancel(key: string, pod: Obj | undefined): void {
    if (!this.scheduledAt.has(key)) return;
    this.scheduledAt.delete(key);
    this.timers.cancel(key);
    if (pod)
      void this.recorder.event(
        pod,
        'Normal',
        'TaintManagerEviction',
        `Cancelling deletion of Pod ${pod.metadata.namespace}/${pod.metadata.name}`,
      );
  }

  private processPod(pod: Obj, taints: Taint[]): void {
    const ns = pod.metadata.namespace as string;
    const name = pod.metadata.name as string;
    const key = this.pods.key(ns, name);
    if (pod.metadata.deletionTimestamp) {
      this.scheduledAt.delete(key);
      this.timers.cancel(key);
      return;
    }
    const tolerations = ((pod.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? []) as Toleration[];
    const delay = evictionDelay(tolerations, taints);
    if (delay < 0) {
      this.cancel(key, pod);
      return;
    }
    const now = this.clock();
    const since = this.scheduledAt.get(key) ?? now;
    this.scheduledAt.set(key, since);
    const due = since + delay;
    if (this.timers.dueOf(key) === due) return;
    const uid = pod.metadata.uid as string;
    this.timers.schedule(key, due, () => void this.evict(key, ns, name, uid));
  }

  private async evict(key: string, ns: string, name: string, uid: string): Promise<void> {
    this.scheduledAt.delete(key);
    const cached = this.podCache.get(key)?.obj;
    if (!cached || cached.metadata.uid !== uid || cached.metadata.deletionTimestamp) return;
    void this.recorder.event(cached, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${ns}/${name}`);
    try {
      const stamp = new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await this.pods.updateFrom(ns, name, 'status', WRITE(), (cur) => {
        const st = (isObject(cur.status) ? cur.status : {}) as { conditions?: { type: string }[] };
        const conds = (st.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
        conds.push({
          type: 'DisruptionTarget',
          status: 'True',
          lastTransitionTime: stamp,
          reason: 'DeletionByTaintManager',
          message: 'Taint manager: deleting due to NoExecute taint',
        } as { type: string });
        return { ...cur, status: { ...st, conditions: conds } };
      });
      await this.pods.delete(ns, name, { dryRun: false, preconditions: { uid } });
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      this.opts.log?.(`taint eviction: pod ${ns}/${name}: ${String(e)}`);
    }
  }
}
