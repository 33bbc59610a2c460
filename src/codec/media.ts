/**
 * The negotiated codec: one interface every encoding of the API implements (JSON, YAML,
 * protobuf, CBOR, Table, PartialObjectMetadata), so the HTTP layer chooses one in one place
 * (the negotiation, src/http/negotiate.ts) and writes every answer through it without asking
 * which media type it is.
 *
 *   codec = negotiation.response(Accept, ?pretty, what the kind is encoded in)
 *   codec.object({ kv }, ctx)            a GET's body (JSON: the stored text, never parsed)
 *   codec.object({ obj }, ctx)           a write's result (JSON: the text just stored)
 *   codec.list(meta, items, ctx)         a LIST's body, whole
 *   codec.stream?.parts / chunk          a long LIST's body, a chunk at a time (src/http/list-stream.ts)
 *   codec.value(status, def)             a delete's answer (a Status, the deleted objects)
 *   codec.error(status)                  an error's Status, or undefined: the chain renders it (JSON)
 *   codec.watch.event(type, e, ctx)      one event of a watch stream (and initial, bookmark, error)
 *   codec.decode(body, def, duplicates)  a request body in this encoding
 *
 * Codecs hold no per-request state: what a request adds (the kind, the spelling of its group,
 * the clock of Table ages) comes in the EncodeContext.
 */
import type { Obj } from '../api/meta';
import type { DefName } from '../schema/types';
import type { HeldValue } from '../store/packed';
import type { KeyValue } from '../store/types';
import type { BrandView } from './brand-view';
import type { Column, IncludeObject } from './table';

/** A response body and its Content-Type. */
export interface Encoded {
  body: string | Uint8Array;
  contentType: string;
}

/** What a codec needs to know of the kind whose objects it writes (a KindDef has it). */
export interface CodecKind {
  readonly kind: string;
  readonly listKind: string;
  /** The kind's definition; its list's is `${schema}List`. */
  readonly schema: DefName;
  readonly columns: readonly Column[];
}

/** What one request adds to a codec. */
export interface EncodeContext {
  readonly kind: CodecKind;
  /** The request's spelling of the kind's group (src/codec/brand-view.ts). */
  readonly view: BrandView;
  /** The time Table ages are counted to (ms since the epoch). */
  readonly now: () => number;
  /** What each Table row carries (`includeObject`): PartialObjectMetadata (default), the object, or nothing. */
  readonly includeObject?: IncludeObject;
}

/** An object to write: decoded, or as stored (the JSON encodings serve stored text unparsed). */
export type ObjectInput = { readonly obj: Obj } | { readonly kv: KeyValue };

/** The list envelope's metadata: resourceVersion, and continue and remainingItemCount when paged. */
export type ListMeta = Record<string, unknown>;

/** The stored objects of one chunk of a list (key, bytes, resourceVersion of each). */
export interface ChunkItems {
  readonly count: number;
  key(i: number): string;
  value(i: number): Uint8Array;
  rv(i: number): number;
  /** value(i).length without reading the value (a cold object's is inflated on each read). */
  size?(i: number): number;
  /** The value as held: raw, or packed (cold); the codec pool's workers inflate packed ones. */
  held?(i: number): HeldValue;
}

/** An item's value as held: raw bytes, or packed (cold). */
export type ItemValue = HeldValue;

/** The stored bytes' length of item `i` (read without inflating it when the items can tell). */
export function itemSize(items: ChunkItems, i: number): number {
  return items.size ? items.size(i) : items.value(i).length;
}

/** The stored objects of a list, with each one's JSON text and object (made when asked). */
export interface ListItems extends ChunkItems {
  /** The object's JSON text with its resourceVersion, in the storage spelling. */
  text(i: number): string;
  /** The decoded object, in the storage spelling (treat it as read-only). */
  obj(i: number): Obj;
}

/** A stored object a watch starts with (the watch cache's CachedObject). */
export interface StoredObject {
  readonly key: string;
  readonly value: Uint8Array;
  /** value.length, known without reading value (a cold cached object's is packed). */
  readonly size?: number;
  /** The value as held (raw, or packed when cold), when the object can tell. */
  readonly heldValue?: HeldValue;
  /** The value for a client's read, when the object tells it apart from `value` (a cached object). */
  readonly served?: Uint8Array;
  /** The held value for a client's read, as `served`. */
  readonly servedHeld?: HeldValue;
  readonly rv: number;
  readonly text: string;
  readonly obj: Obj;
}

/** What a watch event carries: the object's JSON text (storage spelling) and the object. */
export interface WatchObject {
  readonly text: string;
  readonly obj: Obj;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface MediaCodec {
  /** Request bodies in this encoding are bytes (protobuf, CBOR), not text. */
  readonly binary: boolean;
  /** One object (a GET, a write's result). */
  object(input: ObjectInput, ctx: EncodeContext): Encoded;
  /** A whole list of the kind: `kind`, `apiVersion` (the request's spelling), `metadata`, `items`. */
  list(meta: ListMeta, items: ListItems, ctx: EncodeContext): Encoded;
  /**
   * A value already in the answer's shape (a delete's Status, the deleted objects of a
   * deletecollection); `def` is its definition, if it has one. Protobuf answers these in JSON,
   * as this server always has (the reference writes them in protobuf).
   */
  value(v: object, def: DefName | undefined): Encoded;
  /**
   * An error's Status in this encoding; undefined for the text encodings, whose errors the
   * request chain renders (in JSON, src/http/respond.ts replyError).
   */
  error(status: object): Encoded | undefined;
  readonly watch: WatchCodec;
  /** Long lists written a chunk at a time; undefined when this encoding is always written whole. */
  readonly stream: StreamCodec | undefined;
  /**
   * A request body (text when not `binary`) as the JSON-shaped value it encodes; `def` is the
   * kind's definition (protobuf and CBOR need it). Malformed input is a 400 StatusError.
   * `duplicates` collects duplicate fields (JSON and YAML; for fieldValidation).
   */
  decode(body: string | Uint8Array, def: DefName | undefined, duplicates: string[]): unknown;
}

/** A watch stream in one encoding: its events are lines (JSON) or frames (protobuf, CBOR). */
export interface WatchCodec {
  readonly contentType: string;
  /**
   * What a stream with nothing else to send first writes: Bun sends the response headers only
   * with the first body bytes, so a quiet watch would leave its client waiting for them. A byte
   * every decoder skips (JSON whitespace); undefined when the encoding has none (binary), and
   * then a bookmark goes first if the client takes them.
   */
  readonly idle: string | undefined;
  /**
   * Events are the same bytes for every watch of this encoding in the svc spelling: the handler
   * keeps each event's encoding under this key and shares it. Undefined: encoded per watch
   * (Table rows count ages to the time of sending).
   */
  readonly shareKey: string | undefined;
  event(type: WatchEventType, e: WatchObject, ctx: EncodeContext): string | Uint8Array;
  /**
   * An ADDED event of the state a watch starts with. Parts may go to `write` first; the last
   * part is returned, for the caller to send with backpressure (the JSON encoding writes stored
   * bytes around the event's fixed parts: no per-watcher copy of the object).
   */
  initial(c: StoredObject, ctx: EncodeContext, write: (part: string | Uint8Array) => void): string | Uint8Array;
  /** A BOOKMARK event carrying `bookmark` (kind, apiVersion, metadata with the resourceVersion). */
  bookmark(bookmark: object, ctx: EncodeContext): string | Uint8Array;
  /** An ERROR event carrying a Status. */
  error(status: object, ctx: EncodeContext): string | Uint8Array;
}

/** The names the codec pool's workers know the streamed encodings by. */
export type ChunkMedia = 'json' | 'protobuf' | 'cbor' | 'table';

/** What a chunk of a list is encoded with (sent to the codec pool's workers as it is). */
export interface ChunkSpec {
  media: ChunkMedia;
  /** The list's definition (protobuf) and its items' (CBOR byte fields). */
  listDef: string;
  itemDef: string;
  /** JSON: the chunk follows other items (starts with a comma). */
  comma: boolean;
  /** Only the encoding's size is wanted (protobuf's first pass past its memory budget). */
  sizeOnly?: boolean;
  /** Compress as a (not last) segment of a gzip stream. */
  gzip?: boolean;
  /** Table rows: the kind (its columns), the group of the Table's apiVersion, the time ages are counted to. */
  table?: { kind: string; group: string; nowMs: number; include?: IncludeObject };
}

export interface ChunkResult {
  /** The encoding, compressed when asked (empty when only the size was asked). */
  bytes: Uint8Array;
  /** The encoding's length before compression. */
  size: number;
  /** CRC-32 of the encoding before compression (gzip only, else 0). */
  crc: number;
}

/** What encoding a chunk needs beyond the spec: the request's spelling and the kind's Table columns. */
export interface ChunkContext {
  view: BrandView;
  columns: readonly Column[];
}

/** A list written as a head, its items a chunk at a time, and a tail (src/http/list-stream.ts). */
export interface StreamCodec {
  readonly media: ChunkMedia;
  readonly contentType: string;
  /**
   * The head counts the items' encoded length (protobuf: the envelope's raw message is
   * length-prefixed), so the items are encoded once for their size before it is written.
   */
  readonly sizedHead: boolean;
  /** The spec of this request's chunks, but for the per-chunk fields. */
  spec(ctx: EncodeContext): Omit<ChunkSpec, 'comma' | 'sizeOnly' | 'gzip'>;
  /** The list without its items, split where they go, for `count` items of `itemsLength` bytes. */
  parts(meta: ListMeta, ctx: EncodeContext, count: number, itemsLength: number): { head: Uint8Array; tail: Uint8Array };
  /** The encoding of one chunk of items: what goes between the head and the tail. */
  chunk(items: ChunkItems, spec: ChunkSpec, ctx: ChunkContext): Uint8Array;
}
