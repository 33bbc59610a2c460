import { describe, expect, test } from 'bun:test';
import { type Budget, budgetOf } from './cluster-objects';
import { cluster, pod, requests } from './fixtures.test-helpers';
import { Algorithm, fitErrorMessage, numFeasibleNodesToFind, prepare } from './framework';
import type { PodInfo } from './node-info';
import { pickOne, preempt, splitByBudgets } from './preemption';

describe('percentageOfNodesToScore (numFeasibleNodesToFind)', () => {
  test.each([
    [3, 0, 3],
    [99, 0, 99],
    [100, 0, 100],
    [250, 0, 120], // 50 - 2 = 48%
    [1000, 0, 420], // 50 - 8 = 42%
    [5000, 0, 500], // 50 - 40 = 10%
    [6000, 0, 300], // 50 - 48 = 2% -> at least 5%
    [1000, 5, 100], // 5% = 50 -> at least 100
    [1000, 100, 1000],
  ])('%p nodes, percentage %p: %p', (n, pct, want) => {
    expect(numFeasibleNodesToFind(n, pct)).toBe(want);
  });
});

test('the FitError message: reasons counted and sorted, then the PostFilter message', () => {
  const s = (...reasons: string[]) => ({ plugin: 'NodeResourcesFit' as const, code: 'Unschedulable' as const, reasons });
  expect(
    fitErrorMessage(
      3,
      [
        s('Insufficient cpu'),
        s('node(s) had untolerated taint {node.kubernetes.io/unreachable: }'),
        s('node(s) had untolerated taint {node.kubernetes.io/unreachable: }'),
      ],
      'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    ),
  ).toBe(
    '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
  );
  expect(fitErrorMessage(2, [s('Insufficient cpu', 'Insufficient memory'), s('Insufficient cpu')])).toBe(
    '0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.',
  );
});

describe('Algorithm', () => {
  test('examines only the nodes it needs, round robin, and never overcommits with assumed pods', () => {
    const nodes = Array.from({ length: 1000 }, (_, i) => [`n${i}`, { cpu: '1' }] as [string, { cpu: string }]);
    const c = cluster(nodes);
    const a = new Algorithm(c);
    const first = a.schedule(pod('p0', requests({ cpu: '600m' })));
    expect(first).toMatchObject({ evaluated: 420, feasible: 420 });
    // 1,000 pods of 600m on 1,000 nodes of 1 cpu: exactly one per node.
    if (first.node) c.assume(pod('p0', requests({ cpu: '600m' })), first.node);
    for (let i = 1; i < 1000; i++) {
      const p = pod(`p${i}`, requests({ cpu: '600m' }));
      const r = a.schedule(p);
      expect(r.node).toBeDefined();
      if (r.node) c.assume(p, r.node);
    }
    for (const n of c.nodes.values()) expect(n.pods.size).toBe(1);
    const r = a.schedule(pod('extra', requests({ cpu: '600m' })));
    expect(r.node).toBeUndefined();
    if (r.node === undefined) expect(r.message).toBe('0/1000 nodes are available: 1000 Insufficient cpu.');
  });

  test('no nodes', () => {
    expect(new Algorithm(cluster([])).schedule(pod('p'))).toMatchObject({
      node: undefined,
      message: 'no nodes available to schedule pods',
    });
  });

  test('a nominated pod keeps the room from pods of lower priority', () => {
    const c = cluster([['n', { cpu: '1' }]]);
    const high = pod('high', { ...requests({ cpu: '800m' }), priority: 100 });
    c.nominate(high, 'n');
    const a = new Algorithm(c);
    expect(a.schedule(pod('low', { ...requests({ cpu: '800m' }), priority: 0 })).node).toBeUndefined();
    expect(a.schedule(pod('higher', { ...requests({ cpu: '800m' }), priority: 200 })).node).toBe('n');
    expect(a.schedule(high).node).toBe('n');
  });
});

describe('preemption', () => {
  const prio = (name: string, priority: number, cpu: string, start = 0): PodInfo => ({
    ...pod(name, { ...requests({ cpu }), priority }),
    startTime: start,
  });

  const attempt = (c: ReturnType<typeof cluster>, p: PodInfo, budgets: Budget[] = []) => {
    const r = new Algorithm(c).schedule(p);
    if (r.node !== undefined || !r.state) throw new Error('expected a failure');
    return preempt(
      p,
      r.statuses,
      r.state,
      c,
      () => 0,
      () => budgets,
    );
  };
  const labeled = (name: string, priority: number, cpu: string, labels: Record<string, string>, start = 0): PodInfo => ({
    ...prio(name, priority, cpu, start),
    labels,
  });
  const budget = (selector: unknown, disruptionsAllowed: number, disruptedPods: Record<string, string> = {}, namespace = 'default') =>
    budgetOf({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'b', namespace },
      spec: { selector },
      status: { disruptionsAllowed, disruptedPods },
    });

  test('the fewest, least important victims; more important ones are reprieved', () => {
    const c = cluster([['n', { cpu: '2' }]], {
      n: [prio('a', 10, '500m'), prio('b', 5, '500m'), prio('c', 1, '500m'), prio('d', 50, '500m')],
    });
    const out = attempt(c, prio('new', 100, '1'));
    expect(out.plan?.node).toBe('n');
    expect(out.plan?.victims.map((v) => v.name).sort()).toEqual(['b', 'c']);
  });

  test('the node whose most important victim is least important', () => {
    const c = cluster(
      [
        ['x', { cpu: '1' }],
        ['y', { cpu: '1' }],
      ],
      { x: [prio('x1', 50, '1')], y: [prio('y1', 10, '1')] },
    );
    expect(attempt(c, prio('new', 100, '1')).plan).toMatchObject({ node: 'y' });
  });

  test('pickOne: the latest start among the most important victims, the lowest highest priority', () => {
    const v = (n: string, priority: number, start: number) => prio(n, priority, '1', start);
    expect(
      pickOne([
        { node: 'a', victims: [v('1', 1, 0), v('2', 1, 0)], pdbViolations: 0 },
        { node: 'b', victims: [v('3', 1, 1), v('4', 1, 2)], pdbViolations: 0 },
      ])?.node,
    ).toBe('b');
    expect(
      pickOne([
        { node: 'a', victims: [v('1', 1, 0), v('2', 1, 0)], pdbViolations: 0 },
        { node: 'b', victims: [v('3', 2, 0)], pdbViolations: 0 },
      ])?.node,
    ).toBe('a');
    // Fewest budget violations comes first, before every priority criterion.
    expect(
      pickOne([
        { node: 'a', victims: [v('1', 1, 0)], pdbViolations: 1 },
        { node: 'b', victims: [v('3', 50, 0), v('4', 50, 0)], pdbViolations: 0 },
      ])?.node,
    ).toBe('b');
  });

  describe('PodDisruptionBudgets (filterPodsWithPDBViolation)', () => {
    const web = (n: string) => labeled(n, 0, '1', { app: 'web' });
    const names = (ps: PodInfo[]) => ps.map((q) => q.name);
    test.each([
      ['one disruption allowed: the second matching pod violates', [budget({ matchLabels: { app: 'web' } }, 1)], ['b'], ['a', 'c']],
      ['none allowed: every matching pod violates', [budget({ matchLabels: { app: 'web' } }, 0)], ['a', 'b'], ['c']],
      ['disruptedPods are already counted', [budget({ matchLabels: { app: 'web' } }, 0, { a: '2026-01-01T00:00:00Z' })], ['b'], ['a', 'c']],
      ['another namespace', [budget({ matchLabels: { app: 'web' } }, 0, {}, 'other')], [], ['a', 'b', 'c']],
      ['an empty selector matches nothing', [budget({}, 0)], [], ['a', 'b', 'c']],
      ['a nil selector matches nothing', [budget(undefined, 0)], [], ['a', 'b', 'c']],
    ] as [string, Budget[], string[], string[]][])('%s', (_, budgets, violating, nonViolating) => {
      const pods = [web('a'), web('b'), labeled('c', 0, '1', { app: 'db' })];
      const out = splitByBudgets(pods, budgets);
      expect(names(out.violating)).toEqual(violating);
      expect(names(out.nonViolating)).toEqual(nonViolating);
    });

    test('violating victims are reprieved first; the node with fewer violations wins', () => {
      // Node x: the victim is protected by a budget with no disruptions left; node y: an
      // unprotected victim of higher priority (worse on every other criterion).
      const c = cluster(
        [
          ['x', { cpu: '1' }],
          ['y', { cpu: '1' }],
        ],
        { x: [labeled('x1', 1, '1', { app: 'web' })], y: [labeled('y1', 50, '1', { app: 'db' })] },
      );
      const budgets = [budget({ matchLabels: { app: 'web' } }, 0)];
      expect(attempt(c, prio('new', 100, '1'), budgets).plan).toMatchObject({ node: 'y', pdbViolations: 0 });
      // Without the budget, the lower-priority victim on x is the choice.
      expect(attempt(c, prio('new', 100, '1')).plan).toMatchObject({ node: 'x', pdbViolations: 0 });
    });

    test('on one node, a protected pod is kept when an unprotected one makes room', () => {
      // 2 cpu: p (more important, protected) and q (unprotected); the new pod needs 1 cpu.
      const c = cluster([['n', { cpu: '2' }]], {
        n: [labeled('p', 10, '1', { app: 'web' }), labeled('q', 5, '1', { app: 'db' })],
      });
      const plan = attempt(c, prio('new', 100, '1'), [budget({ matchLabels: { app: 'db' } }, 0)]).plan;
      // The violating q is reprieved first (it fits beside), so p is the victim.
      expect(plan?.victims.map((v) => v.name)).toEqual(['p']);
      expect(plan?.pdbViolations).toBe(0);
      // Both protected with no disruptions left: q goes back first, p is the victim and counts.
      const both = attempt(c, prio('new', 100, '1'), [budget({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, 0)]).plan;
      expect(both?.victims.map((v) => v.name)).toEqual(['q']);
      expect(both?.pdbViolations).toBe(1);
    });
  });

  test('no lower-priority pods, unresolvable nodes, preemptionPolicy Never', () => {
    const c = cluster(
      [
        ['full', { cpu: '1' }],
        ['tainted', { taints: [{ key: 't', effect: 'NoSchedule' }] }],
      ],
      { full: [prio('same', 100, '1')] },
    );
    expect(attempt(c, prio('new', 100, '1')).message).toBe(
      '0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
    );
    const never = { ...prio('never', 1000, '1'), preemptionPolicy: 'Never' };
    expect(attempt(c, never).message).toBe('not eligible due to preemptionPolicy=Never.');
  });

  test('victims for anti-affinity: the removal of the matching pod is what makes room', () => {
    const host = { 'kubernetes.io/hostname': 'n' };
    const db = { ...pod('db', { priority: 0 }, { labels: { app: 'db' } }), startTime: 0 };
    const other = { ...pod('other', { priority: 0 }, { labels: { app: 'x' } }), startTime: 0 };
    const c = cluster([['n', { labels: host }]], { n: [db, other] });
    const p = pod('new', {
      priority: 10,
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' },
          ],
        },
      },
    });
    const out = attempt(c, p);
    expect(out.plan?.victims.map((v) => v.name)).toEqual(['db']);
  });

  test('a preemptor whose victims are still terminating on its nominated node waits (and keeps its nomination)', () => {
    const going = { ...prio('going', 0, '1'), deleting: true };
    const c = cluster([['n', { cpu: '1' }]], { n: [going] });
    const p = { ...prio('new', 100, '1'), nominatedNodeName: 'n' };
    expect(attempt(c, p)).toEqual({
      plan: undefined,
      message: 'not eligible due to a terminating pod on the nominated node.',
      eligible: false,
    });
  });

  test('the state the filters prepared is reused', () => {
    const c = cluster([['n', {}]]);
    expect(prepare(pod('p'), c)).toEqual({ spread: undefined, affinity: undefined });
  });
});
