/**
 * What a create costs the server's own code, without TLS, HTTP or a load generator process:
 *
 *   bun bench/in-process.ts [--op=create|smp|apply|get] [--objects=N] [--prepare=smp] [--rounds=N] [--ms=MS] [--profile=DIR]
 *
 * (IN_PROCESS_LOG=FILE keeps each round's server stderr in FILE.<round>; IN_PROCESS_SERVER_ARGS adds
 * server flags, e.g. `--pack-cold-values-after=5s` to apply to cold objects; IN_PROCESS_WINDOW_MS=N
 * logs each N ms window's rate and CPU per request to the server's stderr. IN_PROCESS_LOOPS=N runs N
 * request loops instead of 64; IN_PROCESS_APF=1 keeps the server's default in-flight limits, so
 * priority and fairness queue the requests as under wrk, instead of turning the limits off.
 * --prepare=smp: every object gets one strategic merge patch from another manager before the
 * phases, as bench/api.ts's objects have when it applies.)
 *
 * starts the real server (src/main.ts, embedded store, durable) with this file as a preload.
 * The preload keeps the fetch handler the front end gives Bun.serve; on SIGUSR2 it runs 64
 * concurrent loops of creates of 1 KB ConfigMaps through that handler in the server's own
 * process (2 s of warm-up, then MS; `--op=smp` or `apply`: strategic merge or apply patches of
 * N ConfigMaps created first (10,000), each in turn, as bench/api.ts sends them; `--op=get`: GETs of them in turn), and writes the rate and the CPU per request of each of the
 * process's threads (from /proc) to a file the driver prints. The loops' own work (a Request
 * per create, reading the answer) is included; the runtime's HTTP parsing, TLS and sockets are
 * not. With only the server's thread busy, a CPU profile (--profile) is sampled evenly, unlike
 * one taken under wrk where the two cores are saturated.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { threadCpu } from './harness';

const PRELOAD = process.env.IN_PROCESS_BENCH_OUT;

interface Result {
  ops: number;
  n: number;
  failed: number;
  perThread: [string, number][];
}

if (PRELOAD) {
  type Fetch = (req: Request, server: unknown) => Response | Promise<Response>;
  const serve = Bun.serve;
  let handler: { fetch: Fetch; server: unknown } | undefined;
  (Bun as unknown as { serve: (o: unknown) => unknown }).serve = (opts: unknown) => {
    const server = serve(opts as Parameters<typeof Bun.serve>[0]);
    handler = { fetch: (opts as { fetch: Fetch }).fetch, server };
    return server;
  };
  process.on('SIGUSR2', async () => {
    const cfg = JSON.parse(fs.readFileSync(`${PRELOAD}.cfg`, 'utf8')) as {
      token: string;
      ms: number;
      op: string;
      objects: number;
      prepare: string;
    };
    if (!handler) throw new Error('in-process bench: Bun.serve was not called');
    const { fetch, server } = handler;
    const headers = { authorization: `Bearer ${cfg.token}`, 'content-type': 'application/json' };
    const value = 'y'.repeat(900);
    const base = 'https://127.0.0.1/api/v1/namespaces/default/configmaps';
    const create = (name: string) => {
      const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"v":"${value}"}}`;
      return new Request(base, { method: 'POST', headers, body });
    };
    // The patch phases' requests, as bench/api.ts sends them, over PATCHED existing objects in
    // turn (bench/api.ts patches each object once: --objects above the patches sent does that).
    const PATCHED = cfg.objects;
    let next = 0;
    const request = (prefix: string, w: number, i: number): Request => {
      const k = next++ % PATCHED;
      if (cfg.op === 'get') return new Request(`${base}/p-${k}`, { headers: { authorization: headers.authorization } });
      if (cfg.op === 'smp')
        return new Request(`${base}/p-${k}`, {
          method: 'PATCH',
          headers: { ...headers, 'content-type': 'application/strategic-merge-patch+json' },
          body: `{"metadata":{"labels":{"patched":"${prefix}-${i}"}}}`,
        });
      if (cfg.op === 'apply')
        return new Request(`${base}/p-${k}?fieldManager=bench&force=true`, {
          method: 'PATCH',
          headers: { ...headers, 'content-type': 'application/apply-patch+yaml' },
          body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p-${k}","labels":{"applied":"${prefix}${i}"}},"data":{"v":"z"}}`,
        });
      return create(`${prefix}-${w}-${i}`);
    };
    let done = 0;
    const run = async (prefix: string, ms: number) => {
      let n = 0;
      let failed = 0;
      const end = performance.now() + ms;
      await Promise.all(
        Array.from({ length: Number(process.env.IN_PROCESS_LOOPS ?? 64) }, async (_, w) => {
          for (let i = 0; performance.now() < end; i++) {
            const res = await fetch(request(prefix, w, i), server);
            await res.arrayBuffer();
            if (res.status < 300) n++;
            else failed++;
            done++;
          }
        }),
      );
      return { n, failed };
    };
    if (cfg.op !== 'create')
      for (let k = 0; k < PATCHED; k += 64)
        await Promise.all(
          Array.from({ length: Math.min(64, PATCHED - k) }, async (_, j) => (await fetch(create(`p-${k + j}`), server)).arrayBuffer()),
        );
    // --prepare=smp: each object gets one strategic merge patch from another manager first, as
    // bench/api.ts's objects have when its apply phase comes (two managers, a superseded version).
    if (cfg.op !== 'create' && cfg.prepare === 'smp')
      for (let k = 0; k < PATCHED; k += 64)
        await Promise.all(
          Array.from({ length: Math.min(64, PATCHED - k) }, async (_, j) => {
            const req = new Request(`${base}/p-${k + j}`, {
              method: 'PATCH',
              headers: { ...headers, 'content-type': 'application/strategic-merge-patch+json' },
              body: `{"metadata":{"labels":{"patched":"yes-${k + j}"}}}`,
            });
            return (await fetch(req, server)).arrayBuffer();
          }),
        );
    await run('warm', 2000);
    const c0 = threadCpu(process.pid);
    const t0 = performance.now();
    // IN_PROCESS_WINDOW_MS: the rate and CPU per request of each window, on stderr (does a request
    // cost more as the objects grow in number?).
    const windowMs = Number(process.env.IN_PROCESS_WINDOW_MS ?? 0);
    let last = { n: done, at: t0, cpu: c0 }; // the warm-up's requests are not the first window's
    const timer =
      windowMs > 0
        ? setInterval(() => {
            const cpu = threadCpu(process.pid);
            const now = performance.now();
            const d = done - last.n;
            const us = (m: Map<string, number>) => [...m.values()].reduce((a, v) => a + v, 0);
            const main = (cpu.get('bun.exe') ?? 0) - (last.cpu.get('bun.exe') ?? 0);
            const jit = (cpu.get('JITWorker') ?? 0) - (last.cpu.get('JITWorker') ?? 0);
            console.error(
              `window ${((now - t0) / 1000).toFixed(0)} s: ${Math.round(d / ((now - last.at) / 1000))}/s, ${done} done, CPU ${((us(cpu) - us(last.cpu)) / Math.max(d, 1)).toFixed(1)} us/request (main thread ${(main / Math.max(d, 1)).toFixed(1)}, JIT ${(jit / Math.max(d, 1)).toFixed(1)})`,
            );
            last = { n: done, at: now, cpu };
          }, windowMs)
        : undefined;
    const r = await run('cm', cfg.ms);
    clearInterval(timer);
    const elapsed = performance.now() - t0;
    const c1 = threadCpu(process.pid);
    const perThread = [...c1].map(([k, v]) => [k, (v - (c0.get(k) ?? 0)) / Math.max(r.n, 1)] as [string, number]);
    const out: Result = { ops: Math.round(r.n / (elapsed / 1000)), n: r.n, failed: r.failed, perThread };
    fs.writeFileSync(`${PRELOAD}.tmp`, JSON.stringify(out));
    fs.renameSync(`${PRELOAD}.tmp`, PRELOAD);
  });
} else {
  const { startServer } = await import('../test/helpers/server');
  const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const rounds = Number(arg('rounds') ?? 2);
  const ms = Number(arg('ms') ?? 6000);
  const profile = arg('profile');
  const op = arg('op') ?? 'create';
  const objects = Number(arg('objects') ?? 10_000);
  const prepare = arg('prepare') ?? '';
  if (!['create', 'smp', 'apply', 'get'].includes(op)) throw new Error(`--op: create, smp, apply or get, not ${op}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-in-process-'));
  const out = path.join(dir, 'result.json');
  process.env.SVC_SERVER_BUN_ARGS = [
    `--preload ${import.meta.path}`,
    profile ? `--cpu-prof --cpu-prof-dir=${path.resolve(profile)}` : '',
    process.env.SVC_SERVER_BUN_ARGS ?? '',
  ].join(' ');
  const totals: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const srv = await startServer({
      env: { IN_PROCESS_BENCH_OUT: out },
      args: [
        ...(process.env.IN_PROCESS_APF ? [] : ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0']),
        ...(process.env.IN_PROCESS_SERVER_ARGS ?? '').split(' ').filter((a) => a !== ''),
      ],
    });
    fs.writeFileSync(`${out}.cfg`, JSON.stringify({ token: srv.token, ms, op, objects, prepare }));
    fs.rmSync(out, { force: true });
    srv.proc.kill('SIGUSR2');
    const deadline = Date.now() + ms + 60_000;
    while (!fs.existsSync(out)) {
      if (Date.now() > deadline || srv.proc.exitCode !== null) throw new Error(`no result: ${srv.logs()}`);
      await Bun.sleep(100);
    }
    const r = JSON.parse(fs.readFileSync(out, 'utf8')) as Result;
    await srv.stop();
    // The server's stderr (BUN_JSC_logGC=1 prints each collection there).
    if (process.env.IN_PROCESS_LOG) fs.writeFileSync(`${process.env.IN_PROCESS_LOG}.${round}`, srv.logs());
    const threads = r.perThread.filter(([, v]) => v >= 0.2).sort((a, b) => b[1] - a[1]);
    const total = threads.reduce((a, [, v]) => a + v, 0);
    totals.push(total);
    console.log(
      `round ${round}: ${op} ${r.ops}/s (${r.n}, failed ${r.failed}), CPU ${total.toFixed(1)} us/request (${threads.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')})`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
  totals.sort((a, b) => a - b);
  console.log(`median CPU per ${op}: ${(totals[Math.floor(totals.length / 2)] as number).toFixed(1)} us over ${rounds} rounds`);
}
