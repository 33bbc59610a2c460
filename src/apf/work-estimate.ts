/**
 * How many seats a request takes (the reference's request width estimators, request/
 * list_work_estimator.go and mutating_work_estimator.go, with config.go's constants):
 *
 *   list, watch with              by objects (default): ceil(objects processed / 100), where a
 *   sendInitialEvents=true        list served from the watch cache processes every stored object
 *                                 of the resource, one from storage 2 × its page (with selectors:
 *                                 all plus the page), one naming an object (a name in the path or
 *                                 fieldSelector metadata.name=) one object;
 *                                 by size (gate SizeBasedListCostEstimate): ceil(bytes held at
 *                                 once / 100,000), objects loaded × their average stored size,
 *                                 at most 1 MB when served from the cache
 *   create/update/patch/delete    1 seat, then ceil(watchers / 10) seats (≤ maxSeats) for
 *   with ≥ 10 watchers            5 ms × ceil(watchers / 10) / those seats after it returns
 *   anything else                 1 seat
 *
 * A list is served from storage when it asks for an exact revision (resourceVersionMatch=Exact,
 * or a limit with a resourceVersion other than "0"), continues a page or names another
 * resourceVersionMatch; everything else (resourceVersion "0", NotOlderThan, a consistent read,
 * which the watch cache serves) from the cache. The objects stored are the whole resource's, in
 * every namespace, as the reference's object count tracker keeps them.
 *
 * maxSeats is min(10, the level's nominal seats): a request never needs more seats than its
 * level owns, so it can always be served.
 */
import type { RequestInfo, ResourceRequest } from '../api/request-info';
import { ONE_SEAT, type WorkEstimate } from './queueset';

export interface ResourceCounts {
  /** Objects stored of the resource (all namespaces). */
  objects: number;
  /** Watchers open on the resource. */
  watchers: number;
  /** The average stored size of its objects in bytes (asked only for size-based estimates). */
  averageBytes?: () => number;
}

export type Counts = (info: ResourceRequest) => ResourceCounts;

const OBJECTS_PER_SEAT = 100;
const BYTES_PER_SEAT = 100_000;
/** What a list from the watch cache holds at once at most (the reference assumes it streams). */
const CACHE_STREAMING_MAX_BYTES = 1_000_000;
/** An object's size when it is not known (etcd's recommended request size limit). */
const MAX_OBJECT_BYTES = 1_500_000;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_MS = 5;
const MAXIMUM_SEATS = 10;
const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function estimateWork(
  info: RequestInfo,
  query: URLSearchParams,
  nominalSeats: number,
  counts: Counts | undefined,
  sizeBased = false,
): WorkEstimate {
  if (!info.isResourceRequest || !counts) return ONE_SEAT;
  const maxSeats = Math.max(1, Math.min(MAXIMUM_SEATS, nominalSeats));
  if (info.verb === 'list' || (info.verb === 'watch' && query.get('sendInitialEvents') === 'true')) {
    const seats = Math.min(maxSeats, Math.max(1, listSeats(info, query, counts(info), sizeBased)));
    return seats === 1 ? ONE_SEAT : { initialSeats: seats, finalSeats: 0, additionalLatencyMs: 0 };
  }
  if (!MUTATING.has(info.verb)) return ONE_SEAT;
  const watchers = counts(info).watchers;
  if (watchers < WATCHES_PER_SEAT) return ONE_SEAT;
  const needed = Math.ceil(watchers / WATCHES_PER_SEAT);
  const finalSeats = Math.min(maxSeats, needed);
  return { initialSeats: 1, finalSeats, additionalLatencyMs: (needed * EVENT_ADDITIONAL_MS) / finalSeats };
}

function listSeats(info: ResourceRequest, query: URLSearchParams, c: ResourceCounts, sizeBased: boolean): number {
  const single = info.name !== '' || namesOneObject(query.get('fieldSelector') ?? '');
  const fromCache = info.verb === 'watch' || !fromStorage(query);
  const selected = !!query.get('labelSelector') || !!query.get('fieldSelector');
  const stored = c.objects;
  const asked = Number(query.get('limit') ?? 0);
  const limit = asked > 0 && asked < stored ? asked : stored;
  if (!sizeBased) {
    const objects = single ? 1 : fromCache ? stored : selected ? stored + limit : 2 * limit;
    return Math.ceil(objects / OBJECTS_PER_SEAT);
  }
  let average = stored > 0 ? (c.averageBytes?.() ?? 0) : 0;
  if (average <= 0 && stored !== 0) average = MAX_OBJECT_BYTES;
  const loaded = single ? 1 : fromCache ? limit : selected ? Math.max(limit, Math.floor(stored / 2)) : limit;
  const bytes = fromCache ? Math.min(loaded * average, CACHE_STREAMING_MAX_BYTES) : loaded * average;
  return Math.ceil(bytes / BYTES_PER_SEAT);
}

/** Whether the list must be read from storage rather than the watch cache (the reference's delegator). */
function fromStorage(query: URLSearchParams): boolean {
  const match = query.get('resourceVersionMatch') ?? '';
  const rv = query.get('resourceVersion') ?? '';
  if (match === 'Exact') return true;
  if (match === 'NotOlderThan') return false;
  if (match !== '') return true;
  if (query.get('continue')) return true;
  return Number(query.get('limit') ?? 0) > 0 && rv !== '' && rv !== '0';
}

/** A field selector requiring metadata.name to equal a value: the list is a get. */
function namesOneObject(selector: string): boolean {
  return selector.split(',').some((t) => /^\s*metadata\.name\s*==?[^=]/.test(t));
}
