/**
 * Memory per object and under churn (issue 17's targets, measured on the real server): RSS after
 * creating N ConfigMaps of ~1 KB, per object, and after M merge patches over the first 10,000
 * of them, per update (history and watch cache hold every version until compaction). RSS is read
 * from /proc after the server settles (15 s: recent watch events stay parsed for 10 s) and a full
 * garbage collection (SIGUSR2 with SVC_DEBUG_HEAP_SIGNAL=1; the server logs its heap then).
 *
 *   bun bench/memory.ts [--objects=N] [--patches=M]
 */
import * as fs from 'node:fs';
import { startServer } from '../test/helpers/server';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const OBJECTS = Number(arg('objects') ?? 100_000);
const PATCHES = Number(arg('patches') ?? 100_000);
/** Quiet time before each RSS reading: past the watch cache's 10 s in which recent events stay parsed. */
const SETTLE_MS = Number(arg('settle-ms') ?? 15_000);

const rss = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};
// The server runs a full collection on SIGUSR2 and logs its heap (src/main.ts).
const srv = await startServer({
  args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
  env: { SVC_DEBUG_HEAP_SIGNAL: '1' },
});
const heapLines = () =>
  srv
    .logs()
    .split('\n')
    .filter((l) => l.includes('heap: size'));
/** RSS after the quiet time and a full collection; the server's heap line is printed. */
const settle = async (pid: number, what: string): Promise<number> => {
  await Bun.sleep(SETTLE_MS);
  const before = heapLines().length;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && heapLines().length === before; i++) await Bun.sleep(100);
  await Bun.sleep(500);
  console.log(`${what}: ${heapLines().at(-1) ?? '(no heap line)'}`);
  return rss(pid);
};

try {
  const pid = srv.proc.pid;
  await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'mem' } });
  const base = await settle(pid, 'empty');
  const value = 'v'.repeat(1000);
  const started = performance.now();
  for (let i = 0; i < OBJECTS; i += 256) {
    await Promise.all(
      Array.from({ length: Math.min(256, OBJECTS - i) }, (_, j) =>
        srv.json('POST', '/api/v1/namespaces/mem/configmaps', { metadata: { name: `cm-${i + j}` }, data: { v: value } }),
      ),
    );
  }
  const createSecs = (performance.now() - started) / 1000;
  const afterCreates = await settle(pid, 'after creates');
  const hot = Math.min(10_000, OBJECTS);
  const pStarted = performance.now();
  for (let i = 0; i < PATCHES; i += 256) {
    await Promise.all(
      Array.from({ length: Math.min(256, PATCHES - i) }, (_, j) =>
        srv.fetch(`/api/v1/namespaces/mem/configmaps/cm-${(i + j) % hot}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ data: { n: String(i + j) } }),
        }),
      ),
    );
  }
  const patchSecs = (performance.now() - pStarted) / 1000;
  const afterPatches = await settle(pid, 'after patches');
  console.log(
    `RSS: empty ${base.toFixed(0)} MiB; after ${OBJECTS} creates of ~1 KB ${afterCreates.toFixed(0)} MiB ` +
      `(${(((afterCreates - base) * 1024 * 1024) / OBJECTS / 1024).toFixed(2)} KB per object, ${(OBJECTS / createSecs).toFixed(0)} creates/s); ` +
      `after ${PATCHES} merge patches over ${hot} of them ${afterPatches.toFixed(0)} MiB ` +
      `(${(((afterPatches - afterCreates) * 1024 * 1024) / PATCHES / 1024).toFixed(2)} KB per update, x${(afterPatches / afterCreates).toFixed(2)} of after-creates; ${(PATCHES / patchSecs).toFixed(0)} patches/s)`,
  );
} finally {
  await srv.stop();
}
