/**
 * A WAL's fdatasyncs beside a snapshot being written, by how often the snapshot syncs:
 *
 *   bun bench/snapshot-sync.ts [--mib=1024] [--every=32,4] [--dir=DIR]
 *
 * One loop does what the WAL does under load (src/store/wal.ts: a 16 KB batch written with
 * writeSync, then fdatasync, again and again); meanwhile a writer does what writeSnapshot does
 * (src/store/snapshot.ts: 4 MiB chunks written on the thread pool, fdatasync every EVERY MiB).
 * Printed per setting: the snapshot's time, and the WAL's fdatasync latency p50 / p99 / max
 * before and during it. A sync of the snapshot makes the disk write everything it has pending,
 * and a WAL fdatasync that comes meanwhile waits for it: acknowledged writes wait that long.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const arg = (name: string, d: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? d;
const MIB = Number(arg('mib', '1024'));
const EVERY = arg('every', '32,4').split(',').map(Number);
const DIR = fs.mkdtempSync(path.join(arg('dir', os.tmpdir()), 'snapshot-sync-'));

const fdatasync = (fd: number) => new Promise<void>((r, j) => fs.fdatasync(fd, (e) => (e ? j(e) : r())));
const write = (fd: number, b: Uint8Array, pos: number) =>
  new Promise<number>((r, j) => fs.write(fd, b, 0, b.length, pos, (e, n) => (e ? j(e) : r(n))));
const pct = (xs: number[], q: number) => ([...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] ?? 0).toFixed(1);
const summary = (xs: number[]) => `p50 ${pct(xs, 0.5)} / p99 ${pct(xs, 0.99)} / max ${Math.max(...xs).toFixed(1)} ms (${xs.length})`;

async function run(everyMiB: number): Promise<void> {
  const wal = fs.openSync(path.join(DIR, 'wal'), 'w');
  const snap = fs.openSync(path.join(DIR, 'snap'), 'w');
  let stop = false;
  const lat: number[] = [];
  const loop = (async () => {
    const batch = new Uint8Array(16 << 10).fill(7);
    for (let off = 0; !stop; off += batch.length) {
      const t0 = performance.now();
      fs.writeSync(wal, batch, 0, batch.length, off);
      await fdatasync(wal);
      lat.push(performance.now() - t0);
    }
  })();
  await Bun.sleep(1000);
  const quiet = lat.splice(0);
  const chunk = new Uint8Array(4 << 20).fill(9);
  const t0 = performance.now();
  let synced = 0;
  for (let pos = 0; pos < MIB << 20; ) {
    await write(snap, chunk, pos);
    pos += chunk.length;
    if (pos - synced >= everyMiB << 20) {
      await fdatasync(snap);
      synced = pos;
    }
  }
  await fdatasync(snap);
  const took = performance.now() - t0;
  stop = true;
  await loop;
  fs.closeSync(wal);
  fs.closeSync(snap);
  fs.rmSync(path.join(DIR, 'snap'));
  console.log(
    `snapshot synced every ${everyMiB} MiB: ${MIB} MiB in ${took.toFixed(0)} ms; WAL fdatasync alone ${summary(quiet)}; beside the snapshot ${summary(lat)}`,
  );
}

try {
  for (const e of EVERY) await run(e);
} finally {
  fs.rmSync(DIR, { recursive: true, force: true });
}
