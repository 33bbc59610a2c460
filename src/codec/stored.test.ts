import { describe, expect, test } from 'bun:test';
import * as zlib from 'node:zlib';
import { type HeldValue, PackedValue, ValuePacker } from '../store/packed';
import { CorruptObjectError, storedListJson, storedTextAt } from './stored';

const enc = new TextEncoder();
const dec = new TextDecoder();
const items = (values: string[], rvs: number[]) => ({
  count: values.length,
  key: (i: number) => `/k/${i}`,
  value: (i: number) => enc.encode(values[i] as string),
  rv: (i: number) => rvs[i] as number,
});

describe('storedListJson', () => {
  test('the same JSON as the texts joined, resourceVersion spliced into each item', () => {
    const values = [
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"x":"é \\"q\\""}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"metadata":"{"}}}',
    ];
    const rvs = [7, 12, 123456789];
    const head = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"99"},"items":[';
    const got = dec.decode(storedListJson(head, items(values, rvs), ']}'));
    const want = `${head}${values.map((v, i) => storedTextAt(`/k/${i}`, enc.encode(v), rvs[i] as number)).join(',')}]}`;
    expect(got).toBe(want);
    expect(JSON.parse(got).items.map((o: { metadata: { resourceVersion: string } }) => o.metadata.resourceVersion)).toEqual([
      '7',
      '12',
      '123456789',
    ]);
  });

  test('cold items (held packed, zstd or deflate) are inflated into the answer: the same bytes as raw', () => {
    const values = Array.from({ length: 40 }, (_, i) =>
      i % 5 === 1
        ? `{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"pad":"${'p'.repeat(300 + i)}"}}`
        : `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-${i}","labels":{"i":"${i}"}},"data":{"v":"${'x'.repeat(200 + i * 7)}"}}`,
    );
    const rvs = values.map((_, i) => 10 ** (i % 9) + i);
    const packer = new ValuePacker();
    const dict = enc.encode(values[0] as string);
    const packed = values.map((v, i) => {
      const raw = enc.encode(v);
      // Every third one deflate (as packed before zstd, or without libzstd), the rest as the packer packs.
      if (i % 3 === 0) return new PackedValue(new Uint8Array(zlib.deflateRawSync(raw, { level: 1, dictionary: dict })), dict, raw.length);
      return packer.pack('/configmaps/', raw) ?? raw;
    });
    expect(packed.filter((p) => p instanceof PackedValue).length).toBeGreaterThan(30);
    const head = '{"items":[';
    const want = dec.decode(storedListJson(head, items(values, rvs), ']}'));
    // Mixed: odd items raw, even ones packed; then all packed.
    for (const pick of [(i: number) => (i % 2 === 0 ? packed[i] : enc.encode(values[i] as string)), (i: number) => packed[i]]) {
      const held = { ...items(values, rvs), value: () => new Uint8Array(0), held: (i: number) => pick(i) as HeldValue };
      expect(dec.decode(storedListJson(head, held, ']}'))).toBe(want);
    }
    // A packed value that is not a stored object is refused as a raw one is.
    const notObject = packer.pack('/configmaps/', enc.encode(`["${'q'.repeat(400)}"]`));
    expect(notObject).toBeInstanceOf(PackedValue);
    const bad = { ...items(['{}'], [1]), held: () => notObject as HeldValue };
    expect(() => storedListJson('[', bad, ']')).toThrow(CorruptObjectError);
  });

  test('an empty list, and bytes that are not a stored object', () => {
    expect(dec.decode(storedListJson('{"items":[', items([], []), ']}'))).toBe('{"items":[]}');
    expect(() => storedListJson('[', items(['{"kind":"X"}'], [1]), ']')).toThrow(CorruptObjectError);
    expect(() => storedListJson('[', items(['"metadata":{}'], [1]), ']')).toThrow(CorruptObjectError);
  });
});
