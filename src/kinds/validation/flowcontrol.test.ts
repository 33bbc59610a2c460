import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { nonResourceURLPath, validateFlowSchema, validatePriorityLevelConfiguration } from './flowcontrol';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

const rule = (over: Any = {}) => ({
  subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }],
  resourceRules: [{ verbs: ['get'], apiGroups: ['*'], resources: ['pods'], namespaces: ['*'] }],
  ...over,
});
const fs = (spec: Any, name = 'fs'): Obj => ({
  metadata: { name },
  spec: { matchingPrecedence: 1000, priorityLevelConfiguration: { name: 'global-default' }, ...spec },
});

describe('FlowSchema', () => {
  const cases: [string, Any, string[][]][] = [
    ['valid', { rules: [rule()], distinguisherMethod: { type: 'ByUser' } }, []],
    ['no rules is valid', {}, []],
    ['precedence 0', { matchingPrecedence: 0 }, [['spec.matchingPrecedence', 'FieldValueInvalid']]],
    ['precedence 10001', { matchingPrecedence: 10001 }, [['spec.matchingPrecedence', 'FieldValueInvalid']]],
    ['precedence 1 outside exempt', { matchingPrecedence: 1 }, [['spec.matchingPrecedence', 'FieldValueInvalid']]],
    ['no priority level', { priorityLevelConfiguration: {} }, [['spec.priorityLevelConfiguration.name', 'FieldValueRequired']]],
    [
      'bad priority level name',
      { priorityLevelConfiguration: { name: 'A_B' } },
      [['spec.priorityLevelConfiguration.name', 'FieldValueInvalid']],
    ],
    ['bad distinguisher', { distinguisherMethod: { type: 'ByGroup' } }, [['spec.distinguisherMethod.type', 'FieldValueNotSupported']]],
    ['no subjects', { rules: [rule({ subjects: [] })] }, [['spec.rules[0].subjects', 'FieldValueRequired']]],
    ['no rules of either kind', { rules: [rule({ resourceRules: [] })] }, [['spec.rules[0]', 'FieldValueRequired']]],
    [
      'bad subject kind',
      { rules: [rule({ subjects: [{ kind: 'Robot' }] })] },
      [['spec.rules[0].subjects[0].kind', 'FieldValueNotSupported']],
    ],
    [
      'group kind without group',
      { rules: [rule({ subjects: [{ kind: 'Group', user: { name: 'u' } }] })] },
      [
        ['spec.rules[0].subjects[0].group', 'FieldValueRequired'],
        ['spec.rules[0].subjects[0].user', 'FieldValueForbidden'],
      ],
    ],
    [
      'group without name',
      { rules: [rule({ subjects: [{ kind: 'Group', group: {} }] })] },
      [['spec.rules[0].subjects[0].group.name', 'FieldValueRequired']],
    ],
    [
      'service account without namespace',
      { rules: [rule({ subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: '*' } }] })] },
      [['spec.rules[0].subjects[0].serviceAccount.namespace', 'FieldValueRequired']],
    ],
    [
      'service account bad name',
      { rules: [rule({ subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: 'A!', namespace: 'ns' } }] })] },
      [['spec.rules[0].subjects[0].serviceAccount.name', 'FieldValueInvalid']],
    ],
    [
      'user without name',
      { rules: [rule({ subjects: [{ kind: 'User', user: {} }] })] },
      [['spec.rules[0].subjects[0].user.name', 'FieldValueRequired']],
    ],
    [
      'wildcard verb with others',
      { rules: [rule({ resourceRules: [{ verbs: ['*', 'get'], apiGroups: ['*'], resources: ['*'], clusterScope: true }] })] },
      [['spec.rules[0].resourceRules[0].verbs', 'FieldValueInvalid']],
    ],
    [
      'unknown verb',
      { rules: [rule({ resourceRules: [{ verbs: ['fly'], apiGroups: ['*'], resources: ['*'], clusterScope: true }] })] },
      [['spec.rules[0].resourceRules[0].verbs', 'FieldValueNotSupported']],
    ],
    [
      'wildcard group and resource with others, namespaces missing',
      { rules: [rule({ resourceRules: [{ verbs: ['get'], apiGroups: ['*', 'apps'], resources: ['*', 'pods'] }] })] },
      [
        ['spec.rules[0].resourceRules[0].apiGroups', 'FieldValueInvalid'],
        ['spec.rules[0].resourceRules[0].resources', 'FieldValueInvalid'],
        ['spec.rules[0].resourceRules[0].namespaces', 'FieldValueRequired'],
      ],
    ],
    [
      'empty lists',
      { rules: [rule({ resourceRules: [{ clusterScope: true }] })] },
      [
        ['spec.rules[0].resourceRules[0].verbs', 'FieldValueRequired'],
        ['spec.rules[0].resourceRules[0].apiGroups', 'FieldValueRequired'],
        ['spec.rules[0].resourceRules[0].resources', 'FieldValueRequired'],
      ],
    ],
    [
      'namespace wildcard with others and bad namespace',
      {
        rules: [
          rule({
            resourceRules: [
              { verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['*', 'a'] },
              { verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['Bad'] },
            ],
          }),
        ],
      },
      [
        ['spec.rules[0].resourceRules[0].namespaces', 'FieldValueInvalid'],
        ['spec.rules[0].resourceRules[1].namespaces[0]', 'FieldValueInvalid'],
      ],
    ],
    [
      'non-resource rules',
      {
        rules: [
          rule({
            resourceRules: [],
            nonResourceRules: [
              { verbs: ['get'], nonResourceURLs: ['/healthz', '/hea', '/healthz/*'] },
              { verbs: ['get'], nonResourceURLs: ['/hea*'] },
              { verbs: ['get'], nonResourceURLs: ['*', '/a'] },
              { verbs: [], nonResourceURLs: [] },
            ],
          }),
        ],
      },
      [
        ['spec.rules[0].nonResourceRules[1].nonResourceURLs[0]', 'FieldValueInvalid'],
        ['spec.rules[0].nonResourceRules[2].nonResourceURLs', 'FieldValueInvalid'],
        ['spec.rules[0].nonResourceRules[3].verbs', 'FieldValueRequired'],
        ['spec.rules[0].nonResourceRules[3].nonResourceURLs', 'FieldValueRequired'],
      ],
    ],
  ];
  test.each(cases)('%s', (_name, spec, want) => {
    expect(pairs(validateFlowSchema(fs(spec)))).toEqual(want);
  });

  test('reference messages', () => {
    const errs = validateFlowSchema(
      fs({
        rules: [rule({ resourceRules: [{ verbs: ['*', 'get'], apiGroups: ['*'], resources: ['*'], clusterScope: true }] })],
        distinguisherMethod: { type: 'ByGroup' },
      }),
    );
    // Structs and slices carry the text Go's %#v prints (status.ts renders it).
    expect(errs.map((e) => [e.field, String(e.badValue), e.detail])).toEqual([
      ['spec.distinguisherMethod.type', 'flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}', 'supported values: "ByNamespace", "ByUser"'],
      ['spec.rules[0].resourceRules[0].verbs', '[]string{"*", "get"}', "if '*' is present, must not specify other verbs"],
    ]);
    const errs2 = validateFlowSchema(fs({ priorityLevelConfiguration: {} }));
    expect(fieldErrorText(errs2[0]!)).toBe('Required value: must reference a priority level');
  });

  test('the exempt schema may have precedence 1', () => {
    expect(validateFlowSchema(fs({ matchingPrecedence: 1 }, 'exempt'))).toEqual([]);
  });

  test('duplicate status condition types', () => {
    const o = fs({});
    o.status = { conditions: [{ type: 'Dangling' }, { type: 'Dangling' }, {}] };
    expect(pairs(validateFlowSchema(o))).toEqual([
      ['status.conditions[1].type', 'FieldValueDuplicate'],
      ['status.conditions[2].type', 'FieldValueRequired'],
    ]);
  });

  test('non-resource URL forms', () => {
    const ok = ['/', '/healthz', '/hea', '/hea/*', '/healthz/*'];
    for (const u of ok) expect(nonResourceURLPath(u, 'f')).toEqual([]);
    const bad: [string, string][] = [
      ['', 'must not be empty'],
      ['healthz', 'must start with slash'],
      ['/a b', 'must not contain white-space'],
      ['//a', 'must not contain double slash'],
      ['/hea*', 'wildcard can only do suffix matching'],
      ['/*/a/*', 'wildcard can only do suffix matching'],
    ];
    for (const [u, msg] of bad) expect(nonResourceURLPath(u, 'f').map((e) => e.detail)).toEqual([msg]);
  });
});

const plc = (spec: Any, name = 'pl'): Obj => ({ metadata: { name }, spec });
const queuing = { queues: 64, handSize: 8, queueLengthLimit: 50 };

describe('PriorityLevelConfiguration', () => {
  const cases: [string, Any, string[][]][] = [
    ['limited queue', { type: 'Limited', limited: { nominalConcurrencyShares: 30, limitResponse: { type: 'Queue', queuing } } }, []],
    [
      'limited reject, zero shares kept',
      { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } },
      [],
    ],
    ['unknown type', { type: 'Other' }, [['spec.type', 'FieldValueNotSupported']]],
    ['no type', {}, [['spec.type', 'FieldValueNotSupported']]],
    ['Exempt outside exempt', { type: 'Exempt' }, [['spec.type', 'FieldValueInvalid']]],
    ['limited missing', { type: 'Limited' }, [['spec.limited', 'FieldValueRequired']]],
    [
      'exempt with Limited',
      { type: 'Limited', exempt: {}, limited: { limitResponse: { type: 'Reject' } } },
      [['spec.exempt', 'FieldValueForbidden']],
    ],
    [
      'negative shares',
      { type: 'Limited', limited: { nominalConcurrencyShares: -1, limitResponse: { type: 'Reject' } } },
      [['spec.limited.nominalConcurrencyShares', 'FieldValueInvalid']],
    ],
    ['no limitResponse type', { type: 'Limited', limited: {} }, [['spec.limited.limitResponse.type', 'FieldValueNotSupported']]],
    [
      'queue without queuing',
      { type: 'Limited', limited: { limitResponse: { type: 'Queue' } } },
      [['spec.limited.limitResponse.queuing', 'FieldValueRequired']],
    ],
    [
      'reject with queuing',
      { type: 'Limited', limited: { limitResponse: { type: 'Reject', queuing } } },
      [['spec.limited.limitResponse.queuing', 'FieldValueForbidden']],
    ],
    [
      'bad queuing numbers',
      { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 0, queueLengthLimit: 0 } } } },
      [
        ['spec.limited.limitResponse.queuing.queueLengthLimit', 'FieldValueInvalid'],
        ['spec.limited.limitResponse.queuing.queues', 'FieldValueInvalid'],
        ['spec.limited.limitResponse.queuing.handSize', 'FieldValueInvalid'],
      ],
    ],
    [
      'hand larger than deck',
      { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5, queueLengthLimit: 1 } } } },
      [['spec.limited.limitResponse.queuing.handSize', 'FieldValueInvalid']],
    ],
    [
      'too much entropy',
      {
        type: 'Limited',
        limited: { limitResponse: { type: 'Queue', queuing: { queues: 10_000_000, handSize: 10, queueLengthLimit: 1 } } },
      },
      [['spec.limited.limitResponse.queuing.handSize', 'FieldValueInvalid']],
    ],
    [
      'too many queues',
      { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 10_000_001, handSize: 1, queueLengthLimit: 1 } } } },
      [['spec.limited.limitResponse.queuing.queues', 'FieldValueInvalid']],
    ],
    [
      'percentages',
      { type: 'Limited', limited: { limitResponse: { type: 'Reject' }, lendablePercent: 101, borrowingLimitPercent: -1 } },
      [
        ['spec.limited.lendablePercent', 'FieldValueInvalid'],
        ['spec.limited.borrowingLimitPercent', 'FieldValueInvalid'],
      ],
    ],
  ];
  test.each(cases)('%s', (_name, spec, want) => {
    expect(pairs(validatePriorityLevelConfiguration(plc(spec)))).toEqual(want);
  });

  test('exempt level', () => {
    expect(validatePriorityLevelConfiguration(plc({ type: 'Exempt', exempt: { nominalConcurrencyShares: 0 } }, 'exempt'))).toEqual([]);
    expect(
      pairs(validatePriorityLevelConfiguration(plc({ type: 'Limited', limited: { limitResponse: { type: 'Reject' } } }, 'exempt'))),
    ).toEqual([['spec.type', 'FieldValueInvalid']]);
    expect(
      pairs(validatePriorityLevelConfiguration(plc({ type: 'Exempt', limited: {}, exempt: { nominalConcurrencyShares: -1 } }, 'exempt'))),
    ).toEqual([
      ['spec.limited', 'FieldValueForbidden'],
      ['spec.exempt.nominalConcurrencyShares', 'FieldValueInvalid'],
    ]);
  });

  test('reference messages', () => {
    const errs = validatePriorityLevelConfiguration(
      plc({ type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5, queueLengthLimit: 1 } } } }),
    );
    expect(fieldErrorText(errs[0]!)).toBe('Invalid value: 5: should not be greater than queues (4)');
    const e2 = validatePriorityLevelConfiguration(plc({ type: 'Limited', limited: {} }));
    expect(fieldErrorText(e2[0]!)).toBe('Unsupported value: "": supported values: "Queue", "Reject"');
  });
});
