/**
 * A 3-member etcd cluster on loopback under one API server (issue 18 item 3): SIGKILL of a member
 * during concurrent writes loses no acknowledged write, and writes go on through the other two
 * (the client fails over between --etcd-servers); kubectl and client-node work against each of
 * two API server replicas on the cluster, each seeing what the other wrote. Needs etcd
 * (helpers/needs: a failure under CI, else a skip with a message).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type EtcdServer, startEtcdCluster } from '../bench/etcd';
import { runClient } from './helpers/client-node';
import { needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const CMS = '/api/v1/namespaces/default/configmaps';

needs('etcd').describe('a 3-member etcd cluster', () => {
  let members: EtcdServer[] = [];
  let srv: Server;
  beforeAll(async () => {
    members = (await startEtcdCluster(3)) as EtcdServer[];
    srv = await startServer({ args: [`--etcd-servers=${members.map((m) => m.endpoint).join(',')}`] });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
    await Promise.all(members.map((m) => m.stop()));
  }, 30_000);

  test('SIGKILL of a member during concurrent writes loses no acknowledged write', async () => {
    const acked: string[] = [];
    const afterKill: string[] = [];
    let killed = false;
    let n = 0;
    let until = Date.now() + 60_000;
    const worker = async () => {
      while (Date.now() < until) {
        const name = `w-${n++}`;
        const r = await srv.json('POST', CMS, { metadata: { name }, data: { v: name } });
        if (r.status === 201) {
          acked.push(name);
          if (killed) afterKill.push(name);
        } else {
          // Not acknowledged: its outcome is unknown to the client (503), never a 409 for its own write.
          expect(r.status, JSON.stringify(r.body)).toBe(503);
        }
      }
    };
    const writers = Array.from({ length: 16 }, worker);
    await Bun.sleep(1500);
    // The first endpoint is the one the client starts with.
    await members[0]?.kill();
    killed = true;
    // The first member is often the leader: writes sent while the others elect a new one are
    // dropped by raft and answered only at etcd's request timeout (5 s + 2 election timeouts:
    // ~7 s; "etcdserver: request timed out", 503 here, as the reference's client sees it). Once
    // the client failed over within milliseconds, every writer could be waiting on one of those
    // (seen in CI), so they go on for 12 s after the kill.
    until = Date.now() + 12_000;
    let restarted = false;
    try {
      await Promise.all(writers);
      expect(acked.length).toBeGreaterThan(50);
      // Writes went on through the two members left.
      expect(afterKill.length).toBeGreaterThan(10);
      // A read may meet the client still failing over from the killed member (a 503 once in a
      // CI run, whose two cores were shared): a client retries it, and so does this one.
      let list = await srv.json('GET', CMS);
      for (const end = Date.now() + 15_000; list.status === 503 && Date.now() < end; ) {
        await Bun.sleep(250);
        list = await srv.json('GET', CMS);
      }
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      const stored = new Set(list.body.items.map((i: Json) => i.metadata.name as string));
      expect(acked.filter((a) => !stored.has(a))).toEqual([]);
      // The killed member comes back and catches up: reading from it alone sees them too.
      await members[0]?.restart();
      restarted = true;
    } finally {
      // Whatever failed above, the next test gets its three members back.
      if (!restarted) await members[0]?.restart();
    }
    const solo = await startServer({ args: [`--etcd-servers=${members[0]?.endpoint}`] });
    try {
      const again = await solo.json('GET', CMS);
      const fromRestarted = new Set(again.body.items.map((i: Json) => i.metadata.name as string));
      expect(acked.filter((a) => !fromRestarted.has(a))).toEqual([]);
    } finally {
      await solo.stop();
    }
  }, 60_000);

  test('kubectl and client-node against each of two replicas: what one writes, the other serves', async () => {
    const b = await startServer({ args: [`--etcd-servers=${members.map((m) => m.endpoint).join(',')}`] });
    try {
      const created = srv.kubectl(['create', 'configmap', 'from-a', '--from-literal=k=v']);
      expect(created.code, created.stderr).toBe(0);
      const got = b.kubectl(['get', 'configmap', 'from-a', '-o', 'jsonpath={.data.k}']);
      expect(got.code, got.stderr).toBe(0);
      expect(got.stdout).toBe('v');
      const listed = await runClient(
        b,
        `const core = kc.makeApiClient(k8s.CoreV1Api);
         const l = await core.listNamespacedConfigMap({ namespace: 'default' });
         await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'from-b' }, data: { x: 'y' } } });
         return l.items.map((i) => i.metadata.name).includes('from-a');`,
      );
      expect(listed).toBe(true);
      const back = srv.kubectl(['get', 'configmap', 'from-b', '-o', 'jsonpath={.data.x}']);
      expect(back.code, back.stderr).toBe(0);
      expect(back.stdout).toBe('y');
    } finally {
      await b.stop();
    }
  }, 60_000);
});
