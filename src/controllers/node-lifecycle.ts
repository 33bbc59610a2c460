/**
 * The node lifecycle controller, as the reference's pkg/controller/nodelifecycle (with the taint
 * manager in taint-eviction.ts). Every --node-monitor-period it looks at each node:
 *
 *   health   a node is heard from when its Ready condition's lastHeartbeatTime or its Lease's
 *            renewTime changes (the time is this controller's, as the reference's probe
 *            timestamps, so clock skew does not matter). Silent for --node-monitor-grace-period
 *            (--node-startup-grace-period before its first status), its conditions become
 *            Unknown: "Kubelet stopped posting node status." (NodeStatusUnknown), or "Kubelet
 *            never posted node status." (NodeStatusNeverUpdated).
 *   taints   NoSchedule from the conditions (TaintNodesByCondition): Ready False → not-ready,
 *            Unknown → unreachable, MemoryPressure/DiskPressure/PIDPressure True → their own,
 *            spec.unschedulable → unschedulable. NoExecute: not-ready or unreachable as Ready
 *            says; added through the zone's rate limiter (--node-eviction-rate nodes/s, burst
 *            1), swapped or removed at once.
 *   zones    per topology.kubernetes.io/zone: FullDisruption (no Ready node), PartialDisruption
 *            (more than 2 not Ready and at least --unhealthy-zone-threshold of them), Normal.
 *            A partially disrupted zone is tainted at --secondary-node-eviction-rate (0 in zones
 *            of at most --large-cluster-size-threshold nodes); when every zone is fully
 *            disrupted, no NoExecute taint is added and those present are removed (the
 *            reference's "master disruption mode").
 *
 * When a node goes Unknown, its pods get Ready=False (MarkPodsNotReady) and the node an event
 * NodeNotReady. Simplified: one token bucket per zone replaces the reference's timed queues.
 */
import { isObject, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { type Taint, taintsOf } from './taint-eviction';

export interface NodeLifecycleOptions {
  monitorPeriodMs: number;
  gracePeriodMs: number;
  startupGracePeriodMs: number;
  evictionRate: number;
  secondaryEvictionRate: number;
  unhealthyZoneThreshold: number;
  largeClusterThreshold: number;
  clock?: () => number;
  log?: (msg: string) => void;
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const CONDITION_TAINTS: Record<string, string> = {
  MemoryPressure: 'node.kubernetes.io/memory-pressure',
  DiskPressure: 'node.kubernetes.io/disk-pressure',
  PIDPressure: 'node.kubernetes.io/pid-pressure',
};
/** The taints this controller owns (others' taints are left alone). */
const OWNED = new Set([NOT_READY, UNREACHABLE, 'node.kubernetes.io/unschedulable', ...Object.values(CONDITION_TAINTS)]);
const WATCHED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
const LEASE_NAMESPACE = 'kube-node-lease';
/** How often queued NoExecute taints are tried (the reference's NodeEvictionPeriod). */
const TAINT_PERIOD_MS = 100;

/**
 * What the controller knows of a node. A pass decodes a node only when its revision moved (or
 * its grace period ran out): with 5,000 nodes, most passes read revisions only.
 */
interface Health {
  /** When the node was last heard from (this controller's clock). */
  probe: number;
  heartbeat: string;
  nodeRv: number;
  leaseRv: number;
  /** The Ready status the last full look answered, and the node's zone. */
  ready: string;
  zone: string;
  hasReady: boolean;
  /** The last full look found nothing to write. */
  settled: boolean;
  /** Its conditions are Unknown already (nothing more to do until it reports). */
  marked: boolean;
}

interface Condition {
  type: string;
  status: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

interface Zone {
  tokens: number;
  last: number;
  rate: number;
  /** Nodes waiting for their NoExecute taint, in order. */
  queue: Map<string, string>;
}

const conditionsOf = (n: Obj): Condition[] => {
  const c = isObject(n.status) ? n.status.conditions : undefined;
  return Array.isArray(c) ? (c as Condition[]) : [];
};
const zoneOf = (n: Obj): string =>
  n.metadata.labels?.['topology.kubernetes.io/zone'] ?? n.metadata.labels?.['failure-domain.beta.kubernetes.io/zone'] ?? '';
const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const WRITE = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'node-controller' });

export class NodeLifecycleController {
  private readonly health = new Map<string, Health>();
  private readonly zones = new Map<string, Zone>();
  private readonly clock: () => number;
  private timers: ReturnType<typeof setInterval>[] = [];
  private running = false;

  constructor(
    private readonly nodes: ResourceStore,
    private readonly nodeCache: WatchCache,
    private readonly leaseCache: WatchCache,
    private readonly leasePrefix: string,
    private readonly recorder: EventRecorder,
    private readonly opts: NodeLifecycleOptions,
    /** The pods, to mark those of a lost node not ready. */
    private readonly pods?: { store: ResourceStore; cache: WatchCache },
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  async start(): Promise<void> {
    await Promise.all([this.nodeCache.start(), this.leaseCache.start()]);
    const monitor = setInterval(() => void this.monitor(), this.opts.monitorPeriodMs);
    const taint = setInterval(() => this.taintPass(), TAINT_PERIOD_MS);
    monitor.unref();
    taint.unref();
    this.timers = [monitor, taint];
    await this.monitor();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /** One pass over the nodes; passes do not overlap. */
  async monitor(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const now = this.clock();
      const seen = new Set<string>();
      const byZone = new Map<string, { ready: number; notReady: number; total: number }>();
      const work: Promise<void>[] = [];
      const disruption = this.allDisrupted;
      for (const c of this.nodeCache.list()) {
        const name = c.key.slice(this.nodes.prefix.length);
        seen.add(name);
        const leaseRv = this.leaseCache.get(`${this.leasePrefix}${LEASE_NAMESPACE}/${name}`)?.rv ?? 0;
        let h = this.health.get(name);
        // Its Lease's only writer is its kubelet: a new revision is a renewal.
        if (h && leaseRv !== h.leaseRv) {
          h.leaseRv = leaseRv;
          if (leaseRv !== 0) h.probe = now;
        }
        const grace = h?.hasReady ? this.opts.gracePeriodMs : this.opts.startupGracePeriodMs;
        const quiet = h?.settled && h.nodeRv === c.rv && (h.marked || now - h.probe <= grace);
        if (!h || !quiet || this.lastDisrupted !== disruption) {
          h = this.observe(c.obj, c.rv, leaseRv, now, h, work);
          const before = work.length;
          this.reconcileTaints(c.obj, h.ready, work);
          h.settled = h.settled && work.length === before;
        }
        let counts = byZone.get(h.zone);
        if (!counts) {
          counts = { ready: 0, notReady: 0, total: 0 };
          byZone.set(h.zone, counts);
        }
        counts.total++;
        if (h.ready === 'True') counts.ready++;
        else counts.notReady++;
      }
      for (const name of this.health.keys()) if (!seen.has(name)) this.health.delete(name);
      this.lastDisrupted = disruption;
      this.setZoneRates(byZone);
      await Promise.all(work);
    } finally {
      this.running = false;
    }
  }

  private lastDisrupted = false;

  /** A full look at the node: its health, marked Unknown when silent too long. */
  private observe(node: Obj, nodeRv: number, leaseRv: number, now: number, prior: Health | undefined, work: Promise<void>[]): Health {
    const conds = conditionsOf(node);
    const readyCond = conds.find((c) => c.type === 'Ready');
    const heartbeat = readyCond?.lastHeartbeatTime ?? '';
    let h = prior;
    if (!h) {
      // First sight: a node that reported gets a full grace period from now (as after a
      // controller restart); one that never did, the startup grace period from its creation.
      const created = Date.parse(node.metadata.creationTimestamp ?? '') || now;
      h = {
        probe: readyCond ? now : created,
        heartbeat,
        nodeRv,
        leaseRv,
        ready: 'Unknown',
        zone: '',
        hasReady: !!readyCond,
        settled: true,
        marked: false,
      };
      this.health.set(node.metadata.name as string, h);
    } else if (h.heartbeat !== heartbeat) {
      h.probe = now;
      h.heartbeat = heartbeat;
    }
    h.nodeRv = nodeRv;
    h.hasReady = !!readyCond;
    h.zone = zoneOf(node);
    h.settled = true;
    h.marked = false;
    const grace = readyCond ? this.opts.gracePeriodMs : this.opts.startupGracePeriodMs;
    // A node that has not reported yet (within its startup grace period) is not tainted.
    h.ready = readyCond?.status ?? '';
    if (now - h.probe <= grace) return h;
    h.ready = 'Unknown';
    const stale = WATCHED_CONDITIONS.some((t) => conds.find((c) => c.type === t)?.status !== 'Unknown');
    if (stale) {
      work.push(this.markUnknown(node, now));
      h.settled = false;
    } else {
      h.marked = true;
    }
    return h;
  }

  private async markUnknown(node: Obj, now: number): Promise<void> {
    const name = node.metadata.name as string;
    const t = stamp(now);
    try {
      await this.nodes.updateFrom('', name, 'status', WRITE(), (cur) => {
        const conds = conditionsOf(cur).map((c) => ({ ...c }));
        for (const type of WATCHED_CONDITIONS) {
          const c = conds.find((x) => x.type === type);
          if (!c) {
            conds.push({
              type,
              status: 'Unknown',
              lastHeartbeatTime: t,
              lastTransitionTime: t,
              reason: 'NodeStatusNeverUpdated',
              message: 'Kubelet never posted node status.',
            });
          } else if (c.status !== 'Unknown') {
            c.status = 'Unknown';
            c.reason = 'NodeStatusUnknown';
            c.message = 'Kubelet stopped posting node status.';
            c.lastTransitionTime = t;
          }
        }
        return { ...cur, status: { ...(isObject(cur.status) ? cur.status : {}), conditions: conds } };
      });
      void this.recorder.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      if (this.pods) await this.markPodsNotReady(name, t);
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) this.opts.log?.(`node lifecycle: ${name}: ${String(e)}`);
    }
  }

  /** The taints the node should have from this controller, and the NoExecute one pending its turn. */
  private reconcileTaints(node: Obj, ready: string, work: Promise<void>[]): void {
    const name = node.metadata.name as string;
    const conds = conditionsOf(node);
    const noSchedule: string[] = [];
    if (ready === 'False') noSchedule.push(NOT_READY);
    if (ready === 'Unknown') noSchedule.push(UNREACHABLE);
    for (const [type, key] of Object.entries(CONDITION_TAINTS)) {
      if (conds.find((c) => c.type === type)?.status === 'True') noSchedule.push(key);
    }
    if ((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable) noSchedule.push('node.kubernetes.io/unschedulable');
    const wantExec = ready === 'False' ? NOT_READY : ready === 'Unknown' ? UNREACHABLE : undefined;
    const taints = taintsOf(node);
    const hasExec = taints.find((t) => t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE))?.key;
    const zone = this.zone(zoneOf(node));
    let exec: string | undefined = hasExec;
    if (wantExec === undefined || this.allDisrupted) {
      exec = undefined;
      zone.queue.delete(name);
    } else if (hasExec) {
      exec = wantExec; // swapped at once
    } else if (!zone.queue.has(name)) {
      zone.queue.set(name, wantExec);
    }
    const ownedNow = taints
      .filter((t) => OWNED.has(t.key))
      .map((t) => `${t.key}:${t.effect}`)
      .sort();
    const want = [...noSchedule.map((k) => `${k}:NoSchedule`), ...(exec ? [`${exec}:NoExecute`] : [])].sort();
    if (ownedNow.join() !== want.join()) work.push(this.writeTaints(name, noSchedule, exec));
  }

  private allDisrupted = false;

  private setZoneRates(byZone: Map<string, { ready: number; notReady: number; total: number }>): void {
    let full = 0;
    for (const [z, c] of byZone) {
      const state: ZoneState =
        c.ready === 0 && c.notReady > 0
          ? 'FullDisruption'
          : c.notReady > 2 && c.notReady / (c.notReady + c.ready) >= this.opts.unhealthyZoneThreshold
            ? 'PartialDisruption'
            : 'Normal';
      if (state === 'FullDisruption') full++;
      this.zone(z).rate =
        state === 'PartialDisruption'
          ? c.total > this.opts.largeClusterThreshold
            ? this.opts.secondaryEvictionRate
            : 0
          : this.opts.evictionRate;
    }
    const all = byZone.size > 0 && full === byZone.size;
    if (all !== this.allDisrupted)
      this.opts.log?.(
        all
          ? 'node lifecycle: every zone is fully disrupted: evictions stopped'
          : 'node lifecycle: a zone is healthy again: evictions resume',
      );
    this.allDisrupted = all;
  }

  private zone(z: string): Zone {
    let zone = this.zones.get(z);
    if (!zone) {
      zone = { tokens: 1, last: this.clock(), rate: this.opts.evictionRate, queue: new Map() };
      this.zones.set(z, zone);
    }
    return zone;
  }

  /** Adds queued NoExecute taints as each zone's token bucket allows (burst 1). */
  private taintPass(): void {
    const now = this.clock();
    for (const zone of this.zones.values()) {
      zone.tokens = Math.min(1, zone.tokens + ((now - zone.last) / 1000) * zone.rate);
      zone.last = now;
      while (zone.queue.size > 0 && zone.tokens >= 1 && !this.allDisrupted) {
        const [name, key] = zone.queue.entries().next().value as [string, string];
        zone.queue.delete(name);
        const node = this.nodeCache.get(`${this.nodes.prefix}${name}`)?.obj;
        if (!node) continue;
        const ready = conditionsOf(node).find((c) => c.type === 'Ready')?.status ?? 'Unknown';
        // Healthy again while queued: nothing to do (the next pass removes what is left).
        if ((ready === 'False' ? NOT_READY : ready === 'Unknown' ? UNREACHABLE : undefined) !== key) continue;
        zone.tokens -= 1;
        void this.writeTaints(name, undefined, key);
      }
    }
  }

  /** The reference's MarkPodsNotReady: the node's pods get Ready=False (their kubelet is silent). */
  private async markPodsNotReady(nodeName: string, t: string): Promise<void> {
    const { store, cache } = this.pods as { store: ResourceStore; cache: WatchCache };
    const on =
      cache.listWhere('', 'spec.nodeName', nodeName) ??
      cache.list().filter((c) => (c.obj.spec as { nodeName?: string } | undefined)?.nodeName === nodeName);
    for (const c of on) {
      const pod = c.obj;
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const ready = conditionsOf(pod).find((x) => x.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      await store
        .updateFrom(pod.metadata.namespace as string, pod.metadata.name as string, 'status', WRITE(), (cur) => {
          const conds = conditionsOf(cur).map((x) =>
            x.type === 'Ready' && x.status !== 'False' ? { ...x, status: 'False', lastTransitionTime: t } : x,
          );
          return { ...cur, status: { ...(isObject(cur.status) ? cur.status : {}), conditions: conds } };
        })
        .catch((e) => {
          if (!(e instanceof StatusError && e.code === 404))
            this.opts.log?.(`node lifecycle: marking pod ${c.key} not ready: ${String(e)}`);
        });
    }
  }

  /**
   * Sets this controller's taints on the node (NoSchedule keys, undefined: those it has; and the
   * NoExecute key), keeping others'.
   */
  private async writeTaints(name: string, noScheduleKeys: string[] | undefined, exec: string | undefined): Promise<void> {
    const t = stamp(this.clock());
    try {
      await this.nodes.updateFrom('', name, '', WRITE(), (cur) => {
        const old = taintsOf(cur);
        const keep = old.filter((x) => !OWNED.has(x.key));
        const prior = (key: string, effect: string) => old.find((x) => x.key === key && x.effect === effect);
        const noSchedule = noScheduleKeys ?? old.filter((x) => x.effect === 'NoSchedule' && OWNED.has(x.key)).map((x) => x.key);
        const mine: Taint[] = noSchedule.map((key) => prior(key, 'NoSchedule') ?? { key, effect: 'NoSchedule' });
        if (exec) mine.push(prior(exec, 'NoExecute') ?? { key: exec, effect: 'NoExecute', timeAdded: t });
        const taints = [...keep, ...mine];
        const spec = { ...((cur.spec as Record<string, unknown>) ?? {}) };
        if (taints.length > 0) spec.taints = taints;
        else delete spec.taints;
        return { ...cur, spec };
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) this.opts.log?.(`node lifecycle: taints of ${name}: ${String(e)}`);
    }
  }
}
