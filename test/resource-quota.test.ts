/**
 * ResourceQuota (issue 16 item 2): the controller fills status.hard/used; admission refuses
 * creates over quota with 403 and the reference's messages, reserves usage race-free (a burst of
 * 50 creates against a quota of 10 admits exactly 10), and honours scopes.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();
let n = 0;

async function namespaceWithQuota(spec: Json): Promise<string> {
  const ns = `rq-${++n}`;
  await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  expect((await srv.json('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'q' }, spec })).status).toBe(201);
  await statusWhen(ns, (s) => s?.used !== undefined && Object.keys(s.used).length === Object.keys(spec.hard).length);
  return ns;
}

async function statusWhen(ns: string, done: (s: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = (await srv.json('GET', `/api/v1/namespaces/${ns}/resourcequotas/q`)).body.status;
    if (done(s) || Date.now() > deadline) return s;
    await Bun.sleep(50);
  }
}

const pod = (name: string, resources?: Json, extra: Json = {}): Json => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i', ...(resources && { resources }) }], ...extra },
});

describe('ResourceQuota', () => {
  test('the controller fills status.hard and status.used from the objects', async () => {
    const ns = await namespaceWithQuota({ hard: { pods: '5', configmaps: '4', 'count/secrets': '2' } });
    await srv.json('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'c1' } });
    const s = await statusWhen(ns, (x) => x?.used?.configmaps === '1');
    expect(s).toEqual({
      hard: { pods: '5', configmaps: '4', 'count/secrets': '2' },
      used: { pods: '0', configmaps: '1', 'count/secrets': '0' },
    });
  });

  test('object counts: the create past the limit is 403 with the reference message; deletes free the count', async () => {
    const ns = await namespaceWithQuota({ hard: { pods: '2' } });
    for (const i of [0, 1]) expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod(`p${i}`))).status).toBe(201);
    const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('p2'));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ reason: 'Forbidden', code: 403, details: { name: 'p2', kind: 'pods' } });
    expect(r.body.message).toBe('pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    await srv.json('DELETE', `/api/v1/namespaces/${ns}/pods/p0`);
    await statusWhen(ns, (x) => x?.used?.pods === '1');
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('p3'))).status).toBe(201);
  }, 20_000);

  test('compute resources: must be specified, and are summed', async () => {
    const ns = await namespaceWithQuota({ hard: { 'requests.cpu': '1', 'limits.memory': '1Gi' } });
    const bare = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('bare'));
    expect(bare.status).toBe(403);
    expect(bare.body.message).toBe('pods "bare" is forbidden: failed quota: q: must specify limits.memory,requests.cpu');
    const res = { requests: { cpu: '600m' }, limits: { memory: '512Mi' } };
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('a', res))).status).toBe(201);
    const b = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('b', res));
    expect(b.status).toBe(403);
    expect(b.body.message).toBe(
      'pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
    const s = await statusWhen(ns, (x) => x?.used?.['limits.memory'] === '512Mi');
    expect(s.used).toEqual({ 'requests.cpu': '600m', 'limits.memory': '512Mi' });
  });

  test('50 concurrent creates against a quota of 10 pods admit exactly 10', async () => {
    const ns = await namespaceWithQuota({ hard: { pods: '10' } });
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod(`b${i}`))));
    expect(rs.filter((r) => r.status === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.status === 403)).toHaveLength(40);
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods`)).body.items).toHaveLength(10);
    await Bun.sleep(1500);
    expect((await statusWhen(ns, () => true)).used.pods).toBe('10');
  }, 20_000);

  test('scopes: a BestEffort quota counts only pods without resources', async () => {
    const ns = await namespaceWithQuota({ hard: { pods: '1' }, scopes: ['BestEffort'] });
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('be'))).status).toBe(201);
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('burst', { requests: { cpu: '100m' } }))).status).toBe(201);
    // Admission charged the BestEffort pod only (the controller does not recompute after creates).
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/resourcequotas/q`)).body.status.used).toEqual({ pods: '1' });
    const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('be2'));
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('exceeded quota: q');
  });

  test('a dry-run create is checked but reserves nothing', async () => {
    const ns = await namespaceWithQuota({ hard: { configmaps: '1' } });
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'd' } })).status).toBe(201);
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'real' } })).status).toBe(201);
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { name: 'd2' } })).status).toBe(403);
  });
});
