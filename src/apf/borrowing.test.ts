import { describe, expect, test } from 'bun:test';
import { allocate, levelLimits, SeatDemandStats } from './borrowing';
import { FakeClock } from './clock';
import { hashFlow } from './dealer';
import { FlowControl, type PriorityLevel } from './flow-control';
import { Integrator } from './integrator';
import type { QueueSet } from './queueset';

describe('seat limits', () => {
  test('nominal seats are the ceiling of the level share of the server limit', () => {
    // 600 seats; the bootstrap shares sum to 245.
    const l = levelLimits(600, { shares: 100, lendablePercent: 90, borrowingLimitPercent: undefined }, 245);
    expect(l).toEqual({ nominal: 245, lendable: 221, borrowing: undefined, lower: 24, upper: 600 });
    const h = levelLimits(600, { shares: 40, lendablePercent: 50, borrowingLimitPercent: 100 }, 245);
    expect(h).toEqual({ nominal: 98, lendable: 49, borrowing: 98, lower: 49, upper: 196 });
    expect(levelLimits(600, { shares: 0, lendablePercent: 0, borrowingLimitPercent: 0 }, 245).nominal).toBe(0);
  });
});

describe('allocation', () => {
  test('sums to the total, proportional to targets inside the bounds', () => {
    const r = allocate(100, [
      { lower: 10, upper: 100, target: 10 },
      { lower: 10, upper: 100, target: 30 },
    ]);
    expect(r?.allocs.map((a) => Math.round(a * 1000) / 1000)).toEqual([25, 75]);
  });

  test('bounds win over the fair proportion', () => {
    const r = allocate(100, [
      { lower: 40, upper: 100, target: 1 },
      { lower: 10, upper: 50, target: 1000 },
      { lower: 0, upper: 100, target: 1 },
    ]);
    const a = (r?.allocs ?? []).map((x) => Math.round(x * 1000) / 1000);
    expect(a[0]).toBe(40);
    expect(a[1]).toBe(50);
    expect(a[2]).toBe(10);
  });

  test('impossible bounds answer undefined', () => {
    expect(allocate(10, [{ lower: 20, upper: 30, target: 1 }])).toBeUndefined();
    expect(allocate(100, [{ lower: 0, upper: 30, target: 1 }])).toBeUndefined();
  });
});

describe('seat demand', () => {
  test('the integrator averages a piecewise-constant demand over time', () => {
    const clock = new FakeClock();
    const i = new Integrator(clock);
    i.set(2);
    clock.advance(1000);
    i.set(4);
    clock.advance(1000);
    const r = i.reset();
    expect(r.durationMs).toBe(2000);
    expect(r.average).toBe(3);
    expect(r.deviation).toBe(1);
    expect(r.max).toBe(4);
  });

  test('the smoothed demand rises at once and falls slowly', () => {
    const s = new SeatDemandStats();
    s.update({ durationMs: 10_000, average: 50, deviation: 0, max: 50, min: 0 });
    expect(s.smoothed).toBe(50);
    s.update({ durationMs: 10_000, average: 0, deviation: 0, max: 0, min: 0 });
    expect(s.smoothed).toBeCloseTo(48.85, 2);
  });
});

describe('borrowing in FlowControl', () => {
  const level = (name: string, shares: number, lendablePercent: number, borrowingLimitPercent?: number) => ({
    apiVersion: 'flowcontrol.apiserver.svc.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name, uid: name },
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: shares,
        lendablePercent,
        ...(borrowingLimitPercent === undefined ? {} : { borrowingLimitPercent }),
        limitResponse: { type: 'Queue', queuing: { queues: 8, handSize: 2, queueLengthLimit: 50 } },
      },
    },
  });

  /** `n` requests of 10 seats each on a level (they run or wait: either way they are demand). */
  const load = (fc: FlowControl, name: string, n: number) => {
    const qs = fc.priorityLevels.get(name)?.qs as QueueSet;
    return Array.from({ length: n }, (_, i) =>
      qs.start(hashFlow(name, String(i)), { initialSeats: 10, finalSeats: 0, additionalLatencyMs: 0 }, undefined, 3_600_000),
    );
  };

  test('a busy level borrows what an idle one lends, and gives it back', () => {
    const clock = new FakeClock();
    const fc = new FlowControl({ serverConcurrencyLimit: 100, requestWaitLimitMs: 15_000, clock });
    fc.configure([], [level('busy', 50, 50), level('idle', 50, 80)]);
    const busy = fc.priorityLevels.get('busy') as PriorityLevel;
    const idle = fc.priorityLevels.get('idle') as PriorityLevel;
    expect([busy.limits.nominal, idle.limits.nominal]).toEqual([50, 50]);
    // A demand of 90 seats on busy for a whole period.
    const heavy = load(fc, 'busy', 9);
    expect(heavy.filter((r) => r.state === 'executing').length).toBe(5);
    clock.advance(10_000);
    fc.adjustBorrowing();
    // idle keeps its 10 unlendable seats; busy gets the rest, and runs what waited.
    expect(idle.current).toBe(10);
    expect(busy.current).toBe(90);
    expect(heavy.filter((r) => r.state === 'executing').length).toBe(9);
    // Now the lender is busy (60 seats) and the borrower idle: as busy's smoothed demand
    // decays, the seats go back.
    for (const r of heavy) busy.qs?.finish(r);
    load(fc, 'idle', 6);
    clock.advance(10_000);
    fc.adjustBorrowing();
    expect(idle.current).toBeLessThan(50);
    for (let i = 0; i < 100; i++) {
      clock.advance(10_000);
      fc.adjustBorrowing();
    }
    expect(idle.current).toBeGreaterThanOrEqual(60);
    expect(busy.current).toBeGreaterThanOrEqual(25);
    expect(busy.current + idle.current).toBe(100);
  });

  test('borrowingLimitPercent bounds what a level may take', () => {
    const clock = new FakeClock();
    const fc = new FlowControl({ serverConcurrencyLimit: 100, requestWaitLimitMs: 15_000, clock });
    fc.configure([], [level('busy', 50, 0, 20), level('idle', 50, 100)]);
    load(fc, 'busy', 10);
    clock.advance(10_000);
    fc.adjustBorrowing();
    expect(fc.priorityLevels.get('busy')?.current).toBe(60);
    expect(fc.priorityLevels.get('idle')?.current).toBe(40);
  });
});
