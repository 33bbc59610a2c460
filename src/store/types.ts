/**
 * The store: ordered keys, opaque byte values, and one cluster-wide revision.
 *
 * This module is the contract shared by every backend (the embedded MVCC store in mvcc.ts and
 * the etcd backend). It knows nothing of kinds, JSON or HTTP. The model is etcd's v3 API:
 *
 * - every committed write transaction gets the next revision of one global counter;
 * - each key keeps createRevision (revision of the put that created this generation of the key),
 *   modRevision (revision of its last write) and version (writes since creation, 1 at create);
 * - reads name a revision (default: the newest durable one); history older than the compacted
 *   revision is gone (`compacted`), revisions not yet reached are `future-revision`;
 * - `watch` is the change feed: every change with revision >= a start revision, in order.
 *
 * Keys are compared as JavaScript strings (UTF-16 code units), which equals etcd's byte order for
 * the ASCII keys the registry writes.
 */

/** A value held packed (store/packed.ts's PackedValue), as the contract names it. */
export interface PackedBytes {
  readonly bytes: Uint8Array;
  /** The raw length. */
  readonly length: number;
  inflate(): Uint8Array;
}

/** A store revision. Monotonic, starts at 1 for the first write; 0 means "none". */
export type Revision = number;

/** One version of a key, as stored. Returned objects are shared: callers must not mutate them. */
export interface KeyValue {
  readonly key: string;
  readonly value: Uint8Array;
  readonly createRevision: Revision;
  readonly modRevision: Revision;
  /** Number of writes since the key was (re)created; 1 after create. */
  readonly version: number;
}

export interface RangeOptions {
  /**
   * Exclusive end of the range. Absent: only `key` itself. `"\0"`: every key >= `key` (as etcd).
   * Use prefixEnd(prefix) for "all keys with this prefix".
   */
  end?: string;
  /** Read at this revision; absent or 0: the newest durable revision. */
  revision?: Revision;
  /** Return at most this many key-values (0 or absent: no limit). `count` is still the total. */
  limit?: number;
  /** Skip counting keys past the limit (count then equals kvs.length + (more ? 1 : 0)). */
  skipCount?: boolean;
}

export interface RangeResult {
  kvs: KeyValue[];
  /** Number of keys in the range at the revision (ignoring limit). */
  count: number;
  /** True when the limit cut the result short. */
  more: boolean;
  /** The revision the read was served at. */
  revision: Revision;
}

/** A condition of a transaction, evaluated against the newest state (as etcd's Compare). */
export interface Compare {
  key: string;
  /** mod/create/version compare numbers; an absent key has 0 for all three. */
  target: 'mod' | 'create' | 'version' | 'value';
  result: '=' | '!=' | '<' | '>';
  /** A number for mod/create/version, bytes for value (an absent key never matches on value). */
  value: number | Uint8Array;
}

export type TxnOp =
  | { op: 'put'; key: string; value: Uint8Array }
  | { op: 'delete'; key: string; end?: string }
  | { op: 'get'; key: string };

export type OpResponse =
  | { op: 'put'; revision: Revision; prev: KeyValue | undefined }
  | { op: 'delete'; deleted: KeyValue[] }
  | { op: 'get'; kv: KeyValue | undefined };

export interface Txn {
  compare?: Compare[];
  success?: TxnOp[];
  failure?: TxnOp[];
}

export interface TxnResult {
  succeeded: boolean;
  /** The revision of the write, or the store revision the read-only branch observed. */
  revision: Revision;
  responses: OpResponse[];
}

export type EventType = 'put' | 'delete';

/** One change. For a delete, `kv` carries the key, modRevision = revision of the delete and an empty value. */
export interface ChangeEvent {
  type: EventType;
  kv: KeyValue;
  /** The key's previous version, if it had one still retained. */
  prev: KeyValue | undefined;
}

/**
 * An ordered change feed. `next()` resolves with the next non-empty batch of events in revision
 * order (events of one transaction are never split across batches). It rejects with a StoreError
 * `compacted` if the stream's position fell behind compaction, `watch-cancelled` if the backend cut
 * a consumer that fell too far behind, or `closed`. After any rejection the stream is finished; the
 * consumer recovers by re-reading (range) and watching again from the read's revision + 1.
 */
export interface ChangeStream {
  next(): Promise<ChangeEvent[]>;
  /**
   * The revision the next batch starts at: every change before it has been returned AND the
   * consumer has come back for more (called next() again). So a consumer that applies each batch
   * before calling next() knows its state reflects every change before `position`, even while
   * next() waits on changes outside its key range.
   */
  readonly position: Revision;
  close(): void;
  /**
   * Optional: a consumer waits for `position` to pass a revision that may have no event in this
   * stream's range (a write elsewhere); ask the backend to report its progress soon (etcd:
   * a progress request). Backends that advance `position` by themselves leave it out.
   */
  progress?(): void;
}

export interface WatchOptions {
  /** Only keys in [key, end): as RangeOptions.end. Absent: every key. */
  key?: string;
  end?: string;
}

/** The store interface shared by the embedded MVCC store and the etcd backend. */
export interface KV {
  /** Newest durable revision (what reads without a revision see). */
  currentRevision(): Revision;
  /** Oldest revision still readable is compactedRevision() + 1 (0 if never compacted). */
  compactedRevision(): Revision;
  range(key: string, opts?: RangeOptions): Promise<RangeResult>;
  /**
   * Atomic compare-then-else. A branch with writes commits under one new revision and resolves
   * only after it is durable. Throws StoreError `unavailable` if the store cannot persist.
   */
  txn(t: Txn): Promise<TxnResult>;
  /** Drop history older than `revision` (the newest version of every live key is kept). */
  compact(revision: Revision): Promise<void>;
  /** Change feed from `fromRevision` (inclusive). fromRevision <= compactedRevision() → `compacted`. */
  watch(fromRevision: Revision, opts?: WatchOptions): ChangeStream;
  close(): Promise<void>;
  /**
   * Optional, for read-modify-write on a store in this process: the newest version of `key`
   * including writes applied but not yet durable (undefined: absent or deleted). A txn that
   * compares against it chains after those writes, in order, in the same log, so concurrent
   * updates of one key need not wait a sync each. What it returns must not reach a client
   * before durable() says so.
   */
  latest?(key: string): KeyValue | undefined;
  /** With latest(): resolves once everything up to `revision` is durable (rejects if it cannot be). */
  durable?(revision: Revision): Promise<void>;
  /**
   * Optional, for a store shared with other processes (etcd): ask it for its newest revision now
   * (a round trip), which currentRevision() may not have seen yet. Consistent reads start there.
   */
  fresh?(): Promise<Revision>;
  /**
   * Optional, for a store that keeps values in this process: a watch cache packed `raw`, the
   * value of `key`'s version at `rev` (store/packed.ts); a store holding those very bytes as the
   * key's newest version may hold the packed form instead, so that the raw bytes can be freed.
   */
  adoptPacked?(key: string, rev: Revision, raw: Uint8Array, packed: PackedBytes): void;
}

export type StoreErrorCode =
  | 'not-found'
  | 'exists'
  | 'conflict'
  | 'compacted'
  | 'future-revision'
  | 'watch-cancelled'
  | 'closed'
  | 'unavailable'
  /** A store shared over the network (etcd) does not answer now; it may later. */
  | 'unreachable'
  | 'corrupt';

/** The closed set of store failures; the registry turns each into one API Status. */
export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /** For `conflict`/`exists`: the key's current version, when known. */
    readonly current?: KeyValue,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

export function isStoreError(e: unknown, code?: StoreErrorCode): e is StoreError {
  return e instanceof StoreError && (code === undefined || e.code === code);
}

/** The exclusive end for a prefix scan: the prefix with its last character incremented. */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '\0';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
