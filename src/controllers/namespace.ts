/**
 * The namespace controller: empties Terminating namespaces and then finalizes them.
 *
 * For a namespace with deletionTimestamp set: delete every namespaced object in it (every kind
 * the registry serves, including later custom ones), report progress in the namespace's
 * conditions, and once nothing is left remove the `kubernetes` finalizer through the finalize
 * subresource, which lets the namespace go. Objects with finalizers of their own keep the
 * namespace Terminating until their controllers remove them, as in the reference.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import { ALL_OBJECTS, listedObjects } from '../registry/list';
import type { WatchCache } from '../watch/cache';

const ALL = ALL_OBJECTS;

export const NAMESPACE_FINALIZER = 'kubernetes';

export interface ControllerOptions {
  /** Re-check interval for namespaces whose content is not gone yet. */
  resyncMs?: number;
  log?: (msg: string) => void;
  clock?: () => number;
}

export class NamespaceController {
  private readonly busy = new Set<string>();
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly api: ApiRegistry,
    private readonly namespaces: WatchCache,
    private readonly opts: ControllerOptions = {},
  ) {}

  async start(): Promise<void> {
    await this.namespaces.start();
    const { watcher, initial } = this.namespaces.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of initial) this.consider(c.obj);
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) if (e.type !== 'DELETED') this.consider(e.obj);
      }
    })();
    this.timer = setInterval(() => {
      for (const c of this.namespaces.list()) this.consider(c.obj);
    }, this.opts.resyncMs ?? 2000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private consider(ns: Obj): void {
    const name = ns.metadata.name as string;
    if (!ns.metadata.deletionTimestamp || this.busy.has(name)) return;
    this.busy.add(name);
    this.cleanup(name)
      .catch((e) => this.opts.log?.(`namespace controller: ${name}: ${String(e)}`))
      .finally(() => this.busy.delete(name));
  }

  /** One pass: delete content, report, finalize when empty. */
  private async cleanup(name: string): Promise<void> {
    const remaining = new Map<string, number>();
    const withFinalizers = new Map<string, number>();
    for (const store of this.api.stores) {
      if (!store.def.namespaced) continue;
      await this.deleteAll(store, name);
      const left = await store.list(name, ALL);
      const objs = listedObjects(left);
      if (objs.length === 0) continue;
      const label = store.def.group ? `${store.def.plural}.${store.def.group}` : store.def.plural;
      remaining.set(label, objs.length);
      for (const o of objs) {
        for (const f of o.metadata.finalizers ?? []) withFinalizers.set(f, (withFinalizers.get(f) ?? 0) + 1);
      }
    }
    const nsStore = this.api.lookup('', 'v1', 'namespaces') as ResourceStore;
    const cur = decodeStored(await nsStore.get('', name));
    if (remaining.size === 0) {
      const finalizers = ((cur.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
      await nsStore.update(
        '',
        name,
        { ...cur, spec: { ...(cur.spec as object), finalizers } },
        { dryRun: false, fieldValidation: 'Ignore', warnings: [] },
        'finalize',
      );
      return;
    }
    await this.report(nsStore, cur, remaining, withFinalizers);
  }

  private async deleteAll(store: ResourceStore, namespace: string): Promise<void> {
    try {
      await store.deleteCollection(namespace, ALL, { dryRun: false, propagationPolicy: 'Background' });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  private async report(
    nsStore: ResourceStore,
    cur: Obj,
    remaining: Map<string, number>,
    withFinalizers: Map<string, number>,
  ): Promise<void> {
    const now = new Date(this.opts.clock?.() ?? Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const cond = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      lastTransitionTime: now,
      reason,
      message,
    });
    const content = [...remaining].map(([r, n]) => `${r} has ${n} resource instances`).join(', ');
    const fins = [...withFinalizers].map(([f, n]) => `${f} in ${n} resource instances`).join(', ');
    const conditions = [
      cond('NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'),
      cond('NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'),
      cond(
        'NamespaceDeletionContentFailure',
        'False',
        'ContentDeleted',
        'All content successfully deleted, may be waiting on finalization',
      ),
      cond('NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${content}`),
      withFinalizers.size > 0
        ? cond(
            'NamespaceFinalizersRemaining',
            'True',
            'SomeFinalizersRemain',
            `Some content in the namespace has finalizers remaining: ${fins}`,
          )
        : cond('NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'),
    ];
    const status = (cur.status ?? {}) as {
      conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
    };
    // Keep lastTransitionTime when a condition did not change.
    const merged = conditions.map((c) => {
      const old = status.conditions?.find((o) => o.type === c.type);
      return old && old.status === c.status && old.reason === c.reason && old.message === c.message ? old : c;
    });
    if (JSON.stringify(merged) === JSON.stringify(status.conditions)) return;
    await nsStore.update(
      '',
      cur.metadata.name as string,
      { ...cur, status: { ...status, conditions: merged } },
      { dryRun: false, fieldValidation: 'Ignore', warnings: [] },
      'status',
    );
  }
}
