import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { networkPolicy, validateNetworkPolicySpec } from './networking';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

describe('NetworkPolicy', () => {
  const cases: [string, Any, string[][]][] = [
    ['deny all', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }, []],
    [
      'full',
      {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [
          {
            from: [
              { ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } },
              { namespaceSelector: {}, podSelector: { matchLabels: { a: 'b' } } },
            ],
            ports: [{ protocol: 'TCP', port: 6379 }, { port: 'http' }, { protocol: 'UDP', port: 32000, endPort: 32768 }],
          },
        ],
        egress: [{ to: [{ ipBlock: { cidr: '2001:db8::/32' } }], ports: [{ protocol: 'SCTP' }] }],
      },
      [],
    ],
    [
      'bad pod selector',
      { podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      [['spec.podSelector.matchExpressions[0].values', 'FieldValueRequired']],
    ],
    ['bad policy type', { podSelector: {}, policyTypes: ['Ingress', 'Sideways'] }, [['spec.policyTypes[1]', 'FieldValueNotSupported']]],
    ['three policy types', { podSelector: {}, policyTypes: ['Ingress', 'Egress', 'Ingress'] }, [['spec.policyTypes', 'FieldValueInvalid']]],
    [
      'bad protocol',
      { podSelector: {}, ingress: [{ ports: [{ protocol: 'ICMP' }] }] },
      [['spec.ingress[0].ports[0].protocol', 'FieldValueNotSupported']],
    ],
    ['bad port number', { podSelector: {}, ingress: [{ ports: [{ port: 0 }] }] }, [['spec.ingress[0].ports[0].port', 'FieldValueInvalid']]],
    [
      'bad port name',
      { podSelector: {}, ingress: [{ ports: [{ port: 'HTTP' }] }] },
      [['spec.ingress[0].ports[0].port', 'FieldValueInvalid']],
    ],
    [
      'endPort below port',
      { podSelector: {}, egress: [{ ports: [{ port: 100, endPort: 99 }] }] },
      [['spec.egress[0].ports[0].endPort', 'FieldValueInvalid']],
    ],
    [
      'endPort with named port',
      { podSelector: {}, egress: [{ ports: [{ port: 'dns', endPort: 99 }] }] },
      [['spec.egress[0].ports[0].endPort', 'FieldValueInvalid']],
    ],
    [
      'endPort without port',
      { podSelector: {}, egress: [{ ports: [{ endPort: 99 }] }] },
      [['spec.egress[0].ports[0].endPort', 'FieldValueInvalid']],
    ],
    ['empty peer', { podSelector: {}, ingress: [{ from: [{}] }] }, [['spec.ingress[0].from[0]', 'FieldValueRequired']]],
    [
      'ipBlock with another peer',
      { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] },
      [['spec.ingress[0].from[0]', 'FieldValueForbidden']],
    ],
    [
      'ipBlock without cidr',
      { podSelector: {}, egress: [{ to: [{ ipBlock: {} }] }] },
      [['spec.egress[0].to[0].ipBlock.cidr', 'FieldValueRequired']],
    ],
    [
      'ipBlock bad cidr',
      { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0' } }] }] },
      [['spec.egress[0].to[0].ipBlock.cidr', 'FieldValueInvalid']],
    ],
    [
      'except outside cidr',
      { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24', '10.0.0.0/16', 'bad'] } }] }] },
      [
        ['spec.egress[0].to[0].ipBlock.except[0]', 'FieldValueInvalid'],
        ['spec.egress[0].to[0].ipBlock.except[1]', 'FieldValueInvalid'],
        ['spec.egress[0].to[0].ipBlock.except[2]', 'FieldValueInvalid'],
      ],
    ],
  ];
  test.each(cases)('%s', (_n, spec, want) => {
    expect(pairs(validateNetworkPolicySpec(spec))).toEqual(want);
  });

  test('messages', () => {
    const errs = validateNetworkPolicySpec({
      podSelector: {},
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }], ports: [{ port: 100, endPort: 99 }] }],
    });
    expect(errs.map((e) => `${e.field}: ${fieldErrorText(e)}`)).toEqual([
      // The reference names the port (100) as the bad value.
      'spec.egress[0].ports[0].endPort: Invalid value: 100: must be greater than or equal to `port`',
      'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
    ]);
  });

  test('on update the stored CIDRs stay acceptable, and validate() defers to validateUpdate()', () => {
    const spec = { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.1/8' } }] }] };
    const stored: Obj = { metadata: { name: 'np', resourceVersion: '5' }, spec };
    expect(networkPolicy.validate!(stored)).toEqual([]);
    expect(networkPolicy.validateUpdate!(stored, stored)).toEqual([]);
    const created: Obj = { metadata: { name: 'np' }, spec };
    expect(pairs(networkPolicy.validate!(created))).toEqual([['spec.ingress[0].from[0].ipBlock.cidr', 'FieldValueInvalid']]);
  });
});
