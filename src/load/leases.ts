/**
 * Node lease traffic as kubelets make it, without nodes: `count` Leases in kube-node-lease
 * (load-node-<i>), each renewed every `interval` seconds by a PUT of the lease the harness last
 * read or wrote with a new spec.renewTime (kubelet's lease controller: update, and on a conflict
 * get the lease again and retry). The leases' creates are spread over the first interval, as
 * kubelets' starts are, so the renewals are too. Every call goes through the harness's client, so it is timed and counted as
 * (leases, PUT, resource) like any other call.
 *
 *   - name: node-leases
 *     leases: { count: 5000, interval: 10, duration: 60 }   # 6 renewals each; without duration:
 *                                                           # renewed in the background until the run ends
 */
import type { Client } from './client';
import { LABEL } from './objects';

export const LEASE_NAMESPACE = 'kube-node-lease';
/** kubelet's default node lease duration (--node-lease-duration-seconds) */
const LEASE_DURATION_S = 40;

export interface LeaseStep {
  count: number;
  /** seconds between renewals of one lease (kubelet: leaseDuration / 4 = 10 s) */
  interval: number;
  /** seconds the phase renews for; undefined: in the background until the run ends */
  duration?: number;
}

export interface LeaseStats {
  /** leases created or adopted */
  leases: number;
  renewals: number;
  conflicts: number;
  /** creates and renewals that failed */
  failures: number;
}

/** A MicroTime as the API writes it: RFC 3339 with six fractional digits. */
export function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function leasePath(name: string): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases${name ? `/${name}` : ''}`;
}

export class LeaseTraffic {
  readonly stats: LeaseStats = { leases: 0, renewals: 0, conflicts: 0, failures: 0 };
  /** paths of the leases this run created (not those it found there) */
  readonly created: string[] = [];
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private firstError = '';

  constructor(
    private readonly client: Client,
    readonly step: LeaseStep,
    private readonly run: string,
    private readonly onRenew: () => void = () => {},
    /** the first lease's index (several lease phases get distinct leases) */
    private readonly first = 0,
  ) {}

  /**
   * Start the leases: lease i is created (or adopted) i/count of an interval after the start, as
   * kubelets come up at different times, then renewed every interval after its create: `duration
   * / interval` times (the phase lasts about duration plus one interval), or until stop().
   */
  start(): void {
    const { count, interval, duration } = this.step;
    const renewals = duration === undefined ? Number.POSITIVE_INFINITY : Math.floor(duration / interval);
    const t0 = this.client.now();
    this.loops = Array.from({ length: count }, async (_, i) => {
      const name = `load-node-${this.first + i}`;
      await this.sleep(t0 + (i / count) * interval * 1000 - this.client.now());
      if (this.abort.signal.aborted) return;
      const created = this.client.now();
      let cur: any;
      try {
        cur = await this.ensure(name);
      } catch (e) {
        this.fail((e as Error).message);
        return;
      }
      this.stats.leases++;
      for (let k = 1; k <= renewals; k++) {
        await this.sleep(created + k * interval * 1000 - this.client.now());
        if (this.abort.signal.aborted) return;
        cur = await this.renew(cur);
        this.onRenew();
      }
    });
  }

  /** Until every renewal of a phase with a duration is done; then what failed, if anything. */
  async done(): Promise<void> {
    await Promise.all(this.loops);
    if (this.stats.failures > 0) throw new Error(`${this.stats.failures} lease calls failed, first: ${this.firstError}`);
  }

  /** Stop renewing; resolves when no renewal is in flight. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
  }

  private fail(message: string): void {
    this.stats.failures++;
    this.firstError ||= message;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** kubelet's ensureLease: create the lease, or take the one there (get it). */
  private async ensure(name: string): Promise<any> {
    const now = microTime();
    const r = await this.client.call('POST', leasePath(''), {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: LEASE_NAMESPACE, labels: { [LABEL]: this.run } },
      spec: { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_S, renewTime: now },
    });
    if (r.status < 300) {
      this.created.push(leasePath(name));
      return r.body;
    }
    if (r.status === 409) {
      const g = await this.client.call('GET', leasePath(name));
      if (g.status === 200) return g.body;
    }
    throw new Error(`lease ${LEASE_NAMESPACE}/${name}: ${r.status} ${r.body?.message ?? ''}`);
  }

  /** One renewal: PUT with a new renewTime; after a conflict, get the lease and put once more. */
  private async renew(lease: any): Promise<any> {
    const name = lease.metadata.name as string;
    for (let attempt = 0; attempt < 2; attempt++) {
      const body = { ...lease, spec: { ...lease.spec, renewTime: microTime() } };
      const r = await this.client.call('PUT', leasePath(name), body);
      if (r.status < 300) {
        this.stats.renewals++;
        return r.body;
      }
      if (r.status === 409 && attempt === 0) {
        this.stats.conflicts++;
        const g = await this.client.call('GET', leasePath(name));
        if (g.status === 200) {
          lease = g.body;
          continue;
        }
      }
      this.fail(`${name}: ${r.status} ${r.body?.message ?? ''}`);
      return lease;
    }
    return lease;
  }
}
