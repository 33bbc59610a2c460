/**
 * Start a real server process (src/main.ts) on a free port with a temporary data dir, for
 * black-box tests over HTTPS. Use:
 *
 *   const srv = await startServer();            // extra flags: startServer({ args: ['--foo=bar'] })
 *   const r = await srv.fetch('/api/v1/namespaces');
 *   srv.kubectl(['get', 'ns']);                 // runs kubectl (/usr/bin/kubectl) with the admin kubeconfig
 *   await srv.stop();
 */
import { afterAll, beforeAll } from 'bun:test';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type EtcdServer, startEtcd } from '../../bench/etcd';
import { has, kubectlPath, missing } from './needs';

const ROOT = path.resolve(import.meta.dir, '../..');

export interface Server {
  url: string;
  port: number;
  dataDir: string;
  kubeconfig: string;
  token: string;
  ca: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** fetch against the server with the admin token (override headers to drop/replace it). */
  fetch(p: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** JSON request helper: returns status, headers and the parsed body. */
  json(
    method: string,
    p: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: any }>;
  kubectl(args: string[], input?: string): { code: number; stdout: string; stderr: string };
  stop(signal?: NodeJS.Signals): Promise<number>;
  /** Server stderr so far. */
  logs(): string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/** The controllers that write Endpoints, EndpointSlices and PersistentVolume(Claim)s on their own. */
const SERVICE_STORAGE_CONTROLLERS =
  '-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller,-persistentvolume-binder-controller';

/**
 * For tests that keep workloads as stored objects only: the server runs no ReplicaSet,
 * ReplicationController, Deployment, StatefulSet, DaemonSet, Job, CronJob, TTL-after-finished or
 * HorizontalPodAutoscaler controller (which would create ReplicaSets, Jobs and pods, write status,
 * or delete finished Jobs), nor the Endpoints, EndpointSlice and volume binder controllers
 * (STATIC_SERVICES_STORAGE).
 */
export const STATIC_WORKLOADS = `--controllers=*,-replicaset-controller,-deployment-controller,-statefulset-controller,-daemonset-controller,-job-controller,-cronjob-controller,-ttl-after-finished-controller,-replicationcontroller-controller,-horizontal-pod-autoscaler-controller,-root-ca-certificate-publisher-controller,-pod-garbage-collector-controller,${SERVICE_STORAGE_CONTROLLERS}`;

/**
 * For tests that keep Endpoints, EndpointSlices, PersistentVolumes and claims as they write them:
 * no Endpoints, EndpointSlice, mirroring or volume binder controller (which would write
 * Endpoints and slices for Services, bind claims, set phases, and create the StorageClass
 * `standard`).
 */
export const STATIC_SERVICES_STORAGE = `--controllers=*,-root-ca-certificate-publisher-controller,${SERVICE_STORAGE_CONTROLLERS}`;

/** kubectl (see helpers/needs); srv.kubectl() without one fails saying what to install. */
export const KUBECTL = kubectlPath() ?? 'kubectl';

/**
 * SVC_TEST_STORE=etcd: every server started here runs on its own new etcd (Debian's etcd-server)
 * instead of the embedded store, unless the test passes --etcd-servers itself. CI runs a subset
 * of the end-to-end suite that way (package.json "test:etcd").
 */
const ON_ETCD = process.env.SVC_TEST_STORE === 'etcd';
/** A test that restarts a server on its own data dir gets the same etcd back (stopped at exit). */
const etcdOfDataDir = new Map<string, EtcdServer>();

export async function startServer(
  opts: {
    args?: string[];
    dataDir?: string;
    root?: string;
    env?: Record<string, string>;
    /** How long the server may take to start (default 15 s). */
    startTimeoutMs?: number;
    /** false: return once it listens, without waiting up to 5 s for /readyz (a bench timing the start). */
    waitReady?: boolean;
  } = {},
): Promise<Server> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-'));
  let etcd: EtcdServer | undefined;
  const args = [...(opts.args ?? [])];
  // Tests count the ConfigMaps of their namespaces: the kube-root-ca.crt publisher (one more in
  // every namespace, as in the reference) runs only where a test asks for it (`--controllers=*`,
  // test/service-account-admission.test.ts). So does the pod garbage collector: many tests bind
  // pods to nodes that do not exist, which it deletes after 40 s (test/pod-gc.test.ts).
  if (!args.some((a) => a.startsWith('--controllers')))
    args.push('--controllers=*,-root-ca-certificate-publisher-controller,-pod-garbage-collector-controller');
  if (ON_ETCD && !args.some((a) => a.startsWith('--etcd-servers'))) {
    const kept = opts.dataDir ? etcdOfDataDir.get(opts.dataDir) : undefined;
    const e = kept ?? (await startEtcd());
    if (!e) throw new Error('SVC_TEST_STORE=etcd but there is no etcd (apt-get install etcd-server)');
    if (opts.dataDir) etcdOfDataDir.set(opts.dataDir, e);
    else etcd = e;
    // One replica per etcd here: it runs the controllers without a Lease, so that, as on the
    // embedded store, only the test's own writes take revisions.
    args.push(`--etcd-servers=${e.endpoint}`, '--leader-elect=false');
  }
  // freePort()'s port can be taken before the server binds it (by an outgoing connection's
  // ephemeral port, say): the server then exits with "Is port N in use?" and another is tried.
  type Reader = { read(): Promise<{ done?: boolean; value?: Uint8Array }> };
  let port = 0;
  let stderr = '';
  let out = '';
  let proc = undefined as unknown as ReturnType<typeof spawnServer>;
  let reader = undefined as unknown as Reader;
  let pending = undefined as unknown as ReturnType<Reader['read']>;
  const kubeconfig = path.join(dataDir, 'admin.kubeconfig');
  const dec = new TextDecoder();
  function spawnServer(port: number) {
    return Bun.spawn(
      // SVC_SERVER_BUN_ARGS: extra runtime flags for the server process (e.g. --cpu-prof in benches).
      [
        process.execPath,
        ...(process.env.SVC_SERVER_BUN_ARGS?.split(' ').filter(Boolean) ?? []),
        path.join(opts.root ?? ROOT, 'src/main.ts'),
        `--port=${port}`,
        `--data-dir=${dataDir}`,
        ...args,
      ],
      {
        cwd: opts.root ?? ROOT,
        env: { ...process.env, ...opts.env },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    );
  }
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    stderr = '';
    out = '';
    const p = spawnServer(port);
    proc = p;
    (async () => {
      const d = new TextDecoder();
      for await (const chunk of p.stderr as ReadableStream<Uint8Array>) if (proc === p) stderr += d.decode(chunk);
    })();
    const deadline = Date.now() + (opts.startTimeoutMs ?? 15_000);
    // Ready when the kubeconfig is written (after listen).
    reader = (p.stdout as ReadableStream<Uint8Array>).getReader() as unknown as Reader;
    pending = reader.read();
    let failed: string | undefined;
    while (!out.includes('export KUBECONFIG=')) {
      if (Date.now() > deadline || p.exitCode !== null) {
        failed = `server did not start: ${stderr}${out}`;
        break;
      }
      const r = await Promise.race([pending, Bun.sleep(100).then(() => undefined)]);
      if (r === undefined) continue;
      if (r.done) {
        failed = `server exited: ${stderr}${out}`;
        break;
      }
      out += dec.decode(r.value);
      pending = reader.read();
    }
    if (failed === undefined) break;
    if (p.exitCode === null) p.kill();
    await p.exited;
    if (attempt < 3 && /Is port \d+ in use/.test(stderr)) continue;
    throw new Error(failed);
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  (async () => {
    for (let r = await pending; !r.done; r = await pending) pending = reader.read();
  })().catch(() => {});
  const token = fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8').trim();
  const ca = fs.readFileSync(path.join(dataDir, 'ca.crt'), 'utf8');
  const url = `https://127.0.0.1:${port}`;
  // Then ready (the controllers started, the bootstrap RBAC policy written), as a harness would
  // wait; a server that never gets there is the test's to find out (at most 5 s here).
  for (const until = Date.now() + (opts.waitReady === false ? 0 : 5000); Date.now() < until; ) {
    const r = await fetch(`${url}/readyz`, { tls: { ca } } as RequestInit).catch(() => undefined);
    if (r?.status === 200) break;
    await Bun.sleep(10);
  }
  const srv: Server = {
    url,
    port,
    dataDir,
    kubeconfig,
    token,
    ca,
    proc,
    fetch(p, init = {}) {
      const headers = new Headers(init.headers);
      const t = init.token === undefined ? token : init.token;
      if (t !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${t}`);
      return fetch(`${url}${p}`, { ...init, headers, tls: { ca } } as RequestInit);
    },
    async json(method, p, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (body !== undefined && !h['content-type']) h['content-type'] = 'application/json';
      const r = await srv.fetch(p, {
        method,
        headers: h,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await r.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: r.status, headers: r.headers, body: parsed };
    },
    kubectl(args, input) {
      if (!has('kubectl')) throw new Error(missing('kubectl'));
      const r = Bun.spawnSync([KUBECTL, `--kubeconfig=${kubeconfig}`, ...args], {
        stdin: input === undefined ? 'ignore' : Buffer.from(input),
        env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dataDir },
      });
      return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      await etcd?.stop();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    logs: () => stderr,
  };
  return srv;
}

/**
 * One server for a test file: started before its first test, stopped after its last. The
 * returned handle forwards to it, so tests use it like the Server itself.
 */
export function serverForFile(opts: Parameters<typeof startServer>[0] = {}): Server {
  let srv: Server | undefined;
  beforeAll(async () => {
    srv = await startServer(opts);
  }, 30_000);
  afterAll(async () => {
    await srv?.stop();
  });
  return new Proxy({} as Server, {
    get(_, key) {
      if (!srv) throw new Error('serverForFile: the server is not started (use it inside tests)');
      const v = (srv as unknown as Record<string | symbol, unknown>)[key];
      return typeof v === 'function' ? v.bind(srv) : v;
    },
  });
}
