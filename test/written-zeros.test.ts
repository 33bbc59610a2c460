/**
 * Objects answered as the reference writes them (issue 9 item 6): status fields its Go types
 * declare without omitempty are there with their zero values, in every answer and watch event.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: [STATIC_WORKLOADS] });

const selector = { matchLabels: { app: 'z' } };
const template = { metadata: { labels: { app: 'z' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };

const CASES: [string, string, Json, Json][] = [
  [
    'PodDisruptionBudget',
    '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
    { metadata: { name: 'z' }, spec: { minAvailable: 1, selector } },
    { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  ],
  [
    'ReplicaSet',
    '/apis/apps/v1/namespaces/default/replicasets',
    { metadata: { name: 'z' }, spec: { replicas: 0, selector, template } },
    { replicas: 0 },
  ],
];

describe.each(CASES)('%s', (_, path, body, zeros) => {
  test('create, get, list and a watch event carry the zero status fields', async () => {
    const rv = (await srv.json('GET', path)).body.metadata.resourceVersion;
    const watch = srv.fetch(`${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    const created = await srv.json('POST', path, body);
    expect(created.status).toBe(201);
    expect(created.body.status).toMatchObject(zeros);
    // Controllers (the disruption controller for budgets) may have filled in real figures since:
    // the fields are there, as numbers.
    const numbers = (status: Json) => Object.keys(zeros).map((k) => typeof status?.[k]);
    expect(numbers((await srv.json('GET', `${path}/z`)).body.status)).toEqual(Object.keys(zeros).map(() => 'number'));
    expect(numbers((await srv.json('GET', path)).body.items[0].status)).toEqual(Object.keys(zeros).map(() => 'number'));
    const first = JSON.parse((await (await watch).text()).split('\n')[0] as string);
    expect(first.type).toBe('ADDED');
    expect(first.object.status).toMatchObject(zeros);
  });

  test('a status update that leaves them out still has them', async () => {
    // (A controller may write the status in between: retry on a conflict.)
    let r: Json;
    for (let i = 0; i < 5; i++) {
      const cur = (await srv.json('GET', `${path}/z`)).body;
      r = await srv.json('PUT', `${path}/z/status`, { ...cur, status: {} });
      if (r.status !== 409) break;
    }
    expect(r.status).toBe(200);
    expect(r.body.status).toMatchObject(zeros);
  });
});
