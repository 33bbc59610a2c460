/**
 * The scheduling queue (the reference's PriorityQueue): pending pods wait in one of three places.
 *
 *   activeQ         ready to be tried: highest spec.priority first, then oldest
 *   backoffQ        failed recently: back to activeQ after 1 s, 2 s, 4 s ... at most 10 s
 *                   (podInitialBackoffSeconds 1, podMaxBackoffSeconds 10)
 *   unschedulable   no node fits: moved to activeQ (or backoffQ while backing off) by a cluster
 *                   event that may help it (a node added or changed, a pod deleted, a pod bound
 *                   for pods that failed on spread or affinity), or after 5 minutes at most
 *
 * A pod being scheduled is in flight: if a helpful event comes meanwhile and it then fails, it
 * goes to backoffQ rather than unschedulable (the reference's moveRequestCycle), so no event is
 * lost between the attempt and its outcome.
 */
import type { Plugin } from './filters';
import type { PodInfo } from './node-info';

export type ClusterEvent = 'NodeAdd' | 'NodeUpdate' | 'PodDelete' | 'AssignedPodAdd';

/** The failing plugins an event may turn around (the reference's queueing hints, coarsely). */
const HELPS: Record<ClusterEvent, ReadonlySet<Plugin> | 'all'> = {
  NodeAdd: 'all',
  NodeUpdate: 'all',
  PodDelete: new Set<Plugin>(['NodeResourcesFit', 'NodePorts', 'PodTopologySpread', 'InterPodAffinity']),
  AssignedPodAdd: new Set<Plugin>(['PodTopologySpread', 'InterPodAffinity']),
};

export interface QueuedPod {
  pod: PodInfo;
  attempts: number;
  /** When it entered the queue (ordering among equal priorities). */
  since: number;
  /** When its backoff ends (after a failure). */
  backoffUntil: number;
  /** The plugins that rejected it last time ('' none: e.g. there were no nodes). */
  plugins: Set<Plugin>;
  /** The scheduling cycle it was popped in. */
  cycle: number;
  unschedulableSince: number;
}

export interface QueueOptions {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a pod stays unschedulable without an event (podMaxInUnschedulablePodsDuration). */
  maxUnschedulableMs?: number;
  clock?: () => number;
}

/** A binary heap of queued pods keyed by pod key; removal is lazy (a stale entry is skipped). */
class Heap {
  private readonly items: QueuedPod[] = [];
  readonly live = new Map<string, QueuedPod>();

  constructor(private readonly less: (a: QueuedPod, b: QueuedPod) => boolean) {}

  push(q: QueuedPod): void {
    this.live.set(q.pod.key, q);
    const a = this.items;
    a.push(q);
    let i = a.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(a[i] as QueuedPod, a[up] as QueuedPod)) break;
      [a[i], a[up]] = [a[up] as QueuedPod, a[i] as QueuedPod];
      i = up;
    }
  }

  private popRaw(): QueuedPod | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l] as QueuedPod, a[m] as QueuedPod)) m = l;
        if (r < a.length && this.less(a[r] as QueuedPod, a[m] as QueuedPod)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as QueuedPod, a[i] as QueuedPod];
        i = m;
      }
    }
    return top;
  }

  /** The first live entry, left in place. */
  peek(): QueuedPod | undefined {
    for (;;) {
      const top = this.items[0];
      if (!top || this.live.get(top.pod.key) === top) return top;
      this.popRaw();
    }
  }

  pop(): QueuedPod | undefined {
    const top = this.peek();
    if (top) {
      this.popRaw();
      this.live.delete(top.pod.key);
    }
    return top;
  }

  delete(key: string): QueuedPod | undefined {
    const q = this.live.get(key);
    this.live.delete(key);
    return q;
  }

  get size(): number {
    return this.live.size;
  }
}

export class SchedulingQueue {
  private readonly active = new Heap((a, b) => (a.pod.priority !== b.pod.priority ? a.pod.priority > b.pod.priority : a.since < b.since));
  private readonly backoff = new Heap((a, b) => a.backoffUntil < b.backoffUntil);
  private readonly unschedulable = new Map<string, QueuedPod>();
  /** Unschedulable pods by a plugin that rejected them: an event that helps some plugins looks at their pods only. */
  private readonly byPlugin = new Map<Plugin, Map<string, QueuedPod>>();
  private readonly inFlight = new Map<string, QueuedPod>();
  private cycle = 0;
  private moveRequestCycle = -1;
  private waiter: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private readonly clock: () => number;
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private readonly maxUnschedulable: number;

  constructor(opts: QueueOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.initialBackoff = opts.initialBackoffMs ?? 1000;
    this.maxBackoff = opts.maxBackoffMs ?? 10_000;
    this.maxUnschedulable = opts.maxUnschedulableMs ?? 5 * 60_000;
  }

  /** Start the sweep of pods unschedulable for too long (not needed with a fake clock: call flush()). */
  start(): void {
    this.sweeper = setInterval(() => this.flush(), 30_000);
    this.sweeper.unref?.();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    this.wake();
  }

  /** Pods waiting, by place (tests and metrics). */
  sizes(): { active: number; backoff: number; unschedulable: number; inFlight: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size, inFlight: this.inFlight.size };
  }

  has(key: string): boolean {
    return this.active.live.has(key) || this.backoff.live.has(key) || this.unschedulable.has(key) || this.inFlight.has(key);
  }

  /** A new pending pod, or a pending pod changed (an unschedulable one is retried if its spec or labels changed). */
  addOrUpdate(p: PodInfo): void {
    const k = p.key;
    const flying = this.inFlight.get(k);
    if (flying) {
      flying.pod = p;
      return;
    }
    const queued = this.active.live.get(k) ?? this.backoff.live.get(k);
    if (queued) {
      queued.pod = p;
      return;
    }
    const waiting = this.unschedulable.get(k);
    if (waiting) {
      const changed = waiting.pod.signature !== p.signature;
      waiting.pod = p;
      if (changed) this.moveOne(waiting);
      return;
    }
    const now = this.clock();
    this.active.push({ pod: p, attempts: 0, since: now, backoffUntil: 0, plugins: new Set(), cycle: 0, unschedulableSince: 0 });
    this.wake();
  }

  delete(key: string): void {
    this.active.delete(key);
    this.backoff.delete(key);
    this.unpark(key);
    this.inFlight.delete(key);
  }

  private park(q: QueuedPod): void {
    this.unschedulable.set(q.pod.key, q);
    for (const p of q.plugins) {
      let m = this.byPlugin.get(p);
      if (!m) {
        m = new Map();
        this.byPlugin.set(p, m);
      }
      m.set(q.pod.key, q);
    }
  }

  private unpark(key: string): void {
    const q = this.unschedulable.get(key);
    if (!q) return;
    this.unschedulable.delete(key);
    for (const p of q.plugins) this.byPlugin.get(p)?.delete(key);
  }

  /** Forget the pods not in `keys` (after a resync of the pods' watch). */
  retain(keys: Set<string>): void {
    const all = [...this.active.live.keys(), ...this.backoff.live.keys(), ...this.unschedulable.keys(), ...this.inFlight.keys()];
    for (const k of all) if (!keys.has(k)) this.delete(k);
  }

  /** The next pod to try, without waiting (undefined: none ready). */
  tryPop(): QueuedPod | undefined {
    this.flushBackoff();
    const q = this.active.pop();
    if (!q) return undefined;
    q.cycle = ++this.cycle;
    q.attempts++;
    this.inFlight.set(q.pod.key, q);
    return q;
  }

  /** Resolves when a pod may be ready (or the queue closed). */
  wait(): Promise<void> {
    if (this.closed || this.active.size > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** The attempt ended (bound, or the pod is gone): forget it. */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /**
   * The attempt failed. `plugins` rejected it (unschedulable: it waits for an event), or with
   * `error` it failed otherwise (a write error: it backs off). Answers false if the pod left
   * meanwhile (deleted or bound).
   */
  requeue(q: QueuedPod, plugins: Set<Plugin> | 'error'): boolean {
    if (this.inFlight.get(q.pod.key) !== q) return false;
    this.inFlight.delete(q.pod.key);
    const now = this.clock();
    q.backoffUntil = now + Math.min(this.maxBackoff, this.initialBackoff * 2 ** Math.max(0, q.attempts - 1));
    if (plugins === 'error' || this.moveRequestCycle >= q.cycle) {
      this.backoff.push(q);
      this.armTimer();
      return true;
    }
    q.plugins = plugins;
    q.unschedulableSince = now;
    this.park(q);
    return true;
  }

  /** A cluster event: unschedulable pods it may help go to activeQ (or backoffQ). */
  onEvent(e: ClusterEvent): void {
    this.moveRequestCycle = this.cycle;
    if (this.unschedulable.size === 0) return;
    const helps = HELPS[e];
    if (helps === 'all') {
      for (const q of [...this.unschedulable.values()]) this.moveOne(q);
      return;
    }
    const moving = new Set<QueuedPod>();
    for (const p of helps) for (const q of this.byPlugin.get(p)?.values() ?? []) moving.add(q);
    for (const q of moving) this.moveOne(q);
  }

  /** Move pods unschedulable for longer than maxUnschedulableMs; release expired backoffs. */
  flush(): void {
    const now = this.clock();
    for (const q of [...this.unschedulable.values()]) if (now - q.unschedulableSince >= this.maxUnschedulable) this.moveOne(q);
    this.flushBackoff();
  }

  private moveOne(q: QueuedPod): void {
    this.unpark(q.pod.key);
    if (q.backoffUntil > this.clock()) {
      this.backoff.push(q);
      this.armTimer();
    } else {
      this.active.push(q);
      this.wake();
    }
  }

  private flushBackoff(): void {
    const now = this.clock();
    let moved = false;
    for (let q = this.backoff.peek(); q && q.backoffUntil <= now; q = this.backoff.peek()) {
      this.backoff.pop();
      this.active.push(q);
      moved = true;
    }
    if (moved) this.wake();
  }

  private armTimer(): void {
    if (this.closed) return;
    const next = this.backoff.peek();
    if (!next) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flushBackoff();
        this.armTimer();
      },
      Math.max(0, next.backoffUntil - this.clock()),
    );
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}
