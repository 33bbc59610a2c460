/**
 * Storage failures that reach the request chain untranslated: the store's closed set of errors
 * (src/store/types.ts StoreError) and stored bytes that do not decode (CorruptObjectError). A
 * ResourceStore translates its own reads and writes (ResourceStore.translate); these come from
 * elsewhere on a request's path. The chain asks here, so src/http needs no store types.
 */
import { internal, StatusError } from '../api/status';
import { CorruptObjectError } from '../codec/stored';
import { isStoreError } from '../store/types';

/** A failure of storage rather than of the server itself (the audit log does not record it as a panic). */
export function isStorageFailure(e: unknown): boolean {
  return e instanceof CorruptObjectError || isStoreError(e);
}

/** A store that does not answer now (etcd unreachable) as 503 ServiceUnavailable; undefined for anything else. */
export function unavailableStatus(e: unknown): StatusError | undefined {
  if (!isStoreError(e, 'unreachable')) return undefined;
  return new StatusError(503, 'ServiceUnavailable', `the storage is not available: ${e.message}`, {});
}

/**
 * Stored bytes that do not decode as 500 InternalError naming the key, with the cause that says
 * how the object can still be deleted; undefined for anything else.
 */
export function undecodableStatus(e: unknown): StatusError | undefined {
  if (!(e instanceof CorruptObjectError)) return undefined;
  const err = internal(e.message);
  err.details?.causes?.push({
    reason: 'StorageReadError',
    field: e.key,
    message: 'the object cannot be decoded; it can be deleted with ignoreStoreReadErrorWithClusterBreakingPotential=true',
  });
  return err;
}
