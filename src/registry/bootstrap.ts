/**
 * Post-start: the objects every cluster has, written through the registry. The system
 * namespaces; the Service address allocator's repair pass over the stored Services (as the
 * reference's repair controllers); the `kubernetes` Service in `default`.
 */
import { StatusError } from '../api/status';
import type { ApiRegistry } from './api-registry';
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
): Promise<void> {
  const namespaces = api.lookup('', 'v1', 'namespaces');
  if (namespaces) {
    for (const name of NAMESPACES) {
      await namespaces.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, write()).catch((e) => {
        if (!exists(e)) throw e;
      });
    }
  }
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
