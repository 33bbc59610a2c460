/**
 * The configuration side of priority and fairness, from the FlowSchema and
 * PriorityLevelConfiguration watch caches, written through the registry (so it works the same
 * on several replicas):
 *
 *   consumer   every change reconfigures FlowControl; each FlowSchema's `Dangling` condition
 *              is kept current by server-side apply on its status (True/NotFound when its
 *              priority level does not exist, False/Found otherwise)
 *   producer   the bootstrap objects (bootstrap-config.ts): mandatory ones (exempt, catch-all)
 *              are recreated when deleted and put back when changed; suggested ones are
 *              created when missing and put back only while their autoupdate annotation says
 *              "true" (`apf.kubernetes.io/autoupdate-spec`, or `apf.svc.io/autoupdate-spec`;
 *              without it, only while generation is 1, as the reference decides)
 *
 * Both run on every change of either kind, one pass at a time, with a pass after any change
 * that arrived during the previous one.
 */
import { deepEqual, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { bootstrapConfig } from './bootstrap-config';
import type { FlowControl } from './flow-control';

export const AUTO_UPDATE = 'apf.kubernetes.io/autoupdate-spec';
export const SVC_AUTO_UPDATE = 'apf.svc.io/autoupdate-spec';
export const CONSUMER_MANAGER = 'api-priority-and-fairness-config-consumer-v1';
const PRODUCER_MANAGER = 'api-priority-and-fairness-config-producer-v1';

type J = Record<string, unknown>;

/** Values that mean "not set" once defaulted and pruned (false, '', empty lists and objects). */
function pruned(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruned);
  if (v === null || typeof v !== 'object') return v;
  const out: J = {};
  for (const [k, x] of Object.entries(v)) {
    const p = pruned(x);
    if (p === false || p === '' || p === null || p === undefined) continue;
    if (Array.isArray(p) && p.length === 0) continue;
    if (typeof p === 'object' && !Array.isArray(p) && Object.keys(p as J).length === 0) continue;
    out[k] = p;
  }
  return out;
}

export function sameSpec(a: unknown, b: unknown): boolean {
  return deepEqual(pruned(a), pruned(b));
}

/** Whether the producer may put a suggested object's spec back (the reference's shouldUpdateSpec). */
export function autoUpdates(o: Obj): boolean {
  const ann = o.metadata.annotations ?? {};
  const v = ann[SVC_AUTO_UPDATE] ?? ann[AUTO_UPDATE];
  if (v !== undefined) {
    const b = parseBool(v);
    if (b !== undefined) return b;
  }
  return o.metadata.generation === 1;
}

/** Go's strconv.ParseBool. */
function parseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  return undefined;
}

const write = (manager: string): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: manager });

export class ApfConfigController {
  private stopped = false;
  private running = false;
  private lead = true;
  private again = false;
  private readonly watchers: { end(reason: 'closed'): void }[] = [];

  constructor(
    private readonly fc: FlowControl,
    private readonly flowSchemas: { store: ResourceStore; cache: WatchCache },
    private readonly levels: { store: ResourceStore; cache: WatchCache },
    private readonly log: (msg: string) => void = () => {},
  ) {}

  /**
   * Whether this replica writes (the bootstrap objects, Dangling): only the elected one does;
   * every replica configures its own FlowControl from the objects.
   */
  get leading(): boolean {
    return this.lead;
  }

  set leading(v: boolean) {
    const was = this.lead;
    this.lead = v;
    if (v && !was) void this.sync();
  }

  async start(): Promise<void> {
    for (const k of [this.flowSchemas, this.levels]) {
      await k.cache.start();
      const { watcher } = k.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
      this.watchers.push(watcher);
      void (async () => {
        while (!this.stopped && !watcher.ended) {
          const events = await watcher.next(Number.POSITIVE_INFINITY);
          if (events.length > 0) void this.sync();
        }
      })();
    }
    await this.sync();
    this.fc.start();
  }

  stop(): void {
    this.stopped = true;
    this.fc.stop();
    for (const w of this.watchers) w.end('closed');
  }

  /** One pass; a change during it earns one more. */
  async sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        const schemas = this.flowSchemas.cache.list().map((c) => c.obj);
        const levels = this.levels.cache.list().map((c) => c.obj);
        this.fc.configure(schemas, levels);
        if (this.lead) {
          await this.produce(schemas, levels);
          await this.markDangling(schemas, new Set(levels.map((l) => l.metadata.name as string)));
        }
      } while (this.again && !this.stopped);
    } catch (e) {
      this.log(`apf configuration: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = false;
    }
  }

  private async produce(schemas: Obj[], levels: Obj[]): Promise<void> {
    const cfg = bootstrapConfig();
    await Promise.all([
      ...cfg.mandatory.priorityLevels.map((o) => this.ensure(this.levels.store, levels, o, true)),
      ...cfg.suggested.priorityLevels.map((o) => this.ensure(this.levels.store, levels, o, false)),
    ]);
    await Promise.all([
      ...cfg.mandatory.flowSchemas.map((o) => this.ensure(this.flowSchemas.store, schemas, o, true)),
      ...cfg.suggested.flowSchemas.map((o) => this.ensure(this.flowSchemas.store, schemas, o, false)),
    ]);
  }

  private async ensure(store: ResourceStore, present: Obj[], want: Obj, mandatory: boolean): Promise<void> {
    const name = want.metadata.name as string;
    const have = present.find((o) => o.metadata.name === name);
    try {
      if (!have) {
        await store.create('', want, write(PRODUCER_MANAGER));
        return;
      }
      if (sameSpec(have.spec, want.spec)) return;
      if (!mandatory && !autoUpdates(have)) return;
      const annotations = { ...(have.metadata.annotations ?? {}), [AUTO_UPDATE]: 'true' };
      if (SVC_AUTO_UPDATE in annotations) annotations[SVC_AUTO_UPDATE] = 'true';
      await store.update('', name, { ...have, metadata: { ...have.metadata, annotations }, spec: want.spec }, write(PRODUCER_MANAGER), '');
    } catch (e) {
      // A concurrent writer (another replica, the user) won: the next pass looks again.
      if (e instanceof StatusError && (e.code === 409 || e.code === 404)) return;
      this.log(`apf bootstrap ${want.kind} ${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async markDangling(schemas: Obj[], levels: Set<string>): Promise<void> {
    await Promise.all(
      schemas.map(async (fs) => {
        const spec = (fs.spec ?? {}) as J;
        const plName = String(((spec.priorityLevelConfiguration ?? {}) as J).name ?? '');
        const dangling = !levels.has(plName);
        const want = dangling
          ? {
              status: 'True',
              reason: 'NotFound',
              message: `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" but there is no such object`,
            }
          : {
              status: 'False',
              reason: 'Found',
              message: `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" and it exists`,
            };
        const conds = Array.isArray((fs.status as J | undefined)?.conditions) ? ((fs.status as J).conditions as J[]) : [];
        const cur = conds.find((c) => c.type === 'Dangling');
        if (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message) return;
        const lastTransitionTime =
          cur && cur.status === want.status && typeof cur.lastTransitionTime === 'string'
            ? cur.lastTransitionTime
            : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
        const body = {
          apiVersion: 'flowcontrol.apiserver.svc.io/v1',
          kind: 'FlowSchema',
          metadata: { name: fs.metadata.name },
          status: { conditions: [{ type: 'Dangling', ...want, lastTransitionTime }] },
        };
        try {
          await this.flowSchemas.store.patch('', fs.metadata.name as string, 'apply-patch', body, write(CONSUMER_MANAGER), 'status', true);
        } catch (e) {
          if (e instanceof StatusError && (e.code === 409 || e.code === 404)) return;
          this.log(`apf dangling ${fs.metadata.name}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }),
    );
  }
}
