import { afterEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from './mvcc';
import { SpilledValue } from './spill';
import { type ChangeEvent, prefixEnd, StoreError } from './types';

const enc = new TextEncoder();
const dec = new TextDecoder();
const val = (key: string, n: number) => enc.encode(`${key}#${n}:${'x'.repeat(300)}`);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'spill-'));
  dirs.push(d);
  return d;
};
const spillFiles = (dir: string) => fs.readdirSync(path.join(dir, 'history')).filter((f) => f.endsWith('.val'));

describe('history spill', () => {
  test('over the byte bound, the oldest values are spilled down to a sixteenth under it, not all at once', async () => {
    const dir = tmp();
    // 16 KiB bound: generations of at most 1 KiB, spilled down to 15 KiB when over.
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 60_000, maxPendingBytes: 16 << 10 } });
    const value = new Uint8Array(512).fill(120);
    for (let n = 0; n < 110; n++) await kv.txn({ success: [{ op: 'put', key: `/k/${n % 2}`, value }] });
    // 108 superseded values of 512 bytes. Each time the pending ones pass 16 KiB (33 values) the
    // oldest go until at most 15 KiB (30) are left: 28-32 stay on the heap, 76-80 are spilled.
    // (Spilling everything each time left 9 and spilled 99.)
    const spilled = kv.stats().spilledVersions;
    expect(spilled).toBeGreaterThanOrEqual(76);
    expect(spilled).toBeLessThanOrEqual(80);
    const revs = await Promise.all([2, 50, 108].map((r) => kv.range('/k/0', { revision: r })));
    for (const r of revs) expect(r.kvs[0]?.value).toEqual(value);
    await kv.close();
  });

  test('superseded values leave the heap; reads at old revisions and watch catch-up read them back', async () => {
    const dir = tmp();
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 0, maxPendingBytes: 0, fileBytes: 8 << 10 } });
    const revs: number[] = [];
    for (let n = 0; n < 40; n++)
      revs.push((await kv.txn({ success: [{ op: 'put', key: `/k/${n % 4}`, value: val(`/k/${n % 4}`, n) }] })).revision);
    await kv.txn({ success: [{ op: 'delete', key: '/k/0' }] });
    const st = kv.stats();
    // 40 puts over 4 keys supersede 36 versions, and the delete one more.
    expect(st.spilledVersions).toBe(37);
    expect(st.spillFiles).toBeGreaterThan(1);
    expect(spillFiles(dir).length).toBe(st.spillFiles);
    // Every old revision reads exactly what was written then, from the spill files.
    for (let n = 0; n < 40; n++) {
      const key = `/k/${n % 4}`;
      const got = await kv.range(key, { revision: revs[n] });
      // Only the newest version of each live key stays on the heap.
      if (n < 36 || n % 4 === 0) expect(got.kvs[0]).toBeInstanceOf(SpilledValue);
      else expect(got.kvs[0]).not.toBeInstanceOf(SpilledValue);
      expect(dec.decode(got.kvs[0]?.value)).toBe(dec.decode(val(key, n)));
      expect(got.kvs[0]?.version).toBe(Math.floor(n / 4) + 1);
    }
    // A watch from the start replays every event with the right previous values.
    const s = kv.watch(1, { key: '/k/', end: prefixEnd('/k/') });
    const events: ChangeEvent[] = [];
    while (events.length < 41) events.push(...(await s.next()));
    s.close();
    for (let n = 0; n < 40; n++) {
      const e = events[n] as ChangeEvent;
      expect([e.type, dec.decode(e.kv.value)]).toEqual(['put', dec.decode(val(`/k/${n % 4}`, n))]);
      expect(e.prev === undefined ? undefined : dec.decode(e.prev.value)).toBe(n < 4 ? undefined : dec.decode(val(`/k/${n % 4}`, n - 4)));
    }
    expect([events[40]?.type, dec.decode(events[40]?.prev?.value)]).toEqual(['delete', dec.decode(val('/k/0', 36))]);
    await kv.close();
    // Closing removes the spill files: they are a cache of what the WAL holds.
    expect(fs.existsSync(path.join(dir, 'history'))).toBe(false);
  });

  test('compaction deletes the files that held only compacted versions', async () => {
    const dir = tmp();
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 0, maxPendingBytes: 0, fileBytes: 4 << 10 } });
    let rev = 0;
    for (let n = 0; n < 60; n++) rev = (await kv.txn({ success: [{ op: 'put', key: '/hot', value: val('/hot', n) }] })).revision;
    const before = spillFiles(dir).length;
    expect(before).toBeGreaterThan(3);
    const mid = rev - 20;
    const old = (await kv.range('/hot', { revision: mid - 5 })).kvs[0];
    await kv.compact(mid);
    const after = spillFiles(dir).length;
    expect(after).toBeLessThan(before);
    expect(after).toBeGreaterThan(0);
    // What is still retained still reads back.
    for (let r = mid; r < rev; r++)
      expect(dec.decode((await kv.range('/hot', { revision: r })).kvs[0]?.value)).toBe(dec.decode(val('/hot', r - 1)));
    // A version read before the compaction stays readable for a while (its file is unlinked, not closed).
    expect(dec.decode(old?.value)).toBe(dec.decode(val('/hot', mid - 6)));
    await kv.compact(rev);
    expect(spillFiles(dir).length).toBe(0);
    expect(kv.stats().spillFiles).toBe(0);
    await kv.close();
  });

  test('values wait afterMs on the heap, then spill on the timer; restart rebuilds history from the WAL', async () => {
    const dir = tmp();
    const opts = { dir, fsync: 'none' as const, spill: { afterMs: 100 } };
    let kv = await MvccStore.open(opts);
    for (let n = 0; n < 10; n++) await kv.txn({ success: [{ op: 'put', key: '/t', value: val('/t', n) }] });
    expect(kv.stats().spilledVersions).toBe(0);
    await Bun.sleep(600);
    expect(kv.stats().spilledVersions).toBe(9);
    expect(dec.decode((await kv.range('/t', { revision: 3 })).kvs[0]?.value)).toBe(dec.decode(val('/t', 2)));
    await kv.close();
    kv = await MvccStore.open({ ...opts, spill: { afterMs: 60_000 } });
    // The replay superseded versions loaded from the WAL: their slots point into the WAL segment
    // the store read, at once, and nothing is written to a spill file.
    expect(kv.stats().spilledVersions).toBe(9);
    expect(spillFiles(dir)).toEqual([]);
    expect(dec.decode((await kv.range('/t', { revision: 3 })).kvs[0]?.value)).toBe(dec.decode(val('/t', 2)));
    expect(dec.decode((await kv.range('/t')).kvs[0]?.value)).toBe(dec.decode(val('/t', 9)));
    // Superseding the newest loaded version needs no wait either; it reads back from the WAL.
    const rev = (await kv.txn({ success: [{ op: 'put', key: '/t', value: val('/t', 10) }] })).revision;
    expect(kv.stats().spilledVersions).toBe(10);
    expect(dec.decode((await kv.range('/t', { revision: rev - 1 })).kvs[0]?.value)).toBe(dec.decode(val('/t', 9)));
    expect(spillFiles(dir)).toEqual([]);
    // Compaction releases the borrowed segment (closed, never deleted: it is the WAL's).
    await kv.compact(rev);
    expect(fs.readdirSync(path.join(dir, 'wal')).some((f) => f.endsWith('.wal'))).toBe(true);
    await kv.close();
    kv = await MvccStore.open(opts);
    expect(dec.decode((await kv.range('/t')).kvs[0]?.value)).toBe(dec.decode(val('/t', 10)));
    await kv.close();
  });

  test('a spill that cannot write leaves the values on the heap and fails no write', async () => {
    const dir = tmp();
    const logs: string[] = [];
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 0, maxPendingBytes: 0 }, logger: (m) => logs.push(m) });
    // The spill directory is replaced by a file: creating a spill file fails (ENOTDIR).
    fs.rmSync(path.join(dir, 'history'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'history'), 'not a directory');
    const revs: number[] = [];
    for (let n = 0; n < 4; n++) revs.push((await kv.txn({ success: [{ op: 'put', key: '/f', value: val('/f', n) }] })).revision);
    expect(kv.stats().spilledVersions).toBe(0);
    expect(logs.some((l) => l.includes('history spill failed'))).toBe(true);
    for (let n = 0; n < 4; n++)
      expect(dec.decode((await kv.range('/f', { revision: revs[n] })).kvs[0]?.value)).toBe(dec.decode(val('/f', n)));
    await kv.close();
  });

  test('a store without a directory keeps its history on the heap', async () => {
    const kv = await MvccStore.open({ spill: { afterMs: 0, maxPendingBytes: 0 } });
    for (let n = 0; n < 5; n++) await kv.txn({ success: [{ op: 'put', key: '/m', value: val('/m', n) }] });
    expect(kv.stats().spilledVersions).toBe(0);
    expect((await kv.range('/m', { revision: 1 })).kvs[0]).not.toBeInstanceOf(SpilledValue);
    await kv.close();
  });

  test('a version whose spill file was closed reports compacted, not garbage', async () => {
    const dir = tmp();
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 0, maxPendingBytes: 0 } });
    for (let n = 0; n < 3; n++) await kv.txn({ success: [{ op: 'put', key: '/c', value: val('/c', n) }] });
    const old = (await kv.range('/c', { revision: 1 })).kvs[0];
    await kv.close();
    let err: unknown;
    try {
      old?.value;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('compacted');
  });
});
