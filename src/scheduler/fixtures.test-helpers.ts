/** Builders of pods and nodes for the scheduler's unit tests. */
import type { Obj } from '../api/meta';
import { ClusterCache, NodeInfo, type PodInfo, podInfo } from './node-info';

let uid = 0;

export function pod(name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): PodInfo {
  return podInfo(podObj(name, spec, meta));
}

export function podObj(name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${++uid}`, creationTimestamp: '2026-01-01T00:00:00Z', ...meta },
    spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
  };
}

/** Containers' requests as a pod spec. */
export const requests = (...reqs: Record<string, string>[]) => ({
  containers: reqs.map((r, i) => ({ name: `c${i}`, image: 'i', resources: { requests: r } })),
});

export interface NodeOpts {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
  extra?: Record<string, string>;
}

export function nodeObj(name: string, o: NodeOpts = {}): Obj {
  const alloc = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...o.extra };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: { taints: o.taints, unschedulable: o.unschedulable },
    status: { capacity: alloc, allocatable: alloc },
  };
}

export function node(name: string, o: NodeOpts = {}, pods: PodInfo[] = []): NodeInfo {
  const n = new NodeInfo(name);
  n.setNode(nodeObj(name, o));
  for (const p of pods) n.addPod({ ...p, nodeName: name });
  return n;
}

/** A cache with these nodes and, per node name, its bound pods. */
export function cluster(nodes: [string, NodeOpts][], bound: Record<string, PodInfo[]> = {}): ClusterCache {
  const c = new ClusterCache();
  for (const [name, o] of nodes) c.setNode(nodeObj(name, o));
  for (const [name, ps] of Object.entries(bound)) for (const p of ps) c.addPod({ ...p, nodeName: name });
  return c;
}
