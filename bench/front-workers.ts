/**
 * Design measurement for the create target (issue "API server core"): would a front end on
 * worker threads pay for itself on this 2-core machine?
 *
 * A synthetic create server over TLS, driven by wrk (-t1 -c64) with 1 KB ConfigMap bodies:
 *   single  one thread: parse the body, FRONT us of CPU work (validation, managedFields,
 *           encoding), COMMIT us (store transaction, WAL, watch cache), stringify the reply;
 *   split   WORKERS worker threads each serve the port (Bun.serve reusePort) and do everything
 *           but the commit, which they hand to the main thread (postMessage round trip).
 * The work is fixed CPU (a calibrated loop), not wall time. FRONT/COMMIT default to 40/25 us,
 * the split measured in the real server's profile (bench/README.md). `bun bench/front-workers.ts`
 * prints req/s for both and their ratio; needs /usr/bin/wrk.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { servingCerts } from '../src/auth/certs';

const FRONT = Number(process.env.FRONT ?? 40);
const COMMIT = Number(process.env.COMMIT ?? 25);
const WORKERS = Number(process.env.WORKERS ?? 2);
const WRK = '/usr/bin/wrk';

// ---- the synthetic work -----------------------------------------------------------------------
let sink = 0;
let iters = 1000;
function unit(): void {
  let x = 0;
  for (let i = 0; i < iters; i++) x = (x * 31 + i) | 0;
  sink ^= x;
}
{
  const t = performance.now();
  for (let i = 0; i < 20000; i++) unit();
  iters = Math.max(1, Math.round(1000 / (((performance.now() - t) * 1000) / 20000)));
}
const work = (us: number) => {
  for (let i = 0; i < us; i++) unit();
};
const reply = (o: { metadata: Record<string, unknown> }) => {
  o.metadata.uid = String(sink & 1);
  return new Response(JSON.stringify(o), { status: 201, headers: { 'content-type': 'application/json' } });
};

// ---- roles ----------------------------------------------------------------------------------
const role = process.env.FW_ROLE;
const tls = () => ({ cert: process.env.FW_CERT as string, key: process.env.FW_KEY as string });

if (role === 'single') {
  Bun.serve({
    port: Number(process.env.FW_PORT),
    hostname: '127.0.0.1',
    tls: tls(),
    async fetch(req) {
      const o = JSON.parse(await req.text());
      work(FRONT);
      work(COMMIT);
      return reply(o);
    },
  });
  console.log('ready');
} else if (role === 'front') {
  // A worker: everything but the commit.
  const waiting = new Map<number, () => void>();
  let next = 0;
  (globalThis as unknown as Worker).onmessage = (ev: MessageEvent) => {
    const done = waiting.get(ev.data.id);
    waiting.delete(ev.data.id);
    done?.();
  };
  Bun.serve({
    port: Number(process.env.FW_PORT),
    hostname: '127.0.0.1',
    reusePort: true,
    tls: tls(),
    async fetch(req) {
      const o = JSON.parse(await req.text());
      work(FRONT);
      const id = next++;
      const committed = new Promise<void>((resolve) => waiting.set(id, resolve));
      postMessage({ id, key: o.metadata.name, text: JSON.stringify(o) });
      await committed;
      return reply(o);
    },
  });
} else if (role === 'split') {
  for (let i = 0; i < WORKERS; i++) {
    const w = new Worker(import.meta.path, { env: { ...process.env, FW_ROLE: 'front' } });
    w.onmessage = (ev: MessageEvent) => {
      work(COMMIT);
      w.postMessage({ id: ev.data.id });
    };
  }
  await Bun.sleep(1500);
  console.log('ready');
} else {
  await main();
}

async function serveAndLoad(mode: 'single' | 'split', cert: string, key: string): Promise<number> {
  const port = 30000 + Math.floor(Math.random() * 20000);
  const p = Bun.spawn([process.execPath, import.meta.path], {
    env: { ...process.env, FW_ROLE: mode, FW_PORT: String(port), FW_CERT: cert, FW_KEY: key },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  try {
    const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // "ready"
    const script = path.join(os.tmpdir(), `fw-${process.pid}.lua`);
    fs.writeFileSync(
      script,
      `local n = 0
local pad = string.rep("y", 900)
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/namespaces/default/configmaps", {["Content-Type"]="application/json"}, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-' .. n .. '"},"data":{"v":"' .. pad .. '"}}')
end
`,
    );
    const w = Bun.spawnSync([WRK, '-t1', '-c64', '-d8s', '-s', script, `https://127.0.0.1:${port}/`]);
    fs.rmSync(script, { force: true });
    const out = w.stdout.toString();
    return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  } finally {
    p.kill();
    await p.exited;
  }
}

async function main(): Promise<void> {
  if (!fs.existsSync(WRK)) {
    console.log('wrk not installed (apt-get install wrk): nothing measured');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fw-certs-'));
  try {
    const certs = await servingCerts(dir, '127.0.0.1');
    console.log(`synthetic create: front ${FRONT} us + commit ${COMMIT} us of CPU work; ${WORKERS} front workers in the split`);
    for (let round = 1; round <= 2; round++) {
      const single = await serveAndLoad('single', certs.cert, certs.key);
      const split = await serveAndLoad('split', certs.cert, certs.key);
      console.log(
        `round ${round}: single thread ${Math.round(single)} req/s, split ${Math.round(split)} req/s, ratio ${(split / single).toFixed(2)}`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
