/**
 * Deletion lifecycle hooks of kinds whose deletion does not complete at once (see
 * Strategy.beginDelete / deletePending):
 *  - Pod: bound to a node, it stays Terminating for its grace period (the node's agent deletes
 *    it with grace 0); unbound or finished pods go at once.
 *  - Namespace: with spec.finalizers it becomes Terminating (phase Terminating) and stays until
 *    the namespace controller has emptied it and removed its finalizers.
 */
import type { Obj } from '../api/meta';
import type { Strategy } from '../registry/kind';

type Lifecycle = Pick<Strategy, 'beginDelete' | 'deletePending' | 'deleteForbidden'>;

/** Namespaces the reference's NamespaceLifecycle admission never lets go. */
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

const LIFECYCLE: Record<string, Lifecycle> = {
  Pod: {
    beginDelete(o, requested) {
      const spec = (o.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
      const phase = (o.status as { phase?: string } | undefined)?.phase;
      if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return { grace: 0, pending: false };
      const grace = requested ?? spec.terminationGracePeriodSeconds ?? 30;
      // As the reference's delete path: a negative grace period means 1 s.
      return { grace: grace < 0 ? 1 : grace, pending: false };
    },
    deletePending: (o) => (o.metadata.deletionGracePeriodSeconds ?? 0) > 0,
  },
  Namespace: {
    beginDelete(o) {
      const pending = namespaceFinalizers(o).length > 0;
      if (pending) o.status = { ...((o.status as Record<string, unknown>) ?? {}), phase: 'Terminating' };
      return { grace: 0, pending };
    },
    deletePending: (o) => namespaceFinalizers(o).length > 0,
    deleteForbidden: (name) => (IMMORTAL_NAMESPACES.has(name) ? 'this namespace may not be deleted' : undefined),
  },
};

export function namespaceFinalizers(o: Obj): string[] {
  return ((o.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).slice();
}

export function lifecycleFor(kind: string): Lifecycle {
  return LIFECYCLE[kind] ?? {};
}
