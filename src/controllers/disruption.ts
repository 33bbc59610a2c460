/**
 * The disruption controller: keeps each PodDisruptionBudget's status current from the pods it
 * selects, as the reference's DisruptionController.
 *
 *   expectedPods    minAvailable as a number: the selected pods; otherwise the scale of their
 *                   controllers (a ReplicaSet's replicas, or its Deployment's), each counted once
 *   desiredHealthy  minAvailable (a number, or a percent of expectedPods rounded up), or
 *                   expectedPods - maxUnavailable (percent rounded up)
 *   currentHealthy  selected pods Ready and not being deleted, not in disruptedPods
 *   disruptionsAllowed = max(0, currentHealthy - desiredHealthy)
 *   DisruptionAllowed  True/SufficientPods when disruptions are allowed, False/InsufficientPods
 *                      when not, False/SyncFailed when the numbers cannot be computed
 *
 * disruptedPods entries (written by evictions) are dropped once the pod is being deleted or two
 * minutes have passed. It runs from the watch caches of pods and budgets and writes through the
 * registry's status subresource, so it works the same on several replicas.
 */
import { isObject, type Obj } from '../api/meta';
import { selectorMatcher } from '../api/selectors';
import { decodeStored } from '../codec/stored';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

/** How long an eviction's entry in disruptedPods holds the pod out of currentHealthy. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

export interface DisruptionOptions {
  resyncMs?: number;
  log?: (msg: string) => void;
  clock?: () => number;
}

interface Numbers {
  expectedPods: number;
  desiredHealthy: number;
  currentHealthy: number;
  disruptionsAllowed: number;
  disruptedPods: Record<string, string>;
}

const isReady = (p: Obj): boolean => {
  const conds = (p.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return Array.isArray(conds) && conds.some((c) => c.type === 'Ready' && c.status === 'True');
};

/** intstr.GetScaledValueFromIntOrPercent, rounding up. */
function scaled(v: unknown, total: number): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+%$/.test(v)) return Math.ceil((Number(v.slice(0, -1)) * total) / 100);
  return undefined;
}

export class DisruptionController {
  private readonly queue = new Set<string>();
  private draining = false;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly clock: () => number;

  constructor(
    private readonly budgets: ResourceStore,
    private readonly budgetCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly api: ApiRegistry,
    private readonly opts: DisruptionOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  async start(): Promise<void> {
    await Promise.all([this.budgetCache.start(), this.podCache.start()]);
    const b = this.budgetCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    const p = this.podCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of b.initial) this.enqueue(c.obj);
    const follow = async (w: typeof b.watcher, onEvent: (o: Obj) => void) => {
      while (!this.stopped && !w.ended) for (const e of await w.next(Number.POSITIVE_INFINITY)) onEvent(e.obj);
    };
    void follow(b.watcher, (o) => this.enqueue(o));
    void follow(p.watcher, (pod) => this.enqueueNamespace(pod.metadata.namespace as string));
    // The resync also expires disruptedPods entries.
    this.timer = setInterval(() => {
      for (const c of this.budgetCache.list()) this.enqueue(c.obj);
    }, this.opts.resyncMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private enqueue(pdb: Obj): void {
    this.queue.add(`${pdb.metadata.namespace}/${pdb.metadata.name}`);
    this.drain();
  }

  private enqueueNamespace(ns: string): void {
    for (const c of this.budgetCache.list(`${this.budgets.prefix}${ns}/`)) this.queue.add(`${ns}/${c.obj.metadata.name}`);
    this.drain();
  }

  /** One worker: budgets queued while it runs are synced in its next round. */
  private drain(): void {
    if (this.draining || this.stopped) return;
    this.draining = true;
    setTimeout(async () => {
      try {
        while (this.queue.size > 0 && !this.stopped) {
          const keys = [...this.queue];
          this.queue.clear();
          for (const key of keys) {
            await this.sync(key).catch((e) => {
              this.opts.log?.(`disruption controller: ${key}: ${String(e)}`);
              // Conflicts and the like: try again on the next resync.
            });
          }
        }
      } finally {
        this.draining = false;
      }
    }, 0);
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cached = this.budgetCache.list(`${this.budgets.prefix}${ns}/`).find((c) => c.obj.metadata.name === name);
    if (!cached) return;
    const pdb = cached.obj;
    let numbers: Numbers | undefined;
    let failure: string | undefined;
    try {
      numbers = await this.compute(pdb, ns);
    } catch (e) {
      failure = e instanceof Error ? e.message : String(e);
    }
    const status = (isObject(pdb.status) ? pdb.status : {}) as Record<string, unknown>;
    const next: Record<string, unknown> = { ...status, observedGeneration: pdb.metadata.generation ?? 0 };
    let cond: { status: string; reason: string; message: string };
    if (numbers) {
      Object.assign(next, numbers);
      if (Object.keys(numbers.disruptedPods).length === 0) delete next.disruptedPods;
      cond =
        numbers.disruptionsAllowed > 0
          ? { status: 'True', reason: 'SufficientPods', message: '' }
          : { status: 'False', reason: 'InsufficientPods', message: '' };
    } else {
      next.disruptionsAllowed = 0;
      cond = { status: 'False', reason: 'SyncFailed', message: failure ?? '' };
    }
    const conds = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : [];
    const old = conds.find((c) => c.type === 'DisruptionAllowed');
    const changed = !old || old.status !== cond.status;
    const condition = {
      type: 'DisruptionAllowed',
      status: cond.status,
      observedGeneration: pdb.metadata.generation ?? 0,
      lastTransitionTime: changed ? new Date(this.clock()).toISOString().replace(/\.\d{3}Z$/, 'Z') : old.lastTransitionTime,
      reason: cond.reason,
      message: cond.message,
    };
    next.conditions = [...conds.filter((c) => c.type !== 'DisruptionAllowed'), condition];
    if (JSON.stringify(next) === JSON.stringify(status)) return;
    await this.budgets.update(
      ns,
      name,
      { ...pdb, status: next },
      { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'disruption-controller' },
      'status',
    );
  }

  private async compute(pdb: Obj, ns: string): Promise<Numbers> {
    const spec = (pdb.spec ?? {}) as { selector?: unknown; minAvailable?: unknown; maxUnavailable?: unknown };
    const sel = selectorMatcher(spec.selector);
    if (!sel) throw new Error('invalid label selector');
    const pods = this.podCache
      .list(`${this.pods.prefix}${ns}/`)
      .map((c) => c.obj)
      .filter((p) => sel.matches((p.metadata.labels ?? {}) as Record<string, string>));
    const now = this.clock();
    // disruptedPods: entries of pods not being deleted, younger than the timeout.
    const disrupted: Record<string, string> = {};
    const old = (isObject(pdb.status) && isObject(pdb.status.disruptedPods) ? pdb.status.disruptedPods : {}) as Record<string, string>;
    const byName = new Map(pods.map((p) => [p.metadata.name as string, p]));
    for (const [podName, at] of Object.entries(old)) {
      const p = byName.get(podName);
      if (!p || p.metadata.deletionTimestamp) continue;
      if (Date.parse(at) + DELETION_TIMEOUT_MS < now) continue;
      disrupted[podName] = at;
    }
    const currentHealthy = pods.filter(
      (p) => !p.metadata.deletionTimestamp && isReady(p) && !((p.metadata.name as string) in disrupted),
    ).length;
    let expectedPods: number;
    let desiredHealthy: number;
    if (spec.maxUnavailable !== undefined) {
      expectedPods = await this.expectedScale(pods, ns);
      const max = scaled(spec.maxUnavailable, expectedPods);
      if (max === undefined) throw new Error(`invalid maxUnavailable ${JSON.stringify(spec.maxUnavailable)}`);
      desiredHealthy = Math.max(0, expectedPods - max);
    } else if (typeof spec.minAvailable === 'number') {
      expectedPods = pods.length;
      desiredHealthy = spec.minAvailable;
    } else if (spec.minAvailable !== undefined) {
      expectedPods = await this.expectedScale(pods, ns);
      const min = scaled(spec.minAvailable, expectedPods);
      if (min === undefined) throw new Error(`invalid minAvailable ${JSON.stringify(spec.minAvailable)}`);
      desiredHealthy = min;
    } else {
      // Neither set: the reference defaults to minAvailable 1 (no 100% of nothing).
      expectedPods = pods.length;
      desiredHealthy = 1;
    }
    return {
      expectedPods,
      desiredHealthy,
      currentHealthy,
      disruptionsAllowed: Math.max(0, currentHealthy - desiredHealthy),
      disruptedPods: disrupted,
    };
  }

  /** The summed scale of the pods' controllers (ReplicaSets, or the Deployments owning them). */
  private async expectedScale(pods: Obj[], ns: string): Promise<number> {
    const rsStore = this.api.lookup('apps', 'v1', 'replicasets');
    const deployStore = this.api.lookup('apps', 'v1', 'deployments');
    const counted = new Set<string>();
    let total = 0;
    for (const p of pods) {
      const ref = (p.metadata.ownerReferences ?? []).find((r) => r.controller === true);
      if (!ref) throw new Error(`found no controller ref for pod "${p.metadata.name}"`);
      if (ref.kind !== 'ReplicaSet' || !rsStore) throw new Error(`found no controllers for pod "${p.metadata.name}"`);
      if (counted.has(ref.uid)) continue;
      counted.add(ref.uid);
      const rs = decodeStored(await rsStore.get(ns, ref.name));
      const rsOwner = (rs.metadata.ownerReferences ?? []).find((r) => r.controller === true && r.kind === 'Deployment');
      if (rsOwner && deployStore) {
        if (counted.has(rsOwner.uid)) continue;
        counted.add(rsOwner.uid);
        const d = decodeStored(await deployStore.get(ns, rsOwner.name));
        total += ((d.spec as { replicas?: number } | undefined)?.replicas ?? 1) as number;
      } else {
        total += ((rs.spec as { replicas?: number } | undefined)?.replicas ?? 1) as number;
      }
    }
    return total;
  }
}
