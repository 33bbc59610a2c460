/**
 * What a namespaced create needs to know about its namespace (active, terminating or missing)
 * and at which revision: the create's transaction then requires the namespace to be still at it
 * (src/store/ops.ts Guard), so nothing is created in a namespace that changed after the check
 * (the reference's NamespaceLifecycle reads its informer and lets such a create in). The check
 * reads the namespaces' watch cache when it holds the namespace (no store round trip: on etcd a
 * Range per create), else the store; a guard that fails is checked again from the store.
 */

import type { Obj } from '../api/meta';
import { decodeStored } from '../codec/stored';
import type { KV, Revision } from '../store/types';

const NAMESPACE_PREFIX = '/registry/core/namespaces/';

export const namespaceKey = (namespace: string): string => `${NAMESPACE_PREFIX}${namespace}`;

export interface NamespaceState {
  state: 'active' | 'terminating' | 'missing';
  /** The namespace's modRevision (0 when missing). */
  revision: Revision;
}

/** What a namespaced write needs to know about its namespace; `live`: from the store. */
/** A namespace's state: at once when the watch cache holds it active, else read from the store. */
export type NamespaceCheck = (namespace: string, live?: boolean) => NamespaceState | Promise<NamespaceState>;

/** A namespace as the namespaces' watch cache holds it (undefined: not held, or no cache). */
export type CachedNamespace = (key: string) => { revision: Revision; obj: () => Obj } | undefined;

/** Namespace lookups for create: the watch cache's copy when it has one, else the store. */
export function namespaceChecker(kv: KV, cached?: CachedNamespace): NamespaceCheck {
  // The state of a namespace only changes with its modRevision: decode each version once.
  const seen = new Map<string, { rev: Revision; state: 'active' | 'terminating' }>();
  const stateOf = (namespace: string, rev: Revision, obj: () => Obj): NamespaceState => {
    const hit = seen.get(namespace);
    if (hit && hit.rev === rev) return { state: hit.state, revision: rev };
    const ns = obj();
    const phase = (ns.status as { phase?: string } | undefined)?.phase;
    const state = ns.metadata.deletionTimestamp || phase === 'Terminating' ? 'terminating' : 'active';
    if (seen.size > 10_000) seen.clear();
    seen.set(namespace, { rev, state });
    return { state, revision: rev };
  };
  const read = async (namespace: string, key: string): Promise<NamespaceState> => {
    const r = await kv.range(key);
    const kvNs = r.kvs[0];
    if (!kvNs) return { state: 'missing', revision: 0 };
    return stateOf(namespace, kvNs.modRevision, () => decodeStored(kvNs));
  };
  return (namespace, live = false) => {
    const key = namespaceKey(namespace);
    if (!live) {
      // Only an active namespace is taken from the cache (the create's guard confirms it); a
      // terminating one is read again (the cache may lag a namespace deleted and made again).
      const c = cached?.(key);
      const s = c && stateOf(namespace, c.revision, c.obj);
      if (s?.state === 'active') return s;
    }
    return read(namespace, key);
  };
}
