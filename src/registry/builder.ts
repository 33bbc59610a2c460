/**
 * The registry as the server builds it: every kind's store over the store backend, each behind
 * its watch cache, with its admission chain and write hooks given at construction.
 */

import type { Config } from '../config/flags';
import type { SchemaSet } from '../schema/engine';
import type { KV } from '../store/types';
import { cachedStorage } from '../watch/storage';
import { ApiRegistry, type RegistryDeps } from './api-registry';
import type { KindDef } from './kind';
import { OwnWriteSeats } from './own-writes';
import { ServiceAllocator } from './service-allocator';

/**
 * Resources whose watch cache keeps every object parsed (`group/plural`): the server reads them
 * on requests and controller passes (admission configuration, authorization, flow control,
 * budgets), and there are few of them. Every other cache holds stored bytes only and parses on
 * demand.
 */
const PARSED = new Set([
  '/namespaces',
  '/limitranges',
  '/resourcequotas',
  'admissionregistration.svc.io/validatingadmissionpolicies',
  'admissionregistration.svc.io/validatingadmissionpolicybindings',
  'admissionregistration.svc.io/mutatingadmissionpolicies',
  'admissionregistration.svc.io/mutatingadmissionpolicybindings',
  'apiextensions.svc.io/customresourcedefinitions',
  'flowcontrol.apiserver.svc.io/flowschemas',
  'flowcontrol.apiserver.svc.io/prioritylevelconfigurations',
  'rbac.authorization.svc.io/roles',
  'rbac.authorization.svc.io/clusterroles',
  'rbac.authorization.svc.io/rolebindings',
  'rbac.authorization.svc.io/clusterrolebindings',
  'policy/poddisruptionbudgets',
]);

export interface RegistryBuild {
  api: ApiRegistry;
  /** Service cluster IPs and node ports (the Services' write hooks). */
  allocator: ServiceAllocator;
}

export function createRegistry(d: {
  cfg: Config;
  kv: KV;
  schemas: SchemaSet;
  kinds: KindDef[];
  admission: RegistryDeps['admission'];
  log: (msg: string) => void;
}): RegistryBuild {
  const { cfg } = d;
  const allocator = new ServiceAllocator(d.kv, { clusterIPRange: cfg.serviceClusterIPRange, nodePortRange: cfg.serviceNodePortRange });
  const api = new ApiRegistry({
    kv: d.kv,
    schemas: d.schemas,
    kinds: d.kinds,
    storage: cachedStorage(d.kv, {
      historyMs: cfg.watchHistoryMs,
      maxHistory: cfg.watchCacheMaxEvents,
      maxHistoryBytes: cfg.watchCacheMaxBytes,
      packAfterMs: cfg.packColdValuesAfterMs,
      keepParsed: (resource) => PARSED.has(resource),
      log: d.log,
    }),
    admission: d.admission,
    hooks: (def) => (def.group === '' && def.plural === 'services' ? allocator : undefined),
    options: {
      // Compaction off: continue tokens expire only if an explicit compaction passes them.
      continueTtlMs: cfg.compactionIntervalMs > 0 ? cfg.compactionIntervalMs : Number.POSITIVE_INFINITY,
      ownWrites: cfg.ownWriteSeats > 0 ? new OwnWriteSeats(cfg.ownWriteSeats) : undefined,
    },
  });
  return { api, allocator };
}
