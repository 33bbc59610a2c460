/**
 * What managedFields cost a pod's life, in process: the create's entry (a ReplicaSet's pod), the
 * kubelet's first status write (Pending to Running: conditions, container statuses, IPs: the
 * slow path, fields added) and its second (Ready flips: scalars only, the fast path). Each write
 * starts, as the registry's update loop does, from the stored object parsed again from its text.
 * Pods differ in name only, as a Deployment's do. The fields each write cannot set are ignored as
 * the registry ignores them (status on the create, spec on the status writes). Compare revisions with bench/ab-api.ts
 * --script=bench/managed-fields.ts <rev> (the script is copied into the other tree).
 *
 *   bun bench/managed-fields.ts [--pods=N] [--rounds=N]
 *
 * Prints `managedFields create / status 1 / status 2: <us> / <us> / <us> us CPU per write`.
 */
import { recordUpdate } from '../src/registry/apply';
import { FieldSet, fieldPE } from '../src/registry/apply/fieldset';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { benchPod } from './pod-create';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 5_000);
const ROUNDS = Number(arg('rounds') ?? 5);

// biome-ignore lint/suspicious/noExplicitAny: bench data
type Any = any;
const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
const POD = 'io.svc.api.core.v1.Pod';
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString().replace(/\.\d{3}Z$/, 'Z');

function status(ready: boolean, i: number): Record<string, unknown> {
  const cond = (type: string, ok: boolean) => ({ type, status: ok ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: at(1) });
  const container = (name: string) => ({
    name,
    state: { running: { startedAt: at(1) } },
    lastState: {},
    ready,
    restartCount: 0,
    image: `registry.example.com/team/${name}:1.4.2`,
    imageID: `registry.example.com/team/${name}@sha256:${'ab'.repeat(32)}`,
    containerID: `containerd://${i.toString(16).padStart(64, '0')}`,
    started: true,
  });
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return {
    phase: 'Running',
    conditions: [
      cond('PodReadyToStartContainers', true),
      cond('Initialized', true),
      cond('Ready', ready),
      cond('ContainersReady', ready),
      cond('PodScheduled', true),
    ],
    hostIP: '172.18.0.2',
    hostIPs: [{ ip: '172.18.0.2' }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: at(1),
    containerStatuses: [container('sidecar'), container('web')],
    qosClass: 'Burstable',
  };
}

function round(): [number, number, number] {
  const cpu = [0, 0, 0];
  for (let i = 0; i < PODS; i++) {
    const base = { apiVersion: 'v1', schemas, defName: POD, now: at(0) };
    const created = benchPod(`web-7d9c8b6f5-${i.toString(36)}`) as Any;
    created.metadata.namespace = 'default';
    created.spec.nodeName = `node-${i % 100}`;
    created.status = { phase: 'Pending', qosClass: 'Burstable' };
    let t = process.cpuUsage();
    recordUpdate(undefined, created, { ...base, manager: 'kube-controller-manager', ignoredFields: FieldSet.of([fieldPE('status')]) });
    let d = process.cpuUsage(t);
    cpu[0] = (cpu[0] as number) + d.user + d.system;
    let text = JSON.stringify(created);

    for (const [k, ready] of [
      [1, false],
      [2, true],
    ] as const) {
      const old = JSON.parse(text);
      const next = JSON.parse(text);
      next.status = status(ready, i);
      t = process.cpuUsage();
      recordUpdate(old, next, {
        ...base,
        manager: 'kubelet',
        subresource: 'status',
        now: at(k),
        ignoredFields: FieldSet.of([fieldPE('spec')]),
      });
      d = process.cpuUsage(t);
      cpu[k] = (cpu[k] as number) + d.user + d.system;
      text = JSON.stringify(next);
    }
  }
  return cpu.map((c) => c / PODS) as [number, number, number];
}

round(); // warm up
const results: [number, number, number][] = [];
for (let r = 0; r < ROUNDS; r++) results.push(round());
const median = (k: number) => results.map((x) => x[k] as number).sort((a, b) => a - b)[Math.floor(results.length / 2)] as number;
console.log(
  `managedFields create / status 1 / status 2: ${median(0).toFixed(1)} / ${median(1).toFixed(1)} / ${median(2).toFixed(1)} us CPU per write (${PODS} pods, median of ${ROUNDS} rounds)`,
);
