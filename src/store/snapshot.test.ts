import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSnapshot, writeSnapshot } from './snapshot';
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
