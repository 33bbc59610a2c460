import { describe, expect, test } from 'bun:test';
import * as zlib from 'node:zlib';
import { inSlab, podLikeValues } from '../../test/helpers/pod-values';
import { isZstd, zstdInflater, zstdPacker } from './native-zstd';
import { inflatePacked, ValuePacker } from './packed';

const values = podLikeValues;

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('native zstd (the system libzstd through bun:ffi)', () => {
  const linux = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');

  test('is loaded on Linux, and the packer packs with it', () => {
    if (!linux) return;
    expect(zstdPacker()).toBeDefined();
    expect(zstdInflater()).toBeDefined();
    const packer = new ValuePacker();
    const [a, b] = values(2, 5) as [Uint8Array, Uint8Array];
    const pa = packer.pack('/registry/core/pods/', a);
    const pb = packer.pack('/registry/core/pods/', b);
    expect(pa !== undefined && isZstd(pa.bytes)).toBe(true);
    expect(pb !== undefined && isZstd(pb.bytes)).toBe(true);
    expect(same(pb?.inflate() ?? new Uint8Array(), b)).toBe(true);
  });

  test('values packed with a dictionary come back, read from inside larger buffers, with and without a length', () => {
    const pack = zstdPacker();
    const inflate = zstdInflater();
    if (pack === undefined || inflate === undefined) return;
    const vs = values(300, 7);
    const dict = (vs[0] as Uint8Array).slice(0, 16 * 1024);
    const packed = vs.map((v) => pack.pack(v, dict));
    // Packed bytes live inside slabs: subarrays at odd offsets of one buffer.
    const views = inSlab(packed);
    for (let i = 0; i < vs.length; i++) {
      const v = vs[i] as Uint8Array;
      const p = views[i] as Uint8Array;
      expect(isZstd(p)).toBe(true);
      expect(same(inflate(p, dict, v.length), v)).toBe(true);
      expect(same(inflatePacked(p, dict), v)).toBe(true);
      // A copy of the dictionary (as a codec worker gets it) reads the same.
      expect(same(inflatePacked(p, dict.slice(), v.length), v)).toBe(true);
    }
    // Packed against the dictionary, alike values are a fraction of their size.
    const raw = vs.reduce((a, v) => a + v.length, 0);
    expect(packed.reduce((a, p) => a + p.length, 0)).toBeLessThan(raw / 2);
  });

  test('a corrupt or truncated value or a wrong length throws, and the next value still reads', () => {
    const pack = zstdPacker();
    const inflate = zstdInflater();
    if (pack === undefined || inflate === undefined) return;
    const [a, b, c] = values(3, 11) as [Uint8Array, Uint8Array, Uint8Array];
    const dict = a.slice(0, 4096);
    const p = pack.pack(b, dict);
    const bad = p.slice();
    const mid = Math.floor(bad.length / 2);
    bad[mid] = (bad[mid] as number) ^ 0xff;
    bad[mid + 1] = (bad[mid + 1] as number) ^ 0x55;
    expect(() => inflate(bad, dict, b.length)).toThrow('invalid packed value');
    expect(() => inflate(p, dict, b.length - 1)).toThrow('invalid packed value');
    expect(() => inflate(p, dict, b.length + 1)).toThrow('invalid packed value');
    expect(() => inflate(p.subarray(0, p.length - 2), dict, b.length)).toThrow('invalid packed value');
    // (A frame does not name a dictionary of raw content: the value's own PackedValue holds it.)
    expect(same(inflate(pack.pack(c, dict), dict, c.length), c)).toBe(true);
    expect(same(inflate(p, dict, b.length), b)).toBe(true);
  });

  test('more dictionaries than it keeps digested, each read again after the others: every value comes back', () => {
    const pack = zstdPacker();
    if (pack === undefined) return;
    const vs = values(200, 13);
    // 150 resources, each its own dictionary (more than the 64 kept), read in two passes.
    const dicts = vs.slice(0, 150).map((v) => v.slice());
    const packed = vs.slice(50).map((v, i) => pack.pack(v, dicts[i] as Uint8Array));
    for (let pass = 0; pass < 2; pass++)
      for (const [i, p] of packed.entries()) {
        const v = vs[50 + i] as Uint8Array;
        expect(same(inflatePacked(p, (dicts[i] as Uint8Array).slice(), v.length), v)).toBe(true);
      }
  });

  test('raw deflate never looks like a zstd frame', () => {
    for (const v of values(200, 17)) {
      expect(isZstd(new Uint8Array(zlib.deflateRawSync(v, { level: 1 })))).toBe(false);
      expect(isZstd(new Uint8Array(zlib.deflateRawSync(v, { level: 0 })))).toBe(false);
    }
    expect(isZstd(new Uint8Array(zlib.deflateRawSync(crypto.getRandomValues(new Uint8Array(4096)), { level: 1 })))).toBe(false);
  });
});
