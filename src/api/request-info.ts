/**
 * RequestInfo: what a request asks for, parsed once from method + path + query (as the
 * reference's RequestInfoFactory). Everything after this works on these fields, never on the URL.
 *
 *   /api/v1/namespaces/{ns}/{resource}/{name}/{subresource}
 *   /apis/{group}/{version}/{resource}/{name}
 *   /api/v1/namespaces/{name}[/status|/finalize]   (the namespace object itself)
 *   /api/v1/watch/...                               (legacy watch prefix)
 */

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

export interface ResourceRequest {
  isResourceRequest: true;
  verb: Verb;
  /** '' for the core group. */
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** '' when cluster-wide or cluster-scoped. */
  namespace: string;
  name: string;
  /** The path below /api or /apis had this many segments past the version (for 404s). */
  parts: string[];
}

export interface NonResourceRequest {
  isResourceRequest: false;
  /** Lower-case HTTP method. */
  verb: string;
  path: string;
}

export type RequestInfo = ResourceRequest | NonResourceRequest;

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isWatch(query: URLSearchParams): boolean {
  const w = query.get('watch');
  return w === 'true' || w === '1';
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const m = method.toUpperCase();
  const segs = path.split('/').filter((s, i) => i > 0 || s !== '');
  // Drop one trailing empty segment ("/api/v1/pods/" → same as without slash).
  if (segs.length > 0 && segs[segs.length - 1] === '') segs.pop();
  const nonResource: NonResourceRequest = { isResourceRequest: false, verb: m.toLowerCase(), path };
  const prefix = segs[0];
  let i: number;
  let group: string;
  let version: string;
  if (prefix === 'api') {
    if (segs.length < 2) return nonResource;
    group = '';
    version = segs[1] as string;
    i = 2;
  } else if (prefix === 'apis') {
    if (segs.length < 3) return nonResource;
    group = segs[1] as string;
    version = segs[2] as string;
    i = 3;
  } else {
    return nonResource;
  }
  let parts = segs.slice(i).map((p) => (p.includes('%') ? decodeURIComponent(p) : p));
  if (parts.length === 0) return nonResource;

  let verb: Verb;
  let legacyWatch = false;
  if (parts[0] === 'watch') {
    legacyWatch = true;
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1] as string;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
    }
  }
  const resource = parts[0] ?? '';
  const name = parts[1] ?? '';
  const subresource = parts[2] ?? '';
  switch (m) {
    case 'GET':
    case 'HEAD':
      verb = legacyWatch || isWatch(query) ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = 'proxy';
  }
  // The namespace object: /api/v1/namespaces/{name} is cluster-scoped.
  if (resource === 'namespaces') namespace = '';
  return { isResourceRequest: true, verb, group, version, resource, subresource, namespace, name, parts };
}
