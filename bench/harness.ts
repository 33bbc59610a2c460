/**
 * The harness the API benches share: load phases driven by wrk (or bench/load.ts), per-thread
 * CPU of the server process from /proc, and RSS. A phase's spec: url or urlTemplate ({{i}} is a
 * counter; with urlModulo, the URL's is the counter modulo it), method, headers, body or
 * bodyTemplate, durationMs, concurrency, ca.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');
const DEFAULT_CONCURRENCY = 64;
const DEFAULT_PHASE_MS = 8000;

export interface LoadResult {
  ops: number;
  ok: number;
  errors: number;
  codes: Record<string, number>;
  p50: number;
  p99: number;
  next: number;
  /** CPU time of the load generator over the phase (us), when it is a separate process. */
  clientCpuUs?: number;
}

export const WRK = !process.argv.includes('--bun-client') && fs.existsSync('/usr/bin/wrk') ? '/usr/bin/wrk' : undefined;

export function wrkDuration(v: string, unit: string): number {
  const n = Number(v);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

/**
 * The load generator: Debian's wrk (C, far cheaper per request than a JS client, so more of the 2
 * cores is left to the server) when installed, with a Lua script for per-request URLs and bodies;
 * else bench/load.ts (Bun's fetch). `--bun-client` forces the latter.
 */
export async function loadWrk(spec: Record<string, unknown>): Promise<LoadResult> {
  const url = new URL((spec.urlTemplate as string | undefined)?.replaceAll('{{i}}', '0') || (spec.url as string));
  const lua = (v: unknown) => (v === undefined ? 'nil' : `[==[${String(v)}]==]`);
  const pathOf = (u: string | undefined) => (u === undefined ? undefined : u.slice(u.indexOf('/', 'https://'.length)));
  const headers = Object.entries((spec.headers as Record<string, string>) ?? {})
    .map(([k, v]) => `[ ${lua(k)} ] = ${lua(v)}`)
    .join(', ');
  const script = `local n = ${Number(spec.start ?? 0)}
local urlt = ${lua(pathOf(spec.urlTemplate as string | undefined))}
local path = ${lua(url.pathname + url.search)}
local bodyt = ${lua(spec.bodyTemplate)}
local body = ${lua(spec.body)}
local headers = { ${headers} }
-- templates split once at {{i}}: a request is a concatenation, not a pattern substitution
local function split(t)
  if not t then return nil end
  local parts, at = {}, 1
  while true do
    local a, b = t:find("{{i}}", at, true)
    if not a then break end
    parts[#parts + 1] = t:sub(at, a - 1)
    at = b + 1
  end
  parts[#parts + 1] = t:sub(at)
  return parts
end
local us, bs = split(urlt), split(bodyt)
local function fill(s, i) return table.concat(s, i) end
local mod = ${Number(spec.urlModulo ?? 0)}
request = function()
  local i = tostring(n)
  local p = us and fill(us, mod > 0 and tostring(n % mod) or i) or path
  n = n + 1
  local b = bs and fill(bs, i) or body
  return wrk.format(${lua(spec.method)}, p, headers, b)
end
`;
  const file = path.join(os.tmpdir(), `bench-wrk-${process.pid}-${Date.now()}.lua`);
  fs.writeFileSync(file, script);
  try {
    const secs = Math.max(1, Math.round(((spec.durationMs as number | undefined) ?? DEFAULT_PHASE_MS) / 1000));
    const p = Bun.spawn(
      [
        WRK as string,
        '-t1',
        `-c${(spec.concurrency as number | undefined) ?? DEFAULT_CONCURRENCY}`,
        `-d${secs}s`,
        '--latency',
        '-s',
        file,
        `${url.protocol}//${url.host}/`,
      ],
      { stdout: 'pipe', stderr: 'inherit' },
    );
    const out = await new Response(p.stdout).text();
    await p.exited;
    const ru = p.resourceUsage();
    const clientCpuUs = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) : undefined;
    const total = Number(/(\d+) requests in ([\d.]+)s/.exec(out)?.[1] ?? 0);
    const elapsed = Number(/requests in ([\d.]+)s/.exec(out)?.[1] ?? secs);
    const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const lat = (q: string) => {
      const m = new RegExp(`\\s${q}%\\s+([\\d.]+)(us|ms|s|m)`).exec(out);
      return m ? +wrkDuration(m[1] as string, m[2] as string).toFixed(2) : 0;
    };
    return {
      ops: Math.round((total - bad) / elapsed),
      ok: total - bad,
      errors: bad,
      codes: bad ? { 'non-2xx': bad } : {},
      p50: lat('50'),
      p99: lat('99'),
      next: 0,
      clientCpuUs,
    };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * A load phase. `spec.faults` (issue 40) declares faults for the phase: FaultInjection objects
 * (testing.svc.io/v1alpha1; the server runs with --feature-gates=FaultInjection=true) created
 * before the load starts and deleted after it, with the phase's own headers (its user needs the
 * verb `inject` on faultinjections, as system:masters has).
 */
export async function load(spec: Record<string, unknown>): Promise<LoadResult> {
  const faults = spec.faults as Record<string, unknown>[] | undefined;
  if (!faults?.length) return loadPhase(spec);
  const base = `${new URL((spec.urlTemplate as string | undefined) ?? (spec.url as string)).origin}/apis/testing.svc.io/v1alpha1/faultinjections`;
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${base}${p}`, {
      method,
      headers: { ...(spec.headers as Record<string, string> | undefined), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      tls: { ca: spec.ca as string | undefined },
    } as RequestInit);
    if (r.status >= 300) throw new Error(`${method} faultinjections${p}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { metadata: { name: string } };
  };
  const names: string[] = [];
  try {
    for (const f of faults) names.push((await call('POST', '', f)).metadata.name);
    await Bun.sleep(300); // a fault acts once the server's watch cache has it (milliseconds)
    return await loadPhase({ ...spec, faults: undefined });
  } finally {
    for (const n of names) await call('DELETE', `/${n}`).catch(() => {});
  }
}

async function loadPhase(spec: Record<string, unknown>): Promise<LoadResult> {
  // wrk's script does not wait out a 429's Retry-After and has no fixed rate: clients that need
  // either (the APF floods, latency at a given rate) use bench/load.ts whatever is installed.
  if (WRK && !spec.retryAfter && !spec.rate) return loadWrk(spec);
  const p = Bun.spawn(
    [
      process.execPath,
      path.join(ROOT, 'bench/load.ts'),
      JSON.stringify({ concurrency: DEFAULT_CONCURRENCY, durationMs: DEFAULT_PHASE_MS, ...spec }),
    ],
    {
      stdout: 'pipe',
      stderr: 'inherit',
    },
  );
  const out = await new Response(p.stdout).text();
  await p.exited;
  const ru = p.resourceUsage();
  const r = JSON.parse(out.trim().split('\n').pop() as string) as LoadResult;
  if (ru) r.clientCpuUs = Number(ru.cpuTime.user + ru.cpuTime.system);
  return r;
}

/**
 * The machine's CPU time so far, all cores (USER_HZ ticks): total and stolen by the hypervisor
 * (/proc/stat's steal). A VM whose neighbours are busy loses 10-30% of its time to steal, and
 * every figure of that phase is slower for it (2026-11-28: an Intel VM with ~30% steal, under
 * the APF bench).
 */
export function machineTicks(): { total: number; steal: number } {
  const f = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/).slice(1, 9).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
}

/** The machine's ticks when each threadCpu snapshot was taken (for the phase's steal in cpuReport). */
const ticksAt = new WeakMap<Map<string, number>, { total: number; steal: number }>();

/** The share (%) of the machine's CPU time stolen by the hypervisor since the threadCpu snapshot `before`. */
export function stealSince(before: Map<string, number>): number | undefined {
  const a = ticksAt.get(before);
  return a ? stealPct(a, machineTicks()) : undefined;
}

/** The share (%) of the machine's CPU time stolen between two machineTicks() readings. */
export function stealPct(a: { total: number; steal: number }, b: { total: number; steal: number }): number {
  return b.total > a.total ? (100 * (b.steal - a.steal)) / (b.total - a.total) : 0;
}

/** CPU time (us) per thread name of a process (threads of one kind, e.g. "Bun Pool 3", summed). */
export function threadCpu(pid: number): Map<string, number> {
  const tick = 1e6 / 100; // USER_HZ
  const out = new Map<string, number>();
  ticksAt.set(out, machineTicks());
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')).replace(/\s*\d+$/, '');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * tick);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/**
 * Where the CPU of a load phase went: the server's threads and the load generator, per request,
 * and what that allows on this machine: with every core busy on nothing else, at most
 * cores / (server + client CPU per request) requests/s.
 */
/** The server's CPU per request (us, all threads) since `before`. */
export function serverCpuPerRequest(before: Map<string, number>, pid: number, ok: number): number {
  let total = 0;
  for (const [k, v] of threadCpu(pid)) total += v - (before.get(k) ?? 0);
  return ok > 0 ? total / ok : 0;
}

export function cpuReport(what: string, before: Map<string, number>, pid: number, r: LoadResult): string {
  const after = threadCpu(pid);
  const n = r.ok;
  if (n === 0) return `${what}: no successful requests`;
  const per = [...after].map(([k, v]) => [k, (v - (before.get(k) ?? 0)) / n] as const).filter(([, v]) => v >= 0.5);
  per.sort((a, b) => b[1] - a[1]);
  const server = per.reduce((a, [, v]) => a + v, 0);
  const client = (r.clientCpuUs ?? 0) / n;
  const cores = os.availableParallelism();
  const steal = stealSince(before);
  return (
    `${what} CPU per request: server ${server.toFixed(1)} us (${per.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}), load generator ${client.toFixed(1)} us; ` +
    `bound with ${cores} cores fully used: ${Math.round((cores * 1e6) / (server + client))} req/s, with the busiest thread alone: ${Math.round(1e6 / (per[0]?.[1] ?? 1))} req/s` +
    (steal === undefined ? '' : `; VM steal ${steal.toFixed(1)}%`)
  );
}

/** A process's CPU time so far (us, all its threads): utime + stime from /proc/<pid>/stat. */
export function processCpuUs(pid: number): number {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * (1e6 / 100); // USER_HZ
}

export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/**
 * The ceiling of the API benches: a bare Bun.serve in its own process answering `doc` (a
 * pre-serialised JSON) over TLS with a certificate from the server's own generator. A POST is
 * the least a create can do and stay a create: the body parsed, the server's metadata set
 * (uid, resourceVersion, creationTimestamp) and the object answered with 201; nothing is stored.
 */
export async function bareServer(doc: string): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  return tlsServer(
    [
      '-e',
      `let rv=1;const h={'content-type':'application/json'};const s=Bun.serve({port:0,hostname:'127.0.0.1',tls:{cert:process.env.C,key:process.env.K},fetch:async(r)=>{if(r.method!=='POST')return new Response(process.env.D,{headers:h});const o=await r.json();const m=o.metadata;m.uid=crypto.randomUUID();m.resourceVersion=String(++rv);m.creationTimestamp=new Date().toISOString().slice(0,19)+'Z';return new Response(JSON.stringify(o),{status:201,headers:h})}});console.log(s.port)`,
    ],
    { D: doc },
  );
}

/**
 * bench/create-floor.ts (the durable create floor) with its log in a temporary directory, removed
 * by stop().
 */
export async function createFloorServer(
  script = 'bench/create-floor.ts',
  env: Record<string, string> = {},
): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-'));
  const s = await tlsServer([path.join(ROOT, script)], { DIR: dir, ...env });
  return {
    ...s,
    stop: () => {
      s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `count` pods pod-0, pod-1, ... in namespace `bench` (created first), each on the node
 * `nodeOf(i)` names (bench/node-watchers.ts's and bench/pod-patch.ts's shape), 50 at a time.
 */
export async function createPods(
  srv: { json: (method: string, p: string, body: unknown) => Promise<{ status: number }> },
  count: number,
  nodeOf: (i: number) => string,
): Promise<void> {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  for (let i = 0; i < count; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const r = await srv.json('POST', '/api/v1/namespaces/bench/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `pod-${i + j}`, labels: { app: 'bench' } },
          spec: { nodeName: nodeOf(i + j), containers: [{ name: 'c', image: 'registry.example/app:1' }] },
        });
        if (r.status !== 201) throw new Error(`create pod-${i + j}: ${r.status}`);
      }),
    );
}

/**
 * `count` objects POSTed to `path` by 64 concurrent loops, `bodyOf(i)` each (bench/codec-lists.ts's
 * and bench/restart.ts's 100k pods); any answer but 201 throws. Resolves with the seconds taken.
 */
export async function createMany(
  srv: { json: (method: string, p: string, body: unknown) => Promise<{ status: number; body: unknown }> },
  path: string,
  count: number,
  bodyOf: (i: number) => unknown,
): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < count; i = next++) {
        const r = await srv.json('POST', path, bodyOf(i));
        if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

/** bench/watch-floor.ts (the watch fan-out floor). */
export function watchFloorServer(): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  return tlsServer([path.join(ROOT, 'bench/watch-floor.ts')], {});
}

/**
 * bench/apply-floor.ts (the durable apply floor) over `template`, the stored text of one of the
 * server's objects after its strategic merge patch phase, with its log in a temporary directory.
 */
export async function applyFloorServer(
  template: string,
  env: Record<string, string> = {},
): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-'));
  const s = await tlsServer([path.join(ROOT, 'bench/apply-floor.ts')], { ...env, DIR: dir, T: template });
  return {
    ...s,
    stop: () => {
      s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Bun process (`args`) serving TLS with fresh certificates in C and K; it prints its port. */
async function tlsServer(args: string[], env: Record<string, string>): Promise<{ url: string; ca: string; pid: number; stop: () => void }> {
  const { servingCerts } = await import('../src/auth/certs');
  const certsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-certs-'));
  const certs = await servingCerts(certsDir, '127.0.0.1');
  fs.rmSync(certsDir, { recursive: true, force: true }); // the PEM texts are all it needs
  const proc = Bun.spawn([process.execPath, ...args], { env: { ...process.env, C: certs.cert, K: certs.key, ...env }, stdout: 'pipe' });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  return { url: `https://127.0.0.1:${port}/`, ca: certs.ca ?? '', pid: proc.pid, stop: () => proc.kill() };
}

/**
 * The small request the list benches measure latency with: GET of the `default` namespace from
 * `concurrency` clients for `durationMs` (a spec for load()).
 */
export function smallGets(srv: { url: string; token: string; ca: string }, durationMs: number, concurrency = 16): Record<string, unknown> {
  return {
    url: `${srv.url}/api/v1/namespaces/default`,
    method: 'GET',
    headers: { authorization: `Bearer ${srv.token}` },
    ca: srv.ca,
    concurrency,
    durationMs,
  };
}

/** Follows a watch, handing each event to `on`; resolves when aborted. */
export async function followWatch<E>(
  srv: { fetch: (p: string, init?: RequestInit) => Promise<Response> },
  path: string,
  on: (e: E) => void,
  signal: AbortSignal,
): Promise<void> {
  const r = await srv.fetch(path, { signal });
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) on(JSON.parse(line) as E);
        nl = buf.indexOf('\n');
      }
    }
  } catch (e) {
    if (!signal.aborted) throw e;
  }
}
