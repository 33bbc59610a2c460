/**
 * The service account controller (the reference's ServiceAccountsController): every active
 * namespace has a `default` service account; one deleted is made again. Runs from the watch
 * caches of namespaces and service accounts and writes through the registry.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

const DEFAULT = 'default';

export class ServiceAccountController {
  private stopped = false;

  constructor(
    private readonly namespaces: WatchCache,
    private readonly accounts: ResourceStore,
    private readonly accountCache: WatchCache,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await Promise.all([this.namespaces.start(), this.accountCache.start()]);
    const ns = this.namespaces.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    const sa = this.accountCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    await Promise.all(ns.initial.map((c) => this.ensure(c.obj)));
    void (async () => {
      while (!this.stopped && !ns.watcher.ended)
        for (const e of await ns.watcher.next(Number.POSITIVE_INFINITY)) if (e.type !== 'DELETED') await this.ensure(e.obj);
    })();
    void (async () => {
      while (!this.stopped && !sa.watcher.ended) {
        for (const e of await sa.watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.type !== 'DELETED' || e.obj.metadata.name !== DEFAULT) continue;
          const nsObj = this.namespaces.list().find((c) => c.obj.metadata.name === e.obj.metadata.namespace)?.obj;
          if (nsObj) await this.ensure(nsObj);
        }
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  private async ensure(ns: Obj): Promise<void> {
    const name = ns.metadata.name as string;
    if (ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    if (this.accountCache.list(this.accounts.key(name, DEFAULT)).some((c) => c.obj.metadata.name === DEFAULT)) return;
    try {
      await this.accounts.create(
        name,
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT } },
        {
          dryRun: false,
          fieldValidation: 'Ignore',
          warnings: [],
          fieldManager: 'service-account-controller',
        },
      );
    } catch (e) {
      // 409: there already; 403/404: the namespace is going or gone.
      if (!(e instanceof StatusError) || ![409, 403, 404].includes(e.code)) this.log(`service accounts: ${name}: ${(e as Error).message}`);
    }
  }
}
