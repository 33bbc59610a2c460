import { describe, expect, test } from 'bun:test';
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import { cluster, nodeObj, pod } from './fixtures.test-helpers';
import type { NodeInfo, PodInfo } from './node-info';
import { AffinityFilter, normalizeSpread, SpreadFilter, SpreadScore } from './topology';

const ZONE = 'topology.kubernetes.io/zone';
const app = (name: string, labels: Record<string, string>, spec: Record<string, unknown> = {}) => pod(name, spec, { labels });

const spreadPod = (extra: Record<string, unknown> = {}) =>
  app(
    'new',
    { app: 'web' },
    {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra },
      ],
    },
  );

/** Zones a, b, c with one node each (n-a ...), plus `bound` pods per node. */
const zones = (bound: Record<string, PodInfo[]>, more: [string, Record<string, string>][] = []) =>
  cluster(
    [
      ['n-a', { labels: { [ZONE]: 'a' } }],
      ['n-b', { labels: { [ZONE]: 'b' } }],
      ['n-c', { labels: { [ZONE]: 'c' } }],
      ...more.map(([n, labels]) => [n, { labels }] as [string, { labels: Record<string, string> }]),
    ],
    bound,
  );

const verdicts = (f: { filter(n: NodeInfo): { reasons: string[] } | undefined } | undefined, c: ReturnType<typeof cluster>) =>
  Object.fromEntries(c.order.map((n) => [n, f?.filter(c.nodes.get(n) as NodeInfo)?.reasons[0] ?? 'ok']));

describe('PodTopologySpread filter', () => {
  const web = (n: string) => app(n, { app: 'web' });
  test('maxSkew 1: only the emptiest zones pass', () => {
    const c = zones({ 'n-a': [web('w1')], 'n-b': [web('w2')] });
    const skewed = "node(s) didn't match pod topology spread constraints";
    expect(verdicts(SpreadFilter.prepare(spreadPod(), c), c)).toEqual({ 'n-a': skewed, 'n-b': skewed, 'n-c': 'ok' });
  });

  test('pods of other apps, namespaces or being deleted do not count', () => {
    const c = zones({
      'n-a': [app('x', { app: 'db' }), pod('y', {}, { labels: { app: 'web' }, namespace: 'other' })],
      'n-b': [pod('z', {}, { labels: { app: 'web' }, deletionTimestamp: '2026-01-01T00:00:00Z' })],
    });
    expect(verdicts(SpreadFilter.prepare(spreadPod(), c), c)).toEqual({ 'n-a': 'ok', 'n-b': 'ok', 'n-c': 'ok' });
  });

  test('a node without the key is unresolvable; minDomains above the domains makes the minimum 0', () => {
    const c = zones({ 'n-a': [web('w1')], 'n-b': [web('w2')], 'n-c': [web('w3')] }, [['bare', {}]]);
    const f = SpreadFilter.prepare(spreadPod({ minDomains: 4 }), c);
    const v = verdicts(f, c);
    expect(v.bare).toBe("node(s) didn't match pod topology spread constraints (missing required label)");
    expect(v['n-a']).toBe("node(s) didn't match pod topology spread constraints");
    expect(verdicts(SpreadFilter.prepare(spreadPod(), c), c)['n-a']).toBe('ok');
  });

  test('no constraints: nothing to prepare', () => {
    expect(SpreadFilter.prepare(pod('p'), zones({}))).toBeUndefined();
  });
});

describe('InterPodAffinity (required)', () => {
  const term = (labels: Record<string, string>, topologyKey = ZONE) => ({ labelSelector: { matchLabels: labels }, topologyKey });
  const withAffinity = (kind: 'podAffinity' | 'podAntiAffinity', labels: Record<string, string>, own: Record<string, string> = {}) =>
    app('new', own, { affinity: { [kind]: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] } } });

  test('affinity: only zones with a matching pod', () => {
    const c = zones({ 'n-b': [app('db', { app: 'db' })] });
    const no = "node(s) didn't match pod affinity rules";
    expect(verdicts(AffinityFilter.prepare(withAffinity('podAffinity', { app: 'db' }), c), c)).toEqual({
      'n-a': no,
      'n-b': 'ok',
      'n-c': no,
    });
  });

  test('affinity: the first pod of a group matching its own term goes anywhere', () => {
    const c = zones({});
    const f = AffinityFilter.prepare(withAffinity('podAffinity', { app: 'web' }, { app: 'web' }), c);
    expect(verdicts(f, c)).toEqual({ 'n-a': 'ok', 'n-b': 'ok', 'n-c': 'ok' });
  });

  test('anti-affinity: not in a zone with a matching pod', () => {
    const c = zones({ 'n-a': [app('w', { app: 'web' })] });
    const f = AffinityFilter.prepare(withAffinity('podAntiAffinity', { app: 'web' }), c);
    expect(verdicts(f, c)).toEqual({ 'n-a': "node(s) didn't match pod anti-affinity rules", 'n-b': 'ok', 'n-c': 'ok' });
  });

  test("existing pods' anti-affinity keeps matching pods out of their zone", () => {
    const loner = app(
      'loner',
      {},
      { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' })] } } },
    );
    const c = zones({ 'n-c': [loner] });
    const f = AffinityFilter.prepare(app('new', { app: 'web' }), c);
    expect(verdicts(f, c)).toEqual({ 'n-a': 'ok', 'n-b': 'ok', 'n-c': "node(s) didn't satisfy existing pods anti-affinity rules" });
    expect(AffinityFilter.prepare(app('new', { app: 'db' }), c)?.filter(c.nodes.get('n-c') as NodeInfo)).toBeUndefined();
  });
});

describe('PodTopologySpread score and the system default constraints', () => {
  const webSelector = () => selectorMatcher({ matchLabels: { app: 'web' } });
  const web = (n: string) => app(n, { app: 'web' });
  const scores = (p: PodInfo, c: ReturnType<typeof cluster>, selector = webSelector) => {
    const feasible = c.order.map((n) => c.nodes.get(n) as NodeInfo);
    const s = SpreadScore.prepare(p, c, feasible, selector);
    return s && feasible.map((n) => s.score(n));
  };
  const hosts = (bound: Record<string, PodInfo[]>) =>
    cluster(
      [
        ['n-a', {}],
        ['n-b', {}],
        ['n-c', {}],
      ],
      bound,
    );

  test('hostname only (nodes without zones): maxSkew 3, weight log(3 nodes + 2); the zone default adds nothing', () => {
    const c = hosts({ 'n-a': [web('w1'), web('w2')], 'n-b': [web('w3'), app('x', { app: 'db' })] });
    // 2 * ln 5 + 2 = 5.2, ln 5 + 2 = 3.6, 0 + 2.
    const raw = scores(app('new', { app: 'web' }), c);
    expect(raw).toEqual([5, 4, 2]);
    expect(normalizeSpread(raw ?? [])).toEqual([40, 60, 100]);
  });

  test('a default selector with an anchor label counts the pods found by it: the same scores as walking the nodes', () => {
    const anchored = () => ({ ...(webSelector() as SelectorMatcher), key: 'web', anchor: ['app', 'web'] as const });
    const other = (n: string) => pod(n, {}, { labels: { app: 'web' }, namespace: 'other' });
    const c = zones({ 'n-a': [web('w1'), web('w2'), other('o1')], 'n-b': [web('w3'), app('x', { app: 'db' })], 'n-c': [other('o2')] }, [
      ['n-a2', { [ZONE]: 'a' }],
    ]);
    c.addPod({ ...web('w4'), nodeName: 'n-a2' });
    const feasible = ['n-a', 'n-b', 'n-c'].map((n) => c.nodes.get(n) as NodeInfo);
    const both = () => {
      const plain = SpreadScore.prepare(app('new', { app: 'web' }), c, feasible, webSelector);
      const byLabel = SpreadScore.prepare(app('new', { app: 'web' }), c, feasible, anchored);
      const all = [...feasible, c.nodes.get('n-a2') as NodeInfo];
      expect(all.map((n) => byLabel?.score(n))).toEqual(all.map((n) => plain?.score(n)));
      return all.map((n) => byLabel?.score(n));
    };
    const before = both();
    // The index follows the cache: a pod gone, a pod moved.
    c.removePod(web('w1').key);
    c.addPod({ ...web('w3'), nodeName: 'n-c' });
    const moved = both();
    expect(moved).not.toEqual(before);
    // The kept zone counts follow the nodes: one moved to another zone, then one gone.
    c.setNode(nodeObj('n-a2', { labels: { [ZONE]: 'b' } }));
    const rezoned = both();
    expect(rezoned).not.toEqual(moved);
    c.removeNode('n-a2');
    expect(both()).not.toEqual(rezoned);
  });

  test('with zones: the zone constraint (maxSkew 5) counts the pods of the zone over every node', () => {
    const c = zones({ 'n-a': [web('w1'), web('w2')], 'n-b': [web('w3')] }, [['n-a2', { [ZONE]: 'a' }]]);
    const feasible = ['n-a', 'n-b', 'n-c'].map((n) => c.nodes.get(n) as NodeInfo);
    const s = SpreadScore.prepare(app('new', { app: 'web' }), c, feasible, webSelector);
    // n-a: host 2*ln5+2, zone 2*ln5+4 → 12; n-b: 3.6 + 5.6 → 9; n-c: 2 + 4 → 6; n-a2 (not feasible, zone a): 2 + 7.2 → 9.
    expect(feasible.map((n) => s?.score(n))).toEqual([12, 9, 6]);
    expect(s?.score(c.nodes.get('n-a2') as NodeInfo)).toBe(9);
  });

  test('no default selector (no Service or controller selects the pod): no score', () => {
    expect(scores(app('new', { app: 'web' }), hosts({}), () => undefined)).toBeUndefined();
  });

  test("a pod's own constraints replace the defaults, even DoNotSchedule ones only", () => {
    const dns = app(
      'new',
      { app: 'web' },
      {
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
        ],
      },
    );
    expect(scores(dns, hosts({}))).toBeUndefined();
    // Its own ScheduleAnyway constraint on zones: a node without the key is ignored (scores 0 after normalising).
    const own = app(
      'new',
      { app: 'web' },
      {
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } },
        ],
      },
    );
    const c = zones({ 'n-a': [web('w1')] }, [['bare', {}]]);
    const raw = scores(own, c);
    expect(raw).toEqual([2, 0, 0, undefined]);
    expect(normalizeSpread(raw ?? [])).toEqual([0, 100, 100, 0]);
  });
});
