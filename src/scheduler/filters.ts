/**
 * The per-node filters of the reference's default profile that need nothing but the pod and the
 * node (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
 * NodeResourcesFit), in the reference's order, with its reasons. A filter answers undefined
 * when the node passes, else a Status. UnschedulableAndUnresolvable means evicting pods from
 * the node would not help (preemption skips such nodes).
 */
import type { HostPort, NodeInfo, PodInfo, Taint, Toleration } from './node-info';
import { isZero, type Resources } from './resources';

export type Plugin =
  | 'NodeUnschedulable'
  | 'NodeName'
  | 'TaintToleration'
  | 'NodeAffinity'
  | 'NodePorts'
  | 'NodeResourcesFit'
  | 'PodTopologySpread'
  | 'InterPodAffinity';

export type Code = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface Status {
  code: Code;
  reasons: string[];
  plugin: Plugin;
}

export const REASON = {
  unschedulable: 'node(s) were unschedulable',
  nodeName: "node(s) didn't match the requested node name",
  nodeAffinity: "node(s) didn't match Pod's node affinity/selector",
  nodePorts: "node(s) didn't have free ports for the requested pod ports",
  tooManyPods: 'Too many pods',
} as const;

const status = (plugin: Plugin, code: Code, ...reasons: string[]): Status => ({ plugin, code, reasons });

/** v1helper.TolerationsTolerateTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t.value ?? '') === taint.value;
    default:
      return false;
  }
}

const tolerated = (tolerations: Toleration[], taint: Taint): boolean => tolerations.some((t) => tolerates(t, taint));

const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' };

export function nodeUnschedulable(p: PodInfo, n: NodeInfo): Status | undefined {
  if (!n.unschedulable || tolerated(p.tolerations, UNSCHEDULABLE_TAINT)) return undefined;
  return status('NodeUnschedulable', 'UnschedulableAndUnresolvable', REASON.unschedulable);
}

export function nodeName(p: PodInfo, n: NodeInfo): Status | undefined {
  if (!p.nodeName || p.nodeName === n.name) return undefined;
  return status('NodeName', 'UnschedulableAndUnresolvable', REASON.nodeName);
}

/** The first NoSchedule/NoExecute taint the pod does not tolerate. */
export function taintToleration(p: PodInfo, n: NodeInfo): Status | undefined {
  for (const t of n.taints) {
    if (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') continue;
    if (!tolerated(p.tolerations, t)) {
      return status('TaintToleration', 'UnschedulableAndUnresolvable', `node(s) had untolerated taint {${t.key}: ${t.value}}`);
    }
  }
  return undefined;
}

/** How many PreferNoSchedule taints of the node the pod does not tolerate (TaintToleration's score). */
export function intolerablePreferNoSchedule(p: PodInfo, n: NodeInfo): number {
  let count = 0;
  for (const t of n.taints) {
    if (t.effect !== 'PreferNoSchedule') continue;
    if (!p.tolerations.some((x) => (!x.effect || x.effect === 'PreferNoSchedule') && tolerates(x, t))) count++;
  }
  return count;
}

interface Requirement {
  key?: string;
  operator?: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: Requirement[];
  matchFields?: Requirement[];
}

function requirementMatches(r: Requirement, get: (k: string) => string | undefined): boolean {
  const v = get(r.key ?? '');
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return v !== undefined && values.includes(v);
    case 'NotIn':
      return v === undefined || !values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      if (v === undefined || values.length !== 1 || !/^-?\d+$/.test(v) || !/^-?\d+$/.test(values[0] as string)) return false;
      const a = Number(v);
      const b = Number(values[0]);
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** A node selector term: its expressions on labels and its fields (metadata.name) all hold; an empty term matches nothing. */
export function termMatches(t: NodeSelectorTerm, n: NodeInfo): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const r of exprs) if (!requirementMatches(r, (k) => n.labels[k])) return false;
  for (const r of fields) if (!requirementMatches(r, (k) => (k === 'metadata.name' ? n.name : undefined))) return false;
  return true;
}

interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: { weight?: number; preference?: NodeSelectorTerm }[];
}

const nodeAffinityOf = (p: PodInfo): NodeAffinity | undefined => p.affinity?.nodeAffinity as NodeAffinity | undefined;

/** spec.nodeSelector and the required node affinity (the reference's RequiredNodeAffinity.Match). */
export function matchesNodeSelectorAndAffinity(p: PodInfo, n: NodeInfo): boolean {
  if (p.nodeSelector) for (const [k, v] of Object.entries(p.nodeSelector)) if (n.labels[k] !== v) return false;
  const req = nodeAffinityOf(p)?.requiredDuringSchedulingIgnoredDuringExecution;
  if (req) return (req.nodeSelectorTerms ?? []).some((t) => termMatches(t, n));
  return true;
}

export function nodeAffinity(p: PodInfo, n: NodeInfo): Status | undefined {
  if (matchesNodeSelectorAndAffinity(p, n)) return undefined;
  return status('NodeAffinity', 'UnschedulableAndUnresolvable', REASON.nodeAffinity);
}

/** NodeAffinity's score: the summed weights of the preferred terms the node matches. */
export function preferredAffinityScore(p: PodInfo, n: NodeInfo): number {
  let score = 0;
  for (const t of nodeAffinityOf(p)?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (t.weight && t.preference && termMatches(t.preference, n)) score += t.weight;
  }
  return score;
}

export const hasPreferredNodeAffinity = (p: PodInfo): boolean =>
  (nodeAffinityOf(p)?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;

/** A wanted host port conflicts with a used one on the same protocol and port when either IP is 0.0.0.0 or they are equal. */
function portFree(hp: HostPort, n: NodeInfo): boolean {
  const ips = n.usedPorts.get(`${hp.protocol}/${hp.port}`);
  if (!ips || ips.size === 0) return true;
  if (hp.hostIP === '0.0.0.0') return false;
  return !ips.has('0.0.0.0') && !ips.has(hp.hostIP);
}

export function nodePorts(p: PodInfo, n: NodeInfo): Status | undefined {
  for (const hp of p.ports) if (!portFree(hp, n)) return status('NodePorts', 'Unschedulable', REASON.nodePorts);
  return undefined;
}

/** What pods nominated to the node (with at least the pod's priority) hold there in addition. */
export interface Reserved {
  requests: Resources;
  pods: number;
}

/** NodeResourcesFit: the pod count, then cpu, memory, ephemeral storage and scalar resources, every shortfall a reason. */
export function nodeResourcesFit(p: PodInfo, n: NodeInfo, reserved?: Reserved): Status | undefined {
  const reasons: string[] = [];
  const extraPods = reserved?.pods ?? 0;
  if (n.pods.size + extraPods + 1 > n.allowedPods) reasons.push(REASON.tooManyPods);
  const r = p.requests;
  if (!isZero(r)) {
    const a = n.allocatable;
    const used = n.requested;
    const x = reserved?.requests;
    if (a.milliCPU < r.milliCPU + used.milliCPU + (x?.milliCPU ?? 0)) reasons.push('Insufficient cpu');
    if (a.memory < r.memory + used.memory + (x?.memory ?? 0)) reasons.push('Insufficient memory');
    if (a.ephemeralStorage < r.ephemeralStorage + used.ephemeralStorage + (x?.ephemeralStorage ?? 0)) {
      reasons.push('Insufficient ephemeral-storage');
    }
    if (r.scalar.size > 0)
      for (const [name, want] of r.scalar) {
        const have = a.scalar.get(name) ?? 0;
        if (have < want + (used.scalar.get(name) ?? 0) + (x?.scalar.get(name) ?? 0)) reasons.push(`Insufficient ${name}`);
      }
  }
  return reasons.length > 0 ? status('NodeResourcesFit', 'Unschedulable', ...reasons) : undefined;
}

/** The pod-and-node filters, in the reference's default order. */
export function runNodeFilters(p: PodInfo, n: NodeInfo, reserved?: Reserved): Status | undefined {
  // The common case: the other filters would all pass, and a pod that fits needs no reasons.
  if (p.plain && !n.unschedulable && n.taints.length === 0) {
    if (!reserved && p.cpuMemoryOnly && n.freePods >= 1 && n.freeMilliCPU >= p.requests.milliCPU && n.freeMemory >= p.requests.memory) {
      return undefined;
    }
    return nodeResourcesFit(p, n, reserved);
  }
  return (
    nodeUnschedulable(p, n) ??
    nodeName(p, n) ??
    taintToleration(p, n) ??
    nodeAffinity(p, n) ??
    nodePorts(p, n) ??
    nodeResourcesFit(p, n, reserved)
  );
}
