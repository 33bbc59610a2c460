/**
 * Impersonation (the reference's WithImpersonation filter): a request with `Impersonate-User`
 * (and optionally `Impersonate-Group`, `Impersonate-Uid`) acts as that user, if the requester may
 * `impersonate` each of them: users (or the service account, for `system:serviceaccount:<ns>:<n>`),
 * groups, uids, and `Impersonate-Extra-<key>` values (userextras/<key>). `kubectl --as` / `--as-group` send these headers.
 */
import { badRequest, type StatusError } from '../api/status';
import type { UserInfo } from '../api/user';
import { type Authorizer, forbiddenFor } from './authz';
import type { AccessAttributes } from './rbac';

const attrs = (group: string, resource: string, name: string, namespace = ''): AccessAttributes => ({
  verb: 'impersonate',
  resourceRequest: true,
  namespace,
  group,
  resource,
  subresource: '',
  name,
  path: '',
});

/** The user a request acts as: the authenticated one, or whom it impersonates (or a refusal). */
export function impersonated(req: Request, user: UserInfo, authz: Authorizer): UserInfo | StatusError {
  const asUser = req.headers.get('impersonate-user');
  const groupsHeader = req.headers.get('impersonate-group');
  const uid = req.headers.get('impersonate-uid');
  if (asUser === null) {
    if (groupsHeader !== null || uid !== null) return badRequest('requested impersonation of groups or uid without impersonating a user');
    return user;
  }
  const groups =
    groupsHeader === null
      ? []
      : groupsHeader
          .split(',')
          .map((g) => g.trim())
          .filter(Boolean);
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(asUser);
  const checks: AccessAttributes[] = [sa ? attrs('', 'serviceaccounts', sa[2] as string, sa[1]) : attrs('', 'users', asUser)];
  for (const g of groups) checks.push(attrs('', 'groups', g));
  if (uid !== null) checks.push(attrs('authentication.k8s.io', 'uids', uid));
  // Impersonate-Extra-<key>: each value authorized as userextras/<key> named by the value.
  const extra: Record<string, string[]> = {};
  req.headers.forEach((value, name) => {
    const n = name.toLowerCase();
    if (!n.startsWith('impersonate-extra-')) return;
    const key = decodeURIComponent(n.slice('impersonate-extra-'.length));
    const values = value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    extra[key] = [...(extra[key] ?? []), ...values];
    for (const v of values) checks.push({ ...attrs('authentication.k8s.io', 'userextras', v), subresource: key });
  });
  for (const c of checks) if (!authz.allows(user, c)) return forbiddenFor(user, c);
  const all = [...groups];
  if (sa) all.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  if (!all.includes('system:authenticated')) all.push('system:authenticated');
  const user2: UserInfo = { name: asUser, uid: uid ?? '', groups: all };
  if (Object.keys(extra).length > 0) user2.extra = extra;
  return user2;
}
