/**
 * Inflating packed values (store/packed.ts) through the system's zlib with one z_stream per
 * thread, reset for each value, rather than through node:zlib, which builds a stream object and
 * initializes zlib (its state and a 32 KiB window) on every call.
 * On a page of 500 cold pods (~2.5 KB each, packed with a dictionary of the same resource),
 * 2026-11-28: inflating took 2.0-2.5 us per value against 5.8-6.5 us through
 * `zlib.inflateRawSync`; a CPU profile of such a page had spent half of its thread in node:zlib's
 * per-call setup (`init`, copies, allocations). Packing stays on node:zlib: the same scheme for
 * deflate (one stream, deflateReset and deflateSetDictionary per value) took 10.4-11.0 us per
 * value against 7.9-9.4 us (level 1 hashes the whole dictionary on each call, and this runtime's
 * own zlib is the faster build).
 *
 * zlib itself is the well-kept library here; `bun:ffi` calls it. When libz cannot be loaded (not
 * Linux, no libz.so.1) `nativeInflater()` is undefined and packed.ts inflates through node:zlib,
 * which gives the same bytes.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi';

/** z_stream on LP64 (zlib.h): the fields written or read here, and the struct's size. */
const Z_STREAM_SIZE = 112;
const NEXT_IN = 0;
const AVAIL_IN = 8;
const NEXT_OUT = 24;
const AVAIL_OUT = 32;
const Z_FINISH = 4;
const Z_STREAM_END = 1;
const TWO_32 = 2 ** 32;

/**
 * `bytes` (raw deflate with the preset dictionary `dict`) inflated to exactly `length` bytes, into
 * a new buffer or into `out` from `at`.
 */
export type Inflate = (bytes: Uint8Array, dict: Uint8Array, length: number, out?: Uint8Array, at?: number) => Uint8Array;

function open() {
  return dlopen('libz.so.1', {
    zlibVersion: { args: [], returns: FFIType.ptr },
    inflateInit2_: { args: [FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    inflateReset: { args: [FFIType.ptr], returns: FFIType.i32 },
    inflateSetDictionary: { args: [FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    inflate: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  }).symbols;
}

type Zlib = ReturnType<typeof open>;
/** null: not tried yet; undefined: not available on this thread. */
let lib: Zlib | undefined | null = null;
let inflater: Inflate | undefined | null = null;

function zlibOf(): Zlib | undefined {
  if (lib !== null) return lib;
  lib = undefined;
  const supported = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');
  if (process.env.SVC_NATIVE_ZLIB === '0' || !supported) return undefined;
  try {
    lib = open();
  } catch {
    lib = undefined;
  }
  return lib;
}

/** This thread's inflater of raw deflate with a preset dictionary, or undefined without libz. */
export function nativeInflater(): Inflate | undefined {
  if (inflater === null) {
    const z = zlibOf();
    inflater = z === undefined ? undefined : makeInflater(z);
  }
  return inflater;
}

/** A z_stream for the thread's life, in an ArrayBuffer of its own (malloc'd, never moved). */
function zStream() {
  const strm = new ArrayBuffer(Z_STREAM_SIZE);
  const view = new DataView(strm);
  const setPtr = (at: number, p: number) => {
    view.setUint32(at, p % TWO_32, true);
    view.setUint32(at + 4, Math.floor(p / TWO_32), true);
  };
  return { view, sp: ptr(new Uint8Array(strm)), setPtr };
}

function makeInflater(z: Zlib): Inflate | undefined {
  const { view, sp, setPtr } = zStream();
  const version = z.zlibVersion();
  if (version === null || z.inflateInit2_(sp, -15, version, Z_STREAM_SIZE) !== 0) return undefined;
  return (bytes, dict, length, into, at = 0) => {
    const out = into ?? new Uint8Array(length);
    if (at < 0 || at + length > out.length) throw new RangeError('packed value: no room for it');
    if (z.inflateReset(sp) !== 0 || z.inflateSetDictionary(sp, ptr(dict), dict.length) !== 0) throw new Error('invalid packed value');
    setPtr(NEXT_IN, ptr(bytes));
    view.setUint32(AVAIL_IN, bytes.length, true);
    setPtr(NEXT_OUT, ptr(out, at));
    view.setUint32(AVAIL_OUT, length, true);
    // The end of the stream exactly when the output is full: anything else is a corrupt value.
    if (z.inflate(sp, Z_FINISH) !== Z_STREAM_END || view.getUint32(AVAIL_OUT, true) !== 0) throw new Error('invalid packed value');
    return into === undefined ? out : out.subarray(at, at + length);
  };
}
