/**
 * Per-kind strategies: server-owned state on create/update and the validation rules the schema
 * cannot express. Kinds without an entry use the generic behaviour only.
 */
import type { Obj } from '../api/meta';
import type { Strategy } from '../registry/kind';

type Resources = { limits?: Record<string, string>; requests?: Record<string, string> };
type Container = { resources?: Resources };

/** The pod's QoS class, as the reference computes it from container requests and limits. */
export function qosClass(pod: Obj): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  const all = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  let any = false;
  let guaranteed = all.length > 0;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    const relevant = (r: Record<string, string>) => Object.keys(r).filter((k) => k === 'cpu' || k === 'memory');
    if (relevant(req).length > 0 || relevant(lim).length > 0) any = true;
    for (const k of ['cpu', 'memory']) {
      if (lim[k] === undefined || (req[k] !== undefined && req[k] !== lim[k])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const STRATEGIES: Record<string, Strategy> = {
  Namespace: {
    prepareForCreate(o) {
      o.status = { phase: 'Active' };
      const spec = (o.spec ?? {}) as { finalizers?: string[] };
      if (!spec.finalizers) spec.finalizers = ['kubernetes'];
      o.spec = spec;
      o.metadata.labels = { ...o.metadata.labels, 'kubernetes.io/metadata.name': o.metadata.name as string };
    },
    prepareForUpdate(o, old) {
      o.spec = old.spec;
      o.metadata.labels = { ...o.metadata.labels, 'kubernetes.io/metadata.name': o.metadata.name as string };
    },
  },
  Pod: {
    prepareForCreate(o) {
      o.status = { phase: 'Pending', qosClass: qosClass(o) };
    },
  },
};

const withStatus = new Set([
  'Deployment',
  'ReplicaSet',
  'ResourceQuota',
  'PodDisruptionBudget',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'ValidatingAdmissionPolicy',
  'Node',
  'Service',
]);

export function strategyFor(kind: string): Strategy {
  const s = STRATEGIES[kind];
  if (s) return s;
  // Kinds whose status is a plain struct in the reference show `status: {}` from creation on.
  if (withStatus.has(kind)) {
    return {
      prepareForCreate: (o) => {
        o.status = {};
      },
    };
  }
  return {};
}
