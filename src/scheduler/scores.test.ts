import { describe, expect, test } from 'bun:test';
import { type NodeOpts, node, pod, requests } from './fixtures.test-helpers';
import { balancedAllocation, defaultNormalize, leastAllocated, scoreNodes, selectHost } from './scores';
import { normalizeSpread } from './topology';

describe('NodeResourcesFit LeastAllocated and BalancedAllocation', () => {
  // Node 4 cpu, 8Gi; existing pods' requests; the pod's requests; the two scores.
  test.each([
    ['empty node, 1 cpu 2Gi', [], { cpu: '1', memory: '2Gi' }, 75, 100],
    ['empty node, 2 cpu 1Gi', [], { cpu: '2', memory: '1Gi' }, 68, 81],
    ['half used, 0 requests (non-zero defaults for least)', [{ cpu: '2', memory: '4Gi' }], {}, 47, 100],
    ['full cpu', [{ cpu: '3' }], { cpu: '1' }, 47, 50],
  ] as [string, Record<string, string>[], Record<string, string>, number, number][])('%s', (_, used, want, least, balanced) => {
    const n = node(
      'n',
      {},
      used.map((r, i) => pod(`u${i}`, requests(r))),
    );
    const p = pod('p', requests(want));
    expect(leastAllocated(p, n)).toBe(least);
    expect(balancedAllocation(p, n)).toBe(balanced);
  });
});

describe('normalisation', () => {
  test.each([
    [[0, 0, 0], false, [0, 0, 0]],
    [[0, 0, 0], true, [100, 100, 100]],
    [[1, 2, 4], false, [25, 50, 100]],
    [[1, 2, 4], true, [75, 50, 0]],
  ] as [number[], boolean, number[]][])('DefaultNormalizeScore(%p, reverse %p)', (raw, reverse, want) => {
    expect(defaultNormalize(raw, reverse)).toEqual(want);
  });

  test.each([
    [
      [0, 0],
      [100, 100],
    ],
    [
      [2, 4, 6],
      [100, 66, 33],
    ],
    [
      [3, undefined],
      [100, 0],
    ],
  ] as [(number | undefined)[], number[]][])('PodTopologySpread NormalizeScore(%p)', (raw, want) => {
    expect(normalizeSpread(raw)).toEqual(want);
  });
});

describe('the weighted total', () => {
  const score = (p: ReturnType<typeof pod>, ns: [string, NodeOpts][]) =>
    scoreNodes(
      p,
      ns.map(([name, o]) => node(name, o)),
      undefined,
    );

  test('an untolerated PreferNoSchedule taint loses TaintToleration (weight 3)', () => {
    const [plain, tainted] = score(pod('p'), [
      ['a', {}],
      ['b', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }],
    ]);
    expect((plain as number) - (tainted as number)).toBe(300);
  });

  test('preferred node affinity adds its normalised weight times 2', () => {
    const p = pod('p', {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
          ],
        },
      },
    });
    const [ssd, hdd] = score(p, [
      ['a', { labels: { disk: 'ssd' } }],
      ['b', { labels: { disk: 'hdd' } }],
    ]);
    expect((ssd as number) - (hdd as number)).toBe(200);
  });

  test('the less allocated node scores higher', () => {
    const p = pod('p', requests({ cpu: '1', memory: '1Gi' }));
    const [small, big] = score(p, [
      ['a', { cpu: '2', memory: '4Gi' }],
      ['b', { cpu: '8', memory: '16Gi' }],
    ]);
    expect(big as number).toBeGreaterThan(small as number);
  });
});

test('selectHost picks among the best only, each of them sometimes', () => {
  const picked = new Set<number>();
  for (let i = 0; i < 200; i++) picked.add(selectHost([5, 9, 3, 9, 9]));
  expect([...picked].sort()).toEqual([1, 3, 4]);
});
