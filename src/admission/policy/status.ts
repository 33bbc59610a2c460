/**
 * The ValidatingAdmissionPolicy status controller (the reference's
 * validatingadmissionpolicy-status-controller): for each policy whose generation is newer than
 * `status.observedGeneration`, type-checks its expressions against the matched kinds' schemas
 * and writes
 *
 *   status: { observedGeneration: <generation>, typeChecking: { expressionWarnings: [...] } }
 *
 * through the registry's status subresource (conditional on the version read: a race is retried
 * from the next event). It runs from the watch cache, so it works the same on several replicas.
 */
import { isObject, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import type { ResourceStore } from '../../registry/generic';
import type { SchemaSet } from '../../schema/engine';
import type { WatchCache } from '../../watch/cache';
import { type KindResolver, typeCheck } from './typecheck';

export const STATUS_CONTROLLER = 'validatingadmissionpolicy-status-controller';

export class PolicyStatusController {
  private stopped = false;
  private readonly queue = new Map<string, Obj>();
  private draining = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly cache: WatchCache,
    private readonly kinds: KindResolver,
    private readonly schemas: SchemaSet,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await this.cache.start();
    const w = this.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of w.initial) this.enqueue(c.obj);
    void (async () => {
      while (!this.stopped && !w.watcher.ended) {
        for (const e of await w.watcher.next(Number.POSITIVE_INFINITY)) if (e.type !== 'DELETED') this.enqueue(e.obj);
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  private enqueue(p: Obj): void {
    const status = isObject(p.status) ? p.status : {};
    const observed = typeof status.observedGeneration === 'number' ? status.observedGeneration : 0;
    if ((p.metadata.generation ?? 0) <= observed) return;
    this.queue.set(p.metadata.name as string, p);
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [name, p] = this.queue.entries().next().value as [string, Obj];
        this.queue.delete(name);
        await this.reconcile(p);
      }
    } finally {
      this.draining = false;
    }
  }

  private async reconcile(p: Obj): Promise<void> {
    let expressionWarnings: unknown[];
    try {
      expressionWarnings = typeCheck(p, this.kinds, this.schemas);
    } catch (e) {
      // Type checking must never change what the policy does: an internal failure leaves no warnings.
      this.log(`validatingadmissionpolicy status: type checking ${p.metadata.name}: ${(e as Error).message}`);
      expressionWarnings = [];
    }
    const typeChecking = expressionWarnings.length > 0 ? { expressionWarnings } : {};
    const status = { ...(isObject(p.status) ? p.status : {}), observedGeneration: p.metadata.generation ?? 0, typeChecking };
    try {
      await this.store.update(
        '',
        p.metadata.name as string,
        { ...p, status },
        { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: STATUS_CONTROLLER },
        'status',
      );
    } catch (e) {
      // 409: the policy changed meanwhile (its next event brings it back); 404: deleted.
      if (!(e instanceof StatusError) || (e.code !== 409 && e.code !== 404)) {
        this.log(`validatingadmissionpolicy status: ${p.metadata.name}: ${(e as Error).message}`);
      }
    }
  }
}
