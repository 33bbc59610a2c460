import { expect, test } from 'bun:test';
import { ValueSlabs } from './slabs';

test('values are copied into shared slabs; large and empty values keep their own buffers', () => {
  const slabs = new ValueSlabs();
  const a = new Uint8Array([1, 2, 3]);
  const b = new TextEncoder().encode('x'.repeat(1000));
  const pa = slabs.pack(a);
  const pb = slabs.pack(b);
  expect([...pa]).toEqual([1, 2, 3]);
  expect(Buffer.from(pb).toString()).toBe('x'.repeat(1000));
  // Copies, in one buffer: the caller's buffers can be reused or collected.
  expect(pa.buffer).not.toBe(a.buffer);
  expect(pb.buffer).toBe(pa.buffer);
  a[0] = 9;
  expect(pa[0]).toBe(1);
  const big = new Uint8Array(9 * 1024);
  expect(slabs.pack(big)).toBe(big);
  const empty = new Uint8Array(0);
  expect(slabs.pack(empty)).toBe(empty);
  // A slab that cannot take the next value is left for a new one; earlier views stay intact.
  const views = Array.from({ length: 200 }, (_, i) => slabs.pack(new Uint8Array(1000).fill(i)));
  expect(new Set(views.map((v) => v.buffer)).size).toBeGreaterThan(1);
  views.forEach((v, i) => {
    expect(v.length).toBe(1000);
    expect(v.every((x) => x === i)).toBe(true);
  });
});

test('text is encoded straight into a slab, and a value already in a slab is kept as it is', () => {
  const slabs = new ValueSlabs();
  const v = slabs.encode('{"a":"é"}');
  expect(Buffer.from(v).toString()).toBe('{"a":"é"}');
  expect(v.length).toBe(10);
  expect(slabs.pack(v)).toBe(v);
  const w = slabs.encode('{"b":1}');
  expect(w.buffer).toBe(v.buffer);
  // Large texts keep their own buffer.
  const big = slabs.encode(`"${'x'.repeat(10_000)}"`);
  expect(big.length).toBe(10_002);
  expect(big.buffer).not.toBe(v.buffer);
});

test("the store keeps the registry's encoded bytes as they are, so the watch cache finds their write hint", async () => {
  const { MvccStore } = await import('./mvcc');
  const { encodeStored, writtenHint } = await import('../codec/stored');
  const { create, get } = await import('./ops');
  const kv = await MvccStore.open({});
  const bytes = encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { v: '1' } });
  await create(kv, '/registry/configmaps/ns/a', bytes);
  const got = await get(kv, '/registry/configmaps/ns/a');
  expect(got?.value).toBe(bytes);
  expect(writtenHint(got?.value as Uint8Array)).toBeDefined();
  await kv.close();
});
