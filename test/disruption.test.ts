/**
 * The disruption controller (issue 16 item 3): PodDisruptionBudget status from the pods it selects,
 * for minAvailable and maxUnavailable as numbers and percents, scale-aware through ReplicaSets and
 * Deployments, with the DisruptionAllowed condition and its reasons.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: [STATIC_WORKLOADS] });
let n = 0;

async function namespace(): Promise<string> {
  const ns = `pdb-${++n}`;
  await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  return ns;
}

async function pod(ns: string, name: string, labels: Json, ready: boolean, owner?: Json): Promise<void> {
  const c = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name, labels, ...(owner && { ownerReferences: [{ ...owner, controller: true }] }) },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  expect(c.status).toBe(201);
  await setReady(ns, name, ready);
}

async function setReady(ns: string, name: string, ready: boolean): Promise<void> {
  const cur = (await srv.json('GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body;
  const r = await srv.json('PUT', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
    ...cur,
    status: { ...cur.status, phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  expect(r.status).toBe(200);
}

/** The budget's status once `done` holds (the controller works asynchronously). */
async function statusWhen(ns: string, name: string, done: (s: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const s = (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`)).body.status;
    if (done(s) || Date.now() > deadline) return s;
    await Bun.sleep(50);
  }
}

const allowed = (s: Json) => s?.conditions?.find((c: Json) => c.type === 'DisruptionAllowed');

describe('PodDisruptionBudget status', () => {
  test('minAvailable as a number: counts ready pods; a pod turning unready takes the allowance away', async () => {
    const ns = await namespace();
    for (const [i, ready] of [true, true, true, false].entries()) await pod(ns, `p${i}`, { app: 'a' }, ready);
    await pod(ns, 'other', { app: 'b' }, true);
    await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'pdb' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'a' } } },
    });
    const s = await statusWhen(ns, 'pdb', (x) => x?.expectedPods === 4 && x?.currentHealthy === 3);
    expect(s).toMatchObject({ expectedPods: 4, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, observedGeneration: 1 });
    expect(allowed(s)).toMatchObject({ status: 'True', reason: 'SufficientPods' });
    await setReady(ns, 'p0', false);
    const after = await statusWhen(ns, 'pdb', (x) => x?.currentHealthy === 2);
    expect(after).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 0 });
    expect(allowed(after)).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
  });

  test('maxUnavailable as a percent: expected pods from the ReplicaSet scale, rounded up', async () => {
    const ns = await namespace();
    const rs = await srv.json('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      metadata: { name: 'rs' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'r' } },
        template: { metadata: { labels: { app: 'r' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: rs.body.metadata.uid };
    for (const i of [0, 1, 2]) await pod(ns, `r${i}`, { app: 'r' }, true, owner);
    await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'pdb' },
      spec: { maxUnavailable: '30%', selector: { matchLabels: { app: 'r' } } },
    });
    // 30% of 4 rounds up to 2 unavailable: 2 must stay healthy; 3 are.
    const s = await statusWhen(ns, 'pdb', (x) => x?.expectedPods === 4);
    expect(s).toMatchObject({ expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
  });

  test('minAvailable as a percent through a Deployment-owned ReplicaSet', async () => {
    const ns = await namespace();
    const tmpl = { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    const d = await srv.json('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: 'd' },
      spec: { replicas: 5, selector: { matchLabels: { app: 'd' } }, template: tmpl },
    });
    const rs = await srv.json('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
      metadata: {
        name: 'd-1',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: d.body.metadata.uid, controller: true }],
      },
      spec: { replicas: 5, selector: { matchLabels: { app: 'd' } }, template: tmpl },
    });
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'd-1', uid: rs.body.metadata.uid };
    for (const i of [0, 1, 2, 3, 4]) await pod(ns, `d${i}`, { app: 'd' }, true, owner);
    await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'pdb' },
      spec: { minAvailable: '50%', selector: { matchLabels: { app: 'd' } } },
    });
    const s = await statusWhen(ns, 'pdb', (x) => x?.expectedPods === 5);
    expect(s).toMatchObject({ expectedPods: 5, desiredHealthy: 3, currentHealthy: 5, disruptionsAllowed: 2 });
  });

  test('a percent over pods without a controller: SyncFailed, no disruption allowed', async () => {
    const ns = await namespace();
    await pod(ns, 'lonely', { app: 'l' }, true);
    await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'pdb' },
      spec: { minAvailable: '50%', selector: { matchLabels: { app: 'l' } } },
    });
    const s = await statusWhen(ns, 'pdb', (x) => allowed(x)?.reason === 'SyncFailed');
    expect(allowed(s)).toMatchObject({ status: 'False', reason: 'SyncFailed', message: 'found no controller ref for pod "lonely"' });
    expect(s.disruptionsAllowed).toBe(0);
  });
});
