/**
 * Lists: the result of a list, the options selecting everything, resourceVersion parsing, and
 * continue tokens (where the next page starts, at which revision, and when the token was handed
 * out, so an expired one can be refused with 410 and a fresh token at the newest revision).
 */

import type { Obj } from '../api/meta';
import { badRequest } from '../api/status';
import type { StoredObject } from '../codec/media';
import type { Revision } from '../store/types';
import type { ListOptions } from './options';

export interface ListResult {
  /** The items, from the store or the watch cache alike. */
  items: StoredObject[];
  revision: Revision;
  continueToken: string;
  remainingItemCount?: number;
  /**
   * What the items are, when a list of the same state has the same items (a whole list from the
   * watch cache, no selectors): the cache, the range, the cache's revision and state generation. A memo key.
   */
  state?: string;
}

/**
 * How long a consistent list (or a first page) waits for the watch cache to reach the embedded
 * store's newest revision before the store serves it (the cache follows within a millisecond or two).
 */
export const CONSISTENT_LIST_WAIT_MS = 100;

/** List options selecting every object (controllers reading a whole namespace or resource). */
export const ALL_OBJECTS: ListOptions = {
  labelSelector: [],
  fieldSelector: [],
  hasSelectors: false,
  limit: 0,
  continueToken: '',
  resourceVersion: '',
  resourceVersionMatch: '',
};

export function parseResourceVersion(rv: string, what = 'resource version'): Revision {
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid ${what}: ${JSON.stringify(rv)}`);
  // As the reference's uint64: beyond it is invalid; below it, any value past 2^53 is still
  // past every revision this server will reach, which is all it is compared for.
  const digits = rv.replace(/^0+(?=\d)/, '');
  if (digits.length > 20 || (digits.length === 20 && digits > '18446744073709551615')) {
    throw badRequest(`invalid ${what}: ${JSON.stringify(rv)}`);
  }
  return Number(rv);
}

export interface ContinueToken {
  v: string;
  rv: number;
  start: string;
  t: number;
  /** Items after `start` at `rv` (so later pages need no count scan); absent: unknown. */
  left?: number;
  /** The watch cache's state tag when the page came from the cache (WatchCache.stateTag). */
  c?: string;
}

/** The token of the page after `lastKey`, a key of the list range starting at `start`; `t`: now. */
export function encodeContinue(rv: Revision, lastKey: string, start: string, t: number, left?: number, cache?: string): string {
  return encodeContinueToken(rv, `${lastKey.slice(start.length)}\0`, t, left, cache);
}

/**
 * A token resuming at `startKey` (relative to the list range) at `rv` (-1: the newest); `t`: now;
 * `cache`: the watch cache's state tag when the page came from it.
 */
export function encodeContinueToken(rv: Revision, startKey: string, t: number, left?: number, cache?: string): string {
  const tok: ContinueToken = { v: 'meta.svc.io/v1', rv, start: startKey, t };
  if (left !== undefined) tok.left = left;
  if (cache !== undefined) tok.c = cache;
  return Buffer.from(JSON.stringify(tok)).toString('base64');
}

/** Decode a continue token; anything malformed (or an absolute start key) is 400. */
export function decodeContinue(s: string): ContinueToken {
  try {
    const tok = JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as ContinueToken;
    if (typeof tok.rv !== 'number' || typeof tok.start !== 'string' || typeof tok.t !== 'number' || tok.start.startsWith('/'))
      throw new Error('bad');
    return tok;
  } catch {
    throw badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.svc.io/v1)');
  }
}

/** The objects of a list result, whether it came from the store or the watch cache. */
export function listedObjects(r: ListResult): Obj[] {
  return r.items.map((i) => i.obj);
}
