/** The pod QoS class, as the reference's qos.GetPodQOS computes it. */
import type { Obj } from '../api/meta';

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
