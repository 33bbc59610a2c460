/**
 * Long lists on the real server, the codec pool on and off in one run (issue 15 bench): one data
 * directory of N Pods (~2.4 KB of JSON each, bench/fixtures.ts's pod3k without status or owners),
 * served first with `--codec-pool-size=1`, then restarted on the same directory with
 * `--codec-pool-size=0`. Per mode:
 *   - one LIST of all Pods per media type (JSON, protobuf, CBOR; no gzip): time, bytes, the
 *     server's peak RSS during it (VmHWM reset through /proc/PID/clear_refs);
 *   - per lister media (protobuf+gzip as client-go's informers ask, JSON+gzip, CBOR): p99 of
 *     small GETs (a namespace) from 16 clients for PHASE_MS unloaded, then again while 4 clients
 *     LIST all Pods over and over (bodies read and dropped), the server's CPU per GET, lists done.
 *
 *   bun bench/codec-lists.ts [--pods=100000] [--phase-ms=10000]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { createdPod3k } from './fixtures';
import { createMany, load, smallGets, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 100_000);
const PHASE_MS = Number(arg('phase-ms') ?? 10_000);
const ARGS = ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0', '--feature-gates=CBORServingAndStorage=true'];

const peakRss = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const resetPeak = (pid: number): void => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
const cpuUs = (pid: number): number => [...threadCpu(pid).values()].reduce((a, b) => a + b, 0);

const MEDIA: Record<string, Record<string, string>> = {
  json: { accept: 'application/json', 'accept-encoding': 'identity' },
  protobuf: { accept: 'application/vnd.svc.protobuf', 'accept-encoding': 'identity' },
  cbor: { accept: 'application/cbor', 'accept-encoding': 'identity' },
  'protobuf+gzip': { accept: 'application/vnd.svc.protobuf', 'accept-encoding': 'gzip' },
  'json+gzip': { accept: 'application/json', 'accept-encoding': 'gzip' },
};

const lines: string[] = [];
const report = (s: string): void => {
  lines.push(s);
  console.log(s);
};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'codec-lists-'));
for (const poolSize of [1, 0]) {
  const srv = await startServer({ args: [...ARGS, `--codec-pool-size=${poolSize}`], dataDir });
  const pid = srv.proc.pid;
  const mode = poolSize > 0 ? 'pool on' : 'pool off';
  try {
    if (poolSize === 1) {
      await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
      const secs = await createMany(srv, '/api/v1/namespaces/bench/pods', PODS, createdPod3k);
      report(`created ${PODS} pods in ${secs.toFixed(1)} s`);
    } else {
      // Wait for the restarted server's watch cache to hold every pod.
      for (;;) {
        const r = await srv.fetch('/api/v1/namespaces/bench/pods?limit=1&resourceVersion=0');
        const b = (await r.json()) as { metadata?: { remainingItemCount?: number } };
        if (r.status === 200 && (b.metadata?.remainingItemCount ?? 0) + 1 >= PODS) break;
        await Bun.sleep(200);
      }
    }
    await Bun.sleep(2000);
    for (const media of ['json', 'protobuf', 'cbor']) {
      resetPeak(pid);
      const before = peakRss(pid);
      const t = performance.now();
      const r = await srv.fetch('/api/v1/namespaces/bench/pods', { headers: MEDIA[media] });
      let bytes = 0;
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      for (let c = await reader.read(); !c.done; c = await reader.read()) bytes += c.value.length;
      report(
        `${mode}: LIST ${PODS} pods ${media}: ${(performance.now() - t).toFixed(0)} ms, ${(bytes / 1e6).toFixed(1)} MB, ` +
          `server RSS ${before.toFixed(0)} -> peak ${peakRss(pid).toFixed(0)} MiB`,
      );
    }
    const auth = { authorization: `Bearer ${srv.token}` };
    const get = smallGets(srv, PHASE_MS);
    for (const media of ['protobuf+gzip', 'json+gzip', 'cbor']) {
      const unloaded = await load(get);
      resetPeak(pid);
      const c0 = cpuUs(pid);
      const [loaded, lists] = await Promise.all([
        load(get),
        load({
          url: `${srv.url}/api/v1/namespaces/bench/pods`,
          method: 'GET',
          headers: { ...auth, ...MEDIA[media] },
          ca: srv.ca,
          concurrency: 4,
          durationMs: PHASE_MS,
          discard: true,
        }),
      ]);
      const cpu = cpuUs(pid) - c0;
      report(
        `${mode}: listers ${media}: small GET p99 unloaded ${unloaded.p99.toFixed(2)} ms, under 4 listers ${loaded.p99.toFixed(2)} ms ` +
          `(x${(loaded.p99 / unloaded.p99).toFixed(2)}), p50 ${unloaded.p50.toFixed(2)} -> ${loaded.p50.toFixed(2)} ms, ` +
          `${loaded.ops} GETs/s, ${lists.ok} lists (${lists.errors} errors) in the phase, server CPU ${(cpu / 1e6).toFixed(1)} s, peak RSS ${peakRss(pid).toFixed(0)} MiB`,
      );
    }
  } finally {
    await srv.stop();
  }
}
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(`\n${lines.join('\n')}`);
