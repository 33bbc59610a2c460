/**
 * Watches that select one node's pods each (as every kubelet's does: fieldSelector
 * spec.nodeName=<node>), against the real server: what they cost a pod write.
 *
 *   bun bench/node-watchers.ts [--watchers=0,1000,5000] [--pods=5000] [--rate=1000] [--seconds=8]
 *
 * For each watcher count W, a fresh server gets PODS pods spread over W nodes (pod i on node
 * i % W); each node's pods are listed once (fieldSelector, resourceVersion=0: from the watch
 * cache; server CPU per list); then W watches from bench/watchers.ts (a separate process, raw TLS sockets), one per node,
 * from the current resourceVersion, and then RATE merge patches per second of the pods' labels,
 * in turn: 2 s of warm-up, then SECONDS measured. Prints the server's CPU per patch (all
 * threads) and the patches' latency in the measured phase, and the events the watchers received
 * (parsed, with duplicates counted): each patch concerns exactly one node, so they must equal the
 * patches (none lost, none sent to another node's watcher), and each event's delivery: from the
 * patch's acknowledgement (its answer read, which carries the new resourceVersion) to the
 * watcher's receipt of that resourceVersion, over the measured phase's patches (issue 42 item
 * 6: p99 ≤ 50 ms with 5,000 watchers at 1,000 writes/s). Both clocks are the same machine's
 * wall clock (performance.timeOrigin + now) in two processes.
 */
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { createPods, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const counts = (arg('watchers') ?? '0,1000,5000').split(',').map(Number);
const PODS = Number(arg('pods') ?? 5000);
const RATE = Number(arg('rate') ?? 1000);
const SECONDS = Number(arg('seconds') ?? 8);
const ROOT = path.resolve(import.meta.dir, '..');

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
}

for (const W of counts) {
  const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  try {
    const nodes = Math.max(W, 1);
    await createPods(srv, PODS, (i) => `node-${i % nodes}`);
    const list = (await srv.json('GET', '/api/v1/namespaces/bench/pods?limit=1')).body as { metadata: { resourceVersion: string } };
    if (W > 0) {
      // Every kubelet lists its pods first (resourceVersion=0: from the watch cache), 16 at a time.
      const cpu0 = threadCpu(srv.proc.pid);
      const started = performance.now();
      let wrong = 0;
      for (let i = 0; i < W; i += 16)
        await Promise.all(
          Array.from({ length: Math.min(16, W - i) }, async (_, j) => {
            const node = i + j;
            const r = await srv.json('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-${node}&resourceVersion=0`);
            const want = Math.floor(PODS / W) + (node < PODS % W ? 1 : 0);
            if (r.status !== 200 || (r.body as { items: unknown[] }).items.length !== want) wrong++;
          }),
        );
      const ms = performance.now() - started;
      const cpu1 = threadCpu(srv.proc.pid);
      let cpu = 0;
      for (const [k, v] of cpu1) cpu += v - (cpu0.get(k) ?? 0);
      console.log(
        `${W} kubelet lists of their pods (of ${PODS}): ${(cpu / W).toFixed(1)} us of server CPU each, ${Math.round((W / ms) * 1000)} lists/s, ${wrong} wrong`,
      );
    }
    let watchers: ReturnType<typeof Bun.spawn> | undefined;
    let reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> } | undefined;
    let out = '';
    if (W > 0) {
      const spec = {
        url: `${srv.url}/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-{{i}}&resourceVersion=${list.metadata.resourceVersion}`,
        token: srv.token,
        ca: srv.ca,
        count: W,
        stalled: 0,
        sample: W,
        durationMs: (SECONDS + 120) * 1000,
      };
      watchers = Bun.spawn([process.execPath, path.join(ROOT, 'bench/watchers.ts'), JSON.stringify(spec)], {
        stdout: 'pipe',
        stderr: 'inherit',
      });
      reader = (watchers.stdout as ReadableStream<Uint8Array>).getReader();
      while (!out.includes('"ready"')) {
        const r = await reader.read();
        if (r.done) throw new Error(`watchers exited: ${out}`);
        out += new TextDecoder().decode(r.value);
      }
      await Bun.sleep(1000);
    }
    // RATE patches per second for `seconds`, each pod in turn (label `round` = the patch's number).
    let k = 0;
    const clock = () => performance.timeOrigin + performance.now();
    /** Acknowledgement times of the measured phase's patches, by the resourceVersion they made. */
    let acks: Map<number, number> | undefined;
    const patches = async (seconds: number) => {
      const latencies: number[] = [];
      let sent = 0;
      let failed = 0;
      const started = performance.now();
      const first = k;
      const inflight = new Set<Promise<void>>();
      while (performance.now() - started < seconds * 1000) {
        const due = started + ((k - first) * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 1) await Bun.sleep(wait);
        const t = performance.now();
        const p = srv
          .fetch(`/api/v1/namespaces/bench/pods/pod-${k % PODS}`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/merge-patch+json' },
            body: JSON.stringify({ metadata: { labels: { round: String(k) } } }),
          })
          .then(async (r) => {
            const body = await r.text();
            const done = clock();
            if (r.ok) {
              latencies.push(performance.now() - t);
              const rv = /"resourceVersion":"(\d+)"/.exec(body)?.[1];
              if (acks && rv) acks.set(Number(rv), done);
            } else failed++;
          })
          .catch(() => {
            // A connection the server cut (overload): counted, not fatal to the run.
            failed++;
          })
          .finally(() => inflight.delete(p));
        inflight.add(p);
        sent++;
        k++;
      }
      await Promise.all(inflight);
      return { latencies, sent, failed, elapsed: (performance.now() - started) / 1000 };
    };
    // Warm-up (the server's JIT compiles the patch and watch paths), then the measured phase.
    const warm = await patches(2);
    const cpu0 = threadCpu(srv.proc.pid);
    const measured = new Map<number, number>();
    acks = measured;
    const { latencies, sent, failed, elapsed } = await patches(SECONDS);
    acks = undefined;
    const cpu1 = threadCpu(srv.proc.pid);
    let cpu = 0;
    for (const [k, v] of cpu1) cpu += v - (cpu0.get(k) ?? 0);
    // Consistent lists (no resourceVersion) of one node's pods while the patches go on, one at a
    // time: the newest state, from the watch cache once it holds the newest revision.
    let listLine = '';
    if (W > 0) {
      const lat: number[] = [];
      let wrong = 0;
      const during = patches(4);
      const until = performance.now() + 4000;
      for (let i = 0; performance.now() < until; i++) {
        const node = (i * 7919) % W;
        const t = performance.now();
        const r = await srv.json('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-${node}`);
        lat.push(performance.now() - t);
        const want = Math.floor(PODS / W) + (node < PODS % W ? 1 : 0);
        if (r.status !== 200 || (r.body as { items: unknown[] }).items.length !== want) wrong++;
      }
      const d = await during;
      warm.sent += d.sent;
      warm.failed += d.failed;
      listLine = `; consistent lists of a node's pods during the patches: ${lat.length} in 4 s, p50 ${pct(lat, 0.5).toFixed(2)} ms p99 ${pct(lat, 0.99).toFixed(2)} ms, ${wrong} wrong`;
    }
    let lines = Number.NaN;
    let deliveryLine = '';
    if (watchers && reader) {
      await Bun.sleep(2000);
      watchers.kill('SIGTERM');
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        out += new TextDecoder().decode(r.value);
      }
      const res = JSON.parse(out.trim().split('\n').pop() as string) as {
        received: number;
        duplicates: number;
        perRv: Record<string, [number, number, number]>;
      };
      lines = res.received;
      if (res.duplicates > 0) console.log(`${res.duplicates} duplicated events`);
      const delivery: number[] = [];
      let missing = 0;
      for (const [rv, ack] of measured) {
        const e = res.perRv[String(rv)];
        if (!e) missing++;
        else delivery.push(e[0] - ack);
      }
      deliveryLine = `; delivery after the patch's answer (${delivery.length} measured patches, ${missing} never received): p50 ${pct(delivery, 0.5).toFixed(2)} ms p99 ${pct(delivery, 0.99).toFixed(2)} ms max ${pct(delivery, 1).toFixed(2)} ms`;
    }
    console.log(
      `${W} node watchers, ${PODS} pods: ${Math.round(sent / elapsed)} patches/s, server CPU ${(cpu / Math.max(1, sent - failed)).toFixed(1)} us per patch, latency p50 ${pct(latencies, 0.5).toFixed(2)} ms p99 ${pct(latencies, 0.99).toFixed(2)} ms, failed ${failed}; events received ${Number.isNaN(lines) ? '-' : lines} of ${W > 0 ? warm.sent - warm.failed + sent - failed : 0} (warm-up included)${deliveryLine}${listLine}`,
    );
  } finally {
    await srv.stop();
  }
}
