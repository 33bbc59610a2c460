/**
 * The workload controllers over a workload's whole life (issue 37): a namespace holding one of
 * every workload kind (Deployment, StatefulSet with a volume claim template, DaemonSet, Job,
 * CronJob, ReplicationController, Service) deleted at once, everything gone; and, on etcd with two
 * replicas, the leader killed in the middle of a rolling update: the other replica takes the Lease
 * and finishes the rollout with no third ReplicaSet and no pod left over.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { type EtcdServer, startEtcd } from '../bench/etcd';
import { needs } from './helpers/needs';
import { type Server, serverForFile, startServer } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(90_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const labels = (app: string) => ({ app });
// The pods stop one second after their deletion (the default grace period is 30 s): what goes and
// in which order is what these tests are about, not how long a kubelet waits.
const podTemplate = (app: string, extra: Any = {}) => ({
  metadata: { labels: labels(app) },
  spec: { containers: [{ name: 'c', image: 'registry.example.com/app:1' }], terminationGracePeriodSeconds: 1, ...extra },
});

describe('a namespace with every workload kind', () => {
  const srv = serverForFile({ args: ['--simulated-nodes=2', '--cronjob-time-scale=60'] });

  test('deleted at once: every workload, pod and claim goes, then the namespace', async () => {
    const ns = 'everything';
    const post = async (p: string, body: Any) => {
      const r = await srv.json('POST', p, body);
      if (r.status !== 201) throw new Error(`POST ${p}: ${r.status} ${r.body?.message}`);
    };
    await post('/api/v1/namespaces', { metadata: { name: ns } });
    const apps = `/apis/apps/v1/namespaces/${ns}`;
    await post(`${apps}/deployments`, {
      metadata: { name: 'web' },
      spec: { replicas: 3, selector: { matchLabels: labels('web') }, template: podTemplate('web') },
    });
    await post(`${apps}/statefulsets`, {
      metadata: { name: 'db' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: labels('db') },
        template: podTemplate('db'),
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      },
    });
    await post(`${apps}/daemonsets`, {
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: labels('agent') }, template: podTemplate('agent') },
    });
    await post(`/apis/batch/v1/namespaces/${ns}/jobs`, {
      metadata: { name: 'once' },
      spec: { completions: 2, parallelism: 2, template: podTemplate('once', { restartPolicy: 'Never' }) },
    });
    await post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, {
      metadata: { name: 'often' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: podTemplate('often', { restartPolicy: 'Never' }) } } },
    });
    await post(`/api/v1/namespaces/${ns}/replicationcontrollers`, {
      metadata: { name: 'legacy' },
      spec: { replicas: 2, selector: labels('legacy'), template: podTemplate('legacy') },
    });
    await post(`/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'db' },
      spec: { selector: labels('db'), ports: [{ port: 5432 }] },
    });
    // Everything running: 3 + 2 + 2 (one per node) + 2 + 2 pods, the claims bound.
    await until(
      async () =>
        (await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items.filter((p: Any) => p.status?.phase === 'Running').length,
      (n) => n >= 11,
      30_000,
    );
    const claims = await srv.json('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`);
    expect(claims.body.items.map((c: Any) => c.metadata.name).sort()).toEqual(['data-db-0', 'data-db-1']);
    expect((await srv.json('DELETE', `/api/v1/namespaces/${ns}`)).status).toBe(200);
    const gone = await until(
      () => srv.json('GET', `/api/v1/namespaces/${ns}`),
      (r) => r.status === 404,
      45_000,
    );
    expect(gone.status).toBe(404);
    // Nothing of it is left anywhere.
    for (const p of [
      '/api/v1/pods',
      '/api/v1/persistentvolumeclaims',
      '/apis/apps/v1/replicasets',
      '/apis/apps/v1/controllerrevisions',
      '/apis/batch/v1/jobs',
    ]) {
      const l = await srv.json('GET', p);
      expect(l.body.items.filter((i: Any) => i.metadata.namespace === ns).map((i: Any) => `${p} ${i.metadata.name}`)).toEqual([]);
    }
  });
});

needs('etcd').describe('leadership moves in the middle of a rollout', () => {
  test('the new leader finishes it: one new ReplicaSet, every replica updated, no pod left over', async () => {
    const etcd = (await startEtcd()) as EtcdServer;
    const args = [
      `--etcd-servers=${etcd.endpoint}`,
      '--simulated-nodes=3',
      '--leader-elect-lease-duration=4s',
      '--leader-elect-renew-deadline=3s',
      '--leader-elect-retry-period=1s',
    ];
    let a: Server | undefined;
    let b: Server | undefined;
    try {
      a = await startServer({ args });
      b = await startServer({ args });
      const base = '/apis/apps/v1/namespaces/default/deployments';
      const create = await a.json('POST', base, {
        metadata: { name: 'roll' },
        spec: {
          replicas: 6,
          selector: { matchLabels: labels('roll') },
          strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
          template: podTemplate('roll'),
        },
      });
      expect(create.status).toBe(201);
      await until(
        () => (a as Server).json('GET', `${base}/roll`),
        (r) => r.body.status?.availableReplicas === 6,
        30_000,
      );
      const lease = await until(
        () => (a as Server).json('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/svc-apiserver-controllers'),
        (r) => typeof r.body.spec?.holderIdentity === 'string',
        10_000,
      );
      const holder = lease.body.spec.holderIdentity as string;
      const leader = a.logs().includes(`${holder} leads`) ? a : b;
      const other = leader === a ? b : a;
      // The rollout starts; one surge pod later the leader dies.
      const patched = await other.json(
        'PATCH',
        `${base}/roll`,
        { spec: { template: { spec: { containers: [{ name: 'c', image: 'registry.example.com/app:2' }] } } } },
        { 'content-type': 'application/strategic-merge-patch+json' },
      );
      expect(patched.status).toBe(200);
      await until(
        async () => (await other.json('GET', '/apis/apps/v1/namespaces/default/replicasets')).body.items.length,
        (n) => n >= 2,
        10_000,
      );
      await leader.stop('SIGKILL');
      const done = await until(
        () => other.json('GET', `${base}/roll`),
        (r) => {
          const s = r.body.status ?? {};
          return (
            s.updatedReplicas === 6 && s.availableReplicas === 6 && s.replicas === 6 && s.observedGeneration === r.body.metadata.generation
          );
        },
        60_000,
      );
      expect(done.body.status.updatedReplicas).toBe(6);
      const sets = (await other.json('GET', '/apis/apps/v1/namespaces/default/replicasets')).body.items;
      expect(sets).toHaveLength(2);
      const byImage = Object.fromEntries(sets.map((s: Any) => [s.spec.template.spec.containers[0].image, s.spec.replicas]));
      expect(byImage).toEqual({ 'registry.example.com/app:1': 0, 'registry.example.com/app:2': 6 });
      const pods = await until(
        async () => (await other.json('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Droll')).body.items,
        (items: Any[]) => items.length === 6,
        30_000,
      );
      expect(pods.every((p: Any) => p.spec.containers[0].image === 'registry.example.com/app:2')).toBe(true);
    } finally {
      await a?.stop();
      await b?.stop();
      await etcd.stop();
    }
  });
});
