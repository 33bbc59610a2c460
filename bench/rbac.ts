/**
 * The RBAC authorizer's cost per request (issue 11 bench): RbacIndex.allows() with 1,000
 * RoleBindings (and their Roles) in 100 namespaces plus the bootstrap policy, for a user bound in
 * the request's namespace (allowed), the same user in another namespace (denied after its
 * bindings are looked at), a user with no binding, and a request only the bootstrap grants
 * (discovery). Baseline: the same attributes checked against one rule in plain TypeScript.
 *
 *     bun bench/rbac.ts
 */
import { Bench } from 'tinybench';
import type { Obj } from '../src/api/meta';
import { bootstrapPolicy } from '../src/auth/bootstrap-rbac';
import { type AccessAttributes, RbacIndex } from '../src/auth/rbac';

const index = new RbacIndex();
const { clusterRoles, clusterRoleBindings } = bootstrapPolicy();
for (const o of clusterRoles) index.apply('ClusterRole', o, false);
for (const o of clusterRoleBindings) index.apply('ClusterRoleBinding', o, false);
for (let i = 0; i < 1000; i++) {
  const ns = `ns-${i % 100}`;
  const role: Obj = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'Role',
    metadata: { name: `role-${i}`, namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
    ],
  } as Obj;
  index.apply('Role', role, false);
  index.apply(
    'RoleBinding',
    {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `rb-${i}`, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `role-${i}` },
      subjects: [
        { kind: 'User', name: `user-${i % 200}` },
        { kind: 'ServiceAccount', name: 'ctrl', namespace: ns },
      ],
    } as Obj,
    false,
  );
}
const user = { name: 'user-7', uid: '', groups: ['system:authenticated'] };
const stranger = { name: 'nobody', uid: '', groups: ['system:authenticated'] };
const res = (ns: string, verb = 'list', resource = 'configmaps'): AccessAttributes => ({
  verb,
  resourceRequest: true,
  namespace: ns,
  group: '',
  resource,
  subresource: '',
  name: '',
  path: '',
});
const cases: [string, typeof user, AccessAttributes, boolean][] = [
  ['bound user, its namespace (allowed)', user, res('ns-7'), true],
  ['bound user, another namespace (denied)', user, res('ns-8'), false],
  ['user without bindings (denied)', stranger, res('ns-7'), false],
  ['discovery via bootstrap (allowed)', stranger, { ...res(''), resourceRequest: false, verb: 'get', path: '/apis' }, true],
];
for (const [name, u, a, want] of cases) if (index.allows(u, a) !== want) throw new Error(`${name}: wrong decision`);

const bench = new Bench({ time: 1000 });
const rule = { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'] };
const a0 = res('ns-7');
bench.add('baseline: one rule in plain TS', () => {
  if (!(rule.verbs.includes(a0.verb) && rule.apiGroups.includes(a0.group) && rule.resources.includes(a0.resource))) throw new Error('x');
});
for (const [name, u, a] of cases) bench.add(name, () => index.allows(u, a));
await bench.run();
for (const t of bench.tasks) {
  const r = t.result as { latency?: { mean: number } } | undefined;
  console.log(`${t.name.padEnd(42)} ${((r?.latency?.mean ?? Number.NaN) * 1000).toFixed(3)} us/op`);
}
