/**
 * The messages between the codec pool (./codec-pool.ts) and its workers (./codec-worker.ts): a
 * chunk of a long list to encode (the items' stored bytes in one moved buffer, with their ends,
 * keys and resourceVersions, and what the brand view is made from), or a gzip segment to
 * compress. The answer is a ChunkResult, its bytes moved back.
 */
import type { Brand } from '../api/brand';
import type { ChunkSpec } from '../codec/media';

export type CodecTask =
  | {
      op: 'chunk';
      spec: ChunkSpec;
      /** The brand view's inputs: the kind's group and version and the request's brand. */
      group: string;
      version: string;
      brand: Brand;
      keys: string[];
      rvs: Float64Array;
      data: Uint8Array;
      ends: Uint32Array;
      /**
       * Items held packed (cold, store/packed.ts): per item the index of its dictionary in
       * `dicts`, or -1 when its bytes in `data` are raw. Absent: every item is raw.
       */
      packs?: Int32Array;
      dicts?: Uint8Array[];
      /** With `packs`: each packed item's raw length (0 for a raw one). */
      lengths?: Uint32Array;
    }
  | { op: 'deflate'; data: Uint8Array; last: boolean };
