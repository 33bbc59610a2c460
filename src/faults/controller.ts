/**
 * Following the FaultInjection objects: from the kind's watch cache (a change takes effect as
 * soon as the cache sees it, within milliseconds of the write; a deleted fault stops at once),
 * and writing their status back through the registry once a second at most, only when it
 * changed (never per request):
 *
 *   status.matched, status.injected   this server's counts since the object was created (a
 *                                     restart goes on from the stored counts)
 *   conditions Accepted               True/Valid: the spec passed validation (a stored spec always has)
 *   conditions Active                 True/Active, or False with Pending (before its schedule),
 *                                     Expired (after it), LimitReached
 *
 * A spec change (a new generation) recompiles the fault and restarts its generator from the
 * seed; its counts go on.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import { type CompiledFault, type Counts, compileFault, newCounts } from './compile';
import type { FaultSet } from './engine';

export const FAULTS_MANAGER = 'fault-injection-controller';
/** How often counts are written back: often enough to watch a test run, rare enough to cost nothing. */
export const STATUS_INTERVAL_MS = 1000;

type J = Record<string, unknown>;
const write: WriteOptions = { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: FAULTS_MANAGER };

interface Written {
  matched: number;
  injected: number;
  active: string;
}

export class FaultController {
  private stopped = false;
  private watcher: { end(reason: 'closed'): void } | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly written = new Map<string, Written>();
  private writing = false;

  constructor(
    private readonly set: FaultSet,
    private readonly store: ResourceStore,
    private readonly log: (msg: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    const cache = this.store.watchCache();
    await cache.start();
    const { watcher } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    this.watcher = watcher;
    this.sync();
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        const events = await watcher.next(Number.POSITIVE_INFINITY);
        if (events.length > 0) this.sync();
      }
    })();
    this.timer = setInterval(() => void this.writeStatus(), STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.end('closed');
    if (this.timer) clearInterval(this.timer);
  }

  /** Recompile from the cache: faults whose uid and generation are unchanged are kept as they are. */
  sync(): void {
    const have = new Map(this.set.faults.map((f) => [f.uid, f]));
    const next: CompiledFault[] = [];
    for (const c of this.store.watchCache().list()) {
      const o = c.obj;
      if (o.metadata.deletionTimestamp) continue;
      const old = have.get(String(o.metadata.uid ?? ''));
      try {
        next.push(old && old.generation === o.metadata.generation ? old : compileFault(o));
      } catch (e) {
        this.log(`fault ${o.metadata.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const stored = new Map(
      this.store
        .watchCache()
        .list()
        .map((c) => [String(c.obj.metadata.uid ?? ''), c.obj]),
    );
    this.set.configure(next, (f) => countsOf(stored.get(f.uid)));
    for (const uid of this.written.keys()) if (!this.set.counts.has(uid)) this.written.delete(uid);
  }

  /** Write the status of every fault whose counts or Active condition changed since the last write. */
  async writeStatus(): Promise<void> {
    if (this.writing || this.stopped) return;
    this.writing = true;
    try {
      const now = this.now();
      await Promise.all(
        this.set.faults.map(async (f) => {
          const c = this.set.counts.get(f.uid);
          if (!c) return;
          const active = activeCondition(f, c, now);
          const last = this.written.get(f.uid);
          if (last && last.matched === c.matched && last.injected === c.injected && last.active === active.reason) return;
          const w = { matched: c.matched, injected: c.injected, active: active.reason };
          const stamp = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
          const stored = this.store.watchCache().get(this.store.key('', f.name))?.obj;
          const conditions = [
            { type: 'Accepted', status: 'True', reason: 'Valid', message: 'the spec is valid' },
            { type: 'Active', ...active },
          ].map((x) => ({ ...x, observedGeneration: f.generation, lastTransitionTime: since(stored, x.type, x.status) ?? stamp }));
          const body = {
            apiVersion: 'testing.svc.io/v1alpha1',
            kind: 'FaultInjection',
            metadata: { name: f.name, uid: f.uid },
            status: { matched: c.matched, injected: c.injected, conditions },
          };
          try {
            await this.store.patch('', f.name, 'apply-patch', body, write, 'status', true);
            this.written.set(f.uid, w);
          } catch (e) {
            // Deleted meanwhile (404), or replaced by an object of another uid (409): the next sync drops it.
            if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
            this.log(`fault ${f.name} status: ${e instanceof Error ? e.message : String(e)}`);
          }
        }),
      );
    } finally {
      this.writing = false;
    }
  }
}

/** The counts a fault starts from: those its stored status says. */
function countsOf(o: Obj | undefined): Counts {
  const s = (o?.status ?? {}) as J;
  const n = (v: unknown) => (typeof v === 'number' && v >= 0 ? v : 0);
  return newCounts(n(s.matched), n(s.injected));
}

function activeCondition(f: CompiledFault, c: Counts, now: number): { status: string; reason: string; message: string } {
  if (now < f.startAt) return { status: 'False', reason: 'Pending', message: `active from ${new Date(f.startAt).toISOString()}` };
  if (now >= f.endAt) return { status: 'False', reason: 'Expired', message: `active until ${new Date(f.endAt).toISOString()}` };
  if (c.injected >= f.limit) return { status: 'False', reason: 'LimitReached', message: `injected ${c.injected} of at most ${f.limit}` };
  return { status: 'True', reason: 'Active', message: 'matching requests' };
}

/** When a stored condition of that type last changed to `status` (undefined: it has another status or none). */
function since(o: Obj | undefined, type: string, status: string): string | undefined {
  const conds = ((o?.status ?? {}) as J).conditions;
  if (!Array.isArray(conds)) return undefined;
  const c = conds.find((x: J) => x.type === type) as J | undefined;
  return c && c.status === status && typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : undefined;
}
