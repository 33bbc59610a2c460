/**
 * Watches through the registry: where a watch starts (spec 1 "Watch": resourceVersion unset,
 * "0", N, or a streaming list), resolved against the resource's storage, and what its consumer
 * (the HTTP layer) holds of it. The stream itself is the watch cache's watcher, seen through
 * the small interfaces below.
 */
import type { Obj } from '../api/meta';
import { matchesFields, matchesLabels } from '../api/selectors';
import { resourceExpired, tooLargeResourceVersion } from '../api/status';
import type { StoredObject } from '../codec/media';
import type { KV, Revision } from '../store/types';
import { TooOldError, type WatchCache } from '../watch/cache';
import { type SelectorView, viewField } from '../watch/events';
import { parseResourceVersion } from './list';
import type { ListOptions } from './options';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One event as a watch hands it to its consumer. */
export interface WatchEvent {
  readonly type: WatchEventType;
  readonly obj: Obj;
  readonly text: string;
  /** It carries the change's own object: encodings of it may be shared by every watch. */
  readonly shared: boolean;
  /** The change, with its encodings built once and shared by every watch (by encoding and type). */
  readonly event: {
    readonly rv: Revision;
    /** The object's storage key (one per object: folds its changes without decoding it). */
    readonly key: string;
    encoded?: Record<string, Uint8Array>;
  };
}

/** A watch's queue of events, as its consumer drains it. */
export interface WatchStream {
  /** Called when events are ready, the stream ended, or the wake-up time passed. */
  onSignal: (() => void) | undefined;
  /** Events queued and not taken. */
  readonly pending: number;
  /** Why the stream ended: closed (by either side), slow (its queue overflowed), reset (the cache relisted). */
  readonly ended: 'closed' | 'slow' | 'reset' | undefined;
  take(): readonly WatchEvent[];
  end(reason: 'closed' | 'slow' | 'reset'): void;
  /** Signal at `at` (ms) even with no events (bookmarks, the timeout). */
  wakeAt(at: number): void;
}

/** What a watch asks for, as the HTTP layer decoded it. */
export interface WatchRequest {
  namespace: string;
  /** One object's name, or '' for all. */
  name: string;
  selectors: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>;
  /** Watches with the same key select the same objects (one match per event for all of them). */
  selectionKey: string;
  /** The resourceVersion parameter ('' unset). */
  resourceVersion: string;
  /** sendInitialEvents=true (a streaming list): the current state first, from "not older than" resourceVersion. */
  initialEvents: boolean;
  /** How long a consistent start waits for the cache to reach the store's revision before 504. */
  freshnessTimeoutMs: number;
}

export interface WatchStart {
  stream: WatchStream;
  /** Objects to send as ADDED before the changes (the current state, when the watch starts now). */
  initial: readonly StoredObject[];
  /** The revision the initial state is at. */
  revision: Revision;
  /** Where changes start: after a revision, or now. */
  from: Revision | 'now';
  /** The newest revision of the resource's cache (what a bookmark with nothing pending may claim). */
  newest(): Revision;
}

/**
 * Start a watch on a resource's cache. Throws 410 Expired (too old resource version) when the
 * start is older than the history window, 504 when a consistent start cannot catch up in time.
 */
export async function startWatch(kv: KV, cache: WatchCache, keyPrefix: string, r: WatchRequest): Promise<WatchStart> {
  let from: Revision | 'now';
  let waitFor = 0;
  if (r.initialEvents || r.resourceVersion === '' || r.resourceVersion === '0') {
    from = 'now';
    // Consistent: from the store's newest revision (asked of etcd, whose writes may come from another replica).
    if (r.resourceVersion === '') waitFor = kv.fresh ? await kv.fresh() : kv.currentRevision();
    else if (r.resourceVersion !== '0') waitFor = parseResourceVersion(r.resourceVersion);
  } else {
    from = parseResourceVersion(r.resourceVersion);
  }
  // A cache this watch starts begins its history at the watch's start (see WatchCache.start).
  await cache.start(from === 'now' ? undefined : from);
  if (waitFor > 0 && !(await cache.waitFresh(waitFor, r.freshnessTimeoutMs))) {
    throw tooLargeResourceVersion(waitFor, cache.revision);
  }
  const { name } = r;
  const { labelSelector, fieldSelector } = r.selectors;
  const match = (v: SelectorView): boolean =>
    (name === '' || v.name === name) && matchesLabels(labelSelector, v.labels) && matchesFields(fieldSelector, (f) => viewField(v, f));
  const all = name === '' && labelSelector.length === 0 && fieldSelector.length === 0;
  // A value every selected object has (the watched name, else an `=` of the field selector, e.g.
  // a kubelet's spec.nodeName): the cache offers this watch only the events of objects with
  // that value, now or before.
  const eq = fieldSelector.find((x) => x.op === 'eq');
  const index = name !== '' ? { field: 'metadata.name', value: name } : eq ? { field: eq.field, value: eq.value } : undefined;
  try {
    const reg = cache.watch({ keyPrefix, match, key: r.selectionKey, all, index }, from);
    return { stream: reg.watcher, initial: reg.initial, revision: reg.revision, from, newest: () => cache.revision };
  } catch (e) {
    if (e instanceof TooOldError) throw resourceExpired(e.message);
    throw e;
  }
}
