/**
 * What a Pod create and a Pod LIST cost the registry, in process (issue 35's bench: the pod
 * validation of the reference, measured against the tree before it with bench/ab-api.ts
 * --script=bench/pod-create.ts <rev>): the registry on an in-memory store, no admission, no
 * HTTP; a pod as a Deployment's ReplicaSet makes it (two containers with probes, resources,
 * ports, env, volume mounts; volumes; affinity; tolerations; a topology spread constraint;
 * securityContext), 64 creates in flight, CPU of the process per create; then LISTs of all of
 * them from the store.
 *
 *   bun bench/pod-create.ts [--creates=N] [--rounds=N]
 *
 * Prints `pod create: <us> us CPU/op, <n> ops/s` and `pod LIST <n>: median <ms> ms` per round.
 * It imports only what every revision since issue 33 has (ApiRegistry, builtinKinds, MvccStore).
 */
import { builtinKinds } from '../src/kinds/builtin';
import { ApiRegistry } from '../src/registry/api-registry';
import type { ResourceStore } from '../src/registry/generic';
import { ALL_OBJECTS } from '../src/registry/list';
import { defaulters } from '../src/schema/defaulters';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { MvccStore } from '../src/store/mvcc';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const CREATES = Number(arg('creates') ?? 10_000);
const ROUNDS = Number(arg('rounds') ?? 3);
const INFLIGHT = 64;

/** The bench's pod, as a Deployment's ReplicaSet makes it. */
export function benchPod(name: string): unknown {
  const container = (n: string, port: number) => ({
    name: n,
    image: `registry.example.com/team/${n}:1.4.2`,
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'MODE', value: 'production' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app' },
      { name: 'cache', mountPath: '/var/cache/app' },
    ],
    livenessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 10 },
    readinessProbe: { tcpSocket: { port }, initialDelaySeconds: 2 },
    securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'web', 'pod-template-hash': '7d9c8b6f5' } },
    spec: {
      containers: [container('web', 8080), container('sidecar', 9090)],
      volumes: [
        { name: 'config', configMap: { name: 'web-config' } },
        { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }],
          },
        },
      },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: 'web' } },
        },
      ],
      securityContext: { runAsUser: 1000, fsGroup: 2000 },
    },
  };
}

async function round(r: number): Promise<{ usPerCreate: number; opsPerSec: number; listMs: number }> {
  const kv = await MvccStore.open({});
  const api = new ApiRegistry({
    kv,
    schemas: new SchemaSet(definitions as unknown as Definitions, overlays, defaulters),
    kinds: builtinKinds(() => true),
  });
  const pods = api.lookup('', 'v1', 'pods') as ResourceStore;
  const w = () => ({ dryRun: false, fieldValidation: 'Strict' as const, warnings: [], fieldManager: 'bench' });
  await (api.lookup('', 'v1', 'namespaces') as ResourceStore).create(
    '',
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
    w(),
  );
  // Warm-up: the code paths compiled before the clock runs.
  for (let i = 0; i < 500; i++) await pods.create('default', benchPod(`warm-${i}`), w());
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      for (let i = next++; i < CREATES; i = next++) await pods.create('default', benchPod(`p-${r}-${i}`), w());
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const lists: number[] = [];
  for (let i = 0; i < 5; i++) {
    const l0 = performance.now();
    const got = await pods.list('default', ALL_OBJECTS);
    if (got.items.length < CREATES) throw new Error(`bug: listed ${got.items.length}`);
    lists.push(performance.now() - l0);
  }
  lists.sort((a, b) => a - b);
  await kv.close();
  return { usPerCreate: (cpu.user + cpu.system) / CREATES, opsPerSec: (CREATES / ms) * 1000, listMs: lists[2] as number };
}

if (import.meta.main)
  for (let r = 0; r < ROUNDS; r++) {
    const x = await round(r);
    console.log(`pod create: ${x.usPerCreate.toFixed(1)} us CPU/op, ${Math.round(x.opsPerSec)} ops/s`);
    console.log(`pod LIST ${CREATES}: median ${x.listMs.toFixed(1)} ms`);
  }
