/**
 * autoscaling/v1 HorizontalPodAutoscaler ⇄ autoscaling/v2 (the stored form), as the reference
 * converts them (pkg/apis/autoscaling/v1/conversion.go): v1 shows the CPU utilization target and
 * current value as fields and keeps what it has no fields for in annotations (the other metrics,
 * every current metric, the conditions), which a v1 write turns back into v2 fields. A v1 object
 * without metrics gets the reference's default: CPU at 80% utilization.
 */
import type { Obj } from '../../api/meta';

export const METRIC_SPECS = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const ROUND_TRIP = [METRIC_SPECS, 'autoscaling.alpha.kubernetes.io/behavior', METRIC_STATUSES, CONDITIONS];
/** autoscaling.DefaultCPUUtilization. */
export const DEFAULT_CPU_UTILIZATION = 80;

type J = Record<string, unknown>;
const o = (v: unknown): J => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as J) : {});
const arr = (v: unknown): J[] => (Array.isArray(v) ? (v as J[]) : []);
/** The object without its undefined fields (Go omitempty). */
function compact(x: J): J {
  const out: J = {};
  for (const [k, v] of Object.entries(x)) if (v !== undefined) out[k] = v;
  return out;
}

function isCpuUtilization(m: J): boolean {
  const r = o(m.resource);
  return m.type === 'Resource' && r.name === 'cpu' && o(r.target).averageUtilization !== undefined;
}

// ---- metric specs ------------------------------------------------------------------------

function specToV1(m: J): J {
  const out: J = { type: m.type };
  const t = (x: J) => o(x.target);
  const id = (x: J) => o(x.metric);
  if (m.object) {
    const x = o(m.object);
    out.object = compact({
      target: x.describedObject,
      metricName: id(x).name,
      targetValue: t(x).value ?? '0',
      selector: id(x).selector,
      averageValue: t(x).averageValue,
    });
  }
  if (m.pods) {
    const x = o(m.pods);
    out.pods = compact({ metricName: id(x).name, targetAverageValue: t(x).averageValue ?? '0', selector: id(x).selector });
  }
  if (m.resource) {
    const x = o(m.resource);
    out.resource = compact({ name: x.name, targetAverageUtilization: t(x).averageUtilization, targetAverageValue: t(x).averageValue });
  }
  if (m.containerResource) {
    const x = o(m.containerResource);
    out.containerResource = compact({
      name: x.name,
      targetAverageUtilization: t(x).averageUtilization,
      targetAverageValue: t(x).averageValue,
      container: x.container,
    });
  }
  if (m.external) {
    const x = o(m.external);
    out.external = compact({
      metricName: id(x).name,
      metricSelector: id(x).selector,
      targetValue: t(x).value,
      targetAverageValue: t(x).averageValue,
    });
  }
  return out;
}

function specFromV1(m: J): J {
  const out: J = { type: m.type };
  if (m.object) {
    const x = o(m.object);
    out.object = {
      describedObject: x.target,
      target: compact({
        type: x.averageValue === undefined ? 'Value' : 'AverageValue',
        value: x.targetValue,
        averageValue: x.averageValue,
      }),
      metric: compact({ name: x.metricName, selector: x.selector }),
    };
  }
  if (m.pods) {
    const x = o(m.pods);
    out.pods = {
      metric: compact({ name: x.metricName, selector: x.selector }),
      target: { type: 'AverageValue', averageValue: x.targetAverageValue },
    };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!m[key]) continue;
    const x = o(m[key]);
    const util = x.targetAverageUtilization;
    out[key] = compact({
      name: x.name,
      target: compact({
        type: util === undefined ? 'AverageValue' : 'Utilization',
        averageValue: x.targetAverageValue,
        averageUtilization: util,
      }),
      container: x.container,
    });
  }
  if (m.external) {
    const x = o(m.external);
    out.external = {
      metric: compact({ name: x.metricName, selector: x.metricSelector }),
      target: compact({
        type: x.targetValue === undefined ? 'AverageValue' : 'Value',
        value: x.targetValue,
        averageValue: x.targetAverageValue,
      }),
    };
  }
  return out;
}

// ---- metric statuses ---------------------------------------------------------------------

function statusToV1(m: J): J {
  const out: J = { type: m.type };
  const c = (x: J) => o(x.current);
  const id = (x: J) => o(x.metric);
  if (m.object) {
    const x = o(m.object);
    out.object = compact({
      target: x.describedObject,
      metricName: id(x).name,
      currentValue: c(x).value ?? '0',
      selector: id(x).selector,
      averageValue: c(x).averageValue,
    });
  }
  if (m.pods) {
    const x = o(m.pods);
    out.pods = compact({ metricName: id(x).name, currentAverageValue: c(x).averageValue ?? '0', selector: id(x).selector });
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!m[key]) continue;
    const x = o(m[key]);
    out[key] = compact({
      name: x.name,
      currentAverageUtilization: c(x).averageUtilization,
      currentAverageValue: c(x).averageValue ?? '0',
      container: x.container,
    });
  }
  if (m.external) {
    const x = o(m.external);
    out.external = compact({
      metricName: id(x).name,
      metricSelector: id(x).selector,
      currentValue: c(x).value ?? '0',
      currentAverageValue: c(x).averageValue,
    });
  }
  return out;
}

function statusFromV1(m: J): J {
  const out: J = { type: m.type };
  if (m.object) {
    const x = o(m.object);
    out.object = {
      metric: compact({ name: x.metricName, selector: x.selector }),
      current: compact({ value: x.currentValue, averageValue: x.averageValue }),
      describedObject: x.target,
    };
  }
  if (m.pods) {
    const x = o(m.pods);
    out.pods = { metric: compact({ name: x.metricName, selector: x.selector }), current: { averageValue: x.currentAverageValue } };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!m[key]) continue;
    const x = o(m[key]);
    out[key] = compact({
      name: x.name,
      current: compact({ averageValue: x.currentAverageValue, averageUtilization: x.currentAverageUtilization }),
      container: x.container,
    });
  }
  if (m.external) {
    const x = o(m.external);
    out.external = {
      metric: compact({ name: x.metricName, selector: x.metricSelector }),
      current: compact({ value: x.currentValue, averageValue: x.currentAverageValue }),
    };
  }
  return out;
}

// ---- objects -----------------------------------------------------------------------------

/** A stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 shows it. */
export function hpaToV1(v2: Obj): Obj {
  const spec = o((v2 as J).spec);
  const status = (v2 as J).status === undefined ? undefined : o((v2 as J).status);
  const metrics = arr(spec.metrics);
  const cpu = metrics.find((m) => m.type === 'Resource' && o(m.resource).name === 'cpu');
  const other = metrics.filter((m) => !isCpuUtilization(m)).map(specToV1);
  const current = arr(status?.currentMetrics);
  const conditions = arr(status?.conditions);
  const annotations: Record<string, string> = { ...(v2.metadata.annotations ?? {}) };
  if (other.length > 0) annotations[METRIC_SPECS] = JSON.stringify(other);
  if (current.length > 0) annotations[METRIC_STATUSES] = JSON.stringify(current.map(statusToV1));
  if (conditions.length > 0) annotations[CONDITIONS] = JSON.stringify(conditions);
  const metadata = { ...v2.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const cpuNow = current.find((m) => m.type === 'Resource' && o(m.resource).name === 'cpu');
  const out: J = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: compact({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      targetCPUUtilizationPercentage: cpu ? o(o(cpu.resource).target).averageUtilization : undefined,
    }),
  };
  if (status) {
    out.status = compact({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      currentCPUUtilizationPercentage: cpuNow ? o(o(cpuNow.resource).current).averageUtilization : undefined,
    });
  }
  return out as Obj;
}

function parseList(text: string | undefined): J[] | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? (v as J[]) : [];
  } catch {
    return [];
  }
}

/** An autoscaling/v1 HorizontalPodAutoscaler in the stored autoscaling/v2 form. */
export function hpaFromV1(v1: Obj): Obj {
  const spec = o((v1 as J).spec);
  const status = (v1 as J).status === undefined ? undefined : o((v1 as J).status);
  const annotations: Record<string, string> = { ...(v1.metadata.annotations ?? {}) };
  const otherMetrics = parseList(annotations[METRIC_SPECS]);
  const currentMetrics = parseList(annotations[METRIC_STATUSES]);
  const conditions = parseList(annotations[CONDITIONS]);
  for (const a of ROUND_TRIP) delete annotations[a];
  const metadata = { ...v1.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const metrics: J[] = (otherMetrics ?? []).map(specFromV1);
  const cpu = (utilization: unknown): J => ({
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } },
  });
  if (spec.targetCPUUtilizationPercentage !== undefined) metrics.push(cpu(spec.targetCPUUtilizationPercentage));
  if (metrics.length === 0) metrics.push(cpu(DEFAULT_CPU_UTILIZATION));
  const out: J = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v2',
    metadata,
    spec: compact({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, metrics }),
  };
  if (status || conditions) {
    const s = status ?? {};
    let current: J[] | undefined = currentMetrics?.map(statusFromV1);
    if (current === undefined && s.currentCPUUtilizationPercentage !== undefined) {
      current = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: s.currentCPUUtilizationPercentage } } }];
    }
    out.status = compact({
      observedGeneration: s.observedGeneration,
      lastScaleTime: s.lastScaleTime,
      currentReplicas: s.currentReplicas,
      desiredReplicas: s.desiredReplicas ?? 0,
      currentMetrics: current,
      conditions,
    });
  }
  return out as Obj;
}
