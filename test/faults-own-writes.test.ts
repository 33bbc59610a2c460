/**
 * Faults in the server's own writes (issue 40: "the server's own controllers are matched only
 * when a rule names them"): a FaultInjection whose subject is the ReplicaSet controller's service
 * account makes that controller's pod creates fail as a real API error would (FailedCreate
 * events, then the pods once the fault's limit is spent); a fault on every authenticated user
 * never reaches the controller.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const FI = '/apis/testing.svc.io/v1alpha1/faultinjections';
let srv: Server;

beforeAll(async () => {
  srv = await startServer({ args: ['--feature-gates=FaultInjection=true'] });
  for (const ns of ['own-named', 'own-group'])
    await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
afterAll(async () => {
  await srv?.stop();
});

const fault = (name: string, ns: string, subject: Json, limit: number): Json => ({
  apiVersion: 'testing.svc.io/v1alpha1',
  kind: 'FaultInjection',
  metadata: { name },
  spec: {
    match: [{ subjects: [subject], resourceRules: [{ verbs: ['create'], apiGroups: [''], resources: ['pods'], namespaces: [ns] }] }],
    actions: [{ error: { code: 500, message: 'etcd is on fire' } }],
    limit,
  },
});

const replicaSet = (ns: string) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web', namespace: ns },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

const pods = async (ns: string): Promise<Json[]> => (await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
const statusOf = async (name: string): Promise<Json> => (await srv.json('GET', `${FI}/${name}`)).body.status ?? {};

test('a fault naming the ReplicaSet controller fails its pod creates until its limit, as an API error would', async () => {
  const subject = { kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name: 'replicaset-controller' } };
  expect((await srv.json('POST', FI, fault('rs-named', 'own-named', subject, 2))).status).toBe(201);
  await Bun.sleep(1000); // a fault acts within a second of its creation
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/own-named/replicasets', replicaSet('own-named'))).status).toBe(201);
  // The controller's first creates fail; it retries and gets its two pods once the limit is spent.
  expect(
    (
      await until(
        () => pods('own-named'),
        (p) => p.length === 2,
        20_000,
      )
    ).length,
  ).toBe(2);
  const events = (await srv.json('GET', '/api/v1/namespaces/own-named/events')).body.items as Json[];
  const failed = events.filter((e) => e.reason === 'FailedCreate' && e.involvedObject.kind === 'ReplicaSet');
  expect(failed.length).toBeGreaterThan(0);
  expect(failed[0].message).toContain('etcd is on fire');
  expect(
    (
      await until(
        () => statusOf('rs-named'),
        (s) => s.injected === 2,
        5000,
      )
    ).injected,
  ).toBe(2);
});

test('a fault on every authenticated user does not reach the controllers: only a rule naming them does', async () => {
  const subject = { kind: 'Group', group: { name: 'system:authenticated' } };
  expect((await srv.json('POST', FI, fault('everyone', 'own-group', subject, 100))).status).toBe(201);
  const sa = { kind: 'Group', group: { name: 'system:serviceaccounts' } };
  expect((await srv.json('POST', FI, fault('all-accounts', 'own-group', sa, 100))).status).toBe(201);
  await Bun.sleep(1000);
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/own-group/replicasets', replicaSet('own-group'))).status).toBe(201);
  expect(
    (
      await until(
        () => pods('own-group'),
        (p) => p.length === 2,
        10_000,
      )
    ).length,
  ).toBe(2);
  expect((await statusOf('everyone')).injected ?? 0).toBe(0);
  expect((await statusOf('all-accounts')).injected ?? 0).toBe(0);
  // A user's own create in that namespace is faulted as before.
  const r = await srv.json('POST', '/api/v1/namespaces/own-group/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'mine' },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  expect(r.status).toBe(500);
  expect(r.body.message).toContain('etcd is on fire');
});
