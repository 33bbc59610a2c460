/** The HPA's arithmetic (replica-calculator.ts, normalize.ts) against the reference's cases. */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { Normalizer } from './normalize';
import { type PodMetrics, rawResourceReplicas, resourceReplicas } from './replica-calculator';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const O = { tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000 };
const milli = (v: unknown) => (typeof v !== 'string' ? undefined : v.endsWith('m') ? Number(v.slice(0, -1)) : Number(v) * 1000);

/**
 * A pod started 5 min ago, Ready for 4 min (or Pending, deleted, or `starting`: started 1 min ago
 * and not ready since), requesting 1 cpu.
 */
function pod(name: string, state: 'ready' | 'pending' | 'starting' | 'deleted' = 'ready'): Obj {
  const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
  return {
    metadata: { name, ...(state === 'deleted' ? { deletionTimestamp: ago(1) } : {}) },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1000m' } } }] },
    status: {
      phase: state === 'pending' ? 'Pending' : 'Running',
      startTime: ago(state === 'starting' ? 60 : 300),
      conditions: [
        { type: 'Ready', status: state === 'starting' ? 'False' : 'True', lastTransitionTime: ago(state === 'starting' ? 55 : 240) },
      ],
    },
  };
}

const usage = (m: Record<string, number>): PodMetrics =>
  new Map(Object.entries(m).map(([k, value]) => [k, { value, timestamp: NOW, window: 15_000 }]));

describe('resourceReplicas (utilization)', () => {
  test('ceil(ready × utilization / target); within the tolerance: unchanged', () => {
    const pods = [pod('a'), pod('b')];
    expect(resourceReplicas(2, 50, 'cpu', '', pods, usage({ a: 900, b: 900 }), O, milli, NOW)).toEqual({
      replicas: 4,
      utilization: 90,
      raw: 900,
    });
    expect(resourceReplicas(2, 50, 'cpu', '', pods, usage({ a: 540, b: 500 }), O, milli, NOW).replicas).toBe(2);
    expect(resourceReplicas(2, 50, 'cpu', '', pods, usage({ a: 100, b: 100 }), O, milli, NOW).replicas).toBe(1);
  });

  test('missing pods count as the target on a scale down, as nothing on a scale up; unready as nothing on a scale up', () => {
    // Up: a and b at 100%, c missing (0) → (100+100+0)/300 = 66.7% of 50 → ceil(1.33 × 3) = 4.
    expect(resourceReplicas(3, 50, 'cpu', '', [pod('a'), pod('b'), pod('c')], usage({ a: 1000, b: 1000 }), O, milli, NOW).replicas).toBe(4);
    // Down: a at 10%, b missing (100%) → 55% of 50: within range of the reversal rule → unchanged.
    expect(resourceReplicas(2, 50, 'cpu', '', [pod('a'), pod('b')], usage({ a: 100 }), O, milli, NOW).replicas).toBe(2);
    // Up with a Pending pod: (90+90+0)/3 = 60% of 50 = 1.2 → ceil(3.6) = 4.
    expect(
      resourceReplicas(3, 50, 'cpu', '', [pod('a'), pod('b'), pod('p', 'pending')], usage({ a: 900, b: 900 }), O, milli, NOW).replicas,
    ).toBe(4);
    // A pod not ready within the initialization period: its sample ignored, then counted as 0:
    // (90 + 0) / 2 = 45% of 50 reverses the direction → unchanged.
    expect(resourceReplicas(3, 50, 'cpu', '', [pod('a'), pod('u', 'starting')], usage({ a: 900, u: 900 }), O, milli, NOW).replicas).toBe(3);
    // A pod being deleted is ignored.
    expect(resourceReplicas(2, 50, 'cpu', '', [pod('a'), pod('d', 'deleted')], usage({ a: 900, d: 0 }), O, milli, NOW).replicas).toBe(2);
  });

  test('errors: no pods, no metrics of ready pods, a container without a request', () => {
    expect(() => resourceReplicas(1, 50, 'cpu', '', [], usage({}), O, milli, NOW)).toThrow(
      'no pods returned by selector while calculating replica count',
    );
    expect(() => resourceReplicas(1, 50, 'cpu', '', [pod('u', 'starting')], usage({ u: 5 }), O, milli, NOW)).toThrow(
      'did not receive metrics for targeted pods (pods might be unready)',
    );
    const bare = pod('a');
    (bare.spec as { containers: unknown[] }).containers = [{ name: 'c' }];
    expect(() => resourceReplicas(1, 50, 'cpu', '', [bare], usage({ a: 5 }), O, milli, NOW)).toThrow(
      'missing request for cpu in container c of Pod a',
    );
  });

  test('rawResourceReplicas: average value target', () => {
    expect(rawResourceReplicas(2, 200, 'cpu', [pod('a'), pod('b')], usage({ a: 500, b: 300 }), O, NOW)).toEqual({ replicas: 4, raw: 400 });
    expect(rawResourceReplicas(2, 400, 'cpu', [pod('a'), pod('b')], usage({ a: 420, b: 400 }), O, NOW).replicas).toBe(2);
  });
});

describe('Normalizer', () => {
  test('no behavior: the highest recommendation of the downscale window; scale up at most max(2×, 4)', () => {
    let now = NOW;
    const n = new Normalizer(300_000, () => now);
    n.initial('k', 3);
    expect(n.legacy('k', 3, 20, 1, 10)).toMatchObject({ replicas: 6, scalingLimited: { status: 'True', reason: 'ScaleUpLimit' } });
    now += 60_000;
    const held = n.legacy('k', 6, 2, 1, 10);
    expect(held.replicas).toBe(10);
    expect(held.ableToScale.reason).toBe('ScaleDownStabilized');
    now += 301_000;
    expect(n.legacy('k', 6, 2, 1, 10)).toMatchObject({ replicas: 2, ableToScale: { reason: 'ReadyForNewScale' } });
    now += 301_000;
    expect(n.legacy('k', 2, 0, 1, 10)).toMatchObject({ replicas: 1, scalingLimited: { status: 'True', reason: 'TooFewReplicas' } });
  });

  test('behavior: Pods and Percent policies, selectPolicy, events within the period', () => {
    let now = NOW;
    const n = new Normalizer(300_000, () => now);
    const b = {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max' as const,
        policies: [
          { type: 'Pods' as const, value: 4, periodSeconds: 15 },
          { type: 'Percent' as const, value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max' as const,
        policies: [{ type: 'Percent' as const, value: 50, periodSeconds: 60 }],
      },
    };
    n.initial('k', 10);
    // Max of +4 and +100%: 20.
    expect(n.withBehavior('k', b, 10, 50, 1, 100).replicas).toBe(20);
    n.recordScale('k', b, 10, 20);
    now += 5_000;
    // Within the period the start is 10: still at most 20.
    expect(n.withBehavior('k', b, 20, 50, 1, 100)).toMatchObject({ replicas: 20, scalingLimited: { reason: 'ScaleUpLimit' } });
    const min = { ...b, scaleUp: { ...b.scaleUp, selectPolicy: 'Min' as const } };
    now += 20_000;
    expect(n.withBehavior('k', min, 20, 50, 1, 100).replicas).toBe(24);
    // Down 50% a minute from the count the minute started with (the scale up to 20 undone: 10): 5;
    // then no further within the minute.
    expect(n.withBehavior('k', b, 20, 1, 1, 100)).toMatchObject({ replicas: 5, scalingLimited: { reason: 'ScaleDownLimit' } });
    n.recordScale('k', b, 20, 5);
    now += 1_000;
    expect(n.withBehavior('k', b, 5, 1, 1, 100).replicas).toBe(5);
    const off = { ...b, scaleDown: { ...b.scaleDown, selectPolicy: 'Disabled' as const } };
    now += 120_000;
    expect(n.withBehavior('k', off, 5, 1, 1, 100).replicas).toBe(5);
  });

  test('behavior: the scale-up window applies the lowest recent recommendation', () => {
    let now = NOW;
    const n = new Normalizer(0, () => now);
    const b = {
      scaleUp: {
        stabilizationWindowSeconds: 60,
        selectPolicy: 'Max' as const,
        policies: [{ type: 'Pods' as const, value: 100, periodSeconds: 15 }],
      },
    };
    n.initial('k', 2);
    expect(n.withBehavior('k', b, 2, 8, 1, 100)).toMatchObject({ replicas: 2, ableToScale: { reason: 'ScaleUpStabilized' } });
    now += 61_000;
    expect(n.withBehavior('k', b, 2, 8, 1, 100).replicas).toBe(8);
  });
});
