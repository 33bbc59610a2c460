/**
 * One chunk of a long list, encoded (issue 15 item 4): the work a streamed list hands to the codec
 * pool's workers (src/workers/codec-worker.ts) or does inline, the same function either way.
 *
 * A chunk is a run of stored objects (key, bytes, resourceVersion). Its encoding is the items'
 * part of the list in the answer's media type: JSON texts joined by commas, protobuf `items`
 * field entries, or CBOR data items; the list's head and tail come from the codecs'
 * `listHead`/`listParts`. With gzip, each chunk is compressed alone as a segment of one deflate
 * stream (level 1, as the reference's gzip writer, ending in a sync flush; the tail's segment
 * ends the stream), so chunks can be compressed anywhere and in any order and still make one
 * gzip member; their CRC-32s are combined in order (`crc32Combine`) for the trailer.
 */
import * as zlib from 'node:zlib';
import type { Obj } from '../api/meta';
import type { BrandView } from './brand-view';
import type { CborCodec } from './cbor';
import type { ProtobufCodec } from './protobuf';
import { decodeStoredAt, storedTextAt } from './stored';
import { type Column, tableRows } from './table';

/** `table`: the rows of a Table (JSON) rendered from the items. */
export type ChunkMedia = 'json' | 'protobuf' | 'cbor' | 'table';

/** The stored objects of one chunk. */
export interface ChunkItems {
  readonly count: number;
  key(i: number): string;
  value(i: number): Uint8Array;
  rv(i: number): number;
}

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
  table?: { kind: string; group: string; nowMs: number };
}

export interface ChunkResult {
  /** The encoding, compressed when asked (empty when only the size was asked). */
  bytes: Uint8Array;
  /** The encoding's length before compression. */
  size: number;
  /** CRC-32 of the encoding before compression (gzip only, else 0). */
  crc: number;
}

export interface ChunkCodecs {
  protobuf: ProtobufCodec;
  /** Absent with the CBORServingAndStorage gate off (no CBOR list is asked for then). */
  cbor: CborCodec | undefined;
  /** A kind's Table columns. */
  columns: (kind: string) => readonly Column[];
}

const enc = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** The encoding of one chunk of items, in the request's spelling (`view`). */
export function encodeChunk(codecs: ChunkCodecs, view: BrandView, spec: ChunkSpec, items: ChunkItems): ChunkResult {
  let out: Uint8Array;
  if (spec.media === 'json') {
    let text = '';
    for (let i = 0; i < items.count; i++) {
      const t = view.text(storedTextAt(items.key(i), items.value(i), items.rv(i)));
      text += i === 0 && !spec.comma ? t : `,${t}`;
    }
    out = enc.encode(text);
  } else if (spec.media === 'table') {
    const t = spec.table;
    if (!t) throw new Error('bug: a Table chunk without its table');
    const objs: Obj[] = new Array(items.count);
    for (let i = 0; i < items.count; i++) objs[i] = view.obj(decodeStoredAt(items.key(i), items.value(i), items.rv(i)));
    const rows = JSON.stringify(tableRows(codecs.columns(t.kind), objs, t.group, t.nowMs));
    out = enc.encode(spec.comma ? `,${rows.slice(1, -1)}` : rows.slice(1, -1));
  } else {
    const objs: Obj[] = new Array(items.count);
    for (let i = 0; i < items.count; i++) objs[i] = decodeStoredAt(items.key(i), items.value(i), items.rv(i));
    if (spec.media === 'protobuf') out = codecs.protobuf.listItems(objs, spec.listDef);
    else {
      if (!codecs.cbor) throw new Error('bug: a CBOR chunk without the CBOR codec');
      out = codecs.cbor.listItems(view.brand === 'svc' ? objs : objs.map(view.obj), spec.itemDef);
    }
  }
  if (spec.sizeOnly) return { bytes: EMPTY, size: out.length, crc: 0 };
  return spec.gzip ? deflateSegment(out, false) : { bytes: out, size: out.length, crc: 0 };
}

/** `data` compressed as one segment of a gzip stream; the `last` one ends the stream. */
export function deflateSegment(data: Uint8Array, last: boolean): ChunkResult {
  const bytes = zlib.deflateRawSync(data, { level: 1, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH });
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), size: data.length, crc: zlib.crc32(data) };
}

/** The gzip member header (deflate, no name, no time, "fastest" as level 1 is, unknown OS). */
export const GZIP_HEADER: Readonly<Uint8Array> = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);

/** The gzip member trailer: CRC-32 and length (mod 2^32) of everything compressed, little-endian. */
export function gzipTrailer(crc: number, length: number): Uint8Array {
  const t = new Uint8Array(8);
  const v = new DataView(t.buffer);
  v.setUint32(0, crc >>> 0, true);
  v.setUint32(4, length % 0x100000000, true);
  return t;
}

// CRC-32 of two runs joined, from their CRCs and the second's length (zlib's crc32_combine:
// multiplication by x^(8·len2) modulo the CRC polynomial, in its reflected bit order).
const POLY = 0xedb88320;

function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m /= 2;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) modulo the polynomial. */
const X2N: number[] = [];
{
  let p = 0x40000000; // x^1
  X2N.push(p);
  for (let n = 1; n < 32; n++) {
    p = multModP(p, p);
    X2N.push(p);
  }
}

/** x^(n·2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(X2N[k & 31] as number, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A then B from CRC(A), CRC(B) and B's length. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}

/**
 * Where a streamed list's chunks are encoded: inline (`inlineEncoder`) or in the codec pool
 * (`CodecPool.encoder`). Either way the answer is the same bytes.
 */
export interface ChunkEncoder {
  chunk(spec: ChunkSpec, items: ChunkItems): Promise<ChunkResult>;
  deflate(data: Uint8Array, last: boolean): Promise<ChunkResult>;
}

/**
 * Chunks encoded on the calling thread, each in a turn of the event loop of its own: other
 * requests' I/O is served between two chunks. (Awaiting an already-encoded chunk would run the
 * whole list in one turn: promise jobs run before any I/O, so a 100k-item protobuf list held
 * the loop for its whole first pass.)
 */
export function inlineEncoder(codecs: ChunkCodecs, view: BrandView): ChunkEncoder {
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    chunk: async (spec, items) => {
      await turn();
      return encodeChunk(codecs, view, spec, items);
    },
    deflate: async (data, last) => {
      await turn();
      return deflateSegment(data, last);
    },
  };
}
