/**
 * Values kept compressed once they are cold: an object not written for a while (a running pod,
 * a node between heartbeats, an Event) is rarely read, and its stored bytes were about half of
 * the server's RSS at 150,000 simulated pods (~0.9 of 1.8-2.5 GiB after a full collection).
 *
 * A cold value is compressed with a preset dictionary: a value of the same resource, so the
 * compressor finds the resource's common text (field names, managedFields, conditions, images)
 * there. With zstd (native-zstd.ts: ×7 faster to pack and ×2-3 to read than deflate, and about
 * half the bytes, on pods) where libzstd loads, else raw deflate at level 1; either kind is read.
 * Deflate measured on the simulation's objects (bench/value-compression.ts, 2026-11-28): a Ready
 * pod 3,986 B → 315 B (×12.7) in 10.3 us, inflated in 4.0 us; its kubelet's Events 1,027 B →
 * 221 B (×4.7); without a dictionary ×2.2 and ×1.75, and zstd without one ×2.8 and ×2.1.
 * Compressed bytes go to slabs of their own (ValueSlabs), apart from the hot values'.
 *
 * A packed value is inflated on every read (no memo: that would keep the bytes it saves; the
 * watch cache holds an object clients keep reading raw again, watch/cold.ts); the dictionary of a
 * resource is the first value packed for it and is kept for as long as any value packed with it
 * is (each PackedValue holds its own).
 */
import * as zlib from 'node:zlib';
import { nativeInflater } from './native-zlib';
import { isZstd, zstdInflater, zstdPacker } from './native-zstd';
import { ValueSlabs } from './slabs';
import type { KeyValue, Revision } from './types';

/** Values smaller than this stay as they are (too little to save for an object per value). */
const MIN_BYTES = 256;
/** Packed values must be at most this fraction of the raw bytes, else the raw bytes are kept. */
const MAX_RATIO = 0.8;
/**
 * At most this many raw bytes of packed values held raw again by clients' reads, for the process:
 * a small collection read over and over (a flood of LISTs of 100 ConfigMaps is 60 KB) fits many
 * times over, and a full list of 150,000 pods read twice does not undo their packing.
 */
const MAX_WARM_BYTES = 64 * 1024 * 1024;
/** A dictionary is one value; at most this many bytes of it (deflate's window is 32 KiB). */
const MAX_DICT = 16 * 1024;

export class PackedValue {
  constructor(
    readonly bytes: Uint8Array,
    private readonly dict: Uint8Array,
    /** The raw length (for byte accounting without inflating). */
    readonly length: number,
  ) {}

  /** The raw bytes (a new buffer on each call). */
  inflate(): Uint8Array {
    return inflatePacked(this.bytes, this.dict, this.length);
  }

  /** The raw bytes written into `out` from `at` (room for `length` bytes); the part written. */
  inflateInto(out: Uint8Array, at: number): Uint8Array {
    return inflatePacked(this.bytes, this.dict, this.length, out, at);
  }

  /** The dictionary it was packed with (the codec pool's workers inflate with it). */
  get dictionary(): Uint8Array {
    return this.dict;
  }
}

/**
 * Packed bytes inflated with their dictionary (`length`: the raw length, when known), into a new
 * buffer, or into `out` from `at` (then `length` is needed; the part written is returned).
 */
export function inflatePacked(bytes: Uint8Array, dict: Uint8Array, length?: number, out?: Uint8Array, at = 0): Uint8Array {
  if (isZstd(bytes)) {
    const zstd = zstdInflater();
    if (zstd === undefined) throw new Error('a value packed with zstd, and libzstd cannot be loaded here');
    return zstd(bytes, dict, length, out, at);
  }
  // The system's zlib with this thread's stream, reset per value (native-zlib.ts), when loaded.
  const native = length !== undefined && length > 0 ? nativeInflater() : undefined;
  if (native !== undefined) return native(bytes, dict, length as number, out, at);
  // Output chunks of the raw length (and a little, so that the end is found without a second
  // chunk): the default 16 KiB chunk per call was garbage ~4x the value.
  const raw = zlib.inflateRawSync(bytes, { dictionary: dict, ...(length !== undefined ? { chunkSize: length + 64 } : {}) });
  if (out === undefined) return raw;
  if (raw.length !== length || at + raw.length > out.length) throw new Error('invalid packed value');
  out.set(raw, at);
  return out.subarray(at, at + raw.length);
}

/** A key's newest version whose value is packed: `value` inflates it on each read. */
export class PackedKeyValue implements KeyValue {
  constructor(
    readonly key: string,
    readonly packed: PackedValue,
    readonly createRevision: Revision,
    readonly modRevision: Revision,
    readonly version: number,
  ) {}

  get value(): Uint8Array {
    return this.packed.inflate();
  }
}

/** Raw bytes, or packed ones, as a holder of a value keeps them. */
export type HeldValue = Uint8Array | PackedValue;

export function rawOf(v: HeldValue): Uint8Array {
  return v instanceof PackedValue ? v.inflate() : v;
}

export class ValuePacker {
  private readonly dicts = new Map<string, Uint8Array>();
  private readonly slabs = new ValueSlabs();
  /**
   * Values packed, their raw and packed bytes, and packed values clients' reads made hot again
   * (watch/cold.ts; the server's debug heap line reports them).
   */
  readonly stats = { values: 0, rawBytes: 0, packedBytes: 0, reheated: 0 };
  /** Raw bytes held again because clients keep reading them (watch/cold.ts), and their limit. */
  readonly warm = { bytes: 0, limit: MAX_WARM_BYTES };

  /**
   * `raw` (a value of the resource `prefix`) packed, or undefined when it is too small or does not
   * compress enough to pay for itself.
   */
  pack(prefix: string, raw: Uint8Array): PackedValue | undefined {
    if (raw.length < MIN_BYTES) return undefined;
    let dict = this.dicts.get(prefix);
    if (dict === undefined) {
      // A copy: the dictionary outlives the slab the value came from.
      dict = raw.slice(0, Math.min(raw.length, MAX_DICT));
      this.dicts.set(prefix, dict);
    }
    const zstd = zstdPacker();
    const out = zstd ? zstd.pack(raw, dict) : zlib.deflateRawSync(raw, { level: 1, dictionary: dict, chunkSize: Math.max(64, raw.length) });
    if (out.length > raw.length * MAX_RATIO) return undefined;
    this.stats.values++;
    this.stats.rawBytes += raw.length;
    this.stats.packedBytes += out.length;
    return new PackedValue(this.slabs.pack(out), dict, raw.length);
  }
}

/** The process's packer (one set of dictionaries for the store and the watch caches). */
export const valuePacker = new ValuePacker();
