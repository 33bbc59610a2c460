/**
 * The scheduler (src/scheduler), in two parts:
 *
 *   bun bench/scheduler.ts [--nodes=100] [--pods=10000] [--concurrency=64] [--algorithm-only] [--server-only]
 *
 * 1. The algorithm alone, in this process: a ClusterCache of N nodes (and of 5,000), M pods
 *    scheduled one after another with Algorithm.schedule and assumed on their node, as the
 *    scheduler's loop does: CPU per pod (filters, scores, the assume), and the nodes examined
 *    per pod (percentageOfNodesToScore).
 * 2. End to end against a real server process (src/main.ts, embedded store): N Ready nodes
 *    created through the API, then M pods (100m, 100Mi) created through the API by
 *    `concurrency` clients; the time from the first create until every pod is bound (polled
 *    with a list of unbound pods, limit 1), the rate, and the server's CPU per pod (all
 *    threads, /proc) against the same M creates of pods no scheduler serves (schedulerName
 *    bench-none): the difference is what scheduling a pod costs the server (the attempt, the
 *    binding write, the Scheduled event).
 */

import { Algorithm } from '../src/scheduler/framework';
import { ClusterCache, podInfo } from '../src/scheduler/node-info';
import { startServer } from '../test/helpers/server';
import { threadCpu } from './harness';

const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : dflt;
};
const NODES = arg('nodes', 100);
const PODS = arg('pods', 10_000);
const CONCURRENCY = arg('concurrency', 64);

const podSpec = (schedulerName?: string) => ({
  ...(schedulerName ? { schedulerName } : {}),
  containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: '100m', memory: '100Mi' } } }],
});

const nodeObj = (name: string) => {
  const alloc = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': `z${name.length % 3}` } },
    spec: {},
    status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] },
  };
};

function algorithm(nodes: number, pods: number): void {
  const cache = new ClusterCache();
  for (let i = 0; i < nodes; i++) cache.setNode(nodeObj(`n-${i}`));
  const a = new Algorithm(cache);
  const infos = Array.from({ length: pods }, (_, i) =>
    podInfo({
      metadata: { name: `p-${i}`, namespace: 'bench', uid: `u-${i}`, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: podSpec(),
    }),
  );
  let evaluated = 0;
  let unscheduled = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const p of infos) {
    const r = a.schedule(p);
    if (r.node === undefined) {
      unscheduled++;
      continue;
    }
    evaluated += r.evaluated;
    cache.assume(p, r.node);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const us = (cpu.user + cpu.system) / pods;
  console.log(
    `algorithm: ${nodes} nodes, ${pods} pods: ${us.toFixed(1)} us CPU per pod (${Math.round(pods / (ms / 1000))} pods/s on one core), ` +
      `${(evaluated / (pods - unscheduled)).toFixed(0)} nodes examined per pod, ${unscheduled} unschedulable`,
  );
}

type Srv = Awaited<ReturnType<typeof startServer>>;

/** Run `n` requests with `concurrency` clients. */
async function many(n: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await f(i);
    }),
  );
}

const cpuTotal = (pid: number): number => {
  let t = 0;
  for (const v of threadCpu(pid).values()) t += v;
  return t;
};

async function createPods(srv: Srv, ns: string, schedulerName?: string): Promise<void> {
  const spec = podSpec(schedulerName);
  await many(PODS, async (i) => {
    const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, { metadata: { name: `p-${i}` }, spec });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  });
}

async function endToEnd(): Promise<void> {
  const srv = await startServer();
  try {
    const pid = srv.proc.pid;
    await many(NODES, async (i) => {
      const name = `node-${i}`;
      const { status, ...obj } = nodeObj(name);
      const created = await srv.json('POST', '/api/v1/nodes', obj);
      if (created.status !== 201) throw new Error(`node: ${created.status}`);
      const put = await srv.json('PUT', `/api/v1/nodes/${name}/status`, { ...created.body, status });
      if (put.status !== 200) throw new Error(`node status: ${put.status}`);
    });
    for (const ns of ['base', 'run']) await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    await Bun.sleep(1000);

    // Baseline: the same creates, no scheduling.
    let cpu0 = cpuTotal(pid);
    let t0 = performance.now();
    await createPods(srv, 'base', 'bench-none');
    const baseMs = performance.now() - t0;
    await Bun.sleep(500);
    const baseUs = (cpuTotal(pid) - cpu0) / PODS;

    cpu0 = cpuTotal(pid);
    t0 = performance.now();
    await createPods(srv, 'run');
    const createdMs = performance.now() - t0;
    const unbound = async () =>
      (await srv.json('GET', '/api/v1/namespaces/run/pods?fieldSelector=spec.nodeName%3D&limit=1')).body.items?.length ?? -1;
    const deadline = performance.now() + 120_000;
    while ((await unbound()) !== 0 && performance.now() < deadline) await Bun.sleep(100);
    const boundMs = performance.now() - t0;
    const runUs = (cpuTotal(pid) - cpu0) / PODS;
    const left = await unbound();

    const list = (await srv.json('GET', '/api/v1/namespaces/run/pods')).body.items as { spec: { nodeName?: string } }[];
    const per = new Map<string, number>();
    for (const p of list) if (p.spec.nodeName) per.set(p.spec.nodeName, (per.get(p.spec.nodeName) ?? 0) + 1);
    const counts = [...per.values()];
    console.log(
      `end to end: ${NODES} nodes, ${PODS} pods, ${CONCURRENCY} clients: created in ${(createdMs / 1000).toFixed(2)} s ` +
        `(${Math.round(PODS / (createdMs / 1000))}/s), all bound after ${(boundMs / 1000).toFixed(2)} s ` +
        `(${Math.round(PODS / (boundMs / 1000))} pods/s${left !== 0 ? `, ${left} NOT BOUND` : ''}); ` +
        `pods per node ${Math.min(...counts)}-${Math.max(...counts)}`,
    );
    console.log(
      `server CPU per pod: ${runUs.toFixed(0)} us scheduled against ${baseUs.toFixed(0)} us for unscheduled creates ` +
        `(in ${(baseMs / 1000).toFixed(2)} s): scheduling adds ${(runUs - baseUs).toFixed(0)} us per pod`,
    );
  } finally {
    await srv.stop();
  }
}

if (!process.argv.includes('--server-only')) {
  algorithm(NODES, PODS);
  algorithm(5000, PODS);
}
if (!process.argv.includes('--algorithm-only')) await endToEnd();
