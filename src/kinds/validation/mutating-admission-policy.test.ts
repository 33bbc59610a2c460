import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { validateMutatingAdmissionPolicy, validateMutatingAdmissionPolicyBinding } from './mutating-admission-policy';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string; detail?: string }[]) => errs.map((e) => [e.field, e.type]);

const match = (operations = ['CREATE', 'UPDATE']) => ({
  matchPolicy: 'Equivalent',
  namespaceSelector: {},
  objectSelector: {},
  resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations, resources: ['pods'], scope: '*' }],
});
const apply = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const map = (spec: Any): Obj => ({
  metadata: { name: 'demo' },
  spec: {
    failurePolicy: 'Fail',
    reinvocationPolicy: 'Never',
    matchConstraints: match(),
    mutations: [apply('Object{metadata: Object.metadata{labels: {"a": "b"}}}')],
    ...spec,
  },
});

describe('MutatingAdmissionPolicy', () => {
  test('a valid policy', () => {
    expect(validateMutatingAdmissionPolicy(map({}))).toEqual([]);
    expect(
      validateMutatingAdmissionPolicy(
        map({
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          variables: [{ name: 'owner', expression: 'params.data.owner' }],
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: { expression: '[JSONPatch{op: "add", path: "/metadata/labels/o", value: variables.owner}]' },
            },
          ],
        }),
      ),
    ).toEqual([]);
  });

  test.each([
    ['no mutations', { mutations: [] }, [['spec.mutations', 'FieldValueRequired']]],
    ['no reinvocationPolicy', { reinvocationPolicy: undefined }, [['spec.reinvocationPolicy', 'FieldValueRequired']]],
    ['a bad reinvocationPolicy', { reinvocationPolicy: 'Always' }, [['spec.reinvocationPolicy', 'FieldValueNotSupported']]],
    ['no failurePolicy', { failurePolicy: undefined }, [['spec.failurePolicy', 'FieldValueRequired']]],
    [
      'DELETE is not a mutating operation',
      { matchConstraints: match(['DELETE']) },
      [['spec.matchConstraints.resourceRules.operations', 'FieldValueNotSupported']],
    ],
    [
      'no patchType',
      { mutations: [{ applyConfiguration: { expression: 'Object{}' } }] },
      [['spec.mutations[0].patchType', 'FieldValueRequired']],
    ],
    ['a patchType without its body', { mutations: [{ patchType: 'JSONPatch' }] }, [['spec.mutations[0].jsonPatch', 'FieldValueRequired']]],
    [
      'both bodies',
      { mutations: [{ ...apply('Object{}'), jsonPatch: { expression: '[]' } }] },
      [['spec.mutations[0].jsonPatch', 'FieldValueInvalid']],
    ],
    ['an empty expression', { mutations: [apply('  ')] }, [['spec.mutations[0].applyConfiguration.expression', 'FieldValueRequired']]],
    [
      'params without a paramKind',
      { mutations: [apply('Object{metadata: Object.metadata{labels: params.data}}')] },
      [['spec.mutations[0].applyConfiguration.expression', 'FieldValueInvalid']],
    ],
    ['an unknown type', { mutations: [apply('Foo{}')] }, [['spec.mutations[0].applyConfiguration.expression', 'FieldValueInvalid']]],
  ])('%s', (_, spec, want) => {
    expect(pairs(validateMutatingAdmissionPolicy(map(spec)))).toEqual(want);
  });

  test('an expression the stored policy already had is not compiled again', () => {
    const bad = map({ mutations: [apply('Object{metadata: Object.metadata{labels: nosuch}}')] });
    expect(pairs(validateMutatingAdmissionPolicy(bad))).toEqual([['spec.mutations[0].applyConfiguration.expression', 'FieldValueInvalid']]);
    expect(validateMutatingAdmissionPolicy(bad, bad)).toEqual([]);
  });
});

describe('MutatingAdmissionPolicyBinding', () => {
  const binding = (spec: Any): Obj => ({ metadata: { name: 'b' }, spec: { policyName: 'demo', ...spec } });
  test.each([
    ['valid', {}, []],
    ['no policyName', { policyName: '' }, [['spec.policyName', 'FieldValueRequired']]],
    ['a paramRef without an action', { paramRef: { name: 'p' } }, [['spec.paramRef.parameterNotFoundAction', 'FieldValueRequired']]],
    [
      'DELETE in matchResources',
      { matchResources: match(['DELETE']) },
      [['spec.matchResources.resourceRules.operations', 'FieldValueNotSupported']],
    ],
  ])('%s', (_, spec, want) => {
    expect(pairs(validateMutatingAdmissionPolicyBinding(binding(spec)))).toEqual(want);
  });
});
