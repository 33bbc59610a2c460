/**
 * How objects are kept in the store: JSON text (the fastest codec in Bun), with the top-level
 * members ordered kind, apiVersion, metadata, ... and without metadata.resourceVersion, which is
 * the key's modRevision and is spliced in when the object is read. The fixed order makes the
 * splice point the first `"metadata":{` of the text, so gets and lists serve stored bytes without
 * parsing them.
 */

import type { Obj } from '../api/meta';
import type { KeyValue } from '../store/types';

const enc = new TextEncoder();
const dec = new TextDecoder();
const META = '"metadata":{';

/** Stored bytes that cannot be decoded (damaged, or written by something else). */
export class CorruptObjectError extends Error {
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`data from the store cannot be decoded at key ${key}: ${detail}`);
    this.name = 'CorruptObjectError';
  }
}

export function encodeStored(obj: Obj): Uint8Array {
  const { kind, apiVersion, metadata, ...rest } = obj;
  const { resourceVersion: _rv, ...meta } = metadata;
  return enc.encode(JSON.stringify({ kind, apiVersion, metadata: meta, ...rest }));
}

/** The stored JSON text of `kv` with metadata.resourceVersion set to its modRevision. */
export function storedText(kv: KeyValue): string {
  const text = dec.decode(kv.value);
  const at = text.indexOf(META);
  // A cheap structural check on the fast path (no parse): our own writes always pass it.
  if (at < 0 || text.charCodeAt(0) !== 123 || text.charCodeAt(text.length - 1) !== 125)
    throw new CorruptObjectError(kv.key, 'not a stored object');
  const i = at + META.length;
  const rv = `"resourceVersion":"${kv.modRevision}"`;
  return text.charCodeAt(i) === 125 /* } */ ? `${text.slice(0, i)}${rv}${text.slice(i)}` : `${text.slice(0, i)}${rv},${text.slice(i)}`;
}

export function decodeStored(kv: KeyValue): Obj {
  let o: Obj;
  try {
    o = JSON.parse(dec.decode(kv.value)) as Obj;
  } catch (e) {
    throw new CorruptObjectError(kv.key, (e as Error).message);
  }
  if (typeof o !== 'object' || o === null || typeof o.metadata !== 'object' || o.metadata === null)
    throw new CorruptObjectError(kv.key, 'no metadata');
  o.metadata.resourceVersion = String(kv.modRevision);
  return o;
}
