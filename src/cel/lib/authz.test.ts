/**
 * The authorizer library with a recording decider: what each builder sends to the authorizer and
 * what the decision members answer.
 */
import { describe, expect, test } from 'bun:test';
import { celEnv, compile, executable } from '../index';
import { type AuthzAttributes, authorizerFor, type Decider } from './authz';

const asked: AuthzAttributes[] = [];
function decider(user: string): Decider {
  return {
    decide: (a) => {
      asked.push(a);
      if (a.verb === 'boom') return { allowed: false, reason: '', error: `no authorizer for ${user}` };
      return { allowed: a.verb === 'get' && user === 'alice', reason: `${user} ${a.verb}` };
    },
    serviceAccount: (ns, name) => decider(`system:serviceaccount:${ns}:${name}`),
  };
}

const env = celEnv({ authorizer: 'kubernetes.authorization.Authorizer' });
const az = authorizerFor(decider('alice'), { group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'web' });
const run = (expr: string): unknown => {
  const r = compile(expr, env);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return executable(r.program)({ authorizer: az });
};

describe('authorizer library', () => {
  test.each([
    [
      "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('get').allowed()",
      true,
      { verb: 'get', group: 'apps', resource: 'deployments', subresource: '', namespace: 'ns', name: 'x' },
    ],
    [
      "authorizer.group('').resource('pods').subresource('log').check('list').allowed()",
      false,
      { verb: 'list', group: '', resource: 'pods', subresource: 'log', namespace: '', name: '' },
    ],
    [
      "authorizer.requestResource.check('update').reason()",
      'alice update',
      { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'web' },
    ],
    ["authorizer.path('/metrics').check('get').allowed()", true, { verb: 'get', path: '/metrics' }],
    [
      "authorizer.serviceAccount('kube-system', 'ctl').group('').resource('secrets').check('get').reason()",
      'system:serviceaccount:kube-system:ctl get',
      { verb: 'get', group: '', resource: 'secrets', subresource: '', namespace: '', name: '' },
    ],
    ["authorizer.requestResource.check('boom').errored()", true, undefined],
    ["authorizer.requestResource.check('boom').error()", 'no authorizer for alice', undefined],
    ["authorizer.requestResource.check('get').errored()", false, undefined],
  ])('%s', (expr, want, attrs) => {
    asked.length = 0;
    expect(run(expr as string)).toEqual(want);
    if (attrs) expect(asked).toEqual([attrs as AuthzAttributes]);
  });

  test('unknown members and wrong argument types do not compile', () => {
    expect(compile("authorizer.group('x').nope()", env).ok).toBe(false);
    expect(compile('authorizer.group(1)', env).ok).toBe(false);
    expect(compile("authorizer.requestResource.check('get').allowed() == 'yes'", env).ok).toBe(false);
  });
});
