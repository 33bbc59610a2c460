/**
 * Access reviews (authorization.svc.io/v1, authentication.svc.io/v1; virtual kinds, answered and
 * not stored), what `kubectl auth can-i` and `kubectl auth whoami` send:
 *
 *   SelfSubjectAccessReview    may I do this (spec.resourceAttributes or nonResourceAttributes)?
 *   SubjectAccessReview        may this user (spec.user, groups, uid) do it?
 *   LocalSubjectAccessReview   the same, in the request's namespace only
 *   SelfSubjectRulesReview     what may I do in spec.namespace (resourceRules, nonResourceRules)?
 *   SelfSubjectReview          who am I (status.userInfo)?
 */
import { svcGroup } from '../api/brand';
import { isObject, type JsonObject, type Obj } from '../api/meta';
import { badRequest, invalid } from '../api/status';
import type { UserInfo } from '../api/user';
import type { Authorizer } from './authz';
import type { AccessAttributes, RbacIndex, Rule } from './rbac';
import { MASTERS, type TokenAuthenticator } from './tokens';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function attributesOf(spec: JsonObject): AccessAttributes | undefined {
  const r = isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const n = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  if (r) {
    return {
      verb: str(r.verb),
      resourceRequest: true,
      namespace: str(r.namespace),
      group: svcGroup(str(r.group)),
      resource: str(r.resource),
      subresource: str(r.subresource),
      name: str(r.name),
      path: '',
    };
  }
  if (n)
    return {
      verb: str(n.verb),
      resourceRequest: false,
      namespace: '',
      group: '',
      resource: '',
      subresource: '',
      name: '',
      path: str(n.path),
    };
  return undefined;
}

const noAttributes = (kind: string) =>
  invalid(kind, 'authorization.svc.io', '', [
    {
      type: 'FieldValueRequired',
      field: 'spec.resourceAttributes',
      detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
    },
  ]);

/** The answer to a review created by `user` in `namespace`: the object with its status. */
export function review(kind: string, body: Obj, user: UserInfo, namespace: string, authz: Authorizer, rbac: RbacIndex): Obj {
  const spec = isObject(body.spec) ? body.spec : {};
  const out: Obj = { ...body, metadata: { ...body.metadata, creationTimestamp: null as unknown as string } };
  const decide = (who: UserInfo) => {
    const a = attributesOf(spec);
    if (!a) throw noAttributes(kind);
    const allowed = authz.allows(who, a);
    return allowed ? { allowed: true } : { allowed: false };
  };
  switch (kind) {
    case 'SelfSubjectAccessReview':
      out.status = decide(user);
      return out;
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      if (kind === 'LocalSubjectAccessReview') {
        const ns = isObject(spec.resourceAttributes) ? str(spec.resourceAttributes.namespace) : '';
        if (ns !== namespace) {
          throw invalid(kind, 'authorization.svc.io', '', [
            {
              type: 'FieldValueInvalid',
              field: 'spec.resourceAttributes.namespace',
              badValue: ns,
              detail: 'must match metadata.namespace',
            },
          ]);
        }
      }
      const who: UserInfo = { name: str(spec.user), uid: str(spec.uid), groups: strings(spec.groups) };
      out.status = decide(who);
      return out;
    }
    case 'SelfSubjectRulesReview': {
      const ns = str(spec.namespace);
      const rules: Rule[] = user.groups.includes(MASTERS)
        ? [
            { verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [], nonResourceURLs: [] },
            { verbs: ['*'], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ['*'] },
          ]
        : [];
      rules.push(...rbac.rulesIn(user, ns));
      const resourceRules = rules
        .filter((r) => r.nonResourceURLs.length === 0)
        .map((r) => {
          const o: JsonObject = { verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources };
          if (r.resourceNames.length > 0) o.resourceNames = r.resourceNames;
          return o;
        });
      const nonResourceRules = rules
        .filter((r) => r.nonResourceURLs.length > 0)
        .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs }));
      out.status = { resourceRules, nonResourceRules, incomplete: false };
      return out;
    }
    case 'SelfSubjectReview': {
      const info: JsonObject = { username: user.name, groups: user.groups };
      if (user.uid) info.uid = user.uid;
      if (user.extra) info.extra = user.extra;
      out.status = { userInfo: info };
      return out;
    }
    default:
      throw new Error(`not a review kind: ${kind}`);
  }
}

/**
 * A TokenReview (authentication.svc.io/v1): who the token in spec.token is, by the server's own
 * authenticator. Service account tokens are valid for the server's audience (its issuer) only;
 * static tokens for any. status.audiences: the requested audiences the token is valid for, or
 * the server's when none were requested.
 */
export async function tokenReview(body: Obj, authn: TokenAuthenticator, apiAudiences: string[]): Promise<Obj> {
  const spec = isObject(body.spec) ? body.spec : {};
  const token = str(spec.token);
  if (token === '') throw badRequest('token is required for TokenReview in authentication');
  const out: Obj = { ...body, metadata: { ...body.metadata, creationTimestamp: null as unknown as string } };
  const wanted = strings(spec.audiences);
  const audiences = wanted.length === 0 ? apiAudiences : authn.isStatic(token) ? wanted : wanted.filter((a) => apiAudiences.includes(a));
  const user = audiences.length > 0 ? await authn.authenticateToken(token) : undefined;
  if (!user) {
    out.status = { user: {} };
    // A service account token (a JWT) for other audiences: the reference's JWT authenticator's error.
    if (wanted.length > 0 && audiences.length === 0 && token.split('.').length === 3) {
      const q = (l: string[]) => `[${l.map((a) => JSON.stringify(a)).join(' ')}]`;
      (out.status as JsonObject).error = `token audiences ${q(apiAudiences)} is invalid for the target audiences ${q(wanted)}`;
    }
    return out;
  }
  const info: JsonObject = { username: user.name, groups: user.groups };
  if (user.uid) info.uid = user.uid;
  if (user.extra) info.extra = user.extra;
  out.status = { authenticated: true, user: info, audiences };
  return out;
}
