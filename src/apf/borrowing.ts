/**
 * Seats per priority level, and borrowing between levels (the reference's apf_controller
 * concurrency limits, KEP 1040 "borrowing"):
 *
 *   server limit     = --max-requests-inflight + --max-mutating-requests-inflight
 *   nominal(L)       = ceil(server limit × shares(L) / Σ shares)
 *   lendable(L)      = round(nominal × lendablePercent / 100)
 *   borrowing(L)     = round(nominal × borrowingLimitPercent / 100), unbounded when unset
 *   lower(L), upper  = nominal − lendable, nominal + borrowing
 *
 * Every adjustment period each level's seat demand (seats in use + seats waiting, integrated
 * over time) gives an envelope avg + stddev, smoothed so that it falls slowly
 * (smoothed = max(envelope, 0.977 × smoothed + 0.023 × envelope)). The levels' current limits
 * are then the one fair allocation of Σ nominal: each level gets `fairProp × target` clamped to
 * [lower, upper] (target = max(lower, smoothed)), with fairProp chosen so that the sum is exact.
 * An Exempt level is not limited, but what it used (its high watermark) is kept from lending.
 */
import type { IntegratorResults } from './integrator';

export const ADJUSTMENT_PERIOD_MS = 10_000;
const SMOOTHING = 0.977;
/** The reference's MinTarget: a level with no demand still gets its share of what is left. */
const MIN_TARGET = 0.001;

export interface LevelLimits {
  nominal: number;
  lendable: number;
  /** undefined: no borrowing limit. */
  borrowing: number | undefined;
  lower: number;
  upper: number;
}

export interface LevelShares {
  shares: number;
  lendablePercent: number;
  borrowingLimitPercent: number | undefined;
}

export function levelLimits(serverLimit: number, l: LevelShares, sharesSum: number): LevelLimits {
  const nominal = sharesSum > 0 ? Math.ceil((serverLimit * l.shares) / sharesSum) : 0;
  const lendable = Math.round((nominal * l.lendablePercent) / 100);
  const borrowing = l.borrowingLimitPercent === undefined ? undefined : Math.round((nominal * l.borrowingLimitPercent) / 100);
  return { nominal, lendable, borrowing, lower: nominal - lendable, upper: borrowing === undefined ? serverLimit : nominal + borrowing };
}

export class SeatDemandStats {
  avg = 0;
  stdDev = 0;
  highWatermark = 0;
  smoothed = 0;

  update(obs: IntegratorResults): void {
    this.highWatermark = obs.max;
    if (obs.durationMs <= 0) return;
    this.avg = obs.average;
    this.stdDev = Number.isNaN(obs.deviation) ? 0 : obs.deviation;
    const envelope = this.avg + this.stdDev;
    this.smoothed = Math.max(envelope, SMOOTHING * this.smoothed + (1 - SMOOTHING) * envelope);
  }
}

export interface AllocationItem {
  lower: number;
  upper: number;
  target: number;
}

/**
 * Allocations a[i] in [lower, upper] summing to `required`, each `fairProp × target` where the
 * bounds allow. undefined when the bounds make it impossible (Σ lower > required or
 * Σ upper < required).
 */
export function allocate(required: number, items: readonly AllocationItem[]): { allocs: number[]; fairProp: number } | undefined {
  let lowSum = 0;
  let highSum = 0;
  for (const it of items) {
    lowSum += it.lower;
    highSum += it.upper;
  }
  if (lowSum > required + 1e-9 || highSum < required - 1e-9) return undefined;
  const targets = items.map((it) => Math.max(it.target, MIN_TARGET));
  const sumAt = (p: number) => {
    let s = 0;
    for (let i = 0; i < items.length; i++) {
      const it = items[i] as AllocationItem;
      s += Math.min(it.upper, Math.max(it.lower, p * (targets[i] as number)));
    }
    return s;
  };
  // sumAt is non-decreasing in p: bisect between 0 and a p at which every item is at its upper bound.
  let lo = 0;
  let hi = 1;
  while (sumAt(hi) < required && hi < 1e15) hi *= 2;
  for (let i = 0; i < 100 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (sumAt(mid) < required) lo = mid;
    else hi = mid;
  }
  const fairProp = hi;
  const allocs = items.map((it, i) => Math.min(it.upper, Math.max(it.lower, fairProp * (targets[i] as number))));
  return { allocs, fairProp };
}
