/**
 * The workload controllers at scale against the real server process (issue 37's bench):
 *
 *   bun bench/deployments.ts [--nodes=100] [--deployments=1000] [--replicas=10] [--rolling=1000] [--concurrency=32]
 *
 * 1. A server with --simulated-nodes=NODES (scheduler and controllers in process); wait until
 *    every node is Ready.
 * 2. DEPLOYMENTS Deployments of REPLICAS replicas created at once (CONCURRENCY creates in
 *    flight); a watch of Deployments sees each reach availableReplicas = REPLICAS: time from the
 *    first create to the last Available, and the server's CPU (all threads, /proc) per pod.
 * 3. On a fresh server: one Deployment of ROLLING replicas (RollingUpdate 25%/25%), Available,
 *    then its image changed. A watch of its pods counts the Ready ones throughout: the rollout's
 *    time (image change → updatedReplicas = availableReplicas = ROLLING, observedGeneration
 *    current) and the fewest Ready pods seen, checked against ROLLING - maxUnavailable.
 */

import { startServer } from '../test/helpers/server';
import { followWatch, rssMiB, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const NODES = Number(arg('nodes') ?? 100);
const DEPLOYMENTS = Number(arg('deployments') ?? 1000);
const REPLICAS = Number(arg('replicas') ?? 10);
const ROLLING = Number(arg('rolling') ?? 1000);
const CONCURRENCY = Number(arg('concurrency') ?? 32);

const cpuUs = (pid: number): number => {
  let t = 0;
  for (const v of threadCpu(pid).values()) t += v;
  return t;
};

type Obj = {
  metadata: { name: string; generation?: number; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { replicas?: number };
  status?: {
    availableReplicas?: number;
    updatedReplicas?: number;
    replicas?: number;
    observedGeneration?: number;
    conditions?: { type: string; status: string }[];
  };
};
type Event = { type: string; object: Obj };

const deployment = (name: string, replicas: number, image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
    },
  },
});

async function serverWithNodes() {
  const srv = await startServer({
    args: [`--simulated-nodes=${NODES}`, '--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
  });
  const t0 = performance.now();
  for (;;) {
    const items = (await srv.json('GET', '/api/v1/nodes?resourceVersion=0')).body.items as Obj[];
    const ready = items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    if (ready >= NODES) break;
    await Bun.sleep(500);
  }
  console.log(`${NODES} simulated nodes Ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  return srv;
}

const DEPLOY = '/apis/apps/v1/namespaces/bench/deployments';

// ---- phase 1: many Deployments at once ----------------------------------------------------
if (DEPLOYMENTS > 0) {
  const srv = await serverWithNodes();
  try {
    const available = new Set<string>();
    let allDone: () => void = () => {};
    const done = new Promise<void>((r) => {
      allDone = r;
    });
    const stop = new AbortController();
    const rv = (await srv.json('GET', `${DEPLOY}?limit=1`)).body.metadata.resourceVersion;
    const watch = followWatch<Event>(
      srv,
      `${DEPLOY}?watch=1&resourceVersion=${rv}`,
      (e) => {
        if ((e.object.status?.availableReplicas ?? 0) >= REPLICAS) available.add(e.object.metadata.name);
        if (available.size >= DEPLOYMENTS) allDone();
      },
      stop.signal,
    );
    const c0 = cpuUs(srv.proc.pid);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < DEPLOYMENTS; i = next++) {
          const r = await srv.json('POST', DEPLOY, deployment(`d-${i}`, REPLICAS, 'nginx:1.27'));
          if (r.status !== 201) throw new Error(`create d-${i}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        }
      }),
    );
    const created = performance.now() - t0;
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 600_000));
    const outcome = await Promise.race([done.then(() => 'done' as const), timeout]);
    const ms = performance.now() - t0;
    const cpu = cpuUs(srv.proc.pid) - c0;
    stop.abort();
    await watch;
    const pods = DEPLOYMENTS * REPLICAS;
    console.log(
      `${DEPLOYMENTS} Deployments x ${REPLICAS} replicas on ${NODES} nodes: ${outcome === 'done' ? 'all Available' : `TIMEOUT (${available.size} Available)`} in ${(ms / 1000).toFixed(1)} s (creates sent in ${(created / 1000).toFixed(1)} s); ${(pods / (ms / 1000)).toFixed(0)} pods/s; server CPU ${(cpu / pods).toFixed(0)} us per pod (${((cpu / (ms * 1000)) * 100).toFixed(0)}% of one core); RSS ${rssMiB(srv.proc.pid)} MiB`,
    );
  } finally {
    await srv.stop();
  }
}

// ---- phase 2: a rolling update of a large Deployment ---------------------------------------
if (ROLLING > 0) {
  const srv = await serverWithNodes();
  try {
    const ready = new Set<string>();
    let minReady = Number.POSITIVE_INFINITY;
    let watching = false;
    const stop = new AbortController();
    const rv = (await srv.json('GET', '/api/v1/namespaces/bench/pods?limit=1')).body.metadata.resourceVersion;
    const pods = followWatch<Event>(
      srv,
      `/api/v1/namespaces/bench/pods?watch=1&labelSelector=app%3Dbig&resourceVersion=${rv}`,
      (e) => {
        const name = e.object.metadata.name;
        const isReady =
          e.type !== 'DELETED' &&
          !e.object.metadata.deletionTimestamp &&
          (e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
        if (isReady) ready.add(name);
        else ready.delete(name);
        if (watching) minReady = Math.min(minReady, ready.size);
      },
      stop.signal,
    );
    const status = async () => (await srv.json('GET', `${DEPLOY}/big`)).body as Obj;
    const complete = (d: Obj) =>
      (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
      d.status?.updatedReplicas === ROLLING &&
      d.status?.availableReplicas === ROLLING &&
      d.status?.replicas === ROLLING;
    const waitComplete = async (limitMs: number) => {
      const end = Date.now() + limitMs;
      for (;;) {
        if (complete(await status())) return true;
        if (Date.now() > end) return false;
        await Bun.sleep(200);
      }
    };
    const t0 = performance.now();
    const c = await srv.json('POST', DEPLOY, deployment('big', ROLLING, 'nginx:1.27'));
    if (c.status !== 201) throw new Error(`create big: ${c.status}`);
    const up = await waitComplete(600_000);
    console.log(
      `a Deployment of ${ROLLING} replicas Available in ${((performance.now() - t0) / 1000).toFixed(1)} s${up ? '' : ' (TIMEOUT)'}`,
    );
    const cur = await status();
    const c0 = cpuUs(srv.proc.pid);
    const t1 = performance.now();
    watching = true;
    minReady = ready.size;
    const patch = await srv.json(
      'PATCH',
      `${DEPLOY}/big`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.28' }] } } } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    if (patch.status !== 200) throw new Error(`patch: ${patch.status}`);
    const rolled = await waitComplete(600_000);
    const ms = performance.now() - t1;
    const cpu = cpuUs(srv.proc.pid) - c0;
    stop.abort();
    await pods;
    const maxUnavailable = Math.floor(ROLLING * 0.25);
    const floor = ROLLING - maxUnavailable;
    console.log(
      `rolling update of ${ROLLING} replicas (maxSurge 25%, maxUnavailable 25%): ${rolled ? 'complete' : 'TIMEOUT'} in ${(ms / 1000).toFixed(1)} s; fewest Ready pods seen ${minReady} (floor ${floor}: ${minReady >= floor ? 'held' : 'BROKEN'}); server CPU ${(cpu / ROLLING).toFixed(0)} us per replaced pod; generation ${cur.metadata.generation} → ${(await status()).metadata.generation}`,
    );
  } finally {
    await srv.stop();
  }
}
