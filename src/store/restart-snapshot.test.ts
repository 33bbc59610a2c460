import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from './mvcc';
import { create, get, update } from './ops';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const walBytes = (dir: string) => fs.readdirSync(path.join(dir, 'wal')).reduce((n, f) => n + fs.statSync(path.join(dir, 'wal', f)).size, 0);

test('a store restarted more often than it writes a snapshot threshold still snapshots: the log and the replay stay bounded', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'restart-snapshot-'));
  dirs.push(dir);
  const opts = { dir, segmentBytes: 16 << 10, snapshotMinBytes: 64 << 10 };
  const value = (i: number) => new TextEncoder().encode(`${i}:${'x'.repeat(1000)}`);
  const revs = new Map<string, number>();
  let replayed = 0;
  for (let cycle = 0; cycle < 30; cycle++) {
    const { store, report } = await MvccStore.openWithReport(opts);
    replayed = report?.records ?? 0;
    // ~20 KB per run: a third of the threshold, so no single run reaches it.
    for (let j = 0; j < 20; j++) {
      const key = `/k/${j}`;
      const rev = revs.get(key);
      revs.set(key, rev === undefined ? await create(store, key, value(cycle)) : await update(store, key, value(cycle), rev));
    }
    await store.close();
  }
  // 30 runs wrote ~600 KB; without snapshots every byte of it would be replayed at each open.
  expect(walBytes(dir)).toBeLessThan(200 << 10);
  expect(replayed).toBeLessThan(200);
  const store = await MvccStore.open(opts);
  try {
    expect(store.stats().snapshots).toBe(0); // this run has written nothing yet
    for (let j = 0; j < 20; j++) expect(new TextDecoder().decode((await get(store, `/k/${j}`))?.value).startsWith('29:')).toBe(true);
  } finally {
    await store.close();
  }
});

test('a background snapshot goes at its pace, and close() finishes it at full speed: the store reopens whole', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'restart-snapshot-'));
  dirs.push(dir);
  // 64 KiB a second: the ~5 MB written here would take over a minute to snapshot.
  const opts = { dir, segmentBytes: 1 << 20, snapshotMinBytes: 4 << 20, snapshotPaceBytesPerSecond: 64 << 10 };
  const store = await MvccStore.open(opts);
  const value = (i: number) => new TextEncoder().encode(`${i}:${'x'.repeat(10_000)}`);
  for (let i = 0; i < 500; i++) await create(store, `/k/${String(i).padStart(3, '0')}`, value(i));
  // The threshold was passed: a snapshot is being written, slowly, while writes go on.
  await Bun.sleep(300);
  expect(store.stats().snapshots).toBe(0);
  for (let i = 500; i < 520; i++) await create(store, `/k/${String(i).padStart(3, '0')}`, value(i));
  const t0 = performance.now();
  await store.close();
  expect(performance.now() - t0).toBeLessThan(20_000);
  const { store: again, report } = await MvccStore.openWithReport(opts);
  try {
    // The snapshot was completed: far fewer records replayed than written.
    expect(report?.records ?? 0).toBeLessThan(200);
    for (const i of [0, 250, 499, 519]) {
      expect(new TextDecoder().decode((await get(again, `/k/${String(i).padStart(3, '0')}`))?.value).startsWith(`${i}:`)).toBe(true);
    }
  } finally {
    await again.close();
  }
});
