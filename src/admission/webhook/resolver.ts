/**
 * A Service port to an address (the reference's ResolveEndpoint, as the kube-apiserver routes to
 * endpoints): the Service of that name (ClusterIP, NodePort or LoadBalancer), its port with that
 * number, and a ready endpoint of its EndpointSlices serving the port of the same name. One is
 * picked at random per call, as the reference does.
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import type { Endpoint, ServiceResolver } from './client';

export interface ServiceView {
  service(namespace: string, name: string): Obj | undefined;
  /** The EndpointSlices of a namespace. */
  slices(namespace: string): Obj[];
}

const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

export function endpointResolver(view: ServiceView): ServiceResolver {
  return (namespace, name, port): Endpoint => {
    const svc = view.service(namespace, name);
    if (!svc) throw new Error(`service "${name}" not found`);
    const spec = isObject(svc.spec) ? svc.spec : {};
    const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
    if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new Error(`unsupported service type "${type}"`);
    const svcPort = objects(spec.ports).find((p) => p.port === port);
    if (!svcPort) throw new Error(`no service port ${port} found for service "${name}"`);
    const portName = typeof svcPort.name === 'string' ? svcPort.name : '';
    const candidates: Endpoint[] = [];
    let any = false;
    for (const slice of view.slices(namespace)) {
      if (slice.metadata.labels?.['kubernetes.io/service-name'] !== name) continue;
      any = true;
      const p = objects(slice.ports).find((x) => (typeof x.name === 'string' ? x.name : '') === portName);
      if (!p || typeof p.port !== 'number') continue;
      for (const ep of objects(slice.endpoints)) {
        const cond = isObject(ep.conditions) ? ep.conditions : {};
        if (cond.ready === false) continue;
        const address = Array.isArray(ep.addresses) ? ep.addresses[0] : undefined;
        if (typeof address === 'string') candidates.push({ host: address, port: p.port });
      }
    }
    if (!any) throw new Error(`service ${namespace}/${name} has no endpoints`);
    const pick = candidates[Math.floor(Math.random() * candidates.length)];
    if (!pick) throw new Error(`no active endpoints found for service ${namespace}/${name} port ${port}`);
    return pick;
  };
}
