import { describe, expect, test } from 'bun:test';
import { nodeAffinity, nodePorts, nodeResourcesFit, nodeUnschedulable, runNodeFilters, taintToleration, tolerates } from './filters';
import { type NodeOpts, node, nodeObj, pod, requests } from './fixtures.test-helpers';
import { podRequests } from './resources';

describe('pod requests (resourcehelper.PodRequests)', () => {
  test.each([
    ['one container', requests({ cpu: '500m', memory: '1Gi' }), 500, 1024 ** 3],
    ['containers add up', requests({ cpu: '500m' }, { cpu: '1' }), 1500, 0],
    [
      'an init container larger than the sum wins',
      { ...requests({ cpu: '500m' }), initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '2' } } }] },
      2000,
      0,
    ],
    [
      'a sidecar adds to the containers and to later init containers',
      {
        ...requests({ cpu: '500m' }),
        initContainers: [
          { name: 's', image: 'i', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
          { name: 'i', image: 'i', resources: { requests: { cpu: '600m' } } },
        ],
      },
      800,
      0,
    ],
    ['overhead is added', { ...requests({ cpu: '100m' }), overhead: { cpu: '250m' } }, 350, 0],
  ] as [string, Record<string, unknown>, number, number][])('%s', (_, spec, milliCPU, memory) => {
    const r = podRequests(spec);
    expect(r.milliCPU).toBe(milliCPU);
    expect(r.memory).toBe(memory);
  });

  test('non-zero requests default unset cpu and memory to 100m and 200Mi', () => {
    const r = podRequests(requests({ cpu: '1' }, {}), true);
    expect(r.milliCPU).toBe(1100);
    expect(r.memory).toBe(2 * 200 * 1024 * 1024);
  });
});

describe('tolerations (TolerationsTolerateTaint)', () => {
  const taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
  test.each([
    [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, true],
    [{ key: 'k', value: 'v' }, true],
    [{ key: 'k', value: 'w' }, false],
    [{ key: 'k', operator: 'Exists' }, true],
    [{ operator: 'Exists' }, true],
    [{ key: 'other', operator: 'Exists' }, false],
    [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, false],
  ] as [Record<string, string>, boolean][])('%p tolerates k=v:NoSchedule: %p', (t, want) => {
    expect(tolerates(t, taint)).toBe(want);
  });
});

type Case = [string, Record<string, unknown>, NodeOpts, string | undefined];

const reasonOf = (f: typeof runNodeFilters, spec: Record<string, unknown>, n: NodeOpts) =>
  f(pod('p', spec), node('n', n))?.reasons.join(', ');

describe('NodeResourcesFit', () => {
  test.each([
    ['fits', requests({ cpu: '1', memory: '1Gi' }), {}, undefined],
    ['cpu short', requests({ cpu: '5' }), {}, 'Insufficient cpu'],
    ['cpu and memory short', requests({ cpu: '5', memory: '9Gi' }), {}, 'Insufficient cpu, Insufficient memory'],
    ['extended resource absent', requests({ 'example.com/gpu': '1' }), {}, 'Insufficient example.com/gpu'],
    ['extended resource present', requests({ 'example.com/gpu': '1' }), { extra: { 'example.com/gpu': '2' } }, undefined],
    ['no requests fit anywhere with room for a pod', {}, { cpu: '0' }, undefined],
    ['no room for a pod', {}, { pods: '0' }, 'Too many pods'],
  ] as Case[])('%s', (_, spec, n, want) => {
    expect(reasonOf(nodeResourcesFit, spec, n)).toBe(want);
  });

  test('counts the pods already on the node', () => {
    const n = node('n', { cpu: '1' }, [pod('a', requests({ cpu: '600m' }))]);
    expect(nodeResourcesFit(pod('p', requests({ cpu: '500m' })), n)?.reasons).toEqual(['Insufficient cpu']);
    expect(nodeResourcesFit(pod('p', requests({ cpu: '400m' })), n)).toBeUndefined();
  });
});

describe('NodeUnschedulable, TaintToleration, NodeAffinity', () => {
  const cases: [string, typeof runNodeFilters, Record<string, unknown>, NodeOpts, string | undefined][] = [
    ['cordoned', nodeUnschedulable, {}, { unschedulable: true }, 'node(s) were unschedulable'],
    [
      'cordoned, tolerated',
      nodeUnschedulable,
      { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] },
      { unschedulable: true },
      undefined,
    ],
    [
      'NoSchedule taint',
      taintToleration,
      {},
      { taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }] },
      'node(s) had untolerated taint {a: b}',
    ],
    [
      'NoExecute taint without value',
      taintToleration,
      {},
      { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] },
      'node(s) had untolerated taint {node.kubernetes.io/unreachable: }',
    ],
    ['PreferNoSchedule does not filter', taintToleration, {}, { taints: [{ key: 'a', effect: 'PreferNoSchedule' }] }, undefined],
    ['nodeSelector matches', nodeAffinity, { nodeSelector: { disk: 'ssd' } }, { labels: { disk: 'ssd' } }, undefined],
    ['nodeSelector does not', nodeAffinity, { nodeSelector: { disk: 'ssd' } }, {}, "node(s) didn't match Pod's node affinity/selector"],
    ...(
      [
        [{ key: 'disk', operator: 'In', values: ['ssd', 'nvme'] }, true],
        [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }, false],
        [{ key: 'disk', operator: 'Exists' }, true],
        [{ key: 'disk', operator: 'DoesNotExist' }, false],
        [{ key: 'cores', operator: 'Gt', values: ['8'] }, true],
        [{ key: 'cores', operator: 'Lt', values: ['8'] }, false],
      ] as [Record<string, unknown>, boolean][]
    ).map(
      ([expr, ok]) =>
        [
          `required affinity ${expr.operator}`,
          nodeAffinity,
          {
            affinity: {
              nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [expr] }] } },
            },
          },
          { labels: { disk: 'ssd', cores: '16' } },
          ok ? undefined : "node(s) didn't match Pod's node affinity/selector",
        ] as [string, typeof runNodeFilters, Record<string, unknown>, NodeOpts, string | undefined],
    ),
    [
      'matchFields on the name',
      nodeAffinity,
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] }],
            },
          },
        },
      },
      {},
      undefined,
    ],
    [
      'an empty term matches nothing',
      nodeAffinity,
      { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } } },
      {},
      "node(s) didn't match Pod's node affinity/selector",
    ],
  ];
  test.each(cases)('%s', (_, f, spec, n, want) => {
    expect(reasonOf(f, spec, n)).toBe(want);
  });
});

describe('NodePorts', () => {
  const withPort = (hostPort: number, hostIP?: string, protocol?: string) => ({
    containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort, hostIP, protocol }] }],
  });
  test.each([
    ['same port, any IP', withPort(8080), withPort(8080), false],
    ['other port', withPort(8080), withPort(8081), true],
    ['same port, other protocol', withPort(8080), withPort(8080, undefined, 'UDP'), true],
    ['same port, two specific IPs', withPort(8080, '10.0.0.1'), withPort(8080, '10.0.0.2'), true],
    ['same port, a specific IP against any', withPort(8080, '10.0.0.1'), withPort(8080), false],
  ] as [string, Record<string, unknown>, Record<string, unknown>, boolean][])('%s', (_, used, wanted, free) => {
    const n = node('n', {}, [pod('a', used)]);
    expect(nodePorts(pod('p', wanted), n)?.reasons[0]).toBe(
      free ? undefined : "node(s) didn't have free ports for the requested pod ports",
    );
  });
});

describe('the fast path of runNodeFilters agrees with NodeResourcesFit', () => {
  const full = () => node('n', { cpu: '1', memory: '1Gi', pods: '2' }, [pod('a', requests({ cpu: '600m', memory: '512Mi' }))]);
  test.each([
    ['exactly the room left', requests({ cpu: '400m', memory: '512Mi' }), undefined],
    ['1m too much', requests({ cpu: '401m' }), 'Insufficient cpu'],
    ['1 byte too much', requests({ memory: '536870913' }), 'Insufficient memory'],
    ['no requests', {}, undefined],
    ['ephemeral storage', requests({ 'ephemeral-storage': '1' }), 'Insufficient ephemeral-storage'],
  ] as [string, Record<string, unknown>, string | undefined][])('%s', (_, spec, want) => {
    const p = pod('p', spec);
    expect(runNodeFilters(p, full())?.reasons.join(', ')).toBe(want);
    expect(nodeResourcesFit(p, full())?.reasons.join(', ')).toBe(want);
  });

  test('a node overcommitted after its allocatable shrank: requests fail, no requests pass', () => {
    const n = full();
    n.setNode(nodeObj('n', { cpu: '500m', memory: '1Gi', pods: '2' }));
    expect(runNodeFilters(pod('p', requests({ cpu: '1m' })), n)?.reasons).toEqual(['Insufficient cpu']);
    expect(runNodeFilters(pod('p', requests({ memory: '1' })), n)?.reasons).toEqual(['Insufficient cpu']);
    expect(runNodeFilters(pod('p'), n)).toBeUndefined();
  });
});
