/**
 * Packing values (store/packed.ts) with the system's zstd and the resource's dictionary, through
 * `bun:ffi`. Measured on 100,000 pods of bench/api.ts's shape (~2.5 KB each, the first of them
 * the dictionary; 2026-11-28, the Intel VM): zlib's deflate at level 1 with a preset dictionary
 * packed a pod in 28.6-33.8 us to 8.4% of its size and inflated it in 5.1-8.5 us; zstd at level 1
 * with the same bytes as a dictionary (a digested CDict / DDict per dictionary) in 3.9 us to 4.8%
 * and 1.3-2.7 us. A cold list of 100,000 pods inflates every one of them; a server packs every
 * object 30 s after its last write.
 *
 * A zstd frame starts with the magic number 28 B5 2F FD, which no raw deflate stream can (a
 * stored block's length and its complement would not match), so a packed value says which it is:
 * values packed before zstd was used, or where libzstd cannot be loaded, are deflate and still
 * read (packed.ts). libzstd.so.1 is on every Debian and Ubuntu system (dpkg and apt link it);
 * without it values are packed with deflate, and a zstd-packed value (from a snapshot written
 * where it was) cannot be read: that throws, as a corrupt value does.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi';

/** The first bytes of a zstd frame. */
const MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;
/** zstd's level: level 1 packs fastest at about the ratio of the levels above it (3: 4.7%, 6.0 us). */
const LEVEL = 1;
/** Digested dictionaries kept per thread for reading (a worker gets a copy of each with every task). */
const MAX_DDICTS = 64;

/** Whether `bytes` is a zstd frame rather than raw deflate. */
export function isZstd(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === MAGIC[0] && bytes[1] === MAGIC[1] && bytes[2] === MAGIC[2] && bytes[3] === MAGIC[3];
}

function open() {
  return dlopen('libzstd.so.1', {
    ZSTD_createCCtx: { args: [], returns: FFIType.ptr },
    ZSTD_createDCtx: { args: [], returns: FFIType.ptr },
    ZSTD_createCDict: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.ptr },
    ZSTD_createDDict: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.ptr },
    ZSTD_freeDDict: { args: [FFIType.ptr], returns: FFIType.u64_fast },
    ZSTD_getFrameContentSize: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.u64_fast },
    ZSTD_compressBound: { args: [FFIType.u64], returns: FFIType.u64_fast },
    ZSTD_compress_usingCDict: {
      args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr, FFIType.u64, FFIType.ptr],
      returns: FFIType.u64_fast,
    },
    ZSTD_decompress_usingDDict: {
      args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr, FFIType.u64, FFIType.ptr],
      returns: FFIType.u64_fast,
    },
  }).symbols;
}

type Zstd = ReturnType<typeof open>;
/** null: not tried yet; undefined: not available on this thread. */
let lib: Zstd | undefined | null = null;

function zstdOf(): Zstd | undefined {
  if (lib !== null) return lib;
  lib = undefined;
  const supported = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');
  if (process.env.SVC_NATIVE_ZSTD === '0' || !supported) return undefined;
  try {
    lib = open();
  } catch {
    lib = undefined;
  }
  return lib;
}

/** A size_t result that is a length (zstd's errors are sizes near 2^64, given as bigints). */
const sizeOf = (r: number | bigint): number => (typeof r === 'number' && r < 2 ** 52 ? r : -1);

type Pointer = NonNullable<ReturnType<Zstd['ZSTD_createCCtx']>>;

/** This thread's zstd packer, or undefined without libzstd. */
export interface ZstdPacker {
  /** `raw` compressed with the dictionary `dict` (a zstd frame). */
  pack(raw: Uint8Array, dict: Uint8Array): Uint8Array;
}

let packer: ZstdPacker | undefined | null = null;

export function zstdPacker(): ZstdPacker | undefined {
  if (packer !== null) return packer;
  const z = zstdOf();
  packer = z === undefined ? undefined : makePacker(z);
  return packer;
}

function makePacker(z: Zstd): ZstdPacker | undefined {
  const cctx = z.ZSTD_createCCtx();
  if (cctx === null) return undefined;
  // A dictionary is a resource's, kept by the packer for as long as the process: digested once.
  const cdicts = new Map<Uint8Array, Pointer>();
  let out = new Uint8Array(64 * 1024);
  return {
    pack(raw, dict) {
      let cd = cdicts.get(dict);
      if (cd === undefined) {
        const made = z.ZSTD_createCDict(ptr(dict), dict.length, LEVEL);
        if (made === null) throw new Error('zstd: cannot digest a dictionary');
        cd = made;
        cdicts.set(dict, cd);
      }
      const bound = sizeOf(z.ZSTD_compressBound(raw.length));
      if (bound > out.length) out = new Uint8Array(bound);
      const n = sizeOf(z.ZSTD_compress_usingCDict(cctx, ptr(out), out.length, ptr(raw), raw.length, cd));
      if (n < 0) throw new Error('zstd: compression failed');
      return out.slice(0, n);
    },
  };
}

/**
 * `bytes` (a zstd frame packed with `dict`) decompressed to exactly `length` bytes (when not
 * given, the length the frame's header gives): into a new buffer, or into `out` from `at` (a
 * list's chunk: no buffer per value to copy and collect).
 */
export type ZstdInflate = (bytes: Uint8Array, dict: Uint8Array, length?: number, out?: Uint8Array, at?: number) => Uint8Array;

let inflater: ZstdInflate | undefined | null = null;

/** This thread's zstd reader, or undefined without libzstd. */
export function zstdInflater(): ZstdInflate | undefined {
  if (inflater !== null) return inflater;
  const z = zstdOf();
  inflater = z === undefined ? undefined : makeInflater(z);
  return inflater;
}

interface DDict {
  bytes: Uint8Array;
  ddict: Pointer;
  freed: boolean;
}

function makeInflater(z: Zstd): ZstdInflate | undefined {
  const dctx = z.ZSTD_createDCtx();
  if (dctx === null) return undefined;
  // Digested dictionaries by content (a codec worker gets each as a new copy with every task),
  // and the last one by identity (a list reads run after run of values of one resource).
  const byContent = new Map<string, DDict[]>();
  let count = 0;
  let lastDict: Uint8Array | undefined;
  let last: DDict | undefined;
  const digest = (dict: Uint8Array): DDict => {
    if (dict === lastDict && last !== undefined && !last.freed) return last;
    const id = `${dict.length}:${Bun.hash(dict)}`;
    const same = byContent.get(id);
    let d = same?.find((e) => Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.length).equals(dict));
    if (d === undefined) {
      if (count >= MAX_DDICTS) {
        // The oldest digested dictionary goes (a worker's dictionaries of long gone tasks).
        const [oldId, olds] = byContent.entries().next().value as [string, DDict[]];
        for (const o of olds) {
          o.freed = true;
          z.ZSTD_freeDDict(o.ddict);
        }
        count -= olds.length;
        byContent.delete(oldId);
      }
      const made = z.ZSTD_createDDict(ptr(dict), dict.length);
      if (made === null) throw new Error('invalid packed value');
      d = { bytes: dict, ddict: made, freed: false };
      byContent.set(id, [...(byContent.get(id) ?? []), d]);
      count++;
    }
    lastDict = dict;
    last = d;
    return d;
  };
  return (bytes, dict, given, into, at = 0) => {
    const length = given ?? sizeOf(z.ZSTD_getFrameContentSize(ptr(bytes), bytes.length));
    if (length <= 0) throw new Error('invalid packed value');
    const out = into ?? new Uint8Array(length);
    if (at < 0 || at + length > out.length) throw new RangeError('packed value: no room for it');
    const d = digest(dict);
    // Exactly the output's length: anything else is a corrupt value.
    const n = sizeOf(z.ZSTD_decompress_usingDDict(dctx, ptr(out, at), length, ptr(bytes), bytes.length, d.ddict));
    if (n !== length) throw new Error('invalid packed value');
    return into === undefined ? out : out.subarray(at, at + length);
  };
}
