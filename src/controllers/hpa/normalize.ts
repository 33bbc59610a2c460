/**
 * From the metrics' recommendation to the count the autoscaler sets, as the reference's
 * horizontal.go: normalizeDesiredReplicas (no behavior: the highest recommendation of the
 * downscale stabilization window, then at most max(2×current, 4) and within min and max) and
 * normalizeDesiredReplicasWithBehaviors (the stabilization windows of scaleUp and scaleDown, then
 * the rate their policies allow given the scale events of each policy's period, selectPolicy
 * Max, Min or Disabled). Recommendations and scale events are kept per autoscaler.
 */

export interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: ScalingPolicy[];
}

export interface Behavior {
  scaleUp?: ScalingRules;
  scaleDown?: ScalingRules;
}

/** A condition to set: status, reason, message. */
export interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  ableToScale: Verdict;
  scalingLimited: Verdict;
}

interface Sample {
  replicas: number;
  at: number;
}

interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

const WITHIN_RANGE = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
const TOO_FEW = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
const TOO_MANY = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
const UP_LIMIT = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
const DOWN_LIMIT = { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' };
const READY = { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
const DOWN_STABILIZED = {
  reason: 'ScaleDownStabilized',
  message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
};
const UP_STABILIZED = {
  reason: 'ScaleUpStabilized',
  message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
};

const limited = (replicas: number, wanted: number, r: { reason: string; message: string }): Verdict => ({
  status: replicas === wanted ? 'False' : 'True',
  ...r,
});

export class Normalizer {
  private readonly recommendations = new Map<string, Sample[]>();
  private readonly upEvents = new Map<string, ScaleEvent[]>();
  private readonly downEvents = new Map<string, ScaleEvent[]>();

  constructor(
    /** The scale-down stabilization window of autoscalers without behavior, or that leave it unset. */
    private readonly downscaleStabilizationMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** recordInitialRecommendation: the current count, the first time an autoscaler is seen. */
  initial(key: string, current: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: current, at: this.clock() }]);
  }

  forget(key: string): void {
    this.recommendations.delete(key);
    this.upEvents.delete(key);
    this.downEvents.delete(key);
  }

  /** normalizeDesiredReplicas: an autoscaler without behavior. */
  legacy(key: string, current: number, desired: number, min: number, max: number): Normalized {
    const now = this.clock();
    const samples = this.recommendations.get(key) ?? [];
    const cutoff = now - this.downscaleStabilizationMs;
    let stabilized = desired;
    let old = -1;
    for (const [i, s] of samples.entries()) {
      if (s.at < cutoff) old = i;
      else if (s.replicas > stabilized) stabilized = s.replicas;
    }
    if (old >= 0) samples[old] = { replicas: desired, at: now };
    else samples.push({ replicas: desired, at: now });
    this.recommendations.set(key, samples);
    const ableToScale: Verdict = { status: 'True', ...(stabilized !== desired ? DOWN_STABILIZED : READY) };
    const upLimit = Math.max(2 * current, 4);
    const [maxAllowed, maxWhy] = max > upLimit ? [upLimit, UP_LIMIT] : [max, TOO_MANY];
    let replicas = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized < min) [replicas, why] = [min, TOO_FEW];
    else if (stabilized > maxAllowed) [replicas, why] = [maxAllowed, maxWhy];
    return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, why) };
  }

  /** normalizeDesiredReplicasWithBehaviors. */
  withBehavior(key: string, b: Behavior, current: number, desired: number, min: number, max: number): Normalized {
    const now = this.clock();
    const up = b.scaleUp ?? {};
    const down = { ...b.scaleDown };
    if (down.stabilizationWindowSeconds === undefined) down.stabilizationWindowSeconds = this.downscaleStabilizationMs / 1000;
    // stabilizeRecommendationWithBehaviors
    const upCutoff = now - (up.stabilizationWindowSeconds ?? 0) * 1000;
    const downCutoff = now - down.stabilizationWindowSeconds * 1000;
    let upRec = desired;
    let downRec = desired;
    let old = -1;
    const samples = this.recommendations.get(key) ?? [];
    for (const [i, s] of samples.entries()) {
      if (s.at > upCutoff) upRec = Math.min(s.replicas, upRec);
      if (s.at > downCutoff) downRec = Math.max(s.replicas, downRec);
      if (s.at < upCutoff && s.at < downCutoff) old = i;
    }
    let stabilized = current;
    if (stabilized < upRec) stabilized = upRec;
    if (stabilized > downRec) stabilized = downRec;
    if (old >= 0) samples[old] = { replicas: desired, at: now };
    else samples.push({ replicas: desired, at: now });
    this.recommendations.set(key, samples);
    const ableToScale: Verdict = {
      status: 'True',
      ...(stabilized !== desired ? (desired >= current ? UP_STABILIZED : DOWN_STABILIZED) : READY),
    };
    // convertDesiredReplicasWithBehaviorRate
    let replicas = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized > current) {
      const limit = Math.max(this.scaleUpLimit(current, key, up, now), current);
      const [maxAllowed, maxWhy] = max > limit ? [limit, UP_LIMIT] : [max, TOO_MANY];
      if (stabilized > maxAllowed) [replicas, why] = [maxAllowed, maxWhy];
    } else if (stabilized < current) {
      const limit = Math.min(this.scaleDownLimit(current, key, down, now), current);
      const [minAllowed, minWhy] = min < limit ? [limit, DOWN_LIMIT] : [min, TOO_FEW];
      if (stabilized < minAllowed) [replicas, why] = [minAllowed, minWhy];
    }
    return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, why) };
  }

  /** storeScaleEvent: a rescale of an autoscaler with behavior, for its policies' periods. */
  recordScale(key: string, b: Behavior | undefined, from: number, to: number): void {
    if (!b) return;
    const now = this.clock();
    const upward = to > from;
    const rules = (upward ? b.scaleUp : b.scaleDown) ?? {};
    const longest = Math.max(0, ...(rules.policies ?? []).map((p) => p.periodSeconds)) * 1000;
    const events = (upward ? this.upEvents : this.downEvents).get(key) ?? [];
    for (const e of events) if (e.at < now - longest) e.outdated = true;
    const fresh: ScaleEvent = { change: Math.abs(to - from), at: now, outdated: false };
    const i = events.findIndex((e) => e.outdated);
    if (i >= 0) events[i] = fresh;
    else events.push(fresh);
    (upward ? this.upEvents : this.downEvents).set(key, events);
  }

  /** getReplicasChangePerPeriod. */
  private changeIn(periodSeconds: number, events: ScaleEvent[], now: number): number {
    const cutoff = now - periodSeconds * 1000;
    return events.filter((e) => e.at > cutoff).reduce((a, e) => a + e.change, 0);
  }

  /** The count at the start of a policy's period: the changes made within it undone (both directions). */
  private periodStart(current: number, key: string, periodSeconds: number, now: number): number {
    const added = this.changeIn(periodSeconds, this.upEvents.get(key) ?? [], now);
    const deleted = this.changeIn(periodSeconds, this.downEvents.get(key) ?? [], now);
    return current - added + deleted;
  }

  /** calculateScaleUpLimitWithScalingRules. */
  private scaleUpLimit(current: number, key: string, rules: ScalingRules, now: number): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pickMin = rules.selectPolicy === 'Min';
    let result = pickMin ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
    for (const p of rules.policies ?? []) {
      const start = this.periodStart(current, key, p.periodSeconds, now);
      const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
      result = pickMin ? Math.min(result, proposed) : Math.max(result, proposed);
    }
    return result;
  }

  /** calculateScaleDownLimitWithBehaviors. */
  private scaleDownLimit(current: number, key: string, rules: ScalingRules, now: number): number {
    if (rules.selectPolicy === 'Disabled') return current;
    const pickMin = rules.selectPolicy === 'Min';
    let result = pickMin ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
    for (const p of rules.policies ?? []) {
      const start = this.periodStart(current, key, p.periodSeconds, now);
      const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
      // Min picks the policy that changes least: the highest limit.
      result = pickMin ? Math.max(result, proposed) : Math.min(result, proposed);
    }
    return result;
  }
}
