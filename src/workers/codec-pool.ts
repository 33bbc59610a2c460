/**
 * Encoding off the request thread (issue 15 item 4): a WorkerPool (src/workers/pool.ts) of
 * codec-worker.ts workers that encode the chunks of long lists (JSON, protobuf, CBOR) and
 * compress their gzip segments, so a 100k-item list does not hold the event loop while small
 * requests wait.
 *
 * A chunk goes to the worker as one buffer of the items' stored bytes (copied once, then moved,
 * not cloned) with their ends, keys and resourceVersions; the encoding comes back moved too.
 * Kinds whose schemas arrive at run time (custom resources) are encoded inline: the workers know
 * the built-in schemas only.
 */

import type { Brand } from '../api/brand';
import type { ChunkEncoder } from '../codec/list-chunks';
import type { ChunkItems, ChunkResult, ChunkSpec } from '../codec/media';
import definitions from '../schema/generated/definitions.json';
import { PackedValue } from '../store/packed';
import type { CodecTask } from './codec-protocol';
import { WorkerPool } from './pool';

export interface CodecPoolOptions {
  size: number;
  /** A chunk still encoding after this long fails its list (a worker is never stuck for good). */
  deadlineMs?: number;
}

const builtin = definitions as unknown as Record<string, unknown>;

export class CodecPool {
  readonly pool: WorkerPool<CodecTask, ChunkResult>;

  constructor(opts: CodecPoolOptions) {
    this.pool = new WorkerPool({
      script: new URL('./codec-worker.ts', import.meta.url),
      size: opts.size,
      deadlineMs: opts.deadlineMs ?? 30_000,
    });
  }

  ready(): Promise<void> {
    return this.pool.ready();
  }

  /** Whether the workers can encode items of definition `itemDef` (built-in kinds). */
  supports(itemDef: string, storageVersion: string | undefined): boolean {
    return storageVersion === undefined && Object.hasOwn(builtin, itemDef);
  }

  /** An encoder of chunks of kind `group/version` for a request in `brand`. */
  encoder(group: string, version: string, brand: Brand): ChunkEncoder {
    return {
      chunk: (spec, items) => this.chunk(group, version, brand, spec, items),
      deflate: (data, last) => {
        const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
        return this.pool.run({ op: 'deflate', data: own, last }, undefined, [own.buffer as ArrayBuffer]);
      },
    };
  }

  private chunk(group: string, version: string, brand: Brand, spec: ChunkSpec, items: ChunkItems): Promise<ChunkResult> {
    const n = items.count;
    const ends = new Uint32Array(n);
    const rvs = new Float64Array(n);
    const keys: string[] = new Array(n);
    let total = 0;
    // Each value read once; a cold object's packed bytes are sent as they are (the worker
    // inflates them), with its dictionary.
    const values: Uint8Array[] = new Array(n);
    let packs: Int32Array | undefined;
    let lengths: Uint32Array | undefined;
    const dicts: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      const h = items.held ? items.held(i) : items.value(i);
      let v: Uint8Array;
      if (h instanceof PackedValue) {
        packs ??= new Int32Array(n).fill(-1);
        lengths ??= new Uint32Array(n);
        lengths[i] = h.length;
        let d = dicts.indexOf(h.dictionary);
        if (d < 0) d = dicts.push(h.dictionary) - 1;
        packs[i] = d;
        v = h.bytes;
      } else v = h;
      values[i] = v;
      total += v.length;
      ends[i] = total;
    }
    const data = new Uint8Array(total);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i] as Uint8Array;
      data.set(v, at);
      at += v.length;
      rvs[i] = items.rv(i);
      keys[i] = items.key(i);
    }
    const task: CodecTask = { op: 'chunk', spec, group, version, brand, keys, rvs, data, ends };
    if (packs) {
      task.packs = packs;
      task.dicts = dicts;
      task.lengths = lengths;
    }
    return this.pool.run(task, undefined, [data.buffer, ends.buffer, rvs.buffer]);
  }

  close(): void {
    this.pool.close();
  }
}
