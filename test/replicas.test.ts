/**
 * Two API server replicas on one etcd (issue 18 item 2), over HTTP: what one writes the other
 * reads; a watch on one sees the other's writes in order with no gap; a continue token from one
 * pages on the other; the replicas elect one of them (a Lease in kube-system) to run the
 * controllers, and when it is killed the other takes over within the lease duration (a namespace
 * deletion then completes). Needs etcd (helpers/needs: a failure under CI, else a skip with a message).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type EtcdServer, startEtcd } from '../bench/etcd';
import { needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';
import { openWatch } from './helpers/watch';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const CMS = '/api/v1/namespaces/default/configmaps';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/svc-apiserver-controllers';

needs('etcd').describe('two replicas on one etcd', () => {
  let etcd: EtcdServer;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    etcd = (await startEtcd()) as EtcdServer;
    a = await startServer({ args: [`--etcd-servers=${etcd.endpoint}`] });
    b = await startServer({ args: [`--etcd-servers=${etcd.endpoint}`] });
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  }, 30_000);

  test('what one replica writes the other reads at once, including consistent lists', async () => {
    const made = await a.json('POST', CMS, { metadata: { name: 'from-a' }, data: { x: '1' } });
    expect(made.status).toBe(201);
    const got = await b.json('GET', `${CMS}/from-a`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.resourceVersion).toBe(made.body.metadata.resourceVersion);
    const list = await b.json('GET', CMS);
    expect(list.body.items.map((i: Json) => i.metadata.name)).toContain('from-a');
    expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(made.body.metadata.resourceVersion));
    // An update through b at a's resourceVersion wins; a stale one through a conflicts.
    const upd = await b.json('PUT', `${CMS}/from-a`, { ...made.body, data: { x: '2' } });
    expect(upd.status).toBe(200);
    const stale = await a.json('PUT', `${CMS}/from-a`, { ...made.body, data: { x: '3' } });
    expect(stale.status).toBe(409);
  });

  test('a consistent list on one replica has every write the other acknowledged before it, at once (20 times)', async () => {
    for (let i = 0; i < 20; i++) {
      const made = await a.json('POST', CMS, { metadata: { name: `ryw-${i}` }, data: { x: '1' } });
      expect(made.status).toBe(201);
      // No read in between: b learns of the write from etcd, not from an earlier answer.
      const list = await b.json('GET', `${CMS}?fieldSelector=metadata.name%3Dryw-${i}`);
      expect(list.status).toBe(200);
      expect(list.body.items.map((o: Json) => o.metadata.resourceVersion)).toEqual([made.body.metadata.resourceVersion]);
    }
  });

  test('a watch on one replica sees the writes made through the other, in order, with no gap', async () => {
    const start = await a.json('GET', CMS);
    const w = await openWatch(b, `${CMS}?watch=1&resourceVersion=${start.body.metadata.resourceVersion}`);
    try {
      const names: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await (i % 2 === 0 ? a : b).json('POST', CMS, { metadata: { name: `w-${i}` } });
        expect(r.status).toBe(201);
        names.push(`w-${i}`);
      }
      const evs = await w.until((e) => e.type === 'ADDED' && e.object.metadata.name === 'w-19', 10_000);
      const added = evs.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name as string);
      expect(added).toEqual(names);
      const rvs = evs.map((e) => Number(e.object.metadata.resourceVersion));
      expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    } finally {
      await w.close();
    }
  });

  test('a continue token from one replica pages on the other', async () => {
    for (let i = 0; i < 6; i++) await a.json('POST', CMS, { metadata: { name: `page-${i}` } });
    const first = await a.json('GET', `${CMS}?limit=3`);
    expect(first.body.items.length).toBe(3);
    const token = first.body.metadata.continue as string;
    expect(token).toBeTruthy();
    const rest = await b.json('GET', `${CMS}?limit=100&continue=${encodeURIComponent(token)}`);
    expect(rest.status).toBe(200);
    const all = [...first.body.items, ...rest.body.items].map((i: Json) => i.metadata.name);
    const direct = (await a.json('GET', CMS)).body.items.map((i: Json) => i.metadata.name);
    expect(all).toEqual(direct);
  });

  test("a watch on one replica from a resourceVersion the other answered, before the first replica ever used the resource's cache, has every event after it", async () => {
    // Pod templates: no controller watches them, so neither replica has started their cache.
    const PTS = '/api/v1/namespaces/default/podtemplates';
    const pt = (name: string) => ({ metadata: { name }, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } });
    const first = await a.json('POST', PTS, pt('pt-1'));
    expect(first.status).toBe(201);
    // Another write after it: the store's revision moves past the one the watch starts from.
    expect((await a.json('POST', CMS, { metadata: { name: 'after-pt-1' } })).status).toBe(201);
    const w = await openWatch(b, `${PTS}?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`);
    try {
      expect((await a.json('POST', PTS, pt('pt-2'))).status).toBe(201);
      const evs = await w.until((e) => e.type !== 'BOOKMARK', 10_000);
      expect(evs.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object.metadata.name ?? e.object.reason])).toEqual([
        ['ADDED', 'pt-2'],
      ]);
    } finally {
      await w.close();
    }
  });

  test('one replica leads; when it is killed the other takes over and the controllers go on', async () => {
    const lease = await until(
      () => a.json('GET', LEASE),
      (r) => r.status === 200 && typeof r.body.spec?.holderIdentity === 'string',
      5000,
    );
    expect(lease.status).toBe(200);
    expect(lease.body.spec.leaseDurationSeconds).toBe(15);
    const holder = lease.body.spec.holderIdentity as string;
    // Which replica is it? The one whose log says so.
    const leader = a.logs().includes(`${holder} leads`) ? a : b;
    const other = leader === a ? b : a;
    expect(leader.logs()).toContain(`${holder} leads`);
    expect(other.logs()).not.toContain(`${holder} leads`);
    await leader.stop('SIGKILL');
    // The other takes over within the lease duration (15 s) plus a retry period (2 s).
    const t0 = Date.now();
    const taken = await until(
      () => other.json('GET', LEASE),
      (r) => r.status === 200 && r.body.spec.holderIdentity !== holder,
      20_000,
    );
    expect(taken.body.spec.holderIdentity).not.toBe(holder);
    expect(taken.body.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    expect(Date.now() - t0).toBeLessThan(20_000);
    // The namespace controller now runs there: a namespace deletion completes.
    expect((await other.json('POST', '/api/v1/namespaces', { metadata: { name: 'after-failover' } })).status).toBe(201);
    await other.json('POST', '/api/v1/namespaces/after-failover/configmaps', { metadata: { name: 'c' } });
    expect((await other.json('DELETE', '/api/v1/namespaces/after-failover')).status).toBe(200);
    const gone = await until(
      () => other.json('GET', '/api/v1/namespaces/after-failover'),
      (r) => r.status === 404,
      10_000,
    );
    expect(gone.status).toBe(404);
  }, 60_000);
});
