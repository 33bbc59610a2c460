import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import {
  configMap,
  mergeStringData,
  secret,
  validateConfigMap,
  validateEvent,
  validateNode,
  validateNodeUpdate,
  validateSecret,
  validateService,
} from './core';
import { pod, validatePodSpec } from './core-pod';
import { resourceQuota, validateLimitRange, validateResourceQuota } from './core-quota';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);
const o = (body: Any, meta: Any = {}): Obj => ({ metadata: { name: 'x', namespace: 'default', ...meta }, ...body });

describe('ConfigMap', () => {
  const cases: [string, Any, string[][]][] = [
    ['valid', { data: { 'a.b': 'x', A_B: 'y' }, binaryData: { c: 'AAA=' } }, []],
    ['empty', {}, []],
    ['bad key', { data: { 'a b': 'x' } }, [['data[a b]', 'FieldValueInvalid']]],
    ['bad binary key', { binaryData: { '..': 'AA==' } }, [['binaryData[..]', 'FieldValueInvalid']]],
    ['key in both', { data: { a: 'x' }, binaryData: { a: 'AA==' } }, [['data[a]', 'FieldValueInvalid']]],
    ['too large', { data: { a: 'x'.repeat(1024 * 1024), b: 'y' } }, [['[]', 'FieldValueTooLong']]],
  ];
  test.each(cases)('%s', (_n, body, want) => {
    expect(pairs(validateConfigMap(o(body)))).toEqual(want);
  });

  test('immutable: true freezes data and binaryData and itself', () => {
    const old = o({ immutable: true, data: { a: '1' } });
    expect(configMap.validateUpdate!(o({ immutable: true, data: { a: '1' } }), old)).toEqual([]);
    const errs = configMap.validateUpdate!(o({ data: { a: '2' }, binaryData: { b: 'AA==' } }), old);
    expect(pairs(errs)).toEqual([
      ['immutable', 'FieldValueForbidden'],
      ['data', 'FieldValueForbidden'],
      ['binaryData', 'FieldValueForbidden'],
    ]);
    expect(fieldErrorText(errs[1]!)).toBe('Forbidden: field is immutable when `immutable` is set');
    expect(configMap.validateUpdate!(o({ data: { a: '2' } }), o({ data: { a: '1' } }))).toEqual([]);
  });

  test('messages', () => {
    const [dup] = validateConfigMap(o({ data: { a: 'x' }, binaryData: { a: 'AA==' } }));
    expect(fieldErrorText(dup!)).toBe('Invalid value: "a": duplicate of key present in binaryData');
    const [big] = validateConfigMap(o({ data: { a: 'x'.repeat(1024 * 1024 + 1) } }));
    expect(fieldErrorText(big!)).toBe('Too long: may not be more than 1048576 bytes');
  });
});

describe('Secret', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const cases: [string, Any, string[][]][] = [
    ['opaque', { type: 'Opaque', data: { a: b64('x') } }, []],
    ['bad key', { type: 'Opaque', data: { 'a/b': b64('x') } }, [['data[a/b]', 'FieldValueInvalid']]],
    ['too large', { type: 'Opaque', data: { a: b64('x'.repeat(1024 * 1024 + 1)) } }, [['data', 'FieldValueTooLong']]],
    [
      'tls without keys',
      { type: 'kubernetes.io/tls', data: {} },
      [
        ['data[tls.crt]', 'FieldValueRequired'],
        ['data[tls.key]', 'FieldValueRequired'],
      ],
    ],
    [
      'dockerconfigjson not json',
      { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{') } },
      [['data[.dockerconfigjson]', 'FieldValueInvalid']],
    ],
    [
      'basic-auth without username and password',
      { type: 'kubernetes.io/basic-auth' },
      [
        ['data[username]', 'FieldValueRequired'],
        ['data[password]', 'FieldValueRequired'],
      ],
    ],
    [
      'service account token without annotation',
      { type: 'kubernetes.io/service-account-token' },
      [['metadata.annotations[kubernetes.io/service-account.name]', 'FieldValueRequired']],
    ],
    ['ssh without key', { type: 'kubernetes.io/ssh-auth' }, [['data[ssh-privatekey]', 'FieldValueRequired']]],
  ];
  test.each(cases)('%s', (_n, body, want) => {
    expect(pairs(validateSecret(o(body)))).toEqual(want);
  });

  test('type is immutable; immutable secrets freeze data', () => {
    const old = o({ type: 'Opaque', immutable: true, data: { a: b64('1') } });
    const errs = secret.validateUpdate!(o({ type: 'kubernetes.io/tls', immutable: true, data: { a: b64('2') } }), old);
    expect(pairs(errs)).toEqual([
      ['type', 'FieldValueInvalid'],
      ['data', 'FieldValueForbidden'],
    ]);
    expect(fieldErrorText(errs[0]!)).toBe('Invalid value: "kubernetes.io/tls": field is immutable');
  });

  test('stringData is merged into data', () => {
    const s = o({ data: { a: b64('1') }, stringData: { b: 'two', a: 'one' } });
    mergeStringData(s);
    expect(s).toEqual(o({ data: { a: b64('one'), b: b64('two') } }));
  });
});

describe('Service', () => {
  const port = (p: Any = {}) => ({ port: 80, protocol: 'TCP', ...p });
  const svc = (spec: Any) => o({ spec: { type: 'ClusterIP', ports: [port()], ...spec } });
  const cases: [string, Any, string[][]][] = [
    ['valid', { selector: { app: 'x' } }, []],
    ['two named ports', { ports: [port({ name: 'a' }), port({ name: 'b', port: 81, targetPort: 'http' })] }, []],
    // Unit level: clusterIPs as NormalizeClusterIPs leaves them (the registry runs it first).
    ['headless without ports', { clusterIP: 'None', clusterIPs: ['None'], ports: [] }, []],
    ['headless NodePort', { type: 'NodePort', clusterIP: 'None', clusterIPs: ['None'] }, [['spec.clusterIPs[0]', 'FieldValueInvalid']]],
    [
      'ExternalName with cluster IPs',
      { type: 'ExternalName', externalName: 'a.b', clusterIPs: ['10.0.0.1'], ports: [] },
      [['spec.clusterIPs', 'FieldValueForbidden']],
    ],
    ['no type', { type: '' }, [['spec.type', 'FieldValueRequired']]],
    ['same protocol and port twice', { ports: [port({ name: 'a' }), port({ name: 'b' })] }, [['spec.ports[1]', 'FieldValueDuplicate']]],
    [
      'same nodePort twice',
      { type: 'NodePort', ports: [port({ name: 'a', nodePort: 30000 }), port({ name: 'b', port: 81, nodePort: 30000 })] },
      [['spec.ports[1].nodePort', 'FieldValueDuplicate']],
    ],
    ['bad session affinity', { sessionAffinity: 'Sticky' }, [['spec.sessionAffinity', 'FieldValueNotSupported']]],
    [
      'affinity config without ClientIP',
      { sessionAffinity: 'None', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } } },
      [['spec.sessionAffinityConfig', 'FieldValueForbidden']],
    ],
    ['load balancer class on ClusterIP', { loadBalancerClass: 'a/b' }, [['spec.loadBalancerClass', 'FieldValueForbidden']]],
    ['ExternalName', { type: 'ExternalName', externalName: 'example.com.', ports: [] }, []],
    ['no ports', { ports: [] }, [['spec.ports', 'FieldValueRequired']]],
    ['ExternalName without name', { type: 'ExternalName', ports: [] }, [['spec.externalName', 'FieldValueRequired']]],
    [
      'two ports unnamed, duplicate names',
      { ports: [port(), port({ name: 'a' }), port({ name: 'a', port: 81 })] },
      [
        ['spec.ports[0].name', 'FieldValueRequired'],
        ['spec.ports[2].name', 'FieldValueDuplicate'],
        ['spec.ports[1]', 'FieldValueDuplicate'],
      ],
    ],
    ['port 0', { ports: [port({ port: 0 })] }, [['spec.ports[0].port', 'FieldValueInvalid']]],
    ['port out of range', { ports: [port({ port: 70000 })] }, [['spec.ports[0].port', 'FieldValueInvalid']]],
    ['bad protocol', { ports: [port({ protocol: 'ICMP' })] }, [['spec.ports[0].protocol', 'FieldValueNotSupported']]],
    ['bad targetPort', { ports: [port({ targetPort: 'HTTP' })] }, [['spec.ports[0].targetPort', 'FieldValueInvalid']]],
    ['bad type', { type: 'Magic' }, [['spec.type', 'FieldValueNotSupported']]],
    ['nodePort on ClusterIP', { ports: [port({ nodePort: 30000 })] }, [['spec.ports[0].nodePort', 'FieldValueForbidden']]],
    ['bad selector', { selector: { 'a b': 'c' } }, [['spec.selector', 'FieldValueInvalid']]],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(validateService(svc(spec)))).toEqual(want);
  });

  test('messages', () => {
    const [dup] = validateService(svc({ ports: [port({ name: 'a' }), port({ name: 'b' })] }));
    expect(fieldErrorText(dup!)).toBe(
      'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    );
    const [e] = validateService(svc({ type: 'Magic' }));
    expect(fieldErrorText(e!)).toBe(
      'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    );
  });
});

describe('Node', () => {
  test.each([
    ['valid', { podCIDRs: ['10.0.0.0/24', 'fd00::/64'], taints: [{ key: 'a', effect: 'NoSchedule' }] }, []],
    ['bad CIDR', { podCIDRs: ['10.0.0.1/24'] }, [['spec.podCIDRs[0]', 'FieldValueInvalid']]],
    ['two CIDRs of a family', { podCIDRs: ['10.0.0.0/24', '10.1.0.0/24'] }, [['spec.podCIDRs', 'FieldValueInvalid']]],
    [
      'repeated CIDR',
      { podCIDRs: ['10.0.0.0/24', '10.0.0.0/24'] },
      [
        ['spec.podCIDRs', 'FieldValueInvalid'],
        ['spec.podCIDRs[1]', 'FieldValueDuplicate'],
      ],
    ],
    [
      'empty taint key',
      { taints: [{ key: '', effect: 'NoSchedule' }] },
      [
        ['metadata.taints[0].key', 'FieldValueInvalid'],
        ['metadata.taints[0].key', 'FieldValueInvalid'],
      ],
    ],
    [
      'taints',
      { taints: [{ key: 'a' }, { key: 'b', effect: 'Never' }, { key: 'c', effect: 'NoExecute' }, { key: 'c', effect: 'NoExecute' }] },
      [
        ['metadata.taints[0].effect', 'FieldValueRequired'],
        ['metadata.taints[1].effect', 'FieldValueNotSupported'],
        ['metadata.taints[3]', 'FieldValueDuplicate'],
      ],
    ],
  ] as [string, Any, string[][]][])('%s', (_n, spec, want) => {
    expect(pairs(validateNode({ metadata: { name: 'n' }, spec }))).toEqual(want);
  });

  test('capacity and allocatable quantities are non-negative; counted ones whole (dotted paths, as the reference)', () => {
    const status = { capacity: { cpu: '-1', pods: '1.5' }, allocatable: { memory: '1Gi' } };
    expect(pairs(validateNode({ metadata: { name: 'n' }, spec: {}, status }))).toEqual([
      ['status.capacity.cpu', 'FieldValueInvalid'],
      ['status.capacity.pods', 'FieldValueInvalid'],
    ]);
  });

  test('updates: duplicate addresses; a config source needs its config map fields', () => {
    const old = { metadata: { name: 'n' }, spec: {} };
    const next = {
      metadata: { name: 'n' },
      spec: { configSource: { configMap: { uid: 'x', kubeletConfigKey: 'k' } } },
      status: {
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.1' },
        ],
      },
    };
    const errs = validateNodeUpdate(next, old);
    expect(pairs(errs)).toEqual([
      ['status.addresses[1]', 'FieldValueDuplicate'],
      ['spec.configSource.configMap.uid', 'FieldValueForbidden'],
      ['spec.configSource.configMap.namespace', 'FieldValueRequired'],
      ['spec.configSource.configMap.name', 'FieldValueRequired'],
    ]);
    expect(fieldErrorText(errs[0]!)).toBe('Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}');
  });
});

describe('Event', () => {
  test.each([
    ['same namespace', { involvedObject: { kind: 'Pod', namespace: 'default' } }, 'default', []],
    ['no involved namespace in default', { involvedObject: { kind: 'Node' } }, 'default', []],
    ['mismatch', { involvedObject: { namespace: 'other' } }, 'default', [['involvedObject.namespace', 'FieldValueInvalid']]],
    ['no involved namespace elsewhere', { involvedObject: {} }, 'team', [['involvedObject.namespace', 'FieldValueInvalid']]],
    [
      'new style without reporting fields',
      { eventTime: '2024-01-01T00:00:00.000000Z', involvedObject: { namespace: 'team' } },
      'team',
      [
        ['reportingController', 'FieldValueRequired'],
        ['reportingController', 'FieldValueInvalid'],
        ['reportingController', 'FieldValueInvalid'],
        ['reportingInstance', 'FieldValueRequired'],
        ['action', 'FieldValueRequired'],
        ['reason', 'FieldValueRequired'],
      ],
    ],
  ] as [string, Any, string, string[][]][])('%s', (_n, body, ns, want) => {
    expect(pairs(validateEvent(o(body, { namespace: ns })))).toEqual(want);
  });

  test('message', () => {
    const [e] = validateEvent(o({ involvedObject: { namespace: 'other' } }));
    expect(fieldErrorText(e!)).toBe('Invalid value: "other": does not match event.namespace');
  });
});

describe('Pod', () => {
  // Validation sees defaulted objects: the defaults the rules require are spelled out.
  const c = (x: Any = {}) => ({ name: 'app', image: 'nginx', imagePullPolicy: 'Always', terminationMessagePolicy: 'File', ...x });
  const spec = (s: Any) => ({
    containers: [c()],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
    ...s,
  });
  const cases: [string, Any, string[][]][] = [
    ['valid', { containers: [c({ ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] })] }, []],
    ['no containers', { containers: [] }, [['spec.containers', 'FieldValueRequired']]],
    ['missing containers', { containers: undefined }, [['spec.containers', 'FieldValueRequired']]],
    [
      'no name, no image',
      { containers: [{ imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }] },
      [
        ['spec.containers[0].name', 'FieldValueRequired'],
        ['spec.containers[0].image', 'FieldValueRequired'],
      ],
    ],
    ['bad name', { containers: [c({ name: 'App_1' })] }, [['spec.containers[0].name', 'FieldValueInvalid']]],
    ['duplicate names', { containers: [c(), c()] }, [['spec.containers[1].name', 'FieldValueDuplicate']]],
    ['init container clashes', { initContainers: [c()] }, [['spec.initContainers[0].name', 'FieldValueDuplicate']]],
    ['activeDeadlineSeconds 0', { activeDeadlineSeconds: 0 }, [['spec.activeDeadlineSeconds', 'FieldValueInvalid']]],
    ['bad hostname', { hostname: 'Host_1' }, [['spec.hostname', 'FieldValueInvalid']]],
    ['bad node selector', { nodeSelector: { 'a b': 'x' } }, [['spec.nodeSelector', 'FieldValueInvalid']]],
    ['bad node name', { nodeName: 'Node_1' }, [['spec.nodeName', 'FieldValueInvalid']]],
    [
      'ports',
      {
        containers: [
          c({
            ports: [
              { containerPort: 0, protocol: 'TCP' },
              { containerPort: 70000, protocol: 'ICMP' },
              { containerPort: 80, protocol: 'TCP', name: 'web', hostPort: 70000 },
              { containerPort: 81, protocol: 'TCP', name: 'web' },
            ],
          }),
        ],
      },
      [
        ['spec.containers[0].ports[0].containerPort', 'FieldValueRequired'],
        ['spec.containers[0].ports[1].containerPort', 'FieldValueInvalid'],
        ['spec.containers[0].ports[1].protocol', 'FieldValueNotSupported'],
        ['spec.containers[0].ports[2].hostPort', 'FieldValueInvalid'],
        ['spec.containers[0].ports[3].name', 'FieldValueDuplicate'],
      ],
    ],
    ['restart policy', { restartPolicy: 'Sometimes' }, [['spec.restartPolicy', 'FieldValueNotSupported']]],
    ['dns policy', { dnsPolicy: 'Google' }, [['spec.dnsPolicy', 'FieldValueNotSupported']]],
    [
      'pull policy',
      { containers: [c({ imagePullPolicy: 'Sometimes' })] },
      [['spec.containers[0].imagePullPolicy', 'FieldValueNotSupported']],
    ],
  ];
  test.each(cases)('%s', (_n, s, want) => {
    expect(pairs(pod.validate!(o({ spec: spec(s) })))).toEqual(want);
  });

  test('messages', () => {
    const [r] = validatePodSpec(spec({ restartPolicy: 'Sometimes' }), 'spec');
    expect(fieldErrorText(r!)).toBe('Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"');
    const [d] = validatePodSpec(spec({ dnsPolicy: 'x' }), 'spec');
    expect(fieldErrorText(d!)).toBe(
      'Unsupported value: "x": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    );
    const [n] = validatePodSpec(spec({ containers: [c({ name: 'A' })] }), 'spec');
    expect(fieldErrorText(n!)).toStartWith('Invalid value: "A": a lowercase RFC 1123 label must consist of');
  });
});

describe('LimitRange', () => {
  const lr = (limits: Any) => o({ spec: limits === undefined ? {} : { limits } });
  const cases: [string, Any, string[][]][] = [
    [
      'valid container limits',
      [
        {
          type: 'Container',
          min: { cpu: '100m' },
          max: { cpu: '2' },
          default: { cpu: '1' },
          defaultRequest: { cpu: '500m' },
          maxLimitRequestRatio: { cpu: '4' },
        },
      ],
      [],
    ],
    ['valid pvc', [{ type: 'PersistentVolumeClaim', max: { storage: '10Gi' } }], []],
    ['no limits', undefined, [['spec.limits', 'FieldValueRequired']]],
    // Not Required: the reference runs the qualified-name check on the empty type (two messages).
    [
      'type missing',
      [{ max: { cpu: '1' } }],
      [
        ['spec.limits[0].type', 'FieldValueInvalid'],
        ['spec.limits[0].type', 'FieldValueInvalid'],
      ],
    ],
    ['type unknown', [{ type: 'Node' }], [['spec.limits[0].type', 'FieldValueInvalid']]],
    ['duplicate type', [{ type: 'Container' }, { type: 'Container' }], [['spec.limits[1].type', 'FieldValueDuplicate']]],
    ['min above max', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }], [['spec.limits[0].min[cpu]', 'FieldValueInvalid']]],
    [
      'default above max',
      [{ type: 'Container', max: { memory: '1Gi' }, default: { memory: '2Gi' } }],
      [['spec.limits[0].default[memory]', 'FieldValueInvalid']],
    ],
    [
      'min above default',
      [{ type: 'Container', min: { memory: '1Gi' }, default: { memory: '512Mi' } }],
      [['spec.limits[0].default[memory]', 'FieldValueInvalid']],
    ],
    [
      'default request above default',
      [{ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '2' } }],
      [['spec.limits[0].defaultRequest[cpu]', 'FieldValueInvalid']],
    ],
    [
      'ratio below 1',
      [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }],
      [['spec.limits[0].maxLimitRequestRatio[cpu]', 'FieldValueInvalid']],
    ],
    ['pod defaults', [{ type: 'Pod', default: { cpu: '1' } }], [['spec.limits[0].default', 'FieldValueForbidden']]],
    ['pvc without storage', [{ type: 'PersistentVolumeClaim' }], [['spec.limits[0].limits', 'FieldValueRequired']]],
    ['non-container resource', [{ type: 'Container', max: { pods: '1' } }], [['spec.limits[0].max[pods]', 'FieldValueInvalid']]],
  ];
  test.each(cases)('%s', (_n, limits, want) => {
    expect(pairs(validateLimitRange(lr(limits)))).toEqual(want);
  });

  test('messages', () => {
    const [e] = validateLimitRange(lr([{ type: 'Container', min: { cpu: '2000m' }, max: { cpu: '1500m' } }]));
    expect(fieldErrorText(e!)).toBe('Invalid value: "2": min value 2 is greater than max value 1500m');
  });
});

describe('ResourceQuota', () => {
  const rq = (spec: Any) => o({ spec });
  const cases: [string, Any, string[][]][] = [
    ['valid', { hard: { pods: '10', 'requests.cpu': '2', 'count/deployments.apps': '5' } }, []],
    ['valid scopes', { hard: { pods: '10' }, scopes: ['BestEffort'] }, []],
    [
      'valid selector',
      { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
      [],
    ],
    ['negative', { hard: { cpu: '-1' } }, [['spec.hard[cpu]', 'FieldValueInvalid']]],
    ['fraction of a count', { hard: { pods: '1.5' } }, [['spec.hard[pods]', 'FieldValueInvalid']]],
    [
      'unknown resource',
      { hard: { gpus: '1' } },
      [
        ['spec.hard[gpus]', 'FieldValueInvalid'],
        ['spec.hard[gpus]', 'FieldValueInvalid'],
      ],
    ],
    ['unknown scope', { scopes: ['Weekend'] }, [['spec.scopes', 'FieldValueInvalid']]],
    ['scope not for resource', { hard: { services: '1' }, scopes: ['BestEffort'] }, [['spec.scopes', 'FieldValueInvalid']]],
    ['conflicting scopes', { scopes: ['Terminating', 'NotTerminating'] }, [['spec.scopes', 'FieldValueInvalid']]],
    [
      'In without values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } },
      [['spec.scopeSelector.matchExpressions.values', 'FieldValueRequired']],
    ],
    [
      'Exists with values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists', values: ['a'] }] } },
      [['spec.scopeSelector.matchExpressions.values', 'FieldValueInvalid']],
    ],
    [
      'BestEffort must use Exists',
      { scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'In', values: ['a'] }] } },
      [['spec.scopeSelector.matchExpressions.operator', 'FieldValueInvalid']],
    ],
    [
      'bad operator and scope',
      { scopeSelector: { matchExpressions: [{ scopeName: 'Nope', operator: 'Gt' }] } },
      [
        ['spec.scopeSelector.matchExpressions.scopeName', 'FieldValueInvalid'],
        ['spec.scopeSelector.matchExpressions.operator', 'FieldValueInvalid'],
      ],
    ],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(validateResourceQuota(rq(spec)))).toEqual(want);
  });

  test('messages', () => {
    const [neg] = validateResourceQuota(rq({ hard: { cpu: '-1' } }));
    expect(fieldErrorText(neg!)).toBe('Invalid value: "-1": must be greater than or equal to 0');
    const [scope] = validateResourceQuota(rq({ scopes: ['Weekend'] }));
    expect([String(scope!.badValue), scope!.detail]).toEqual(['[]core.ResourceQuotaScope{"Weekend"}', 'unsupported scope']);
  });

  test('scopes are immutable', () => {
    const errs = resourceQuota.validateUpdate!(rq({ scopes: ['BestEffort'] }), rq({ scopes: ['NotBestEffort'] }));
    expect(pairs(errs)).toEqual([['spec.scopes', 'FieldValueInvalid']]);
    expect(resourceQuota.validateUpdate!(rq({ scopes: ['BestEffort'] }), rq({ scopes: ['BestEffort'] }))).toEqual([]);
  });
});
