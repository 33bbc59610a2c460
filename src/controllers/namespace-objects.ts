/**
 * Controllers that keep one object in every active namespace (the reference's
 * ServiceAccountsController and its root CA certificate publisher): the object is created where
 * it is missing, made again when deleted, and (with `current`) put back when changed. They run
 * from the watch caches of namespaces and of the object's resource, and write through the
 * registry.
 *
 *   new NamespaceObjects(namespaces, accounts, accountCache, {
 *     name: 'default', manager: 'service-account-controller',
 *     build: () => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
 *   })
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

export interface NamespaceObject {
  /** The object's name in each namespace. */
  name: string;
  /** The field manager of the controller's writes. */
  manager: string;
  build(): Obj;
  /** Whether an existing object is as it should be (absent: any existing one is). */
  current?(o: Obj): boolean;
}

export class NamespaceObjects {
  private stopped = false;

  constructor(
    private readonly namespaces: WatchCache,
    private readonly store: ResourceStore,
    private readonly cache: WatchCache,
    private readonly want: NamespaceObject,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await Promise.all([this.namespaces.start(), this.cache.start()]);
    const ns = this.namespaces.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    const own = this.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    await Promise.all(ns.initial.map((c) => this.ensure(c.obj)));
    void (async () => {
      while (!this.stopped && !ns.watcher.ended)
        for (const e of await ns.watcher.next(Number.POSITIVE_INFINITY)) if (e.type !== 'DELETED') await this.ensure(e.obj);
    })();
    void (async () => {
      while (!this.stopped && !own.watcher.ended) {
        for (const e of await own.watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.obj.metadata.name !== this.want.name) continue;
          if (e.type !== 'DELETED' && (this.want.current?.(e.obj) ?? true)) continue;
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
    const namespace = ns.metadata.name as string;
    if (ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    const existing = this.cache.list(this.store.key(namespace, this.want.name)).find((c) => c.obj.metadata.name === this.want.name)?.obj;
    if (existing && (this.want.current?.(existing) ?? true)) return;
    const w = { dryRun: false, fieldValidation: 'Ignore' as const, warnings: [], fieldManager: this.want.manager };
    try {
      if (!existing) {
        await this.store.create(namespace, this.want.build(), w);
        return;
      }
      await this.store.updateFrom(namespace, this.want.name, '', w, (cur) => {
        const fresh = this.want.build();
        return { ...cur, ...fresh, metadata: { ...cur.metadata, ...fresh.metadata } };
      });
    } catch (e) {
      // 409: there already (or changed meanwhile: the watch brings it back); 403/404: the namespace is going or gone.
      if (!(e instanceof StatusError) || ![409, 403, 404].includes(e.code)) {
        this.log(`${this.want.manager}: ${namespace}: ${(e as Error).message}`);
      }
    }
  }
}

/** Every active namespace has a `default` service account (the reference's ServiceAccountsController). */
export const DEFAULT_SERVICE_ACCOUNT: NamespaceObject = {
  name: 'default',
  manager: 'service-account-controller',
  build: () => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
};

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** Every active namespace has the ConfigMap `kube-root-ca.crt` with the server's CA (the reference's root-ca-cert-publisher). */
export function rootCaConfigMap(caPem: string): NamespaceObject {
  return {
    name: ROOT_CA_CONFIGMAP,
    manager: 'root-ca-cert-publisher',
    build: () => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ROOT_CA_CONFIGMAP, annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION } },
      data: { 'ca.crt': caPem },
    }),
    current: (o) => (o.data as Record<string, string> | undefined)?.['ca.crt'] === caPem,
  };
}
