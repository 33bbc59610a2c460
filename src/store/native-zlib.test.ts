import { describe, expect, test } from 'bun:test';
import * as zlib from 'node:zlib';
import { inSlab, podLikeValues } from '../../test/helpers/pod-values';
import { nativeInflater } from './native-zlib';
import { inflatePacked } from './packed';

const values = podLikeValues;

describe('native zlib (the system zlib through bun:ffi)', () => {
  test('is loaded on Linux', () => {
    if (process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')) {
      expect(nativeInflater()).toBeDefined();
    }
  });

  test('gives the bytes node:zlib gives, for values packed with a dictionary, read from inside larger buffers', () => {
    const inflate = nativeInflater();
    if (inflate === undefined) return;
    const vs = values(300, 7);
    const dict = (vs[0] as Uint8Array).slice(0, 16 * 1024);
    // Packed bytes live inside slabs: subarrays at odd offsets of one buffer.
    const packed = vs.map((v) => zlib.deflateRawSync(v, { level: 1, dictionary: dict }));
    const views = inSlab(packed);
    for (let i = 0; i < vs.length; i++) {
      const out = inflate(views[i] as Uint8Array, dict, (vs[i] as Uint8Array).length);
      expect(Buffer.from(out).equals(Buffer.from(vs[i] as Uint8Array))).toBe(true);
      expect(Buffer.from(out).equals(zlib.inflateRawSync(views[i] as Uint8Array, { dictionary: dict }))).toBe(true);
    }
  });

  test('a corrupt or truncated value or a wrong length throws and the next value still inflates', () => {
    const inflate = nativeInflater();
    if (inflate === undefined) return;
    const [a, b] = values(2, 11) as [Uint8Array, Uint8Array];
    const dict = a.slice(0, 4096);
    const p = new Uint8Array(zlib.deflateRawSync(b, { level: 1, dictionary: dict }));
    const bad = p.slice();
    const mid = Math.floor(bad.length / 2);
    bad[mid] = (bad[mid] as number) ^ 0xff;
    bad[1] = (bad[1] as number) ^ 0x55;
    expect(() => inflate(bad, dict, b.length)).toThrow('invalid packed value');
    expect(() => inflate(p, dict, b.length - 1)).toThrow('invalid packed value');
    expect(() => inflate(p, dict, b.length + 1)).toThrow('invalid packed value');
    expect(() => inflate(p.subarray(0, p.length - 2), dict, b.length)).toThrow('invalid packed value');
    expect(Buffer.from(inflate(p, dict, b.length)).equals(Buffer.from(b))).toBe(true);
  });

  test('inflatePacked reads deflate-packed values (as packed before zstd, or without libzstd) with and without a length', () => {
    const vs = values(50, 3);
    const dict = (vs[0] as Uint8Array).slice(0, 16 * 1024);
    for (const v of vs) {
      const p = new Uint8Array(zlib.deflateRawSync(v, { level: 1, dictionary: dict }));
      expect(Buffer.from(inflatePacked(p, dict, v.length)).equals(Buffer.from(v))).toBe(true);
      expect(Buffer.from(inflatePacked(p, dict)).equals(Buffer.from(v))).toBe(true);
    }
  });
});
