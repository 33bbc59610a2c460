/**
 * Merge patches of Pods' labels under saturation (wrk, 64 clients), the write a load test's
 * kubelets and controllers send most: server CPU per patch (all threads, from /proc) and rate.
 *
 *   bun bench/pod-patch.ts [--pods=5000] [--ms=8000] [--warm-ms=6000] [--profile=DIR]
 *
 * A fresh server gets PODS pods (bench/node-watchers.ts's shape, a node each), then WARM_MS of
 * patches as warm-up and MS measured, each patch setting one pod's label to a new value (pod
 * i % PODS: after the first pass, the writer changes a value it alone owns, as a controller's
 * repeated writes do). The warm-up is longer than bench/api.ts's 2 s: a pod write runs far more
 * code (the pod's validation, the scheduler and the controllers following the pod), and after
 * 2 s the JIT compiler threads still took 123-180 us per patch. --profile: the server's CPU
 * profile (bun --cpu-prof) into DIR.
 */
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { cpuReport, load, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 5000);
const MS = Number(arg('ms') ?? 8000);
const WARM_MS = Number(arg('warm-ms') ?? 6000);
const profile = arg('profile');
if (profile)
  process.env.SVC_SERVER_BUN_ARGS = `--cpu-prof --cpu-prof-dir=${path.resolve(profile)} ${process.env.SVC_SERVER_BUN_ARGS ?? ''}`;

const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
try {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  for (let i = 0; i < PODS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, PODS - i) }, (_, j) =>
        srv.json('POST', '/api/v1/namespaces/bench/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `pod-${i + j}`, labels: { app: 'bench' } },
          spec: { nodeName: `node-${i + j}`, containers: [{ name: 'c', image: 'registry.example/app:1' }] },
        }),
      ),
    );
  // Pod i % PODS, with a label value never sent before (each patch changes the pod).
  const spec = {
    urlTemplate: `${srv.url}/api/v1/namespaces/bench/pods/pod-{{i}}`,
    urlModulo: PODS,
    method: 'PATCH',
    headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'application/merge-patch+json' },
    bodyTemplate: '{"metadata":{"labels":{"rev":"r{{i}}"}}}',
    ca: srv.ca,
  };
  await load({ ...spec, durationMs: WARM_MS });
  const cpu = threadCpu(srv.proc.pid);
  const r = await load({ ...spec, durationMs: MS });
  console.log(
    `pod merge patch (64 clients, ${PODS} pods, after ${WARM_MS / 1000} s of warm-up): ${r.ops}/s p50 ${r.p50} ms p99 ${r.p99} ms (errors ${r.errors}, codes ${JSON.stringify(r.codes)})`,
  );
  console.log(cpuReport('pod merge patch', cpu, srv.proc.pid, r));
} finally {
  await srv.stop();
}
