/**
 * Watch fan-out benchmark against the real server (issue "Watch cache", bench):
 * 1,000 watchers on one resource, 200 writes/s for 30 s (`--quick`: 300 watchers, 8 s):
 * events delivered/s, delivery latency p50/p99 from write acknowledgement to receipt, lost and
 * duplicated events, server RSS; then the effect of 100 stalled watchers on write latency.
 * `--floor`: the same against bench/watch-floor.ts, a bare Bun.serve that only writes each
 * event's line to every open watch (no store, no watch cache): what this runtime and machine
 * allow the fan-out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { watchFloorServer } from './harness';

const QUICK = process.argv.includes('--quick');
const FLOOR = process.argv.includes('--floor');
// `sample` watchers parse every event and time it; the others count event lines only (so the
// client, which shares the 2 cores, costs less), and their line totals check nothing is lost.
const OPTS = { watchers: QUICK ? 300 : 1000, writesPerSec: 200, seconds: QUICK ? 8 : 30, stalled: 100, sample: 50 };
const ROOT = path.resolve(import.meta.dir, '..');
const clock = () => performance.timeOrigin + performance.now();

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
}

interface Result {
  received: number;
  duplicates: number;
  /** Event lines seen by the counting (non-sampled) watchers. */
  lines: number;
  perRv: Record<string, [number, number, number]>;
}

/** What run() needs of the server under test. */
interface Target {
  url: string;
  token: string;
  ca: string;
  proc: { pid: number };
  json(method: string, p: string, body: unknown): Promise<{ status: number; body: Json }>;
  logs(): string;
  stop(): Promise<unknown>;
}
// biome-ignore lint/suspicious/noExplicitAny: decoded JSON answers
type Json = any;

/** The watch fan-out floor as a Target. */
async function floorTarget(): Promise<Target> {
  const f = await watchFloorServer();
  const url = f.url.replace(/\/$/, '');
  return {
    url,
    token: 'none',
    ca: f.ca,
    proc: { pid: f.pid },
    async json(method, p, body) {
      const r = await fetch(`${url}${p}`, {
        method,
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        tls: { ca: f.ca },
      } as RequestInit);
      return { status: r.status, body: await r.json() };
    },
    logs: () => '',
    stop: async () => f.stop(),
  };
}

async function run(srv: Target, watchers: number, stalled: number, seconds: number) {
  const spec = {
    url: `${srv.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0`,
    token: srv.token,
    ca: srv.ca,
    count: watchers,
    stalled,
    sample: Math.min(watchers, OPTS.sample),
    durationMs: (seconds + 30) * 1000,
  };
  // Bun's fetch allows 256 requests at once unless told otherwise.
  const p = Bun.spawn([process.execPath, path.join(ROOT, 'bench/watchers.ts'), JSON.stringify(spec)], {
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  });
  const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let out = '';
  while (!out.includes('"ready"')) {
    const r = await reader.read();
    if (r.done) throw new Error(`watchers exited: ${out}`);
    out += dec.decode(r.value);
  }
  await Bun.sleep(500);
  // The writer: creates at a fixed rate, not waiting for one before the next (as many clients
  // would); ack times by resourceVersion.
  const acks = new Map<number, number>();
  const latencies: number[] = [];
  const total = OPTS.writesPerSec * seconds;
  const start = clock();
  const pending: Promise<void>[] = [];
  let clientRetries = 0;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / OPTS.writesPerSec;
    const wait = due - clock();
    if (wait > 0) await Bun.sleep(wait);
    const t = clock();
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `w-${stalled}-${i}` },
      data: { i: String(i), pad: 'x'.repeat(800) },
    };
    // The client side (Bun's fetch) sometimes drops a keep-alive connection under this load; retry.
    const post = async (tries: number): Promise<{ status: number; body: { metadata: { resourceVersion: string } } }> => {
      try {
        return await srv.json('POST', '/api/v1/namespaces/default/configmaps', body);
      } catch (e) {
        if (tries <= 0) throw e;
        clientRetries++;
        return post(tries - 1);
      }
    };
    pending.push(
      post(3).then((r) => {
        const done = clock();
        if (r.status !== 201) throw new Error(`write ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        acks.set(Number(r.body.metadata.resourceVersion), done);
        latencies.push(done - t);
      }),
    );
  }
  await Promise.all(pending);
  const elapsed = (clock() - start) / 1000;
  const rss = rssMiB(srv.proc.pid);
  await Bun.sleep(2000);
  p.kill('SIGTERM');
  let rest = out.slice(out.lastIndexOf('}') + 1);
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    rest += dec.decode(r.value);
  }
  const res = JSON.parse(rest.trim().split('\n').pop() as string) as Result;
  const delivery: number[] = [];
  let lost = 0;
  const step = Math.max(1, Math.floor(watchers / spec.sample));
  const sampled = Math.ceil(watchers / step);
  for (const [rvs, ack] of acks) {
    const e = res.perRv[String(rvs)];
    if (!e || e[2] < sampled) {
      lost += sampled - (e?.[2] ?? 0);
      continue;
    }
    delivery.push(e[0] - ack, e[1] - ack);
  }
  // Counting watchers got every write (plus the initial ADDED events) or lost some.
  const counters = watchers - sampled;
  lost += Math.max(0, counters * total - res.lines);
  return { res, delivery, lost, latencies, elapsed, rss, writes: total, clientRetries, sampled };
}

async function main(): Promise<void> {
  const srv: Target = FLOOR
    ? await floorTarget()
    : await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  if (FLOOR) console.log('the floor: bench/watch-floor.ts');
  try {
    // A first object: Bun's fetch resolves a watch response only with its first bytes.
    await srv.json('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'seed' },
      data: {},
    });
    const a = await run(srv, OPTS.watchers, 0, OPTS.seconds);
    console.log(`watchers: ${OPTS.watchers}, writes: ${a.writes} at ${OPTS.writesPerSec}/s over ${a.elapsed.toFixed(1)} s`);
    console.log(
      `events delivered: ${a.res.received + a.res.lines} (${Math.round((a.res.received + a.res.lines) / a.elapsed)}/s), lost: ${a.lost}, duplicated: ${a.res.duplicates}`,
    );
    console.log(
      `delivery latency after write ack (first and last receipt over ${a.sampled} sampled watchers): p50 ${pct(a.delivery, 0.5).toFixed(1)} ms, p99 ${pct(a.delivery, 0.99).toFixed(1)} ms`,
    );
    console.log(
      `write latency: p50 ${pct(a.latencies, 0.5).toFixed(1)} ms, p99 ${pct(a.latencies, 0.99).toFixed(1)} ms; server RSS ${a.rss} MiB`,
    );
    const b = await run(srv, 10, OPTS.stalled, Math.min(OPTS.seconds, 10));
    console.log(
      `with ${OPTS.stalled} stalled watchers: write latency p50 ${pct(b.latencies, 0.5).toFixed(1)} ms, p99 ${pct(b.latencies, 0.99).toFixed(1)} ms; server RSS ${b.rss} MiB; lost ${b.lost}`,
    );
  } catch (e) {
    console.error(`server log tail:\n${srv.logs().slice(-3000)}`);
    throw e;
  } finally {
    await srv.stop();
  }
}

await main();
