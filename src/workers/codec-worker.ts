/**
 * The codec pool's worker (see src/workers/codec-pool.ts): encodes chunks of long lists and
 * compresses gzip segments, with the same codecs and schemas as the server's thread.
 */
import * as os from 'node:os';
import type { Brand } from '../api/brand';
import { brandView } from '../codec/brand-view';
import { CborCodec } from '../codec/cbor';
import { deflateSegment, encodeChunk, streamCodecs } from '../codec/list-chunks';
import type { ChunkItems, ChunkResult } from '../codec/media';
import { ProtobufCodec } from '../codec/protobuf';
import { builtinColumns } from '../kinds/builtin';
import { defaulters } from '../schema/defaulters';
import { SchemaSet } from '../schema/engine';
import definitions from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions } from '../schema/types';
import { inflatePacked } from '../store/packed';
import type { CodecTask } from './codec-protocol';
import { serveWorker } from './pool';

// Bulk work: on Linux the nice value is per thread, so this lowers this worker alone. When the
// two cores are contended, the server's thread (small requests) runs before long lists' chunks.
try {
  os.setPriority(0, 10);
} catch {
  // Not permitted or not supported: the worker runs at the process's priority.
}

const schemas = new SchemaSet(definitions as unknown as Definitions, overlays, defaulters);
const codecs = streamCodecs(new ProtobufCodec(schemas), new CborCodec(schemas));
const views = new Map<string, ReturnType<typeof brandView>>();

function viewOf(group: string, version: string, brand: Brand) {
  const k = `${group}/${version}/${brand}`;
  let v = views.get(k);
  if (!v) {
    v = brandView({ group, version }, brand);
    views.set(k, v);
  }
  return v;
}

/** A transferable answer: bytes that own their whole buffer. */
function owned(r: ChunkResult): ChunkResult {
  const b = r.bytes;
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return r;
  return { ...r, bytes: b.slice() };
}

serveWorker<CodecTask, ChunkResult>(
  (t) => {
    if (t.op === 'deflate') return owned(deflateSegment(t.data, t.last));
    const { data, ends, rvs, keys, packs, dicts, lengths } = t;
    const bytes = (i: number) => data.subarray(i === 0 ? 0 : (ends[i - 1] as number), ends[i] as number);
    const items: ChunkItems = {
      count: ends.length,
      key: (i) => keys[i] as string,
      // A packed item is inflated here, off the server's thread (encoders read each value once).
      value: (i) => {
        const d = packs === undefined ? -1 : (packs[i] as number);
        return d < 0 ? bytes(i) : inflatePacked(bytes(i), (dicts as Uint8Array[])[d] as Uint8Array, lengths?.[i]);
      },
      rv: (i) => rvs[i] as number,
    };
    const codec = codecs[t.spec.media];
    if (!codec) throw new Error(`bug: no ${t.spec.media} encoding in the codec worker`);
    const columns = t.spec.table ? builtinColumns(t.spec.table.kind) : [];
    return owned(encodeChunk(codec, { view: viewOf(t.group, t.version, t.brand), columns }, t.spec, items));
  },
  (r) => (r.bytes.byteLength > 0 ? [r.bytes.buffer as ArrayBuffer] : []),
);
