/**
 * The resource quota controller: keeps each ResourceQuota's `status.hard` (its spec) and
 * `status.used` (what the namespace's objects use, as admission/quota.ts counts it) current.
 *
 * A namespace is recomputed when its quotas change, when pods, services, config maps or secrets
 * in it are updated or deleted (creates were charged by admission; after a second without further changes, so a recomputation never runs in the
 * middle of a burst of creates whose reservations admission has made but whose objects are not
 * stored yet), and every `--resource-quota-sync-period` for everything (other `count/` kinds).
 * It runs from the watch caches and writes through the status subresource (conditional on the
 * version read: admission's reservations win a race and the recomputation runs again).
 */

import { addQ } from '../admission/limit-ranger';
import { quotaMatches, type Usage, usageOf } from '../admission/quota';
import { isObject, type Obj } from '../api/meta';
import { formatQuantity, parseQuantity, type Quantity } from '../api/quantity';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';

export interface QuotaControllerOptions {
  /** --resource-quota-sync-period */
  resyncMs?: number;
  /** Quiet time after the last change in a namespace before it is recomputed. */
  settleMs?: number;
  log?: (msg: string) => void;
}

const WATCHED: [string, string][] = [
  ['', 'pods'],
  ['', 'services'],
  ['', 'configmaps'],
  ['', 'secrets'],
];

/** The kinds (group, plural) whose objects a `hard` key counts. */
function kindsFor(key: string): [string, string][] {
  if (
    key === 'pods' ||
    key === 'cpu' ||
    key === 'memory' ||
    key === 'ephemeral-storage' ||
    key.startsWith('requests.') ||
    key.startsWith('limits.')
  ) {
    return [['', 'pods']];
  }
  if (key.startsWith('services')) return [['', 'services']];
  if (key.startsWith('count/')) {
    const r = key.slice('count/'.length);
    const dot = r.indexOf('.');
    return [dot < 0 ? ['', r] : [r.slice(dot + 1), r.slice(0, dot)]];
  }
  return [['', key]];
}

/** Whether a quota's status lacks what its spec asks for (new, or hard changed). */
function needsUsage(quota: Obj): boolean {
  const hard = ((quota.spec as { hard?: Record<string, unknown> } | undefined)?.hard ?? {}) as Record<string, unknown>;
  const status = (isObject(quota.status) ? quota.status : {}) as { hard?: Record<string, unknown>; used?: Record<string, unknown> };
  return JSON.stringify(status.hard ?? {}) !== JSON.stringify(hard) || Object.keys(hard).some((k) => status.used?.[k] === undefined);
}

export class ResourceQuotaController {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly running = new Set<string>();
  private stopped = false;
  private resync: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly api: ApiRegistry,
    private readonly quotas: ResourceStore,
    private readonly opts: QuotaControllerOptions = {},
  ) {}

  async start(): Promise<void> {
    const qc = this.quotas.watchCache();
    await qc.start();
    const q = qc.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of q.initial) this.schedule(c.obj.metadata.namespace as string, 0);
    // Changes of a counted kind under `prefix`: the namespace is read off the key, and nothing is
    // parsed (an event past the cache's hot window would decode its bytes for it).
    const follow = async (w: typeof q.watcher, prefix: string) => {
      while (!this.stopped && !w.ended) {
        for (const e of await w.next(Number.POSITIVE_INFINITY)) {
          if (e.type === 'ADDED') continue;
          const key = e.event.key;
          this.schedule(key.slice(prefix.length, key.indexOf('/', prefix.length)), settleMs);
        }
      }
    };
    // A new quota, or one whose hard changed, is computed at once (creates are refused with
    // "status unknown" until then); status-only changes (admission's reservations) are not a
    // reason to recompute: a write that failed after its reservation is corrected by the resync.
    const settleMs = this.opts.settleMs ?? 1000;
    const fq = async () => {
      while (!this.stopped && !q.watcher.ended) {
        for (const e of await q.watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.type === 'DELETED' || needsUsage(e.obj)) this.schedule(e.obj.metadata.namespace as string, 0);
        }
      }
    };
    void fq();
    for (const [g, r] of WATCHED) {
      const store = this.api.lookup(g, 'v1', r);
      if (!store) continue;
      const cache = store.watchCache();
      await cache.start();
      // A create was charged by admission before it was stored (as the reference's replenishment,
      // which recomputes on updates and deletes only): recomputing the namespace after every
      // burst of creates would cost O(objects) per burst.
      void follow(cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now').watcher, store.prefix);
    }
    this.resync = setInterval(() => {
      for (const c of qc.list()) this.schedule(c.obj.metadata.namespace as string, 0);
    }, this.opts.resyncMs ?? 300_000);
    this.resync.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resync);
    for (const t of this.timers.values()) clearTimeout(t);
  }

  /** Recompute the namespace's quotas `settleMs` after its last change (restarting the wait). */
  private schedule(ns: string, settleMs: number): void {
    if (this.stopped || this.quotas.watchCache().size(`${this.quotas.prefix}${ns}/`) === 0) return;
    const prev = this.timers.get(ns);
    if (prev) clearTimeout(prev);
    this.timers.set(
      ns,
      setTimeout(() => {
        this.timers.delete(ns);
        if (this.running.has(ns)) return this.schedule(ns, settleMs);
        this.running.add(ns);
        this.syncNamespace(ns)
          .catch((e) => this.opts.log?.(`resource quota controller: ${ns}: ${String(e)}`))
          .finally(() => this.running.delete(ns));
      }, settleMs),
    );
  }

  private async syncNamespace(ns: string): Promise<void> {
    for (const c of this.quotas.watchCache().list(`${this.quotas.prefix}${ns}/`)) await this.syncQuota(ns, c.obj);
  }

  private async syncQuota(ns: string, quota: Obj): Promise<void> {
    const hard = ((quota.spec as { hard?: Record<string, unknown> } | undefined)?.hard ?? {}) as Record<string, unknown>;
    const used: Usage = new Map();
    const listed = new Map<string, Obj[]>();
    for (const key of Object.keys(hard)) {
      let total: Quantity = { mant: 0n, exp: 0, format: parseQuantity(hard[key])?.format ?? 'DecimalSI' };
      for (const [g, r] of kindsFor(key)) {
        const store = this.api.stores.find((s) => s.def.group === g && s.def.plural === r);
        if (!store) continue;
        const id = `${g}/${r}`;
        let objs = listed.get(id);
        if (!objs) {
          const cache = store.watchCache();
          await cache.start();
          objs = cache.list(`${store.prefix}${ns}/`).map((c) => c.obj);
          listed.set(id, objs);
        }
        for (const o of objs) {
          if (!quotaMatches(quota, g, r, o)) continue;
          const u = usageOf(g, r, o).get(key);
          if (u) total = addQ(total, u);
        }
      }
      used.set(key, total);
    }
    const status = (isObject(quota.status) ? quota.status : {}) as Record<string, unknown>;
    const next = {
      ...status,
      hard: { ...hard },
      used: Object.fromEntries([...used].map(([k, q]) => [k, formatQuantity(q)])),
    };
    if (JSON.stringify(next) === JSON.stringify(status)) return;
    await this.quotas.update(
      ns,
      quota.metadata.name as string,
      { ...quota, status: next },
      { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'resourcequota-controller' },
      'status',
    );
  }
}
