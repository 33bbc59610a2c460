/**
 * The variables of one request in CEL form (the reference's admission/plugin/cel activation):
 * `object`, `oldObject`, `request` (an AdmissionRequest as CEL data) and `authorizer`, shared by
 * the admission policies and the webhooks' matchConditions.
 */
import type { UserInfo } from '../../api/user';
import { toCel } from '../../cel/index';
import { authorizerFor, type Decider } from '../../cel/lib/authz';
import type { Attributes } from '../../registry/admission';
import type { Activation } from './evaluate';
import type { RuleRequest } from './matching';

/** The authorizer of a request without a user (the server's own writes): everything denied. */
export const DENY_ALL: Decider = {
  decide: () => ({ allowed: false, reason: 'no user' }),
  serviceAccount: () => DENY_ALL,
};

/**
 * A request's activation. `q.object` / `q.oldObject` are the objects the expressions see (absent:
 * null); `group` overrides the request's group spelling (a webhook's).
 */
export function requestActivation(
  a: Attributes,
  q: Pick<RuleRequest, 'object' | 'oldObject'>,
  decider: ((user: UserInfo) => Decider) | undefined,
  group = a.group,
): Activation {
  const gvk = { group, version: a.version, kind: a.kind };
  const gvr = { group, version: a.version, resource: a.resource };
  const user = a.user ? { username: a.user.name, uid: a.user.uid, groups: a.user.groups } : { username: '', groups: [] };
  // Already CEL data (strings, booleans, lists and maps: no integers to convert); the uid is
  // made only if an expression reads it.
  const request: Record<string, unknown> = {
    kind: gvk,
    resource: gvr,
    subResource: a.subresource,
    requestKind: gvk,
    requestResource: gvr,
    requestSubResource: a.subresource,
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: user,
    dryRun: a.dryRun,
    options: a.options ?? null,
  };
  let uid: string | undefined;
  Object.defineProperty(request, 'uid', { enumerable: true, get: () => (uid ??= crypto.randomUUID()) });
  return {
    object: q.object ? toCel(q.object) : null,
    oldObject: q.oldObject ? toCel(q.oldObject) : null,
    request,
    namespaceObject: null,
    authorizer: authorizerFor(a.user && decider ? decider(a.user) : DENY_ALL, {
      group: a.group,
      resource: a.resource,
      subresource: a.subresource,
      namespace: a.namespace,
      name: a.name,
    }),
  };
}
