/**
 * Conditional single-key writes built on KV.txn, written once for every backend (as the
 * Kubernetes etcd3 storage does): create only if absent, update or delete only if unchanged.
 */
import { type KeyValue, type KV, type Revision, StoreError } from './types';

/** Get one key at the newest (or a given) revision. */
export async function get(kv: KV, key: string, revision?: Revision): Promise<KeyValue | undefined> {
  const r = await kv.range(key, revision ? { revision } : undefined);
  return r.kvs[0];
}

/** Another key that must still be at `revision` (0: absent) for a write to happen. */
export interface Guard {
  key: string;
  revision: Revision;
}

/**
 * Put `value` at `key` only if the key does not exist (and `guard`'s key is still at its
 * revision). Throws `exists` with the current value; `conflict` when only the guard failed.
 */
export async function create(kv: KV, key: string, value: Uint8Array, guard?: Guard): Promise<Revision> {
  const r = await kv.txn({
    compare: guard
      ? [
          { key, target: 'mod', result: '=', value: 0 },
          { key: guard.key, target: 'mod', result: '=', value: guard.revision },
        ]
      : [{ key, target: 'mod', result: '=', value: 0 }],
    success: [{ op: 'put', key, value }],
    failure: [{ op: 'get', key }],
  });
  if (!r.succeeded) {
    const cur = r.responses[0]?.op === 'get' ? r.responses[0].kv : undefined;
    if (cur || !guard) throw new StoreError('exists', `key ${key} already exists`, cur);
    throw new StoreError('conflict', `key ${guard.key} is no longer at revision ${guard.revision}`);
  }
  return r.revision;
}

/**
 * Put `value` at `key` only if its modRevision is still `expected`.
 * Throws `not-found` if the key is absent, `conflict` (with the current value) if it changed.
 */
export async function update(kv: KV, key: string, value: Uint8Array, expected: Revision): Promise<Revision> {
  const r = await kv.txn({
    compare: [{ key, target: 'mod', result: '=', value: expected }],
    success: [{ op: 'put', key, value }],
    failure: [{ op: 'get', key }],
  });
  if (!r.succeeded) throw mismatch(key, r.responses[0]?.op === 'get' ? r.responses[0].kv : undefined);
  return r.revision;
}

/**
 * Delete `key` only if its modRevision is still `expected` (0: whatever it is).
 * Returns the deleted version and the revision of the delete.
 */
export async function remove(kv: KV, key: string, expected: Revision = 0): Promise<{ revision: Revision; deleted: KeyValue }> {
  const r = await kv.txn({
    compare: expected ? [{ key, target: 'mod', result: '=', value: expected }] : [{ key, target: 'mod', result: '>', value: 0 }],
    success: [{ op: 'delete', key }],
    failure: [{ op: 'get', key }],
  });
  if (!r.succeeded) throw mismatch(key, r.responses[0]?.op === 'get' ? r.responses[0].kv : undefined);
  const d = r.responses[0];
  if (d?.op !== 'delete' || d.deleted.length !== 1 || !d.deleted[0]) throw new Error(`bug: delete of ${key} reported no deletion`);
  return { revision: r.revision, deleted: d.deleted[0] };
}

function mismatch(key: string, current: KeyValue | undefined): StoreError {
  return current
    ? new StoreError('conflict', `key ${key} was modified (now at revision ${current.modRevision})`, current)
    : new StoreError('not-found', `key ${key} not found`);
}
