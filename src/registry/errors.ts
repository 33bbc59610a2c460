/**
 * Store failures as the API answers them when they escape a verb's own translation
 * (ResourceStore.translate): a write hook's or a namespace check's read of an unreachable etcd.
 */
import { StatusError } from '../api/status';
import { isStoreError } from '../store/types';

/** Whether `e` is a failure of the store (a known condition, not a bug of the server). */
export const isStorageFailure = (e: unknown): boolean => isStoreError(e);

/** The Status of a store failure the API names (503 while the storage is unreachable); undefined for others. */
export function storageStatus(e: unknown): StatusError | undefined {
  if (isStoreError(e, 'unreachable')) return new StatusError(503, 'ServiceUnavailable', `the storage is not available: ${e.message}`, {});
  return undefined;
}
