import { expect, test } from 'bun:test';
import type { Discovery } from './discovery';
import { discoveryV2, wantsDiscoveryV2 } from './discovery-v2';

const DOCS: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'] },
  '/api/v1': {
    resources: [
      { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'] },
      { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
      { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    ],
  },
  '/apis': { groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }] }] },
  '/apis/apps/v1': {
    resources: [{ name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment', verbs: ['get'] }],
  },
};
const discovery = { get: (p: string) => DOCS[p] } as unknown as Discovery;

test('the core group: subresources under their resource, with their own response kinds', () => {
  expect(discoveryV2(discovery, 'api', [])).toEqual({
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [
      {
        metadata: { creationTimestamp: null },
        versions: [
          {
            version: 'v1',
            freshness: 'Current',
            resources: [
              {
                resource: 'pods',
                responseKind: { group: '', version: 'v1', kind: 'Pod' },
                scope: 'Namespaced',
                singularResource: 'pod',
                verbs: ['get', 'list'],
                shortNames: ['po'],
                categories: ['all'],
                subresources: [
                  { subresource: 'eviction', responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
                  { subresource: 'status', responseKind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] },
                ],
              },
            ],
          },
        ],
      },
    ],
  });
});

test('named groups, then aggregated group versions (a stale one marked)', () => {
  const extra = [
    { group: 'apps', version: 'v2alpha1', resources: [], fresh: true },
    {
      group: 'wardle.example.io',
      version: 'v1',
      resources: [{ name: 'flunders', singularName: 'flunder', namespaced: false, kind: 'Flunder', verbs: ['list'] }],
      fresh: false,
    },
  ];
  const doc = discoveryV2(discovery, 'apis', extra) as { items: { metadata: { name: string }; versions: Record<string, unknown>[] }[] };
  expect(doc.items.map((i) => [i.metadata.name, i.versions.map((v) => `${v.version}:${v.freshness}`)])).toEqual([
    ['apps', ['v1:Current', 'v2alpha1:Current']],
    ['wardle.example.io', ['v1:Stale']],
  ]);
  expect(doc.items[1]?.versions[0]?.resources).toEqual([
    {
      resource: 'flunders',
      responseKind: { group: 'wardle.example.io', version: 'v1', kind: 'Flunder' },
      scope: 'Cluster',
      singularResource: 'flunder',
      verbs: ['list'],
    },
  ]);
});

test.each([
  ['application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', true],
  [
    'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    true,
  ],
  ['application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', false],
  ['application/json', false],
  [null, false],
])('wantsDiscoveryV2(%p) = %p', (accept, want) => {
  expect(wantsDiscoveryV2(accept)).toBe(want);
});
