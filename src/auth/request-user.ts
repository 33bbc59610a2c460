/**
 * The authenticated user of a request, kept beside it for the layers below the filter chain
 * (admission sees `request.userInfo`) without widening every handler's signature.
 */
import type { UserInfo } from './tokens';

const users = new WeakMap<Request, UserInfo>();

export function setRequestUser(req: Request, user: UserInfo): void {
  users.set(req, user);
}

export function requestUser(req: Request): UserInfo | undefined {
  return users.get(req);
}
