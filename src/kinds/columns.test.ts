import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import {
  canonicalQuantity,
  columnsFor,
  formatLabelSelector,
  formatLabels,
  labelSelectorString,
  nodeRoles,
  nodeStatus,
  podSummary,
  resourceQuotaCells,
  serviceExternalIP,
  servicePorts,
} from './columns';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const ago = (sec: number) => new Date(NOW - sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function obj(extra: Record<string, unknown>, meta: Record<string, unknown> = {}): Obj {
  return { metadata: { name: 'x', namespace: 'default', creationTimestamp: ago(3600), ...meta }, ...extra };
}

/** The row cells (after Name) of a kind's columns for an object. */
function cells(kind: string, o: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columnsFor(kind)) out[c.name] = c.cell(o, NOW);
  return out;
}

const running = (name: string, restartCount = 0, extra: Record<string, unknown> = {}) => ({
  name,
  ready: true,
  restartCount,
  state: { running: { startedAt: ago(100) } },
  ...extra,
});

describe('pod status', () => {
  test('running pod: ready count, phase, restarts', () => {
    const pod = obj({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: { phase: 'Running', containerStatuses: [running('a'), { ...running('b'), ready: false }] },
    });
    expect(podSummary(pod, NOW)).toEqual({ ready: '1/2', status: 'Running', restarts: '0' });
  });

  test('pending pod without statuses prints the phase; no status at all prints ""', () => {
    expect(podSummary(obj({ spec: { containers: [{ name: 'a' }] }, status: { phase: 'Pending' } }), NOW)).toEqual({
      ready: '0/1',
      status: 'Pending',
      restarts: '0',
    });
    expect(podSummary(obj({ spec: { containers: [{ name: 'a' }] } }), NOW).status).toBe('');
  });

  test('status.reason wins over the phase; SchedulingGated condition wins over both', () => {
    const evicted = obj({ spec: { containers: [{ name: 'a' }] }, status: { phase: 'Failed', reason: 'Evicted' } });
    expect(podSummary(evicted, NOW).status).toBe('Evicted');
    const gated = obj({
      spec: { containers: [{ name: 'a' }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] },
    });
    expect(podSummary(gated, NOW).status).toBe('SchedulingGated');
  });

  test('container waiting reason, terminated reason, signal and exit code', () => {
    const base = { spec: { containers: [{ name: 'a' }] } };
    const withState = (state: Record<string, unknown>) =>
      podSummary(
        obj({ ...base, status: { phase: 'Running', containerStatuses: [{ name: 'a', ready: false, restartCount: 0, state }] } }),
        NOW,
      ).status;
    expect(withState({ waiting: { reason: 'CrashLoopBackOff' } })).toBe('CrashLoopBackOff');
    expect(withState({ waiting: { reason: 'ImagePullBackOff' } })).toBe('ImagePullBackOff');
    expect(withState({ terminated: { reason: 'OOMKilled', exitCode: 137 } })).toBe('OOMKilled');
    expect(withState({ terminated: { exitCode: 0, signal: 9 } })).toBe('Signal:9');
    expect(withState({ terminated: { exitCode: 2 } })).toBe('ExitCode:2');
    expect(withState({ waiting: {} })).toBe('Running');
  });

  test('the first container (statuses walked in reverse) decides the reason', () => {
    const pod = obj({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } },
          { name: 'b', restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
        ],
      },
    });
    expect(podSummary(pod, NOW).status).toBe('ErrImagePull');
  });

  test('Completed with a still running container: Running if Ready, NotReady if not', () => {
    const statuses = [running('a'), { name: 'b', restartCount: 0, state: { terminated: { reason: 'Completed', exitCode: 0 } } }];
    const spec = { containers: [{ name: 'a' }, { name: 'b' }] };
    // Statuses are walked last to first: b sets Completed, then a is running and ready.
    const notReady = obj({ spec, status: { phase: 'Running', containerStatuses: statuses } });
    expect(podSummary(notReady, NOW)).toEqual({ ready: '1/2', status: 'NotReady', restarts: '0' });
    const ready = obj({ spec, status: { phase: 'Running', containerStatuses: statuses, conditions: [{ type: 'Ready', status: 'True' }] } });
    expect(podSummary(ready, NOW).status).toBe('Running');
  });

  test('init containers: progress, waiting reason, failure reason, exit codes', () => {
    const spec = { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] };
    const st = (initContainerStatuses: unknown[]) => podSummary(obj({ spec, status: { phase: 'Pending', initContainerStatuses } }), NOW);
    const done = { name: 'i1', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    expect(st([done, { name: 'i2', restartCount: 0, state: { running: {} } }]).status).toBe('Init:1/2');
    expect(st([{ name: 'i1', restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }]).status).toBe('Init:0/2');
    expect(st([done, { name: 'i2', restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } }]).status).toBe(
      'Init:CrashLoopBackOff',
    );
    expect(st([{ name: 'i1', restartCount: 2, state: { terminated: { exitCode: 1, reason: 'Error' } } }])).toEqual({
      ready: '0/1',
      status: 'Init:Error',
      restarts: '2',
    });
    expect(st([{ name: 'i1', restartCount: 0, state: { terminated: { exitCode: 3 } } }]).status).toBe('Init:ExitCode:3');
    expect(st([{ name: 'i1', restartCount: 0, state: { terminated: { exitCode: 3, signal: 15 } } }]).status).toBe('Init:Signal:15');
    // All init containers done: the main containers decide.
    const allDone = [done, { ...done, name: 'i2' }];
    expect(
      podSummary(obj({ spec, status: { phase: 'Running', initContainerStatuses: allDone, containerStatuses: [running('a')] } }), NOW)
        .status,
    ).toBe('Running');
  });

  test('sidecar (restartable) init containers count towards ready and total', () => {
    const pod = obj({
      spec: { initContainers: [{ name: 'side', restartPolicy: 'Always' }], containers: [{ name: 'a' }] },
      status: {
        phase: 'Running',
        initContainerStatuses: [{ ...running('side', 1), started: true }],
        containerStatuses: [running('a', 2)],
        conditions: [{ type: 'Initialized', status: 'True' }],
      },
    });
    expect(podSummary(pod, NOW)).toEqual({ ready: '2/2', status: 'Running', restarts: '3' });
  });

  test('restarts show the last termination time', () => {
    const pod = obj({
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          running('a', 2, { lastState: { terminated: { exitCode: 1, finishedAt: ago(3000) } } }),
          running('b', 1, { lastState: { terminated: { exitCode: 1, finishedAt: ago(300) } } }),
        ],
      },
    });
    expect(podSummary(pod, NOW).restarts).toBe('3 (5m ago)');
    // Restarts without a recorded termination time: just the count.
    const bare = obj({ spec: { containers: [{ name: 'a' }] }, status: { phase: 'Running', containerStatuses: [running('a', 4)] } });
    expect(podSummary(bare, NOW).restarts).toBe('4');
  });

  test('Terminating when deleted (unless terminal); Unknown when the node is lost', () => {
    const spec = { containers: [{ name: 'a' }] };
    const del = { deletionTimestamp: ago(1) };
    expect(podSummary(obj({ spec, status: { phase: 'Running', containerStatuses: [running('a')] } }, del), NOW).status).toBe('Terminating');
    expect(podSummary(obj({ spec, status: { phase: 'Succeeded' } }, del), NOW).status).toBe('Succeeded');
    expect(podSummary(obj({ spec, status: { phase: 'Running', reason: 'NodeLost' } }, del), NOW).status).toBe('Unknown');
  });

  test('wide cells: IP, node, nominated node, readiness gates', () => {
    const pod = obj({
      spec: { containers: [{ name: 'a' }], nodeName: 'n1', readinessGates: [{ conditionType: 'g1' }, { conditionType: 'g2' }] },
      status: { phase: 'Running', podIPs: [{ ip: '10.0.0.5' }], conditions: [{ type: 'g1', status: 'True' }] },
    });
    const c = cells('Pod', pod);
    expect(c).toMatchObject({ IP: '10.0.0.5', Node: 'n1', 'Nominated Node': '<none>', 'Readiness Gates': '1/2', Age: '60m' });
    expect(cells('Pod', obj({ spec: { containers: [] } }))).toMatchObject({
      IP: '<none>',
      Node: '<none>',
      'Readiness Gates': '<none>',
      Ready: '0/0',
    });
  });
});

describe('node', () => {
  test('roles from node-role labels and kubernetes.io/role, sorted and deduplicated', () => {
    const n = obj(
      {},
      {
        labels: {
          'node-role.kubernetes.io/worker': '',
          'node-role.kubernetes.io/control-plane': '',
          'node-role.kubernetes.io/': 'ignored',
          'kubernetes.io/role': 'worker',
          other: 'x',
        },
      },
    );
    expect(nodeRoles(n)).toEqual(['control-plane', 'worker']);
    expect(cells('Node', obj({})).Roles).toBe('<none>');
    expect(cells('Node', n).Roles).toBe('control-plane,worker');
  });

  test('status: Ready / NotReady / Unknown, SchedulingDisabled appended', () => {
    const withReady = (status: string, unschedulable = false) =>
      nodeStatus(
        obj({
          spec: { unschedulable },
          status: {
            conditions: [
              { type: 'MemoryPressure', status: 'True' },
              { type: 'Ready', status },
            ],
          },
        }),
      );
    expect(withReady('True')).toBe('Ready');
    expect(withReady('False')).toBe('NotReady');
    expect(withReady('Unknown')).toBe('NotReady');
    expect(withReady('True', true)).toBe('Ready,SchedulingDisabled');
    expect(nodeStatus(obj({}))).toBe('Unknown');
    expect(nodeStatus(obj({ spec: { unschedulable: true } }))).toBe('Unknown,SchedulingDisabled');
  });

  test('wide cells', () => {
    const n = obj({
      status: {
        addresses: [
          { type: 'Hostname', address: 'h' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.2' },
        ],
        nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Debian' },
      },
    });
    expect(cells('Node', n)).toMatchObject({
      Version: 'v1.32.0',
      'Internal-IP': '10.0.0.1',
      'External-IP': '<none>',
      'OS-Image': 'Debian',
      'Kernel-Version': '<unknown>',
      'Container-Runtime': '<unknown>',
    });
  });
});

describe('service', () => {
  test('ports', () => {
    const svc = (ports: unknown) => obj({ spec: { ports } });
    expect(servicePorts(svc([{ port: 80, protocol: 'TCP' }]))).toBe('80/TCP');
    expect(
      servicePorts(
        svc([
          { port: 80, protocol: 'TCP', nodePort: 30080 },
          { port: 53, protocol: 'UDP' },
        ]),
      ),
    ).toBe('80:30080/TCP,53/UDP');
    expect(servicePorts(svc(undefined))).toBe('<none>');
  });

  test('external IP per type', () => {
    const svc = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => serviceExternalIP(obj({ spec, status }));
    expect(svc({ type: 'ClusterIP' })).toBe('<none>');
    expect(svc({ type: 'ClusterIP', externalIPs: ['1.2.3.4', '5.6.7.8'] })).toBe('1.2.3.4,5.6.7.8');
    expect(svc({ type: 'NodePort' })).toBe('<none>');
    expect(svc({ type: 'LoadBalancer' })).toBe('<pending>');
    const lb = { loadBalancer: { ingress: [{ ip: '9.9.9.9' }, { hostname: 'a.example.com' }, { ip: '1.1.1.1' }] } };
    expect(svc({ type: 'LoadBalancer' }, lb)).toBe('1.1.1.1,9.9.9.9,a.example.com');
    expect(svc({ type: 'LoadBalancer', externalIPs: ['2.2.2.2'] }, lb)).toBe('1.1.1.1,9.9.9.9,a.example.com,2.2.2.2');
    expect(svc({ type: 'ExternalName', externalName: 'db.example.com' })).toBe('db.example.com');
    expect(svc({ type: 'Weird' })).toBe('<unknown>');
  });

  test('row', () => {
    const s = obj({
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ports: [{ port: 443, protocol: 'TCP' }],
        selector: { b: '2', a: '1' },
      },
    });
    expect(cells('Service', s)).toEqual({
      Type: 'ClusterIP',
      'Cluster-IP': '10.96.0.10',
      'External-IP': '<none>',
      'Port(s)': '443/TCP',
      Age: '60m',
      Selector: 'a=1,b=2',
    });
    expect(cells('Service', obj({ spec: { clusterIP: 'None' } }))).toMatchObject({
      'Cluster-IP': 'None',
      Selector: '<none>',
      'Port(s)': '<none>',
    });
  });
});

describe('selectors', () => {
  test('labels', () => {
    expect(formatLabels({})).toBe('<none>');
    expect(formatLabels(undefined)).toBe('<none>');
    expect(formatLabels({ z: '1', a: '' })).toBe('a=,z=1');
  });

  test('label selectors', () => {
    expect(formatLabelSelector(undefined)).toBe('<none>');
    expect(formatLabelSelector({})).toBe('<none>');
    expect(
      formatLabelSelector({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['front', 'back'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'beta', operator: 'Exists' },
        ],
      }),
    ).toBe('app=web,beta,!canary,env notin (dev),tier in (back,front)');
    expect(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toBe('<error>');
    expect(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] })).toBe('<error>');
    expect(labelSelectorString({})).toBe('');
  });

  test('deployment selector prints "" when empty and <invalid> when invalid; replica set <none>/<error>', () => {
    const d = (selector: unknown) => cells('Deployment', obj({ spec: { selector } })).Selector;
    expect(d({ matchLabels: { app: 'x' } })).toBe('app=x');
    expect(d({})).toBe('');
    expect(d({ matchExpressions: [{ key: 'a', operator: 'Nope' }] })).toBe('<invalid>');
    const r = (selector: unknown) => cells('ReplicaSet', obj({ spec: { selector } })).Selector;
    expect(r({})).toBe('<none>');
    expect(r({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toBe('<error>');
  });

  test('network policy pod selector', () => {
    expect(cells('NetworkPolicy', obj({ spec: { podSelector: {} } }))['Pod-Selector']).toBe('<none>');
    expect(cells('NetworkPolicy', obj({ spec: { podSelector: { matchLabels: { role: 'db' } } } }))['Pod-Selector']).toBe('role=db');
  });
});

describe('quantities and quota', () => {
  test('canonical quantities', () => {
    const cases: [unknown, string][] = [
      ['0', '0'],
      [undefined, '0'],
      ['1000m', '1'],
      ['1500m', '1500m'],
      ['0.5', '500m'],
      ['2000', '2k'],
      ['1500', '1500'],
      ['1Gi', '1Gi'],
      ['1.5Gi', '1536Mi'],
      ['1024Mi', '1Gi'],
      ['0.5Ki', '512'],
      ['1023', '1023'],
      ['100M', '100M'],
      ['1e3', '1e3'],
      ['1.5e3', '1500'],
      ['10', '10'],
      [4, '4'],
      ['0.0000000001', '1n'],
      ['-1500m', '-1500m'],
    ];
    for (const [input, want] of cases) expect([input, canonicalQuantity(input)]).toEqual([input, want]);
  });

  test('request and limit columns', () => {
    const rq = obj({
      status: {
        hard: { 'limits.cpu': '2', 'requests.cpu': '1000m', pods: '10', 'limits.memory': '2Gi' },
        used: { 'requests.cpu': '500m', pods: '3' },
      },
    });
    expect(resourceQuotaCells(rq)).toEqual({ request: 'pods: 3/10, requests.cpu: 500m/1', limit: 'limits.cpu: 0/2, limits.memory: 0/2Gi' });
    expect(columnsFor('ResourceQuota').map((c) => c.name)).toEqual(['Age', 'Request', 'Limit']);
  });
});

describe('other kinds', () => {
  test('columns and cells', () => {
    expect(cells('Namespace', obj({ status: { phase: 'Active' } }))).toEqual({ Status: 'Active', Age: '60m' });
    expect(cells('ConfigMap', obj({ data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }))).toEqual({ Data: 3, Age: '60m' });
    expect(cells('Secret', obj({ type: 'Opaque', data: { a: 'AA==' } }))).toEqual({ Type: 'Opaque', Data: 1, Age: '60m' });
    expect(cells('ServiceAccount', obj({ secrets: [{ name: 's' }] }))).toEqual({ Secrets: 1, Age: '60m' });
    expect(cells('Lease', obj({ spec: { holderIdentity: 'me' } }))).toEqual({ Holder: 'me', Age: '60m' });
    expect(cells('Lease', obj({ spec: {} }))).toEqual({ Holder: '', Age: '60m' });
    expect(columnsFor('LimitRange')).toEqual([]);
    expect(
      cells(
        'Deployment',
        obj({
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: 'web' } },
            template: {
              spec: {
                containers: [
                  { name: 'a', image: 'nginx' },
                  { name: 'b', image: 'busybox' },
                ],
              },
            },
          },
          status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
        }),
      ),
    ).toEqual({ Ready: '2/3', 'Up-to-date': 3, Available: 2, Age: '60m', Containers: 'a,b', Images: 'nginx,busybox', Selector: 'app=web' });
    expect(cells('ReplicaSet', obj({ spec: { template: { spec: { containers: [{ name: 'a', image: 'i' }] } } } }))).toMatchObject({
      Desired: 1,
      Current: 0,
      Ready: 0,
      Containers: 'a',
      Images: 'i',
    });
    expect(cells('PodDisruptionBudget', obj({ spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 2 } }))).toEqual({
      'Min Available': '50%',
      'Max Unavailable': 'N/A',
      'Allowed Disruptions': 2,
      Age: '60m',
    });
    expect(cells('PodDisruptionBudget', obj({ spec: { maxUnavailable: 1 } }))).toMatchObject({
      'Min Available': 'N/A',
      'Max Unavailable': '1',
    });
  });

  test('flow control', () => {
    expect(
      cells(
        'FlowSchema',
        obj({
          spec: {
            priorityLevelConfiguration: { name: 'global-default' },
            matchingPrecedence: 9900,
            distinguisherMethod: { type: 'ByUser' },
          },
          status: { conditions: [{ type: 'Dangling', status: 'False' }] },
        }),
      ),
    ).toEqual({ PriorityLevel: 'global-default', MatchingPrecedence: 9900, DistinguisherMethod: 'ByUser', Age: '60m', MissingPL: 'False' });
    expect(cells('FlowSchema', obj({ spec: { priorityLevelConfiguration: { name: 'p' } } }))).toMatchObject({
      MatchingPrecedence: 1000,
      DistinguisherMethod: '<none>',
      MissingPL: '?',
    });
    expect(
      cells(
        'PriorityLevelConfiguration',
        obj({
          spec: {
            type: 'Limited',
            limited: {
              nominalConcurrencyShares: 20,
              limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 50 } },
            },
          },
        }),
      ),
    ).toEqual({ Type: 'Limited', NominalConcurrencyShares: 20, Queues: 16, HandSize: 4, QueueLengthLimit: 50, Age: '60m' });
    expect(cells('PriorityLevelConfiguration', obj({ spec: { type: 'Exempt', exempt: {} } }))).toEqual({
      Type: 'Exempt',
      NominalConcurrencyShares: '<none>',
      Queues: '<none>',
      HandSize: '<none>',
      QueueLengthLimit: '<none>',
      Age: '60m',
    });
    expect(
      cells('PriorityLevelConfiguration', obj({ spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } } })),
    ).toMatchObject({
      NominalConcurrencyShares: 30,
      Queues: '<none>',
    });
  });

  test('admission policies', () => {
    expect(
      cells(
        'ValidatingAdmissionPolicy',
        obj({ spec: { validations: [{ expression: 'true' }], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } }),
      ),
    ).toEqual({
      Validations: 1,
      ParamKind: 'v1/ConfigMap',
      Age: '60m',
    });
    expect(cells('ValidatingAdmissionPolicy', obj({ spec: {} }))).toMatchObject({ Validations: 0, ParamKind: '<unset>' });
    const b = (paramRef: unknown) => cells('ValidatingAdmissionPolicyBinding', obj({ spec: { policyName: 'p', paramRef } }));
    expect(b(undefined)).toEqual({ PolicyName: 'p', ParamRef: '<unset>', Age: '60m' });
    expect(b({ name: 'cfg', namespace: 'ns' }).ParamRef).toBe('ns/cfg');
    expect(b({ name: 'cfg' }).ParamRef).toBe('*/cfg');
    expect(
      b({ selector: { matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] } }).ParamRef,
    ).toBe(
      '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
    );
  });

  test('events', () => {
    const ev = obj({
      involvedObject: { kind: 'Pod', name: 'web-1', fieldPath: 'spec.containers{a}' },
      type: 'Warning',
      reason: 'BackOff',
      message: '  Back-off restarting  \n',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: ago(600),
      lastTimestamp: ago(30),
      count: 5,
    });
    expect(cells('Event', ev)).toEqual({
      'Last Seen': '30s',
      Type: 'Warning',
      Reason: 'BackOff',
      Object: 'pod/web-1',
      Subobject: 'spec.containers{a}',
      Source: 'kubelet, node-1',
      Message: 'Back-off restarting',
      'First Seen': '10m',
      Count: 5,
      Name: 'x',
    });
    // New-style events: eventTime (micro precision), reporting controller, series.
    const ev2 = obj({
      involvedObject: { kind: 'Node' },
      eventTime: new Date(NOW - 90_000).toISOString().replace('Z', '123Z'),
      reportingComponent: 'sched',
      series: { count: 7, lastObservedTime: new Date(NOW - 5_000).toISOString().replace('Z', '456Z') },
    });
    expect(cells('Event', ev2)).toMatchObject({ 'Last Seen': '5s', 'First Seen': '90s', Count: 7, Object: 'node', Source: 'sched' });
    expect(cells('Event', obj({ involvedObject: {} }))).toMatchObject({ 'Last Seen': '<unknown>', 'First Seen': '<unknown>', Count: 1 });
  });

  test('column definitions', () => {
    const defs = (k: string) => columnsFor(k).map((c) => [c.name, c.type, c.priority]);
    expect(defs('Pod')).toEqual([
      ['Ready', 'string', 0],
      ['Status', 'string', 0],
      ['Restarts', 'string', 0],
      ['Age', 'string', 0],
      ['IP', 'string', 1],
      ['Node', 'string', 1],
      ['Nominated Node', 'string', 1],
      ['Readiness Gates', 'string', 1],
    ]);
    expect(
      defs('Event')
        .filter((d) => d[2] === 0)
        .map((d) => d[0]),
    ).toEqual(['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
    expect(columnsFor('Event').at(-1)).toMatchObject({ name: 'Name', format: 'name', priority: 1 });
    expect(defs('ReplicaSet').slice(0, 3)).toEqual([
      ['Desired', 'integer', 0],
      ['Current', 'integer', 0],
      ['Ready', 'integer', 0],
    ]);
  });
});
