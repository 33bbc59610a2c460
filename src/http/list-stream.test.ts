import { describe, expect, test } from 'bun:test';
import { brandView } from '../codec/brand-view';
import { jsonCodec } from '../codec/json-media';
import type { ChunkEncoder } from '../codec/list-chunks';
import type { ChunkItems, ChunkResult, StreamCodec } from '../codec/media';
import { replyListStream } from './list-stream';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** `count` items of 300 KB of stored bytes each: one chunk per item (chunks are ~256 KB). */
function items(count: number): ChunkItems {
  const value = new Uint8Array(300 * 1024);
  return { count, key: (i) => `/k/${i}`, value: () => value, rv: (i) => i + 1 };
}

/** Encodes chunk k as `{"n":k}` (a comma before all but the first); `empty` chunks encode to nothing. */
function encoder(empty: Set<number>): ChunkEncoder & { calls: number } {
  const e = {
    calls: 0,
    chunk(spec: { comma: boolean }, slice: ChunkItems): Promise<ChunkResult> {
      const k = e.calls++;
      const text = empty.has(k) ? '' : `${spec.comma ? ',' : ''}{"n":${slice.rv(0) - 1}}`;
      const bytes = enc.encode(text);
      return Promise.resolve({ bytes, size: bytes.length, crc: 0 });
    },
    deflate(): Promise<ChunkResult> {
      return Promise.reject(new Error('no gzip in these tests'));
    },
  };
  return e as ChunkEncoder & { calls: number };
}

function listOf(count: number, e: ChunkEncoder) {
  return replyListStream({
    codec: jsonCodec(false).stream as StreamCodec,
    ctx: {
      kind: { kind: 'Item', listKind: 'List', schema: 'Item', columns: [] },
      view: brandView({ group: '', version: 'v1' }, 'svc'),
      now: Date.now,
    },
    meta: { resourceVersion: '9' },
    items: items(count),
    encoder: e,
    reply: {},
  });
}

describe('replyListStream', () => {
  test('writes the head, every chunk in order and the tail', async () => {
    const r = await listOf(4, encoder(new Set()));
    expect(JSON.parse(dec.decode(await r.arrayBuffer()))).toEqual({
      kind: 'List',
      apiVersion: 'v1',
      metadata: { resourceVersion: '9' },
      items: [{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }],
    });
  });

  test('a chunk that encodes to nothing fails the answer instead of ending it short', async () => {
    const r = await listOf(4, encoder(new Set([2])));
    await expect(r.arrayBuffer()).rejects.toThrow('encoded to nothing');
  });

  test('after the reader cancels, no chunk is asked for beyond those in flight and nothing is written', async () => {
    const e = encoder(new Set());
    const r = await listOf(50, e);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const head = await reader.read();
    expect(dec.decode(head.value)).toStartWith('{"kind":"List"');
    await reader.read();
    await reader.cancel();
    const asked = e.calls;
    await Bun.sleep(20);
    expect(e.calls).toBe(asked);
    expect(asked).toBeLessThan(6);
  });
});
