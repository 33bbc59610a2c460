/**
 * Leader election over a Lease (the reference's client-go leaderelection with a LeaseLock): of
 * several API server replicas on one etcd, one runs the controllers that write on the cluster's
 * behalf; another takes over within the lease duration when it dies.
 *
 *   every retryPeriod (2 s)   read the Lease; absent → create it holding it; held by us →
 *                             renew (renewTime); held by another whose record has not changed
 *                             for leaseDuration (15 s, measured on our clock as the reference
 *                             does, not against its renewTime) → take it (leaseTransitions + 1)
 *   leading, no renewal for   renewDeadline (10 s) → stop leading (the controllers stop)
 *
 * Every write is an update at the resourceVersion read, so two candidates cannot both win.
 */
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';

export interface LeaderElectionOptions {
  /** The Lease, as kube-system/<name>. */
  namespace: string;
  name: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  identity?: string;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log?: (msg: string) => void;
}

const W: WriteOptions = { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'leader-election' };

/** RFC 3339 with microseconds, as MicroTime is written. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  readonly identity: string;
  private leading = false;
  private lastRenew = 0;
  private observed: { holder: string; renewTime: string; rv: string } | undefined;
  private observedAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;

  constructor(
    private readonly leases: ResourceStore,
    private readonly o: LeaderElectionOptions,
  ) {
    this.identity = o.identity ?? `${os.hostname()}_${randomUUID()}`;
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = o.retryPeriodMs ?? 2_000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  /** Stop campaigning; a leader releases the lease (holderIdentity cleared) so another takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = decodeStored(await this.leases.get(this.o.namespace, this.o.name));
      const spec = (lease.spec ?? {}) as Record<string, unknown>;
      if (spec.holderIdentity !== this.identity) return;
      await this.leases.update(
        this.o.namespace,
        this.o.name,
        { ...lease, spec: { ...spec, holderIdentity: undefined, renewTime: microTime(Date.now()), leaseDurationSeconds: 1 } },
        W,
        '',
      );
    } catch {
      // another replica's problem now
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.tryAcquireOrRenew();
    } catch (e) {
      this.o.log?.(`leader election: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (this.leading && Date.now() - this.lastRenew > this.renewDeadlineMs) {
      this.o.log?.(`leader election: no renewal for ${this.renewDeadlineMs} ms; stepping down`);
      this.setLeading(false);
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.retryPeriodMs);
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const now = Date.now();
    let lease: Obj | undefined;
    try {
      lease = decodeStored(await this.leases.get(this.o.namespace, this.o.name));
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
    const spec = { ...((lease?.spec ?? {}) as Record<string, unknown>) };
    const mine = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.round(this.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    if (!lease) {
      await this.write(() =>
        this.leases.create(
          this.o.namespace,
          {
            apiVersion: 'coordination.svc.io/v1',
            kind: 'Lease',
            metadata: { name: this.o.name, namespace: this.o.namespace },
            spec: { ...mine, acquireTime: microTime(now), leaseTransitions: 0 },
          },
          W,
        ),
      );
      return;
    }
    const holder = typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '';
    const record = { holder, renewTime: String(spec.renewTime ?? ''), rv: String(lease.metadata.resourceVersion) };
    if (!this.observed || this.observed.holder !== record.holder || this.observed.renewTime !== record.renewTime) {
      this.observed = record;
      this.observedAt = now;
    }
    const duration = typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds * 1000 : this.leaseDurationMs;
    if (holder !== this.identity && holder !== '' && now < this.observedAt + duration) {
      if (this.leading) this.setLeading(false);
      return;
    }
    const takeover = holder !== this.identity;
    const next = {
      ...lease,
      spec: {
        ...spec,
        ...mine,
        ...(takeover
          ? { acquireTime: microTime(now), leaseTransitions: (typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0) + 1 }
          : {}),
      },
    };
    await this.write(() => this.leases.update(this.o.namespace, this.o.name, next, W, ''));
  }

  /** A successful write makes us the leader (renewed now); a lost race (409) leaves it to the winner. */
  private async write(f: () => Promise<unknown>): Promise<void> {
    try {
      await f();
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) return;
      throw e;
    }
    this.lastRenew = Date.now();
    if (!this.leading) this.setLeading(true);
  }

  private setLeading(v: boolean): void {
    if (this.leading === v) return;
    this.leading = v;
    this.o.log?.(`leader election: ${this.identity} ${v ? 'leads' : 'stopped leading'} (${this.o.namespace}/${this.o.name})`);
    try {
      if (v) this.o.onStartedLeading();
      else this.o.onStoppedLeading();
    } catch (e) {
      this.o.log?.(`leader election callback: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
