/**
 * The two backends in one run (issue 18 bench): creates/s of 1 KB ConfigMaps and GETs/s of one
 * ConfigMap on the embedded store, on etcd with one API server, and on etcd with two replicas
 * (the load split over both, one load generator each), with the servers' CPU per request.
 * One single-member etcd on loopback (Debian's etcd-server, fsync on as it always is).
 *
 *     bun bench/replicas.ts            (PHASE_MS=6000 by default)
 */
import { type Server, startServer } from '../test/helpers/server';
import { startEtcd } from './etcd';
import { type LoadResult, load, serverCpuPerRequest, threadCpu } from './harness';

const PHASE_MS = Number(process.env.PHASE_MS ?? 6000);
const CONNS = 64;
const DATA = 'x'.repeat(1000);
let counter = 0;

/** The phase's load over `servers` (connections split evenly), with each server's CPU per request. */
async function phase(servers: Server[], what: 'create' | 'get'): Promise<{ ops: number; cpuUs: number; p99: number; errors: number }> {
  const before = servers.map((s) => threadCpu(s.proc.pid));
  const start = counter;
  counter += 10_000_000;
  const results: LoadResult[] = await Promise.all(
    servers.map((s, i) =>
      load({
        ...(what === 'create'
          ? {
              url: `${s.url}/api/v1/namespaces/default/configmaps`,
              method: 'POST',
              bodyTemplate: JSON.stringify({ metadata: { name: 'cm-{{i}}' }, data: { d: DATA } }),
              start: start + i * 1_000_000,
            }
          : { url: `${s.url}/api/v1/namespaces/default/configmaps/target`, method: 'GET' }),
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
        concurrency: Math.round(CONNS / servers.length),
        durationMs: PHASE_MS,
        ca: s.ca,
      }),
    ),
  );
  const ok = results.reduce((a, r) => a + r.ok, 0);
  let cpu = 0;
  servers.forEach((s, i) => {
    cpu += serverCpuPerRequest(before[i] as Map<string, number>, s.proc.pid, 1) * 1;
  });
  return {
    ops: results.reduce((a, r) => a + r.ops, 0),
    cpuUs: ok > 0 ? cpu / ok : 0,
    p99: Math.max(...results.map((r) => r.p99)),
    errors: results.reduce((a, r) => a + r.errors, 0),
  };
}

async function run(label: string, servers: Server[], etcdPid?: number): Promise<void> {
  await servers[0]?.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'target' }, data: { d: DATA } });
  for (const what of ['create', 'get'] as const) {
    const etcdBefore = etcdPid ? threadCpu(etcdPid) : undefined;
    const r = await phase(servers, what);
    let etcdCpu = '';
    if (etcdPid && etcdBefore) {
      const ok = r.ops * (PHASE_MS / 1000);
      etcdCpu = `, etcd CPU ${serverCpuPerRequest(etcdBefore, etcdPid, ok).toFixed(1)} us/request`;
    }
    console.log(
      `${label.padEnd(24)} ${what.padEnd(6)} ${String(r.ops).padStart(6)} req/s, p99 ${r.p99} ms, API server CPU ${r.cpuUs.toFixed(1)} us/request${etcdCpu}${r.errors ? `, ${r.errors} errors` : ''}`,
    );
  }
}

{
  const srv = await startServer();
  try {
    await run('embedded store', [srv]);
  } finally {
    await srv.stop();
  }
}
for (const replicas of [1, 2]) {
  const etcd = await startEtcd();
  if (!etcd) throw new Error('no etcd (apt-get install etcd-server)');
  const pid = etcd.pid;
  const servers: Server[] = [];
  try {
    for (let i = 0; i < replicas; i++) servers.push(await startServer({ args: [`--etcd-servers=${etcd.endpoint}`] }));
    await run(`etcd, ${replicas} replica${replicas > 1 ? 's' : ''}`, servers, pid || undefined);
  } finally {
    for (const s of servers) await s.stop();
    await etcd.stop();
  }
}
