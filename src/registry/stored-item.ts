/**
 * One object as a list hands it out, whichever layer served it: its key, stored bytes and
 * revision, with its JSON text and parsed form made when asked for. The watch cache's objects
 * are such items already; a store read is wrapped (StoredObject), so callers handle one shape.
 */
import type { Obj } from '../api/meta';
import { decodeStoredAt, storedTextAt } from '../codec/stored';
import type { KeyValue, Revision } from '../store/types';

export interface StoredItem {
  readonly key: string;
  /** The stored bytes (use `text` or `obj` for the object with its resourceVersion). */
  readonly value: Uint8Array;
  readonly rv: Revision;
  /** The object's JSON text with metadata.resourceVersion set. */
  readonly text: string;
  /** The parsed object (throws CorruptObjectError when its bytes do not decode). */
  readonly obj: Obj;
}

/** A store's key-value as a StoredItem. */
export class StoredObject implements StoredItem {
  constructor(
    readonly key: string,
    readonly value: Uint8Array,
    readonly rv: Revision,
  ) {}

  get text(): string {
    return storedTextAt(this.key, this.value, this.rv);
  }

  get obj(): Obj {
    return decodeStoredAt(this.key, this.value, this.rv);
  }
}

export const storedItem = (kv: KeyValue): StoredItem => new StoredObject(kv.key, kv.value, kv.modRevision);
