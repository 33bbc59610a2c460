import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { encodeEntry, Writer } from './codec';
import { MvccStore } from './mvcc';
import { create } from './ops';
import { PackedKeyValue, ValuePacker } from './packed';
import { loadSnapshot, SnapshotCorruptError, writeSnapshot } from './snapshot';
import type { KeyValue } from './types';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const kv = (key: string, rev: number): KeyValue => ({
  key,
  value: new TextEncoder().encode(`v${rev}`),
  createRevision: rev,
  modRevision: rev,
  version: 1,
});

test('a load keeps only the newest snapshot: an older one left by a kill between rename and cleanup goes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  const chunks = (items: KeyValue[]) => (after: string | undefined) => (after === undefined ? items : []);
  const first = await writeSnapshot(dir, 5, chunks([kv('/a', 5)]));
  const kept = fs.readFileSync(first.file);
  await writeSnapshot(dir, 9, chunks([kv('/a', 5), kv('/b', 9)]));
  expect(fs.existsSync(first.file)).toBe(false);
  // The process died after the rename of rev 9 and before rev 5 was removed; a half-written
  // next snapshot is there too.
  fs.writeFileSync(first.file, kept);
  fs.writeFileSync(path.join(dir, `${(12).toString(16).padStart(16, '0')}.snap.tmp`), 'partial');
  const keys: string[] = [];
  expect(loadSnapshot(dir, (e) => keys.push(e.key))).toBe(9);
  expect(keys).toEqual(['/a', '/b']);
  expect(fs.readdirSync(dir)).toEqual([`${(9).toString(16).padStart(16, '0')}.snap`]);
});

test('a paced snapshot keeps to its rate until the rate is lifted, and what it wrote loads whole', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  // 32 entries of 512 KiB: 16 MiB, written in chunks of at least 4 MiB.
  const big = new Uint8Array(512 << 10).fill(7);
  const items = Array.from({ length: 32 }, (_, i) => ({ ...kv(`/k${String(i).padStart(2, '0')}`, i + 1), value: big }));
  const chunks = (after: string | undefined) => {
    const from = after === undefined ? 0 : items.findIndex((x) => x.key === after) + 1;
    return items.slice(from, from + 4);
  };
  // At 32 MiB/s, 16 MiB take at least ~375 ms (the last chunk's wait comes after it is written).
  let t0 = performance.now();
  await writeSnapshot(dir, 40, chunks, 'none', () => 32 << 20);
  expect(performance.now() - t0).toBeGreaterThanOrEqual(350);
  // At 1 MiB/s they would take 16 s; lifted after 200 ms, the rest goes at once.
  let rate = 1 << 20;
  setTimeout(() => {
    rate = 0;
  }, 200);
  t0 = performance.now();
  await writeSnapshot(dir, 41, chunks, 'none', () => rate);
  const took = performance.now() - t0;
  expect(took).toBeGreaterThanOrEqual(190);
  expect(took).toBeLessThan(8000);
  const keys: string[] = [];
  expect(loadSnapshot(dir, (e) => keys.push(e.key))).toBe(41);
  expect(keys).toEqual(items.map((x) => x.key));
});

test('packed values are written as they are held and load packed, with their dictionaries; a v1 file loads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  const enc = new TextEncoder();
  const packer = new ValuePacker();
  const json = (i: number, kind: string) =>
    enc.encode(JSON.stringify({ kind, metadata: { name: `o-${i}` }, spec: { text: 'same text '.repeat(40), i } }));
  const items: KeyValue[] = [];
  for (let i = 0; i < 6; i++) {
    const kind = i % 2 ? 'Pod' : 'Event';
    const raw = json(i, kind);
    const p = i === 4 ? undefined : packer.pack(`/registry/${kind}/`, raw);
    const base = { key: `/registry/k${i}`, createRevision: i + 1, modRevision: i + 1, version: 1 };
    items.push(p ? new PackedKeyValue(base.key, p, 1 + i, 1 + i, 1) : { ...base, value: raw });
  }
  expect(items.filter((x) => x instanceof PackedKeyValue)).toHaveLength(5);
  const res = await writeSnapshot(dir, 10, (after) => (after === undefined ? items : []), 'none');
  // Packed: the file is smaller than the raw values.
  expect(res.bytes).toBeLessThan(items.reduce((a, x) => a + x.value.length, 0));
  const loaded: KeyValue[] = [];
  expect(loadSnapshot(dir, (e) => loaded.push(e))).toBe(10);
  expect(loaded.map((x) => x instanceof PackedKeyValue)).toEqual(items.map((x) => x instanceof PackedKeyValue));
  expect(loaded.map((x) => new TextDecoder().decode(x.value))).toEqual(items.map((x) => new TextDecoder().decode(x.value)));
  expect(loaded.map((x) => [x.key, x.createRevision, x.modRevision, x.version])).toEqual(
    items.map((x) => [x.key, x.createRevision, x.modRevision, x.version]),
  );

  // The format before packing: "SVCSNAP1" and plain entries.
  const w = new Writer(1024);
  w.buf.set(enc.encode('SVCSNAP1'));
  w.len = 8;
  w.f64(7);
  encodeEntry(w, kv('/old', 7));
  w.u32(0xffff_ffff);
  w.f64(1);
  const body = w.take().slice();
  const file = new Uint8Array(body.length + 4);
  file.set(body);
  new DataView(file.buffer).setUint32(body.length, crc32c(body), true);
  const old = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(old);
  fs.writeFileSync(path.join(old, `${(7).toString(16).padStart(16, '0')}.snap`), file);
  const got: KeyValue[] = [];
  expect(loadSnapshot(old, (e) => got.push(e))).toBe(7);
  expect(got.map((x) => [x.key, new TextDecoder().decode(x.value)])).toEqual([['/old', 'v7']]);
});

test('a snapshot of the crc32c format ("SVCSNAP2") loads; one whose crc is not its header\'s kind is corrupt', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  const packer = new ValuePacker();
  const enc = new TextEncoder();
  const items: KeyValue[] = [];
  for (let i = 0; i < 8; i++) {
    const raw = enc.encode(JSON.stringify({ kind: 'Pod', metadata: { name: `p${i}` }, spec: { text: 'same text '.repeat(40), i } }));
    const p = i % 3 === 0 ? undefined : packer.pack('/registry/pods/', raw);
    const key = `/registry/pods/p${i}`;
    items.push(
      p ? new PackedKeyValue(key, p, i + 1, i + 1, 1) : { key, value: raw, createRevision: i + 1, modRevision: i + 1, version: 1 },
    );
  }
  const { file } = await writeSnapshot(dir, 20, (after) => (after === undefined ? items : []), 'none');
  const written = fs.readFileSync(file);
  expect(new TextDecoder().decode(written.subarray(0, 8))).toBe('SVCSNAP3');
  const load = () => {
    const got: KeyValue[] = [];
    const rev = loadSnapshot(dir, (e) => got.push(e));
    return { rev, got: got.map((x) => [x.key, new TextDecoder().decode(x.value), x instanceof PackedKeyValue]) };
  };
  const want = load();
  expect(want.got).toHaveLength(8);
  // As the code before 2026-11-29 wrote it: the same records, "SVCSNAP2", crc32c.
  const legacy = (magic: string, crc: (b: Uint8Array) => number) => {
    const f = Uint8Array.from(written);
    f.set(enc.encode(magic));
    new DataView(f.buffer).setUint32(f.length - 4, crc(f.subarray(0, f.length - 4)), true);
    fs.writeFileSync(file, f);
  };
  legacy('SVCSNAP2', crc32c);
  expect(load()).toEqual(want);
  // The new header over the old crc, and the old header over the new crc: checksum mismatches.
  legacy('SVCSNAP3', crc32c);
  expect(load).toThrow(SnapshotCorruptError);
  legacy('SVCSNAP2', (b) => Bun.hash.crc32(b));
  expect(load).toThrow(SnapshotCorruptError);
});

test('a store restarts from a snapshot holding packed values: the same bytes, still packed', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  const packer = new ValuePacker();
  const store = await MvccStore.open({ dir, fsync: 'none' });
  const enc = new TextEncoder();
  const want = new Map<string, string>();
  for (let i = 0; i < 20; i++) {
    const key = `/registry/core/pods/ns/p${i}`;
    const text = JSON.stringify({ kind: 'Pod', metadata: { name: `p${i}` }, status: { phase: 'Running', note: 'alike '.repeat(50) } });
    const rev = await create(store, key, enc.encode(text));
    want.set(key, text);
    const held = store.latest(key)?.value as Uint8Array;
    const p = i % 3 === 0 ? undefined : packer.pack('/registry/core/pods/', held);
    if (p) store.adoptPacked(key, rev, held, p);
  }
  await store.snapshot();
  await store.close();
  const again = await MvccStore.open({ dir, fsync: 'none' });
  const r = await again.range('/registry/core/pods/', { end: '/registry/core/pods0' });
  expect(new Map(r.kvs.map((x) => [x.key, new TextDecoder().decode(x.value)]))).toEqual(want);
  expect(r.kvs.filter((x) => x instanceof PackedKeyValue).length).toBeGreaterThanOrEqual(13);
  await again.close();
});
