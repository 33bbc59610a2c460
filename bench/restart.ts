/**
 * A restart with many pods: the server stopped and started again on a data directory of N Pods
 * (~2.4 KB of JSON each, as bench/codec-lists.ts's), with its default controllers against the
 * same server with none and no scheduler (the baseline: the store's load, the watch caches and the
 * simulated kubelets; the same run).
 * Per start, from its spawn: once it listens, a small GET every 50 ms and /readyz until it is 200,
 * until the server is idle (the start of the first second with under 0.15 s of its CPU, once
 * ready): the time to ready and to idle, the slowest of those GETs (how long the start held the
 * event loop), the server's CPU seconds since its start and its peak RSS (VmHWM) then.
 *
 *   bun bench/restart.ts [--pods=100000] [--rounds=3]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { createdPod3k } from './fixtures';
import { createMany, processCpuUs } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 100_000);
const ROUNDS = Number(arg('rounds') ?? 3);
const ARGS = ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'];
/**
 * The controllers and scheduler as the test harness runs them (the CA publisher and pod GC off),
 * or none of them (the simulated kubelets, which follow pods for the nodes they run, stay).
 */
const MODES: Record<string, string[]> = {
  'default controllers': ['--controllers=*,-root-ca-certificate-publisher-controller,-pod-garbage-collector-controller'],
  'no controllers': ['--controllers=', '--scheduler=false'],
};

const peakRss = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'restart-'));
try {
  {
    const srv = await startServer({ args: [...ARGS, ...(MODES['default controllers'] as string[])], dataDir });
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    const secs = await createMany(srv, '/api/v1/namespaces/bench/pods', PODS, createdPod3k);
    console.log(`created ${PODS} pods in ${secs.toFixed(1)} s`);
    await srv.stop();
  }
  const results: Record<string, { ready: number[]; idle: number[]; slowest: number[]; cpu: number[]; peak: number[] }> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [mode, flags] of Object.entries(MODES)) {
      const t0 = performance.now();
      const srv = await startServer({ args: [...ARGS, ...flags], dataDir, startTimeoutMs: 300_000, waitReady: false });
      const pid = srv.proc.pid;
      // From listening: a small GET every 50 ms (any answer counts) and /readyz until it is 200,
      // until the server is idle (a second with under 0.15 s of its CPU, once ready). The slowest
      // GET is how long the start held the event loop.
      let ready = 0;
      let slowest = 0;
      let windowStart = performance.now();
      let windowCpu = processCpuUs(pid);
      let idle = 0;
      while (idle === 0 && performance.now() - t0 < 120_000) {
        const s = performance.now();
        const r = await srv.fetch('/api/v1/namespaces/bench/pods?limit=1');
        await r.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - s);
        if (ready === 0) {
          const z = await srv.fetch('/readyz').catch(() => undefined);
          await z?.arrayBuffer();
          if (z?.status === 200) ready = performance.now() - t0;
        }
        await Bun.sleep(50);
        if (performance.now() - windowStart >= 1000) {
          const c = processCpuUs(pid);
          if (ready > 0 && c - windowCpu < 150_000) idle = windowStart - t0;
          windowStart = performance.now();
          windowCpu = c;
        }
      }
      const cpu = processCpuUs(pid) / 1e6;
      const peak = peakRss(pid);
      await srv.stop();
      const r = results[mode] ?? { ready: [], idle: [], slowest: [], cpu: [], peak: [] };
      results[mode] = r;
      r.ready.push(ready);
      r.idle.push(idle);
      r.slowest.push(slowest);
      r.cpu.push(cpu);
      r.peak.push(peak);
      console.log(
        `round ${round}, ${mode}: ready ${(ready / 1000).toFixed(2)} s, ` +
          `idle ${(idle / 1000).toFixed(2)} s, slowest GET ${slowest.toFixed(0)} ms, CPU ${cpu.toFixed(2)} s, peak RSS ${peak.toFixed(0)} MiB`,
      );
    }
  }
  const line = (mode: string): string => {
    const r = results[mode] as (typeof results)[string];
    return `${mode}: ready ${(median(r.ready) / 1000).toFixed(2)} s, idle ${(median(r.idle) / 1000).toFixed(2)} s, slowest GET ${median(r.slowest).toFixed(0)} ms, CPU ${median(r.cpu).toFixed(2)} s, peak RSS ${median(r.peak).toFixed(0)} MiB`;
  };
  const d = results['default controllers'] as (typeof results)[string];
  const b = results['no controllers'] as (typeof results)[string];
  console.log(`\nrestart with ${PODS} pods, medians of ${ROUNDS}:\n  ${line('default controllers')}\n  ${line('no controllers')}`);
  console.log(
    `  default controllers / none: idle x${(median(d.idle) / median(b.idle)).toFixed(2)}, slowest GET x${(median(d.slowest) / median(b.slowest)).toFixed(2)}, CPU x${(median(d.cpu) / median(b.cpu)).toFixed(2)}, peak RSS x${(median(d.peak) / median(b.peak)).toFixed(2)}`,
  );
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
