/**
 * Resource usage of the simulated kubelets, as metrics-server reports it (metrics.k8s.io/v1beta1
 * PodMetrics and NodeMetrics): what `kubectl top` prints and the HPA controller scales on.
 *
 * A container's usage of cpu and memory comes from its pod's annotations:
 *
 *   sim.svc.io/cpu-usage     (and sim.svc.io/memory-usage), one of
 *     "450m" / "300Mi"         the whole pod's usage: shared by its containers in proportion to
 *                              their requests of that resource (evenly when none requests it)
 *     "90%"                    that share of each container's request
 *     '{"app":"400m","log":"5m"}'  per container, by name (a value may be "90%" too); containers
 *                              not named use the default
 *   default: 50% of the container's request (DEFAULT_USAGE_PERCENT), 0 without a request.
 *
 * Only pods Running on a node have metrics (as metrics-server, which scrapes the kubelets); a
 * node's usage is the sum of its pods'. Values are reported as metrics-server does: cpu in
 * nanocores ("225000000n"), memory in Ki; `timestamp` the time of the read, `window` METRICS_WINDOW.
 */
import type { Obj } from '../api/meta';
import { parseQuantity } from '../api/quantity';

export const CPU_USAGE = 'sim.svc.io/cpu-usage';
export const MEMORY_USAGE = 'sim.svc.io/memory-usage';
export const DEFAULT_USAGE_PERCENT = 50;
/** metrics-server's default resolution: usage is the rate over this window. */
export const METRICS_WINDOW = '15s';
export const METRICS_API_VERSION = 'metrics.svc.io/v1beta1';

/** Usage of one container: cpu in cores, memory in bytes. */
export interface Usage {
  cpu: number;
  memory: number;
}

interface Container {
  name: string;
  resources?: { requests?: Record<string, unknown> };
}

/** A quantity as a number (cores, bytes), undefined when it does not parse. */
export function quantityNumber(v: unknown): number | undefined {
  const q = parseQuantity(v);
  return q ? Number(q.mant) * 10 ** q.exp : undefined;
}

const requestOf = (c: Container, res: 'cpu' | 'memory'): number => quantityNumber(c.resources?.requests?.[res]) ?? 0;

/** A value of the annotation for one container: a quantity, or a percentage of `request`. */
function annotated(text: string, request: number): number | undefined {
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(text.trim());
  if (pct) return (Number(pct[1]) / 100) * request;
  return quantityNumber(text);
}

/** The usage of each container of `pod` for one resource. */
function usageOf(pod: Obj, containers: Container[], res: 'cpu' | 'memory'): number[] {
  const requests = containers.map((c) => requestOf(c, res));
  const dflt = requests.map((r) => (r * DEFAULT_USAGE_PERCENT) / 100);
  const text = pod.metadata.annotations?.[res === 'cpu' ? CPU_USAGE : MEMORY_USAGE];
  if (text === undefined) return dflt;
  const t = text.trim();
  if (t.startsWith('{')) {
    let per: Record<string, unknown>;
    try {
      per = JSON.parse(t) as Record<string, unknown>;
    } catch {
      return dflt;
    }
    return containers.map((c, i) => {
      const v = per[c.name];
      return (typeof v === 'string' || typeof v === 'number' ? annotated(String(v), requests[i] ?? 0) : undefined) ?? (dflt[i] as number);
    });
  }
  if (t.endsWith('%')) return requests.map((r, i) => annotated(t, r) ?? (dflt[i] as number));
  const total = quantityNumber(t);
  if (total === undefined) return dflt;
  const sum = requests.reduce((a, b) => a + b, 0);
  return requests.map((r) => (sum > 0 ? (total * r) / sum : total / Math.max(1, containers.length)));
}

/** Whether the pod has metrics: Running on a node. */
export function hasMetrics(pod: Obj): boolean {
  const status = pod.status as { phase?: string } | undefined;
  return status?.phase === 'Running' && !!(pod.spec as { nodeName?: string } | undefined)?.nodeName;
}

/** The usage of each container of a pod (by name), or undefined when it has no metrics. */
export function containerUsage(pod: Obj): Map<string, Usage> | undefined {
  if (!hasMetrics(pod)) return undefined;
  const containers = ((pod.spec as { containers?: Container[] } | undefined)?.containers ?? []).filter((c) => typeof c?.name === 'string');
  const cpu = usageOf(pod, containers, 'cpu');
  const memory = usageOf(pod, containers, 'memory');
  return new Map(containers.map((c, i) => [c.name, { cpu: cpu[i] ?? 0, memory: memory[i] ?? 0 }]));
}

const cpuText = (cores: number): string => `${Math.round(cores * 1e9)}n`;
const memoryText = (bytes: number): string => `${Math.ceil(bytes / 1024)}Ki`;
const timeText = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The PodMetrics of the pods that have metrics. */
export function podMetrics(pods: Obj[], now = Date.now()): Obj[] {
  const out: Obj[] = [];
  for (const p of pods) {
    const usage = containerUsage(p);
    if (!usage) continue;
    const metadata: Obj['metadata'] = { name: p.metadata.name, namespace: p.metadata.namespace, creationTimestamp: timeText(now) };
    if (p.metadata.labels) metadata.labels = { ...p.metadata.labels };
    out.push({
      kind: 'PodMetrics',
      apiVersion: METRICS_API_VERSION,
      metadata,
      timestamp: timeText(now),
      window: METRICS_WINDOW,
      containers: [...usage].map(([name, u]) => ({ name, usage: { cpu: cpuText(u.cpu), memory: memoryText(u.memory) } })),
    });
  }
  return out;
}

/** The NodeMetrics of `nodes`: each the sum of its pods' usage. */
export function nodeMetrics(nodes: Obj[], pods: Obj[], now = Date.now()): Obj[] {
  const sums = new Map<string, Usage>();
  for (const p of pods) {
    const usage = containerUsage(p);
    if (!usage) continue;
    const node = (p.spec as { nodeName: string }).nodeName;
    const s = sums.get(node) ?? { cpu: 0, memory: 0 };
    for (const u of usage.values()) {
      s.cpu += u.cpu;
      s.memory += u.memory;
    }
    sums.set(node, s);
  }
  return nodes.map((n) => {
    const s = sums.get(n.metadata.name as string) ?? { cpu: 0, memory: 0 };
    const metadata: Obj['metadata'] = { name: n.metadata.name, creationTimestamp: timeText(now) };
    if (n.metadata.labels) metadata.labels = { ...n.metadata.labels };
    return {
      kind: 'NodeMetrics',
      apiVersion: METRICS_API_VERSION,
      metadata,
      timestamp: timeText(now),
      window: METRICS_WINDOW,
      usage: { cpu: cpuText(s.cpu), memory: memoryText(s.memory) },
    };
  });
}
