/**
 * How many seats a request takes (the reference's request width estimators):
 *
 *   list, watch with initial events   ceil(objects stored / 100), 1 to maxSeats; a paged list
 *                                     from storage (limit, exact RV) reads ~2 × limit objects
 *   create/update/patch/delete with   1 seat, then ceil(watchers / 10) seats (≤ maxSeats) for
 *   ≥ 10 watchers on the resource     5 ms × ceil(watchers / 10) / those seats after it returns
 *   anything else                     1 seat
 *
 * maxSeats is min(10, the level's nominal seats): a request never needs more seats than its
 * level owns, so it can always be served.
 */
import type { RequestInfo, ResourceRequest } from '../api/request-info';
import { ONE_SEAT, type WorkEstimate } from './queueset';

export type Counts = (info: ResourceRequest) => { objects: number; watchers: number };

const OBJECTS_PER_SEAT = 100;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_MS = 5;
const MAXIMUM_SEATS = 10;
const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function estimateWork(info: RequestInfo, query: URLSearchParams, nominalSeats: number, counts: Counts | undefined): WorkEstimate {
  if (!info.isResourceRequest || !counts) return ONE_SEAT;
  const maxSeats = Math.max(1, Math.min(MAXIMUM_SEATS, nominalSeats));
  if (info.verb === 'list' || (info.verb === 'watch' && sendsInitialEvents(query))) {
    const stored = counts(info).objects;
    const limit = Number(query.get('limit') ?? 0);
    const rv = query.get('resourceVersion') ?? '';
    // A paged list at an exact revision (or a consistent list) reads from storage: about twice
    // the page; with selectors, everything plus the page. Otherwise it is served from the cache.
    const fromStorage =
      info.verb === 'list' && limit > 0 && limit < stored && rv !== '0' && query.get('resourceVersionMatch') !== 'NotOlderThan';
    const selected = query.has('labelSelector') || query.has('fieldSelector');
    const objects = !fromStorage ? stored : selected ? stored + limit : 2 * limit;
    const seats = Math.min(maxSeats, Math.max(1, Math.ceil(objects / OBJECTS_PER_SEAT)));
    return seats === 1 ? ONE_SEAT : { initialSeats: seats, finalSeats: 0, additionalLatencyMs: 0 };
  }
  if (!MUTATING.has(info.verb)) return ONE_SEAT;
  const watchers = counts(info).watchers;
  if (watchers < WATCHES_PER_SEAT) return ONE_SEAT;
  const needed = Math.ceil(watchers / WATCHES_PER_SEAT);
  const finalSeats = Math.min(maxSeats, needed);
  return { initialSeats: 1, finalSeats, additionalLatencyMs: (needed * EVENT_ADDITIONAL_MS) / finalSeats };
}

/** A watch sends the current objects first without a resourceVersion, at "0", or when asked. */
function sendsInitialEvents(query: URLSearchParams): boolean {
  if (query.get('sendInitialEvents') === 'true') return true;
  const rv = query.get('resourceVersion') ?? '';
  return rv === '' || rv === '0';
}
