/**
 * The eviction subresource (issue 16 item 4): evictions honour PodDisruptionBudgets, record
 * themselves in the budget's status, are refused with 429 when the budget does not allow them;
 * kubectl drain evicts through it.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
// Unbound pods here stay unbound (the built-in scheduler would bind them to the test's nodes).
const srv = serverForFile({ args: ['--scheduler=false'] });
let n = 0;

async function namespace(): Promise<string> {
  const ns = `ev-${++n}`;
  await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  return ns;
}

async function readyPod(ns: string, name: string, labels: Json, ready = true, nodeName?: string): Promise<void> {
  const c = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'i' }], ...(nodeName && { nodeName }) },
  });
  expect(c.status).toBe(201);
  const r = await srv.json('PUT', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
    ...c.body,
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  expect(r.status).toBe(200);
}

async function budget(ns: string, spec: Json, until: (s: Json) => boolean): Promise<void> {
  await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, { metadata: { name: 'pdb' }, spec });
  const deadline = Date.now() + 8000;
  while (Date.now() < deadline) {
    const s = (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/pdb`)).body.status;
    if (s && s.observedGeneration === 1 && until(s)) return;
    await Bun.sleep(50);
  }
  throw new Error('the disruption controller did not fill the budget status');
}

const evict = (ns: string, name: string, body: Json = {}) =>
  srv.json('POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: ns },
    ...body,
  });

describe('eviction', () => {
  test('a pod under no budget is deleted: 201 Success', async () => {
    const ns = await namespace();
    await readyPod(ns, 'free', { app: 'x' });
    const r = await evict(ns, 'free');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/free`)).status).toBe(404);
  });

  test('the budget allows one disruption: the first eviction is recorded, the second is 429 with the budget as cause', async () => {
    const ns = await namespace();
    for (const i of [0, 1, 2]) await readyPod(ns, `p${i}`, { app: 'a' });
    await budget(ns, { minAvailable: 2, selector: { matchLabels: { app: 'a' } } }, (s) => s.disruptionsAllowed === 1);
    const first = await evict(ns, 'p0');
    expect(first.status).toBe(201);
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/p0`)).status).toBe(404);
    const pdb = (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/pdb`)).body;
    expect(pdb.status.disruptionsAllowed).toBe(0);
    const second = await evict(ns, 'p1');
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      code: 429,
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
    });
    expect(second.body.details.causes[0].reason).toBe('DisruptionBudget');
    expect(second.body.details.causes[0].message).toMatch(/^The disruption budget pdb needs 2 healthy pods and has [23] currently$/);
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/p1`)).status).toBe(200);
  });

  test('a dry-run eviction checks the budget and changes nothing', async () => {
    const ns = await namespace();
    for (const i of [0, 1]) await readyPod(ns, `d${i}`, { app: 'd' });
    await budget(ns, { minAvailable: 1, selector: { matchLabels: { app: 'd' } } }, (s) => s.disruptionsAllowed === 1);
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods/d0/eviction?dryRun=All`, { metadata: { name: 'd0' } })).status).toBe(201);
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/d0`)).status).toBe(200);
    const pdb = (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/pdb`)).body;
    expect(pdb.status.disruptionsAllowed).toBe(1);
    expect(pdb.status.disruptedPods).toBeUndefined();
  });

  test('an unready pod goes without using the allowance when the budget is met (IfHealthyBudget)', async () => {
    const ns = await namespace();
    for (const i of [0, 1]) await readyPod(ns, `h${i}`, { app: 'h' });
    await readyPod(ns, 'sick', { app: 'h' }, false);
    await budget(ns, { minAvailable: 2, selector: { matchLabels: { app: 'h' } } }, (s) => s.currentHealthy === 2);
    const r = await evict(ns, 'sick');
    expect(r.status).toBe(201);
    const pdb = (await srv.json('GET', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/pdb`)).body;
    expect(pdb.status.disruptedPods).toBeUndefined();
  });

  test('refusals: two budgets → 500; a body naming another pod → 400', async () => {
    const ns = await namespace();
    await readyPod(ns, 'two', { app: 't' });
    await budget(ns, { minAvailable: 0, selector: { matchLabels: { app: 't' } } }, () => true);
    await srv.json('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'pdb2' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 't' } } },
    });
    const r = await evict(ns, 'two');
    expect(r.status).toBe(500);
    expect(r.body.message).toContain('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const wrong = await srv.json('POST', `/api/v1/namespaces/${ns}/pods/two/eviction`, { metadata: { name: 'other' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('name in URL does not match name in Eviction object');
  });
});

describe('kubectl drain', () => {
  test('drains a node through evictions within the budget; a budget that allows none stops it', async () => {
    const ns = await namespace();
    await srv.json('POST', '/api/v1/nodes', { metadata: { name: `node-${ns}` } });
    for (const i of [0, 1]) await readyPod(ns, `w${i}`, { app: 'w' }, true, `node-${ns}`);
    await readyPod(ns, 'elsewhere', { app: 'w' }, true);
    await budget(ns, { minAvailable: 1, selector: { matchLabels: { app: 'w' } } }, (s) => s.disruptionsAllowed === 2);
    const ok = srv.kubectl(['drain', `node-${ns}`, '--force', '--grace-period=0', '--timeout=20s']);
    expect(ok.stderr + ok.stdout).toContain(`node/node-${ns} drained`);
    expect(ok.code).toBe(0);
    for (const i of [0, 1]) expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/w${i}`)).status).toBe(404);
    const node = (await srv.json('GET', `/api/v1/nodes/node-${ns}`)).body;
    expect(node.spec.unschedulable).toBe(true);

    const ns2 = await namespace();
    await srv.json('POST', '/api/v1/nodes', { metadata: { name: `node-${ns2}` } });
    await readyPod(ns2, 'only', { app: 'o' }, true, `node-${ns2}`);
    await budget(ns2, { minAvailable: 1, selector: { matchLabels: { app: 'o' } } }, (s) => s.currentHealthy === 1);
    const blocked = srv.kubectl(['drain', `node-${ns2}`, '--force', '--grace-period=0', '--timeout=3s']);
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr + blocked.stdout).toContain("Cannot evict pod as it would violate the pod's disruption budget");
    expect((await srv.json('GET', `/api/v1/namespaces/${ns2}/pods/only`)).status).toBe(200);
  }, 60_000);
});
