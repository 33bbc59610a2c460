import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { needs, REFERENCE } from '../../test/helpers/needs';
import { svcExtensionKeys, svcGroup } from '../api/brand';
import { SchemaSet, type TypeErrorInfo } from './engine';
import generated from './generated/definitions.json';
import { overlays } from './overlays';
import type { Definitions, Schema } from './types';

/** The reference data sits beside the repository (../shared/reference; test/helpers/needs). */
const REF = REFERENCE;

const defs = generated as unknown as Definitions;
const set = new SchemaSet(defs, overlays);

const POD = 'io.svc.api.core.v1.Pod';
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

function norm(def: string, obj: Any, prune = true, defaults = false) {
  return set.normalize(def, obj, { prune, defaults });
}

describe('unknown fields', () => {
  const cases: { name: string; def: string; obj: Any; unknown: string[]; pruned: Any }[] = [
    { name: 'top level', def: POD, obj: { kind: 'Pod', foo: 1 }, unknown: ['foo'], pruned: { kind: 'Pod' } },
    {
      name: 'nested struct',
      def: POD,
      obj: { metadata: { name: 'a', bogus: true } },
      unknown: ['metadata.bogus'],
      pruned: { metadata: { name: 'a' } },
    },
    {
      name: 'inside list items',
      def: POD,
      obj: { spec: { containers: [{ name: 'a' }, { name: 'b', foo: 'x', ports: [{ containerPort: 80, bar: 1 }] }] } },
      unknown: ['spec.containers[1].foo', 'spec.containers[1].ports[0].bar'],
      pruned: { spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 80 }] }] } },
    },
    {
      name: 'deep in a template',
      def: DEPLOYMENT,
      obj: { spec: { template: { spec: { containers: [{ name: 'c', foo: 1 }] } } } },
      unknown: ['spec.template.spec.containers[0].foo'],
      pruned: { spec: { template: { spec: { containers: [{ name: 'c' }] } } } },
    },
    {
      name: 'inside map values',
      def: POD,
      obj: { spec: { overhead: { cpu: '1' } }, status: { containerStatuses: [{ name: 'c', allocatedResources: { cpu: '1' } }] } },
      unknown: [],
      pruned: { spec: { overhead: { cpu: '1' } }, status: { containerStatuses: [{ name: 'c', allocatedResources: { cpu: '1' } }] } },
    },
    {
      name: 'struct inside map values',
      def: 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
      obj: { type: 'object', properties: { a: { type: 'string', bogus: 1 }, b: { type: 'integer' } } },
      unknown: ['properties.a.bogus'],
      pruned: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } },
    },
    {
      name: 'map keys are data, not fields',
      def: POD,
      obj: { metadata: { labels: { anything: 'x', 'a.b/c': 'y' }, annotations: { k: 'v' } } },
      unknown: [],
      pruned: { metadata: { labels: { anything: 'x', 'a.b/c': 'y' }, annotations: { k: 'v' } } },
    },
    {
      name: 'any content is kept (RawExtension, FieldsV1)',
      def: 'io.svc.apimachinery.pkg.apis.meta.v1.WatchEvent',
      obj: { type: 'ADDED', object: { kind: 'Pod', whatever: { x: 1 } } },
      unknown: [],
      pruned: { type: 'ADDED', object: { kind: 'Pod', whatever: { x: 1 } } },
    },
    {
      name: 'managedFields fieldsV1 is free-form',
      def: POD,
      obj: { metadata: { managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:x': {} } }, nope: 1 }] } },
      unknown: ['metadata.managedFields[0].nope'],
      pruned: { metadata: { managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:x': {} } } }] } },
    },
    {
      name: 'empty struct (CRD subresources.status) has no fields',
      def: 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources',
      obj: { status: { x: 1 } },
      unknown: ['status.x'],
      pruned: { status: {} },
    },
    {
      name: 'renamed extension properties of CRD schemas',
      def: 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
      obj: { 'x-svc-preserve-unknown-fields': true, 'x-kubernetes-list-type': 'set' },
      unknown: ['x-kubernetes-list-type'],
      pruned: { 'x-svc-preserve-unknown-fields': true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const kept = structuredClone(c.obj);
      const r = norm(c.def, kept, false);
      expect(r.unknown).toEqual(c.unknown);
      expect(r.typeErrors).toEqual([]);
      expect(kept).toEqual(c.obj); // prune off: reported, not removed
      const pruned = structuredClone(c.obj);
      expect(norm(c.def, pruned, true).unknown).toEqual(c.unknown);
      expect(pruned).toEqual(c.pruned);
    });
  }
});

describe('type errors', () => {
  const cases: { name: string; def: string; obj: Any; errors: TypeErrorInfo[] }[] = [
    {
      name: 'string for int32',
      def: POD,
      obj: { spec: { containers: [{ name: 'a', ports: [{ containerPort: '80' }] }] } },
      errors: [{ field: 'spec.containers[0].ports[0].containerPort', expected: 'integer', got: 'string' }],
    },
    {
      name: 'fraction for integer',
      def: POD,
      obj: { spec: { activeDeadlineSeconds: 1.5 } },
      errors: [{ field: 'spec.activeDeadlineSeconds', expected: 'integer', got: 'number' }],
    },
    {
      name: 'int32 out of range',
      def: DEPLOYMENT,
      obj: { spec: { replicas: 2147483648 } },
      errors: [{ field: 'spec.replicas', expected: 'int32', got: 'number' }],
    },
    { name: 'int32 upper bound is fine', def: DEPLOYMENT, obj: { spec: { replicas: 2147483647 } }, errors: [] },
    { name: 'int32 lower bound is fine', def: DEPLOYMENT, obj: { spec: { replicas: -2147483648 } }, errors: [] },
    {
      name: 'int32 below range',
      def: DEPLOYMENT,
      obj: { spec: { replicas: -2147483649 } },
      errors: [{ field: 'spec.replicas', expected: 'int32', got: 'number' }],
    },
    {
      name: 'int64 takes large values',
      def: POD,
      obj: { metadata: { generation: 9007199254740991 } },
      errors: [],
    },
    {
      name: 'number for string',
      def: POD,
      obj: { metadata: { name: 5 } },
      errors: [{ field: 'metadata.name', expected: 'string', got: 'number' }],
    },
    {
      name: 'string for boolean',
      def: POD,
      obj: { spec: { hostNetwork: 'true' } },
      errors: [{ field: 'spec.hostNetwork', expected: 'boolean', got: 'string' }],
    },
    {
      name: 'object for array',
      def: POD,
      obj: { spec: { containers: { name: 'a' } } },
      errors: [{ field: 'spec.containers', expected: 'array', got: 'object' }],
    },
    {
      name: 'array for struct',
      def: POD,
      obj: { spec: [] },
      errors: [{ field: 'spec', expected: 'object', got: 'array' }],
    },
    {
      name: 'non-string label value (map entry path)',
      def: POD,
      obj: { metadata: { labels: { app: 1, ok: 'x' }, annotations: { b: true } } },
      errors: [
        { field: 'metadata.labels.app', expected: 'string', got: 'number' },
        { field: 'metadata.annotations.b', expected: 'string', got: 'bool' },
      ],
    },
    {
      name: 'array for map',
      def: POD,
      obj: { metadata: { labels: ['a'] } },
      errors: [{ field: 'metadata.labels', expected: 'map[string]string', got: 'array' }],
    },
    {
      name: 'int-or-string accepts both',
      def: 'io.svc.api.core.v1.ServicePort',
      obj: { port: 80, targetPort: 'http' },
      errors: [],
    },
    {
      name: 'int-or-string rejects bool and fractions',
      def: 'io.svc.api.apps.v1.RollingUpdateDeployment',
      obj: { maxSurge: true, maxUnavailable: 1.5 },
      errors: [
        { field: 'maxSurge', expected: 'int-or-string', got: 'bool' },
        { field: 'maxUnavailable', expected: 'int-or-string', got: 'number' },
      ],
    },
    {
      name: 'quantities',
      def: 'io.svc.api.core.v1.ResourceRequirements',
      obj: { limits: { cpu: '100m', memory: '1Gi', a: '1e3', b: 2, c: '.5' }, requests: { cpu: 'lots', memory: '', x: true } },
      errors: [
        { field: 'requests.cpu', expected: 'quantity', got: 'string' },
        { field: 'requests.memory', expected: 'quantity', got: 'string' },
        { field: 'requests.x', expected: 'quantity', got: 'bool' },
      ],
    },
    {
      name: 'date-time',
      def: POD,
      obj: { metadata: { creationTimestamp: 'yesterday', deletionTimestamp: '2024-01-02T03:04:05Z' } },
      errors: [{ field: 'metadata.creationTimestamp', expected: 'date-time', got: 'string' }],
    },
    {
      name: 'base64 secret data',
      def: 'io.svc.api.core.v1.Secret',
      obj: { data: { ok: 'aGVsbG8=', bad: 'not base64!' }, stringData: { plain: 'not base64!' } },
      errors: [{ field: 'data.bad', expected: 'byte', got: 'string' }],
    },
    {
      name: 'several errors, walk continues',
      def: POD,
      obj: { spec: { containers: [{ name: 1 }, { name: 'b', image: [] }], priority: 'high' } },
      errors: [
        { field: 'spec.containers[0].name', expected: 'string', got: 'number' },
        { field: 'spec.containers[1].image', expected: 'string', got: 'array' },
        { field: 'spec.priority', expected: 'integer', got: 'string' },
      ],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const obj = structuredClone(c.obj);
      const r = norm(c.def, obj);
      expect(r.typeErrors.map(({ field, expected, got }) => ({ field, expected, got }))).toEqual(c.errors);
      expect(r.unknown).toEqual([]);
      expect(obj).toEqual(c.obj); // bad values are reported, never changed
    });
  }

  test("Go's decoder context: innermost struct, struct fields from the top (no indexes, no map keys), Go type", () => {
    const go = (obj: Any) => norm(POD, obj).typeErrors.map(({ goField, goType, goValue }) => ({ goField, goType, goValue }));
    expect(go({ spec: { containers: [{ name: 'c', image: 5 }] } })).toEqual([
      { goField: 'Container.spec.containers.image', goType: 'string', goValue: 'number' },
    ]);
    expect(go({ metadata: { labels: { a: 1 } } })).toEqual([
      { goField: 'ObjectMeta.metadata.labels', goType: 'string', goValue: 'number' },
    ]);
    expect(go({ spec: { containers: 'c' } })).toEqual([
      { goField: 'PodSpec.spec.containers', goType: '[]v1.Container', goValue: 'string' },
    ]);
    expect(go({ spec: { priority: 1.5 } })).toEqual([{ goField: 'PodSpec.spec.priority', goType: 'int32', goValue: 'number 1.5' }]);
    expect(go({ metadata: [] })).toEqual([{ goField: 'Pod.metadata', goType: 'v1.ObjectMeta', goValue: 'array' }]);
  });

  test('a null root is a type error; nothing throws', () => {
    expect(norm(POD, null).typeErrors).toEqual([{ field: '', expected: 'object', got: 'null' }]);
    expect(norm(POD, 'pod').typeErrors).toEqual([{ field: '', expected: 'object', got: 'string' }]);
  });
});

describe('null handling', () => {
  test('null struct fields are removed and not reported', () => {
    const obj: Any = { metadata: { name: 'a', labels: null, creationTimestamp: null }, spec: null, status: { phase: null } };
    const r = norm(POD, obj);
    expect(r).toEqual({ unknown: [], typeErrors: [] });
    expect(obj).toEqual({ metadata: { name: 'a' }, status: {} });
  });
  test('null list items and map values become zero values', () => {
    const obj: Any = {
      metadata: { labels: { a: null }, finalizers: [null, 'x'] },
      spec: { overhead: { cpu: null }, containers: [null] },
    };
    const r = norm(POD, obj);
    expect(r).toEqual({ unknown: [], typeErrors: [] });
    expect(obj).toEqual({ metadata: { labels: { a: '' }, finalizers: ['', 'x'] }, spec: { overhead: { cpu: '0' }, containers: [{}] } });
  });
  test('null Time map values stay null (a zero metav1.Time encodes as null)', () => {
    const obj: Any = { status: { disruptedPods: { a: null, b: '2024-01-02T03:04:05Z' } } };
    expect(norm('io.svc.api.policy.v1.PodDisruptionBudget', obj)).toEqual({ unknown: [], typeErrors: [] });
    expect(obj.status.disruptedPods).toEqual({ a: null, b: '2024-01-02T03:04:05Z' });
  });
  test('a removed null field gets its default', () => {
    const obj: Any = { spec: { replicas: null } };
    norm(DEPLOYMENT, obj, true, true);
    expect(obj.spec.replicas).toBe(1);
  });
});

describe('always-written zeros (required numbers and booleans: Go value fields without omitempty)', () => {
  test.each([
    [
      'io.svc.api.policy.v1.PodDisruptionBudgetStatus',
      {},
      { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    ],
    ['io.svc.api.apps.v1.ReplicaSetStatus', { readyReplicas: 2 }, { readyReplicas: 2, replicas: 0 }],
    ['io.svc.api.apps.v1.ReplicaSetStatus', { replicas: 3 }, { replicas: 3 }],
    ['io.svc.api.core.v1.ContainerStatus', { name: 'c' }, { name: 'c', ready: false, restartCount: 0 }],
    // A required string is validation's business: it is not filled.
    ['io.svc.api.core.v1.EnvVar', {}, {}],
  ])('%s %j → %j', (def, input, want) => {
    const obj: Any = structuredClone(input);
    norm(def, obj, true, true);
    expect(obj).toEqual(want);
  });

  test('only with defaulting on; an absent parent struct stays absent', () => {
    const obj: Any = {};
    norm('io.svc.api.policy.v1.PodDisruptionBudgetStatus', obj, true, false);
    expect(obj).toEqual({});
    const pdb: Any = { spec: {} };
    norm('io.svc.api.policy.v1.PodDisruptionBudget', pdb, true, true);
    expect(pdb.status).toBeUndefined();
  });
});

describe('defaults', () => {
  test('pod spec and containers, nested in list items', () => {
    const obj: Any = {
      spec: {
        containers: [
          { name: 'a', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }], livenessProbe: { httpGet: { port: 8080 } } },
          { name: 'b', terminationMessagePolicy: 'FallbackToLogsOnError' },
        ],
        volumes: [{ name: 'v', secret: { secretName: 's' } }],
      },
    };
    norm(POD, obj, true, true);
    expect(obj.spec).toEqual({
      containers: [
        {
          name: 'a',
          ports: [
            { containerPort: 80, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP' },
          ],
          livenessProbe: {
            httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
        { name: 'b', terminationMessagePolicy: 'FallbackToLogsOnError', terminationMessagePath: '/dev/termination-log' },
      ],
      volumes: [{ name: 'v', secret: { secretName: 's', defaultMode: 420 } }],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
      securityContext: {},
    });
  });
  test('defaulted objects are defaulted too, and get fresh copies', () => {
    const a: Any = { spec: { selector: {}, template: {} } };
    const b: Any = { spec: { selector: {}, template: {} } };
    norm(DEPLOYMENT, a, true, true);
    norm(DEPLOYMENT, b, true, true);
    expect(a.spec.strategy).toEqual({ type: 'RollingUpdate' });
    expect(a.spec).toMatchObject({ replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
    a.spec.strategy.type = 'Recreate';
    expect(b.spec.strategy).toEqual({ type: 'RollingUpdate' });
    expect(set.get('io.svc.api.apps.v1.DeploymentSpec')).toMatchObject({ properties: { strategy: { default: {} } } });
  });
  test('present values win; templates get pod spec defaults', () => {
    const obj: Any = { spec: { replicas: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } } } };
    norm(DEPLOYMENT, obj, true, true);
    expect(obj.spec.replicas).toBe(0);
    expect(obj.spec.template.spec).toMatchObject({ restartPolicy: 'Never', dnsPolicy: 'ClusterFirst' });
    expect(obj.spec.template.spec.containers[0].terminationMessagePolicy).toBe('File');
  });
  test('no defaults when off', () => {
    const obj: Any = { spec: { containers: [{ name: 'c' }] } };
    norm(POD, obj, true, false);
    expect(obj).toEqual({ spec: { containers: [{ name: 'c' }] } });
  });
  test('other kinds', () => {
    const svc: Any = { spec: { ports: [{ port: 80 }] } };
    norm('io.svc.api.core.v1.Service', svc, true, true);
    expect(svc.spec).toEqual({ ports: [{ port: 80, protocol: 'TCP' }], type: 'ClusterIP', sessionAffinity: 'None' });
    const secret: Any = {};
    norm('io.svc.api.core.v1.Secret', secret, true, true);
    expect(secret).toEqual({ type: 'Opaque' });
    const fs: Any = { spec: { priorityLevelConfiguration: { name: 'x' } } };
    norm('io.svc.api.flowcontrol.v1.FlowSchema', fs, true, true);
    expect(fs.spec.matchingPrecedence).toBe(1000);
    const plc: Any = { spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } };
    norm('io.svc.api.flowcontrol.v1.PriorityLevelConfiguration', plc, true, true);
    expect(plc.spec.limited).toEqual({
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
      limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
    });
    const vap: Any = { spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], resources: ['pods'] }] } } };
    norm('io.svc.api.admissionregistration.v1.ValidatingAdmissionPolicy', vap, true, true);
    expect(vap.spec).toEqual({
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], resources: ['pods'], scope: '*' }],
        matchPolicy: 'Equivalent',
        namespaceSelector: {},
        objectSelector: {},
      },
    });
    const np: Any = { spec: { ingress: [{ ports: [{ port: 80 }] }] } };
    norm('io.svc.api.networking.v1.NetworkPolicy', np, true, true);
    expect(np.spec.ingress[0].ports[0].protocol).toBe('TCP');
    const pdb: Any = { spec: {} };
    norm('io.svc.api.policy.v1.PodDisruptionBudget', pdb, true, true);
    expect(pdb).toEqual({ spec: {} });
  });
  test('overlays naming a missing definition or field throw', () => {
    expect(() => new SchemaSet(defs, [{ def: 'io.svc.api.core.v1.Nope', field: 'x', default: 1 }])).toThrow(/no definition/);
    expect(() => new SchemaSet(defs, [{ def: POD, field: 'nope', default: 1 }])).toThrow(/no field/);
    expect(() => new SchemaSet(defs, [{ def: 'io.svc.api.core.v1.PodSpec', field: 'restartPolicy', default: 1 }])).toThrow(
      /does not match/,
    );
  });
});

describe('preserveUnknown and hand-made schemas', () => {
  const small: Definitions = {
    Root: {
      type: 'object',
      properties: {
        open: { type: 'ref', ref: 'Open' },
        closed: { type: 'ref', ref: 'Closed' },
        list: { type: 'array', items: { type: 'ref', ref: 'Open' } },
        free: { type: 'any' },
        tags: { type: 'object', additionalProperties: { type: 'ref', ref: 'Closed' } },
      },
    },
    Open: { type: 'object', preserveUnknown: true, properties: { n: { type: 'integer', format: 'int32' } } },
    Closed: { type: 'object', properties: { s: { type: 'string', default: 'dflt' } } },
  };
  const s = new SchemaSet(small);
  test('known fields of a preserveUnknown struct are still checked', () => {
    const obj: Any = { open: { n: 'x', extra: { deep: 1 } }, list: [{ extra: 1 }, { n: 1.5 }], free: { a: [1, { b: 2 }] } };
    const r = s.normalize('Root', obj, { prune: true, defaults: false });
    expect(r.unknown).toEqual([]);
    expect(r.typeErrors).toEqual([
      { field: 'open.n', expected: 'integer', got: 'string' },
      { field: 'list[1].n', expected: 'integer', got: 'number' },
    ]);
    expect(obj.open.extra).toEqual({ deep: 1 });
  });
  test('defaults in map values', () => {
    const obj: Any = { closed: {}, tags: { a: {}, b: { s: 'x' }, c: null } };
    const r = s.normalize('Root', obj, { prune: true, defaults: true });
    expect(r).toEqual({ unknown: [], typeErrors: [] });
    expect(obj).toEqual({ closed: { s: 'dflt' }, tags: { a: { s: 'dflt' }, b: { s: 'x' }, c: {} } });
  });
  test('get and resolve', () => {
    expect(s.get('Nope')).toBeUndefined();
    expect(s.resolve({ type: 'ref', ref: 'Open' })).toMatchObject({ type: 'object', preserveUnknown: true });
    expect(() => s.resolve({ type: 'ref', ref: 'Nope' })).toThrow();
    expect(() => new SchemaSet({ A: { type: 'ref', ref: 'B' } })).toThrow(/unknown definition B/);
  });
});

describe('generated definitions', () => {
  test('every served kind is present with its gvk', () => {
    const want: [string, string, string][] = [
      ['io.svc.api.core.v1.Pod', '', 'Pod'],
      ['io.svc.api.core.v1.PodList', '', 'PodList'],
      ['io.svc.api.networking.v1.Ingress', 'networking.svc.io', 'Ingress'],
      ['io.svc.api.coordination.v1.Lease', 'coordination.svc.io', 'Lease'],
      ['io.svc.api.rbac.v1.ClusterRoleBinding', 'rbac.authorization.svc.io', 'ClusterRoleBinding'],
      [
        'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
        'apiextensions.svc.io',
        'CustomResourceDefinition',
      ],
      ['io.svc.api.flowcontrol.v1.PriorityLevelConfigurationList', 'flowcontrol.apiserver.svc.io', 'PriorityLevelConfigurationList'],
      [
        'io.svc.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
        'admissionregistration.svc.io',
        'ValidatingAdmissionPolicyBinding',
      ],
      ['io.svc.api.policy.v1.Eviction', 'policy', 'Eviction'],
      ['io.svc.apimachinery.pkg.apis.meta.v1.Status', '', 'Status'],
    ];
    for (const [name, group, kind] of want) {
      const d = defs[name];
      expect(d?.type).toBe('object');
      if (d?.type !== 'object') continue;
      expect(d.gvk).toContainEqual({ group, version: 'v1', kind });
    }
    expect(JSON.stringify(defs)).not.toContain('k8s');
  });
  test('extensions and proto tags are mapped', () => {
    const spec = defs['io.svc.api.core.v1.PodSpec'] as Any;
    expect(spec.properties.containers).toMatchObject({ type: 'array', patchStrategy: 'merge', patchMergeKey: 'name', protoTag: 2 });
    expect(spec.properties.schedulingGates).toMatchObject({ listType: 'map', listMapKeys: ['name'] });
    expect(spec.properties.nodeSelector).toMatchObject({ mapType: 'atomic' });
    expect(defs['io.svc.apimachinery.pkg.util.intstr.IntOrString']).toEqual({ type: 'int-or-string' });
    expect(defs['io.svc.apimachinery.pkg.api.resource.Quantity']).toEqual({ type: 'quantity' });
    expect(defs['io.svc.apimachinery.pkg.apis.meta.v1.MicroTime']).toEqual({ type: 'string', format: 'date-time' });
    expect(defs['io.svc.apimachinery.pkg.runtime.RawExtension']).toEqual({ type: 'any' });
    const fs = defs['io.svc.api.flowcontrol.v1.FlowSchemaSpec'] as Any;
    expect(fs.properties.matchingPrecedence.protoTag).toBe(2);
  });
  needs('reference').test('definitions.json is what the generator writes', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-schemas-'));
    try {
      const script = path.resolve(import.meta.dir, '../../scripts/gen-schemas.ts');
      const r = Bun.spawnSync([process.execPath, script, '--ref', REF, '--out', out]);
      expect(r.exitCode).toBe(0);
      const fresh = fs.readFileSync(path.join(out, 'definitions.json'), 'utf8');
      const committed = fs.readFileSync(path.join(import.meta.dir, 'generated/definitions.json'), 'utf8');
      expect(fresh === committed).toBe(true);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Reference fixtures: the generated schemas know every field the reference serializes.
// ---------------------------------------------------------------------------------------------

/** Definition name by rebranded `group/version/kind`. */
function kindIndex(): Map<string, string> {
  const idx = new Map<string, string>();
  for (const [name, d] of Object.entries(defs)) {
    if (d.type !== 'object' || !d.gvk) continue;
    for (const g of d.gvk) if (!idx.has(`${g.group}/${g.version}/${g.kind}`)) idx.set(`${g.group}/${g.version}/${g.kind}`, name);
  }
  return idx;
}

/** Checks that the keys of every struct in `v` follow the order of the schema's properties. */
function orderProblems(schema: Schema, v: Any, at: string, out: string[]): void {
  const s = set.resolve(schema);
  if (v === null || typeof v !== 'object') return;
  if (s.type === 'array') {
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) orderProblems(s.items, v[i], `${at}[${i}]`, out);
    return;
  }
  if (s.type !== 'object' || Array.isArray(v)) return;
  if (!s.properties) {
    if (s.additionalProperties) for (const k of Object.keys(v)) orderProblems(s.additionalProperties, v[k], `${at}.${k}`, out);
    return;
  }
  const order = Object.keys(s.properties);
  let last = -1;
  for (const k of Object.keys(v)) {
    const i = order.indexOf(k);
    if (i < last) out.push(`${at}.${k}`);
    last = Math.max(last, i);
    if (s.properties[k]) orderProblems(s.properties[k]!, v[k], at === '' ? k : `${at}.${k}`, out);
  }
}

needs('reference').describe('reference fixtures', () => {
  const dir = path.join(REF, 'fixtures');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  const idx = kindIndex();
  const served: [string, string][] = [];
  for (const f of files) {
    const obj = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const [group, version] = String(obj.apiVersion).includes('/') ? String(obj.apiVersion).split('/') : ['', String(obj.apiVersion)];
    const name = idx.get(`${svcGroup(group!)}/${version}/${obj.kind}`);
    if (name) served.push([f, name]);
  }

  test('the served kinds among the fixtures are found', () => {
    expect(served.map(([f]) => f)).toContain('core.v1.Pod.json');
    expect(served.map(([f]) => f)).toContain('apps.v1.Deployment.json');
    expect(served.length).toBeGreaterThanOrEqual(14);
  });

  for (const [file, def] of served) {
    test(`${file}: no unknown fields, no type errors, unchanged`, () => {
      // The fixtures are in the reference's brand: CRD schemas say `x-kubernetes-*` where this API says `x-svc-*`.
      const fixture = () => svcExtensionKeys(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
      const obj = fixture();
      const r = set.normalize(def, obj, { prune: true, defaults: false });
      expect(r.unknown).toEqual([]);
      expect(r.typeErrors).toEqual([]);
      expect(obj).toEqual(fixture());
    });
    test(`${file}: fields appear in the order of the schema properties (Go struct order)`, () => {
      const obj = svcExtensionKeys(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
      const problems: string[] = [];
      orderProblems({ type: 'ref', ref: def }, obj, '', problems);
      expect(problems).toEqual([]);
    });
  }
});
