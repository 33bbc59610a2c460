/**
 * Memory per object and under churn (issue 17's targets, measured on the real server): RSS after
 * creating N ConfigMaps of ~1 KB, per object, and after M merge patches over the first 10,000
 * of them, per update (history and watch cache hold every version until compaction). RSS is read
 * from /proc after the server settles (15 s: recent watch events stay parsed for 10 s) and a full
 * garbage collection (SIGUSR2 with SVC_DEBUG_HEAP_SIGNAL=1; the server logs its heap then).
 *
 * Compaction is off by default (--compaction=0s): all the history the patches make is retained,
 * the hardest case for memory. At the end the bench checks what the target asks besides RSS: a
 * list at the revision reached after the first minute of patches (`resourceVersionMatch=Exact`)
 * answers exactly the state of then, and every patched object holds its last acknowledged patch.
 *
 * With --restart the server is then stopped and started again on its data directory: the time
 * from spawning it to /readyz answering 200 is printed, and the last patch of every object is
 * checked again (issue 17's restart target: 1M objects and 1M history entries, ≤ 5 s to ready).
 *
 *   bun bench/memory.ts [--objects=N] [--patches=M] [--compaction=5m0s] [--restart]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const OBJECTS = Number(arg('objects') ?? 100_000);
const PATCHES = Number(arg('patches') ?? 100_000);
/** Quiet time before each RSS reading: past the watch cache's 10 s in which recent events stay parsed. */
const SETTLE_MS = Number(arg('settle-ms') ?? 15_000);
const COMPACTION = arg('compaction') ?? '0s';

const rss = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};
// The server runs a full collection on SIGUSR2 and logs its heap (src/main.ts).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-memory-'));
const serverArgs = {
  dataDir,
  args: [
    '--max-requests-inflight=0',
    '--max-mutating-requests-inflight=0',
    `--etcd-compaction-interval=${COMPACTION}`,
    ...(arg('server-args')?.split(',') ?? []),
  ],
  env: { SVC_DEBUG_HEAP_SIGNAL: '1' },
};
let srv = await startServer(serverArgs);
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
  // The revision reached after the first minute (or the first batch, in a short run), and how
  // many patches were acknowledged by then: every patch of a batch is acknowledged before the
  // next batch starts, so that revision's state is exactly the first `earlyPatches` patches.
  let earlyRv = 0;
  let earlyPatches = 0;
  let failed = 0;
  for (let i = 0; i < PATCHES; i += 256) {
    const rvs = await Promise.all(
      Array.from({ length: Math.min(256, PATCHES - i) }, async (_, j) => {
        const r = await srv.fetch(`/api/v1/namespaces/mem/configmaps/cm-${(i + j) % hot}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ data: { n: String(i + j) } }),
        });
        if (r.status !== 200) {
          failed++;
          await r.text();
          return 0;
        }
        return Number(((await r.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
      }),
    );
    if (earlyRv === 0 || performance.now() - pStarted < 60_000) {
      earlyRv = Math.max(...rvs);
      earlyPatches = Math.min(PATCHES, i + 256);
    }
  }
  const patchSecs = (performance.now() - pStarted) / 1000;
  if (failed > 0) console.log(`${failed} patches failed`);
  const afterPatches = await settle(pid, 'after patches');
  // What the patches did, as the model says: the newest n of each hot object, at a revision.
  const lastN = (upTo: number, k: number): string | undefined =>
    upTo - 1 < k ? undefined : String(k + hot * Math.floor((upTo - 1 - k) / hot));
  type CmList = { metadata: { continue?: string }; items: { metadata: { name: string }; data: Record<string, string> }[] };
  const check = async (query: string, upTo: number): Promise<{ seen: number; wrong: number }> => {
    let seen = 0;
    let wrong = 0;
    // Later pages carry the first one's revision in their continue token.
    let cont = '';
    do {
      const r = await srv.json('GET', `/api/v1/namespaces/mem/configmaps?limit=5000${cont ? `&continue=${cont}` : query}`);
      if (r.status !== 200) throw new Error(`list ${query}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      const body = r.body as CmList;
      for (const it of body.items) {
        const k = Number(it.metadata.name.slice(3));
        if (k >= hot) continue;
        seen++;
        if (it.data.n !== lastN(upTo, k)) wrong++;
      }
      cont = body.metadata.continue ?? '';
    } while (cont);
    return { seen, wrong };
  };
  const early = await check(`&resourceVersion=${earlyRv}&resourceVersionMatch=Exact`, earlyPatches);
  const now = await check('', PATCHES);
  console.log(
    `read at revision ${earlyRv} (after ${earlyPatches} patches): ${early.seen} objects, ${early.wrong} not as then; ` +
      `now: ${now.seen} objects, ${now.wrong} without their last acknowledged patch`,
  );
  console.log(
    `RSS: empty ${base.toFixed(0)} MiB; after ${OBJECTS} creates of ~1 KB ${afterCreates.toFixed(0)} MiB ` +
      `(${(((afterCreates - base) * 1024 * 1024) / OBJECTS / 1024).toFixed(2)} KB per object, ${(OBJECTS / createSecs).toFixed(0)} creates/s); ` +
      `after ${PATCHES} merge patches over ${hot} of them ${afterPatches.toFixed(0)} MiB ` +
      `(${(((afterPatches - afterCreates) * 1024 * 1024) / PATCHES / 1024).toFixed(2)} KB per update, x${(afterPatches / afterCreates).toFixed(2)} of after-creates; ${(PATCHES / patchSecs).toFixed(0)} patches/s)`,
  );
  if (process.argv.includes('--restart')) {
    await srv.stop();
    const t0 = performance.now();
    srv = await startServer(serverArgs);
    const listening = performance.now() - t0;
    for (;;) {
      const r = await srv.fetch('/readyz').catch(() => undefined);
      if (r?.status === 200) break;
      await Bun.sleep(10);
    }
    const ready = performance.now() - t0;
    const again = await check('', PATCHES);
    console.log(
      `restart with ${OBJECTS} objects and ${PATCHES} updates: listening after ${(listening / 1000).toFixed(2)} s, ready after ${(ready / 1000).toFixed(2)} s; ` +
        `RSS ${rss(srv.proc.pid).toFixed(0)} MiB; ${again.seen} objects checked, ${again.wrong} without their last acknowledged patch`,
    );
  }
} finally {
  await srv.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
