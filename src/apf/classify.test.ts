import { describe, expect, test } from 'bun:test';
import { parseRequestInfo } from '../api/request-info';
import type { UserInfo } from '../api/user';
import { bootstrapConfig } from './bootstrap-config';
import { byPrecedence, classify, compileFlowSchema, distinguisher, flowSchemaMatches } from './classify';

const cfg = bootstrapConfig();
const schemas = [...cfg.mandatory.flowSchemas, ...cfg.suggested.flowSchemas].map(compileFlowSchema).sort(byPrecedence);

const user = (name: string, ...groups: string[]): UserInfo => ({ name, uid: '', groups: [...groups, 'system:authenticated'] });
const req = (method: string, path: string) => {
  const [p, q] = path.split('?');
  return parseRequestInfo(method, p as string, new URLSearchParams(q ?? ''));
};

describe('classification against the bootstrap schemas', () => {
  const table: [string, UserInfo, string, string, string, string][] = [
    // [what, user, method, path, flow schema, distinguisher]
    ['an admin', user('admin', 'system:masters'), 'GET', '/api/v1/pods', 'exempt', ''],
    ['a health probe', user('anyone'), 'GET', '/healthz', 'probes', ''],
    ['a readiness probe below /readyz is not a probe', user('anyone'), 'GET', '/readyz/etcd', 'global-default', 'anyone'],
    [
      'a node updating its status',
      user('system:node:n1', 'system:nodes'),
      'PATCH',
      '/api/v1/nodes/n1/status',
      'system-node-high',
      'system:node:n1',
    ],
    [
      'a node renewing its lease',
      user('system:node:n1', 'system:nodes'),
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1',
      'system-node-high',
      'system:node:n1',
    ],
    ['a node reading pods', user('system:node:n1', 'system:nodes'), 'GET', '/api/v1/pods', 'system-nodes', 'system:node:n1'],
    [
      'the controller manager electing a leader',
      user('system:kube-controller-manager'),
      'PUT',
      '/apis/coordination.svc.io/v1/namespaces/kube-system/leases/kcm',
      'system-leader-election',
      'system:kube-controller-manager',
    ],
    [
      'the controller manager writing endpoints',
      user('system:kube-controller-manager'),
      'PUT',
      '/api/v1/namespaces/default/endpoints/x',
      'system-leader-election',
      'system:kube-controller-manager',
    ],
    [
      'the controller manager listing in a namespace',
      user('system:kube-controller-manager'),
      'GET',
      '/api/v1/namespaces/team/pods',
      'kube-controller-manager',
      'team',
    ],
    ['the scheduler binding', user('system:kube-scheduler'), 'POST', '/api/v1/namespaces/team/pods/p/binding', 'kube-scheduler', 'team'],
    [
      'a kube-system controller electing a leader',
      user('system:serviceaccount:kube-system:ctl', 'system:serviceaccounts'),
      'GET',
      '/api/v1/namespaces/kube-system/configmaps/lock',
      'system-leader-election',
      'system:serviceaccount:kube-system:ctl',
    ],
    [
      'a kube-system controller at work',
      user('system:serviceaccount:kube-system:ctl', 'system:serviceaccounts'),
      'GET',
      '/api/v1/namespaces/team/secrets',
      'kube-system-service-accounts',
      'team',
    ],
    [
      'a workload service account',
      user('system:serviceaccount:team:app', 'system:serviceaccounts'),
      'GET',
      '/api/v1/namespaces/team/pods',
      'service-accounts',
      'system:serviceaccount:team:app',
    ],
    // endpoint-controller (150) and workload-leader-election (200) are shadowed by
    // system-leader-election (100) for every request they match, as in the reference's releases
    // that still create them.
    ['a person', user('alice', 'devs'), 'DELETE', '/apis/apps/v1/namespaces/team/deployments/web', 'global-default', 'alice'],
    ['a person on a non-resource path', user('alice'), 'GET', '/version', 'global-default', 'alice'],
  ];
  for (const [what, u, method, path, fs, dist] of table) {
    test(what, () => {
      const info = req(method, path);
      const got = classify(schemas, u, info);
      expect(got?.name).toBe(fs);
      expect(distinguisher(got as NonNullable<typeof got>, u, info)).toBe(dist);
    });
  }

  test('unauthenticated requests reach catch-all only when global-default is gone', () => {
    const anon: UserInfo = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] };
    const info = req('GET', '/api/v1/pods');
    expect(classify(schemas, anon, info)?.name).toBe('global-default');
    expect(
      classify(
        schemas.filter((s) => s.name !== 'global-default'),
        anon,
        info,
      )?.name,
    ).toBe('catch-all');
  });
});

describe('rule semantics', () => {
  const fs = (rules: unknown[], precedence = 500) =>
    compileFlowSchema({
      apiVersion: 'flowcontrol.apiserver.svc.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'x', uid: 'u' },
      spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: precedence, rules },
    });
  const alice = user('alice', 'devs');

  test("'*' in namespaces matches only namespaced requests; clusterScope only the others", () => {
    const s = fs([
      {
        subjects: [{ kind: 'User', user: { name: 'alice' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }],
      },
    ]);
    expect(flowSchemaMatches(s, alice, req('GET', '/api/v1/namespaces/a/pods'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('GET', '/api/v1/pods'))).toBe(false);
    expect(flowSchemaMatches(s, alice, req('GET', '/api/v1/nodes'))).toBe(false);
    const c = fs([
      {
        subjects: [{ kind: 'User', user: { name: 'alice' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true }],
      },
    ]);
    expect(flowSchemaMatches(c, alice, req('GET', '/api/v1/nodes'))).toBe(true);
    expect(flowSchemaMatches(c, alice, req('GET', '/api/v1/namespaces/a/pods'))).toBe(false);
  });

  test('resources name subresources; api groups match in either spelling', () => {
    const s = fs([
      {
        subjects: [{ kind: 'Group', group: { name: 'devs' } }],
        resourceRules: [
          { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments/scale'], namespaces: ['team'] },
          { verbs: ['update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['team'] },
        ],
      },
    ]);
    expect(flowSchemaMatches(s, alice, req('PUT', '/apis/coordination.k8s.io/v1/namespaces/team/leases/l'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('PUT', '/apis/coordination.svc.io/v1/namespaces/team/leases/l'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('PATCH', '/apis/apps/v1/namespaces/team/deployments/web/scale'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('PATCH', '/apis/apps/v1/namespaces/team/deployments/web'))).toBe(false);
    expect(flowSchemaMatches(s, alice, req('PATCH', '/apis/apps/v1/namespaces/other/deployments/web/scale'))).toBe(false);
    expect(flowSchemaMatches(s, alice, req('GET', '/apis/apps/v1/namespaces/team/deployments/web/scale'))).toBe(false);
  });

  test("non-resource URLs: exact, '*', and 'prefix/*' below the prefix only", () => {
    const s = fs([
      {
        subjects: [{ kind: 'Group', group: { name: '*' } }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz/*', '/version'] }],
      },
    ]);
    expect(flowSchemaMatches(s, alice, req('GET', '/healthz/etcd'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('GET', '/healthz'))).toBe(false);
    expect(flowSchemaMatches(s, alice, req('GET', '/version'))).toBe(true);
    expect(flowSchemaMatches(s, alice, req('GET', '/versions'))).toBe(false);
    expect(flowSchemaMatches(s, alice, req('POST', '/version'))).toBe(false);
    // A resource request never matches a non-resource rule.
    expect(flowSchemaMatches(s, alice, req('GET', '/api/v1/pods'))).toBe(false);
  });

  test('service account subjects: by name, or every account of a namespace', () => {
    const s = fs([
      {
        subjects: [
          { kind: 'ServiceAccount', serviceAccount: { namespace: 'a', name: 'one' } },
          { kind: 'ServiceAccount', serviceAccount: { namespace: 'b', name: '*' } },
        ],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      },
    ]);
    const info = req('GET', '/apis');
    expect(flowSchemaMatches(s, user('system:serviceaccount:a:one'), info)).toBe(true);
    expect(flowSchemaMatches(s, user('system:serviceaccount:a:two'), info)).toBe(false);
    expect(flowSchemaMatches(s, user('system:serviceaccount:b:any'), info)).toBe(true);
    expect(flowSchemaMatches(s, user('system:serviceaccount:bb:any'), info)).toBe(false);
    expect(flowSchemaMatches(s, user('one'), info)).toBe(false);
  });

  test('an empty rules list matches nothing; ties in precedence go by name', () => {
    expect(flowSchemaMatches(fs([]), alice, req('GET', '/version'))).toBe(false);
    const a = { ...fs([]), name: 'a' };
    const b = { ...fs([]), name: 'b' };
    expect([b, a].sort(byPrecedence).map((x) => x.name)).toEqual(['a', 'b']);
  });
});
