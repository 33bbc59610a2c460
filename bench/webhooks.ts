/**
 * What an admission webhook adds to a create (issue 38's bench), against a real server:
 *
 * 1. overhead: dry-run ConfigMap creates at a fixed rate (default 1,000/s, bench/load.ts's
 *    paced client, latency counted from when each request was due) with no webhook and with one
 *    validating webhook answering at once (a Bun HTTPS server in its own process), alternating
 *    over rounds in the same run. Reported: the server's CPU per create (all threads, /proc), the
 *    CPU it adds, p50/p99 and the p99 added, and how many TCP connections the webhook server saw
 *    (the client's source ports): reused connections keep that to a handful.
 * 2. a hanging webhook: a validating webhook on Secrets that never answers (timeoutSeconds 5,
 *    failurePolicy Ignore); 64 Secret creates left hanging on it while GETs of a namespace run at
 *    a fixed rate; their p99 against the same GETs with nothing hanging, in the same run.
 *
 * 3. with --floor, the overhead of 1 again against the floor: bench/webhook-floor-server.ts, a bare
 *    TLS server that parses the create, calls the webhook through the server's own client and
 *    answers (the least a webhook call adds here), with the server's figures over the floor's.
 *
 *   bun bench/webhooks.ts [--rounds=N] [--phase-ms=MS] [--rate=N] [--pin] [--floor] [--no-hang]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { servingCerts } from '../src/auth/certs';
import { startServer } from '../test/helpers/server';
import { load, serverCpuPerRequest, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 3);
const PHASE_MS = Number(arg('phase-ms') ?? 6000);
const RATE = Number(arg('rate') ?? 1000);
/** --pin: the server on core 0, everything else (this process, the load clients, the webhook server) on core 1. */
const PIN = process.argv.includes('--pin');
/** --floor: the same rounds against bench/webhook-floor-server.ts (pinned as the server), and the ratio. */
const FLOOR = process.argv.includes('--floor');
const pin = (pid: number, core: number) => {
  if (PIN) Bun.spawnSync(['taskset', '-a', '-p', '-c', String(core), String(pid)], { stdout: 'ignore' });
};
pin(process.pid, 1);

/** The webhook server: allows at once on /allow, never answers /hang; GET /stats counts requests and connections. */
async function webhookServer(): Promise<{
  port: number;
  ca: string;
  stats: () => Promise<{ requests: number; connections: number }>;
  stop: () => void;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-'));
  const certs = await servingCerts(dir, '127.0.0.1');
  fs.rmSync(dir, { recursive: true, force: true });
  const script = `
const ports = new Set(); let requests = 0;
const s = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, tls: { cert: process.env.C, key: process.env.K },
  async fetch(req, server) {
    const p = new URL(req.url).pathname;
    if (p === '/stats') return Response.json({ requests, connections: ports.size });
    const ip = server.requestIP(req); if (ip) ports.add(ip.port);
    const review = await req.json();
    if (p === '/hang') await new Promise(() => {});
    requests++;
    return Response.json({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } });
  } });
console.log(s.port);`;
  const proc = Bun.spawn([process.execPath, '-e', script], { env: { ...process.env, C: certs.cert, K: certs.key }, stdout: 'pipe' });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const ca = certs.ca ?? '';
  return {
    port,
    ca,
    stats: async () => (await (await fetch(`https://127.0.0.1:${port}/stats`, { tls: { ca } } as RequestInit)).json()) as never,
    stop: () => proc.kill(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

type Phase = { ops: number; errors: number; p50: number; p99: number; cpu: number };

/**
 * Creates with no webhook and with one, alternating over the rounds (which goes first swaps each
 * round); answers the medians' differences: CPU per create added (us), p50 and p99 added (ms).
 */
async function overhead(
  label: string,
  setWebhook: (on: boolean) => Promise<void>,
  creates: (prefix: string, ms: number) => Promise<Phase>,
): Promise<{ cpu: number; p50: number; p99: number }> {
  await creates(`${label}-warm`, 2000);
  const results: Record<'none' | 'one', { cpu: number[]; p50: number[]; p99: number[] }> = {
    none: { cpu: [], p50: [], p99: [] },
    one: { cpu: [], p50: [], p99: [] },
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of round % 2 ? (['none', 'one'] as const) : (['one', 'none'] as const)) {
      await setWebhook(c === 'one');
      const r = await creates(`${label}-r${round}-${c}`, PHASE_MS);
      results[c].cpu.push(r.cpu);
      results[c].p50.push(r.p50);
      results[c].p99.push(r.p99);
      console.log(
        `  ${label} round ${round} ${c.padEnd(4)}: ${r.ops} creates/s (${r.errors} errors), ${r.cpu.toFixed(1)} us CPU/create, p50 ${r.p50} ms, p99 ${r.p99} ms`,
      );
    }
  }
  const m = (c: 'none' | 'one', k: 'cpu' | 'p50' | 'p99') => median(results[c][k]);
  console.log(
    `  ${label} median: none ${m('none', 'cpu').toFixed(1)} us CPU/create, p99 ${m('none', 'p99')} ms; one webhook ${m('one', 'cpu').toFixed(1)} us, p99 ${m('one', 'p99')} ms`,
  );
  return { cpu: m('one', 'cpu') - m('none', 'cpu'), p50: m('one', 'p50') - m('none', 'p50'), p99: m('one', 'p99') - m('none', 'p99') };
}

/** bench/webhook-floor-server.ts in its own process, calling `hook`'s /allow. */
async function floorServer(hook: { port: number; ca: string }): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-floor-'));
  const certs = await servingCerts(dir, '127.0.0.1');
  fs.rmSync(dir, { recursive: true, force: true });
  const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, 'webhook-floor-server.ts')], {
    env: { ...process.env, C: certs.cert, K: certs.key, HOOK_URL: `https://127.0.0.1:${hook.port}/allow`, HOOK_CA: hook.ca },
    stdout: 'pipe',
  });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  return { url: `https://127.0.0.1:${port}`, ca: certs.ca ?? '', pid: proc.pid, stop: () => proc.kill() };
}

const hook = await webhookServer();
const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
pin(srv.proc.pid, 0);
try {
  const auth = { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' };
  await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  const ADM = '/apis/admissionregistration.k8s.io/v1';
  const caBundle = Buffer.from(hook.ca).toString('base64');
  const webhook = (name: string, p: string, resources: string[], extra: Record<string, unknown> = {}) => ({
    name,
    clientConfig: { url: `https://127.0.0.1:${hook.port}${p}`, caBundle },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  });
  const setWebhook = async (on: boolean) => {
    await srv.json('DELETE', `${ADM}/validatingwebhookconfigurations/bench-allow`);
    if (on)
      await srv.json('POST', `${ADM}/validatingwebhookconfigurations`, {
        metadata: { name: 'bench-allow' },
        webhooks: [webhook('allow.bench.example.com', '/allow', ['configmaps'])],
      });
    await Bun.sleep(300);
  };
  const creates = async (prefix: string, ms: number) => {
    const before = threadCpu(srv.proc.pid);
    const r = await load({
      url: `${srv.url}/api/v1/namespaces/bench/configmaps?dryRun=All`,
      method: 'POST',
      headers: auth,
      ca: srv.ca,
      bodyTemplate: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-{{i}}` }, data: { a: 'b' } }),
      durationMs: ms,
      concurrency: 64,
      rate: RATE,
    });
    return { ...r, cpu: serverCpuPerRequest(before, srv.proc.pid, r.ok) };
  };
  console.log(`overhead of one validating webhook: ${ROUNDS} rounds of ${PHASE_MS} ms per configuration, ${RATE} dry-run creates/s`);
  const server = await overhead('server', setWebhook, creates);
  const stats = await hook.stats();
  console.log(
    `webhook added: ${server.cpu.toFixed(1)} us server CPU per create (target <= 150), p99 +${server.p99.toFixed(2)} ms (target <= 2), ` +
      `p50 +${server.p50.toFixed(2)} ms; the webhook server saw ${stats.requests} reviews over ${stats.connections} connections`,
  );
  if (FLOOR) {
    const floor = await floorServer(hook);
    pin(floor.pid, 0);
    try {
      const setFloor = async (on: boolean) => {
        await fetch(`${floor.url}/mode?webhook=${on ? 'on' : 'off'}`, { method: 'POST', tls: { ca: floor.ca } } as RequestInit);
      };
      const floorCreates = async (prefix: string, ms: number) => {
        const before = threadCpu(floor.pid);
        const r = await load({
          url: `${floor.url}/api/v1/namespaces/bench/configmaps`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          ca: floor.ca,
          bodyTemplate: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-{{i}}` }, data: { a: 'b' } }),
          durationMs: ms,
          concurrency: 64,
          rate: RATE,
        });
        return { ...r, cpu: serverCpuPerRequest(before, floor.pid, r.ok) };
      };
      console.log('the floor (bench/webhook-floor-server.ts: parse, the same webhook client, answer), the same load:');
      const f = await overhead('floor', setFloor, floorCreates);
      console.log(
        `floor: the webhook added ${f.cpu.toFixed(1)} us CPU per create, p99 +${f.p99.toFixed(2)} ms, p50 +${f.p50.toFixed(2)} ms; ` +
          `server over floor: CPU added ×${(server.cpu / f.cpu).toFixed(2)}, p99 added ×${(server.p99 / f.p99).toFixed(2)}`,
      );
    } finally {
      floor.stop();
    }
  }

  // 2. A hanging webhook and everyone else.
  await setWebhook(false);
  const gets = () =>
    load({
      url: `${srv.url}/api/v1/namespaces/default`,
      method: 'GET',
      headers: auth,
      ca: srv.ca,
      durationMs: 4000,
      concurrency: 32,
      rate: 500,
    });
  await srv.json('POST', `${ADM}/validatingwebhookconfigurations`, {
    metadata: { name: 'bench-hang' },
    webhooks: [webhook('hang.bench.example.com', '/hang', ['secrets'], { timeoutSeconds: 5, failurePolicy: 'Ignore' })],
  });
  await Bun.sleep(300);
  const quiet: number[] = [];
  const rounds = process.argv.includes('--no-hang') ? 0 : ROUNDS;
  const hanging: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    quiet.push((await gets()).p99);
    const pending = Array.from({ length: 64 }, (_, i) =>
      srv.json('POST', '/api/v1/namespaces/bench/secrets?dryRun=All', { metadata: { name: `s-${round}-${i}` } }),
    );
    await Bun.sleep(200);
    const t0 = performance.now();
    const r = await gets();
    hanging.push(r.p99);
    const answered = await Promise.all(pending);
    console.log(
      `  round ${round}: GET p99 ${quiet.at(-1)} ms quiet, ${r.p99} ms with 64 creates hanging on the webhook (${r.errors} errors); ` +
        `the creates answered ${answered.every((a) => a.status === 201) ? '201 (failurePolicy Ignore)' : answered.map((a) => a.status).join(',')} after ${((performance.now() - t0) / 1000 + 0.2).toFixed(1)} s`,
    );
  }
  console.log(`hanging webhook: other requests' p99 ${median(hanging)} ms against ${median(quiet)} ms quiet (median of ${ROUNDS})`);
} finally {
  await srv.stop();
  hook.stop();
}
