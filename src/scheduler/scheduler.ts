/**
 * The scheduler (issue 36 item 3): binds pending pods of `default-scheduler` (or no
 * schedulerName) to nodes as the reference's kube-scheduler with its default profile.
 *
 *   pods, nodes watch caches ──▶ ClusterCache (bound and assumed pods per node)
 *                          └──▶ SchedulingQueue (pending pods)
 *   loop: pop ──▶ Algorithm.schedule (filters, scores) ──▶ assume ──▶ pods/binding (async)
 *                     └─ no node fits ──▶ preemption ──▶ PodScheduled=False, FailedScheduling,
 *                                                       victims deleted, nominatedNodeName
 *
 * PodDisruptionBudgets, Services, ReplicationControllers, ReplicaSets and StatefulSets come
 * from their watch caches too (ClusterObjects: preemption's budgets, default spreading).
 *
 * It reads only the watch caches and writes only through the registry (bindPod, the status
 * subresource, deletes, events), so it runs on either store backend; the controllers' builder
 * runs it on the leader replica only. In-process writes do not pass through APF, so they take
 * nothing from user traffic's share.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { bindPod } from '../registry/binding';
import type { EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { eachInSlices, sharedObjects } from '../watch/slices';
import type { Watcher } from '../watch/watcher';
import { type ClusterObjects, NO_OBJECTS } from './cluster-objects';
import type { Plugin } from './filters';
import { Algorithm } from './framework';
import { ClusterCache, type PodInfo, podInfo } from './node-info';
import { preempt } from './preemption';
import { type QueuedPod, SchedulingQueue } from './queue';

export const DEFAULT_SCHEDULER = 'default-scheduler';

export interface SchedulerOptions {
  /** The schedulerName this scheduler serves. */
  name?: string;
  /** 0: the reference's adaptive percentage. */
  percentageOfNodesToScore?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Binds in flight at once (the loop waits beyond). */
  maxBindsInFlight?: number;
  random?: () => number;
  log?: (msg: string) => void;
  /** PodDisruptionBudgets (preemption) and Services and controllers (default spreading); none when unset. */
  objects?: ClusterObjects & { start?(): Promise<void> };
}

/** What the scheduler did (tests, the bench). */
export interface SchedulerStats {
  attempts: number;
  bound: number;
  unschedulable: number;
  bindErrors: number;
  preemptions: number;
  /** Milliseconds spent in scheduling attempts (filters, scores, preemption), not in writes. */
  algorithmMs: number;
}

const W: WriteOptions = { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: DEFAULT_SCHEDULER };
const w = (): WriteOptions => ({ ...W, warnings: [] });

const stamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The pod as an event's involved object. */
const ref = (p: PodInfo): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: p.name, namespace: p.namespace, uid: p.uid, resourceVersion: p.resourceVersion },
});

type Condition = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string | null };

/** Set a condition on a pod's status (lastTransitionTime kept unless the status changes). */
function withCondition(cur: Readonly<Obj>, c: Condition, nominated?: string): Obj {
  const next = structuredClone(cur) as Obj;
  const status = (next.status ?? {}) as { conditions?: Condition[]; nominatedNodeName?: string };
  const conditions = status.conditions ?? [];
  const at = conditions.findIndex((x) => x.type === c.type);
  const old = conditions[at];
  const cond = { ...c, lastProbeTime: null, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : stamp() };
  if (at < 0) conditions.push(cond);
  else conditions[at] = cond;
  status.conditions = conditions;
  if (nominated !== undefined) {
    if (nominated) status.nominatedNodeName = nominated;
    else delete status.nominatedNodeName;
  }
  next.status = status;
  return next;
}

export class Scheduler {
  readonly cache = new ClusterCache();
  readonly queue: SchedulingQueue;
  readonly stats: SchedulerStats = { attempts: 0, bound: 0, unschedulable: 0, bindErrors: 0, preemptions: 0, algorithmMs: 0 };
  private readonly algorithm: Algorithm;
  private readonly objects: ClusterObjects & { start?(): Promise<void> };
  private readonly name: string;
  private readonly log: (msg: string) => void;
  private readonly random: () => number;
  private readonly watchers: Watcher[] = [];
  /** The PodScheduled condition we last wrote per pending pod (no rewrite of the same). */
  private readonly written = new Map<string, string>();
  private stopped = false;
  private binds = 0;
  private bindSlot: (() => void) | undefined;

  constructor(
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly nodeCache: WatchCache,
    private readonly recorder: EventRecorder,
    private readonly opts: SchedulerOptions = {},
  ) {
    this.name = opts.name ?? DEFAULT_SCHEDULER;
    this.log = opts.log ?? (() => {});
    this.random = opts.random ?? Math.random;
    this.queue = new SchedulingQueue({ initialBackoffMs: opts.initialBackoffMs, maxBackoffMs: opts.maxBackoffMs });
    this.objects = opts.objects ?? NO_OBJECTS;
    this.algorithm = new Algorithm(this.cache, {
      percentageOfNodesToScore: opts.percentageOfNodesToScore,
      random: this.random,
      objects: this.objects,
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.nodeCache.start(), this.podCache.start(), this.objects.start?.()]);
    // Nodes first: the pods' initial events then find their nodes; the queue runs once both are in.
    await this.follow(
      this.nodeCache,
      (type, o) => this.onNode(type, o),
      (names) => this.resyncNodes(names),
    );
    await this.follow(
      this.podCache,
      (type, o) => this.onPod(type, o),
      (keys) => this.resyncPods(keys),
    );
    this.queue.start();
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.queue.close();
    for (const x of this.watchers) x.end('closed');
  }

  /**
   * Watch a cache from now (its objects as ADDED), again after the watcher ends (a slow or reset
   * watch: resync). The objects present are the cache's shared parses (read-only, as events'
   * objects are), parsed and taken in slices that let other requests in (watch/slices.ts): a
   * dozen followers each parsing 100k pods anew held a restart's event loop for 24 s, and the
   * scheduler's own pass over them 1.2 s more. Resolves once they are all taken in.
   */
  private async follow(cache: WatchCache, on: (type: string, o: Obj) => void, resync: (names: Set<string>) => void): Promise<void> {
    const { watcher, initial } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    this.watchers.push(watcher);
    const seen = new Set<string>();
    const stopped = (): boolean => this.stopped;
    const parsed = sharedObjects(initial, stopped);
    const objs = parsed instanceof Promise ? await parsed : parsed;
    const taken = eachInSlices(
      objs,
      (o) => {
        seen.add(o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? ''));
        on('ADDED', o);
      },
      stopped,
    );
    if (taken) await taken;
    if (this.stopped) return;
    resync(seen);
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
          try {
            on(e.type, e.obj);
          } catch (err) {
            this.log(`scheduler: event on ${e.obj.metadata.name}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }
      if (this.stopped) return;
      this.log(`scheduler: watch ended (${watcher.ended}), resyncing`);
      this.watchers.splice(this.watchers.indexOf(watcher), 1);
      await this.follow(cache, on, resync);
    })();
  }

  private resyncNodes(names: Set<string>): void {
    for (const name of [...this.cache.order]) if (!names.has(name)) this.cache.removeNode(name);
  }

  private resyncPods(keys: Set<string>): void {
    this.queue.retain(keys);
    for (const n of [...this.cache.nodes.values()]) {
      for (const k of [...n.pods.keys()]) if (!keys.has(k) && !this.cache.isAssumed(k)) this.cache.removePod(k);
    }
  }

  private onNode(type: string, o: Obj): void {
    if (type === 'DELETED') {
      this.cache.removeNode(o.metadata.name ?? '');
      return;
    }
    const added = !this.cache.nodes.get(o.metadata.name ?? '')?.present;
    if (this.cache.setNode(o)) this.queue.onEvent(added ? 'NodeAdd' : 'NodeUpdate');
  }

  private onPod(type: string, o: Obj): void {
    const p = podInfo(o);
    if (type === 'DELETED') {
      this.forgetPending(p);
      if (this.cache.removePod(p.key)) this.queue.onEvent('PodDelete');
      return;
    }
    if (p.nodeName) {
      this.forgetPending(p);
      if (p.terminal) {
        if (this.cache.removePod(p.key)) this.queue.onEvent('PodDelete');
        return;
      }
      const isNew = !this.cache.hasPod(p.key) || this.cache.isAssumed(p.key);
      this.cache.addPod(p);
      if (isNew) this.queue.onEvent('AssignedPodAdd');
      return;
    }
    if (p.schedulerName !== this.name) return;
    if (p.deleting || p.terminal || p.gated) {
      this.forgetPending(p);
      return;
    }
    // Older than our bind of it: the bound version follows.
    if (this.cache.isAssumed(p.key)) return;
    this.cache.nominate(p, p.nominatedNodeName);
    this.queue.addOrUpdate(p);
  }

  private forgetPending(p: PodInfo): void {
    this.queue.delete(p.key);
    this.cache.nominate(p, '');
    this.written.delete(p.key);
  }

  /** The loop: pods one at a time; it yields to the event loop every few milliseconds. */
  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.queue.wait();
      const began = performance.now();
      for (let q = this.queue.tryPop(); q && !this.stopped; q = this.queue.tryPop()) {
        this.scheduleOne(q);
        if (this.binds >= (this.opts.maxBindsInFlight ?? 256)) {
          await new Promise<void>((resolve) => {
            this.bindSlot = resolve;
          });
        }
        if (performance.now() - began > 10) break;
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private scheduleOne(q: QueuedPod): void {
    const p = q.pod;
    if (p.deleting || this.cache.hasPod(p.key)) {
      this.queue.done(p.key);
      return;
    }
    this.stats.attempts++;
    const t0 = performance.now();
    const attempt = this.algorithm.schedule(p);
    if (attempt.node !== undefined) {
      this.stats.algorithmMs += performance.now() - t0;
      this.cache.assume(p, attempt.node);
      void this.bind(q, attempt.node);
      return;
    }
    // No nodes at all: the pod waits for one without a word. The reference writes "no nodes
    // available to schedule pods" here; a server without Node objects is used as a plain API
    // server (pods as data, by clients and tests that make every write themselves), and the
    // scheduler stays out of its way until the first node is registered.
    if (attempt.numAllNodes === 0) {
      this.stats.algorithmMs += performance.now() - t0;
      this.queue.requeue(q, new Set());
      return;
    }
    // No node fits: preemption may make room on one.
    let message = attempt.message;
    let nominated: string | undefined;
    let victims: PodInfo[] = [];
    if (attempt.state) {
      const outcome = preempt(p, attempt.statuses, attempt.state, this.cache, this.random, () => this.objects.budgets());
      if (outcome.plan) {
        nominated = outcome.plan.node;
        victims = outcome.plan.victims;
      } else {
        message = `${attempt.message} preemption: ${outcome.message}`;
        // No candidate: the nomination goes; not eligible (yet): it stays (the reference's nominatingInfo).
        if (p.nominatedNodeName && outcome.eligible) nominated = '';
      }
    }
    this.stats.algorithmMs += performance.now() - t0;
    this.stats.unschedulable++;
    const plugins = new Set<Plugin>();
    for (const s of attempt.statuses.values()) plugins.add(s.plugin);
    if (nominated) {
      this.cache.nominate(p, nominated);
      this.stats.preemptions++;
    }
    this.queue.requeue(q, plugins);
    void this.failed(p, message, nominated, victims);
  }

  private async bind(q: QueuedPod, node: string): Promise<void> {
    const p = q.pod;
    this.binds++;
    try {
      await bindPod(this.pods, p.namespace, p.name, { metadata: { name: p.name, uid: p.uid }, target: { kind: 'Node', name: node } }, w());
      this.stats.bound++;
      this.queue.done(p.key);
      this.written.delete(p.key);
      void this.recorder.event(ref(p), 'Normal', 'Scheduled', `Successfully assigned ${p.namespace}/${p.name} to ${node}`);
    } catch (e) {
      this.stats.bindErrors++;
      const why = e instanceof Error ? e.message : String(e);
      this.log(`scheduler: binding ${p.key} to ${node}: ${why}`);
      if (this.cache.isAssumed(p.key)) this.cache.removePod(p.key);
      // Gone (its DELETED event may have been missed in a resync): nothing to retry.
      if (e instanceof StatusError && e.code === 404) {
        this.queue.done(p.key);
        return;
      }
      this.queue.requeue(q, 'error');
      void this.recorder.event(ref(p), 'Warning', 'FailedScheduling', `Binding rejected: ${why}`);
    } finally {
      this.binds--;
      const slot = this.bindSlot;
      this.bindSlot = undefined;
      slot?.();
    }
  }

  /** PodScheduled=False (Unschedulable) with the message, FailedScheduling, and the preemption's writes. */
  private async failed(p: PodInfo, message: string, nominated: string | undefined, victims: PodInfo[]): Promise<void> {
    void this.recorder.event(ref(p), 'Warning', 'FailedScheduling', message);
    const cond = `${message}\u0000${nominated ?? p.nominatedNodeName}`;
    if (this.written.get(p.key) !== cond) {
      this.written.set(p.key, cond);
      try {
        await this.pods.updateFrom(p.namespace, p.name, 'status', w(), (cur) => {
          if (cur.metadata.uid !== p.uid || (cur.spec as { nodeName?: string } | undefined)?.nodeName) throw new Error('the pod changed');
          return withCondition(cur, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }, nominated);
        });
      } catch (e) {
        this.written.delete(p.key);
        this.log(`scheduler: status of ${p.key}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (!nominated) return;
    for (const v of victims) void this.evict(v, p, nominated);
    // Lower-priority pods nominated to the node lose the nomination (the room is this pod's).
    for (const other of [...this.cache.nominatedTo(nominated)]) {
      if (other.priority >= p.priority) continue;
      this.cache.nominate(other, '');
      void this.pods
        .updateFrom(other.namespace, other.name, 'status', w(), (cur) => {
          const next = structuredClone(cur) as Obj;
          delete (next.status as { nominatedNodeName?: string }).nominatedNodeName;
          return next;
        })
        .catch(() => {});
    }
  }

  /** A victim: DisruptionTarget condition, the Preempted event, then deleted through the registry. */
  private async evict(v: PodInfo, by: PodInfo, node: string): Promise<void> {
    try {
      await this.pods
        .updateFrom(v.namespace, v.name, 'status', w(), (cur) =>
          withCondition(cur, {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'PreemptionByScheduler',
            message: `${this.name}: preempting to accommodate a higher priority pod`,
          }),
        )
        .catch(() => {});
      void this.recorder.event(ref(v), 'Normal', 'Preempted', `Preempted by pod ${by.uid} on node ${node}`);
      await this.pods.delete(v.namespace, v.name, { dryRun: false, preconditions: { uid: v.uid } });
    } catch (e) {
      this.log(`scheduler: preempting ${v.key}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
