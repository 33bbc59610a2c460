/**
 * The default target: this server started as a child process on a temporary data dir (embedded
 * store, or --etcd-servers passed through), with --simulated-nodes. Its /proc entry gives the
 * server's CPU and RSS over time.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { readKubeconfig, type Target } from './client';

const ROOT = path.resolve(import.meta.dir, '../..');

export interface ChildServer {
  target: Target;
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
  logs(): string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export async function startChild(opts: { nodes: number; serverArgs: string[]; keepData?: boolean }): Promise<ChildServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = Bun.spawn(
      [
        process.execPath,
        // SVC_SERVER_BUN_ARGS: runtime flags for the child (e.g. --cpu-prof), as test/helpers/server.ts.
        ...(process.env.SVC_SERVER_BUN_ARGS?.split(' ').filter(Boolean) ?? []),
        path.join(ROOT, 'src/main.ts'),
        `--port=${port}`,
        `--data-dir=${dataDir}`,
        `--simulated-nodes=${opts.nodes}`,
        ...opts.serverArgs,
      ],
      { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
    );
    let err = '';
    let out = '';
    // SVC_LOAD_SERVER_LOG=FILE: the child's whole log, for investigations (logs() keeps the tail).
    const logFile = process.env.SVC_LOAD_SERVER_LOG;
    (async () => {
      const d = new TextDecoder();
      for await (const c of proc.stderr as ReadableStream<Uint8Array>) {
        if (logFile) fs.appendFileSync(logFile, c);
        err += d.decode(c);
        if (err.length > 200_000) err = err.slice(-100_000);
      }
    })();
    const ready = (async () => {
      const d = new TextDecoder();
      for await (const c of proc.stdout as ReadableStream<Uint8Array>) {
        if (out.length < 10_000) out += d.decode(c);
        if (out.includes('export KUBECONFIG=')) return true;
      }
      return false;
    })();
    const ok = await Promise.race([ready, proc.exited.then(() => false), Bun.sleep(60_000).then(() => false)]);
    if (!ok) {
      proc.kill();
      await proc.exited;
      if (attempt < 3 && /Is port \d+ in use/.test(err)) continue;
      throw new Error(`the server did not start: ${err.slice(-2000)}${out}`);
    }
    const target = readKubeconfig(path.join(dataDir, 'admin.kubeconfig'));
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      const r = await fetch(`${target.url}/readyz`, { tls: { ca: target.ca } } as RequestInit).catch(() => undefined);
      if (r?.status === 200) break;
      await Bun.sleep(50);
    }
    return {
      target,
      pid: proc.pid,
      dataDir,
      logs: () => err,
      async stop() {
        proc.kill('SIGTERM');
        // A server closing finishes the snapshot it is writing at full speed (a GB at 150,000 pods:
        // 5-9 s) and, profiled, writes its profile: a minute before it is killed.
        await Promise.race([proc.exited, Bun.sleep(60_000)]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
        if (!opts.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
}

/** CPU (fraction of one core over the interval) and RSS (bytes) of a local process, from /proc. */
export function procSampler(pid: number): () => Promise<{ cpu: number; rss: number } | undefined> {
  const tick = 100; // USER_HZ
  let lastCpu = -1;
  let lastT = 0;
  const page = 4096;
  return async () => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpuS = (Number(f[11]) + Number(f[12])) / tick;
      const rss = Number(f[21]) * page;
      const t = performance.now() / 1000;
      const cpu = lastCpu < 0 ? 0 : (cpuS - lastCpu) / Math.max(1e-3, t - lastT);
      lastCpu = cpuS;
      lastT = t;
      return { cpu, rss };
    } catch {
      return undefined;
    }
  };
}

/**
 * CPU and RSS of a server that is not the harness's child, from its /metrics (the reference's
 * process_cpu_seconds_total and process_resident_memory_bytes) when it exposes them.
 */
export function metricsSampler(target: Target): () => Promise<{ cpu: number; rss: number } | undefined> {
  let last: { cpu: number; t: number } | undefined;
  let absent = false;
  return async () => {
    if (absent) return undefined;
    const headers: Record<string, string> = target.token ? { authorization: `Bearer ${target.token}` } : {};
    const tls = { ca: target.ca, cert: target.cert, key: target.key, rejectUnauthorized: !target.insecure };
    const text = await fetch(`${target.url}/metrics`, { headers, tls } as RequestInit)
      .then((r) => (r.ok ? r.text() : ''))
      .catch(() => '');
    const cpuS = Number(/^process_cpu_seconds_total\s+(\S+)/m.exec(text)?.[1]);
    const rss = Number(/^process_resident_memory_bytes\s+(\S+)/m.exec(text)?.[1]);
    if (!Number.isFinite(cpuS) || !Number.isFinite(rss)) {
      absent = true;
      return undefined;
    }
    const t = performance.now() / 1000;
    const cpu = last ? (cpuS - last.cpu) / Math.max(1e-3, t - last.t) : 0;
    last = { cpu: cpuS, t };
    return { cpu, rss };
  };
}
