/**
 * The ReplicationController controller (the ReplicaSet controller over RCs, src/controllers/replicaset.ts)
 * end to end with kubectl on simulated nodes: `kubectl create` an RC of 3 → 3 pods Running;
 * `kubectl scale rc`; an orphan its selector matches is adopted; deleting the RC deletes its pods.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const srv = serverForFile({ args: ['--simulated-nodes=2'] });
const NS = '/api/v1/namespaces/default';

const pods = async (app: string): Promise<Any[]> =>
  ((await srv.json('GET', `${NS}/pods?labelSelector=app%3D${app}`)).body.items as Any[]).filter((p) => !p.metadata.deletionTimestamp);
const running = (ps: Any[]) => ps.filter((p) => p.status?.phase === 'Running');

function rc(name: string, replicas: number): Any {
  return {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name },
    spec: {
      replicas,
      selector: { app: name },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
}

function create(obj: Any): void {
  const file = path.join(srv.dataDir, `${obj.metadata.name}.json`);
  fs.writeFileSync(file, JSON.stringify(obj));
  const r = srv.kubectl(['create', '-f', file]);
  expect(r.stderr).toBe('');
}

test('kubectl create an RC of 3: 3 pods Running, owned by it; status counts them; kubectl scale rc', async () => {
  create(rc('web', 3));
  const ps = await until(
    () => pods('web'),
    (p) => running(p).length === 3,
    20_000,
  );
  expect(running(ps)).toHaveLength(3);
  const owner = (await srv.json('GET', `${NS}/replicationcontrollers/web`)).body;
  for (const p of ps) {
    expect(p.metadata.name.startsWith('web-')).toBe(true);
    expect(p.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
  }
  const st = await until(
    async () => (await srv.json('GET', `${NS}/replicationcontrollers/web`)).body.status,
    (s) => s?.readyReplicas === 3 && s?.availableReplicas === 3,
    10_000,
  );
  expect(st).toMatchObject({ replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
  const events = (await srv.json('GET', `${NS}/events?fieldSelector=involvedObject.name%3Dweb`)).body.items as Any[];
  expect(events.some((e) => e.reason === 'SuccessfulCreate' && e.source?.component === 'replication-controller')).toBe(true);

  expect(srv.kubectl(['scale', 'rc', 'web', '--replicas=5']).stdout).toContain('replicationcontroller/web scaled');
  expect(
    running(
      await until(
        () => pods('web'),
        (p) => running(p).length === 5,
        20_000,
      ),
    ),
  ).toHaveLength(5);
  expect(srv.kubectl(['scale', 'rc', 'web', '--replicas=1']).code).toBe(0);
  expect(
    await until(
      () => pods('web'),
      (p) => p.length === 1,
      20_000,
    ),
  ).toHaveLength(1);
  const got = srv.kubectl(['get', 'rc', 'web']).stdout;
  expect(got).toMatch(/web\s+1\s+1\s+\d\s+/);
});

test('an orphan the selector matches is adopted; one no longer matching is released; delete cascades', async () => {
  const orphan = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'stray', labels: { app: 'api' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  };
  expect((await srv.json('POST', `${NS}/pods`, orphan)).status).toBe(201);
  create(rc('api', 2));
  const ps = await until(
    () => pods('api'),
    (p) => p.length === 2 && p.every((x: Any) => x.metadata.ownerReferences?.[0]?.kind === 'ReplicationController'),
    20_000,
  );
  expect(ps).toHaveLength(2);
  expect(ps.map((p) => p.metadata.name)).toContain('stray');
  // Relabelled out of the selector: released, and replaced.
  const patched = await srv.json(
    'PATCH',
    `${NS}/pods/stray`,
    { metadata: { labels: { app: 'other' } } },
    {
      'content-type': 'application/merge-patch+json',
    },
  );
  expect(patched.status).toBe(200);
  const released = await until(
    async () => (await srv.json('GET', `${NS}/pods/stray`)).body,
    (p) => !p.metadata.ownerReferences,
    10_000,
  );
  expect(released.metadata.ownerReferences).toBeUndefined();
  expect(
    await until(
      () => pods('api'),
      (p) => p.length === 2 && p.every((x: Any) => x.metadata.name !== 'stray'),
      20_000,
    ),
  ).toHaveLength(2);

  // Background cascading deletion (kubectl's default): the garbage collector deletes the pods.
  expect(srv.kubectl(['delete', 'rc', 'api']).code).toBe(0);
  expect(
    await until(
      () => pods('api'),
      (p) => p.length === 0,
      20_000,
    ),
  ).toHaveLength(0);
  expect((await srv.json('GET', `${NS}/pods/stray`)).status).toBe(200);
});
