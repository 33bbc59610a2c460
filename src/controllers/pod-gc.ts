/**
 * The pod garbage collector, as the reference's pkg/controller/podgc: every `periodMs` (the
 * reference's gcCheckPeriod, 20 s) it
 *   1. deletes terminated pods (phase Succeeded or Failed) beyond `threshold`
 *      (--terminated-pod-gc-threshold, 12,500; 0 turns this step off): evicted ones first, then
 *      the oldest by creationTimestamp, the name breaking ties;
 *   2. force-deletes terminating pods on nodes that are not Ready and carry the taint
 *      node.kubernetes.io/out-of-service;
 *   3. force-deletes pods bound to nodes that do not exist: a missing node is quarantined for
 *      `quarantineMs` (40 s) and then read from the registry, not the cache, before its pods go,
 *      each first marked Failed with the condition DisruptionTarget (reason DeletionByPodGC);
 *   4. force-deletes terminating pods that were never scheduled.
 * A pod that is not terminated yet is marked Failed (its status written) before the delete with
 * grace period 0, so that an orphan whose kubelet is gone does not stay Running for ever.
 *
 * Unlike the reference, which lists every pod on each pass, it keeps from the pods' watch cache
 * only what the steps look at (terminated pods, terminating ones, pods per node), so a pass over
 * 100,000 pods parses none of them. The deletes carry the pod's uid as a precondition (the
 * reference sends none): a pod created again under the same name is not deleted in its place.
 * It writes through the registry and runs on the leader replica.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { follow } from './workqueue';

export interface PodGcOptions {
  /** Terminated pods kept at most (0: none are collected for being terminated). */
  threshold: number;
  periodMs: number;
  quarantineMs: number;
  log?: (msg: string) => void;
  now?: () => number;
}

/** What a pass needs of a pod, kept per pod key. */
interface PodFacts {
  ns: string;
  name: string;
  uid: string;
  phase: string;
  nodeName: string;
  terminating: boolean;
  /** status.reason Evicted on a Failed pod (eviction.PodIsEvicted): collected first. */
  evicted: boolean;
  /** creationTimestamp as text: RFC 3339 in UTC with whole seconds sorts as its time. */
  created: string;
}

const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
/** Deletes (and status writes) in flight at once during a pass. */
const PARALLEL = 32;
const WRITE = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'pod-garbage-collector' });

const isTerminated = (phase: string) => phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown' && phase !== '';

function factsOf(o: Obj): PodFacts {
  const spec = (o.spec ?? {}) as { nodeName?: string };
  const status = (o.status ?? {}) as { phase?: string; reason?: string };
  const phase = typeof status.phase === 'string' ? status.phase : '';
  return {
    ns: o.metadata.namespace as string,
    name: o.metadata.name as string,
    uid: o.metadata.uid as string,
    phase,
    nodeName: typeof spec.nodeName === 'string' ? spec.nodeName : '',
    terminating: o.metadata.deletionTimestamp != null,
    evicted: phase === 'Failed' && status.reason === 'Evicted',
    created: String(o.metadata.creationTimestamp ?? ''),
  };
}

/** The order terminated pods go in (byEvictionAndCreationTimestamp). */
function byEvictionAndAge(a: PodFacts, b: PodFacts): number {
  if (a.evicted !== b.evicted) return a.evicted ? -1 : 1;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

interface NodeFacts {
  ready: boolean;
  outOfService: boolean;
}

function nodeFactsOf(n: Obj): NodeFacts {
  const status = (n.status ?? {}) as { conditions?: { type?: string; status?: string }[] };
  const spec = (n.spec ?? {}) as { taints?: { key?: string }[] };
  return {
    ready: (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    outOfService: (spec.taints ?? []).some((t) => t.key === OUT_OF_SERVICE),
  };
}

export class PodGarbageCollector {
  private readonly pods = new Map<string, PodFacts>();
  /** Keys of the terminated pods, the terminating ones, and the pods of each node. */
  private readonly terminated = new Set<string>();
  private readonly terminating = new Set<string>();
  private readonly onNode = new Map<string, Set<string>>();
  private readonly nodes = new Map<string, NodeFacts>();
  /** Nodes pods are bound to but the cache does not hold: when each was first missed. */
  private readonly quarantine = new Map<string, number>();
  private followers: { stop(): void }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(
    private readonly podStore: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly nodeStore: ResourceStore,
    private readonly nodeCache: WatchCache,
    private readonly opts: PodGcOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  async start(): Promise<void> {
    await Promise.all([this.podCache.start(), this.nodeCache.start()]);
    this.followers = [
      follow(
        this.nodeCache,
        (objs) => {
          this.nodes.clear();
          for (const n of objs) this.nodes.set(n.metadata.name as string, nodeFactsOf(n));
        },
        (n, type) => {
          if (type === 'DELETED') this.nodes.delete(n.metadata.name as string);
          else this.nodes.set(n.metadata.name as string, nodeFactsOf(n));
        },
      ),
      follow(
        this.podCache,
        (objs) => {
          this.pods.clear();
          this.terminated.clear();
          this.terminating.clear();
          this.onNode.clear();
          for (const o of objs) this.put(o);
        },
        (o, type) => {
          if (type === 'DELETED') this.remove(this.keyOf(o));
          else this.put(o);
        },
      ),
    ];
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const f of this.followers) f.stop();
  }

  private keyOf(o: Obj): string {
    return this.podStore.key(o.metadata.namespace as string, o.metadata.name as string);
  }

  private put(o: Obj): void {
    const key = this.keyOf(o);
    this.remove(key);
    const f = factsOf(o);
    this.pods.set(key, f);
    if (isTerminated(f.phase)) this.terminated.add(key);
    if (f.terminating) this.terminating.add(key);
    if (f.nodeName !== '') {
      let s = this.onNode.get(f.nodeName);
      if (!s) {
        s = new Set();
        this.onNode.set(f.nodeName, s);
      }
      s.add(key);
    }
  }

  private remove(key: string): void {
    const f = this.pods.get(key);
    if (!f) return;
    this.pods.delete(key);
    this.terminated.delete(key);
    this.terminating.delete(key);
    const s = this.onNode.get(f.nodeName);
    if (s) {
      s.delete(key);
      if (s.size === 0) this.onNode.delete(f.nodeName);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass()
        .catch((e) => this.opts.log?.(`pod garbage collector: ${String(e)}`))
        .finally(() => this.schedule());
    }, this.opts.periodMs);
    this.timer.unref?.();
  }

  /** One pass of the four steps, in the reference's order. */
  async pass(): Promise<void> {
    if (this.opts.threshold > 0) await this.gcTerminated();
    await this.gcTerminating();
    await this.gcOrphaned();
    await this.gcUnscheduledTerminating();
  }

  private async gcTerminated(): Promise<void> {
    const excess = this.terminated.size - this.opts.threshold;
    if (excess <= 0) return;
    const victims = [...this.terminated].map((k) => this.pods.get(k) as PodFacts).sort(byEvictionAndAge);
    this.opts.log?.(`pod garbage collector: deleting ${excess} of ${victims.length} terminated pods (threshold ${this.opts.threshold})`);
    await this.each(victims.slice(0, excess), (f) => this.markFailedAndDelete(f));
  }

  private async gcTerminating(): Promise<void> {
    const due: PodFacts[] = [];
    for (const k of this.terminating) {
      const f = this.pods.get(k) as PodFacts;
      const node = this.nodes.get(f.nodeName);
      if (node && !node.ready && node.outOfService) due.push(f);
    }
    if (due.length === 0) return;
    due.sort(byEvictionAndAge);
    await this.each(due, (f) => this.markFailedAndDelete(f));
  }

  private async gcOrphaned(): Promise<void> {
    const now = this.now();
    // Newly missing nodes enter the quarantine; a node seen again leaves it.
    for (const name of this.onNode.keys()) if (!this.nodes.has(name) && !this.quarantine.has(name)) this.quarantine.set(name, now);
    const gone: string[] = [];
    for (const [name, since] of this.quarantine) {
      if (now - since < this.opts.quarantineMs) continue;
      this.quarantine.delete(name);
      if (this.nodes.has(name)) continue;
      // The cache may lag: the node is read from the store before its pods go.
      try {
        await this.nodeStore.get('', name);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) gone.push(name);
        else this.opts.log?.(`pod garbage collector: reading node ${name}: ${String(e)}`);
      }
    }
    for (const name of gone) {
      const pods = [...(this.onNode.get(name) ?? [])].map((k) => this.pods.get(k) as PodFacts);
      if (pods.length === 0) continue;
      this.opts.log?.(`pod garbage collector: node ${name} no longer exists: deleting its ${pods.length} pods`);
      await this.each(pods, (f) =>
        this.markFailedAndDelete(f, {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
        }),
      );
    }
  }

  private async gcUnscheduledTerminating(): Promise<void> {
    const due: PodFacts[] = [];
    for (const k of this.terminating) {
      const f = this.pods.get(k) as PodFacts;
      if (f.nodeName === '') due.push(f);
    }
    await this.each(due, (f) => this.markFailedAndDelete(f));
  }

  /** `f` on every item, PARALLEL at a time. */
  private async each(items: PodFacts[], f: (p: PodFacts) => Promise<void>): Promise<void> {
    for (let i = 0; i < items.length && !this.stopped; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(f));
  }

  /**
   * markFailedAndDeletePodWithCondition: a pod not terminated yet gets phase Failed (and the
   * condition, replacing one of its type) first; then it is deleted with grace period 0.
   */
  private async markFailedAndDelete(
    p: PodFacts,
    condition?: { type: string; status: string; reason: string; message: string },
  ): Promise<void> {
    try {
      if (p.phase !== 'Succeeded' && p.phase !== 'Failed') {
        const stamp = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
        await this.podStore.updateFrom(p.ns, p.name, 'status', WRITE(), (cur) => {
          if (cur.metadata.uid !== p.uid) throw new StatusError(409, 'Conflict', `the pod ${p.ns}/${p.name} was replaced`);
          const st = { ...((cur.status ?? {}) as Record<string, unknown>) } as {
            phase?: string;
            conditions?: { type: string; status?: string; lastTransitionTime?: string }[];
          };
          st.phase = 'Failed';
          if (condition) {
            const conds = [...(st.conditions ?? [])];
            const i = conds.findIndex((c) => c.type === condition.type);
            // UpdatePodCondition: the transition time moves only when the status does.
            const since = i >= 0 && conds[i]?.status === condition.status ? conds[i]?.lastTransitionTime : stamp;
            const next = { ...condition, lastProbeTime: null, lastTransitionTime: since ?? stamp };
            if (i >= 0) conds[i] = next;
            else conds.push(next);
            st.conditions = conds;
          }
          return { ...cur, status: st } as Obj;
        });
      }
      await this.podStore.delete(p.ns, p.name, { dryRun: false, gracePeriodSeconds: 0, preconditions: { uid: p.uid } });
      this.opts.log?.(`pod garbage collector: deleted pod ${p.ns}/${p.name}`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      this.opts.log?.(`pod garbage collector: pod ${p.ns}/${p.name}: ${String(e)}`);
    }
  }
}
