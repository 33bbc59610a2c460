/**
 * The simulation: nodes and kubelets run inside the server, next to the store and the watch
 * caches, so that thousands of nodes and their pods cost no client round trips. It reads the
 * caches of nodes and pods and writes through the registry like any client (its writes go
 * through admission and validation, and every watcher sees them). It runs on the leader replica
 * only (src/controllers/builder.ts), on either store backend.
 *
 *   nodes.ts        simulated nodes: registration, status, Lease renewals
 *   kubelet.ts      their pods: status steps, IPs, termination
 *   timers.ts       the one timer every deadline of both shares
 */
import type { Resources } from '../registry/api-registry';
import type { Profile } from './behaviour';
import { Kubelets } from './kubelet';
import { type LeaseStats, NodeFleet } from './nodes';
import { TimerQueue } from './timers';

export interface SimulationOptions {
  nodes: number;
  capacity: Record<string, string>;
  leaseDurationMs: number;
  clusterCidr: string;
  profile: Profile;
  clock?: () => number;
  log?: (msg: string) => void;
}

export class Simulation {
  private readonly timers: TimerQueue;
  private readonly fleet: NodeFleet | undefined;
  private readonly kubelets: Kubelets | undefined;

  constructor(resources: Pick<Resources, 'lookup'>, opts: SimulationOptions) {
    const log = opts.log ?? (() => {});
    this.timers = new TimerQueue({ clock: opts.clock, onError: (key, e) => log(`simulation: ${key}: ${String(e)}`) });
    const nodes = resources.lookup('', 'v1', 'nodes');
    const pods = resources.lookup('', 'v1', 'pods');
    const leases = resources.lookup('coordination.svc.io', 'v1', 'leases');
    if (!nodes || !pods || !leases) return;
    let kubelets: Kubelets | undefined;
    this.fleet = new NodeFleet(
      nodes,
      nodes.watchCache(),
      leases,
      this.timers,
      {
        count: opts.nodes,
        capacity: opts.capacity,
        leaseDurationMs: opts.leaseDurationMs,
        clusterCidr: opts.clusterCidr,
        clock: opts.clock,
        log,
      },
      (name) => kubelets?.nodeChanged(name),
    );
    kubelets = new Kubelets(resources, pods, pods.watchCache(), this.fleet, this.timers, { profile: opts.profile, clock: opts.clock, log });
    this.kubelets = kubelets;
  }

  async start(): Promise<void> {
    // The pods are followed once the nodes are known (a pod's node must be found to run it).
    await this.fleet?.start();
    await this.kubelets?.start();
  }

  stop(): void {
    this.fleet?.stop();
    this.kubelets?.stop();
    this.timers.stop();
  }

  get leaseStats(): LeaseStats | undefined {
    return this.fleet?.stats;
  }
}
