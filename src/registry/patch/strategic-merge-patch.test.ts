import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { SchemaSet } from '../../schema/engine';
import generated from '../../schema/generated/definitions.json';
import { overlays } from '../../schema/overlays';
import type { Definitions } from '../../schema/types';
import { PatchError, UNPROCESSABLE_MESSAGE } from './errors';
import { applyStrategicMergePatch } from './strategic-merge-patch';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

/**
 * The types of the reference's patch_test.go (MergeItem, RetainKeysMergeItem) as schemas:
 * struct tags patchStrategy/patchMergeKey become the same schema fields.
 */
const mergeItemDefs: Definitions = {
  'test.MergeItem': {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      mergingList: { type: 'array', items: { type: 'ref', ref: 'test.MergeItem' }, patchStrategy: 'merge', patchMergeKey: 'name' },
      nonMergingList: { type: 'array', items: { type: 'ref', ref: 'test.MergeItem' } },
      mergingIntList: { type: 'array', items: { type: 'integer' }, patchStrategy: 'merge' },
      nonMergingIntList: { type: 'array', items: { type: 'integer' } },
      mergeItemPtr: { type: 'array', items: { type: 'ref', ref: 'test.MergeItem' }, patchStrategy: 'merge', patchMergeKey: 'name' },
      simpleMap: { type: 'object', additionalProperties: { type: 'string' } },
      replacingItem: { type: 'any', patchStrategy: 'replace' },
      retainKeysMap: { type: 'ref', ref: 'test.RetainKeysMergeItem', patchStrategy: 'retainKeys' },
      retainKeysMergingList: {
        type: 'array',
        items: { type: 'ref', ref: 'test.MergeItem' },
        patchStrategy: 'merge,retainKeys',
        patchMergeKey: 'name',
      },
    },
  },
  'test.RetainKeysMergeItem': {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      simpleMap: { type: 'object', additionalProperties: { type: 'string' } },
      mergingIntList: { type: 'array', items: { type: 'integer' }, patchStrategy: 'merge' },
      mergingList: { type: 'array', items: { type: 'ref', ref: 'test.MergeItem' }, patchStrategy: 'merge', patchMergeKey: 'name' },
      nonMergingList: { type: 'array', items: { type: 'ref', ref: 'test.MergeItem' } },
    },
  },
};
const mergeItemSchemas = new SchemaSet(mergeItemDefs);
const k8s = new SchemaSet(generated as unknown as Definitions, overlays);

const POD = 'io.svc.api.core.v1.Pod';
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';
const PDB = 'io.svc.api.policy.v1.PodDisruptionBudget';
const SERVICE = 'io.svc.api.core.v1.Service';

function thrown(f: () => unknown): PatchError {
  try {
    f();
  } catch (e) {
    if (e instanceof PatchError) return e;
    throw e;
  }
  throw new Error('expected a PatchError');
}

/** Applies and checks that neither input changed. */
function apply(doc: Any, patch: Any, schemas: SchemaSet, def: string): Any {
  const before = JSON.stringify([doc, patch]);
  try {
    return applyStrategicMergePatch(doc, patch, schemas, def);
  } finally {
    expect(JSON.stringify([doc, patch])).toBe(before);
  }
}

interface RefCase {
  description: string;
  original?: Any;
  twoWay?: Any;
  modified?: Any;
  twoWayResult?: Any;
  current?: Any;
  threeWay?: Any;
  result?: Any;
  expectedError?: string;
}

describe('reference patch_test.go cases', () => {
  const cases: RefCase[] = YAML.parse(fs.readFileSync(path.join(import.meta.dir, 'testdata/strategicpatch-cases.yaml'), 'utf8'));
  for (const c of cases) {
    if (c.original !== undefined && c.twoWay !== undefined) {
      test(`${c.description} (two-way)`, () => {
        if (c.expectedError) {
          const e = thrown(() => apply(c.original, c.twoWay, mergeItemSchemas, 'test.MergeItem'));
          expect(e.message).toContain(c.expectedError);
          return;
        }
        expect(apply(c.original, c.twoWay, mergeItemSchemas, 'test.MergeItem')).toEqual(c.twoWayResult ?? c.modified);
      });
    }
    if (c.current !== undefined && c.threeWay !== undefined) {
      test(`${c.description} (three-way)`, () => {
        expect(apply(c.current, c.threeWay, mergeItemSchemas, 'test.MergeItem')).toEqual(c.result);
      });
    }
  }
});

describe('Kubernetes kinds', () => {
  const pod = (spec: Any, metadata: Any = { name: 'p' }): Any => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });
  const ctr = (name: string, extra: Any = {}): Any => ({ name, image: `${name}:1`, ...extra });

  const cases: { name: string; def: string; doc: Any; patch: Any; want: Any }[] = [
    {
      name: 'containers merge by name',
      def: POD,
      doc: pod({ containers: [ctr('a'), ctr('b')] }),
      patch: { spec: { containers: [{ name: 'b', image: 'b:2' }] } },
      want: pod({ containers: [ctr('a'), { name: 'b', image: 'b:2' }] }),
    },
    {
      name: 'a new container comes first (reference order)',
      def: POD,
      doc: pod({ containers: [ctr('a'), ctr('b')] }),
      patch: { spec: { containers: [ctr('c')] } },
      want: pod({ containers: [ctr('c'), ctr('a'), ctr('b')] }),
    },
    {
      name: '$setElementOrder places a new container',
      def: POD,
      doc: pod({ containers: [ctr('a'), ctr('b')] }),
      patch: { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }, { name: 'c' }], containers: [ctr('c')] } },
      want: pod({ containers: [ctr('a'), ctr('b'), ctr('c')] }),
    },
    {
      name: '$patch: delete removes a container',
      def: POD,
      doc: pod({ containers: [ctr('a'), ctr('b')] }),
      patch: { spec: { containers: [{ name: 'a', $patch: 'delete' }] } },
      want: pod({ containers: [ctr('b')] }),
    },
    {
      name: '$patch: replace replaces the list',
      def: POD,
      doc: pod({ containers: [ctr('a'), ctr('b')] }),
      patch: { spec: { containers: [{ $patch: 'replace' }, ctr('n')] } },
      want: pod({ containers: [ctr('n')] }),
    },
    {
      name: 'nested merge list (env) inside a merged container',
      def: POD,
      doc: pod({
        containers: [
          ctr('a', {
            env: [
              { name: 'Y', value: '2' },
              { name: 'Z', value: '3' },
            ],
          }),
        ],
      }),
      patch: {
        spec: {
          containers: [
            {
              name: 'a',
              env: [
                { name: 'Z', value: '9' },
                { name: 'X', value: '1' },
              ],
            },
          ],
        },
      },
      want: pod({
        containers: [
          ctr('a', {
            env: [
              { name: 'Y', value: '2' },
              { name: 'Z', value: '9' },
              { name: 'X', value: '1' },
            ],
          }),
        ],
      }),
    },
    {
      name: 'container ports merge by containerPort',
      def: POD,
      doc: pod({ containers: [ctr('a', { ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] })] }),
      patch: { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
      want: pod({ containers: [ctr('a', { ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }] })] }),
    },
    {
      name: 'finalizers merge as a set',
      def: POD,
      doc: pod({}, { name: 'p', finalizers: ['f1', 'f2'] }),
      patch: { metadata: { finalizers: ['f3', 'f1'] } },
      want: pod({}, { name: 'p', finalizers: ['f3', 'f1', 'f2'] }),
    },
    {
      name: '$deleteFromPrimitiveList/finalizers',
      def: POD,
      doc: pod({}, { name: 'p', finalizers: ['f1', 'f2', 'f1'] }),
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } },
      want: pod({}, { name: 'p', finalizers: ['f2'] }),
    },
    {
      name: 'finalizers: add, delete and order',
      def: POD,
      doc: pod({}, { name: 'p', finalizers: ['a', 'b', 'c'] }),
      patch: {
        metadata: { '$setElementOrder/finalizers': ['d', 'c', 'a'], finalizers: ['d'], '$deleteFromPrimitiveList/finalizers': ['b'] },
      },
      want: pod({}, { name: 'p', finalizers: ['d', 'c', 'a'] }),
    },
    {
      name: 'labels: null deletes, others merge',
      def: POD,
      doc: pod({}, { name: 'p', labels: { a: '1', b: '2' } }),
      patch: { metadata: { labels: { a: null, c: '3' } } },
      want: pod({}, { name: 'p', labels: { b: '2', c: '3' } }),
    },
    {
      name: 'labels: $patch: replace',
      def: POD,
      doc: pod({}, { name: 'p', labels: { a: '1', b: '2' } }),
      patch: { metadata: { labels: { $patch: 'replace', c: '3' } } },
      want: pod({}, { name: 'p', labels: { c: '3' } }),
    },
    {
      name: 'tolerations (no patch strategy) are replaced',
      def: POD,
      doc: pod({ tolerations: [{ key: 'a', operator: 'Exists' }] }),
      patch: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } },
      want: pod({ tolerations: [{ key: 'b', operator: 'Exists' }] }),
    },
    {
      name: 'resourceClaims of a container (listType map, no patch strategy) are replaced',
      def: POD,
      doc: pod({ containers: [ctr('a', { resources: { claims: [{ name: 'x' }] } })] }),
      patch: { spec: { containers: [{ name: 'a', resources: { claims: [{ name: 'y' }] } }] } },
      want: pod({ containers: [ctr('a', { resources: { claims: [{ name: 'y' }] } })] }),
    },
    {
      name: 'nodeSelector (mapType atomic) still merges, as in the reference',
      def: POD,
      doc: pod({ nodeSelector: { a: '1' } }),
      patch: { spec: { nodeSelector: { b: '2' } } },
      want: pod({ nodeSelector: { a: '1', b: '2' } }),
    },
    {
      name: 'volumes (merge,retainKeys): $retainKeys switches the volume source',
      def: POD,
      doc: pod({
        volumes: [
          { name: 'v', configMap: { name: 'c' } },
          { name: 'w', emptyDir: {} },
        ],
      }),
      patch: { spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }] } },
      want: pod({
        volumes: [
          { name: 'v', secret: { secretName: 's' } },
          { name: 'w', emptyDir: {} },
        ],
      }),
    },
    {
      name: 'new members drop their nulls and $patch items',
      def: POD,
      doc: pod({ containers: [ctr('a')] }),
      patch: {
        spec: {
          affinity: { nodeAffinity: null, podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } },
          initContainers: [{ name: 'i', $patch: 'delete' }, ctr('j')],
        },
      },
      want: pod({
        containers: [ctr('a')],
        affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } },
        initContainers: [ctr('j')],
      }),
    },
    {
      name: 'a new member that is itself a directive is dropped',
      def: POD,
      doc: pod({ containers: [ctr('a')] }),
      patch: { spec: { securityContext: { $patch: 'replace', runAsUser: 1 } } },
      want: pod({ containers: [ctr('a')] }),
    },
    {
      name: 'a member of another type is replaced (and removed when it is a directive)',
      def: POD,
      doc: pod({ hostname: 'h', subdomain: 's' }),
      patch: { spec: { hostname: { x: 1 }, subdomain: { $patch: 'delete' } } },
      want: pod({ hostname: { x: 1 } }),
    },
    {
      name: 'map $patch: delete empties it',
      def: POD,
      doc: pod({ nodeSelector: { a: '1' } }),
      patch: { spec: { nodeSelector: { $patch: 'delete' } } },
      want: pod({ nodeSelector: {} }),
    },
    {
      name: 'status conditions merge by type',
      def: POD,
      doc: {
        ...pod({}),
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'Initialized', status: 'True' },
          ],
        },
      },
      patch: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      want: {
        ...pod({}),
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'Initialized', status: 'True' },
          ],
        },
      },
    },
    {
      name: 'ownerReferences merge by uid',
      def: POD,
      doc: pod({}, { name: 'p', ownerReferences: [{ uid: '1', name: 'a' }] }),
      patch: { metadata: { ownerReferences: [{ uid: '1', controller: true }] } },
      want: pod({}, { name: 'p', ownerReferences: [{ uid: '1', name: 'a', controller: true }] }),
    },
    {
      name: 'Deployment strategy with $retainKeys',
      def: DEPLOYMENT,
      doc: { spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } },
      patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      want: { spec: { replicas: 1, strategy: { type: 'Recreate' } } },
    },
    {
      name: 'Deployment strategy without $retainKeys merges',
      def: DEPLOYMENT,
      doc: { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      patch: { spec: { strategy: { type: 'Recreate' } } },
      want: { spec: { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } } },
    },
    {
      name: 'Deployment pod template containers merge',
      def: DEPLOYMENT,
      doc: { spec: { template: { spec: { containers: [ctr('a'), ctr('b')] } } } },
      patch: { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:2' }] } } } },
      want: { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:2' }, ctr('b')] } } } },
    },
    {
      name: 'PodDisruptionBudget selector (patchStrategy replace) is replaced',
      def: PDB,
      doc: { spec: { minAvailable: 1, selector: { matchLabels: { a: '1' }, matchExpressions: [{ key: 'k', operator: 'Exists' }] } } },
      patch: { spec: { selector: { matchLabels: { b: '2' } } } },
      want: { spec: { minAvailable: 1, selector: { matchLabels: { b: '2' } } } },
    },
    {
      name: 'Service ports merge by port',
      def: SERVICE,
      doc: {
        spec: {
          ports: [
            { port: 80, name: 'http' },
            { port: 443, name: 'https' },
          ],
        },
      },
      patch: { spec: { ports: [{ port: 80, targetPort: 8080 }] } },
      want: {
        spec: {
          ports: [
            { port: 80, name: 'http', targetPort: 8080 },
            { port: 443, name: 'https' },
          ],
        },
      },
    },
    {
      name: 'unknown fields merge like a merge patch (lenient)',
      def: POD,
      doc: pod({ bogus: { b: 2, l: [1] } }),
      patch: { spec: { bogus: { a: 1, l: [2], b: null } } },
      want: pod({ bogus: { a: 1, l: [2] } }),
    },
    {
      name: 'root $patch: replace',
      def: POD,
      doc: pod({ containers: [ctr('a')] }),
      patch: { $patch: 'replace', kind: 'Pod', metadata: { name: 'q' } },
      want: { kind: 'Pod', metadata: { name: 'q' } },
    },
    { name: 'null patch changes nothing', def: POD, doc: pod({ x: 1 }), patch: null, want: pod({ x: 1 }) },
    { name: 'empty patch changes nothing', def: POD, doc: pod({ x: 1 }), patch: {}, want: pod({ x: 1 }) },
  ];
  for (const c of cases) {
    test(c.name, () => {
      expect(apply(c.doc, c.patch, k8s, c.def)).toEqual(c.want);
    });
  }

  test('result shares no structure with the inputs', () => {
    const doc = pod({ containers: [ctr('a')], nodeSelector: { a: '1' } });
    const patch = { spec: { containers: [ctr('b', { env: [{ name: 'E' }] })], affinity: { podAffinity: {} } } };
    const got = apply(doc, patch, k8s, POD);
    expect(got.spec.containers[1]).not.toBe(doc.spec.containers[0]);
    expect(got.spec.nodeSelector).not.toBe(doc.spec.nodeSelector);
    expect(got.spec.containers[0]).not.toBe(patch.spec.containers[0]);
    expect(got.spec.containers[0].env).not.toBe(patch.spec.containers[0]!.env);
    expect(got.spec.affinity).not.toBe(patch.spec.affinity);
  });

  test('a large pod merges quickly', () => {
    const n = 300;
    const doc = pod({
      containers: Array.from({ length: n }, (_, i) =>
        ctr(`c${i}`, { env: Array.from({ length: 20 }, (_, j) => ({ name: `E${j}`, value: `${j}` })) }),
      ),
    });
    // Reverse the order and change every other of the first 100 containers.
    const patch = {
      spec: {
        '$setElementOrder/containers': Array.from({ length: n }, (_, i) => ({ name: `c${n - 1 - i}` })),
        containers: Array.from({ length: 50 }, (_, i) => ({ name: `c${98 - i * 2}`, env: [{ name: 'E3', value: 'x' }] })),
      },
    };
    const t0 = performance.now();
    const got = apply(doc, patch, k8s, POD);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(got.spec.containers[0].name).toBe(`c${n - 1}`);
    expect(got.spec.containers[n - 1].env[3].value).toBe('x');
  });
});

describe('errors', () => {
  const pod = { metadata: { name: 'p', finalizers: ['a'] }, spec: { containers: [{ name: 'a', image: 'x' }] } };
  const cases: { name: string; patch: Any; doc?: Any; code: number; kind: PatchError['kind']; message: string }[] = [
    {
      name: 'patch is not an object',
      patch: [1],
      code: 400,
      kind: 'invalid',
      message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
    },
    {
      name: 'item without the merge key',
      patch: { spec: { containers: [{ image: 'y' }] } },
      code: 500,
      kind: 'internal',
      message: 'map: map[image:y] does not contain declared merge key: name',
    },
    {
      name: '$patch: delete item without the merge key',
      patch: { spec: { containers: [{ $patch: 'delete' }] } },
      code: 500,
      kind: 'internal',
      message: 'map: map[$patch:delete] does not contain declared merge key: name',
    },
    {
      name: '$patch: merge in a list',
      patch: { spec: { containers: [{ name: 'a', $patch: 'merge' }] } },
      code: 500,
      kind: 'internal',
      message: 'merging lists cannot yet be specified in the patch',
    },
    {
      name: '$patch: merge in a map',
      patch: { metadata: { $patch: 'merge', x: 1 } },
      code: 500,
      kind: 'internal',
      message: 'unknown patch type: merge in map: map[$patch:merge x:1]',
    },
    {
      name: 'unknown $patch value in a list item',
      patch: { spec: { containers: [{ name: 'a', $patch: 'frob' }] } },
      code: 500,
      kind: 'internal',
      message: 'unknown patch type: frob in map: map[$patch:frob name:a]',
    },
    {
      name: 'mixed item types in a merge list',
      patch: { metadata: { finalizers: [1] } },
      code: 500,
      kind: 'internal',
      message: 'list element types are not identical: [[a] [1]]',
    },
    {
      name: 'list of lists',
      doc: { metadata: { finalizers: [] } },
      patch: { metadata: { finalizers: [['x']] } },
      code: 422,
      kind: 'unprocessable',
      message: UNPROCESSABLE_MESSAGE,
    },
    {
      name: '$retainKeys is not a list',
      patch: { spec: { $retainKeys: 'containers' } },
      code: 400,
      kind: 'invalid',
      message: 'invalid patch format of retainKeys',
    },
    {
      name: 'patch sets a member not in $retainKeys',
      patch: { spec: { $retainKeys: ['containers'], hostname: 'h' } },
      code: 400,
      kind: 'invalid',
      message: 'invalid patch format of retainKeys',
    },
    {
      name: 'malformed $deleteFromPrimitiveList key',
      patch: { metadata: { $deleteFromPrimitiveList: ['a'] } },
      code: 400,
      kind: 'invalid',
      message: 'invalid patch format of primitive list',
    },
    {
      name: 'malformed $setElementOrder key',
      patch: { metadata: { $setElementOrderfinalizers: ['a'] } },
      code: 400,
      kind: 'invalid',
      message: 'invalid patch format of setElementOrder list',
    },
    {
      name: '$setElementOrder is not a list',
      patch: { metadata: { '$setElementOrder/finalizers': 'a' } },
      code: 500,
      kind: 'internal',
      message: 'expected a []interface {}, but received a string',
    },
    {
      name: '$setElementOrder disagrees with the patch list',
      patch: { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'b' }] } },
      code: 500,
      kind: 'internal',
      message: "the order in patch list:\n[map[name:b]]\n doesn't match $setElementOrder list:\n[map[name:a]]",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const e = thrown(() => apply(c.doc ?? pod, c.patch, k8s, POD));
      expect(e.code).toBe(c.code);
      expect(e.kind).toBe(c.kind);
      expect(e.message).toBe(c.message);
    });
  }

  test('a pass-through error renders as a reason-less 500', () => {
    const e = thrown(() => apply(pod, { spec: { containers: [{ image: 'y' }] } }, k8s, POD));
    const body = JSON.parse(JSON.stringify(e.toStatusError().body()));
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'map: map[image:y] does not contain declared merge key: name',
      code: 500,
    });
  });

  test('unknown definition is a programming error', () => {
    expect(() => applyStrategicMergePatch({}, {}, k8s, 'io.svc.nope')).toThrow('unknown definition io.svc.nope');
  });
});
