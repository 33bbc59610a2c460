/**
 * RequestInfo: what a request asks for, parsed once from method + path + query (as the
 * reference's RequestInfoFactory). Everything after this works on these fields, never on the URL.
 *
 *   /api/v1/namespaces/{ns}/{resource}/{name}/{subresource}
 *   /apis/{group}/{version}/{resource}/{name}
 *   /api/v1/namespaces/{name}[/status|/finalize]   (the namespace object itself)
 *   /api/v1/watch/...                               (legacy watch prefix)
 */

import { type Brand, brandOf, svcGroup } from './brand';
import { queryBool } from './query';
import { badRequest } from './status';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

export interface ResourceRequest {
  isResourceRequest: true;
  verb: Verb;
  /** '' for the core group; always the svc name (`coordination.svc.io` for a path naming `coordination.k8s.io`). */
  group: string;
  /** How the path spelled the group: answers carry apiVersions in the same brand. */
  brand: Brand;
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
  return queryBool(query, 'watch') === true;
}

/** A %-escaped path segment, decoded; a bad escape is the client's error (400), as in Go's URL parsing. */
function unescapeSegment(seg: string, path: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    const bad = /%(?![0-9A-Fa-f]{2})[^%]{0,2}/.exec(seg)?.[0] ?? seg;
    throw badRequest(`parse "${path}": invalid URL escape "${bad}"`);
  }
}

/**
 * Parsed writes to collections (creates), by method and path: a client's loop sends the same
 * one again and again. Names vary too much elsewhere (a GET's verb depends on its query too).
 * Emptied when full. The RequestInfo objects are shared, and frozen: nothing changes them.
 */
const collectionWrites = new Map<string, RequestInfo>();
const MAX_COLLECTION_WRITES = 256;

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  if (method !== 'POST') return parse(method, path, query);
  let info = collectionWrites.get(path);
  if (info === undefined) {
    info = parse(method, path, query);
    if (info.isResourceRequest && info.name === '') {
      if (collectionWrites.size >= MAX_COLLECTION_WRITES) collectionWrites.clear();
      // Frozen: a change to a shared one would throw (modules are strict) instead of leaking.
      Object.freeze(info.parts);
      collectionWrites.set(path, Object.freeze(info));
    }
  }
  return info;
}

function parse(method: string, path: string, query: URLSearchParams): RequestInfo {
  const m = method.toUpperCase();
  const segs = path.split('/');
  if (segs[0] === '') segs.shift();
  // Drop one trailing empty segment ("/api/v1/pods/" → same as without slash).
  if (segs.length > 0 && segs[segs.length - 1] === '') segs.pop();
  const nonResource: NonResourceRequest = { isResourceRequest: false, verb: m.toLowerCase(), path };
  const prefix = segs[0];
  let i: number;
  let group: string;
  let brand: Brand = 'svc';
  let version: string;
  if (prefix === 'api') {
    if (segs.length < 2) return nonResource;
    group = '';
    version = segs[1] as string;
    i = 2;
  } else if (prefix === 'apis') {
    if (segs.length < 3) return nonResource;
    brand = brandOf(segs[1] as string);
    group = svcGroup(segs[1] as string);
    version = segs[2] as string;
    i = 3;
  } else {
    return nonResource;
  }
  let parts = segs.slice(i);
  if (path.includes('%')) parts = parts.map((p) => (p.includes('%') ? unescapeSegment(p, path) : p));
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
  return { isResourceRequest: true, verb, group, brand, version, resource, subresource, namespace, name, parts };
}

/** What the request chain reads of a request's URL. */
export interface RequestUrl {
  pathname: string;
  searchParams: URLSearchParams;
}

/** Paths that URL parsing would leave as they are: plain ASCII, no escapes, no dot segments. */
const PLAIN_PATH = /^\/[A-Za-z0-9\-_~:@!$&'()*+,;=/.]*$/;

/**
 * The path and query of a request URL. Plain paths are cut out of the string directly (a full
 * URL parse was ~10% of a GET); anything else goes through URL, which normalises it.
 */
export function requestUrl(raw: string): RequestUrl {
  const scheme = raw.indexOf('//');
  const p = scheme < 0 ? -1 : raw.indexOf('/', scheme + 2);
  if (p >= 0) {
    const q = raw.indexOf('?', p);
    const hash = raw.indexOf('#', p);
    const pathEnd = q >= 0 ? q : hash >= 0 ? hash : raw.length;
    const pathname = raw.slice(p, pathEnd);
    if (PLAIN_PATH.test(pathname) && !pathname.includes('/.') && hash < 0) {
      return { pathname, searchParams: new URLSearchParams(q >= 0 ? raw.slice(q + 1) : '') };
    }
  }
  return new URL(raw);
}
