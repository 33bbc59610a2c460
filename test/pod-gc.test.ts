/**
 * The pod garbage collector (src/controllers/pod-gc.ts), end to end: terminated pods beyond
 * --terminated-pod-gc-threshold go, evicted ones first, then the oldest; the pods of a deleted
 * node (or of one that never existed) are marked Failed with DisruptionTarget/DeletionByPodGC and
 * force-deleted after the quarantine; terminating pods never scheduled, and terminating pods on a
 * not-Ready node tainted out-of-service, are force-deleted. Short periods keep it fast; no
 * simulated nodes, so no kubelet touches the pods.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({
  args: [
    '--controllers=*,-root-ca-certificate-publisher-controller',
    '--terminated-pod-gc-threshold=2',
    '--pod-gc-period=300ms',
    '--pod-gc-quarantine=1s',
  ],
});

async function namespace(name: string): Promise<void> {
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name } }, JSON_CT)).status).toBe(201);
}

async function pod(ns: string, name: string, spec: Any = {}, meta: Any = {}): Promise<Any> {
  const r = await srv.json(
    'POST',
    `/api/v1/namespaces/${ns}/pods`,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } },
    JSON_CT,
  );
  expect(r.status).toBe(201);
  return r.body;
}

async function node(name: string, taints: Any[] = [], ready?: boolean): Promise<void> {
  expect(
    (await srv.json('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { taints } }, JSON_CT)).status,
  ).toBe(201);
  if (ready !== undefined) {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const condition = { type: 'Ready', status: ready ? 'True' : 'False', reason: 'Test', lastHeartbeatTime: now, lastTransitionTime: now };
    const r = await srv.json('PATCH', `/api/v1/nodes/${name}/status`, { status: { conditions: [condition] } }, MERGE);
    expect(r.status).toBe(200);
  }
}

const setPhase = async (ns: string, name: string, status: Any) => {
  const r = await srv.json('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, { status }, MERGE);
  expect(r.status).toBe(200);
};

const names = async (ns: string): Promise<string[]> =>
  ((await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items as Any[]).map((p) => p.metadata.name).sort();

const getPod = async (ns: string, name: string) => srv.json('GET', `/api/v1/namespaces/${ns}/pods/${name}`);

const unhold = async (ns: string, name: string) => {
  const r = await srv.json('PATCH', `/api/v1/namespaces/${ns}/pods/${name}`, { metadata: { finalizers: null } }, MERGE);
  expect([200, 404]).toContain(r.status);
};

describe('pod garbage collector', () => {
  test('terminated pods beyond the threshold go: evicted first, then the oldest', async () => {
    await namespace('gc-terminated');
    for (const n of ['t-a', 't-b', 't-c', 't-d', 'running']) await pod('gc-terminated', n);
    // The newest pod, evicted, goes before the older ones; then the oldest of the rest.
    await setPhase('gc-terminated', 't-d', { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' });
    for (const n of ['t-a', 't-b', 't-c']) await setPhase('gc-terminated', n, { phase: 'Succeeded' });
    const left = await until(
      () => names('gc-terminated'),
      (l) => l.length === 3,
      10_000,
    );
    expect(left).toEqual(['running', 't-b', 't-c']);
    // Two terminated pods are within the threshold: nothing more goes.
    await Bun.sleep(1000);
    expect(await names('gc-terminated')).toEqual(['running', 't-b', 't-c']);
    // kubectl sees the same.
    const k = srv.kubectl(['get', 'pods', '-n', 'gc-terminated', '-o', 'name']);
    expect(k.code).toBe(0);
    expect(k.stdout.trim().split('\n').sort()).toEqual(['pod/running', 'pod/t-b', 'pod/t-c']);
  });

  test("a deleted node's pods, and pods of a node that never existed, are marked Failed and force-deleted after the quarantine", async () => {
    await namespace('gc-orphans');
    await node('doomed-node');
    await node('kept-node');
    // A finalizer holds each pod after its delete, so that the status written before it shows.
    const hold = { finalizers: ['example.com/hold'] };
    await pod('gc-orphans', 'orphan', { nodeName: 'doomed-node' }, hold);
    await pod('gc-orphans', 'ghost', { nodeName: 'never-registered' }, hold);
    await pod('gc-orphans', 'kept', { nodeName: 'kept-node' }, hold);
    const del = srv.kubectl(['delete', 'node', 'doomed-node']);
    expect(del.code).toBe(0);
    for (const name of ['orphan', 'ghost']) {
      const p = (
        await until(
          () => getPod('gc-orphans', name),
          (r) => r.body?.metadata?.deletionTimestamp !== undefined,
          10_000,
        )
      ).body;
      expect(p.metadata.deletionTimestamp).toBeString();
      expect(p.metadata.deletionGracePeriodSeconds).toBe(0);
      expect(p.status.phase).toBe('Failed');
      const c = (p.status.conditions as Any[]).find((x) => x.type === 'DisruptionTarget');
      expect(c).toMatchObject({ status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
      expect(c.lastTransitionTime).toBeString();
    }
    // The pod of a node that exists is left alone.
    const kept = (await getPod('gc-orphans', 'kept')).body;
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect(kept.status.phase).toBe('Pending');
    for (const name of ['orphan', 'ghost', 'kept']) await unhold('gc-orphans', name);
    expect(
      await until(
        () => names('gc-orphans'),
        (l) => l.length === 1,
        5000,
      ),
    ).toEqual(['kept']);
  });

  test('a terminating pod never scheduled is marked Failed and force-deleted', async () => {
    await namespace('gc-unscheduled');
    await pod('gc-unscheduled', 'unscheduled', {}, { finalizers: ['example.com/hold'] });
    expect(srv.kubectl(['delete', 'pod', '-n', 'gc-unscheduled', 'unscheduled', '--wait=false']).code).toBe(0);
    const p = (
      await until(
        () => getPod('gc-unscheduled', 'unscheduled'),
        (r) => r.body?.status?.phase === 'Failed',
        10_000,
      )
    ).body;
    expect(p.status.phase).toBe('Failed');
    expect(p.metadata.deletionTimestamp).toBeString();
    await unhold('gc-unscheduled', 'unscheduled');
    expect(
      (
        await until(
          () => getPod('gc-unscheduled', 'unscheduled'),
          (r) => r.status === 404,
          5000,
        )
      ).status,
    ).toBe(404);
  });

  test('terminating pods on a not-Ready node tainted out-of-service are force-deleted; on a Ready one they wait', async () => {
    await namespace('gc-oos');
    const oos = [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoSchedule' }];
    await node('shut-node', oos, false);
    await node('up-node', oos, true);
    await pod('gc-oos', 'on-shut', { nodeName: 'shut-node', terminationGracePeriodSeconds: 600 });
    await pod('gc-oos', 'on-up', { nodeName: 'up-node', terminationGracePeriodSeconds: 600 });
    for (const name of ['on-shut', 'on-up']) expect(srv.kubectl(['delete', 'pod', '-n', 'gc-oos', name, '--wait=false']).code).toBe(0);
    // Both wait for a kubelet that does not come (600 s of grace); the collector ends the one on
    // the node that is shut down.
    expect(
      (
        await until(
          () => getPod('gc-oos', 'on-shut'),
          (r) => r.status === 404,
          10_000,
        )
      ).status,
    ).toBe(404);
    const up = await getPod('gc-oos', 'on-up');
    expect(up.status).toBe(200);
    expect(up.body.metadata.deletionTimestamp).toBeString();
    expect(up.body.status.phase).toBe('Pending');
  });

  test('--terminated-pod-gc-threshold is refused when not a number', async () => {
    const r = Bun.spawnSync([process.execPath, 'src/main.ts', '--terminated-pod-gc-threshold=lots'], { cwd: `${import.meta.dir}/..` });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.toString()).toContain('invalid argument "lots" for "--terminated-pod-gc-threshold" flag: invalid number "lots"');
  });
});
