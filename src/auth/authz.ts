/**
 * Authorization until RBAC exists: members of system:masters may do everything; every other
 * authenticated user may read discovery documents (as the reference's default discovery roles
 * allow) and is otherwise forbidden, with the reference's Forbidden message.
 */
import { svcGroup } from '../api/brand';
import type { RequestInfo, Verb } from '../api/request-info';
import { forbidden, StatusError } from '../api/status';
import type { AuthzAttributes, AuthzDecision, Decider } from '../cel/lib/authz';
import { MASTERS, type UserInfo } from './tokens';

/**
 * Non-resource paths every authenticated user may GET: the reference's default cluster roles
 * system:discovery and system:public-info-viewer (bound to system:authenticated).
 */
const DISCOVERY_EXACT = new Set(['/api', '/apis', '/healthz', '/livez', '/readyz', '/version', '/version/', '/openapi']);
const DISCOVERY_PREFIX = ['/api/', '/apis/', '/openapi/'];

function discoveryAllowed(info: RequestInfo): boolean {
  if (info.isResourceRequest || (info.verb !== 'get' && info.verb !== 'head')) return false;
  return DISCOVERY_EXACT.has(info.path) || DISCOVERY_PREFIX.some((p) => info.path.startsWith(p));
}

export function authorize(user: UserInfo, info: RequestInfo): StatusError | undefined {
  if (user.groups.includes(MASTERS)) return undefined;
  if (discoveryAllowed(info)) return undefined;
  if (!info.isResourceRequest) {
    return new StatusError(403, 'Forbidden', `forbidden: User "${user.name}" cannot ${info.verb} path "${info.path}"`, {});
  }
  const where = info.namespace ? ` in the namespace "${info.namespace}"` : ' at the cluster scope';
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return forbidden(
    { group: info.group, resource: info.resource },
    info.name || undefined,
    `User "${user.name}" cannot ${info.verb} resource "${resource}" in API group "${info.group}"${where}`,
  );
}

/**
 * The authorizer as CEL's authorizer library asks it (admission policies): a decision for `user`
 * on a resource or a path; `serviceAccount` asks for a service account's user instead.
 */
export function authzDecider(user: UserInfo): Decider {
  return {
    decide(a: AuthzAttributes): AuthzDecision {
      const info: RequestInfo =
        a.path !== undefined
          ? { isResourceRequest: false, verb: a.verb.toLowerCase(), path: a.path }
          : {
              isResourceRequest: true,
              verb: a.verb as Verb,
              group: svcGroup(a.group ?? ''),
              brand: 'svc',
              version: '',
              resource: a.resource ?? '',
              subresource: a.subresource ?? '',
              namespace: a.namespace ?? '',
              name: a.name ?? '',
              parts: [],
            };
      const denied = authorize(user, info);
      return denied ? { allowed: false, reason: '' } : { allowed: true, reason: '' };
    },
    serviceAccount(namespace: string, name: string): Decider {
      return authzDecider({
        name: `system:serviceaccount:${namespace}:${name}`,
        uid: '',
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      });
    },
  };
}
