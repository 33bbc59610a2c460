/**
 * How objects are kept in the store: JSON text (the fastest codec in Bun), with the top-level
 * members ordered kind, apiVersion, metadata, ... and without metadata.resourceVersion, which is
 * the key's modRevision and is spliced in when the object is read. The fixed order makes the
 * splice point the first `"metadata":{` of the text, so gets and lists serve stored bytes without
 * parsing them.
 */

import type { Obj } from '../api/meta';
import { type HeldValue, PackedKeyValue, PackedValue, rawOf } from '../store/packed';
import { type ValueSlabs, valueSlabs } from '../store/slabs';
import type { KeyValue } from '../store/types';
import { stringifyStored } from './stringify';

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

/**
 * Our own recent writes: stored bytes → the text they encode and the object it came from. The
 * watch cache, which reads every write back from the store's change feed, takes the object and
 * text from here instead of decoding and parsing the bytes again (a written object is not
 * changed after its write, except that its resourceVersion is set to the revision of that same
 * write). Identity of the bytes proves the content; bytes from elsewhere (another process, a
 * restart) are decoded. Two generations of at most HINTS entries bound the memory; an entry
 * lives for at least HINTS writes (~10 ms at 25k writes/s: the cache reads a write's hint once
 * the write's fdatasync returns, with at most the writes in flight before it; a hint missed
 * costs a parse). Each entry held longer is a parsed object and a text that survive young
 * collections: 2048 before 2026-11-30 (see PARSED_MS in src/watch/history.ts).
 */
const HINTS = 256;
export interface Hint {
  text: string;
  obj: Obj;
  /** The text with `rv` spliced in, built once for the cache and the write's response. */
  rv?: string;
  withRv?: string;
}
let hints = new Map<Uint8Array, Hint>();
let olderHints = new Map<Uint8Array, Hint>();
/**
 * Hints are also aged by time: every HINT_AGE_MS the generations turn over, so an entry lives
 * between one and two of those. The cache reads a write's hint milliseconds after the write;
 * without this, the last 16k writes' objects and texts stayed on the heap while no writes came.
 */
const HINT_AGE_MS = 5_000;
setInterval(() => {
  if (hints.size === 0 && olderHints.size === 0) return;
  olderHints = hints;
  hints = new Map();
}, HINT_AGE_MS).unref();
/** The hint of an object just written (for the write's response), by object. */
const hintOfWritten = new WeakMap<Obj, Hint>();

/** `slabs`: the slabs the value goes to (the registry keeps one set per resource and kind of write). */
export function encodeStored(obj: Obj, slabs: ValueSlabs = valueSlabs): Uint8Array {
  const { kind, apiVersion, metadata, ...rest } = obj;
  const { resourceVersion: _rv, ...meta } = metadata;
  const text = stringifyStored(kind, apiVersion, meta, rest);
  // Into the slabs the store keeps its values in (src/store/slabs.ts): one copy of the bytes.
  const bytes = slabs.encode(text);
  if (hints.size >= HINTS) {
    olderHints = hints;
    hints = new Map();
  }
  const hint: Hint = { text, obj };
  hints.set(bytes, hint);
  hintOfWritten.set(obj, hint);
  return bytes;
}

/**
 * The object and text of stored bytes this process wrote recently, or undefined. The object
 * is shared with the writer: treat it as read-only (the cache keeps a copy of its metadata).
 */
export function writtenHint(value: Uint8Array): Hint | undefined {
  return hints.get(value) ?? olderHints.get(value);
}

/**
 * The JSON text of `obj` as just written (resourceVersion spliced in), when it was encoded by
 * encodeStored and has a resourceVersion: a write's response without stringifying it again.
 */
export function writtenText(obj: Obj): string | undefined {
  const hint = hintOfWritten.get(obj);
  const rv = obj.metadata?.resourceVersion;
  return hint === undefined || typeof rv !== 'string' ? undefined : hintText(hint, rv);
}

/** A hint's text with resourceVersion `rv` spliced in (built once per hint and revision). */
export function hintText(hint: Hint, rv: string): string {
  if (hint.rv !== rv || hint.withRv === undefined) {
    hint.rv = rv;
    hint.withRv = withResourceVersion(hint.text, rv);
  }
  return hint.withRv;
}

function withResourceVersion(text: string, rv: string): string {
  const i = text.indexOf(META) + META.length;
  const field = `"resourceVersion":${JSON.stringify(rv)}`;
  return text.charCodeAt(i) === 125 /* } */
    ? `${text.slice(0, i)}${field}${text.slice(i)}`
    : `${text.slice(0, i)}${field},${text.slice(i)}`;
}

/** The stored JSON text of `kv` with metadata.resourceVersion set to its modRevision. */
export function storedText(kv: KeyValue): string {
  return storedTextAt(kv.key, kv.value, kv.modRevision);
}

/** The JSON text of the stored bytes `value` of `key` with metadata.resourceVersion `rv`. */
export function storedTextAt(key: string, value: Uint8Array, rv: number): string {
  const hint = writtenHint(value);
  if (hint) return hintText(hint, String(rv));
  const text = dec.decode(value);
  // A cheap structural check on the fast path (no parse): our own writes always pass it.
  if (text.indexOf(META) < 0 || text.charCodeAt(0) !== 123 || text.charCodeAt(text.length - 1) !== 125)
    throw new CorruptObjectError(key, 'not a stored object');
  return withResourceVersion(text, String(rv));
}

const META_BYTES = enc.encode(META);

/**
 * Whether `value` has the shape of a stored object (a JSON object: `{"` ... `}`), checked without
 * decoding or searching it: what the watch cache checks of each object it loads unparsed (a
 * million of them at a restart). Garbage is caught here; JSON that does not parse is found when
 * the object is read.
 */
export function looksStored(value: Uint8Array): boolean {
  return value.length > 2 && value[0] === 123 /* { */ && value[1] === 34 /* " */ && value[value.length - 1] === 125 /* } */;
}

/**
 * The JSON of stored bytes with metadata.resourceVersion `rv`, as three UTF-8 chunks: the bytes
 * before the splice point and after it (views of `value`, not copies) and the field between.
 * For the watch cache's entries; bytes without the metadata's start are CorruptObjectError.
 */
export function storedJsonChunks(key: string, value: Uint8Array, rv: number): [Uint8Array, Uint8Array, Uint8Array] {
  const at = Buffer.from(value.buffer, value.byteOffset, value.byteLength).indexOf(META_BYTES);
  if (at < 0) throw new CorruptObjectError(key, 'not a stored object');
  const i = at + META_BYTES.length;
  const field = enc.encode(value[i] === 125 /* } */ ? `"resourceVersion":"${rv}"` : `"resourceVersion":"${rv}",`);
  return [value.subarray(0, i), field, value.subarray(i)];
}

/**
 * A JSON list as bytes: `head`, the stored objects (resourceVersion spliced in, comma-separated),
 * `tail`, copied into one buffer. No string per item: a list of 100 ConfigMaps built from texts
 * left ~90 KB of strings per answer (the texts with their resourceVersion, the joined list, its
 * UTF-8), and under a flood of such LISTs the collections of that garbage were the quiet users'
 * p99 (issue 10). Bytes without the metadata's start are CorruptObjectError, as storedTextAt.
 */
export function storedListJson(
  head: string,
  items: {
    readonly count: number;
    key(i: number): string;
    value(i: number): Uint8Array;
    rv(i: number): number;
    held?(i: number): HeldValue;
  },
  tail: string,
): Uint8Array {
  const n = items.count;
  const at = new Int32Array(n);
  const headBytes = enc.encode(head);
  let size = headBytes.length + tail.length + Math.max(0, n - 1);
  // Each value read once. A cold object's packed value is inflated straight into the answer
  // (no buffer per value to copy and collect: 240 MB of them for a list of 100k pods), with room
  // for the field as if a comma followed it; its metadata's end is found once it is there.
  const values: HeldValue[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const v = items.held ? items.held(i) : items.value(i);
    values[i] = v;
    if (v instanceof PackedValue) {
      size += v.length + fieldLength(items.rv(i), true);
      continue;
    }
    const m = metadataEnd(v);
    if (m < 0 || v[0] !== 123 || v[v.length - 1] !== 125) throw new CorruptObjectError(items.key(i), 'not a stored object');
    at[i] = m;
    size += v.length + fieldLength(items.rv(i), v[m] !== 125);
  }
  const out = new Uint8Array(size);
  out.set(headBytes, 0);
  let o = headBytes.length;
  // No views or strings per item (each was garbage): the value goes in after the room for the
  // field, its head is moved back in place, and the field is written between.
  for (let i = 0; i < n; i++) {
    if (i > 0) out[o++] = 44; // ,
    const h = values[i] as HeldValue;
    const rv = items.rv(i);
    let m: number;
    let f: number;
    let comma: boolean;
    if (h instanceof PackedValue) {
      const room = fieldLength(rv, true);
      const v = h.inflateInto(out, o + room);
      m = metadataEnd(v);
      if (m < 0 || v[0] !== 123 || v[v.length - 1] !== 125) throw new CorruptObjectError(items.key(i), 'not a stored object');
      comma = v[m] !== 125;
      f = fieldLength(rv, comma);
      if (f !== room) out.copyWithin(o + f, o + room, o + room + v.length);
    } else {
      m = at[i] as number;
      comma = h[m] !== 125;
      f = fieldLength(rv, comma);
      out.set(h, o + f);
    }
    out.copyWithin(o, o + f, o + f + m);
    writeField(out, o + m, rv, comma);
    o += h.length + f;
  }
  o += enc.encodeInto(tail, out.subarray(o)).written;
  return o === size ? out : out.subarray(0, o);
}

const RV_FIELD = enc.encode('"resourceVersion":"');

/** Decimal digits of a non-negative integer. */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** `"resourceVersion":"<rv>"` and the comma when other members follow. */
const fieldLength = (rv: number, comma: boolean): number => RV_FIELD.length + digits(rv) + 1 + (comma ? 1 : 0);

function writeField(out: Uint8Array, o: number, rv: number, comma: boolean): void {
  out.set(RV_FIELD, o);
  o += RV_FIELD.length;
  const d = digits(rv);
  for (let k = d - 1; k >= 0; k--) {
    out[o + k] = 48 + (rv % 10);
    rv = Math.floor(rv / 10);
  }
  o += d;
  out[o++] = 34; // "
  if (comma) out[o] = 44; // ,
}

/** Where the members of `"metadata":{` start in stored bytes, or -1 (it is near the start). */
function metadataEnd(v: Uint8Array): number {
  const m = META_BYTES;
  const first = m[0] as number;
  const last = v.length - m.length;
  outer: for (let i = 0; i <= last; i++) {
    if (v[i] !== first) continue;
    for (let j = 1; j < m.length; j++) if (v[i + j] !== m[j]) continue outer;
    return i + m.length;
  }
  return -1;
}

export function decodeStored(kv: KeyValue): Obj {
  return decodeStoredAt(kv.key, kv.value, kv.modRevision);
}

/** The object of the stored bytes `value` of `key`, with metadata.resourceVersion `rv`. */
export function decodeStoredAt(key: string, value: Uint8Array, rv: number): Obj {
  let o: Obj;
  try {
    o = JSON.parse(dec.decode(value)) as Obj;
  } catch (e) {
    throw new CorruptObjectError(key, (e as Error).message);
  }
  if (typeof o !== 'object' || o === null || typeof o.metadata !== 'object' || o.metadata === null)
    throw new CorruptObjectError(key, 'no metadata');
  o.metadata.resourceVersion = String(rv);
  return o;
}

/** The objects of a run of stored items (a list's chunk), each with its resourceVersion. */
export function decodeStoredItems(items: {
  readonly count: number;
  key(i: number): string;
  value(i: number): Uint8Array;
  rv(i: number): number;
}): Obj[] {
  const objs: Obj[] = new Array(items.count);
  for (let i = 0; i < items.count; i++) objs[i] = decodeStoredAt(items.key(i), items.value(i), items.rv(i));
  return objs;
}

/**
 * A store's key-value as a list hands it out (the codec's StoredObject: key, bytes, revision;
 * text and parsed form on demand), like the watch cache's objects, so lists have one shape
 * whichever layer served them. A cold (packed) value stays packed until its bytes are read: its
 * size is known, and a list encoded by the codec pool hands the packed form to the worker, which
 * inflates it there (a page of 500 cold pods inflated here cost the thread ~4.5 ms).
 */
class StoredKeyValue {
  private raw: Uint8Array | undefined;
  readonly size: number;

  constructor(
    readonly key: string,
    private readonly held: HeldValue,
    readonly rv: number,
  ) {
    if (held instanceof PackedValue) this.size = held.length;
    else {
      this.raw = held;
      this.size = held.length;
    }
  }

  get value(): Uint8Array {
    if (this.raw === undefined) this.raw = rawOf(this.held);
    return this.raw;
  }

  get heldValue(): HeldValue {
    return this.raw ?? this.held;
  }

  get text(): string {
    return storedTextAt(this.key, this.value, this.rv);
  }

  get obj(): Obj {
    return decodeStoredAt(this.key, this.value, this.rv);
  }
}

export const storedObject = (kv: KeyValue): StoredKeyValue =>
  new StoredKeyValue(kv.key, kv instanceof PackedKeyValue ? kv.packed : kv.value, kv.modRevision);
