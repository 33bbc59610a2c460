/**
 * Merge patches of Pods' labels under saturation (wrk, 64 clients), the write a load test's
 * kubelets and controllers send most: server CPU per patch (all threads, from /proc) and rate.
 *
 *   bun bench/pod-patch.ts [--pods=5000] [--ms=8000] [--warm-ms=6000] [--status] [--profile=DIR]
 *
 * --status: a kubelet's write instead, a strategic merge patch of pods/status changing one
 * condition's message, each pod first given a kubelet's full status (conditions, container
 * statuses, addresses).
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
import { cpuReport, createPods, load, threadCpu } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 5000);
const MS = Number(arg('ms') ?? 8000);
const WARM_MS = Number(arg('warm-ms') ?? 6000);
const profile = arg('profile');
const STATUS = process.argv.includes('--status');

/** A running pod's status as a kubelet writes it. */
const kubeletStatus = (i: number) => ({
  status: {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: '2026-11-29T10:00:00Z',
    })),
    hostIP: '10.0.0.1',
    hostIPs: [{ ip: '10.0.0.1' }],
    podIP: `10.1.${(i >> 8) & 255}.${i & 255}`,
    podIPs: [{ ip: `10.1.${(i >> 8) & 255}.${i & 255}` }],
    startTime: '2026-11-29T10:00:00Z',
    containerStatuses: [
      {
        name: 'c',
        state: { running: { startedAt: '2026-11-29T10:00:01Z' } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: 'registry.example/app:1',
        imageID: 'registry.example/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
        containerID: `containerd://${i.toString(16).padStart(64, '0')}`,
        started: true,
      },
    ],
  },
});
if (profile)
  process.env.SVC_SERVER_BUN_ARGS = `--cpu-prof --cpu-prof-dir=${path.resolve(profile)} ${process.env.SVC_SERVER_BUN_ARGS ?? ''}`;

const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
try {
  await createPods(srv, PODS, (i) => `node-${i}`);
  if (STATUS)
    for (let i = 0; i < PODS; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, PODS - i) }, async (_, j) => {
          const r = await srv.json(
            'PATCH',
            `/api/v1/namespaces/bench/pods/pod-${i + j}/status?fieldManager=kubelet`,
            kubeletStatus(i + j),
            {
              'content-type': 'application/strategic-merge-patch+json',
            },
          );
          if (r.status !== 200) throw new Error(`status of pod-${i + j}: ${r.status}`);
        }),
      );
  // Pod i % PODS, with a value never sent before (each patch changes the pod).
  const spec = {
    urlTemplate: `${srv.url}/api/v1/namespaces/bench/pods/pod-{{i}}${STATUS ? '/status?fieldManager=kubelet' : ''}`,
    urlModulo: PODS,
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${srv.token}`,
      'content-type': STATUS ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json',
    },
    bodyTemplate: STATUS
      ? '{"status":{"conditions":[{"type":"Ready","status":"True","message":"m{{i}}"}]}}'
      : '{"metadata":{"labels":{"rev":"r{{i}}"}}}',
    ca: srv.ca,
  };
  await load({ ...spec, durationMs: WARM_MS });
  const cpu = threadCpu(srv.proc.pid);
  const r = await load({ ...spec, durationMs: MS });
  console.log(
    `pod ${STATUS ? 'status strategic merge' : 'merge'} patch (64 clients, ${PODS} pods, after ${WARM_MS / 1000} s of warm-up): ${r.ops}/s p50 ${r.p50} ms p99 ${r.p99} ms (errors ${r.errors}, codes ${JSON.stringify(r.codes)})`,
  );
  console.log(cpuReport(STATUS ? 'pod status patch' : 'pod merge patch', cpu, srv.proc.pid, r));
} finally {
  await srv.stop();
}
