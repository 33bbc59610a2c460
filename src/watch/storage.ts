/**
 * A resource's storage as the registry is handed it (the reference's cacher decorating the etcd
 * storage): the store, for writes and for reads at an exact revision or by page, and the
 * resource's watch cache in front of it, for lists from memory and for every watch. The
 * registry never builds a cache itself; whoever composes the server chooses the storage.
 */
import type { Obj } from '../api/meta';
import { mappedKV, type ValueMapping } from '../store/mapped';
import { type AsyncValueMapping, asyncMappedKV } from '../store/mapped-async';
import type { KV } from '../store/types';
import { WatchCache } from './cache';

export interface ResourceStorage {
  readonly kv: KV;
  /** The resource's watch cache; undefined: the store alone (lists from the store, no watches). */
  readonly cache: WatchCache | undefined;
}

/** What a resource's storage is opened for: its key prefix and how its objects are selected. */
export interface StorageTarget {
  prefix: string;
  /** `group/plural` (core: `/plural`). */
  resource: string;
  /** The kind's selectable fields of an object (field selector name → value), for selector views. */
  selectableFields: (o: Obj) => Record<string, string> | undefined;
  /** The resource reads and writes its keys' values through this mapping (a kind stored in another form). */
  values?: ValueMapping | AsyncValueMapping;
}

/** The store as a resource with `values` sees it. */
function viewOf(kv: KV, values: ValueMapping | AsyncValueMapping | undefined): KV {
  if (!values) return kv;
  return 'readMany' in values ? asyncMappedKV(kv, values) : mappedKV(kv, values);
}

export interface CachedStorageOptions {
  historyMs: number;
  maxHistory: number;
  maxHistoryBytes: number;
  /** Objects unwritten this long are held packed (0: never; see WatchCache). */
  packAfterMs?: number;
  /** Resources whose caches keep every object parsed (those the server reads on every request). */
  keepParsed: (resource: string) => boolean;
  log: (msg: string) => void;
}

/** Storage with a watch cache per resource, over one store; a cache starts on first use. */
export function cachedStorage(kv: KV, o: CachedStorageOptions): (t: StorageTarget) => ResourceStorage {
  return (t) => {
    const view = viewOf(kv, t.values);
    return {
      kv: view,
      cache: new WatchCache(view, t.prefix, {
        historyMs: o.historyMs,
        maxHistory: o.maxHistory,
        maxHistoryBytes: o.maxHistoryBytes,
        packAfterMs: o.packAfterMs,
        selectableFields: t.selectableFields,
        keepParsed: o.keepParsed(t.resource),
        log: o.log,
      }),
    };
  };
}

/** The store alone (no watch cache): for tools and tests that only read and write. */
export function plainStorage(kv: KV): (t: StorageTarget) => ResourceStorage {
  return (t) => ({ kv: viewOf(kv, t.values), cache: undefined });
}
