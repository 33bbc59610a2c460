/**
 * The ReplicaSet controller (src/controllers/replicaset.ts), end to end on simulated nodes: a
 * ReplicaSet's pods are created from its template, owned by it, Running and Ready; a deleted pod
 * is replaced; scale-down follows the reference's ranking (pod-deletion-cost here); orphans the
 * selector matches are adopted, pods whose labels stop matching are released; a ResourceQuota on
 * pods stops creation with the ReplicaFailure condition and FailedCreate events. The ranking
 * itself is checked on pods as data.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Obj } from '../src/api/meta';
import { podsToDelete } from '../src/controllers/replicaset';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({ args: ['--simulated-nodes=2'] });

const rsBody = (name: string, replicas: number, labels: Record<string, string>): Any => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: labels },
    template: {
      metadata: { labels, annotations: { 'sim.svc.io/stop-delay': '0s' } },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    },
  },
});

async function ensureNs(ns: string): Promise<void> {
  if (ns === 'default') return;
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, JSON_CT);
}

async function createRS(name: string, replicas: number, labels: Record<string, string>, ns = 'default'): Promise<Any> {
  const r = await srv.json('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, rsBody(name, replicas, labels), JSON_CT);
  expect(r.status).toBe(201);
  return r.body;
}

const getRS = async (name: string, ns = 'default'): Promise<Any> =>
  (await srv.json('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`)).body;
const listPods = async (selector: string, ns = 'default'): Promise<Any[]> =>
  (await srv.json('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items;
const live = (pods: Any[]) => pods.filter((p) => !p.metadata.deletionTimestamp);
const ready = (p: Any) => (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True');

describe('ReplicaSet controller', () => {
  test('creates spec.replicas pods from the template, owned, Running and Ready; status counts them', async () => {
    const rs = await createRS('web', 3, { app: 'web' });
    const pods = await until(
      () => listPods('app=web'),
      (ps) => ps.length === 3 && ps.every((p) => p.status?.phase === 'Running' && ready(p)),
      20_000,
    );
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(p.metadata.generateName).toBe('web-');
      expect(p.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(p.spec.nodeName).toMatch(/^sim-node-/);
    }
    const got = await until(
      () => getRS('web'),
      (x) => x.status?.availableReplicas === 3,
      20_000,
    );
    expect(got.status).toMatchObject({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    const created = events.filter((e) => e.involvedObject.name === 'web' && e.reason === 'SuccessfulCreate');
    expect(created.map((e) => e.message).sort()).toEqual(pods.map((p) => `Created pod: ${p.metadata.name}`).sort());
    expect(created[0].source.component).toBe('replicaset-controller');
  });

  test('expectations: a burst of creations and pod events never makes more pods than replicas', async () => {
    const seen: number[] = [];
    let on = true;
    const watching = (async () => {
      while (on) {
        seen.push(live(await listPods('app=burst')).length);
        await Bun.sleep(10);
      }
    })();
    await createRS('burst', 30, { app: 'burst' });
    const pods = await until(
      () => listPods('app=burst'),
      (ps) => live(ps).length === 30 && live(ps).every(ready),
      30_000,
    );
    // Pod status updates (scheduling, running, ready) keep syncing it: still 30.
    await Bun.sleep(500);
    on = false;
    await watching;
    expect(live(pods)).toHaveLength(30);
    expect(Math.max(...seen)).toBeLessThanOrEqual(30);
    expect(live(await listPods('app=burst'))).toHaveLength(30);
    // One SuccessfulCreate per pod made (created in slow-start batches of 1, 2, 4, 8, 15).
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    expect(events.filter((e) => e.involvedObject.name === 'burst' && e.reason === 'SuccessfulCreate')).toHaveLength(30);
  });

  test('a deleted pod is replaced', async () => {
    const [victim] = live(await listPods('app=web'));
    const r = await srv.json('DELETE', `/api/v1/namespaces/default/pods/${victim.metadata.name}`);
    expect(r.status).toBe(200);
    const pods = await until(
      () => listPods('app=web'),
      (ps) => live(ps).length === 3 && live(ps).every(ready) && !live(ps).some((p) => p.metadata.name === victim.metadata.name),
      20_000,
    );
    expect(live(pods)).toHaveLength(3);
    expect(live(pods).map((p) => p.metadata.name)).not.toContain(victim.metadata.name);
  });

  test('scale down deletes the lowest ranked pods (pod-deletion-cost)', async () => {
    await createRS('ranked', 4, { app: 'ranked' });
    const pods = await until(
      () => listPods('app=ranked'),
      (ps) => live(ps).length === 4 && live(ps).every(ready),
      20_000,
    );
    // Costs 10, 20, 30, 40: the two cheapest go.
    const sorted = live(pods).map((p) => p.metadata.name as string);
    for (const [i, name] of sorted.entries()) {
      const r = await srv.json(
        'PATCH',
        `/api/v1/namespaces/default/pods/${name}`,
        { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String((i + 1) * 10) } } },
        MERGE,
      );
      expect(r.status).toBe(200);
    }
    const s = await srv.json('PATCH', '/apis/apps/v1/namespaces/default/replicasets/ranked', { spec: { replicas: 2 } }, MERGE);
    expect(s.status).toBe(200);
    const left = await until(
      () => listPods('app=ranked'),
      (ps) => live(ps).length === 2,
      20_000,
    );
    expect(
      live(left)
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(sorted.slice(2).sort());
    const rs = await until(
      () => getRS('ranked'),
      (x) => x.status?.replicas === 2,
      10_000,
    );
    expect(rs.status.replicas).toBe(2);
  });

  test('orphans the selector matches are adopted; a pod whose labels stop matching is released and replaced', async () => {
    for (const name of ['orphan-a', 'orphan-b']) {
      const r = await srv.json(
        'POST',
        '/api/v1/namespaces/default/pods',
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app: 'adopt' } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
        },
        JSON_CT,
      );
      expect(r.status).toBe(201);
    }
    const rs = await createRS('adopter', 2, { app: 'adopt' });
    const pods = await until(
      () => listPods('app=adopt'),
      (ps) => ps.every((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid),
      10_000,
    );
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(['orphan-a', 'orphan-b']);
    expect(pods[0].metadata.ownerReferences[0]).toMatchObject({
      kind: 'ReplicaSet',
      name: 'adopter',
      controller: true,
      blockOwnerDeletion: true,
    });
    // Nothing more was created.
    await Bun.sleep(500);
    expect(live(await listPods('app=adopt'))).toHaveLength(2);

    const r = await srv.json('PATCH', '/api/v1/namespaces/default/pods/orphan-a', { metadata: { labels: { app: 'gone' } } }, MERGE);
    expect(r.status).toBe(200);
    const released = await until(
      async () => (await srv.json('GET', '/api/v1/namespaces/default/pods/orphan-a')).body,
      (p) => !p.metadata.ownerReferences,
      10_000,
    );
    expect(released.metadata.ownerReferences).toBeUndefined();
    const after = await until(
      () => listPods('app=adopt'),
      (ps) => live(ps).length === 2 && live(ps).some((p) => p.metadata.name.startsWith('adopter-')),
      10_000,
    );
    expect(live(after).map((p) => p.metadata.name)).toContain('orphan-b');
  });

  test('a ResourceQuota on pods stops creation: ReplicaFailure (FailedCreate) and FailedCreate events', async () => {
    await ensureNs('quota');
    const q = await srv.json(
      'POST',
      '/api/v1/namespaces/quota/resourcequotas',
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '1' } } },
      JSON_CT,
    );
    expect(q.status).toBe(201);
    // As the reference's e2e tests do (waitForResourceQuota): until the quota controller has
    // written the quota's status, admission refuses pods with "status unknown for quota".
    await until(
      async () => (await srv.json('GET', '/api/v1/namespaces/quota/resourcequotas/pods')).body,
      (x) => x.status?.hard?.pods === '1' && x.status?.used?.pods !== undefined,
      10_000,
    );
    await createRS('capped', 3, { app: 'capped' }, 'quota');
    const rs = await until(
      () => getRS('capped', 'quota'),
      (x) => (x.status?.conditions ?? []).some((c: Any) => c.type === 'ReplicaFailure'),
      20_000,
    );
    const cond = rs.status.conditions.find((c: Any) => c.type === 'ReplicaFailure');
    expect(cond).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(cond.message).toContain('exceeded quota');
    expect(live(await listPods('app=capped', 'quota'))).toHaveLength(1);
    const events = (await srv.json('GET', '/api/v1/namespaces/quota/events')).body.items as Any[];
    const failed = events.find((e) => e.involvedObject.name === 'capped' && e.reason === 'FailedCreate');
    expect(failed.type).toBe('Warning');
    expect(failed.message).toMatch(/^Error creating: .*exceeded quota/);
    // With room again the ReplicaSet completes and the condition goes.
    const u = await srv.json('PATCH', '/api/v1/namespaces/quota/resourcequotas/pods', { spec: { hard: { pods: '10' } } }, MERGE);
    expect(u.status).toBe(200);
    const done = await until(
      () => getRS('capped', 'quota'),
      (x) => x.status?.replicas === 3 && !(x.status?.conditions ?? []).some((c: Any) => c.type === 'ReplicaFailure'),
      40_000,
    );
    expect(done.status.replicas).toBe(3);
  });
});

describe('deletion ranking (ActivePodsWithRanks)', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const pod = (
    name: string,
    o: { node?: string; phase?: string; ready?: boolean; readyAt?: string; cost?: number; restarts?: number },
  ): Obj => ({
    metadata: {
      name,
      uid: name,
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations: o.cost === undefined ? {} : { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) },
    },
    spec: { nodeName: o.node ?? 'n1' },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: o.readyAt ?? '2026-01-01T00:01:00Z' },
      ],
      containerStatuses: [{ restartCount: o.restarts ?? 0 }],
    },
  });
  const order = (pods: Obj[], related: Obj[] = pods) => podsToDelete(pods, related, pods.length - 1, now).map((p) => p.metadata.name);

  test('unassigned < Pending < Unknown < Running, not ready < ready', () => {
    const pods = [
      pod('ready', {}),
      pod('unassigned', { node: '' }),
      pod('pending', { phase: 'Pending' }),
      pod('unknown', { phase: 'Unknown' }),
      pod('notready', { ready: false }),
    ];
    expect(order(pods)).toEqual(['unassigned', 'pending', 'unknown', 'notready']);
  });

  test('lower deletion cost, then doubled-up nodes, then ready for less time (log buckets), then more restarts', () => {
    expect(order([pod('high', { cost: 5 }), pod('low', { cost: -1 })])).toEqual(['low']);
    const crowded = [pod('alone', { node: 'n2' }), pod('a', { node: 'n1' }), pod('b', { node: 'n1' })];
    expect(order(crowded).slice(0, 1)).toEqual([expect.stringMatching(/^[ab]$/)]);
    expect(order([pod('old', { readyAt: '2026-01-01T00:00:00Z' }), pod('new', { readyAt: '2026-01-01T00:09:59Z' })])).toEqual(['new']);
    expect(order([pod('calm', {}), pod('flaky', { restarts: 3 })])).toEqual(['flaky']);
  });
});
