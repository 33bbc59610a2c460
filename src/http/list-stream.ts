/**
 * Long lists written as they are read (issue 15 item 4): the list's head, its items a chunk at a
 * time, its tail. Nothing holds the whole encoding: a 100k-item list costs the stored bytes it
 * already had plus a few chunks in flight, and between two chunks the event loop serves other
 * requests. The client's reading paces it: a chunk is asked for only when the socket took the
 * one before, and at most DEPTH chunks are encoded ahead.
 *
 * Chunks are encoded by a ChunkEncoder: the codec pool's workers, or inline. With gzip every
 * chunk is a segment of one deflate stream compressed where it was encoded (src/codec/list-chunks.ts).
 *
 * Protobuf is the one encoding whose head needs the items' size (StreamCodec.sizedHead: the
 * envelope's raw message is length-prefixed): a first pass encodes the chunks for their sizes,
 * keeping their encodings for the second pass while the process's HOLD_BUDGET allows and
 * encoding the rest again. JSON, Table rows and CBOR (an array counted in items) start at once.
 */
import { type ChunkEncoder, crc32Combine, deflateSegment, GZIP_HEADER, gzipTrailer } from '../codec/list-chunks';
import {
  type ChunkItems,
  type ChunkMedia,
  type ChunkResult,
  type EncodeContext,
  type ItemValue,
  itemSize,
  type ListMeta,
  type StreamCodec,
} from '../codec/media';
import { headersFor, type ReplyOptions } from './respond';

/**
 * Lists of at least this many items are streamed rather than built whole. SVC_LIST_STREAM_MIN_ITEMS
 * overrides it (bench/list-stream.ts compares both in one run).
 */
export const STREAM_MIN_ITEMS = Number(process.env.SVC_LIST_STREAM_MIN_ITEMS) || 500;
/**
 * With the codec pool, a list whose stored bytes reach this size is encoded there (streamed) even
 * when shorter than STREAM_MIN_ITEMS. bench/codec-pool.ts measured what a chunk of ~3 KB Pods
 * costs the server's thread sent to the pool against encoded inline: protobuf breaks even at
 * about 4 Pods (9 KB stored) and saves ×4-8 from 16, CBOR likewise; Table rows break even at about
 * 8 Pods (18 KB) and save ×2-6 from 16; JSON with gzip breaks even
 * at about 50 Pods (100 KB) and gzip starts at 128 KB anyway; JSON without gzip costs the thread
 * as much through the pool as inline even at 256 Pods, so it is never sent there. Nor when its
 * objects are cold (held packed, inflated by the worker): 30,000 cold pods listed in 388 ms
 * that way against 323 ms inline (2026-11-28, one worker at a lower priority). JSON's chunks go
 * to the pool only while other requests come in (list-chunks.ts adaptiveEncoder).
 */
export const POOL_MIN_BYTES: Readonly<Record<ChunkMedia, { plain: number; gzip: number }>> = {
  protobuf: { plain: 16 * 1024, gzip: 16 * 1024 },
  cbor: { plain: 16 * 1024, gzip: 16 * 1024 },
  table: { plain: 32 * 1024, gzip: 32 * 1024 },
  json: { plain: Number.POSITIVE_INFINITY, gzip: 128 * 1024 },
};

/**
 * JSON lists of fewer stored bytes than this are written whole, however many items they have: a
 * page of 500 pods (1.2 MB) answered in 3.2-3.7 ms built whole against 6.8-7.1 ms streamed
 * (2026-11-28, 100k pods, one client on the same 2 cores; a bare Bun.serve sending the same bytes:
 * 1.3-2.0 ms), and holding 4 MiB is not what streaming saves memory on. SVC_LIST_WHOLE_JSON_BYTES
 * overrides it (0: stream from STREAM_MIN_ITEMS as every other encoding).
 */
export const WHOLE_JSON_BYTES = envNumber('SVC_LIST_WHOLE_JSON_BYTES', 4 * 1024 * 1024);

/** Whether a list in `media` is written whole rather than streamed: see WHOLE_JSON_BYTES. */
export function writtenWhole(media: ChunkMedia, items: ChunkItems): boolean {
  return media === 'json' && storedBytes(items, 0, items.count, WHOLE_JSON_BYTES) < WHOLE_JSON_BYTES;
}

function envNumber(name: string, otherwise: number): number {
  const v = process.env[name];
  return v === undefined || v === '' || !Number.isFinite(Number(v)) ? otherwise : Number(v);
}

/** Whether the codec pool encodes a list in `media` (gzip or not) better than this thread: see POOL_MIN_BYTES. */
export function poolPays(media: ChunkMedia, gzip: boolean, items: ChunkItems): boolean {
  const min = POOL_MIN_BYTES[media][gzip ? 'gzip' : 'plain'];
  return Number.isFinite(min) && storedBytes(items, 0, items.count, min) >= min;
}

/** About how many stored bytes go into one chunk (SVC_LIST_CHUNK_BYTES overrides it, for benches). */
const CHUNK_BYTES = Number(process.env.SVC_LIST_CHUNK_BYTES) || 256 * 1024;
/** Chunks encoded ahead of the one being written. */
const DEPTH = 2;
/**
 * Bytes of protobuf encodings that first passes may hold for their second, all lists together
 * (SVC_LIST_HOLD_BYTES overrides it). A chunk is held if its stored bytes (more than its
 * encoding) fit, and given back once written, or when the answer is cancelled, fails or is
 * dropped. A list of 100k pods (147 MB of protobuf) took 5.2-6.3 s with 32 MiB of stored bytes
 * held per list (three quarters of it encoded twice) against 2.7-3.4 s held whole (2026-11-28);
 * one budget for the process keeps concurrent long lists from holding more than it between them
 * (a list finding it spent encodes every chunk twice, as before).
 */
const HOLD_BUDGET = envNumber('SVC_LIST_HOLD_BYTES', 256 * 1024 * 1024);
let holdFree = HOLD_BUDGET;

/** A first pass's held encodings, given back to HOLD_BUDGET as they go (once each). */
class Held {
  private readonly chunks: (Uint8Array | undefined)[];
  constructor(n: number) {
    this.chunks = new Array(n);
  }
  /** Reserve `bytes` (an upper bound of a chunk's encoding) if the budget has them. */
  static reserve(bytes: number): boolean {
    if (bytes > holdFree) return false;
    holdFree -= bytes;
    return true;
  }
  /** Keep chunk k's encoding, reserved as `reserved` bytes (the difference goes back). */
  keep(k: number, bytes: Uint8Array, reserved: number): void {
    holdFree += reserved - bytes.length;
    this.chunks[k] = bytes;
  }
  /** A reservation that held nothing (a chunk encoded to its size only, or a failure). */
  static unreserve(reserved: number): void {
    holdFree += reserved;
  }
  take(k: number): Uint8Array | undefined {
    const h = this.chunks[k];
    if (h !== undefined) {
      this.chunks[k] = undefined;
      holdFree += h.length;
    }
    return h;
  }
  release(): void {
    for (let k = 0; k < this.chunks.length; k++) this.take(k);
  }
}

/** What the held chunks of an answer never read nor cancelled give back once it is collected. */
const dropped = new FinalizationRegistry<Held>((h) => h.release());

/** Chunks encoded (or, held, compressed) so far, wherever (the svc_list_chunks_encoded_total counter). */
let chunksEncoded = 0;
export function listChunksEncoded(): number {
  return chunksEncoded;
}

/** Bytes held now, all lists together (the svc_list_held_bytes gauge). */
export function listHeldBytes(): number {
  return HOLD_BUDGET - holdFree;
}

export interface StreamedList {
  /** The answer's encoding, and the request's context of it. */
  codec: StreamCodec;
  ctx: EncodeContext;
  /** The list envelope's metadata. */
  meta: ListMeta;
  items: ChunkItems;
  encoder: ChunkEncoder;
  reply: ReplyOptions;
}

/** The streamed answer of a long list (protobuf's first pass runs before it answers). */
export async function replyListStream(l: StreamedList): Promise<Response> {
  const { items, encoder } = l;
  const starts = chunkStarts(items);
  const n = starts.length - 1;
  const slice = (k: number): ChunkItems => sliceItems(items, starts[k] as number, starts[k + 1] as number);
  const gzip = l.reply.gzip === true;
  const spec = l.codec.spec(l.ctx);

  const held = new Held(n);
  let itemsLength = 0;
  if (l.codec.sizedHead) {
    const reserved = new Array<number>(n).fill(0);
    try {
      await pipeline(
        n,
        (k) => {
          const bytes = storedBytes(items, starts[k] as number, starts[k + 1] as number);
          const hold = Held.reserve(bytes);
          if (hold) reserved[k] = bytes;
          chunksEncoded++;
          return encoder.chunk({ ...spec, comma: false, sizeOnly: !hold }, slice(k));
        },
        (k, r) => {
          itemsLength += r.size;
          const got = reserved[k] as number;
          reserved[k] = 0;
          if (r.bytes.length > 0 && got > 0) held.keep(k, r.bytes, got);
          else Held.unreserve(got);
        },
      );
    } catch (e) {
      // Chunks still in flight keep nothing; their reservations and the held ones go back.
      for (const got of reserved) Held.unreserve(got);
      held.release();
      throw e;
    }
  }
  const { head, tail } = l.codec.parts(l.meta, l.ctx, items.count, itemsLength);

  const queue: Promise<ChunkResult>[] = [];
  let next = 0;
  let cancelled = false;
  const issue = (): void => {
    while (!cancelled && queue.length < DEPTH && next < n) {
      const k = next++;
      const h = held.take(k);
      if (h === undefined || gzip) chunksEncoded++;
      const p = h
        ? gzip
          ? encoder.deflate(h, false)
          : Promise.resolve({ bytes: h, size: h.length, crc: 0 })
        : encoder.chunk({ ...spec, comma: k > 0, gzip }, slice(k));
      p.catch(() => {}); // a failure is reported when its turn comes, or never after a cancel
      queue.push(p);
    }
  };
  let crc = 0;
  let length = 0;
  let started = false;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        try {
          if (!started) {
            started = true;
            issue();
            if (!gzip) return c.enqueue(head);
            const h = deflateSegment(head, false);
            crc = h.crc;
            length = h.size;
            return c.enqueue(concat(GZIP_HEADER as Uint8Array, h.bytes));
          }
          while (queue.length > 0) {
            const r = await (queue.shift() as Promise<ChunkResult>);
            if (cancelled) return;
            issue();
            if (gzip) {
              crc = crc32Combine(crc, r.crc, r.size);
              length += r.size;
            }
            // Every chunk holds at least one item: an empty one is a lost chunk, and the answer
            // must fail (the client sees the connection reset), not end short but well-formed.
            if (r.bytes.length === 0) throw new Error('bug: a list chunk encoded to nothing');
            return c.enqueue(r.bytes);
          }
          if (cancelled) return;
          if (!gzip) c.enqueue(tail);
          else {
            const t = deflateSegment(tail, true);
            c.enqueue(concat(t.bytes, gzipTrailer(crc32Combine(crc, t.crc, t.size), length + t.size)));
          }
          c.close();
        } catch (e) {
          cancelled = true;
          held.release();
          c.error(e);
        }
      },
      cancel() {
        cancelled = true;
        queue.length = 0;
        held.release();
      },
    },
    { highWaterMark: 0 },
  );
  dropped.register(body, held);
  const h = headersFor(l.codec.contentType, l.reply);
  if (gzip) h.push(['Content-Encoding', 'gzip'], ['Vary', 'Accept-Encoding']);
  return new Response(body, { status: l.reply.status ?? 200, headers: h });
}

/** Runs `start(k)` for k = 0..n-1, DEPTH at a time, handing each result to `done` in order. */
async function pipeline(n: number, start: (k: number) => Promise<ChunkResult>, done: (k: number, r: ChunkResult) => void): Promise<void> {
  const q: Promise<ChunkResult>[] = [];
  let next = 0;
  for (let k = 0; k < n; k++) {
    while (q.length < DEPTH && next < n) {
      const p = start(next++);
      p.catch(() => {});
      q.push(p);
    }
    done(k, await (q.shift() as Promise<ChunkResult>));
  }
}

/** Where each chunk starts (about CHUNK_BYTES of stored bytes each), and the end. */
function chunkStarts(items: ChunkItems): number[] {
  const starts = [0];
  let bytes = 0;
  for (let i = 0; i < items.count; i++) {
    bytes += itemSize(items, i);
    if (bytes >= CHUNK_BYTES && i + 1 < items.count) {
      starts.push(i + 1);
      bytes = 0;
    }
  }
  starts.push(items.count);
  return starts;
}

function storedBytes(items: ChunkItems, from: number, to: number, atLeast = Number.POSITIVE_INFINITY): number {
  let n = 0;
  for (let i = from; i < to && n < atLeast; i++) n += itemSize(items, i);
  return n;
}

/** Items from..to-1; each value read once (a cold object's is inflated on each read of items'). */
function sliceItems(items: ChunkItems, from: number, to: number): ChunkItems {
  const values: (Uint8Array | undefined)[] = new Array(to - from);
  return {
    count: to - from,
    key: (i) => items.key(from + i),
    value: (i) => {
      let v = values[i];
      if (v === undefined) {
        v = items.value(from + i);
        values[i] = v;
      }
      return v;
    },
    rv: (i) => items.rv(from + i),
    size: (i) => values[i]?.length ?? itemSize(items, from + i),
    held: items.held ? (i) => values[i] ?? (items.held as (i: number) => ItemValue)(from + i) : undefined,
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
