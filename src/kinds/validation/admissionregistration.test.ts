import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { isCELIdentifier, validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyBinding } from './admissionregistration';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

const rule = (over: Any = {}) => ({
  apiGroups: ['apps'],
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['deployments'],
  scope: '*',
  ...over,
});
const match = (over: Any = {}) => ({
  matchPolicy: 'Equivalent',
  namespaceSelector: {},
  objectSelector: {},
  resourceRules: [rule()],
  ...over,
});
const vap = (spec: Any): Obj => ({
  metadata: { name: 'demo' },
  spec: { failurePolicy: 'Fail', matchConstraints: match(), validations: [{ expression: 'object.spec.replicas <= 5' }], ...spec },
});

describe('ValidatingAdmissionPolicy', () => {
  const cases: [string, Any, string[][]][] = [
    ['valid', {}, []],
    [
      'valid with everything',
      {
        paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
        matchConditions: [
          { name: 'exclude-leases', expression: 'true' },
          { name: 'example.com/x', expression: 'true' },
        ],
        variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
        validations: [{ expression: 'variables.replicas <= 5', message: 'too many', reason: 'Forbidden', messageExpression: '"x"' }],
        auditAnnotations: [{ key: 'high-replica-count', valueExpression: '"n"' }],
        matchConstraints: match({
          resourceRules: [rule({ resources: ['pods', 'pods/status', '*/scale'], operations: ['*'], resourceNames: ['a'] })],
        }),
      },
      [],
    ],
    ['only audit annotations', { validations: [], auditAnnotations: [{ key: 'k', valueExpression: '"v"' }] }, []],
    [
      'neither validations nor annotations',
      { validations: [] },
      [
        ['spec.validations', 'FieldValueRequired'],
        ['spec.auditAnnotations', 'FieldValueRequired'],
      ],
    ],
    ['failure policy', { failurePolicy: 'Maybe' }, [['spec.failurePolicy', 'FieldValueNotSupported']]],
    ['failure policy missing', { failurePolicy: undefined }, [['spec.failurePolicy', 'FieldValueRequired']]],
    ['no matchConstraints', { matchConstraints: undefined }, [['spec.matchConstraints', 'FieldValueRequired']]],
    [
      'no resourceRules',
      { matchConstraints: match({ resourceRules: [] }) },
      [['spec.matchConstraints.resourceRules', 'FieldValueRequired']],
    ],
    [
      'bad match policy',
      { matchConstraints: match({ matchPolicy: 'Fuzzy' }) },
      [['spec.matchConstraints.matchPolicy', 'FieldValueNotSupported']],
    ],
    [
      'paramKind incomplete',
      { paramKind: {} },
      [
        ['spec.paramKind.apiVersion', 'FieldValueRequired'],
        ['spec.paramKind.kind', 'FieldValueRequired'],
      ],
    ],
    [
      'paramKind bad version',
      { paramKind: { apiVersion: 'example.com/', kind: 'X' } },
      [['spec.paramKind.apiVersion', 'FieldValueInvalid']],
    ],
    [
      'rule operations and scope',
      { matchConstraints: match({ resourceRules: [rule({ operations: ['*', 'CREATE', 'PATCH'], scope: 'Global' })] }) },
      [
        ['spec.matchConstraints.resourceRules[0].operations', 'FieldValueInvalid'],
        ['spec.matchConstraints.resourceRules[0].operations[2]', 'FieldValueNotSupported'],
        ['spec.matchConstraints.resourceRules[0].scope', 'FieldValueNotSupported'],
      ],
    ],
    [
      'rule lists empty',
      { matchConstraints: match({ resourceRules: [{ scope: '*' }] }) },
      [
        ['spec.matchConstraints.resourceRules[0].operations', 'FieldValueRequired'],
        ['spec.matchConstraints.resourceRules[0].apiGroups', 'FieldValueRequired'],
        ['spec.matchConstraints.resourceRules[0].apiVersions', 'FieldValueRequired'],
        ['spec.matchConstraints.resourceRules[0].resources', 'FieldValueRequired'],
      ],
    ],
    [
      'wildcards alone',
      {
        matchConstraints: match({
          resourceRules: [rule({ apiGroups: ['*', 'apps'], apiVersions: ['*', 'v1'], resources: ['*', 'pods'] })],
        }),
      },
      [
        ['spec.matchConstraints.resourceRules[0].apiGroups', 'FieldValueInvalid'],
        ['spec.matchConstraints.resourceRules[0].apiVersions', 'FieldValueInvalid'],
        ['spec.matchConstraints.resourceRules[0].resources', 'FieldValueInvalid'],
      ],
    ],
    [
      'overlapping subresource wildcards',
      { matchConstraints: match({ resourceRules: [rule({ resources: ['pods/*', 'pods/log', '*/*'] })] }) },
      [
        ['spec.matchConstraints.resourceRules[0].resources[1]', 'FieldValueInvalid'],
        ['spec.matchConstraints.resourceRules[0].resources', 'FieldValueInvalid'],
      ],
    ],
    [
      'resource names',
      { matchConstraints: match({ resourceRules: [rule({ resourceNames: ['a/b', 'x', 'x'] })] }) },
      [
        ['spec.matchConstraints.resourceRules[0].resourceNames[0]', 'FieldValueInvalid'],
        ['spec.matchConstraints.resourceRules[0].resourceNames[2]', 'FieldValueDuplicate'],
      ],
    ],
    [
      'match conditions',
      {
        matchConditions: [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: ' ' },
          { name: 'bad name!', expression: 'true' },
          { expression: 'true' },
        ],
      },
      [
        ['spec.matchConditions[1].expression', 'FieldValueRequired'],
        ['spec.matchConditions[1].name', 'FieldValueDuplicate'],
        ['spec.matchConditions[2].name', 'FieldValueInvalid'],
        ['spec.matchConditions[3].name', 'FieldValueRequired'],
      ],
    ],
    [
      'too many match conditions',
      { matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) },
      [['spec.matchConditions', 'FieldValueTooMany']],
    ],
    [
      'validations',
      {
        validations: [
          { expression: '' },
          { expression: 'true', message: 'line\nbreak' },
          { expression: 'true', message: '  ' },
          { expression: 'true', reason: 'NotFound' },
          { expression: 'true', messageExpression: '  ' },
        ],
      },
      [
        ['spec.validations[0].expression', 'FieldValueRequired'],
        ['spec.validations[1].message', 'FieldValueInvalid'],
        ['spec.validations[2].message', 'FieldValueInvalid'],
        ['spec.validations[3].reason', 'FieldValueNotSupported'],
        ['spec.validations[4].messageExpression', 'FieldValueInvalid'],
      ],
    ],
    [
      'audit annotations',
      {
        auditAnnotations: [
          { key: 'a', valueExpression: '"x"' },
          { key: 'a', valueExpression: '"x"' },
          { key: 'bad key!', valueExpression: '"x"' },
          { key: 'k'.repeat(64), valueExpression: '"x"' },
          { key: 'b', valueExpression: '' },
          { key: 'c', valueExpression: `"${'x'.repeat(5 * 1024)}"` },
        ],
      },
      [
        ['spec.auditAnnotations[1].key', 'FieldValueDuplicate'],
        ['spec.auditAnnotations[2].key', 'FieldValueInvalid'],
        ['spec.auditAnnotations[3].key', 'FieldValueInvalid'],
        ['spec.auditAnnotations[4].valueExpression', 'FieldValueRequired'],
        ['spec.auditAnnotations[5].valueExpression', 'FieldValueRequired'],
      ],
    ],
    [
      'variables',
      {
        variables: [
          { name: 'a', expression: '1' },
          { name: 'a', expression: '2' },
          { name: '1x', expression: '3' },
          { name: 'in', expression: '4' },
          { name: '', expression: '' },
        ],
      },
      [
        ['spec.variables[1].name', 'FieldValueDuplicate'],
        ['spec.variables[2].name', 'FieldValueInvalid'],
        ['spec.variables[3].name', 'FieldValueInvalid'],
        ['spec.variables[4].name', 'FieldValueRequired'],
        ['spec.variables[4].expression', 'FieldValueRequired'],
      ],
    ],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(validateValidatingAdmissionPolicy(vap(spec)))).toEqual(want);
  });

  test('messages', () => {
    const errs = validateValidatingAdmissionPolicy(
      vap({ validations: [{ expression: 'true', message: 'a\nb' }], auditAnnotations: [{ key: 'bad key!', valueExpression: '"x"' }] }),
    );
    expect(errs.map((e) => `${e.field}: ${fieldErrorText(e)}`)).toEqual([
      'spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks',
      `spec.auditAnnotations[0].key: Invalid value: "demo/bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ]);
    const [none, none2] = validateValidatingAdmissionPolicy(vap({ validations: [] }));
    expect(fieldErrorText(none!)).toBe('Required value: validations or auditAnnotations must contain at least one item');
    expect(none2!.field).toBe('spec.auditAnnotations');
  });

  test('CEL identifiers', () => {
    expect(isCELIdentifier('_a1')).toBe(true);
    expect(isCELIdentifier('namespace')).toBe(false);
    expect(isCELIdentifier('a-b')).toBe(false);
  });
});

const binding = (spec: Any): Obj => ({ metadata: { name: 'b' }, spec: { policyName: 'demo', validationActions: ['Deny'], ...spec } });

describe('ValidatingAdmissionPolicyBinding', () => {
  const cases: [string, Any, string[][]][] = [
    ['valid', {}, []],
    [
      'valid with params',
      { paramRef: { name: 'p', namespace: 'default', parameterNotFoundAction: 'Deny' }, validationActions: ['Warn', 'Audit'] },
      [],
    ],
    [
      'valid selector param',
      { paramRef: { selector: {}, parameterNotFoundAction: 'Allow' }, matchResources: match({ resourceRules: [] }) },
      [],
    ],
    ['no policy', { policyName: '' }, [['spec.policyName', 'FieldValueRequired']]],
    ['bad policy name', { policyName: 'Demo!' }, [['spec.policyName', 'FieldValueInvalid']]],
    [
      'name and selector',
      { paramRef: { name: 'p', selector: {}, parameterNotFoundAction: 'Deny' } },
      [
        ['spec.paramRef.name', 'FieldValueForbidden'],
        ['spec.paramRef.selector', 'FieldValueForbidden'],
      ],
    ],
    [
      'neither name nor selector, no action',
      { paramRef: {} },
      [
        ['spec.paramRef', 'FieldValueRequired'],
        ['spec.paramRef.parameterNotFoundAction', 'FieldValueRequired'],
      ],
    ],
    [
      'bad action',
      { paramRef: { name: 'p', parameterNotFoundAction: 'Ignore' } },
      [['spec.paramRef.parameterNotFoundAction', 'FieldValueNotSupported']],
    ],
    ['no validation actions', { validationActions: [] }, [['spec.validationActions', 'FieldValueRequired']]],
    [
      'bad, duplicate, Deny with Warn',
      { validationActions: ['Deny', 'Warn', 'Deny', 'Log'] },
      [
        ['spec.validationActions[2]', 'FieldValueDuplicate'],
        ['spec.validationActions[3]', 'FieldValueNotSupported'],
        ['spec.validationActions', 'FieldValueInvalid'],
      ],
    ],
    [
      'match resources keep the reference path',
      { matchResources: match({ matchPolicy: 'Fuzzy', resourceRules: [rule({ scope: 'Global' })] }) },
      [
        ['spec.matchResouces.matchPolicy', 'FieldValueNotSupported'],
        ['spec.matchResouces.resourceRules[0].scope', 'FieldValueNotSupported'],
      ],
    ],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(validateValidatingAdmissionPolicyBinding(binding(spec)))).toEqual(want);
  });

  test('messages', () => {
    const errs = validateValidatingAdmissionPolicyBinding(
      binding({ validationActions: ['Deny', 'Warn'], paramRef: { name: 'p', parameterNotFoundAction: 'x' } }),
    );
    expect(errs.map((e) => [e.field, e.detail, String(e.badValue)])).toEqual([
      ['spec.paramRef.parameterNotFoundAction', 'supported values: "Deny", "Allow"', 'x'],
      [
        'spec.validationActions',
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
        '[]admissionregistration.ValidationAction{"Deny", "Warn"}',
      ],
    ]);
  });
});
