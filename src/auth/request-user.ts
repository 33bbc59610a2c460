/**
 * The authenticated user of a request, kept beside it for the layers below the filter chain
 * (admission sees `request.userInfo`) without widening every handler's signature.
 */
import type { UserInfo } from '../api/user';

const users = new WeakMap<Request, UserInfo>();

export function setRequestUser(req: Request, user: UserInfo): void {
  users.set(req, user);
}

export function requestUser(req: Request): UserInfo | undefined {
  return users.get(req);
}

const annotations = new WeakMap<Request, Record<string, string>>();

/** The audit annotations of a request (admission adds to them; the audit record writes them). */
export function requestAnnotations(req: Request): Record<string, string> {
  let a = annotations.get(req);
  if (!a) {
    a = {};
    annotations.set(req, a);
  }
  return a;
}
