/**
 * The dashboard's JSON endpoints (/ui/api/*), fetched with the login cookie. A 401 means the
 * login ended: back to the form.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function getJson<T>(name: string, params?: Record<string, string>): Promise<T> {
  const qs = params ? `?${new URLSearchParams(params)}` : '';
  const res = await fetch(`/ui/api/${name}${qs}`, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (res.status === 401) {
    location.assign('/ui/login');
    throw new ApiError(401, 'logged out');
  }
  const body = (await res.json().catch(() => ({}))) as { message?: string };
  if (!res.ok) throw new ApiError(res.status, body.message ?? res.statusText);
  return body as T;
}

export type * from './types';
