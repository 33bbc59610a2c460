/**
 * One chunk of a long list, encoded (issue 15 item 4): the work a streamed list hands to the codec
 * pool's workers (src/workers/codec-worker.ts) or does inline, the same function either way.
 *
 * A chunk is a run of stored objects (key, bytes, resourceVersion). Its encoding is the items'
 * part of the list in the answer's encoding (StreamCodec.chunk: JSON texts joined by commas,
 * Table rows, protobuf `items` field entries, or CBOR data items); the list's head and tail come
 * from StreamCodec.parts. With gzip, each chunk is compressed alone as a segment of one deflate
 * stream (level 1, as the reference's gzip writer, ending in a sync flush; the tail's segment
 * ends the stream), so chunks can be compressed anywhere and in any order and still make one
 * gzip member; their CRC-32s are combined in order (`crc32Combine`) for the trailer.
 */
import * as zlib from 'node:zlib';
import { cborCodec, protobufCodec } from './binary-media';
import type { CborCodec } from './cbor';
import { jsonCodec } from './json-media';
import type { ChunkContext, ChunkItems, ChunkMedia, ChunkResult, ChunkSpec, StreamCodec } from './media';
import type { ProtobufCodec } from './protobuf';
import { tableCodec } from './table-media';

const EMPTY = new Uint8Array(0);

/** The encoding of one chunk of items by `codec`, compressed when the spec asks. */
export function encodeChunk(codec: StreamCodec, ctx: ChunkContext, spec: ChunkSpec, items: ChunkItems): ChunkResult {
  const out = codec.chunk(items, spec, ctx);
  if (spec.sizeOnly) return { bytes: EMPTY, size: out.length, crc: 0 };
  return spec.gzip ? deflateSegment(out, false) : { bytes: out, size: out.length, crc: 0 };
}

/**
 * The streamed encodings by the name a chunk spec carries: what the codec pool's workers encode
 * with (a chunk's Table group and the protobuf media type do not change its bytes). CBOR only
 * when the server serves it (gate CBORServingAndStorage).
 */
export function streamCodecs(protobuf: ProtobufCodec, cbor: CborCodec | undefined): Partial<Record<ChunkMedia, StreamCodec>> {
  const json = jsonCodec(false);
  return {
    json: json.stream,
    table: tableCodec('meta.svc.io', 'v1', false).stream,
    protobuf: protobufCodec(protobuf, '', json).stream,
    cbor: cbor && cborCodec(cbor).stream,
  };
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
 * Each chunk encoded where it costs least: inline while no other request has come in since the
 * chunk before (`busy` false), else in the pool, so that they are not kept waiting behind it. A
 * JSON list of 100k pods with gzip, alone on this 2-core machine with its client, took 474-530 ms
 * at 340-470 ms of the server's CPU inline against 692-1,025 ms at 560-870 ms through the pool
 * (the worker, the event loop and the client on two cores; 2026-11-28): the pool pays only when
 * the event loop has other requests to serve. The bytes are the same either way.
 */
export function adaptiveEncoder(inline: ChunkEncoder, pooled: ChunkEncoder, busy: () => boolean): ChunkEncoder {
  return {
    chunk: (spec, items) => (busy() ? pooled : inline).chunk(spec, items),
    deflate: (data, last) => (busy() ? pooled : inline).deflate(data, last),
  };
}

/**
 * Chunks shared between the pool and this thread while no other request comes in (every other
 * chunk inline: both cores encode), all to the pool while others do. For the encodings that
 * cost ×2-8 more than JSON a chunk (protobuf, CBOR, Table rows), where the pool's one worker
 * alone is the list's bound: a protobuf list of 100k pods took 2.6-3.3 s all in the worker.
 */
export function sharedEncoder(inline: ChunkEncoder, pooled: ChunkEncoder, busy: () => boolean): ChunkEncoder {
  let n = 0;
  const pick = (): ChunkEncoder => (busy() || (n++ & 1) === 0 ? pooled : inline);
  return {
    chunk: (spec, items) => pick().chunk(spec, items),
    deflate: (data, last) => pick().deflate(data, last),
  };
}

/**
 * Chunks encoded on the calling thread, each in a turn of the event loop of its own: other
 * requests' I/O is served between two chunks. (Awaiting an already-encoded chunk would run the
 * whole list in one turn: promise jobs run before any I/O, so a 100k-item protobuf list held
 * the loop for its whole first pass.)
 */
export function inlineEncoder(codec: StreamCodec, ctx: ChunkContext): ChunkEncoder {
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    chunk: async (spec, items) => {
      await turn();
      return encodeChunk(codec, ctx, spec, items);
    },
    deflate: async (data, last) => {
      await turn();
      return deflateSegment(data, last);
    },
  };
}
