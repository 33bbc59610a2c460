/**
 * The HorizontalPodAutoscaler controller, as the reference's pkg/controller/podautoscaler
 * (horizontal.go): every sync period each autoscaler (autoscaling/v2, as stored) reads its
 * target's Scale through the registry, computes the replicas its metrics ask for (Resource and
 * ContainerResource metrics, Utilization and AverageValue, from the simulated kubelets' usage:
 * src/simulation/metrics.ts; replica-calculator.ts), normalizes them (stabilization windows,
 * behavior policies, min and max: normalize.ts) and writes the Scale when the count changes.
 *
 * Status: currentReplicas, desiredReplicas, currentMetrics, lastScaleTime (at each rescale) and
 * the conditions AbleToScale (SucceededGetScale, FailedGetScale, SucceededRescale,
 * FailedUpdateScale, ReadyForNewScale, ScaleUpStabilized, ScaleDownStabilized), ScalingActive
 * (ValidMetricFound, ScalingDisabled, InvalidSelector, FailedGet<Type>Metric) and ScalingLimited
 * (DesiredWithinRange, TooFewReplicas, TooManyReplicas, ScaleUpLimit, ScaleDownLimit). Events:
 * SuccessfulRescale "New size: N; reason: ...", FailedGetScale, FailedRescale,
 * FailedComputeMetricsReplicas, and the metric's own failure.
 *
 * As the reference's queue, a change of an autoscaler is picked up at its next period, not at once.
 */
import { svcGroup } from '../../api/brand';
import type { Obj } from '../../api/meta';
import { formatQuantity, parseQuantity, quantityMilliValue } from '../../api/quantity';
import { matchesLabels, parseLabelSelector } from '../../api/selectors';
import { StatusError } from '../../api/status';
import { readScale, writeScale } from '../../kinds/scale';
import type { Resources } from '../../registry/api-registry';
import type { EventRecorder } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import { containerUsage, METRICS_WINDOW } from '../../simulation/metrics';
import type { WatchCache } from '../../watch/cache';
import { timeText, writeOptions } from '../controller-utils';
import { follow, WorkQueue } from '../workqueue';
import { type Behavior, type Normalized, Normalizer, type Verdict } from './normalize';
import { CalculationError, type CalculatorOptions, type PodMetrics, rawResourceReplicas, resourceReplicas } from './replica-calculator';

export interface HpaOptions extends CalculatorOptions {
  syncPeriodMs: number;
  downscaleStabilizationMs: number;
  log?: (msg: string) => void;
}

const NAME = 'horizontal-pod-autoscaler-controller';
const W = () => writeOptions(NAME);

interface MetricTarget {
  type?: string;
  averageUtilization?: number;
  averageValue?: string;
  value?: string;
}

interface MetricSpec {
  type: string;
  resource?: { name: string; target: MetricTarget };
  containerResource?: { name: string; container: string; target: MetricTarget };
}

interface HpaSpec {
  scaleTargetRef: { apiVersion?: string; kind: string; name: string };
  minReplicas?: number;
  maxReplicas: number;
  metrics?: MetricSpec[];
  behavior?: Behavior;
}

type Condition = { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string };

/** One reconcile's working state: the conditions as they are set, in order. */
class Conditions {
  constructor(
    readonly list: Condition[],
    private readonly now: number,
  ) {}

  set(type: string, v: Verdict): void {
    let c = this.list.find((x) => x.type === type);
    if (!c) {
      c = { type, status: '' };
      this.list.push(c);
    }
    if (c.status !== v.status) c.lastTransitionTime = timeText(this.now);
    c.status = v.status;
    c.reason = v.reason;
    c.message = v.message;
  }
}

class MetricError extends Error {
  constructor(
    message: string,
    /** The ScalingActive reason (FailedGetResourceMetric, ...). */
    readonly reason: string,
  ) {
    super(message);
  }
}

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const milli = (v: unknown): number | undefined => {
  const q = parseQuantity(v);
  return q ? Number(quantityMilliValue(q)) : undefined;
};
const milliText = (n: number): string => formatQuantity({ mant: BigInt(Math.trunc(n)), exp: -3, format: 'DecimalSI' });
const WINDOW_MS = Number.parseInt(METRICS_WINDOW, 10) * 1000;

export class HorizontalPodAutoscalerController {
  private readonly queue: WorkQueue;
  private readonly normalizer: Normalizer;
  private follower: { stop(): void } | undefined;

  constructor(
    private readonly hpas: ResourceStore,
    private readonly hpaCache: WatchCache,
    private readonly api: Resources,
    private readonly podCache: WatchCache,
    private readonly podPrefix: string,
    private readonly recorder: EventRecorder,
    private readonly opts: HpaOptions,
  ) {
    this.normalizer = new Normalizer(opts.downscaleStabilizationMs);
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`${NAME}: ${m}`),
    );
  }

  async start(): Promise<void> {
    await Promise.all([this.hpaCache.start(), this.podCache.start()]);
    this.follower = follow(
      this.hpaCache,
      (objs) => {
        for (const o of objs) this.queue.after(this.keyOf(o), this.opts.syncPeriodMs);
      },
      (o, type) => {
        if (type === 'DELETED') this.normalizer.forget(this.keyOf(o));
        // Requests wait a period in the queue (the reference's enqueueHPA): one pending per autoscaler.
        else this.queue.after(this.keyOf(o), this.opts.syncPeriodMs);
      },
    );
  }

  stop(): void {
    this.follower?.stop();
    this.queue.stop();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const hpa = this.hpaCache.get(this.hpas.key(key.slice(0, slash), key.slice(slash + 1)))?.obj;
    if (!hpa) {
      this.normalizer.forget(key);
      return;
    }
    // Every period, failed or not (the reference's fixed-interval queue): no faster retries.
    this.queue.after(key, this.opts.syncPeriodMs);
    if (hpa.metadata.deletionTimestamp) return;
    try {
      await this.reconcile(key, hpa);
    } catch (e) {
      this.opts.log?.(`${NAME}: ${key}: ${errText(e)}`);
    }
  }

  /** The store of the target's kind with a scale subresource. */
  private targetStore(apiVersion: string, kind: string): ResourceStore | undefined {
    const slash = apiVersion.indexOf('/');
    const group = svcGroup(slash < 0 ? '' : apiVersion.slice(0, slash));
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const all = this.api.stores.filter((s) => s.def.group === group && s.def.kind === kind && s.def.scale && !s.def.storedAs);
    return all.find((s) => s.def.version === version) ?? all[0];
  }

  /** reconcileAutoscaler. */
  private async reconcile(key: string, hpa: Obj): Promise<void> {
    const now = Date.now();
    const spec = hpa.spec as HpaSpec;
    const ns = hpa.metadata.namespace as string;
    const before = (hpa.status ?? {}) as Record<string, unknown>;
    const conds = new Conditions(structuredClone((before.conditions as Condition[] | undefined) ?? []), now);
    const ref = spec.scaleTargetRef;
    const reference = `${ref.kind}/${ref.name}`;
    const min = spec.minReplicas ?? 1;
    const max = spec.maxReplicas;
    let status: Record<string, unknown> = { ...before };
    const finish = async () => {
      status.conditions = conds.list;
      await this.writeStatus(hpa, before, status);
    };

    const store = this.targetStore(ref.apiVersion ?? '', ref.kind);
    let scale: Obj;
    try {
      if (!store) {
        const group = (ref.apiVersion ?? '').includes('/') ? (ref.apiVersion as string).split('/')[0] : '';
        throw new Error(`unable to determine resource for scale target reference: no matches for kind "${ref.kind}" in group "${group}"`);
      }
      scale = await readScale(store, ns, ref.name);
    } catch (e) {
      const msg = store ? `failed to query scale subresource for ${reference}: ${errText(e)}` : errText(e);
      void this.recorder.event(hpa, 'Warning', 'FailedGetScale', errText(e));
      conds.set('AbleToScale', {
        status: 'False',
        reason: 'FailedGetScale',
        message: `the HPA controller was unable to get the target's current scale: ${errText(e)}`,
      });
      await finish();
      throw new Error(msg);
    }
    conds.set('AbleToScale', {
      status: 'True',
      reason: 'SucceededGetScale',
      message: "the HPA controller was able to get the target's current scale",
    });
    const current = (scale.spec as { replicas?: number }).replicas ?? 0;
    this.normalizer.initial(key, current);

    let desired = 0;
    let rescaleReason = '';
    let metricStatuses: unknown[] = (before.currentMetrics as unknown[] | undefined) ?? [];
    if (current === 0 && min !== 0) {
      // Autoscaling is disabled for this resource.
      conds.set('ScalingActive', {
        status: 'False',
        reason: 'ScalingDisabled',
        message: 'scaling is disabled since the replica count of the target is zero',
      });
    } else if (current > max) {
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      let computed: { replicas: number; metric: string; statuses: unknown[] };
      try {
        computed = this.computeReplicas(hpa, spec, scale, current, conds, now);
      } catch (e) {
        status = { ...status, currentReplicas: current, currentMetrics: e instanceof MetricsFailed ? e.statuses : metricStatuses };
        if (!(status.currentMetrics as unknown[]).length) delete status.currentMetrics;
        await finish();
        void this.recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', errText(e));
        throw new Error(`failed to compute desired number of replicas based on listed metrics for ${reference}: ${errText(e)}`);
      }
      metricStatuses = computed.statuses;
      desired = computed.replicas;
      if (desired > current) rescaleReason = `${computed.metric} above target`;
      if (desired < current) rescaleReason = 'All metrics below target';
      const normalized: Normalized = spec.behavior
        ? this.normalizer.withBehavior(key, spec.behavior, current, desired, min, max)
        : this.normalizer.legacy(key, current, desired, min, max);
      desired = normalized.replicas;
      conds.set('AbleToScale', normalized.ableToScale);
      conds.set('ScalingLimited', normalized.scalingLimited);
    }

    const rescale = desired !== current;
    if (rescale) {
      try {
        await writeScale(store as ResourceStore, ns, ref.name, desired, W());
      } catch (e) {
        void this.recorder.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${rescaleReason}; error: ${errText(e)}`);
        conds.set('AbleToScale', {
          status: 'False',
          reason: 'FailedUpdateScale',
          message: `the HPA controller was unable to update the target scale: ${errText(e)}`,
        });
        status = { ...status, currentReplicas: current };
        await finish();
        throw new Error(`failed to rescale ${reference}: ${errText(e)}`);
      }
      conds.set('AbleToScale', {
        status: 'True',
        reason: 'SucceededRescale',
        message: `the HPA controller was able to update the target scale to ${desired}`,
      });
      void this.recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${rescaleReason}`);
      this.normalizer.recordScale(key, spec.behavior, current, desired);
      this.opts.log?.(`${NAME}: ${key}: ${reference} scaled from ${current} to ${desired}: ${rescaleReason}`);
    }

    status = { ...status, currentReplicas: current, desiredReplicas: desired };
    if (metricStatuses.length > 0) status.currentMetrics = metricStatuses;
    else delete status.currentMetrics;
    if (rescale) status.lastScaleTime = timeText(now);
    await finish();
  }

  /** computeReplicasForMetrics: the highest count any valid metric asks for. */
  private computeReplicas(
    hpa: Obj,
    spec: HpaSpec,
    scale: Obj,
    current: number,
    conds: Conditions,
    now: number,
  ): { replicas: number; metric: string; statuses: unknown[] } {
    const selText = (scale.status as { selector?: string }).selector ?? '';
    if (selText === '') {
      void this.recorder.event(hpa, 'Warning', 'SelectorRequired', 'selector is required');
      conds.set('ScalingActive', { status: 'False', reason: 'InvalidSelector', message: "the HPA target's scale is missing a selector" });
      throw new Error('selector is required');
    }
    let sel: ReturnType<typeof parseLabelSelector>;
    try {
      sel = parseLabelSelector(selText);
    } catch (e) {
      const msg = `couldn't convert selector into a corresponding internal selector object: ${errText(e)}`;
      void this.recorder.event(hpa, 'Warning', 'InvalidSelector', msg);
      conds.set('ScalingActive', { status: 'False', reason: 'InvalidSelector', message: msg });
      throw new Error(msg);
    }
    const ns = hpa.metadata.namespace as string;
    const pods = this.podCache
      .list(`${this.podPrefix}${ns}/`)
      .map((c) => c.obj)
      .filter((p) => matchesLabels(sel, p.metadata.labels));
    const metrics = spec.metrics ?? [];
    const statuses: unknown[] = [];
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let firstError: MetricError | undefined;
    for (const m of metrics) {
      try {
        const r = this.computeForMetric(m, current, pods, now);
        statuses.push(r.status);
        if (replicas === 0 || r.replicas > replicas) {
          replicas = r.replicas;
          metric = r.metric;
        }
      } catch (e) {
        const me = e instanceof MetricError ? e : new MetricError(errText(e), `FailedGet${m.type}Metric`);
        void this.recorder.event(hpa, 'Warning', me.reason, me.message);
        if (!firstError) firstError = me;
        invalid++;
      }
    }
    if (firstError && (invalid >= metrics.length || replicas < current)) {
      conds.set('ScalingActive', {
        status: 'False',
        reason: firstError.reason,
        message: `the HPA was unable to compute the replica count: ${firstError.message}`,
      });
      throw new MetricsFailed(
        `invalid metrics (${invalid} invalid out of ${metrics.length}), first error is: ${firstError.message}`,
        statuses,
      );
    }
    conds.set('ScalingActive', {
      status: 'True',
      reason: 'ValidMetricFound',
      message: `the HPA was able to successfully calculate a replica count from ${metric}`,
    });
    return { replicas, metric, statuses };
  }

  /** computeReplicasForMetric of one Resource or ContainerResource metric. */
  private computeForMetric(
    m: MetricSpec,
    current: number,
    pods: Obj[],
    now: number,
  ): { replicas: number; metric: string; status: unknown } {
    const src = m.type === 'Resource' ? m.resource : m.type === 'ContainerResource' ? m.containerResource : undefined;
    if (!src) {
      const what = m.type === 'External' ? 'external' : 'custom';
      throw new MetricError(
        `unable to get ${what} metric: no ${what} metrics API (${what}.metrics.k8s.io) registered`,
        `FailedGet${m.type}Metric`,
      );
    }
    const reason = `FailedGet${m.type}Metric`;
    const container = 'container' in src ? String(src.container) : '';
    const res = src.name;
    const usage = this.podMetrics(pods, res, container, now);
    const o = this.opts;
    const fail = (what: string, e: unknown): never => {
      throw new MetricError(`failed to get ${res} ${what}: ${errText(e)}`, reason);
    };
    const current_ = (c: Record<string, unknown>) =>
      m.type === 'Resource'
        ? { type: 'Resource', resource: { name: res, current: c } }
        : { type: 'ContainerResource', containerResource: { name: res, container, current: c } };
    const t = src.target;
    if (t.averageValue !== undefined) {
      let r: { replicas: number; raw: number };
      try {
        if (usage.size === 0)
          throw new CalculationError(`unable to get metrics for resource ${res}: no metrics returned from resource metrics API`);
        r = rawResourceReplicas(current, milli(t.averageValue) ?? 0, res, pods, usage, o, now);
      } catch (e) {
        return fail('usage', e);
      }
      return { replicas: r.replicas, metric: `${res} resource`, status: current_({ averageValue: milliText(r.raw) }) };
    }
    if (t.averageUtilization === undefined) {
      throw new MetricError(
        'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set',
        reason,
      );
    }
    let r: { replicas: number; utilization: number; raw: number };
    try {
      if (usage.size === 0)
        throw new CalculationError(`unable to get metrics for resource ${res}: no metrics returned from resource metrics API`);
      r = resourceReplicas(current, t.averageUtilization, res, container, pods, usage, o, milli, now);
    } catch (e) {
      return fail('utilization', e);
    }
    const metric =
      m.type === 'Resource'
        ? `${res} resource utilization (percentage of request)`
        : `${res} container resource utilization (percentage of request)`;
    return { replicas: r.replicas, metric, status: current_({ averageValue: milliText(r.raw), averageUtilization: r.utilization }) };
  }

  /** The pods' usage of a resource (milli-units), as the resource metrics API reports it. */
  private podMetrics(pods: Obj[], res: string, container: string, now: number): PodMetrics {
    const out: PodMetrics = new Map();
    if (res !== 'cpu' && res !== 'memory') return out;
    for (const p of pods) {
      const usage = containerUsage(p);
      if (!usage) continue;
      let sum = 0;
      let found = container === '';
      for (const [name, u] of usage) {
        if (container !== '' && name !== container) continue;
        found = true;
        sum += res === 'cpu' ? u.cpu * 1000 : u.memory * 1000;
      }
      if (found) out.set(p.metadata.name as string, { value: Math.round(sum), timestamp: now, window: WINDOW_MS });
    }
    return out;
  }

  /** updateStatusIfNeeded. */
  private async writeStatus(hpa: Obj, before: Record<string, unknown>, status: Record<string, unknown>): Promise<void> {
    if (JSON.stringify(before) === JSON.stringify(status)) return;
    const uid = hpa.metadata.uid;
    try {
      await this.hpas.updateFrom(hpa.metadata.namespace as string, hpa.metadata.name as string, 'status', W(), (c) => {
        if (c.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...c, status };
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}

/** All metrics (or, on a scale down, some) failed: the statuses of those that did not. */
class MetricsFailed extends Error {
  constructor(
    message: string,
    readonly statuses: unknown[],
  ) {
    super(message);
  }
}
