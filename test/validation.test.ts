/**
 * Kind-specific validation over HTTP against the real server: per kind one valid object (201) and a
 * table of invalid ones (422 Invalid with the reference's causes: field path and reason), plus the
 * rules that only apply on update (immutable fields).
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
type Any = any;

const srv = serverForFile({ args: [STATIC_WORKLOADS] });

interface KindCase {
  kind: string;
  group: string;
  /** Collection path. */
  path: string;
  valid: Any;
  /** [description, body, expected causes as [field, reason]] */
  invalid: [string, Any, [string, string][]][];
}

const NS = '/api/v1/namespaces/default';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const container = (over: Any = {}) => ({ name: 'app', image: 'nginx:1.27', ...over });
const podTemplate = (labels: Any = { app: 'web' }, spec: Any = {}) => ({
  metadata: { labels },
  spec: { containers: [container()], ...spec },
});
const subjects = [{ kind: 'Group', group: { name: 'system:authenticated' } }];
const resourceRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], namespaces: ['*'] };
const namedRule = (over: Any = {}) => ({
  apiGroups: ['apps'],
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['deployments'],
  ...over,
});

const KINDS: KindCase[] = [
  {
    kind: 'FlowSchema',
    group: 'flowcontrol.apiserver.svc.io',
    path: '/apis/flowcontrol.apiserver.svc.io/v1/flowschemas',
    valid: {
      spec: {
        priorityLevelConfiguration: { name: 'workload-low' },
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          { subjects, resourceRules: [resourceRule], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/healthz', '/healthz/*'] }] },
        ],
      },
    },
    invalid: [
      [
        'matchingPrecedence out of range',
        { spec: { matchingPrecedence: 10001, priorityLevelConfiguration: { name: 'p' } } },
        [['spec.matchingPrecedence', 'FieldValueInvalid']],
      ],
      ['no priority level', { spec: { priorityLevelConfiguration: {} } }, [['spec.priorityLevelConfiguration.name', 'FieldValueRequired']]],
      [
        'bad distinguisher',
        { spec: { priorityLevelConfiguration: { name: 'p' }, distinguisherMethod: { type: 'ByGroup' } } },
        [['spec.distinguisherMethod.type', 'FieldValueNotSupported']],
      ],
      [
        'rule without subjects or rules',
        { spec: { priorityLevelConfiguration: { name: 'p' }, rules: [{ subjects: [] }] } },
        [
          ['spec.rules[0].subjects', 'FieldValueRequired'],
          ['spec.rules[0]', 'FieldValueRequired'],
        ],
      ],
      [
        'subject kind and member',
        {
          spec: {
            priorityLevelConfiguration: { name: 'p' },
            rules: [{ subjects: [{ kind: 'User', group: { name: 'g' } }], resourceRules: [resourceRule] }],
          },
        },
        [
          ['spec.rules[0].subjects[0].user', 'FieldValueRequired'],
          ['spec.rules[0].subjects[0].group', 'FieldValueForbidden'],
        ],
      ],
      [
        'wildcards not alone, namespaces missing',
        {
          spec: {
            priorityLevelConfiguration: { name: 'p' },
            rules: [{ subjects, resourceRules: [{ verbs: ['*', 'get'], apiGroups: ['*', 'apps'], resources: ['*', 'pods'] }] }],
          },
        },
        [
          ['spec.rules[0].resourceRules[0].verbs', 'FieldValueInvalid'],
          ['spec.rules[0].resourceRules[0].apiGroups', 'FieldValueInvalid'],
          ['spec.rules[0].resourceRules[0].resources', 'FieldValueInvalid'],
          ['spec.rules[0].resourceRules[0].namespaces', 'FieldValueRequired'],
        ],
      ],
      [
        'non-resource URLs',
        {
          spec: {
            priorityLevelConfiguration: { name: 'p' },
            rules: [
              {
                subjects,
                nonResourceRules: [
                  { verbs: ['get'], nonResourceURLs: ['/hea*'] },
                  { verbs: ['get'], nonResourceURLs: ['*', '/x'] },
                ],
              },
            ],
          },
        },
        [
          ['spec.rules[0].nonResourceRules[0].nonResourceURLs[0]', 'FieldValueInvalid'],
          ['spec.rules[0].nonResourceRules[1].nonResourceURLs', 'FieldValueInvalid'],
        ],
      ],
      [
        'service account subject',
        {
          spec: {
            priorityLevelConfiguration: { name: 'p' },
            rules: [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: {} }], resourceRules: [resourceRule] }],
          },
        },
        [
          ['spec.rules[0].subjects[0].serviceAccount.name', 'FieldValueRequired'],
          ['spec.rules[0].subjects[0].serviceAccount.namespace', 'FieldValueRequired'],
        ],
      ],
    ],
  },
  {
    kind: 'PriorityLevelConfiguration',
    group: 'flowcontrol.apiserver.svc.io',
    path: '/apis/flowcontrol.apiserver.svc.io/v1/prioritylevelconfigurations',
    valid: {
      spec: {
        type: 'Limited',
        limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4 } } },
      },
    },
    invalid: [
      ['bad type', { spec: { type: 'Unlimited' } }, [['spec.type', 'FieldValueNotSupported']]],
      ['Limited without limited', { spec: { type: 'Limited' } }, [['spec.limited', 'FieldValueRequired']]],
      [
        'negative shares, bad response type',
        { spec: { type: 'Limited', limited: { nominalConcurrencyShares: -1, limitResponse: { type: 'Drop' } } } },
        [
          ['spec.limited.nominalConcurrencyShares', 'FieldValueInvalid'],
          ['spec.limited.limitResponse.type', 'FieldValueNotSupported'],
        ],
      ],
      [
        'queuing',
        {
          spec: {
            type: 'Limited',
            limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 8, queueLengthLimit: -1 } } },
          },
        },
        [
          ['spec.limited.limitResponse.queuing.queueLengthLimit', 'FieldValueInvalid'],
          ['spec.limited.limitResponse.queuing.handSize', 'FieldValueInvalid'],
        ],
      ],
      [
        'Reject with queuing',
        { spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject', queuing: {} } } } },
        [['spec.limited.limitResponse.queuing', 'FieldValueForbidden']],
      ],
    ],
  },
  {
    kind: 'LimitRange',
    group: '',
    path: `${NS}/limitranges`,
    valid: {
      spec: {
        limits: [
          {
            type: 'Container',
            min: { cpu: '100m' },
            max: { cpu: '2', memory: '1Gi' },
            default: { cpu: '500m' },
            defaultRequest: { cpu: '200m' },
          },
        ],
      },
    },
    invalid: [
      ['no limits', { spec: {} }, [['spec.limits', 'FieldValueRequired']]],
      // Invalid, not Required: the reference runs the qualified-name check on the empty type.
      [
        'type missing',
        { spec: { limits: [{ max: { cpu: '1' } }] } },
        [
          ['spec.limits[0].type', 'FieldValueInvalid'],
          ['spec.limits[0].type', 'FieldValueInvalid'],
        ],
      ],
      ['type unknown', { spec: { limits: [{ type: 'Cluster' }] } }, [['spec.limits[0].type', 'FieldValueInvalid']]],
      [
        // defaultRequest is defaulted from default (SetDefaults_LimitRangeItem) before validation.
        'min above default above max',
        { spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' }, default: { cpu: '1500m' } }] } },
        [
          ['spec.limits[0].min[cpu]', 'FieldValueInvalid'],
          ['spec.limits[0].defaultRequest[cpu]', 'FieldValueInvalid'],
          ['spec.limits[0].defaultRequest[cpu]', 'FieldValueInvalid'],
          ['spec.limits[0].default[cpu]', 'FieldValueInvalid'],
          ['spec.limits[0].default[cpu]', 'FieldValueInvalid'],
        ],
      ],
    ],
  },
  {
    kind: 'ResourceQuota',
    group: '',
    path: `${NS}/resourcequotas`,
    valid: {
      spec: {
        hard: { pods: '10', 'requests.cpu': '4', 'requests.memory': '8Gi' },
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
    },
    invalid: [
      ['negative quantity', { spec: { hard: { 'requests.cpu': '-1' } } }, [['spec.hard[requests.cpu]', 'FieldValueInvalid']]],
      ['fractional count', { spec: { hard: { pods: '2500m' } } }, [['spec.hard[pods]', 'FieldValueInvalid']]],
      ['unsupported scope', { spec: { scopes: ['Weekend'] } }, [['spec.scopes', 'FieldValueInvalid']]],
      [
        'In without values',
        { spec: { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } } },
        [['spec.scopeSelector.matchExpressions.values', 'FieldValueRequired']],
      ],
      [
        'Exists with values',
        { spec: { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists', values: ['x'] }] } } },
        [['spec.scopeSelector.matchExpressions.values', 'FieldValueInvalid']],
      ],
    ],
  },
  {
    kind: 'NetworkPolicy',
    group: 'networking.svc.io',
    path: '/apis/networking.svc.io/v1/namespaces/default/networkpolicies',
    valid: {
      spec: {
        podSelector: { matchLabels: { role: 'db' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }, { namespaceSelector: {} }],
            ports: [{ protocol: 'TCP', port: 6379 }],
          },
        ],
        egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 32000, endPort: 32768 }] }],
      },
    },
    invalid: [
      ['policy type', { spec: { podSelector: {}, policyTypes: ['Inbound'] } }, [['spec.policyTypes[0]', 'FieldValueNotSupported']]],
      [
        'protocol',
        { spec: { podSelector: {}, ingress: [{ ports: [{ protocol: 'ICMP' }] }] } },
        [['spec.ingress[0].ports[0].protocol', 'FieldValueNotSupported']],
      ],
      [
        'endPort rules',
        { spec: { podSelector: {}, egress: [{ ports: [{ port: 'dns', endPort: 60 }, { endPort: 60 }, { port: 100, endPort: 99 }] }] } },
        [
          ['spec.egress[0].ports[0].endPort', 'FieldValueInvalid'],
          ['spec.egress[0].ports[1].endPort', 'FieldValueInvalid'],
          ['spec.egress[0].ports[2].endPort', 'FieldValueInvalid'],
        ],
      ],
      [
        'bad cidr',
        { spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.1/8' } }] }] } },
        [['spec.ingress[0].from[0].ipBlock.cidr', 'FieldValueInvalid']],
      ],
      [
        'except outside cidr',
        { spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['192.168.0.0/24'] } }] }] } },
        [['spec.ingress[0].from[0].ipBlock.except[0]', 'FieldValueInvalid']],
      ],
      [
        'ipBlock with selector',
        { spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16' }, namespaceSelector: {} }] }] } },
        [['spec.ingress[0].from[0]', 'FieldValueForbidden']],
      ],
      [
        'label selector',
        { spec: { podSelector: { matchExpressions: [{ key: 'role', operator: 'Exists', values: ['x'] }] } } },
        [['spec.podSelector.matchExpressions[0].values', 'FieldValueForbidden']],
      ],
    ],
  },
  {
    kind: 'PodDisruptionBudget',
    group: 'policy',
    path: '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
    valid: { spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' } },
    invalid: [
      ['both set', { spec: { minAvailable: 1, maxUnavailable: 1 } }, [['spec', 'FieldValueInvalid']]],
      ['negative', { spec: { maxUnavailable: -1 } }, [['spec.maxUnavailable', 'FieldValueInvalid']]],
      ['not a percent', { spec: { minAvailable: 'most' } }, [['spec.minAvailable', 'FieldValueInvalid']]],
      ['over 100%', { spec: { minAvailable: '101%' } }, [['spec.minAvailable', 'FieldValueInvalid']]],
      [
        'selector',
        { spec: { selector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } } },
        [['spec.selector.matchExpressions[0].operator', 'FieldValueInvalid']],
      ],
      [
        'eviction policy',
        { spec: { unhealthyPodEvictionPolicy: 'Never' } },
        [['spec.unhealthyPodEvictionPolicy', 'FieldValueNotSupported']],
      ],
    ],
  },
  {
    kind: 'ValidatingAdmissionPolicy',
    group: 'admissionregistration.svc.io',
    path: '/apis/admissionregistration.svc.io/v1/validatingadmissionpolicies',
    valid: {
      spec: {
        matchConstraints: { resourceRules: [namedRule()] },
        matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
        variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
        validations: [{ expression: 'variables.replicas <= 5', reason: 'Invalid', message: 'at most 5 replicas' }],
        auditAnnotations: [{ key: 'high-replica-count', valueExpression: "'replicas: ' + string(object.spec.replicas)" }],
      },
    },
    invalid: [
      [
        'no validations or annotations',
        { spec: { matchConstraints: { resourceRules: [namedRule()] } } },
        [
          ['spec.validations', 'FieldValueRequired'],
          ['spec.auditAnnotations', 'FieldValueRequired'],
        ],
      ],
      ['no matchConstraints', { spec: { validations: [{ expression: 'true' }] } }, [['spec.matchConstraints', 'FieldValueRequired']]],
      [
        'no resource rules',
        { spec: { matchConstraints: {}, validations: [{ expression: 'true' }] } },
        [['spec.matchConstraints.resourceRules', 'FieldValueRequired']],
      ],
      [
        'failure policy, reason, message',
        {
          spec: {
            failurePolicy: 'Retry',
            matchConstraints: { resourceRules: [namedRule()] },
            validations: [{ expression: ' ', reason: 'Conflict', message: 'two\nlines' }],
          },
        },
        [
          ['spec.failurePolicy', 'FieldValueNotSupported'],
          ['spec.validations[0].expression', 'FieldValueRequired'],
          ['spec.validations[0].message', 'FieldValueInvalid'],
          ['spec.validations[0].reason', 'FieldValueNotSupported'],
        ],
      ],
      [
        'paramKind',
        {
          spec: { paramKind: { kind: 'Limit' }, matchConstraints: { resourceRules: [namedRule()] }, validations: [{ expression: 'true' }] },
        },
        [['spec.paramKind.apiVersion', 'FieldValueRequired']],
      ],
      [
        'rule operations and scope',
        {
          spec: {
            matchConstraints: { resourceRules: [namedRule({ operations: ['*', 'PATCH'], scope: 'Everywhere' })] },
            validations: [{ expression: 'true' }],
          },
        },
        [
          ['spec.matchConstraints.resourceRules[0].operations', 'FieldValueInvalid'],
          ['spec.matchConstraints.resourceRules[0].operations[1]', 'FieldValueNotSupported'],
          ['spec.matchConstraints.resourceRules[0].scope', 'FieldValueNotSupported'],
        ],
      ],
      [
        'audit annotation keys',
        {
          spec: {
            matchConstraints: { resourceRules: [namedRule()] },
            auditAnnotations: [
              { key: 'k', valueExpression: "'a'" },
              { key: 'k', valueExpression: "'b'" },
              { key: 'x'.repeat(64), valueExpression: "'c'" },
              { key: 'big', valueExpression: `'${'v'.repeat(5200)}'` },
            ],
          },
        },
        [
          ['spec.auditAnnotations[1].key', 'FieldValueDuplicate'],
          ['spec.auditAnnotations[2].key', 'FieldValueInvalid'],
          ['spec.auditAnnotations[3].valueExpression', 'FieldValueRequired'],
        ],
      ],
      [
        'match conditions and variables',
        {
          spec: {
            matchConstraints: { resourceRules: [namedRule()] },
            matchConditions: [
              { name: 'a', expression: 'true' },
              { name: 'a', expression: '' },
            ],
            variables: [
              { name: 'v', expression: '1' },
              { name: 'v', expression: '2' },
              { name: 'not valid', expression: '3' },
            ],
            validations: [{ expression: 'true' }],
          },
        },
        [
          ['spec.matchConditions[1].expression', 'FieldValueRequired'],
          ['spec.matchConditions[1].name', 'FieldValueDuplicate'],
          ['spec.variables[1].name', 'FieldValueDuplicate'],
          ['spec.variables[2].name', 'FieldValueInvalid'],
        ],
      ],
      [
        'too many match conditions',
        {
          spec: {
            matchConstraints: { resourceRules: [namedRule()] },
            matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })),
            validations: [{ expression: 'true' }],
          },
        },
        [['spec.matchConditions', 'FieldValueTooMany']],
      ],
    ],
  },
  {
    kind: 'ValidatingAdmissionPolicyBinding',
    group: 'admissionregistration.svc.io',
    path: '/apis/admissionregistration.svc.io/v1/validatingadmissionpolicybindings',
    valid: {
      spec: {
        policyName: 'demo',
        validationActions: ['Deny', 'Audit'],
        paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' },
      },
    },
    invalid: [
      [
        'nothing',
        { spec: {} },
        [
          ['spec.policyName', 'FieldValueRequired'],
          ['spec.validationActions', 'FieldValueRequired'],
        ],
      ],
      [
        'paramRef name and selector, no action',
        { spec: { policyName: 'p', validationActions: ['Audit'], paramRef: { name: 'a', selector: {} } } },
        [
          ['spec.paramRef.name', 'FieldValueForbidden'],
          ['spec.paramRef.selector', 'FieldValueForbidden'],
          ['spec.paramRef.parameterNotFoundAction', 'FieldValueRequired'],
        ],
      ],
      [
        'paramRef neither, bad action',
        { spec: { policyName: 'p', validationActions: ['Audit'], paramRef: { parameterNotFoundAction: 'Skip' } } },
        [
          ['spec.paramRef', 'FieldValueRequired'],
          ['spec.paramRef.parameterNotFoundAction', 'FieldValueNotSupported'],
        ],
      ],
      [
        'Deny with Warn, duplicates, unknown',
        { spec: { policyName: 'p', validationActions: ['Deny', 'Warn', 'Warn', 'Log'] } },
        [
          ['spec.validationActions[2]', 'FieldValueDuplicate'],
          ['spec.validationActions[3]', 'FieldValueNotSupported'],
          ['spec.validationActions', 'FieldValueInvalid'],
        ],
      ],
    ],
  },
  {
    kind: 'Pod',
    group: '',
    path: `${NS}/pods`,
    valid: {
      spec: { containers: [container({ ports: [{ name: 'http', containerPort: 80 }] })], initContainers: [container({ name: 'init' })] },
    },
    invalid: [
      ['no containers', { spec: { containers: [] } }, [['spec.containers', 'FieldValueRequired']]],
      [
        'names and images',
        { spec: { containers: [container({ name: 'Web_1' }), { name: 'app' }, container()] } },
        [
          ['spec.containers[0].name', 'FieldValueInvalid'],
          ['spec.containers[1].image', 'FieldValueRequired'],
          ['spec.containers[2].name', 'FieldValueDuplicate'],
        ],
      ],
      [
        'ports',
        { spec: { containers: [container({ ports: [{ containerPort: 70000 }, { containerPort: 80, protocol: 'HTTP' }] })] } },
        [
          ['spec.containers[0].ports[0].containerPort', 'FieldValueInvalid'],
          ['spec.containers[0].ports[1].protocol', 'FieldValueNotSupported'],
        ],
      ],
      [
        'policies',
        { spec: { containers: [container()], restartPolicy: 'Sometimes', dnsPolicy: 'Google' } },
        [
          ['spec.restartPolicy', 'FieldValueNotSupported'],
          ['spec.dnsPolicy', 'FieldValueNotSupported'],
        ],
      ],
    ],
  },
  {
    kind: 'ConfigMap',
    group: '',
    path: `${NS}/configmaps`,
    valid: { data: { 'app.properties': 'a=b', KEY_1: 'v' }, binaryData: { 'logo.png': b64('png') } },
    invalid: [
      ['bad key', { data: { 'a/b': 'x' } }, [['data[a/b]', 'FieldValueInvalid']]],
      ['key in both', { data: { a: 'x' }, binaryData: { a: b64('y') } }, [['data[a]', 'FieldValueInvalid']]],
      ['too large', { data: { a: 'x'.repeat(700_000), b: 'y'.repeat(400_000) } }, [['[]', 'FieldValueTooLong']]],
    ],
  },
  {
    kind: 'Secret',
    group: '',
    path: `${NS}/secrets`,
    valid: { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') }, stringData: { note: 'hello' } },
    invalid: [
      ['bad key', { data: { 'a b': b64('x') } }, [['data[a b]', 'FieldValueInvalid']]],
      ['bad stringData key', { stringData: { 'a b': 'x' } }, [['data[a b]', 'FieldValueInvalid']]],
      [
        'tls without keys',
        { type: 'kubernetes.io/tls' },
        [
          ['data[tls.crt]', 'FieldValueRequired'],
          ['data[tls.key]', 'FieldValueRequired'],
        ],
      ],
    ],
  },
  {
    kind: 'Service',
    group: '',
    path: `${NS}/services`,
    valid: {
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'https', port: 443, targetPort: 'https' },
        ],
      },
    },
    invalid: [
      ['no ports', { spec: { selector: { app: 'web' } } }, [['spec.ports', 'FieldValueRequired']]],
      [
        'ports',
        { spec: { ports: [{ port: 0 }, { name: 'a', port: 81, protocol: 'ICMP' }] } },
        [
          ['spec.ports[0].name', 'FieldValueRequired'],
          ['spec.ports[0].port', 'FieldValueInvalid'],
          ['spec.ports[1].protocol', 'FieldValueNotSupported'],
        ],
      ],
      ['type', { spec: { type: 'Internal', ports: [{ port: 80 }] } }, [['spec.type', 'FieldValueNotSupported']]],
    ],
  },
  {
    kind: 'Deployment',
    group: 'apps',
    path: '/apis/apps/v1/namespaces/default/deployments',
    valid: { spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate() } },
    invalid: [
      [
        'no selector',
        { spec: { template: podTemplate() } },
        [
          ['spec.selector', 'FieldValueRequired'],
          ['spec.template.metadata.labels', 'FieldValueInvalid'],
        ],
      ],
      ['empty selector', { spec: { selector: {}, template: podTemplate() } }, [['spec.selector', 'FieldValueInvalid']]],
      [
        'selector does not match',
        { spec: { selector: { matchLabels: { app: 'api' } }, template: podTemplate() } },
        [['spec.template.metadata.labels', 'FieldValueInvalid']],
      ],
      [
        'negative replicas',
        { spec: { replicas: -1, selector: { matchLabels: { app: 'web' } }, template: podTemplate() } },
        [['spec.replicas', 'FieldValueInvalid']],
      ],
      [
        'template',
        {
          spec: {
            selector: { matchLabels: { app: 'web' } },
            template: podTemplate({ app: 'web' }, { containers: [], restartPolicy: 'Never' }),
          },
        },
        [
          ['spec.template.spec.containers', 'FieldValueRequired'],
          ['spec.template.spec.restartPolicy', 'FieldValueNotSupported'],
        ],
      ],
    ],
  },
  {
    kind: 'ReplicaSet',
    group: 'apps',
    path: '/apis/apps/v1/namespaces/default/replicasets',
    valid: {
      spec: { replicas: 1, selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, template: podTemplate() },
    },
    invalid: [
      [
        'selector does not match',
        { spec: { selector: { matchLabels: { tier: 'x' } }, template: podTemplate() } },
        [['spec.template.metadata.labels', 'FieldValueInvalid']],
      ],
      [
        'minReadySeconds',
        { spec: { minReadySeconds: -5, selector: { matchLabels: { app: 'web' } }, template: podTemplate() } },
        [['spec.minReadySeconds', 'FieldValueInvalid']],
      ],
    ],
  },
  {
    kind: 'Namespace',
    group: '',
    path: '/api/v1/namespaces',
    valid: { spec: { finalizers: ['kubernetes', 'example.com/cleanup'] } },
    invalid: [
      [
        'finalizer names',
        { spec: { finalizers: ['custom', 'a/b/c'] } },
        [
          ['spec.finalizers', 'FieldValueInvalid'],
          ['spec.finalizers', 'FieldValueInvalid'],
        ],
      ],
    ],
  },
  {
    kind: 'Lease',
    group: 'coordination.svc.io',
    path: '/apis/coordination.svc.io/v1/namespaces/default/leases',
    valid: { spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 } },
    invalid: [
      ['zero duration', { spec: { leaseDurationSeconds: 0 } }, [['spec.leaseDurationSeconds', 'FieldValueInvalid']]],
      ['negative transitions', { spec: { leaseTransitions: -1 } }, [['spec.leaseTransitions', 'FieldValueInvalid']]],
    ],
  },
  {
    kind: 'Node',
    group: '',
    path: '/api/v1/nodes',
    valid: { spec: { podCIDRs: ['10.244.0.0/24'], taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } },
    invalid: [
      ['pod CIDR', { spec: { podCIDRs: ['10.244.0.1/24'] } }, [['spec.podCIDRs[0]', 'FieldValueInvalid']]],
      [
        'taint effect',
        { spec: { taints: [{ key: 'a', effect: 'Sometimes' }] } },
        [['metadata.taints[0].effect', 'FieldValueNotSupported']],
      ],
    ],
  },
  {
    kind: 'Event',
    group: '',
    path: `${NS}/events`,
    valid: { involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' }, reason: 'Started', message: 'ok', type: 'Normal' },
    invalid: [
      [
        'involved namespace',
        { involvedObject: { kind: 'Pod', name: 'web', namespace: 'kube-system' } },
        [['involvedObject.namespace', 'FieldValueInvalid']],
      ],
    ],
  },
];

let serial = 0;
const named = (body: Any, prefix: string) => ({ ...body, metadata: { name: `${prefix}-${++serial}`, ...body.metadata } });

for (const k of KINDS) {
  describe(k.kind, () => {
    test('a valid object is created (201)', async () => {
      const r = await srv.json('POST', k.path, named(k.valid, 'valid'));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    });

    test.each(k.invalid)('%s → 422', async (_name, body, causes) => {
      const name = `bad-${++serial}`;
      const r = await srv.json('POST', k.path, { ...body, metadata: { name } });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 });
      const want: Record<string, unknown> = { name, kind: k.kind };
      if (k.group) want.group = k.group;
      expect(r.body.details).toMatchObject(want);
      expect(r.body.details.causes.map((c: Any) => [c.field, c.reason])).toEqual(causes);
      for (const c of r.body.details.causes) expect(c.message).toBeString();
      expect(r.body.message).toStartWith(`${k.group ? `${k.kind}.${k.group}` : k.kind} "${name}" is invalid: `);
      // Nothing was stored.
      expect((await srv.json('GET', `${k.path}/${name}`)).status).toBe(404);
    });
  });
}

describe('messages over HTTP', () => {
  test('Deployment selector mismatch, as the reference words it', async () => {
    const r = await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'mismatch' },
      spec: { selector: { matchLabels: { app: 'api' } }, template: podTemplate({ app: 'web' }) },
    });
    expect(r.status).toBe(422);
    const [cause] = r.body.details.causes;
    expect(cause.field).toBe('spec.template.metadata.labels');
    expect(cause.message).toEndWith(': `selector` does not match template `labels`');
    expect(cause.message).toStartWith('Invalid value: ');
  });

  test('ConfigMap key and size messages', async () => {
    const r = await srv.json('POST', `${NS}/configmaps`, { metadata: { name: 'keys' }, data: { a: 'x' }, binaryData: { a: b64('y') } });
    expect(r.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'data[a]', message: 'Invalid value: "a": duplicate of key present in binaryData' },
    ]);
    const big = await srv.json('POST', `${NS}/configmaps`, { metadata: { name: 'big' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } });
    expect(big.body.details.causes).toEqual([
      { reason: 'FieldValueTooLong', field: '[]', message: 'Too long: may not be more than 1048576 bytes' },
    ]);
  });

  test('ValidatingAdmissionPolicyBinding Deny with Warn', async () => {
    const r = await srv.json('POST', '/apis/admissionregistration.svc.io/v1/validatingadmissionpolicybindings', {
      metadata: { name: 'dw' },
      spec: { policyName: 'p', validationActions: ['Deny', 'Warn'] },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].message).toEndWith(
      ': must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    );
  });
});

describe('rules on update', () => {
  async function createThenPut(path: string, body: Any, change: (o: Any) => void) {
    const c = await srv.json('POST', path, body);
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    const next = structuredClone(c.body);
    change(next);
    // Unconditional (no resourceVersion): a controller may write the object's status in between.
    delete next.metadata.resourceVersion;
    return srv.json('PUT', `${path}/${body.metadata.name}`, next);
  }

  test('an immutable ConfigMap keeps its data', async () => {
    const r = await createThenPut(`${NS}/configmaps`, { metadata: { name: 'frozen' }, immutable: true, data: { a: '1' } }, (o) => {
      o.data.a = '2';
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' },
    ]);
    // Labels may still change.
    const g = await srv.json('GET', `${NS}/configmaps/frozen`);
    g.body.metadata.labels = { a: 'b' };
    expect((await srv.json('PUT', `${NS}/configmaps/frozen`, g.body)).status).toBe(200);
  });

  test('a Secret keeps its type; immutable secrets keep their data', async () => {
    const r = await createThenPut(`${NS}/secrets`, { metadata: { name: 'typed' }, type: 'Opaque', data: { a: b64('1') } }, (o) => {
      o.type = 'kubernetes.io/basic-auth';
      o.data = { username: b64('u') };
    });
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "kubernetes.io/basic-auth": field is immutable' },
    ]);
    const r2 = await createThenPut(`${NS}/secrets`, { metadata: { name: 'frozen' }, immutable: true, data: { a: b64('1') } }, (o) => {
      o.immutable = false;
    });
    expect(r2.body.details.causes.map((c: Any) => [c.field, c.reason])).toEqual([['immutable', 'FieldValueForbidden']]);
  });

  test('a Deployment keeps its selector', async () => {
    const r = await createThenPut(
      '/apis/apps/v1/namespaces/default/deployments',
      { metadata: { name: 'fixed' }, spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate() } },
      (o) => {
        o.spec.selector = { matchLabels: { app: 'web', tier: 'x' } };
        o.spec.template.metadata.labels.tier = 'x';
      },
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: Any) => [c.field, c.reason])).toEqual([['spec.selector', 'FieldValueInvalid']]);
    expect(r.body.details.causes[0].message).toEndWith(': field is immutable');
  });

  test('a ResourceQuota keeps its scopes', async () => {
    const r = await createThenPut(
      `${NS}/resourcequotas`,
      { metadata: { name: 'scoped' }, spec: { hard: { pods: '5' }, scopes: ['BestEffort'] } },
      (o) => {
        o.spec.scopes = ['NotBestEffort'];
      },
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: Any) => [c.field, c.reason])).toEqual([['spec.scopes', 'FieldValueInvalid']]);
  });

  test('validation runs on update too', async () => {
    const r = await createThenPut(
      '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
      { metadata: { name: 'upd' }, spec: { minAvailable: 1 } },
      (o) => {
        o.spec.maxUnavailable = 1;
      },
    );
    expect(r.status).toBe(422);
    expect(r.body.details.causes.map((c: Any) => [c.field, c.reason])).toEqual([['spec', 'FieldValueInvalid']]);
  });

  test('stringData is merged into data', async () => {
    const c = await srv.json('POST', `${NS}/secrets`, { metadata: { name: 'merged' }, stringData: { user: 'admin' } });
    expect(c.status).toBe(201);
    expect(c.body.data).toEqual({ user: b64('admin') });
    expect(c.body.stringData).toBeUndefined();
  });
});
