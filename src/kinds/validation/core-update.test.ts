import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { normalizeClusterIPs, validateNodeUpdate, validateServiceUpdate } from './core';
import { POD_UPDATE_FORBIDDEN, pod, validatePodUpdate } from './core-pod';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const causes = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);
const o = (spec: Any, meta: Any = {}): Obj => ({ metadata: { name: 'x', namespace: 'default', ...meta }, spec });

describe('ValidatePodUpdate', () => {
  const d = { imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' };
  // Validation sees defaulted objects: the defaults the rules require are spelled out.
  const base = {
    containers: [{ ...d, name: 'app', image: 'nginx:1.27' }],
    initContainers: [{ ...d, name: 'init', image: 'busybox:1' }],
    tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
  };
  const withSpec = (over: Any) => ({ ...base, ...over });
  const cases: [string, Any, Any, string[][]][] = [
    ['no change', base, base, []],
    ['container image', base, withSpec({ containers: [{ ...d, name: 'app', image: 'nginx:1.28' }] }), []],
    ['init container image', base, withSpec({ initContainers: [{ ...d, name: 'init', image: 'busybox:2' }] }), []],
    ['activeDeadlineSeconds set', base, withSpec({ activeDeadlineSeconds: 30 }), []],
    ['activeDeadlineSeconds lowered', withSpec({ activeDeadlineSeconds: 30 }), withSpec({ activeDeadlineSeconds: 10 }), []],
    [
      'activeDeadlineSeconds raised',
      withSpec({ activeDeadlineSeconds: 10 }),
      withSpec({ activeDeadlineSeconds: 30 }),
      [['spec.activeDeadlineSeconds', 'FieldValueInvalid']],
    ],
    ['activeDeadlineSeconds removed', withSpec({ activeDeadlineSeconds: 10 }), base, [['spec.activeDeadlineSeconds', 'FieldValueInvalid']]],
    [
      'activeDeadlineSeconds negative',
      base,
      withSpec({ activeDeadlineSeconds: -1 }),
      [['spec.activeDeadlineSeconds', 'FieldValueInvalid']],
    ],
    ['toleration added', base, withSpec({ tolerations: [...base.tolerations, { key: 'b', operator: 'Exists' }] }), []],
    [
      'tolerationSeconds changed',
      base,
      withSpec({ tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }] }),
      [],
    ],
    ['toleration removed', base, withSpec({ tolerations: [] }), [['spec.tolerations', 'FieldValueForbidden']]],
    [
      'toleration key changed',
      base,
      withSpec({ tolerations: [{ key: 'other', operator: 'Exists', effect: 'NoExecute' }] }),
      [['spec.tolerations', 'FieldValueForbidden']],
    ],
    ['container renamed', base, withSpec({ containers: [{ ...d, name: 'web', image: 'nginx:1.27' }] }), [['spec', 'FieldValueForbidden']]],
    [
      'container added',
      base,
      withSpec({ containers: [...base.containers, { ...d, name: 'side', image: 'envoy' }] }),
      [['spec.containers', 'FieldValueForbidden']],
    ],
    ['container removed', base, withSpec({ containers: [] }), [['spec.containers', 'FieldValueForbidden']]],
    ['init container removed', base, withSpec({ initContainers: [] }), [['spec.initContainers', 'FieldValueForbidden']]],
    [
      'image with spaces',
      base,
      withSpec({ containers: [{ ...d, name: 'app', image: ' nginx' }] }),
      [['spec.containers[0].image', 'FieldValueInvalid']],
    ],
    ['restartPolicy changed', base, withSpec({ restartPolicy: 'Never' }), [['spec', 'FieldValueForbidden']]],
    ['nodeName set', base, withSpec({ nodeName: 'n1' }), [['spec', 'FieldValueForbidden']]],
    ['grace period 1 after negative', withSpec({ terminationGracePeriodSeconds: -1 }), withSpec({ terminationGracePeriodSeconds: 1 }), []],
    [
      'grace period changed',
      withSpec({ terminationGracePeriodSeconds: 30 }),
      withSpec({ terminationGracePeriodSeconds: 1 }),
      [['spec', 'FieldValueForbidden']],
    ],
    [
      'scheduling gate removed',
      withSpec({ schedulingGates: [{ name: 'a' }, { name: 'b' }] }),
      withSpec({ schedulingGates: [{ name: 'b' }] }),
      [],
    ],
    [
      'scheduling gate added',
      withSpec({ schedulingGates: [{ name: 'a' }] }),
      withSpec({ schedulingGates: [{ name: 'a' }, { name: 'b' }] }),
      [['spec.schedulingGates[1].name', 'FieldValueForbidden']],
    ],
  ];
  test.each(cases)('%s', (_n, before, after, want) => {
    expect(causes(validatePodUpdate(o(after), o(before)))).toEqual(want);
  });

  test('messages', () => {
    const renamed = validatePodUpdate(o(withSpec({ containers: [{ ...d, name: 'web', image: 'nginx:1.27' }] })), o(base));
    const text = fieldErrorText(renamed[0]!);
    expect(text.split('\n')[0]).toBe(
      'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    );
    expect(POD_UPDATE_FORBIDDEN.startsWith('pod updates may not change fields other than ')).toBe(true);
    // The appended diff names what changed.
    expect(text).toContain('spec.containers[0].name');
    const [added] = validatePodUpdate(o(withSpec({ containers: [] })), o(base));
    expect(fieldErrorText(added!)).toBe('Forbidden: pod updates may not add or remove containers');
    const [raised] = validatePodUpdate(o(withSpec({ activeDeadlineSeconds: 30 })), o(withSpec({ activeDeadlineSeconds: 10 })));
    expect(fieldErrorText(raised!)).toBe('Invalid value: 30: must be less than or equal to previous value');
    const [removed] = validatePodUpdate(o(base), o(withSpec({ activeDeadlineSeconds: 10 })));
    expect(fieldErrorText(removed!)).toBe('Invalid value: "null": must not update from a positive integer to nil value');
    const [tol] = validatePodUpdate(o(withSpec({ tolerations: [] })), o(base));
    expect(fieldErrorText(tol!)).toBe('Forbidden: existing toleration can not be modified except its tolerationSeconds');
  });

  test('a pod image with surrounding spaces is Invalid on create and on update, as the reference reports it twice then', () => {
    const spaced = withSpec({ containers: [{ ...d, name: 'app', image: 'nginx ' }] });
    expect(causes(pod.validate!(o(spaced)))).toEqual([['spec.containers[0].image', 'FieldValueInvalid']]);
    const [e] = pod.validate!(o(spaced));
    expect(fieldErrorText(e!)).toBe('Invalid value: "nginx ": must not have leading or trailing whitespace');
    expect(causes(validatePodUpdate(o(spaced), o(base)))).toEqual([['spec.containers[0].image', 'FieldValueInvalid']]);
  });

  test('the mirror pod annotation can be neither added nor removed', () => {
    const key = 'kubernetes.io/config.mirror';
    const added = validatePodUpdate(o(base, { annotations: { [key]: 'x' } }), o(base));
    expect(causes(added)).toEqual([[`metadata.annotations[${key}]`, 'FieldValueForbidden']]);
    const removed = validatePodUpdate(o(base), o(base, { annotations: { [key]: 'x' } }));
    expect(fieldErrorText(removed[0]!)).toBe('Forbidden: may not remove or update mirror pod annotation');
  });
});

describe('ValidateServiceUpdate', () => {
  const svc = (spec: Any) => o({ type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }], ...spec });
  const cases: [string, Any, Any, string[][]][] = [
    ['same IPs', { clusterIPs: ['10.0.0.1'] }, { clusterIPs: ['10.0.0.1'] }, []],
    ['first set', {}, { clusterIPs: ['10.0.0.1'] }, []],
    ['changed', { clusterIPs: ['10.0.0.1'] }, { clusterIPs: ['10.0.0.2'] }, [['spec.clusterIPs[0]', 'FieldValueInvalid']]],
    ['unset', { clusterIPs: ['10.0.0.1'] }, { clusterIPs: [] }, [['spec.clusterIPs[0]', 'FieldValueInvalid']]],
    ['to ExternalName', { clusterIPs: ['10.0.0.1'] }, { type: 'ExternalName', externalName: 'a.b' }, []],
    ['headless stays', { clusterIPs: ['None'] }, { clusterIPs: ['None'] }, []],
    [
      'secondary released without SingleStack',
      { clusterIPs: ['10.0.0.1', 'fd00::1'] },
      { clusterIPs: ['10.0.0.1'] },
      [['spec.ipFamilyPolicy', 'FieldValueInvalid']],
    ],
    ['secondary released', { clusterIPs: ['10.0.0.1', 'fd00::1'] }, { clusterIPs: ['10.0.0.1'], ipFamilyPolicy: 'SingleStack' }, []],
    ['secondary added', { clusterIPs: ['10.0.0.1'] }, { clusterIPs: ['10.0.0.1', 'fd00::1'] }, []],
    [
      'load balancer class',
      { type: 'LoadBalancer', loadBalancerClass: 'a/b' },
      { type: 'LoadBalancer', loadBalancerClass: 'a/c' },
      [['spec.loadBalancerClass', 'FieldValueInvalid']],
    ],
  ];
  test.each(cases)('%s', (_n, before, after, want) => {
    expect(causes(validateServiceUpdate(svc(after), svc(before)))).toEqual(want);
  });

  test('message and bad value', () => {
    const [e] = validateServiceUpdate(svc({ clusterIPs: ['10.0.0.2'] }), svc({ clusterIPs: ['10.0.0.1'] }));
    expect(fieldErrorText(e!)).toBe('Invalid value: []string{"10.0.0.2"}: may not change once set');
  });

  test.each([
    ['create seeds clusterIPs', undefined, { clusterIP: '10.0.0.1' }, { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] }],
    ['create seeds clusterIP', undefined, { clusterIPs: ['10.0.0.1'] }, { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] }],
    [
      'update keeps clusterIPs an old client dropped',
      { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] },
      { clusterIP: '10.0.0.1' },
      { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] },
    ],
    [
      'update of clusterIP alone carries into clusterIPs',
      { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] },
      { clusterIP: '10.0.0.2', clusterIPs: ['10.0.0.1'] },
      { clusterIP: '10.0.0.2', clusterIPs: ['10.0.0.2'] },
    ],
    ['clearing both', { clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'] }, { clusterIP: '', clusterIPs: ['10.0.0.1'] }, { clusterIP: '' }],
  ] as [string, Any, Any, Any][])('NormalizeClusterIPs: %s', (_n, before, after, want) => {
    const next = o(after);
    normalizeClusterIPs(next, before ? o(before) : undefined);
    expect(next.spec).toEqual(want);
  });
});

describe('ValidateNodeUpdate', () => {
  const cases: [string, Any, Any, string[][]][] = [
    ['podCIDRs first set', {}, { podCIDRs: ['10.0.0.0/24'] }, []],
    ['podCIDRs changed', { podCIDRs: ['10.0.0.0/24'] }, { podCIDRs: ['10.1.0.0/24'] }, [['spec.podCIDRs', 'FieldValueForbidden']]],
    ['podCIDRs removed', { podCIDRs: ['10.0.0.0/24'] }, {}, [['spec.podCIDRs', 'FieldValueForbidden']]],
    ['providerID first set', {}, { providerID: 'aws://1' }, []],
    ['providerID changed', { providerID: 'aws://1' }, { providerID: 'aws://2' }, [['spec.providerID', 'FieldValueForbidden']]],
    ['unschedulable changes', {}, { unschedulable: true }, []],
    ['externalID changed', { externalID: 'a' }, { externalID: 'b' }, [['spec.externalID', 'FieldValueForbidden']]],
  ];
  test.each(cases)('%s', (_n, before, after, want) => {
    expect(causes(validateNodeUpdate(o(after), o(before)))).toEqual(want);
  });

  test('message', () => {
    const [e] = validateNodeUpdate(o({ podCIDRs: ['10.1.0.0/24'] }), o({ podCIDRs: ['10.0.0.0/24'] }));
    expect(fieldErrorText(e!)).toBe('Forbidden: node updates may not change podCIDR except from "" to valid');
  });
});
