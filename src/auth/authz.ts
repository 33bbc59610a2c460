/**
 * Authorization until RBAC exists: members of system:masters may do everything; every other
 * authenticated user is forbidden, with the reference's Forbidden message.
 */
import type { RequestInfo } from '../api/request-info';
import { forbidden, StatusError } from '../api/status';
import { MASTERS, type UserInfo } from './tokens';

export function authorize(user: UserInfo, info: RequestInfo): StatusError | undefined {
  if (user.groups.includes(MASTERS)) return undefined;
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
