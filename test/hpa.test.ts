/**
 * metrics.k8s.io (src/simulation/metrics.ts) and the HorizontalPodAutoscaler controller
 * (src/controllers/hpa) end to end with kubectl on simulated nodes.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const srv = serverForFile({ args: ['--simulated-nodes=2'] });
const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };

const pods = async (app: string): Promise<Any[]> =>
  ((await srv.json('GET', `${NS}/pods?labelSelector=app%3D${app}`)).body.items as Any[]).filter((p) => !p.metadata.deletionTimestamp);
const running = (ps: Any[]) => ps.filter((p) => p.status?.phase === 'Running');

function deployment(name: string, replicas: number, annotations: Record<string, string> = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations },
        spec: {
          containers: [
            { name: 'app', image: 'nginx', resources: { requests: { cpu: '200m', memory: '100Mi' } } },
            { name: 'log', image: 'busybox', resources: { requests: { cpu: '50m', memory: '20Mi' } } },
          ],
        },
      },
    },
  };
}

async function deploy(name: string, replicas: number, annotations: Record<string, string> = {}): Promise<Any[]> {
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(name, replicas, annotations))).status).toBe(
    201,
  );
  return until(
    () => pods(name),
    (p) => running(p).length === replicas,
    20_000,
  );
}

test('metrics.k8s.io: discovery, PodMetrics and NodeMetrics, kubectl top pods / nodes', async () => {
  const ps = await deploy('top', 2, { 'sim.svc.io/cpu-usage': '{"app":"150m"}', 'sim.svc.io/memory-usage': '60Mi' });
  expect(running(ps)).toHaveLength(2);
  const d = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1')).body;
  expect(d.resources.map((r: Any) => [r.name, r.kind, r.namespaced, r.verbs]).sort()).toEqual([
    ['nodes', 'NodeMetrics', false, ['get', 'list']],
    ['pods', 'PodMetrics', true, ['get', 'list']],
  ]);
  const svc = (await srv.json('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.svc.io')).body;
  expect(svc.status.conditions[0]).toMatchObject({ type: 'Available', status: 'True' });

  const list = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dtop')).body;
  expect(list.kind).toBe('PodMetricsList');
  expect(list.apiVersion).toBe('metrics.k8s.io/v1beta1');
  expect(list.items).toHaveLength(2);
  const one = (await srv.json('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/${ps[0].metadata.name}`)).body;
  expect(one).toMatchObject({ kind: 'PodMetrics', window: '15s', metadata: { name: ps[0].metadata.name, labels: { app: 'top' } } });
  expect(one.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // app: 150m as annotated; log: 50% of its 50m request. Memory 60Mi shared 100:20.
  expect(one.containers).toEqual([
    { name: 'app', usage: { cpu: '150000000n', memory: '51200Ki' } },
    { name: 'log', usage: { cpu: '25000000n', memory: '10240Ki' } },
  ]);
  expect((await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dnone')).body.items).toEqual([]);
  const nodes = (await srv.json('GET', '/apis/metrics.k8s.io/v1beta1/nodes')).body.items as Any[];
  expect(nodes.length).toBe(2);

  const top = srv.kubectl(['top', 'pods', '-l', 'app=top']);
  expect(top.stderr).toBe('');
  expect(top.stdout).toMatch(/NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
  expect(top.stdout).toMatch(/top-\S+\s+175m\s+60Mi/);
  const containers = srv.kubectl(['top', 'pod', ps[0].metadata.name, '--containers']);
  expect(containers.stdout).toMatch(/\s+app\s+150m\s+50Mi/);
  expect(containers.stdout).toMatch(/\s+log\s+25m\s+10Mi/);
  const topNodes = srv.kubectl(['top', 'nodes']);
  expect(topNodes.stderr).toBe('');
  expect(topNodes.stdout).toMatch(/NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)/);
  expect(topNodes.stdout.trim().split('\n')).toHaveLength(3);
  // The table kubectl get prints.
  expect(srv.kubectl(['get', 'podmetrics', ps[0].metadata.name]).stdout).toMatch(
    /CPU\(cores\)\s+MEMORY\(bytes\)\s+WINDOW\n\S+\s+175m\s+60Mi\s+15s/i,
  );
  await srv.json('DELETE', '/apis/apps/v1/namespaces/default/deployments/top');
});
