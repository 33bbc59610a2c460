/**
 * What a namespaced create needs to know about its namespace (active, terminating or missing),
 * read straight from the store.
 */

import { decodeStored } from '../codec/stored';
import type { KV, Revision } from '../store/types';

const NAMESPACE_PREFIX = '/registry/core/namespaces/';

/** What a namespaced write needs to know about its namespace. */
export type NamespaceCheck = (namespace: string) => Promise<'active' | 'terminating' | 'missing'>;

/** Namespace lookups for create, straight from the store. */
export function namespaceChecker(kv: KV): NamespaceCheck {
  // The state of a namespace only changes with its modRevision: decode each version once.
  const seen = new Map<string, { rev: Revision; state: 'active' | 'terminating' }>();
  return async (namespace) => {
    const r = await kv.range(`${NAMESPACE_PREFIX}${namespace}`);
    const kvNs = r.kvs[0];
    if (!kvNs) return 'missing';
    const hit = seen.get(namespace);
    if (hit && hit.rev === kvNs.modRevision) return hit.state;
    const ns = decodeStored(kvNs);
    const phase = (ns.status as { phase?: string } | undefined)?.phase;
    const state = ns.metadata.deletionTimestamp || phase === 'Terminating' ? 'terminating' : 'active';
    if (seen.size > 10_000) seen.clear();
    seen.set(namespace, { rev: kvNs.modRevision, state });
    return state;
  };
}
