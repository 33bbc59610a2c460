/**
 * The PodSpec rules of issue 35 as a table: each case changes a valid (defaulted) pod spec and
 * lists the causes the reference answers (field path and message, as Status causes print them).
 */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { validatePod, validatePodSpec, validatePodTemplateSpec } from './core-pod';
import { validateEphemeralContainersUpdate, validatePodResize } from './core-pod-subresources';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

const container = (x: Any = {}) => ({ name: 'app', image: 'nginx', imagePullPolicy: 'Always', terminationMessagePolicy: 'File', ...x });
const spec = (x: Any = {}) => ({
  containers: [container()],
  restartPolicy: 'Always',
  dnsPolicy: 'ClusterFirst',
  terminationGracePeriodSeconds: 30,
  ...x,
});
const withContainer = (x: Any, s: Any = {}) => spec({ containers: [container(x)], ...s });
const causes = (errs: { field: string; type: string; detail: string; badValue?: unknown }[]) =>
  errs.map((e) => [e.field, fieldErrorText(e as Parameters<typeof fieldErrorText>[0])]);
const run = (s: Any) => causes(validatePodSpec(s, 'spec', 'p'));

const CASES: [string, Any, string[][]][] = [
  ['valid', spec(), []],
  // ---- volumes
  [
    'two sources in one volume',
    spec({ volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] }),
    [['spec.volumes[0].hostPath', 'Forbidden: may not specify more than 1 volume type']],
  ],
  [
    'duplicate volume names',
    spec({
      volumes: [
        { name: 'v', emptyDir: {} },
        { name: 'v', emptyDir: {} },
      ],
    }),
    [['spec.volumes[1].name', 'Duplicate value: "v"']],
  ],
  ['volume without a name', spec({ volumes: [{ emptyDir: {} }] }), [['spec.volumes[0].name', 'Required value']]],
  [
    'hostPath without a path',
    spec({ volumes: [{ name: 'v', hostPath: { path: '' } }] }),
    [['spec.volumes[0].hostPath.path', 'Required value']],
  ],
  [
    'hostPath backsteps and type',
    spec({ volumes: [{ name: 'v', hostPath: { path: '/a/../b', type: 'Dir' } }] }),
    [
      ['spec.volumes[0].hostPath.path', `Invalid value: "/a/../b": must not contain '..'`],
      [
        'spec.volumes[0].hostPath.type',
        'Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
      ],
    ],
  ],
  [
    'emptyDir negative size',
    spec({ volumes: [{ name: 'v', emptyDir: { sizeLimit: '-1' } }] }),
    [['spec.volumes[0].emptyDir.sizeLimit', 'Forbidden: SizeLimit field must be a valid resource quantity']],
  ],
  [
    'configMap without name, bad mode, absolute item path',
    spec({ volumes: [{ name: 'v', configMap: { defaultMode: 1000, items: [{ key: 'k', path: '/abs' }] } }] }),
    [
      ['spec.volumes[0].configMap.name', 'Required value'],
      ['spec.volumes[0].configMap.defaultMode', 'Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive'],
      ['spec.volumes[0].configMap.items[0].path', 'Invalid value: "/abs": must be a relative path'],
    ],
  ],
  ['secret without secretName', spec({ volumes: [{ name: 'v', secret: {} }] }), [['spec.volumes[0].secret.secretName', 'Required value']]],
  [
    'pvc without claimName',
    spec({ volumes: [{ name: 'v', persistentVolumeClaim: {} }] }),
    [['spec.volumes[0].persistentVolumeClaim.claimName', 'Required value']],
  ],
  [
    'projected: two sources in one, duplicate paths',
    spec({
      serviceAccountName: 'sa',
      volumes: [
        {
          name: 'v',
          projected: {
            sources: [
              { configMap: { name: 'a', items: [{ key: 'k', path: 'p' }] }, secret: { name: 'b', items: [{ key: 'k', path: 'p' }] } },
            ],
          },
        },
      ],
    }),
    [
      ['spec.volumes[0].projected', 'Invalid value: "a": conflicting duplicate paths'],
      ['spec.volumes[0].projected.sources[0]', 'Forbidden: may not specify more than 1 volume type per source'],
    ],
  ],
  [
    'a mount of a missing volume, a repeated mount path',
    withContainer({
      volumeMounts: [
        { name: 'nope', mountPath: '/a' },
        { name: 'nope', mountPath: '/a' },
      ],
    }),
    [
      ['spec.containers[0].volumeMounts[0].name', 'Not found: "nope"'],
      ['spec.containers[0].volumeMounts[1].name', 'Not found: "nope"'],
      ['spec.containers[0].volumeMounts[1].mountPath', 'Invalid value: "/a": must be unique'],
    ],
  ],
  [
    'Bidirectional propagation needs a privileged container',
    withContainer(
      { volumeMounts: [{ name: 'v', mountPath: '/a', mountPropagation: 'Bidirectional' }] },
      { volumes: [{ name: 'v', emptyDir: {} }] },
    ),
    [
      [
        'spec.containers[0].volumeMounts.mountPropagation',
        'Forbidden: Bidirectional mount propagation is available only to privileged containers',
      ],
    ],
  ],
  // ---- probes
  [
    'probe without a handler',
    withContainer({ livenessProbe: { periodSeconds: 10, successThreshold: 1 } }),
    [['spec.containers[0].livenessProbe', 'Required value: must specify a handler type']],
  ],
  [
    'probe with two handlers',
    withContainer({ readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } }),
    [['spec.containers[0].readinessProbe.tcpSocket', 'Forbidden: may not specify more than 1 handler type']],
  ],
  [
    'negative period, liveness success threshold',
    withContainer({ livenessProbe: { exec: { command: ['true'] }, periodSeconds: -1, successThreshold: 2 } }),
    [
      ['spec.containers[0].livenessProbe.periodSeconds', 'Invalid value: -1: must be greater than or equal to 0'],
      ['spec.containers[0].livenessProbe.successThreshold', 'Invalid value: 2: must be 1'],
    ],
  ],
  [
    'probes on a plain init container',
    spec({ initContainers: [container({ name: 'init', startupProbe: { exec: { command: ['x'] } } })] }),
    [['spec.initContainers[0].startupProbe', 'Forbidden: may not be set for init containers without restartPolicy=Always']],
  ],
  // ---- security contexts
  [
    'runAsUser out of range',
    withContainer({ securityContext: { runAsUser: -1 } }),
    [['spec.containers[0].securityContext.runAsUser', 'Invalid value: -1: must be between 0 and 2147483647, inclusive']],
  ],
  [
    'seccomp Localhost without a profile',
    spec({ securityContext: { seccompProfile: { type: 'Localhost' } } }),
    [['spec.securityContext.seccompProfile.localhostProfile', 'Required value: must be set when seccomp type is Localhost']],
  ],
  [
    'bad sysctl name',
    spec({ securityContext: { sysctls: [{ name: 'Kernel.X', value: '1' }] } }),
    [
      [
        'spec.securityContext.sysctls[0].name',
        'Invalid value: "Kernel.X": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$',
      ],
    ],
  ],
  [
    'a linux pod with windows options',
    withContainer({ securityContext: { windowsOptions: { runAsUserName: 'u' } } }, { os: { name: 'linux' } }),
    [['spec.containers[0].securityContext.windowsOptions', 'Forbidden: windows options cannot be set for a linux pod']],
  ],
  [
    'a windows pod with linux settings',
    withContainer(
      { securityContext: { privileged: false } },
      { os: { name: 'windows' }, hostPID: true, securityContext: { runAsUser: 1 } },
    ),
    [
      ['spec.hostPID', 'Forbidden: cannot be set for a windows pod'],
      ['spec.securityContext.runAsUser', 'Forbidden: cannot be set for a windows pod'],
      ['spec.containers[0].securityContext.privileged', 'Forbidden: cannot be set for a windows pod'],
    ],
  ],
  // ---- affinity
  [
    'node affinity: no terms; bad operator; values with Exists',
    spec({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'k', operator: 'Like' },
                  { key: 'k', operator: 'Exists', values: ['v'] },
                ],
              },
            ],
          },
        },
      },
    }),
    [
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator',
        'Invalid value: "Like": not a valid selector operator',
      ],
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values',
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
  ],
  [
    'node affinity: In without values; empty terms',
    spec({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'In' }] }] },
        },
      },
    }),
    [
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    ],
  ],
  [
    'pod anti-affinity without a topology key; weight 0',
    spec({
      affinity: {
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, podAffinityTerm: { topologyKey: 'zone' } }] },
        podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { a: 'b' } }, topologyKey: '' }] },
      },
    }),
    [
      ['spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey', 'Required value: can not be empty'],
      [
        'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey',
        'Invalid value: "": name part must be non-empty',
      ],
      [
        'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey',
        `Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
      [
        'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
        'Invalid value: 0: must be in the range 1-100',
      ],
    ],
  ],
  // ---- tolerations
  [
    'toleration: Exists with a value; seconds without NoExecute; bad effect',
    spec({
      tolerations: [
        { key: 'k', operator: 'Exists', value: 'v' },
        { key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule', tolerationSeconds: 5 },
        { key: 'k', operator: 'Equal', effect: 'Never' },
      ],
    }),
    [
      ['spec.tolerations[0].operator', `Invalid value: "v": value must be empty when \`operator\` is 'Exists'`],
      ['spec.tolerations[1].effect', `Invalid value: "NoSchedule": effect must be 'NoExecute' when \`tolerationSeconds\` is set`],
      ['spec.tolerations[2].effect', 'Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
    ],
  ],
  [
    'toleration without key must be Exists',
    spec({ tolerations: [{ operator: 'Equal', value: 'v' }] }),
    [
      [
        'spec.tolerations[0].operator',
        'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ],
    ],
  ],
  // ---- topology spread
  [
    'topology spread: maxSkew 0, no key, bad action, repeated pair',
    spec({
      topologySpreadConstraints: [
        { maxSkew: 0, topologyKey: '', whenUnsatisfiable: 'Maybe' },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
      ],
    }),
    [
      ['spec.topologySpreadConstraints[0].maxSkew', 'Invalid value: 0: must be greater than zero'],
      ['spec.topologySpreadConstraints[0].topologyKey', 'Required value: can not be empty'],
      [
        'spec.topologySpreadConstraints[0].whenUnsatisfiable',
        'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
      ],
      ['spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}', 'Duplicate value: "{zone, DoNotSchedule}"'],
    ],
  ],
  // ---- ports, env, resources
  [
    'container port out of range; host port clash',
    spec({
      containers: [
        container({ ports: [{ containerPort: 0, protocol: 'TCP' }] }),
        container({
          name: 'b',
          ports: [
            { containerPort: 80, hostPort: 8080, protocol: 'TCP' },
            { containerPort: 81, hostPort: 8080, protocol: 'TCP' },
          ],
        }),
      ],
    }),
    [
      ['spec.containers[0].ports[0].containerPort', 'Required value'],
      ['spec.containers[1].ports[1].hostPort', 'Duplicate value: "TCP//8080"'],
    ],
  ],
  [
    'env: no name, name with =, valueFrom with two sources',
    withContainer({
      env: [
        { value: 'x' },
        { name: 'A=B' },
        { name: 'C', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' }, secretKeyRef: { name: 's', key: 'k' } } },
      ],
    }),
    [
      ['spec.containers[0].env[0].name', 'Required value'],
      [
        'spec.containers[0].env[1].name',
        `Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
      ],
      ['spec.containers[0].env[2].valueFrom', 'Invalid value: "": may not have more than one field specified at a time'],
    ],
  ],
  [
    'env fieldRef: unknown field; a pod field env cannot read',
    withContainer({
      env: [
        { name: 'A', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.bogus' } } },
        { name: 'B', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.restartPolicy' } } },
      ],
    }),
    [
      [
        'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath',
        'Invalid value: "spec.bogus": error converting fieldPath: field label not supported: spec.bogus',
      ],
      [
        'spec.containers[0].env[1].valueFrom.fieldRef.fieldPath',
        'Unsupported value: "spec.restartPolicy": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
      ],
    ],
  ],
  [
    'requests above limits',
    withContainer({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }),
    [['spec.containers[0].resources.requests', 'Invalid value: "2": must be less than or equal to cpu limit of 1']],
  ],
  [
    'a resource that is not a container resource',
    withContainer({ resources: { limits: { pods: '1' } } }),
    [['spec.containers[0].resources.limits[pods]', 'Invalid value: "pods": must be a standard resource for containers']],
  ],
];

describe('PodSpec rules', () => {
  test.each(CASES)('%s', (_, s, want) => {
    expect(run(s)).toEqual(want);
  });
});

const pod = (s: Any, meta: Any = {}): Obj => ({ metadata: { name: 'p', namespace: 'default', resourceVersion: '1', ...meta }, spec: s });

test('pod template annotations are validated as metadata annotations', () => {
  const errs = validatePodTemplateSpec({ metadata: { annotations: { 'bad key!': 'v' } }, spec: spec() }, 'spec.template');
  expect(errs.map((e) => e.field)).toEqual(['spec.template.annotations']);
});

describe('create-only rules', () => {
  test('ephemeral containers and a node name with scheduling gates are refused on create', () => {
    const s = spec({ nodeName: 'n1', schedulingGates: [{ name: 'g' }], ephemeralContainers: [{ ...container({ name: 'e' }) }] });
    expect(causes(validatePod(pod(s)))).toEqual([
      ['spec.ephemeralContainers', 'Forbidden: cannot be set on create'],
      ['spec.nodeName', 'Forbidden: cannot be set until all schedulingGates have been cleared'],
    ]);
  });
});

describe('pod annotations', () => {
  test.each([
    ['10', []],
    ['-3', []],
    ['+10', [['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]', 'Invalid value: "+10": must be a 32bit integer']]],
    ['007', [['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]', 'Invalid value: "007": must be a 32bit integer']]],
    [
      '2147483648',
      [['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]', 'Invalid value: "2147483648": must be a 32bit integer']],
    ],
  ] as [string, string[][]][])('deletion cost %s', (cost, want) => {
    const p = pod(spec(), { annotations: { 'controller.kubernetes.io/pod-deletion-cost': cost } });
    expect(causes(validatePod(p))).toEqual(want);
  });

  test('a mirror pod names its node', () => {
    const p = pod(spec(), { annotations: { 'kubernetes.io/config.mirror': 'x' } });
    expect(causes(validatePod(p))).toEqual([
      ['metadata.annotations[kubernetes.io/config.mirror]', 'Invalid value: "x": must set spec.nodeName if mirror pod annotation is set'],
    ]);
  });
});

describe('pods/ephemeralcontainers', () => {
  const e = (x: Any = {}) => ({ ...container({ name: 'dbg', image: 'busybox' }), ...x });
  test.each([
    ['an added container', [], [e()], []],
    ['a changed container', [e()], [e({ image: 'alpine' })], [['spec.ephemeralContainers', 'FieldValueForbidden']]],
    ['a removed container', [e()], [], [['spec.ephemeralContainers', 'FieldValueForbidden']]],
    [
      'a missing target',
      [],
      [e({ targetContainerName: 'nope' })],
      [['spec.ephemeralContainers[0].targetContainerName', 'FieldValueNotFound']],
    ],
    ['a name taken by a container', [], [e({ name: 'app' })], [['spec.ephemeralContainers[0].name', 'FieldValueDuplicate']]],
    [
      'probes and resources',
      [],
      [e({ resources: { limits: { cpu: '1' } }, readinessProbe: { exec: { command: ['x'] } } })],
      [
        ['spec.ephemeralContainers[0].resources', 'FieldValueForbidden'],
        ['spec.ephemeralContainers[0].readinessProbe', 'FieldValueForbidden'],
      ],
    ],
  ] as [string, Any[], Any[], string[][]][])('%s', (_, before, after, want) => {
    const errs = validateEphemeralContainersUpdate(pod(spec({ ephemeralContainers: after })), pod(spec({ ephemeralContainers: before })));
    expect(errs.map((x) => [x.field, x.type])).toEqual(want);
  });
});

describe('pods/resize', () => {
  const r = (requests: Any, limits: Any, x: Any = {}) => spec({ containers: [container({ resources: { requests, limits }, ...x })] });
  test.each([
    ['cpu up', r({ cpu: '1' }, { cpu: '2' }), r({ cpu: '1500m' }, { cpu: '2' }), []],
    [
      'requests removed',
      r({ cpu: '1' }, { cpu: '2' }),
      r({}, { cpu: '2' }),
      [['spec.containers[0].resources.requests', 'FieldValueForbidden']],
    ],
    [
      'memory limit lowered',
      r({ memory: '1Gi' }, { memory: '2Gi' }),
      r({ memory: '1Gi' }, { memory: '1536Mi' }),
      [['spec.containers[0].resources.limits[memory]', 'FieldValueForbidden']],
    ],
    [
      'memory limit lowered with RestartContainer',
      r({ memory: '1Gi' }, { memory: '2Gi' }, { resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] }),
      r({ memory: '1Gi' }, { memory: '1536Mi' }, { resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] }),
      [],
    ],
    [
      'QoS change',
      r({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }),
      r({ cpu: '500m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }),
      [['spec', 'FieldValueInvalid']],
    ],
    [
      'ephemeral storage',
      r({ cpu: '1', 'ephemeral-storage': '1Gi' }, {}),
      r({ cpu: '1', 'ephemeral-storage': '2Gi' }, {}),
      [['spec', 'FieldValueForbidden']],
    ],
  ] as [string, Any, Any, string[][]][])('%s', (_, before, after, want) => {
    const errs = validatePodResize(pod(after), pod(before));
    expect(errs.map((x) => [x.field, x.type])).toEqual(want);
  });
});
