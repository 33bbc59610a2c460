import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { deployment, replicaSet } from './apps';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

const template = (labels: Any = { app: 'web' }, spec: Any = {}) => ({
  metadata: { labels },
  spec: {
    containers: [{ name: 'web', image: 'nginx', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
    ...spec,
  },
});
const dep = (spec: Any): Obj => ({
  metadata: { name: 'd', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: template(),
    strategy: { type: 'RollingUpdate' },
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    ...spec,
  },
});

describe('Deployment', () => {
  const cases: [string, Any, string[][]][] = [
    ['valid', {}, []],
    ['valid expressions', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }, []],
    ['valid recreate', { strategy: { type: 'Recreate' } }, []],
    ['valid rolling update', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } } }, []],
    ['negative replicas', { replicas: -1 }, [['spec.replicas', 'FieldValueInvalid']]],
    [
      'no selector',
      { selector: undefined },
      [
        ['spec.selector', 'FieldValueRequired'],
        ['spec.template.metadata.labels', 'FieldValueInvalid'],
      ],
    ],
    ['empty selector', { selector: {} }, [['spec.selector', 'FieldValueInvalid']]],
    ['selector does not match', { selector: { matchLabels: { app: 'api' } } }, [['spec.template.metadata.labels', 'FieldValueInvalid']]],
    [
      'invalid selector',
      { selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
      [
        ['spec.selector.matchExpressions[0].values', 'FieldValueRequired'],
        ['spec.selector', 'FieldValueInvalid'],
      ],
    ],
    [
      'template restart policy',
      { template: template(undefined, { restartPolicy: 'Never' }) },
      [['spec.template.spec.restartPolicy', 'FieldValueNotSupported']],
    ],
    [
      'template activeDeadlineSeconds',
      { template: template(undefined, { activeDeadlineSeconds: 10 }) },
      [['spec.template.spec.activeDeadlineSeconds', 'FieldValueForbidden']],
    ],
    [
      'template without containers',
      { template: template(undefined, { containers: [] }) },
      [['spec.template.spec.containers', 'FieldValueRequired']],
    ],
    ['bad template label', { template: template({ app: 'web', 'a b': 'c' }) }, [['spec.template.labels', 'FieldValueInvalid']]],
    ['bad strategy', { strategy: { type: 'BlueGreen' } }, [['spec.strategy', 'FieldValueNotSupported']]],
    [
      'recreate with rollingUpdate',
      { strategy: { type: 'Recreate', rollingUpdate: {} } },
      [['spec.strategy.rollingUpdate', 'FieldValueForbidden']],
    ],
    [
      'zero surge and unavailable',
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } },
      [['spec.strategy.rollingUpdate.maxUnavailable', 'FieldValueInvalid']],
    ],
    [
      'bad percents',
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '120%', maxSurge: 'x' } } },
      [
        ['spec.strategy.rollingUpdate.maxSurge', 'FieldValueInvalid'],
        ['spec.strategy.rollingUpdate.maxUnavailable', 'FieldValueInvalid'],
      ],
    ],
    [
      'deadlines',
      { minReadySeconds: 700, revisionHistoryLimit: -1 },
      [
        ['spec.revisionHistoryLimit', 'FieldValueInvalid'],
        ['spec.progressDeadlineSeconds', 'FieldValueInvalid'],
      ],
    ],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(deployment.validate!(dep(spec)))).toEqual(want);
  });

  test('messages', () => {
    const [e] = deployment.validate!(dep({ selector: { matchLabels: { app: 'api' } } }));
    expect([e!.field, String(e!.badValue), e!.detail]).toEqual([
      'spec.template.metadata.labels',
      'map[string]string{"app":"web"}',
      '`selector` does not match template `labels`',
    ]);
    const [empty] = deployment.validate!(dep({ selector: {} }));
    expect([String(empty!.badValue), empty!.detail]).toEqual([
      'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}',
      'empty selector is invalid for deployment',
    ]);
    const [r] = deployment.validate!(dep({ template: template(undefined, { restartPolicy: 'Never' }) }));
    expect(fieldErrorText(r!)).toBe('Unsupported value: "Never": supported values: "Always"');
  });

  test('selector is immutable', () => {
    const errs = deployment.validateUpdate!(dep({ selector: { matchLabels: { app: 'x' } } }), dep({}));
    expect(pairs(errs)).toEqual([['spec.selector', 'FieldValueInvalid']]);
    expect(errs[0]!.detail).toBe('field is immutable');
    expect(deployment.validateUpdate!(dep({ replicas: 3 }), dep({}))).toEqual([]);
  });
});

describe('ReplicaSet', () => {
  const rs = (spec: Any): Obj => ({
    metadata: { name: 'r', namespace: 'default' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: template(), ...spec },
  });
  test.each([
    ['valid', {}, []],
    [
      'negative counts',
      { replicas: -1, minReadySeconds: -1 },
      [
        ['spec.replicas', 'FieldValueInvalid'],
        ['spec.minReadySeconds', 'FieldValueInvalid'],
      ],
    ],
    ['mismatch', { template: template({ app: 'other' }) }, [['spec.template.metadata.labels', 'FieldValueInvalid']]],
  ] as [string, Any, string[][]][])('%s', (_n, spec, want) => {
    expect(pairs(replicaSet.validate!(rs(spec)))).toEqual(want);
  });

  test('selector is immutable', () => {
    expect(pairs(replicaSet.validateUpdate!(rs({ selector: { matchLabels: { app: 'web', v: '2' } } }), rs({})))).toEqual([
      ['spec.selector', 'FieldValueInvalid'],
    ]);
  });
});

describe('status updates', () => {
  const text = (errs: { field: string; type: string; detail: string; badValue?: unknown }[]) =>
    errs.map((e) => `${e.field}: ${fieldErrorText(e as Parameters<typeof fieldErrorText>[0])}`);
  test('Deployment: counters, bounds, collisionCount', () => {
    const old = { ...dep({}), status: { replicas: 3, collisionCount: 1 } } as Obj;
    const next = {
      ...dep({}),
      status: { replicas: 3, readyReplicas: 2, availableReplicas: 3, unavailableReplicas: -1, collisionCount: 0 },
    } as Obj;
    expect(text(deployment.validate?.(next, old) ?? [])).toEqual([
      'status.unavailableReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas',
      'status.collisionCount: Invalid value: 0: cannot be decremented',
    ]);
  });
  test('ReplicaSet: ready replicas not above replicas', () => {
    const rs = (status: Any): Obj => ({ ...dep({}), status });
    expect(text(replicaSet.validate?.(rs({ replicas: 1, readyReplicas: 2, availableReplicas: 0 }), rs({})) ?? [])).toEqual([
      'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    ]);
  });
});
