import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { podDisruptionBudget } from './policy';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);
const pdb = (spec: Any, status: Any = {}): Obj => ({ metadata: { name: 'p', namespace: 'default' }, spec, status });

describe('PodDisruptionBudget', () => {
  const cases: [string, Any, string[][]][] = [
    ['minAvailable int', { minAvailable: 2, selector: { matchLabels: { app: 'x' } } }, []],
    ['maxUnavailable percent', { maxUnavailable: '25%', unhealthyPodEvictionPolicy: 'AlwaysAllow' }, []],
    ['100% min', { minAvailable: '100%' }, []],
    ['nothing set', {}, []],
    ['both set', { minAvailable: 1, maxUnavailable: 1 }, [['spec', 'FieldValueInvalid']]],
    ['negative', { minAvailable: -1 }, [['spec.minAvailable', 'FieldValueInvalid']]],
    ['not a percent', { maxUnavailable: 'half' }, [['spec.maxUnavailable', 'FieldValueInvalid']]],
    ['over 100%', { maxUnavailable: '120%' }, [['spec.maxUnavailable', 'FieldValueInvalid']]],
    [
      'bad selector',
      { selector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['b'] }] } },
      [['spec.selector.matchExpressions[0].values', 'FieldValueForbidden']],
    ],
    ['bad eviction policy', { unhealthyPodEvictionPolicy: 'Sometimes' }, [['spec.unhealthyPodEvictionPolicy', 'FieldValueNotSupported']]],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(podDisruptionBudget.validate!(pdb(spec)))).toEqual(want);
  });

  test('messages', () => {
    const errs = podDisruptionBudget.validate!(pdb({ minAvailable: -1, maxUnavailable: '120%', unhealthyPodEvictionPolicy: 'x' }));
    expect(errs.map((e) => [e.field, String(e.badValue), e.detail])).toEqual([
      ['spec', '[object Object]', 'minAvailable and maxUnavailable cannot be both set'],
      ['spec.minAvailable', '-1', 'must be greater than or equal to 0'],
      ['spec.maxUnavailable', 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}', 'must not be greater than 100%'],
      ['spec.unhealthyPodEvictionPolicy', 'x', 'supported values: "AlwaysAllow", "IfHealthyBudget"'],
    ]);
    expect(fieldErrorText(errs[3]!)).toBe('Unsupported value: "x": supported values: "AlwaysAllow", "IfHealthyBudget"');
  });

  test('status counts are non-negative', () => {
    expect(pairs(podDisruptionBudget.validate!(pdb({}, { currentHealthy: -1, disruptionsAllowed: 0 })))).toEqual([
      ['status.currentHealthy', 'FieldValueInvalid'],
    ]);
  });
});
