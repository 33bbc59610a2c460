/**
 * Simulated nodes: the part of a kubelet that keeps a node alive. A node annotated
 * `sim.svc.io/managed: "true"` (the server creates sim-node-0 … sim-node-<N-1> so annotated)
 * gets, as a kubelet with node leases:
 *
 *   spec.podCIDR   a /24 of --cluster-cidr, the lowest free one (kept across restarts: it is stored)
 *   status         node-status.ts, written at once when it changes (or the stored conditions are
 *                  not the kubelet's, e.g. Unknown after a silence) and every 5 minutes otherwise
 *   Lease          kube-node-lease/<node>, renewed every leaseDuration/4 plus up to 4% jitter
 *
 * `sim.svc.io/heartbeat: "stop"` silences a node (no Lease renewal, no status, its pods frozen);
 * removing it resumes all three. Every deadline is in one TimerQueue; writes go through the
 * registry with the kubelet's field manager.
 */
import { isObject, type Obj } from '../api/meta';
import { parseIPv4Range } from '../api/net';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import {
  capacityOf,
  conditionsCurrent,
  internalIp,
  isManaged,
  isStopped,
  MANAGED_ANNOTATION,
  nodeLabels,
  nodeStatus,
  podCidrText,
  statusKey,
} from './node-status';
import type { TimerQueue } from './timers';

export const LEASE_NAMESPACE = 'kube-node-lease';

/** The kubelet's nodeStatusReportFrequency: status is written at least this often. */
const STATUS_REPORT_MS = 5 * 60_000;
/** The lease controller's jitter factor (wait.JitterUntil(renew, interval, 0.04, …)). */
const LEASE_JITTER = 0.04;
/** After a failed write, the next try (the kubelet's lease retry starts at 200 ms; one step is enough here). */
const RETRY_MS = 1000;

export interface FleetOptions {
  /** --simulated-nodes: sim-node-0 … created at start when missing. */
  count: number;
  capacity: Record<string, string>;
  leaseDurationMs: number;
  clusterCidr: string;
  clock?: () => number;
  random?: () => number;
  log?: (msg: string) => void;
}

/** What the kubelets need of a node. */
export interface SimNode {
  readonly name: string;
  uid: string;
  cidrIndex: number;
  /** The pod CIDR's first address as a number. */
  cidrBase: number;
  ip: string;
  /** Heartbeating (not stopped by the annotation). */
  live: boolean;
  /** The statusKey of the last status written. */
  lastStatus?: string;
}

export interface LeaseStats {
  renewals: number;
  failures: number;
  /** Most a renewal ran after its deadline (ms): the timer queue's and the event loop's delay. */
  maxLateMs: number;
}

const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

export class NodeFleet {
  readonly nodes = new Map<string, SimNode>();
  readonly stats: LeaseStats = { renewals: 0, failures: 0, maxLateMs: 0 };
  private readonly usedCidrs = new Set<number>();
  private readonly cidr: { base: number; count: number };
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly leaseSeconds: number;
  private readonly renewMs: number;
  private stopped = false;

  constructor(
    private readonly nodeStore: ResourceStore,
    private readonly nodeCache: WatchCache,
    private readonly leases: ResourceStore,
    private readonly timers: TimerQueue,
    private readonly opts: FleetOptions,
    /** Told when a node appears, goes, stops or resumes heartbeating. */
    private readonly onChange: (name: string) => void,
  ) {
    const r = parseIPv4Range(opts.clusterCidr);
    this.cidr = { base: r.base, count: Math.floor(r.size / 256) };
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.leaseSeconds = Math.round(opts.leaseDurationMs / 1000);
    this.renewMs = opts.leaseDurationMs / 4;
  }

  private write(): WriteOptions {
    return { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'kubelet' };
  }

  /** Reads the nodes, creates the missing sim-node-i, then follows the cache. */
  async start(): Promise<void> {
    await this.nodeCache.start();
    const { watcher, initial } = this.nodeCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of initial) this.noteCidr(c.obj);
    for (const c of initial) this.onNode(c.obj, false);
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.type !== 'DELETED') this.noteCidr(e.obj);
          this.onNode(e.obj, e.type === 'DELETED');
        }
      }
    })();
    const present = new Set(initial.map((c) => c.obj.metadata.name));
    const missing: string[] = [];
    for (let i = 0; i < this.opts.count; i++) if (!present.has(`sim-node-${i}`)) missing.push(`sim-node-${i}`);
    // A few creates in flight at once: thousands of nodes register in seconds.
    const next = () => missing.shift();
    await Promise.all(
      Array.from({ length: Math.min(16, missing.length) }, async () => {
        for (let name = next(); name !== undefined && !this.stopped; name = next()) await this.register(name);
      }),
    );
  }

  stop(): void {
    this.stopped = true;
  }

  private noteCidr(n: Obj): void {
    const i = this.cidrIndexOf(n);
    if (i !== undefined) this.usedCidrs.add(i);
  }

  private cidrIndexOf(n: Obj): number | undefined {
    const text = (n.spec as { podCIDR?: string } | undefined)?.podCIDR;
    if (typeof text !== 'string') return undefined;
    try {
      const r = parseIPv4Range(text);
      const i = (r.base - this.cidr.base) / 256;
      return Number.isInteger(i) && i >= 0 && i < this.cidr.count ? i : undefined;
    } catch {
      return undefined;
    }
  }

  /** Below it, every /24 is taken (a cursor: registering 5,000 nodes is not quadratic). */
  private cidrCursor = 0;

  private allocateCidr(): number {
    for (let i = this.cidrCursor; i < this.cidr.count; i++) {
      if (!this.usedCidrs.has(i)) {
        this.usedCidrs.add(i);
        this.cidrCursor = i + 1;
        return i;
      }
    }
    throw new Error(`the cluster CIDR ${this.opts.clusterCidr} has no free /24 left`);
  }

  /** Creates a simulated node as a kubelet registers one (labels, pod CIDR, the annotation). */
  private async register(name: string): Promise<void> {
    const i = this.allocateCidr();
    const cidr = podCidrText(this.cidr.base, i);
    try {
      await this.nodeStore.create(
        '',
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: nodeLabels(name), annotations: { [MANAGED_ANNOTATION]: 'true' } },
          spec: { podCIDR: cidr, podCIDRs: [cidr] },
        },
        this.write(),
      );
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) this.opts.log?.(`simulation: registering node ${name}: ${String(e)}`);
    }
  }

  private onNode(n: Obj, deleted: boolean): void {
    const name = n.metadata.name as string;
    const had = this.nodes.get(name);
    if (deleted || !isManaged(n)) {
      if (had) {
        this.nodes.delete(name);
        this.timers.cancel(`lease/${name}`);
        this.timers.cancel(`status/${name}`);
        this.onChange(name);
      }
      return;
    }
    let cidrIndex = this.cidrIndexOf(n);
    if (cidrIndex === undefined) {
      // An annotated node without a pod CIDR gets one (as the node IPAM controller would).
      cidrIndex = had?.cidrIndex ?? this.allocateCidr();
      const cidr = podCidrText(this.cidr.base, cidrIndex);
      void this.nodeStore
        .updateFrom('', name, '', this.write(), (cur) => ({ ...cur, spec: { ...(cur.spec as object), podCIDR: cidr, podCIDRs: [cidr] } }))
        .catch((e) => this.opts.log?.(`simulation: pod CIDR of node ${name}: ${String(e)}`));
    }
    const live = !isStopped(n);
    const sn: SimNode = had ?? {
      name,
      uid: n.metadata.uid as string,
      cidrIndex,
      cidrBase: this.cidr.base + cidrIndex * 256,
      ip: internalIp(cidrIndex),
      live: false,
    };
    sn.uid = n.metadata.uid as string;
    if (!had) this.nodes.set(name, sn);
    const wasLive = had?.live ?? false;
    sn.live = live;
    if (!live) {
      this.timers.cancel(`lease/${name}`);
      this.timers.cancel(`status/${name}`);
      if (wasLive || !had) this.onChange(name);
      return;
    }
    const now = this.clock();
    if (!wasLive) {
      // Registered or resumed: the Lease and the status at once, as a kubelet starting.
      this.timers.schedule(`lease/${name}`, now, () => this.renew(sn, now));
      sn.lastStatus = undefined;
      this.timers.schedule(`status/${name}`, now, () => this.postStatus(sn));
      this.onChange(name);
      return;
    }
    const desired = nodeStatus(n, capacityOf(n, this.opts.capacity), sn.ip, '');
    if (!conditionsCurrent(n) || statusKey(desired) !== sn.lastStatus)
      this.timers.schedule(`status/${name}`, now, () => this.postStatus(sn));
  }

  private renew(sn: SimNode, due: number): void {
    const now = this.clock();
    const late = now - due;
    if (late > this.stats.maxLateMs) this.stats.maxLateMs = late;
    const name = sn.name;
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: LEASE_NAMESPACE,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: sn.uid }],
      },
      spec: { holderIdentity: name, leaseDurationSeconds: this.leaseSeconds, renewTime: microTime(now) },
    };
    const next = (ok: boolean) => {
      if (this.stopped || !sn.live || this.nodes.get(name) !== sn) return;
      const wait = ok ? this.renewMs * (1 + LEASE_JITTER * this.random()) : RETRY_MS;
      const at = this.clock() + wait;
      this.timers.schedule(`lease/${name}`, at, () => this.renew(sn, at));
    };
    const renewTime = body.spec.renewTime;
    // From the current Lease (no body to check and copy): only renewTime moves, which the
    // registry's managedFields fast path takes; absent (first start), it is created.
    this.leases
      .updateFrom(LEASE_NAMESPACE, name, '', this.write(), (cur) => ({
        ...cur,
        spec: { ...(cur.spec as object), holderIdentity: name, leaseDurationSeconds: this.leaseSeconds, renewTime },
      }))
      .catch((e) => {
        if (e instanceof StatusError && e.code === 404) return this.leases.create(LEASE_NAMESPACE, body, this.write());
        throw e;
      })
      .then(
        () => {
          this.stats.renewals++;
          next(true);
        },
        (e) => {
          this.stats.failures++;
          this.opts.log?.(`simulation: renewing the lease of node ${name}: ${String(e)}`);
          next(false);
        },
      );
  }

  private postStatus(sn: SimNode): void {
    const name = sn.name;
    const stamp = new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    let key: string | undefined;
    const again = (ms: number) => {
      if (this.stopped || !sn.live || this.nodes.get(name) !== sn) return;
      this.timers.schedule(`status/${name}`, this.clock() + ms, () => this.postStatus(sn));
    };
    this.nodeStore
      .updateFrom('', name, 'status', this.write(), (cur) => {
        const status = nodeStatus(cur, capacityOf(cur, this.opts.capacity), sn.ip, stamp);
        key = statusKey(status);
        const old = isObject(cur.status) ? cur.status : {};
        return { ...cur, status: { ...old, ...status } };
      })
      .then(
        () => {
          sn.lastStatus = key;
          again(STATUS_REPORT_MS);
        },
        (e) => {
          if (e instanceof StatusError && e.code === 404) return;
          this.opts.log?.(`simulation: status of node ${name}: ${String(e)}`);
          again(RETRY_MS);
        },
      );
  }
}
