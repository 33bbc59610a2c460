/** Objects more than one bench uses, so that their figures compare the same thing. */

/** The LimitRange of the admission benches (bench/admission.ts, bench/quota.ts): defaults, a max, a ratio. */
export const BENCH_LIMIT_RANGE_SPEC = {
  limits: [
    {
      type: 'Container',
      default: { cpu: '500m', memory: '256Mi' },
      defaultRequest: { cpu: '100m' },
      max: { cpu: '2' },
      maxLimitRequestRatio: { cpu: '10' },
    },
    { type: 'Pod', max: { memory: '4Gi' } },
  ],
};

/** A Pod of about 3 KB of JSON, shaped like a Deployment's pod with a sidecar (the codec benches). */
export function pod3k(i: number): Record<string, unknown> {
  const container = (name: string, image: string) => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: Array.from({ length: 6 }, (_, k) => ({ name: `ENV_${k}`, value: `value-${k}-${i}` })),
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    volumeMounts: [{ name: 'config', mountPath: '/etc/config', readOnly: true }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-5d8f7c9b4-${i}`,
      namespace: 'default',
      uid: `2b0f7d2e-4c55-4a53-9d6c-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      creationTimestamp: '2026-05-01T10:00:00Z',
      labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '5d8f7c9b4' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-5d8f7c9b4',
          uid: '7e1b2c3d-0000-4000-8000-000000000001',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [container('web', 'registry.example/web:1.2.3'), container('proxy', 'registry.example/proxy:2.0')],
      volumes: [{ name: 'config', configMap: { name: 'web-config', defaultMode: 420 } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 100}`,
      schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: {
      phase: 'Running',
      podIP: `10.0.${i % 250}.12`,
      hostIP: '192.168.1.10',
      startTime: '2026-05-01T10:00:01Z',
      qosClass: 'Burstable',
    },
  };
}

/** The Pod that bench/api.ts and bench/cold-list.ts create and list (100 nodes, 50 apps). */
export function listPod(i: number): Record<string, unknown> {
  const n = String(i).padStart(6, '0');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${n}`, namespace: 'bench', labels: { app: `app-${i % 50}`, tier: i % 2 ? 'web' : 'db' } },
    spec: {
      nodeName: `node-${i % 100}`,
      containers: [
        {
          name: 'main',
          image: 'registry.example/app:1.2.3',
          ports: [{ containerPort: 8080 }],
          env: [{ name: 'MODE', value: 'bench' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
        },
      ],
    },
  };
}

/** bench/codec-lists.ts's and bench/restart.ts's pod: pod3k's (~2.4 KB) as a client creates it, `web-<i>` in `bench`, without status or owners. */
export function createdPod3k(i: number): Record<string, unknown> {
  const p = pod3k(i) as { metadata: Record<string, unknown>; status?: unknown };
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ownerReferences: _o, ...metadata } = p.metadata;
  return { ...p, metadata: { ...metadata, name: `web-${i}`, namespace: 'bench' }, status: undefined };
}
