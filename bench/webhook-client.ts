/**
 * The webhook client's mechanism against Bun's fetch (why src/admission/webhook/http1.ts
 * exists): the same AdmissionReview POSTed to a Bun HTTPS server in another process, at a fixed
 * rate (default 1,000 calls/s, as bench/webhooks.ts drives the server) and flat out (16 in
 * flight), by `post1` (a keep-alive socket of the event loop's own) and by a `Bun.FetchSession`
 * (what the client used before: its calls run on Bun's HTTP client thread). Rounds alternate;
 * the figure is this process's CPU per call (all its threads, so the HTTP thread counts).
 *
 *   bun bench/webhook-client.ts [--rounds=N] [--calls=N] [--rate=N]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { post1 } from '../src/admission/webhook/http1';
import { generateCertificates } from '../src/auth/certs';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 3);
const CALLS = Number(arg('calls') ?? 5000);
const RATE = Number(arg('rate') ?? 1000);

const certs = await generateCertificates(['127.0.0.1']);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-client-'));
const script = path.join(dir, 'server.ts');
fs.writeFileSync(
  script,
  `const s = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, tls: { cert: process.env.C, key: process.env.K },
  async fetch(req) { const r = await req.json();
    return Response.json({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: r.request.uid, allowed: true } }); } });
console.log(s.port);`,
);
const proc = Bun.spawn([process.execPath, script], { env: { ...process.env, C: certs.cert, K: certs.key }, stdout: 'pipe' });
const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
const port = Number(new TextDecoder().decode((await reader.read()).value).trim());

const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    operation: 'CREATE',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'bench' }, data: { a: 'b'.repeat(400) } },
  },
});
const headers = { 'Content-Type': 'application/json', Accept: 'application/json, */*' };
const session = new Bun.FetchSession({ tls: { ca: certs.ca } });
const url = `https://127.0.0.1:${port}/allow?timeout=10s`;
const clients: Record<string, () => Promise<unknown>> = {
  post1: async () =>
    JSON.parse(
      (
        await post1({
          host: '127.0.0.1',
          port,
          path: '/allow?timeout=10s',
          hostHeader: `127.0.0.1:${port}`,
          ca: certs.ca,
          body: review,
          headers,
          timeoutMs: 10_000,
        })
      ).body,
    ),
  fetch: async () =>
    JSON.parse(await (await session.fetch(url, { method: 'POST', body: review, headers, signal: AbortSignal.timeout(10_000) })).text()),
};

const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** CPU per call: paced (RATE calls/s, each when due) or flat out (16 in flight). */
async function measure(call: () => Promise<unknown>, paced: boolean): Promise<number> {
  const c0 = cpu();
  if (paced) {
    const t0 = performance.now();
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < CALLS; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await Bun.sleep(wait);
      pending.push(call());
    }
    await Promise.all(pending);
  } else {
    let i = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (i++ < CALLS) await call();
      }),
    );
  }
  return (cpu() - c0) / CALLS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
try {
  for (const c of Object.values(clients)) for (let i = 0; i < 500; i++) await c();
  const results: Record<string, number[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? ['post1', 'fetch'] : ['fetch', 'post1'];
    for (const name of order)
      for (const paced of [true, false]) {
        const us = await measure(clients[name] as () => Promise<unknown>, paced);
        const key = `${name} ${paced ? `paced ${RATE}/s` : '16 in flight'}`;
        results[key] = [...(results[key] ?? []), us];
        console.log(`  round ${round} ${key}: ${us.toFixed(1)} us CPU/call`);
      }
  }
  for (const [k, v] of Object.entries(results)) console.log(`median ${k}: ${median(v).toFixed(1)} us CPU/call`);
} finally {
  proc.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
