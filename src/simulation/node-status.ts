/**
 * What a simulated node's kubelet reports, as the reference's pkg/kubelet/nodestatus setters:
 * capacity and allocatable, addresses (InternalIP, Hostname), daemon endpoints, node info, and
 * the four conditions in the kubelet's order with its reasons and messages. Pure functions of the
 * node's simulation parameters and the node as stored (transition times are kept while a
 * condition's status holds).
 */
import { isObject, type Obj } from '../api/meta';
import { ipv4ToString } from '../api/net';
import { parseCapacity } from '../config/flags';

export const MANAGED_ANNOTATION = 'sim.svc.io/managed';
export const CAPACITY_ANNOTATION = 'sim.svc.io/capacity';
export const HEARTBEAT_ANNOTATION = 'sim.svc.io/heartbeat';

/** The kubelet version simulated nodes report (the server's own minor). */
export const KUBELET_VERSION = 'v1.33.0';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The kubelet's healthy conditions (nodestatus.MemoryPressureCondition, …, ReadyCondition). */
const HEALTHY: readonly Pick<Condition, 'type' | 'status' | 'reason' | 'message'>[] = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
];

export const isManaged = (n: Obj): boolean => n.metadata.annotations?.[MANAGED_ANNOTATION] === 'true';
export const isStopped = (n: Obj): boolean => n.metadata.annotations?.[HEARTBEAT_ANNOTATION] === 'stop';

/** A node's capacity: its annotation, else the server's default. An invalid annotation is ignored. */
export function capacityOf(n: Obj, fallback: Record<string, string>): Record<string, string> {
  const a = n.metadata.annotations?.[CAPACITY_ANNOTATION];
  if (a === undefined) return fallback;
  try {
    return { ...fallback, ...parseCapacity(a) };
  } catch {
    return fallback;
  }
}

/** A short stable hex id from a name (machine ids and the like must not change across restarts). */
export function hexId(seed: string, len: number): string {
  let out = '';
  let h = 2166136261;
  for (let round = 0; out.length < len; round++) {
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
    h = Math.imul(h ^ round, 16777619);
    out += (h >>> 0).toString(16).padStart(8, '0');
  }
  return out.slice(0, len);
}

/** The /24 of index `i` in the cluster CIDR whose first address is `base`. */
export const podCidrText = (base: number, i: number): string => `${ipv4ToString(base + i * 256)}/24`;

/** A node's InternalIP: 172.16.0.0/12 numbered by its pod CIDR's index (stable as the CIDR is). */
export const internalIp = (cidrIndex: number): string => ipv4ToString(0xac100000 + cidrIndex + 1);

/** The labels the kubelet registers a node with. */
export function nodeLabels(name: string): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': 'simulated',
    type: 'simulated',
  };
}

function conditionsOf(n: Obj): Condition[] {
  const c = isObject(n.status) ? n.status.conditions : undefined;
  return Array.isArray(c) ? (c as Condition[]) : [];
}

/**
 * The status the node's kubelet would write now: `stamp` is the heartbeat time; a condition
 * whose status is unchanged keeps its lastTransitionTime.
 */
export function nodeStatus(n: Obj, capacity: Record<string, string>, ip: string, stamp: string): Record<string, unknown> {
  const old = new Map(conditionsOf(n).map((c) => [c.type, c]));
  const name = n.metadata.name as string;
  const id = hexId(name, 32);
  return {
    capacity,
    allocatable: capacity,
    conditions: HEALTHY.map((h) => {
      const prev = old.get(h.type);
      return {
        type: h.type,
        status: h.status,
        lastHeartbeatTime: stamp,
        lastTransitionTime: prev && prev.status === h.status && prev.lastTransitionTime ? prev.lastTransitionTime : stamp,
        reason: h.reason,
        message: h.message,
      };
    }),
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: id,
      systemUUID: `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`,
      bootID: hexId(`${name}/boot`, 32),
      kernelVersion: '6.8.0-simulated',
      osImage: 'svc-apiserver simulated node',
      containerRuntimeVersion: 'containerd://1.7.27',
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/**
 * Whether the stored conditions are the ones the kubelet reports (the node lifecycle controller
 * may have set them Unknown while the node was silent: the kubelet's next sync writes them back).
 */
export function conditionsCurrent(n: Obj): boolean {
  const byType = new Map(conditionsOf(n).map((c) => [c.type, c]));
  return HEALTHY.every((h) => {
    const c = byType.get(h.type);
    return c !== undefined && c.status === h.status && c.reason === h.reason;
  });
}

/** The part of a status the kubelet compares to decide to write (all but heartbeat times). */
export function statusKey(s: Record<string, unknown>): string {
  const conds = (s.conditions as Condition[]).map(({ lastHeartbeatTime: _h, lastTransitionTime: _t, ...rest }) => rest);
  return JSON.stringify({ ...s, conditions: conds });
}
