/**
 * RBAC (issue 11 items 2-5), end to end: the bootstrap policy; a Role and RoleBinding grant
 * exactly their verbs in their namespace within a second; ClusterRoles and their aggregation;
 * access reviews through `kubectl auth can-i` (with --list) and `kubectl auth whoami`;
 * impersonation with `kubectl --as`, itself authorized; --authorization-mode=AlwaysAllow.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-rbac-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(tokenFile, ['dev-token,dev,uid-dev,"developers"', 'ops-token,ops,uid-ops,"operators"', ''].join('\n'));
let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: [`--token-auth-file=${tokenFile}`] });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const as = async (token: string, p: string, init: RequestInit = {}) => {
  const r = await srv.fetch(p, { ...init, token, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } } as RequestInit);
  return { status: r.status, body: (await r.json()) as Json };
};

describe('bootstrap policy', () => {
  test('the reference roles and bindings exist; every user may read discovery and ask about itself', async () => {
    const roles = (await srv.json('GET', `${RBAC}/clusterroles`)).body.items.map((i: Json) => i.metadata.name);
    expect(roles).toEqual(expect.arrayContaining(['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user']));
    const crb = await srv.json('GET', `${RBAC}/clusterrolebindings/cluster-admin`);
    expect(crb.body.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
    expect((await as('dev-token', '/apis')).status).toBe(200);
    expect((await as('dev-token', '/version')).status).toBe(200);
    const denied = await as('dev-token', '/api/v1/namespaces/default/pods');
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });
});

describe('roles and bindings', () => {
  test('a Role + RoleBinding grants exactly its verbs in its namespace, within a second', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'team' } });
    await srv.json('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'cm' } });
    expect(
      (
        await srv.json('POST', `${RBAC}/namespaces/team/roles`, {
          metadata: { name: 'cm-reader' },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
        })
      ).status,
    ).toBe(201);
    const bound = Date.now();
    expect(
      (
        await srv.json('POST', `${RBAC}/namespaces/team/rolebindings`, {
          metadata: { name: 'devs-read' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'developers' }],
        })
      ).status,
    ).toBe(201);
    const list = await until(
      () => as('dev-token', '/api/v1/namespaces/team/configmaps'),
      (r) => r.status === 200,
    );
    expect(list.status).toBe(200);
    expect(Date.now() - bound).toBeLessThan(1000);
    expect((await as('dev-token', '/api/v1/namespaces/team/configmaps/cm')).status).toBe(200);
    const create = await as('dev-token', '/api/v1/namespaces/team/configmaps', {
      method: 'POST',
      body: JSON.stringify({ metadata: { name: 'x' } }),
    });
    expect(create.status).toBe(403);
    expect(create.body.message).toBe(
      'configmaps is forbidden: User "dev" cannot create resource "configmaps" in API group "" in the namespace "team"',
    );
    expect((await as('dev-token', '/api/v1/namespaces/default/configmaps')).status).toBe(403);
    expect((await as('dev-token', '/api/v1/namespaces/team/secrets')).status).toBe(403);
    expect((await as('ops-token', '/api/v1/namespaces/team/configmaps')).status).toBe(403);
    // Deleting the binding takes the access away again.
    await srv.json('DELETE', `${RBAC}/namespaces/team/rolebindings/devs-read`);
    const gone = await until(
      () => as('dev-token', '/api/v1/namespaces/team/configmaps'),
      (r) => r.status === 403,
    );
    expect(gone.status).toBe(403);
  });

  test('a ClusterRoleBinding to the aggregated view role: reads everywhere, includes a role labelled for aggregation', async () => {
    await srv.json('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'ops-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ops' }],
    });
    const pods = await until(
      () => as('ops-token', '/api/v1/pods'),
      (r) => r.status === 200,
    );
    expect(pods.status).toBe(200);
    expect((await as('ops-token', '/apis/apps/v1/deployments')).status).toBe(200);
    expect((await as('ops-token', '/api/v1/secrets')).status).toBe(403);
    expect((await as('ops-token', '/apis/coordination.k8s.io/v1/leases')).status).toBe(403);
    // A ClusterRole labelled aggregate-to-view adds to view.
    await srv.json('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'lease-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list'] }],
    });
    const leases = await until(
      () => as('ops-token', '/apis/coordination.k8s.io/v1/leases'),
      (r) => r.status === 200,
    );
    expect(leases.status).toBe(200);
    // The aggregation controller writes the aggregated rules into the roles: view, edit and admin.
    const hasLeases = (r: Json) =>
      (r.body.rules ?? []).some((x: Json) => (x.resources ?? []).includes('leases') && x.verbs.includes('list'));
    for (const name of ['view', 'edit', 'admin']) {
      const role = await until(() => srv.json('GET', `${RBAC}/clusterroles/${name}`), hasLeases);
      expect(hasLeases(role), name).toBe(true);
      expect(role.body.rules.some((x: Json) => x.resources?.includes('pods'))).toBe(true);
    }
  });

  test('validation: a binding needs a roleRef to a known kind, and its roleRef cannot change', async () => {
    const bad = await srv.json('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'bad' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: '' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes.map((c: Json) => c.field)).toEqual(['roleRef.kind', 'roleRef.name', 'subjects[0].namespace']);
    const ch = await srv.json(
      'PATCH',
      `${RBAC}/clusterrolebindings/ops-view`,
      { roleRef: { name: 'edit' } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(ch.status).toBe(422);
    expect(ch.body.message).toContain('cannot change roleRef');
  });
});

describe('escalation prevention', () => {
  test('roles and bindings only with permissions held, unless escalate or bind is granted', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'esc' } });
    await srv.json('POST', `${RBAC}/namespaces/esc/roles`, {
      metadata: { name: 'role-maker' },
      rules: [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'list'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      ],
    });
    await srv.json('POST', `${RBAC}/namespaces/esc/rolebindings`, {
      metadata: { name: 'dev-role-maker' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role-maker' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' }],
    });
    const role = (name: string, rules: Json[]) =>
      as('dev-token', `${RBAC}/namespaces/esc/roles`, { method: 'POST', body: JSON.stringify({ metadata: { name }, rules }) });
    const ok = await until(
      () => role('cm-get', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]),
      (r) => r.status === 201,
    );
    expect(ok.status).toBe(201);
    const bad = await role('secret-get', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    expect(bad.status).toBe(403);
    expect(bad.body.message).toBe(
      'roles.rbac.authorization.k8s.io "secret-get" is forbidden: user "dev" (groups=["developers" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    const bind = (name: string, kind: string, roleName: string) =>
      as('dev-token', `${RBAC}/namespaces/esc/rolebindings`, {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ops' }],
        }),
      });
    expect((await bind('ops-cm', 'Role', 'cm-get')).status).toBe(201);
    expect((await bind('ops-admin', 'ClusterRole', 'admin')).status).toBe(403);
    // With `bind` on that ClusterRole, the binding may grant what dev does not hold.
    await srv.json('POST', `${RBAC}/namespaces/esc/roles`, {
      metadata: { name: 'binder' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['admin'] }],
    });
    await srv.json('POST', `${RBAC}/namespaces/esc/rolebindings`, {
      metadata: { name: 'dev-binder' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'binder' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' }],
    });
    const allowed = await until(
      () => bind('ops-admin', 'ClusterRole', 'admin'),
      (r) => r.status === 201,
    );
    expect(allowed.status).toBe(201);
  });
});

describe('kubectl auth and impersonation', () => {
  test('kubectl auth can-i (yes/no, --list) and auth whoami', async () => {
    const yes = srv.kubectl(['auth', 'can-i', 'create', 'pods', '-n', 'default']);
    expect(yes.stdout.trim()).toBe('yes');
    expect(yes.code).toBe(0);
    // As another user through impersonation (the admin may impersonate anyone).
    const no = srv.kubectl(['auth', 'can-i', 'create', 'configmaps', '-n', 'team', '--as', 'dev', '--as-group', 'developers']);
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
    const nonres = srv.kubectl(['auth', 'can-i', 'get', '/version', '--as', 'dev']);
    expect(nonres.stdout.trim()).toBe('yes');
    const list = srv.kubectl(['auth', 'can-i', '--list', '-n', 'team', '--as', 'ops']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]/m);
    const who = srv.kubectl(['auth', 'whoami', '-o', 'json']);
    expect(who.code).toBe(0);
    expect(JSON.parse(who.stdout).status.userInfo).toMatchObject({ username: 'admin', groups: ['system:masters', 'system:authenticated'] });
    const whoAs = JSON.parse(srv.kubectl(['auth', 'whoami', '-o', 'json', '--as', 'ops', '--as-group', 'operators']).stdout);
    expect(whoAs.status.userInfo).toEqual({ username: 'ops', groups: ['operators', 'system:authenticated'] });
  });

  test("Impersonate-Extra-* headers become the user's extra", async () => {
    const r = await srv.fetch('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'Impersonate-User': 'ops',
        'Impersonate-Extra-scopes': 'read, write',
      },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    } as RequestInit);
    expect(r.status).toBe(201);
    expect(((await r.json()) as Json).status.userInfo).toEqual({
      username: 'ops',
      groups: ['system:authenticated'],
      extra: { scopes: ['read', 'write'] },
    });
  });

  test('impersonation needs the impersonate verb', async () => {
    const r = await srv.fetch('/api/v1/namespaces/default/pods', {
      token: 'dev-token',
      headers: { 'Impersonate-User': 'admin' },
    } as RequestInit);
    expect(r.status).toBe(403);
    expect(((await r.json()) as Json).message).toBe(
      'users "admin" is forbidden: User "dev" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const sar = await srv.json('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'ops', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'default' } },
    });
    expect(sar.status).toBe(201);
    expect(sar.body.apiVersion).toBe('authorization.k8s.io/v1');
    expect(sar.body.status).toEqual({ allowed: true });
  });
});

describe('service account tokens', () => {
  test('every namespace gets a default service account', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'sa-ns' } });
    const sa = await until(
      () => srv.json('GET', '/api/v1/namespaces/sa-ns/serviceaccounts/default'),
      (r) => r.status === 200,
    );
    expect(sa.status).toBe(200);
  });

  test('kubectl create token: the token authenticates as the account, RBAC decides; deleting the account ends it', async () => {
    expect((await srv.json('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'robot' } })).status).toBe(201);
    const k = srv.kubectl(['create', 'token', 'robot', '-n', 'team', '--duration=1h']);
    expect(k.code).toBe(0);
    const token = k.stdout.trim();
    const [, payload] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString());
    expect(claims).toMatchObject({
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: 'system:serviceaccount:team:robot',
      aud: ['https://kubernetes.default.svc.cluster.local'],
      'kubernetes.io': { namespace: 'team', serviceaccount: { name: 'robot' } },
    });
    expect(claims.exp - claims.iat).toBe(3600);
    const who = await as(token, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    expect(who.status).toBe(201);
    expect(who.body.status.userInfo).toMatchObject({
      username: 'system:serviceaccount:team:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
    expect((await as(token, '/api/v1/namespaces/team/pods')).status).toBe(403);
    await srv.json('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'robot-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team' }],
    });
    expect(
      (
        await until(
          () => as(token, '/api/v1/namespaces/team/pods'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    // The issuer's keys are published to service accounts.
    const jwks = await as(token, '/openid/v1/jwks');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect((await as(token, '/.well-known/openid-configuration')).body.jwks_uri).toBe(
      'https://kubernetes.default.svc.cluster.local/openid/v1/jwks',
    );
    // Deleted, then recreated under the same name: the old token no longer works.
    await srv.json('DELETE', '/api/v1/namespaces/team/serviceaccounts/robot');
    expect(
      (
        await until(
          () => as(token, '/api/v1/namespaces/team/pods'),
          (r) => r.status === 401,
        )
      ).status,
    ).toBe(401);
    await srv.json('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'robot' } });
    await Bun.sleep(100);
    expect((await as(token, '/api/v1/namespaces/team/pods')).status).toBe(401);
    expect((await as(`${token}x`, '/api/v1/namespaces/team/pods')).status).toBe(401);
  });

  test('TokenRequest limits: at least ten minutes', async () => {
    const r = await srv.json('POST', '/api/v1/namespaces/team/serviceaccounts/default/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 60 },
    });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'TokenRequest.authentication.svc.io "default" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
  });

  test('a token bound to a Secret or Pod: the object must exist (404), match its uid (409), run as the account (400); the token ends with it', async () => {
    const TR = '/api/v1/namespaces/team/serviceaccounts/bound-sa/token';
    expect((await srv.json('POST', '/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'bound-sa' } })).status).toBe(201);
    const req = (ref: Json) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef: ref } });
    const missing = await srv.json('POST', TR, req({ kind: 'Secret', apiVersion: 'v1', name: 'nope' }));
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('secrets "nope" not found');
    const sec = await srv.json('POST', '/api/v1/namespaces/team/secrets', { metadata: { name: 'holder' } });
    expect(sec.status).toBe(201);
    const wrongUid = await srv.json('POST', TR, req({ kind: 'Secret', apiVersion: 'v1', name: 'holder', uid: 'not-the-uid' }));
    expect(wrongUid.status).toBe(409);
    expect(wrongUid.body.message).toContain('the UID in the bound object reference (not-the-uid) does not match the UID in record');
    const pod = await srv.json('POST', '/api/v1/namespaces/team/pods', {
      metadata: { name: 'other-sa-pod' },
      spec: { serviceAccountName: 'default', containers: [{ name: 'c', image: 'x' }] },
    });
    expect(pod.status).toBe(201);
    const otherSa = await srv.json('POST', TR, req({ kind: 'Pod', apiVersion: 'v1', name: 'other-sa-pod' }));
    expect(otherSa.status).toBe(400);
    expect(otherSa.body.message).toBe('cannot bind token for serviceaccount "bound-sa" to pod running with different serviceaccount name.');
    const ok = await srv.json('POST', TR, req({ kind: 'Secret', apiVersion: 'v1', name: 'holder', uid: sec.body.metadata.uid }));
    expect(ok.status).toBe(201);
    const token = ok.body.status.token as string;
    const who = async () =>
      (
        await srv.json(
          'POST',
          '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
          { authorization: `Bearer ${token}` },
        )
      ).status;
    expect(await who()).toBe(201);
    expect((await srv.json('DELETE', '/api/v1/namespaces/team/secrets/holder')).status).toBe(200);
    const after = await until(who, (s) => s === 401);
    expect(after).toBe(401);
  });
});

test('--authorization-mode=AlwaysAllow lets every authenticated user do everything', async () => {
  const other = await startServer({ args: [`--token-auth-file=${tokenFile}`, '--authorization-mode=AlwaysAllow'] });
  try {
    const r = await other.fetch('/api/v1/namespaces/default/secrets', { token: 'dev-token' } as RequestInit);
    expect(r.status).toBe(200);
  } finally {
    await other.stop();
  }
});
