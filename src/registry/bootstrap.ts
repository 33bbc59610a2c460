/**
 * Post-start: the objects every cluster has, written through the registry. The system
 * namespaces; the kinds' own objects (`objects`: the system PriorityClasses); the APIServices of
 * the served groups (api-services.ts); the Service address allocator's repair pass over the
 * stored Services (as the reference's repair controllers); the `kubernetes` Service in `default`.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ApiRegistry } from './api-registry';
import { followApiServices } from './api-services';
import { ALL_OBJECTS } from './list';
import type { WriteOptions } from './options';
import type { ServiceAllocator } from './service-allocator';

const NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const write = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Strict', warnings: [] });
const exists = (e: unknown) => e instanceof StatusError && e.code === 409;

export async function bootstrapObjects(
  api: ApiRegistry,
  allocator: ServiceAllocator,
  port: number,
  log: (msg: string) => void,
  objects: readonly { group: string; plural: string; obj: Obj }[] = [],
): Promise<void> {
  const namespaces = api.lookup('', 'v1', 'namespaces');
  if (namespaces) {
    for (const name of NAMESPACES) {
      await namespaces.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, write()).catch((e) => {
        if (!exists(e)) throw e;
      });
    }
  }
  await Promise.all(
    objects.map((o) =>
      api
        .lookup(o.group, 'v1', o.plural)
        ?.create(o.obj.metadata.namespace ?? '', structuredClone(o.obj), write())
        .catch((e) => {
          if (!exists(e)) throw e;
        }),
    ),
  );
  await followApiServices(api, log);
  const services = api.lookup('', 'v1', 'services');
  if (!services) return;
  const held = await services.list('', ALL_OBJECTS);
  const fixed = await allocator.repair(held.items.map((i) => i.obj));
  if (fixed.removed + fixed.added > 0) log(`service address repair: ${fixed.removed} stale allocations removed, ${fixed.added} restored`);
  if (held.items.some((i) => i.key === services.key('default', 'kubernetes'))) return;
  await services
    .create(
      'default',
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: {
          type: 'ClusterIP',
          clusterIP: allocator.kubernetesIP,
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
          sessionAffinity: 'None',
        },
      },
      write(),
    )
    .catch((e) => {
      if (!exists(e)) throw e;
    });
}
