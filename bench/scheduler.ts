/**
 * The scheduler (src/scheduler), in two parts:
 *
 *   bun bench/scheduler.ts [--nodes=100] [--pods=10000] [--concurrency=64] [--algorithm-only] [--server-only]
 *
 * 1. The algorithm alone, in this process: a ClusterCache of N nodes (and of 5,000), M pods
 *    scheduled one after another with Algorithm.schedule and assumed on their node, as the
 *    scheduler's loop does: CPU per pod (filters, scores, the assume), and the nodes examined
 *    per pod (percentageOfNodesToScore). Three workloads, each against the plain one measured in
 *    the same run: `plain` (bare pods), `replicaset` (pods of a ReplicaSet: PodTopologySpread's
 *    system default constraints score them, counting the set's pods per node and zone) and
 *    `affinity` (pods with a preferred pod affinity term: InterPodAffinity visits every bound pod).
 * 2. Against a real server process (src/main.ts, embedded store), everything through the API,
 *    binds followed by a watch of the namespace:
 *    - bind throughput: M pods (100m, 100Mi) created while there is no node (the scheduler
 *      leaves them alone), then N Ready nodes (32 cpu, 256Gi, 250 pods) registered: the time
 *      from the first bind to the last;
 *    - end to end: M more pods created by `concurrency` clients while the nodes are there: the
 *      time from the first create until every pod is bound, and the server's CPU per pod (all
 *      threads, /proc) against M creates of pods no scheduler serves (schedulerName
 *      bench-none): the difference is what scheduling costs the server per pod (the attempt,
 *      the binding write, the Scheduled event, their watch events).
 */

import { selectorMatcher } from '../src/api/selectors';
import type { ClusterObjects } from '../src/scheduler/cluster-objects';
import { Algorithm } from '../src/scheduler/framework';
import { ClusterCache, podInfo } from '../src/scheduler/node-info';
import { startServer } from '../test/helpers/server';
import { rssMiB, threadCpu } from './harness';

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
  const alloc = { cpu: '32', memory: '256Gi', pods: '250' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': `z${name.length % 3}` } },
    spec: {},
    status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] },
  };
};

type Workload = 'plain' | 'replicaset' | 'affinity';

/**
 * Every pod is the ReplicaSet's: the selector its controller reference leads to, with its text
 * and the label every pod it selects carries, as cluster-objects.ts builds it for the server.
 */
const rsObjects: ClusterObjects = {
  budgets: () => [],
  defaultSelector: (() => {
    const m = selectorMatcher({ matchLabels: { app: 'bench' } });
    const sel = m && { ...m, key: '[]|{"matchLabels":{"app":"bench"}}', anchor: ['app', 'bench'] as const };
    return () => sel;
  })(),
};

const preferredAffinity = {
  podAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 10, podAffinityTerm: { labelSelector: { matchLabels: { app: 'bench' } }, topologyKey: 'topology.kubernetes.io/zone' } },
    ],
  },
};

/** CPU per pod in microseconds. */
function algorithm(nodes: number, pods: number, workload: Workload = 'plain'): number {
  const cache = new ClusterCache();
  for (let i = 0; i < nodes; i++) cache.setNode(nodeObj(`n-${i}`));
  const a = new Algorithm(cache, { objects: workload === 'replicaset' ? rsObjects : undefined });
  const infos = Array.from({ length: pods }, (_, i) =>
    podInfo({
      metadata: {
        name: `p-${i}`,
        namespace: 'bench',
        uid: `u-${i}`,
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { app: 'bench' },
        ...(workload === 'replicaset'
          ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }] }
          : {}),
      },
      spec: { ...podSpec(), ...(workload === 'affinity' ? { affinity: preferredAffinity } : {}) },
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
    `algorithm (${workload}): ${nodes} nodes, ${pods} pods: ${us.toFixed(1)} us CPU per pod (${Math.round(pods / (ms / 1000))} pods/s on one core), ` +
      `${(evaluated / (pods - unscheduled)).toFixed(0)} nodes examined per pod, ${unscheduled} unschedulable`,
  );
  return us;
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

/** Follow the namespace's pods from now; resolves with the times of the first and last bind once `n` pods are bound. */
function watchBinds(srv: Srv, ns: string, n: number, rv: string): Promise<{ first: number; last: number }> {
  return new Promise((resolve, reject) => {
    void (async () => {
      const res = await srv.fetch(`/api/v1/namespaces/${ns}/pods?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const dec = new TextDecoder();
      const bound = new Set<string>();
      let first = 0;
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return reject(new Error(`watch ended with ${bound.size} of ${n} bound`));
        buf += dec.decode(value, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          nl = buf.indexOf('\n');
          const e = JSON.parse(line) as { object: { metadata: { name: string }; spec?: { nodeName?: string } } };
          if (!e.object.spec?.nodeName || bound.has(e.object.metadata.name)) continue;
          if (bound.size === 0) first = performance.now();
          bound.add(e.object.metadata.name);
          if (bound.size === n) {
            void reader.cancel();
            return resolve({ first, last: performance.now() });
          }
        }
      }
    })().catch(reject);
  });
}

const revisionOf = async (srv: Srv, ns: string): Promise<string> =>
  (await srv.json('GET', `/api/v1/namespaces/${ns}/pods?limit=1`)).body.metadata.resourceVersion;

async function endToEnd(): Promise<void> {
  const srv = await startServer();
  try {
    const pid = srv.proc.pid;
    for (const ns of ['burst', 'base', 'run']) await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });

    // 1. Bind throughput: M pods wait in a cluster without nodes (the scheduler leaves them
    //    alone), then the nodes come: from the first bind to the last.
    await createPods(srv, 'burst');
    const burst = watchBinds(srv, 'burst', PODS, await revisionOf(srv, 'burst'));
    let cpu0 = cpuTotal(pid);
    await many(NODES, async (i) => {
      const name = `node-${i}`;
      const { status, ...obj } = nodeObj(name);
      const created = await srv.json('POST', '/api/v1/nodes', obj);
      if (created.status !== 201) throw new Error(`node: ${created.status}`);
      const put = await srv.json('PUT', `/api/v1/nodes/${name}/status`, { ...created.body, status });
      if (put.status !== 200) throw new Error(`node status: ${put.status}`);
    });
    const b = await burst;
    const burstUs = (cpuTotal(pid) - cpu0) / PODS;
    console.log(
      `bind throughput: ${PODS} pending pods, ${NODES} nodes registered: first to last bind ${((b.last - b.first) / 1000).toFixed(2)} s ` +
        `(${Math.round(PODS / ((b.last - b.first) / 1000))} pods/s), server CPU ${burstUs.toFixed(0)} us per pod (all threads, bench watch included)`,
    );
    await Bun.sleep(1000);

    // 2. Baseline: creates of pods no scheduler serves.
    cpu0 = cpuTotal(pid);
    let t0 = performance.now();
    await createPods(srv, 'base', 'bench-none');
    const baseMs = performance.now() - t0;
    await Bun.sleep(500);
    const baseUs = (cpuTotal(pid) - cpu0) / PODS;

    // 3. End to end: the same creates, scheduled as they come.
    const run = watchBinds(srv, 'run', PODS, await revisionOf(srv, 'run'));
    cpu0 = cpuTotal(pid);
    t0 = performance.now();
    await createPods(srv, 'run');
    const createdMs = performance.now() - t0;
    const r = await run;
    const boundMs = r.last - t0;
    const runUs = (cpuTotal(pid) - cpu0) / PODS;

    const list = (await srv.json('GET', '/api/v1/pods')).body.items as { spec: { nodeName?: string } }[];
    const per = new Map<string, number>();
    for (const p of list) if (p.spec.nodeName) per.set(p.spec.nodeName, (per.get(p.spec.nodeName) ?? 0) + 1);
    const counts = [...per.values()];
    console.log(
      `end to end: ${NODES} nodes, ${PODS} pods, ${CONCURRENCY} clients: created in ${(createdMs / 1000).toFixed(2)} s ` +
        `(${Math.round(PODS / (createdMs / 1000))}/s), all bound after ${(boundMs / 1000).toFixed(2)} s ` +
        `(${Math.round(PODS / (boundMs / 1000))} pods/s); pods per node (both runs) ${Math.min(...counts)}-${Math.max(...counts)}`,
    );
    console.log(
      `server CPU per pod: ${runUs.toFixed(0)} us scheduled against ${baseUs.toFixed(0)} us for unscheduled creates ` +
        `(in ${(baseMs / 1000).toFixed(2)} s): scheduling adds ${(runUs - baseUs).toFixed(0)} us per pod (bench watch included); ` +
        `server RSS ${rssMiB(pid).toFixed(0)} MiB with ${3 * PODS} pods`,
    );
  } finally {
    await srv.stop();
  }
}

if (!process.argv.includes('--server-only')) {
  for (const n of [NODES, 5000]) {
    const base = algorithm(n, PODS);
    for (const w of ['replicaset', 'affinity'] as const) {
      const us = algorithm(n, PODS, w);
      console.log(`  ${w}: ${(us / base).toFixed(2)}x the plain pods' CPU per pod`);
    }
  }
}
if (!process.argv.includes('--algorithm-only')) await endToEnd();
