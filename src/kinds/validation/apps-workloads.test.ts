import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { controllerRevision, daemonSet, statefulSet } from './apps-workloads';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const texts = (errs: Parameters<typeof fieldErrorText>[0][]) => errs.map((e) => `${e.field}: ${fieldErrorText(e)}`);

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

const sts = (spec: Any = {}): Obj => ({
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: template(),
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    revisionHistoryLimit: 10,
    ...spec,
  },
});

describe('StatefulSet', () => {
  const cases: [string, Any, string[]][] = [
    ['valid', {}, []],
    ['valid OnDelete', { updateStrategy: { type: 'OnDelete' } }, []],
    ['valid ordinals', { ordinals: { start: 3 } }, []],
    [
      'pod management',
      { podManagementPolicy: 'Eager' },
      [`spec.podManagementPolicy: Invalid value: "Eager": must be 'OrderedReady' or 'Parallel'`],
    ],
    ['no pod management', { podManagementPolicy: undefined }, ['spec.podManagementPolicy: Required value']],
    [
      'unknown strategy',
      { updateStrategy: { type: 'Sometimes' } },
      [
        `spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'`,
      ],
    ],
    [
      'OnDelete with rollingUpdate',
      { updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } },
      [
        `spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'`,
      ],
    ],
    [
      'negative partition',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } },
      ['spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'maxUnavailable 0',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 0 } } },
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: cannot be 0'],
    ],
    [
      'maxUnavailable 150%',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%' } } },
      [
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
      ],
    ],
    [
      'retention policy',
      { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep', whenScaled: 'Retain' } },
      ['spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"'],
    ],
    ['negative ordinals', { ordinals: { start: -1 } }, ['spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0']],
    ['negative minReadySeconds', { minReadySeconds: -1 }, ['spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0']],
    [
      'empty selector',
      { selector: {} },
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
      ],
    ],
    [
      'labels do not match',
      { template: template({ app: 'db' }) },
      ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`'],
    ],
    [
      'restart policy',
      { template: template({ app: 'web' }, { restartPolicy: 'Never' }) },
      ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'active deadline',
      { template: template({ app: 'web' }, { activeDeadlineSeconds: 5 }) },
      ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported'],
    ],
  ];
  for (const [name, spec, want] of cases) {
    test(name, () => {
      expect(texts(statefulSet.validate?.(sts(spec)) ?? [])).toEqual(want);
    });
  }

  test('updates: only the listed fields may change', () => {
    const old = sts({ serviceName: 'web' });
    const ok = sts({
      serviceName: 'web',
      replicas: 3,
      minReadySeconds: 5,
      ordinals: { start: 1 },
      template: template({ app: 'web' }, { hostname: 'h' }),
      updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    expect(statefulSet.validateUpdate?.(ok, old)).toEqual([]);
    for (const change of [
      { serviceName: 'other' },
      { podManagementPolicy: 'Parallel' },
      { selector: { matchLabels: { app: 'x' } } },
      { volumeClaimTemplates: [{ metadata: { name: 'd' } }] },
    ]) {
      expect(texts(statefulSet.validateUpdate?.(sts({ serviceName: 'web', ...change }), old) ?? [])).toEqual([
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ]);
    }
  });
});

const ds = (spec: Any = {}): Obj => ({
  metadata: { name: 'agent', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: template(),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    revisionHistoryLimit: 10,
    ...spec,
  },
});

describe('DaemonSet', () => {
  const ru = (rollingUpdate: Any) => ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate } });
  const cases: [string, Any, string[]][] = [
    ['valid', {}, []],
    ['valid OnDelete', { updateStrategy: { type: 'OnDelete' } }, []],
    ['valid surge', ru({ maxUnavailable: 0, maxSurge: '10%' }), []],
    [
      'both set',
      ru({ maxUnavailable: 1, maxSurge: 1 }),
      [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
      ],
    ],
    [
      'both 0',
      ru({ maxUnavailable: 0, maxSurge: 0 }),
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0'],
    ],
    [
      'over 100%',
      ru({ maxUnavailable: '101%', maxSurge: 0 }),
      [
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%',
      ],
    ],
    ['no rollingUpdate', { updateStrategy: { type: 'RollingUpdate' } }, ['spec.updateStrategy.rollingUpdate: Required value']],
    [
      'unknown strategy',
      { updateStrategy: { type: 'Sometimes' } },
      [
        'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
      ],
    ],
    [
      'no selector',
      { selector: undefined },
      ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'],
    ],
    [
      'restart policy',
      { template: template({ app: 'web' }, { restartPolicy: 'OnFailure' }) },
      ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ],
    ['no containers', { template: template({ app: 'web' }, { containers: [] }) }, ['spec.template.spec.containers: Required value']],
    [
      'negative history',
      { revisionHistoryLimit: -1 },
      ['spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0'],
    ],
  ];
  for (const [name, spec, want] of cases) {
    test(name, () => {
      expect(texts(daemonSet.validate?.(ds(spec)) ?? [])).toEqual(want);
    });
  }

  test('template generation: 1 on create, +1 on a template change only', () => {
    const o = ds();
    daemonSet.prepareForCreate?.(o);
    expect(o.metadata.annotations).toEqual({ 'deprecated.daemonset.template.generation': '1' });
    const same = ds({ minReadySeconds: 3 });
    same.metadata.annotations = { 'deprecated.daemonset.template.generation': '9' };
    daemonSet.prepareForUpdate?.(same, o);
    expect(same.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('1');
    const changed = ds({ template: template({ app: 'web' }, { hostname: 'x' }) });
    daemonSet.prepareForUpdate?.(changed, o);
    expect(changed.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('2');
  });

  test('the selector is immutable', () => {
    expect(texts(daemonSet.validateUpdate?.(ds({ selector: { matchLabels: { app: 'x' } } }), ds()) ?? [])).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
  });
});

describe('ControllerRevision', () => {
  const cr = (extra: Any = {}): Obj => ({ metadata: { name: 'r', namespace: 'default' }, data: { a: 1 }, revision: 1, ...extra });
  test('data required, revision non-negative', () => {
    expect(controllerRevision.validate?.(cr())).toEqual([]);
    expect(texts(controllerRevision.validate?.(cr({ data: undefined, revision: -1 })) ?? [])).toEqual([
      'data: Required value: data is mandatory',
      'revision: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
  test('data immutable', () => {
    expect(controllerRevision.validateUpdate?.(cr(), cr())).toEqual([]);
    expect(texts(controllerRevision.validateUpdate?.(cr({ data: { a: 2 } }), cr()) ?? [])).toEqual([
      'data: Invalid value: {"a":2}: field is immutable',
    ]);
  });
});

describe('status updates', () => {
  test('StatefulSet: counters non-negative, not above replicas, collisionCount not decremented', () => {
    const old = { ...sts(), status: { replicas: 2, collisionCount: 2 } } as Obj;
    const next = {
      ...sts(),
      status: { replicas: 2, readyReplicas: 3, availableReplicas: 1, currentReplicas: -1, collisionCount: 1 },
    } as Obj;
    expect(texts(statefulSet.validate?.(next, old) ?? [])).toEqual([
      'status.currentReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas',
      'status.collisionCount: Invalid value: 1: cannot be decremented',
    ]);
  });
  test('DaemonSet: counters non-negative', () => {
    const next = {
      ...ds(),
      status: { numberReady: -1, currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0 },
    } as Obj;
    expect(texts(daemonSet.validate?.(next, ds()) ?? [])).toEqual([
      'status.numberReady: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});
