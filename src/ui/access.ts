/**
 * Who may look at the dashboard, and how a browser proves it:
 *
 *   POST /ui/api/login   form field `token` (a bearer token the API accepts). The token is
 *                        checked (authentication, then RBAC for `get` on the non-resource URL
 *                        /ui/) and kept in an HttpOnly, Secure, SameSite=Strict cookie with
 *                        Path=/ui, so no script reads it and no other path is sent it.
 *   POST /ui/api/logout  clears the cookie.
 *   every other request  the cookie becomes the request's Authorization header and the API's own
 *                        chain authenticates and authorizes it (a 401 or 403 like any request).
 *
 * CSRF: everything else under /ui is read-only (GET/HEAD; other methods get 405), the cookie is
 * SameSite=Strict, and the two POSTs must carry an Origin equal to the server's own (a browser
 * always sends Origin on a POST; a form on another site names that site).
 */
import type { UserInfo } from '../api/user';
import type { Authorizer } from '../auth/authz';
import type { TokenAuthenticator } from '../auth/tokens';

export const COOKIE = 'svc_ui_token';
/** How long a login lasts in the browser (the token itself may end sooner). */
const MAX_AGE_SECONDS = 8 * 3600;

/** The bearer token of the dashboard's cookie, or undefined. */
export function cookieToken(req: Request): string | undefined {
  const h = req.headers.get('cookie');
  if (!h) return undefined;
  for (const part of h.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== COOKIE) continue;
    const v = decodeURIComponent(part.slice(eq + 1).trim());
    return v || undefined;
  }
  return undefined;
}

export function setCookie(token: string): string {
  return `${COOKIE}=${encodeURIComponent(token)}; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age=${MAX_AGE_SECONDS}`;
}

export const CLEAR_COOKIE = `${COOKIE}=; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;

/**
 * The request as the API chain should see it: the same URL and method, the cookie's token as
 * its only credential. Impersonation headers and any Authorization header the browser sent are
 * dropped: the dashboard acts as the logged-in user only.
 */
export function asBearer(req: Request, token: string): Request {
  const headers = new Headers({ authorization: `Bearer ${token}` });
  const ua = req.headers.get('user-agent');
  if (ua) headers.set('user-agent', ua);
  return new Request(req.url, { method: req.method, headers, signal: req.signal });
}

/** Whether a POST comes from a page of this server (its Origin is this server's scheme, host and port). */
export function sameOrigin(req: Request): boolean {
  const origin = req.headers.get('origin');
  if (!origin) return false;
  const url = new URL(req.url);
  const host = req.headers.get('host') ?? url.host;
  return origin === `https://${host}` || origin === url.origin;
}

/** What RBAC is asked for the dashboard: get on the non-resource URL (every page asks the same). */
export function uiAccess(path: string): {
  verb: string;
  resourceRequest: false;
  namespace: '';
  group: '';
  resource: '';
  subresource: '';
  name: '';
  path: string;
} {
  return { verb: 'get', resourceRequest: false, namespace: '', group: '', resource: '', subresource: '', name: '', path };
}

export type LoginResult = { ok: true; user: UserInfo } | { ok: false; status: 401 | 403; message: string };

/** Check a token as the login form submits it: a user the API knows, allowed to get /ui/. */
export async function checkLogin(token: string, authn: TokenAuthenticator, authz: Authorizer): Promise<LoginResult> {
  const user = token ? await authn.authenticateToken(token) : undefined;
  if (!user) return { ok: false, status: 401, message: 'This token is not valid.' };
  if (!authz.allows(user, uiAccess('/ui/'))) {
    return { ok: false, status: 403, message: `User "${user.name}" cannot get path "/ui/".` };
  }
  return { ok: true, user };
}
