/**
 * Store benchmark: the embedded MVCC store against a real etcd 3.4 on the same machine, in the
 * same run, with the same workload code and the same concurrency.
 *
 *     bun bench/store.ts            # full mode: ~10 s phases, 1M-record restart
 *     bun bench/store.ts --quick    # quick mode: 2 s phases, 200k-record restart (< 60 s in total)
 *     bun bench/store.ts --restart-only --restart-history=1000000
 *                                   # only the restart, after that many overwrites of the records
 *
 * Compared (1 KB values, durable writes: embedded fsync 'always', etcd defaults):
 *   durable puts/s with 1, 16 and 256 concurrent writers (each writer puts distinct keys),
 *   gets/s of random existing keys, and ranges of 500 keys (a prefix with limit 500) at the
 *   latest revision and at an old one.
 * Embedded store only: memory per 100k 1 KB values, and restart (open) time with 1M records.
 *
 * Every figure is printed as soon as it is measured, then the store/etcd ratios; the last line is
 * always `store/etcd durable put ratio (256 writers): <ratio or n/a>`.
 *
 * The etcd part needs /usr/bin/etcd (Debian package etcd-server); without it, it is skipped.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Etcd3 } from 'etcd3';
import { MvccStore } from '../src/store/mvcc';
import { prefixEnd, type Revision } from '../src/store/types';
import { ETCD_BIN, startEtcd } from './etcd';

const QUICK = process.argv.includes('--quick');
const RESTART_ONLY = process.argv.includes('--restart-only');
const argValue = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

/** Every size and duration of the run. */
const OPTIONS = {
  mode: QUICK ? 'quick' : 'full',
  valueBytes: 1024,
  /** Duration of each timed phase. */
  phaseMs: QUICK ? 2_000 : 10_000,
  writers: [1, 16, 256],
  readers: 16,
  /** Keys of the read data set: gets pick random ones, ranges read the first rangeLimit of them. */
  dataKeys: 10_000,
  rangeLimit: 500,
  /** Concurrency of untimed bulk loads. */
  loadConcurrency: 256,
  memoryKeys: 100_000,
  restartRecords: QUICK ? 200_000 : 1_000_000,
  /** Overwrites of the restart's records after they are written (history the reopen replays). */
  restartHistory: Number(argValue('restart-history') ?? 0),
  /** The restart figure the target is about; a smaller run is extrapolated linearly to it. */
  restartTargetRecords: 1_000_000,
  targets: { putRatio256: 3, restartSeconds: 10 },
} as const;

// ---- the backend adapter ------------------------------------------------------------------

interface RangeSummary {
  count: number;
  /** Largest modRevision among the returned keys (a read at revision R must not exceed R). */
  newestModRevision: Revision;
}

/** What the workloads need from a store: the same code drives the embedded store and etcd. */
interface Backend {
  readonly name: string;
  /** Unconditional put; resolves with the write's revision once it is durable. */
  put(key: string, value: Uint8Array): Promise<Revision>;
  get(key: string): Promise<Uint8Array | undefined>;
  /** Keys with `prefix`, at most `limit`, at `revision` (absent: the latest). */
  range(prefix: string, limit: number, revision?: Revision): Promise<RangeSummary>;
}

function embeddedBackend(store: MvccStore): Backend {
  return {
    name: 'embedded',
    put: async (key, value) => (await store.txn({ success: [{ op: 'put', key, value }] })).revision,
    get: async (key) => (await store.range(key)).kvs[0]?.value,
    range: async (prefix, limit, revision) => {
      const r = await store.range(prefix, { end: prefixEnd(prefix), limit, revision });
      let newestModRevision = 0;
      for (const kv of r.kvs) newestModRevision = Math.max(newestModRevision, kv.modRevision);
      return { count: r.kvs.length, newestModRevision };
    },
  };
}

function etcdBackend(client: Etcd3): Backend {
  return {
    name: 'etcd',
    put: async (key, value) => {
      const r = await client
        .put(key)
        .value(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
        .exec();
      return Number(r.header.revision);
    },
    get: async (key) => (await client.get(key).buffer()) ?? undefined,
    range: async (prefix, limit, revision) => {
      const q = client.getAll().prefix(prefix).limit(limit);
      if (revision !== undefined) q.revision(revision);
      const r = await q.exec();
      let newestModRevision = 0;
      for (const kv of r.kvs) newestModRevision = Math.max(newestModRevision, Number(kv.mod_revision));
      return { count: r.kvs.length, newestModRevision };
    },
  };
}

// ---- measurement helpers ------------------------------------------------------------------

interface Throughput {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** Runs `workers` concurrent loops of `op` for `durationMs`; each loop awaits one op at a time. */
async function drive(workers: number, durationMs: number, op: (worker: number, seq: number) => Promise<void>): Promise<Throughput> {
  const latencies: number[] = [];
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let seq = 0; ; seq++) {
        const t = performance.now();
        if (t >= deadline) return;
        await op(worker, seq);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
  return { opsPerSec: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

/** Calls fn(0..n-1) with at most `concurrency` calls in flight. */
async function forEachIndex(n: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

const RANDOM_POOL = crypto.getRandomValues(new Uint8Array(1 << 16));

/** A fresh 1 KB value (its own allocation, as a decoded request body would be). */
function makeValue(seed: number): Uint8Array {
  const offset = (seed * 4099) % (RANDOM_POOL.length - OPTIONS.valueBytes);
  return RANDOM_POOL.slice(offset, offset + OPTIONS.valueBytes);
}

const DATA_PREFIX = '/bench/data/';
const dataKey = (i: number) => `${DATA_PREFIX}${i.toString().padStart(8, '0')}`;

const MiB = 1 << 20;
const fmtOps = (t: Throughput) => `${Math.round(t.opsPerSec)} ops/s (p50 ${t.p50Ms.toFixed(2)} ms, p99 ${t.p99Ms.toFixed(2)} ms)`;
const fmtRatio = (r: number | undefined) => (r === undefined ? 'n/a' : r.toFixed(2));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Temporary directories still to remove, also when the run ends early (error, Ctrl-C). */
const tempDirs = new Set<string>();
process.on('exit', () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

function makeTempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return total;
}

// ---- compared workloads -------------------------------------------------------------------

interface SuiteContext {
  /** A revision from before the whole data set was overwritten. */
  oldRevision: Revision;
}

interface Workload {
  id: string;
  /** Printed as `<backend> <label>: <figure>`. */
  label: string;
  /** Printed as `store/etcd <ratioLabel>: <ratio>`. */
  ratioLabel: string;
  run(b: Backend, ctx: SuiteContext): Promise<Throughput>;
}

function putWorkload(writers: number): Workload {
  return {
    id: `put-${writers}`,
    label: `durable put ${plural(writers, 'writer')}`,
    ratioLabel: `durable put ratio (${plural(writers, 'writer')})`,
    run: (b) => drive(writers, OPTIONS.phaseMs, (w, seq) => b.put(`/bench/put/${writers}/${w}/${seq}`, makeValue(seq)).then(() => {})),
  };
}

const getWorkload: Workload = {
  id: 'get',
  label: `get ${OPTIONS.readers} readers`,
  ratioLabel: `get ratio (${OPTIONS.readers} readers)`,
  run: (b) =>
    drive(OPTIONS.readers, OPTIONS.phaseMs, async () => {
      const key = dataKey(Math.floor(Math.random() * OPTIONS.dataKeys));
      const v = await b.get(key);
      if (v?.length !== OPTIONS.valueBytes) throw new Error(`${b.name}: get ${key} returned ${v?.length ?? 'nothing'}`);
    }),
};

function rangeWorkload(at: 'latest' | 'old'): Workload {
  return {
    id: `range-${at}`,
    label: `range ${OPTIONS.rangeLimit} keys at ${at} revision, ${OPTIONS.readers} readers`,
    ratioLabel: `range ${OPTIONS.rangeLimit} ratio (${at} revision)`,
    run: (b, ctx) =>
      drive(OPTIONS.readers, OPTIONS.phaseMs, async () => {
        const revision = at === 'old' ? ctx.oldRevision : undefined;
        const r = await b.range(DATA_PREFIX, OPTIONS.rangeLimit, revision);
        if (r.count !== OPTIONS.rangeLimit || (revision !== undefined && r.newestModRevision > revision))
          throw new Error(`${b.name}: range at ${revision ?? 'latest'} returned ${r.count} keys up to revision ${r.newestModRevision}`);
      }),
  };
}

const WORKLOADS: Workload[] = [...OPTIONS.writers.map(putWorkload), getWorkload, rangeWorkload('latest'), rangeWorkload('old')];

/**
 * Loads the read data set, then overwrites all of it (so the old revision is really history),
 * then runs every workload, printing each figure as it is measured.
 */
async function runSuite(b: Backend): Promise<Map<string, Throughput>> {
  const t0 = performance.now();
  let oldRevision = 0;
  await forEachIndex(OPTIONS.dataKeys, OPTIONS.loadConcurrency, async (i) => {
    const rev = await b.put(dataKey(i), makeValue(i));
    oldRevision = Math.max(oldRevision, rev);
  });
  await forEachIndex(OPTIONS.dataKeys, OPTIONS.loadConcurrency, (i) => b.put(dataKey(i), makeValue(i + 1)));
  const loadSec = (performance.now() - t0) / 1000;
  console.log(`${b.name} setup: ${OPTIONS.dataKeys} keys written twice in ${loadSec.toFixed(1)} s (old revision ${oldRevision})`);

  const results = new Map<string, Throughput>();
  for (const w of WORKLOADS) {
    const t = await w.run(b, { oldRevision });
    results.set(w.id, t);
    console.log(`${b.name} ${w.label}: ${fmtOps(t)}`);
  }
  return results;
}

async function runEmbeddedSuite(): Promise<Map<string, Throughput>> {
  const dir = makeTempDir('store');
  try {
    const store = await MvccStore.open({ dir }); // default fsync 'always'
    try {
      return await runSuite(embeddedBackend(store));
    } finally {
      const s = store.stats();
      console.log(`embedded stats: ${s.walBatches} WAL batches, ${s.walFsyncs} fsyncs, ${s.walRecords} records, ${s.snapshots} snapshots`);
      await store.close();
    }
  } finally {
    removeTempDir(dir);
  }
}

async function runEtcdSuite(): Promise<Map<string, Throughput> | undefined> {
  const server = await startEtcd();
  if (server === undefined) {
    console.log(`etcd: ${ETCD_BIN} not found (apt-get install etcd-server); skipping the etcd part, ratios are n/a`);
    return undefined;
  }
  try {
    console.log(`etcd ${server.version} started at ${server.endpoint} (default settings, temporary data dir)`);
    const client = new Etcd3({ hosts: server.endpoint });
    try {
      return await runSuite(etcdBackend(client));
    } finally {
      client.close();
    }
  } finally {
    await server.stop();
  }
}

// ---- embedded-only measurements -----------------------------------------------------------

/** Memory held by a fresh in-memory store after `memoryKeys` puts of distinct 1 KB values. */
async function measureMemory(): Promise<void> {
  const n = OPTIONS.memoryKeys;
  Bun.gc(true);
  const before = process.memoryUsage();
  const store = await MvccStore.open(); // memory only: the state a store holds is the same on disk
  const b = embeddedBackend(store);
  await forEachIndex(n, OPTIONS.loadConcurrency, (i) => b.put(`/bench/mem/${i.toString().padStart(8, '0')}`, makeValue(i)));
  Bun.gc(true);
  const after = process.memoryUsage();
  if (store.stats().keys !== n) throw new Error(`memory: expected ${n} keys, store has ${store.stats().keys}`);
  await store.close();
  const per = (bytes: number) => Math.round(bytes / n);
  const rss = after.rss - before.rss;
  const heap = after.heapUsed - before.heapUsed;
  console.log(
    `embedded memory per ${n / 1000}k 1 KB values: rss +${(rss / MiB).toFixed(1)} MiB, heap +${(heap / MiB).toFixed(1)} MiB ` +
      `(${per(rss)} B/key rss, ${per(heap)} B/key heap, value itself ${OPTIONS.valueBytes} B)`,
  );
}

/** Time to open a store holding `restartRecords` keys of 1 KB; resolves with seconds for 1M. */
async function measureRestart(): Promise<number> {
  const n = OPTIONS.restartRecords;
  const dir = makeTempDir('restart');
  try {
    const t0 = performance.now();
    const writer = await MvccStore.open({ dir, fsync: 'none' });
    const b = embeddedBackend(writer);
    await forEachIndex(n, OPTIONS.loadConcurrency, (i) => b.put(`/bench/restart/${i.toString().padStart(8, '0')}`, makeValue(i)));
    const h = OPTIONS.restartHistory;
    await forEachIndex(h, OPTIONS.loadConcurrency, (i) => b.put(`/bench/restart/${(i % n).toString().padStart(8, '0')}`, makeValue(n + i)));
    await writer.close();
    const snapshots = writer.stats().snapshots;
    console.log(
      `embedded restart setup: ${n} puts of distinct 1 KB keys${h ? ` and ${h} overwrites of them` : ''} written with fsync 'none' in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
        `(${(dirBytes(dir) / MiB).toFixed(0)} MiB on disk, ${snapshots} snapshots taken)`,
    );
    Bun.gc(true);

    const rss0 = process.memoryUsage().rss;
    const t1 = performance.now();
    const { store, report } = await MvccStore.openWithReport({ dir }); // default fsync 'always'
    const seconds = (performance.now() - t1) / 1000;
    const st = store.stats();
    Bun.gc(true);
    const rss = process.memoryUsage().rss - rss0;
    await store.close();
    if (st.keys !== n) throw new Error(`restart: expected ${n} keys after reopening, found ${st.keys}`);
    console.log(
      `embedded restart with ${n} records: ${seconds.toFixed(2)} s (MvccStore.open with default fsync; snapshot + ${report?.records ?? 0} WAL records replayed; ` +
        `${st.retainedRevisions} revisions of history retained, ${st.spilledVersions} superseded values spilled; rss +${(rss / MiB).toFixed(0)} MiB)`,
    );
    const target = OPTIONS.restartTargetRecords;
    if (n === target) return seconds;
    const extrapolated = (seconds * target) / n;
    console.log(`embedded restart with ${target} records: ${extrapolated.toFixed(2)} s (EXTRAPOLATED linearly from ${n} records)`);
    return extrapolated;
  } finally {
    removeTempDir(dir);
  }
}

// ---- main ---------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `# store benchmark, ${OPTIONS.mode} mode: bun ${Bun.version}, ${os.cpus().length} × ${cpu}, ` +
      `load average ${os.loadavg()[0]?.toFixed(2)}, ${OPTIONS.valueBytes} B values, ${OPTIONS.phaseMs / 1000} s phases`,
  );

  if (RESTART_ONLY) {
    const sec = await measureRestart();
    console.log(`# total ${((performance.now() - started) / 1000).toFixed(1)} s; restart ${sec.toFixed(2)} s`);
    return;
  }
  await measureMemory();
  const embedded = await runEmbeddedSuite();
  Bun.gc(true);
  const etcd = await runEtcdSuite();
  const restartSec = await measureRestart();

  const ratio = (id: string): number | undefined => {
    const a = embedded.get(id);
    const b = etcd?.get(id);
    return a && b ? a.opsPerSec / b.opsPerSec : undefined;
  };
  const put256 = WORKLOADS.find((w) => w.id === 'put-256');
  if (put256 === undefined) throw new Error('bug: no 256-writer put workload');
  const putRatio = ratio(put256.id);
  const met = (ok: boolean | undefined) => (ok === undefined ? 'n/a' : ok ? 'met' : 'NOT met');

  console.log(`# total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(
    `target durable put 256 writers >= ${OPTIONS.targets.putRatio256}x etcd: ${met(putRatio === undefined ? undefined : putRatio >= OPTIONS.targets.putRatio256)}`,
  );
  console.log(
    `target restart with ${OPTIONS.restartTargetRecords} records <= ${OPTIONS.targets.restartSeconds} s: ${met(restartSec <= OPTIONS.targets.restartSeconds)}` +
      (OPTIONS.restartRecords === OPTIONS.restartTargetRecords ? '' : ' (extrapolated)'),
  );
  for (const w of WORKLOADS) if (w !== put256) console.log(`store/etcd ${w.ratioLabel}: ${fmtRatio(ratio(w.id))}`);
  console.log(`store/etcd ${put256.ratioLabel}: ${fmtRatio(putRatio)}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
