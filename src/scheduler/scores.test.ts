import { describe, expect, test } from 'bun:test';
import { AffinityScore, normalizeAffinity } from './affinity-score';
import { cluster, type NodeOpts, node, pod, requests } from './fixtures.test-helpers';
import type { NodeInfo, PodInfo } from './node-info';
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

describe('InterPodAffinity score (preferred terms, both ways)', () => {
  const ZONE = 'topology.kubernetes.io/zone';
  const term = (labels: Record<string, string>) => ({ labelSelector: { matchLabels: labels }, topologyKey: ZONE });
  const preferred = (weight: number, labels: Record<string, string>) => [{ weight, podAffinityTerm: term(labels) }];
  const app = (name: string, labels: Record<string, string>, affinity?: Record<string, unknown>, namespace = 'default') =>
    pod(name, affinity ? { affinity } : {}, { labels, namespace });
  const zones = (bound: Record<string, PodInfo[]>) =>
    cluster(
      [
        ['n-a', { labels: { [ZONE]: 'a' } }],
        ['n-b', { labels: { [ZONE]: 'b' } }],
        ['n-c', { labels: { [ZONE]: 'c' } }],
      ],
      bound,
    );
  const normalized = (p: PodInfo, c: ReturnType<typeof zones>) => {
    const s = AffinityScore.prepare(p, c);
    return s ? normalizeAffinity(c.order.map((n) => s.score(c.nodes.get(n) as NodeInfo))) : undefined;
  };

  test.each([
    [
      'own preferred affinity: the zone of a matching pod',
      { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(10, { app: 'db' }) } },
      {},
      [0, 100, 0],
    ],
    [
      'own affinity +10 at b, anti-affinity -5 at a: normalised over [-5, 10]',
      {
        podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(10, { app: 'db' }) },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(5, { app: 'web' }) },
      },
      {},
      [0, 100, 33],
    ],
    ["an existing pod's preferred affinity for the incoming pod (weight 7 at c)", undefined, { app: 'new' }, [0, 0, 100]],
  ] as [string, Record<string, unknown> | undefined, Record<string, string>, number[]][])('%s', (_, affinity, labels, want) => {
    const fan = app(
      'fan',
      { app: 'fan' },
      { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(7, { app: 'new' }) } },
    );
    const c = zones({ 'n-a': [app('w', { app: 'web' })], 'n-b': [app('d', { app: 'db' })], 'n-c': labels.app === 'new' ? [fan] : [] });
    expect(normalized(app('new', labels, affinity), c)).toEqual(want);
  });

  test("an existing pod's required affinity counts hardPodAffinityWeight (1); its preferred anti-affinity subtracts", () => {
    const needs = app('needs', {}, { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'new' })] } });
    const c = zones({ 'n-b': [needs] });
    const s = AffinityScore.prepare(app('new', { app: 'new' }), c);
    expect(c.order.map((n) => s?.score(c.nodes.get(n) as NodeInfo))).toEqual([0, 1, 0]);
    const avoids = app(
      'avoids',
      {},
      { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(3, { app: 'new' }) } },
    );
    const c2 = zones({ 'n-a': [avoids] });
    expect(normalized(app('new', { app: 'new' }), c2)).toEqual([0, 100, 100]);
  });

  test('no term matches anywhere, or only pods of another namespace: no score', () => {
    const affinity = { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(10, { app: 'db' }) } };
    expect(normalized(app('new', {}, affinity), zones({}))).toBeUndefined();
    expect(normalized(app('new', {}, affinity), zones({ 'n-b': [app('d', { app: 'db' }, undefined, 'other')] }))).toBeUndefined();
    expect(normalized(app('new', {}), zones({ 'n-b': [app('d', { app: 'db' })] }))).toBeUndefined();
  });

  test('in the weighted total: weight 2', () => {
    const affinity = { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred(10, { app: 'db' }) } };
    const c = zones({ 'n-b': [app('d', { app: 'db' })] });
    const p = app('new', {}, affinity);
    const nodes = c.order.map((n) => c.nodes.get(n) as NodeInfo);
    const [a, b] = scoreNodes(p, nodes, { affinity: AffinityScore.prepare(p, c) });
    const [a0, b0] = scoreNodes(p, nodes);
    expect((b as number) - (a as number) - ((b0 as number) - (a0 as number))).toBe(200);
  });

  test.each([
    [
      [0, 0],
      [0, 0],
    ],
    [
      [-5, 10, 0],
      [0, 100, 33],
    ],
    [
      [3, 6],
      [50, 100],
    ],
    [
      [-4, -2],
      [0, 50],
    ],
  ] as [number[], number[]][])('NormalizeScore(%p)', (raw, want) => {
    expect(normalizeAffinity(raw)).toEqual(want);
  });
});
