/**
 * The codec pool's break-even (issue 15 item 4): what one chunk of a long list costs the
 * server's thread encoded inline (the encoding itself) against sent to the pool (copying the
 * stored bytes into one buffer, posting it, taking the answer back), per media type and chunk
 * size, for ~3 KB Pods. The thread's CPU is read from /proc (thread-self), so waiting for the
 * worker is not counted: what is counted is what other requests wait for.
 *
 *     bun bench/codec-pool.ts
 */
import * as fs from 'node:fs';
import { brandView } from '../src/codec/brand-view';
import { CborCodec } from '../src/codec/cbor';
import { encodeChunk, streamCodecs } from '../src/codec/list-chunks';
import type { ChunkItems, ChunkMedia, StreamCodec } from '../src/codec/media';
import { ProtobufCodec } from '../src/codec/protobuf';
import { encodeStored } from '../src/codec/stored';
import { builtinColumns } from '../src/kinds/builtin';
import { SchemaSet } from '../src/schema/engine';
import generated from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { CodecPool } from '../src/workers/codec-pool';
import { pod3k as pod } from './fixtures';

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const codecs = streamCodecs(new ProtobufCodec(schemas), new CborCodec(schemas));
const ctx = { view: brandView({ group: '', version: 'v1' }, 'svc'), columns: builtinColumns('Pod') };

// Stored bytes as the store holds them, copied so the writer's hints (this process's recent writes) do not apply.
const stored = Array.from({ length: 256 }, (_, i) => {
  const o = pod(i) as { metadata: Record<string, unknown> };
  delete o.metadata.resourceVersion;
  return new Uint8Array(encodeStored(o as never));
});
const items = (n: number): ChunkItems => ({
  count: n,
  key: (i) => `/registry/pods/default/p${i}`,
  value: (i) => stored[i] as Uint8Array,
  rv: (i) => 1000 + i,
});

/** CPU time (us) of the calling thread. */
function threadCpuUs(): number {
  const f = fs.readFileSync('/proc/thread-self/stat', 'utf8');
  const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(parts[11]) + Number(parts[12])) * 10_000; // utime, stime in 1/100 s
}

const pool = new CodecPool({ size: 1 });
await pool.ready();
const enc = pool.encoder('', 'v1', 'svc');
const MIN_MS = 1500;

console.log(
  'media | pods per chunk | stored KB | inline: thread us per chunk | pool: thread us per chunk | pool round trip ms | inline/pool',
);
for (const [media, gzip] of [
  ['json', false],
  ['json', true],
  ['protobuf', false],
  ['protobuf', true],
  ['cbor', false],
  ['table', false],
] as [ChunkMedia, boolean][]) {
  for (const n of [1, 4, 16, 64, 256]) {
    const spec = {
      media,
      listDef: 'io.svc.api.core.v1.PodList',
      itemDef: 'io.svc.api.core.v1.Pod',
      comma: true,
      gzip,
      table: { kind: 'Pod', group: 'meta.k8s.io', nowMs: Date.now() },
    };
    const its = items(n);
    const codec = codecs[media] as StreamCodec;
    // Inline: synchronous, so wall time is the thread's time.
    for (let i = 0; i < 20; i++) encodeChunk(codec, ctx, spec, its);
    let runs = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < MIN_MS) {
      encodeChunk(codec, ctx, spec, its);
      runs++;
    }
    const inline = ((performance.now() - t0) * 1000) / runs;
    // Pool: one chunk at a time (the thread idles while the worker encodes).
    for (let i = 0; i < 20; i++) await enc.chunk(spec, its);
    let pruns = 0;
    const c0 = threadCpuUs();
    const p0 = performance.now();
    while (performance.now() - p0 < MIN_MS) {
      await enc.chunk(spec, its);
      pruns++;
    }
    const wall = (performance.now() - p0) / pruns;
    const pooled = (threadCpuUs() - c0) / pruns;
    const kb = its.count && stored.slice(0, n).reduce((a, b) => a + b.length, 0) / 1024;
    console.log(
      `${media}${gzip ? '+gzip' : ''} | ${n} | ${kb.toFixed(0)} | ${inline.toFixed(1)} | ${pooled.toFixed(1)} | ${wall.toFixed(3)} | ${(inline / pooled).toFixed(2)}`,
    );
  }
}
pool.close();
