/**
 * The replica counts resource metrics ask for, as the reference's
 * pkg/controller/podautoscaler/replica_calculator.go: GetResourceReplicas (a utilization target,
 * percent of the pods' requests) and GetRawResourceReplicas (an average value target).
 *
 * Pods being deleted or Failed are ignored; Pending pods, and (for cpu) pods not ready yet, are
 * "unready"; pods without a metric are "missing". The ratio of usage to target is computed over
 * the ready pods with metrics; within the tolerance nothing changes. Missing pods are then counted
 * as using the target (scale down) or nothing (scale up), unready pods as using nothing on a scale
 * up, and the ratio is computed again: a change within the tolerance, or one that would reverse
 * the direction, keeps the current count.
 *
 * Values are milli-units (MilliValue) of the resource, as the reference's metrics client reads them.
 */
import type { Obj } from '../../api/meta';
import { phaseOf } from '../controller-utils';

export interface PodMetric {
  /** Usage in milli-units. */
  value: number;
  /** When the sample was taken (ms) and the window it covers (ms). */
  timestamp: number;
  window: number;
}

export type PodMetrics = Map<string, PodMetric>;

export interface CalculatorOptions {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

export class CalculationError extends Error {}

interface Condition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
}

/** groupPods: how many pods are ready with metrics, and the names of the unready, missing and ignored ones. */
export function groupPods(
  pods: Obj[],
  metrics: PodMetrics,
  resource: string,
  o: CalculatorOptions,
  now: number,
): { ready: number; unready: Set<string>; missing: Set<string>; ignored: Set<string> } {
  let ready = 0;
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  for (const p of pods) {
    const name = p.metadata.name as string;
    if (p.metadata.deletionTimestamp || phaseOf(p) === 'Failed') {
      ignored.add(name);
      continue;
    }
    if (phaseOf(p) === 'Pending') {
      unready.add(name);
      continue;
    }
    const m = metrics.get(name);
    if (!m) {
      missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const cond = ((p.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
      const start = Date.parse((p.status as { startTime?: string } | undefined)?.startTime ?? '');
      let isUnready: boolean;
      if (!cond || Number.isNaN(start)) isUnready = true;
      else {
        const changed = Date.parse(cond.lastTransitionTime ?? '') || 0;
        if (start + o.cpuInitializationPeriodMs > now) {
          // Within the initialization period: unready, or ready for less than the metric's window.
          isUnready = cond.status === 'False' || m.timestamp < changed + m.window;
        } else {
          // Never ready since its start (a readiness change soon after the start is the initial one).
          isUnready = cond.status === 'False' && start + o.initialReadinessDelayMs > changed;
        }
      }
      if (isUnready) {
        unready.add(name);
        continue;
      }
    }
    ready++;
  }
  return { ready, unready, missing, ignored };
}

/** calculatePodRequests: each pod's request of the resource (of one container, or the sum), milli-units. */
export function podRequests(
  pods: Obj[],
  resource: string,
  container: string,
  milli: (v: unknown) => number | undefined,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of pods) {
    let sum = 0;
    for (const c of (p.spec as { containers?: { name: string; resources?: { requests?: Record<string, unknown> } }[] }).containers ?? []) {
      if (container !== '' && c.name !== container) continue;
      const r = milli(c.resources?.requests?.[resource]);
      if (r === undefined || !Number.isFinite(r))
        throw new CalculationError(`missing request for ${resource} in container ${c.name} of Pod ${p.metadata.name}`);
      sum += r;
    }
    out.set(p.metadata.name as string, sum);
  }
  return out;
}

/** GetResourceUtilizationRatio. */
function utilizationRatio(
  metrics: PodMetrics,
  requests: Map<string, number>,
  target: number,
): { ratio: number; utilization: number; raw: number } {
  let used = 0;
  let requested = 0;
  let n = 0;
  for (const [name, m] of metrics) {
    const r = requests.get(name);
    if (r === undefined) continue;
    used += m.value;
    requested += r;
    n++;
  }
  if (requested === 0) throw new CalculationError('no metrics returned matched known pods');
  const utilization = Math.trunc((used * 100) / requested);
  return { ratio: utilization / target, utilization, raw: Math.trunc(used / n) };
}

const without = (m: PodMetrics, names: Set<string>): PodMetrics => new Map([...m].filter(([k]) => !names.has(k)));

/** GetResourceReplicas: the count for a utilization target (percent of requests). */
export function resourceReplicas(
  current: number,
  target: number,
  resource: string,
  container: string,
  pods: Obj[],
  all: PodMetrics,
  o: CalculatorOptions,
  milli: (v: unknown) => number | undefined,
  now: number,
): { replicas: number; utilization: number; raw: number } {
  if (pods.length === 0) throw new CalculationError('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, all, resource, o, now);
  let metrics = without(without(all, g.ignored), g.unready);
  metrics = new Map([...metrics].filter(([k]) => pods.some((p) => p.metadata.name === k)));
  if (metrics.size === 0) throw new CalculationError('did not receive metrics for targeted pods (pods might be unready)');
  const requests = podRequests(pods, resource, container, milli);
  const { ratio, utilization, raw } = utilizationRatio(metrics, requests, target);
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= o.tolerance) return { replicas: current, utilization, raw };
    return { replicas: Math.ceil(ratio * g.ready), utilization, raw };
  }
  if (g.missing.size > 0) {
    const fallback = Math.max(100, target);
    for (const name of g.missing) {
      const value = ratio < 1 ? ((requests.get(name) ?? 0) * fallback) / 100 : 0;
      metrics.set(name, { value, timestamp: now, window: 0 });
    }
  }
  if (scaleUpWithUnready) for (const name of g.unready) metrics.set(name, { value: 0, timestamp: now, window: 0 });
  const next = utilizationRatio(metrics, requests, target).ratio;
  if (Math.abs(1 - next) <= o.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1))
    return { replicas: current, utilization, raw };
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > current) || (next > 1 && replicas < current)) return { replicas: current, utilization, raw };
  return { replicas, utilization, raw };
}

/** GetRawResourceReplicas (calcPlainMetricReplicas): the count for an average value target (milli-units). */
export function rawResourceReplicas(
  current: number,
  target: number,
  resource: string,
  pods: Obj[],
  all: PodMetrics,
  o: CalculatorOptions,
  now: number,
): { replicas: number; raw: number } {
  if (pods.length === 0) throw new CalculationError('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, all, resource, o, now);
  let metrics = without(without(all, g.ignored), g.unready);
  metrics = new Map([...metrics].filter(([k]) => pods.some((p) => p.metadata.name === k)));
  if (metrics.size === 0) throw new CalculationError('did not receive metrics for targeted pods (pods might be unready)');
  const usageRatio = (m: PodMetrics) => {
    let sum = 0;
    for (const v of m.values()) sum += v.value;
    const usage = sum / m.size;
    return { ratio: usage / target, usage: Math.trunc(usage) };
  };
  const { ratio, usage } = usageRatio(metrics);
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= o.tolerance) return { replicas: current, raw: usage };
    return { replicas: Math.ceil(ratio * g.ready), raw: usage };
  }
  for (const name of g.missing) metrics.set(name, { value: ratio < 1 ? target : 0, timestamp: now, window: 0 });
  if (scaleUpWithUnready) for (const name of g.unready) metrics.set(name, { value: 0, timestamp: now, window: 0 });
  const next = usageRatio(metrics).ratio;
  if (Math.abs(1 - next) <= o.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return { replicas: current, raw: usage };
  const replicas = Math.ceil(next * metrics.size);
  if ((next < 1 && replicas > current) || (next > 1 && replicas < current)) return { replicas: current, raw: usage };
  return { replicas, raw: usage };
}
