/**
 * Authorization (--authorization-mode, as the reference): `AlwaysAllow`, or `RBAC` (the default)
 * deciding from the RBAC index (src/auth/rbac.ts). Members of system:masters may do everything in
 * either mode (the reference's privileged group). A refusal is 403 with the reference's message:
 *
 *   pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "dev"
 *   forbidden: User "alice" cannot get path "/metrics"
 *
 * Without an RBAC index (before the server wires one) every authenticated user may read the
 * discovery and health documents, as the reference's bootstrap roles allow, and nothing else.
 */
import { svcGroup } from '../api/brand';
import type { RequestInfo } from '../api/request-info';
import { forbidden, StatusError } from '../api/status';
import type { UserInfo } from '../api/user';
import type { AuthzAttributes, AuthzDecision, Decider } from '../cel/lib/authz';
import type { AccessAttributes, RbacIndex } from './rbac';
import { MASTERS } from './tokens';

export type AuthorizationMode = 'AlwaysAllow' | 'RBAC';

const DISCOVERY_EXACT = new Set(['/api', '/apis', '/healthz', '/livez', '/readyz', '/version', '/version/', '/openapi']);
const DISCOVERY_PREFIX = ['/api/', '/apis/', '/openapi/'];

function discoveryAllowed(a: AccessAttributes): boolean {
  if (a.resourceRequest || (a.verb !== 'get' && a.verb !== 'head')) return false;
  return DISCOVERY_EXACT.has(a.path) || DISCOVERY_PREFIX.some((p) => a.path.startsWith(p));
}

/** What RBAC looks at of a request. */
export function accessAttributes(info: RequestInfo): AccessAttributes {
  if (!info.isResourceRequest) {
    return { verb: info.verb, resourceRequest: false, namespace: '', group: '', resource: '', subresource: '', name: '', path: info.path };
  }
  return {
    verb: info.verb,
    resourceRequest: true,
    namespace: info.namespace,
    group: info.group,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    path: '',
  };
}

/** The reference's Forbidden for a refused request. */
export function forbiddenFor(user: UserInfo, a: AccessAttributes): StatusError {
  if (!a.resourceRequest) {
    return new StatusError(403, 'Forbidden', `forbidden: User "${user.name}" cannot ${a.verb} path "${a.path}"`, {});
  }
  const where = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return forbidden(
    { group: a.group, resource: a.resource },
    a.name || undefined,
    `User "${user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.group}"${where}`,
  );
}

export class Authorizer {
  constructor(
    readonly mode: AuthorizationMode = 'RBAC',
    private readonly rbac?: RbacIndex,
  ) {}

  /** Whether the user may do what the attributes say. */
  allows(user: UserInfo, a: AccessAttributes): boolean {
    if (this.mode === 'AlwaysAllow' || user.groups.includes(MASTERS)) return true;
    if (!this.rbac) return discoveryAllowed(a);
    return this.rbac.allows(user, a);
  }

  /** The request's refusal, or undefined when it is allowed. */
  authorize(user: UserInfo, info: RequestInfo): StatusError | undefined {
    const a = accessAttributes(info);
    return this.allows(user, a) ? undefined : forbiddenFor(user, a);
  }

  /**
   * The authorizer as CEL's authorizer library asks it (admission policies): a decision for
   * `user` on a resource or a path; `serviceAccount` asks for a service account's user instead.
   */
  decider(user: UserInfo): Decider {
    return {
      decide: (a: AuthzAttributes): AuthzDecision => {
        const attrs: AccessAttributes =
          a.path !== undefined
            ? {
                verb: a.verb.toLowerCase(),
                resourceRequest: false,
                namespace: '',
                group: '',
                resource: '',
                subresource: '',
                name: '',
                path: a.path,
              }
            : {
                verb: a.verb,
                resourceRequest: true,
                namespace: a.namespace ?? '',
                group: svcGroup(a.group ?? ''),
                resource: a.resource ?? '',
                subresource: a.subresource ?? '',
                name: a.name ?? '',
                path: '',
              };
        return { allowed: this.allows(user, attrs), reason: '' };
      },
      serviceAccount: (namespace: string, name: string): Decider =>
        this.decider({
          name: `system:serviceaccount:${namespace}:${name}`,
          uid: '',
          groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        }),
    };
  }
}
