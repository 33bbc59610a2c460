/**
 * The TTL-after-finished controller, as the reference's pkg/controller/ttlafterfinished: a
 * finished Job (condition Complete or Failed) with spec.ttlSecondsAfterFinished is deleted that
 * many seconds after it finished (the finished condition's lastTransitionTime), with
 * propagationPolicy Foreground (its pods go first) and the uid as a precondition. Before deleting,
 * the Job is read afresh and checked again (its TTL may have changed).
 *
 * It follows the Jobs' watch cache and deletes through the registry.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import { follow, WorkQueue } from './workqueue';

interface Finishable {
  spec?: { ttlSecondsAfterFinished?: number };
  status?: { conditions?: { type?: string; status?: string; lastTransitionTime?: string }[] };
}

/** When the Job expires (ms), or undefined when it has no TTL or has not finished. */
export function expiresAt(j: Obj): number | undefined {
  const f = j as unknown as Finishable;
  const ttl = f.spec?.ttlSecondsAfterFinished;
  if (typeof ttl !== 'number' || j.metadata.deletionTimestamp) return undefined;
  const done = (f.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(done.lastTransitionTime ?? '');
  return (Number.isNaN(at) ? Date.now() : at) + ttl * 1000;
}

export class TtlAfterFinishedController {
  private readonly queue: WorkQueue;
  private follower: { stop(): void } | undefined;

  constructor(
    private readonly jobs: ResourceStore,
    private readonly cache: WatchCache,
    private readonly opts: { log?: (msg: string) => void; now?: () => number } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`ttl-after-finished controller: ${m}`),
    );
  }

  async start(): Promise<void> {
    await this.cache.start();
    const add = (o: Obj) => {
      if (expiresAt(o) !== undefined) this.queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    };
    this.follower = follow(
      this.cache,
      (objs) => {
        for (const o of objs) add(o);
      },
      (o, type) => {
        if (type !== 'DELETED') add(o);
      },
    );
  }

  stop(): void {
    this.follower?.stop();
    this.queue.stop();
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const cached = this.cache.get(this.jobs.key(ns, name))?.obj;
    const now = (this.opts.now ?? Date.now)();
    if (!cached || expiresAt(cached) === undefined) return;
    if ((expiresAt(cached) as number) > now) {
      this.queue.after(key, (expiresAt(cached) as number) - now);
      return;
    }
    // The TTL may have changed since the cache saw it: read the Job afresh.
    let fresh: Obj;
    try {
      fresh = decodeStored(await this.jobs.get(ns, name));
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
    const at = expiresAt(fresh);
    if (at === undefined) return;
    if (at > now) {
      this.queue.after(key, at - now);
      return;
    }
    try {
      await this.jobs.delete(ns, name, {
        dryRun: false,
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata.uid as string, resourceVersion: fresh.metadata.resourceVersion as string },
      });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }
}
