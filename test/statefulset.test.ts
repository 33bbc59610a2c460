/**
 * The StatefulSet controller (src/controllers/statefulset), end to end on simulated nodes:
 * OrderedReady creation (pod N+1 only once pod N is Ready) with identity labels, hostname and
 * subdomain, claims from volumeClaimTemplates; scale down from the highest ordinal; the retention
 * policy deleting claims; `.spec.ordinals.start` and Parallel; a rolling update with a partition,
 * `kubectl rollout status`, `rollout history` and `rollout undo`.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, type Server, serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({ args: ['--simulated-nodes=2'] });
const BASE = '/apis/apps/v1/namespaces/default/statefulsets';

async function kubectl(s: Server, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${s.kubeconfig}`, ...args], {
    env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, stdout, stderr };
}
const ok = async (args: string[]): Promise<string> => {
  const r = await kubectl(srv, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

const ready = (p: Any) => (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True');
const pods = async (app: string): Promise<Any[]> =>
  (await srv.json('GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).body.items;
const claims = async (): Promise<string[]> =>
  ((await srv.json('GET', '/api/v1/namespaces/default/persistentvolumeclaims')).body.items as Any[]).map((c) => c.metadata.name).sort();
const getSet = async (name: string): Promise<Any> => (await srv.json('GET', `${BASE}/${name}`)).body;
const patchSet = async (name: string, body: Any) => {
  const r = await srv.json('PATCH', `${BASE}/${name}`, body, MERGE);
  expect(r.status).toBe(200);
};

/** Polls the pods of `app` until stopped; answers every snapshot. */
function record(app: string): { stop(): Promise<Any[][]> } {
  const seen: Any[][] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      seen.push(await pods(app));
      await Bun.sleep(10);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return seen;
    },
  };
}

function statefulSet(name: string, replicas: number, spec: Any = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { 'sim.svc.io/stop-delay': '100ms', 'sim.svc.io/start-delay': '150ms' } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
      ...spec,
    },
  };
}

const byName = (ps: Any[], n: string) => ps.find((p) => p.metadata.name === n);

describe('StatefulSet controller', () => {
  test('OrderedReady: pod N+1 created only after pod N is Ready; identity, claims, rollout status', async () => {
    const rec = record('web');
    expect((await srv.json('POST', BASE, statefulSet('web', 3))).status).toBe(201);
    expect(await ok(['rollout', 'status', 'statefulset/web', '--timeout=50s'])).toContain('partitioned roll out complete');
    const snaps = await rec.stop();
    for (const s of snaps) {
      for (let i = 1; i < 3; i++) if (byName(s, `web-${i}`)) expect(ready(byName(s, `web-${i - 1}`))).toBe(true);
    }
    const ps = await pods('web');
    expect(ps.map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1', 'web-2']);
    const set = await getSet('web');
    for (const p of ps) {
      const ord = p.metadata.name.split('-')[1];
      expect(p.metadata.labels).toMatchObject({
        'statefulset.kubernetes.io/pod-name': p.metadata.name,
        'apps.kubernetes.io/pod-index': ord,
        'controller-revision-hash': set.status.updateRevision,
      });
      expect(p.spec.hostname).toBe(p.metadata.name);
      expect(p.spec.subdomain).toBe('web');
      expect(p.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: `data-${p.metadata.name}` } });
      expect(p.metadata.ownerReferences[0]).toMatchObject({ kind: 'StatefulSet', name: 'web', controller: true });
    }
    expect(await claims()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    expect(set.status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 3 });
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    expect(set.status.observedGeneration).toBe(set.metadata.generation);
    const revs = (await srv.json('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items as Any[];
    expect(revs.map((r) => r.metadata.name)).toContain(set.status.updateRevision);
    expect(revs[0]).toMatchObject({ revision: 1, metadata: { labels: { app: 'web' } } });
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    expect(events.map((e) => e.message)).toContain('create Pod web-0 in StatefulSet web successful');
    expect(events.map((e) => e.message)).toContain('create Claim data-web-0 Pod web-0 in StatefulSet web success');
  });

  test('rolling update with a partition, then all; rollout history and undo', async () => {
    await patchSet('web', { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } } });
    await ok(['set', 'image', 'statefulset/web', 'app=nginx:1.28']);
    const upd = await until(
      () => getSet('web'),
      (s) => s.status.updatedReplicas === 1 && s.status.readyReplicas === 3,
      20_000,
    );
    expect(upd.status.currentRevision).not.toBe(upd.status.updateRevision);
    await ok(['rollout', 'status', 'statefulset/web', '--timeout=30s']);
    let ps = await pods('web');
    expect(byName(ps, 'web-2').spec.containers[0].image).toBe('nginx:1.28');
    expect(byName(ps, 'web-1').spec.containers[0].image).toBe('nginx:1.27');
    expect(byName(ps, 'web-0').metadata.labels['controller-revision-hash']).toBe(upd.status.currentRevision);
    await patchSet('web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    expect(await ok(['rollout', 'status', 'statefulset/web', '--timeout=50s'])).toContain(
      'partitioned roll out complete: 3 new pods have been updated',
    );
    ps = await pods('web');
    expect(ps.every((p) => p.spec.containers[0].image === 'nginx:1.28')).toBe(true);
    const set = await getSet('web');
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    expect(set.status.currentReplicas).toBe(3);
    const history = await ok(['rollout', 'history', 'statefulset/web']);
    expect(history).toMatch(/1\s/);
    expect(history).toMatch(/2\s/);
    await ok(['rollout', 'undo', 'statefulset/web']);
    const back = await until(
      () => getSet('web'),
      (s) => s.spec.template.spec.containers[0].image === 'nginx:1.27',
    );
    expect(back.spec.template.spec.containers[0].image).toBe('nginx:1.27');
    await ok(['rollout', 'status', 'statefulset/web', '--timeout=50s']);
    const after = await getSet('web');
    const revs = ((await srv.json('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items as Any[]).filter(
      (r) => r.metadata.ownerReferences?.[0]?.name === 'web',
    );
    // The first template's revision is current again, renumbered 3.
    expect(revs.find((r) => r.metadata.name === after.status.updateRevision).revision).toBe(3);
    expect((await pods('web')).every((p) => p.spec.containers[0].image === 'nginx:1.27')).toBe(true);
  });

  test('scale down deletes from the highest ordinal, one at a time; claims are retained', async () => {
    const rec = record('web');
    await patchSet('web', { spec: { replicas: 1 } });
    await until(
      () => pods('web'),
      (ps) => ps.length === 1,
      30_000,
    );
    const snaps = await rec.stop();
    const gone = (s: Any[], n: string) => !byName(s, n) || !!byName(s, n).metadata.deletionTimestamp;
    for (const s of snaps) if (gone(s, 'web-1')) expect(byName(s, 'web-2')).toBeUndefined();
    expect((await pods('web')).map((p) => p.metadata.name)).toEqual(['web-0']);
    expect(await claims()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
  });

  test('Parallel with ordinals.start and retention Delete: claims follow scale down and deletion', async () => {
    const body = statefulSet('db', 3, {
      podManagementPolicy: 'Parallel',
      ordinals: { start: 5 },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    expect((await srv.json('POST', BASE, body)).status).toBe(201);
    const ps = await until(
      () => pods('db'),
      (x) => x.length === 3 && x.every(ready),
      20_000,
    );
    expect(ps.map((p) => p.metadata.name).sort()).toEqual(['db-5', 'db-6', 'db-7']);
    const owned = (await srv.json('GET', '/api/v1/namespaces/default/persistentvolumeclaims/data-db-5')).body;
    expect(owned.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', name: 'db' })]);
    await patchSet('db', { spec: { replicas: 1 } });
    const left = await until(
      () => claims(),
      (c) => !c.includes('data-db-6') && !c.includes('data-db-7'),
      30_000,
    );
    expect(left.filter((c) => c.startsWith('data-db'))).toEqual(['data-db-5']);
    expect((await srv.json('DELETE', `${BASE}/db`)).status).toBe(200);
    const end = await until(
      () => claims(),
      (c) => !c.includes('data-db-5'),
      30_000,
    );
    expect(end.filter((c) => c.startsWith('data-db'))).toEqual([]);
  });

  test('maxUnavailable: a rolling update takes down up to maxUnavailable pods at once, never more', async () => {
    const body = statefulSet('mu', 4, {
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
      volumeClaimTemplates: [],
    });
    expect((await srv.json('POST', BASE, body)).status).toBe(201);
    await ok(['rollout', 'status', 'statefulset/mu', '--timeout=30s']);
    const rec = record('mu');
    await ok(['set', 'image', 'statefulset/mu', 'app=nginx:1.28']);
    await ok(['rollout', 'status', 'statefulset/mu', '--timeout=40s']);
    const snaps = await rec.stop();
    const readyCounts = snaps.map((s) => s.filter((p) => ready(p) && !p.metadata.deletionTimestamp).length);
    expect(Math.min(...readyCounts)).toBeGreaterThanOrEqual(2);
    expect(Math.min(...readyCounts)).toBeLessThan(4);
    expect((await pods('mu')).every((p) => p.spec.containers[0].image === 'nginx:1.28')).toBe(true);
  });

  test('OnDelete: a new template reaches a pod only when it is deleted', async () => {
    const body = statefulSet('od', 2, { updateStrategy: { type: 'OnDelete' }, volumeClaimTemplates: [] });
    expect((await srv.json('POST', BASE, body)).status).toBe(201);
    await until(
      () => getSet('od'),
      (s) => s.status?.readyReplicas === 2,
      20_000,
    );
    const before = await pods('od');
    await ok(['set', 'image', 'statefulset/od', 'app=nginx:1.28']);
    const set = await until(
      () => getSet('od'),
      (s) => s.status.observedGeneration === 2,
    );
    expect(set.status.updateRevision).not.toBe(set.status.currentRevision);
    await Bun.sleep(300);
    expect((await pods('od')).map((p) => p.metadata.uid).sort()).toEqual(before.map((p) => p.metadata.uid).sort());
    expect((await srv.json('DELETE', '/api/v1/namespaces/default/pods/od-1')).status).toBe(200);
    const after = await until(
      () => pods('od'),
      (ps) => byName(ps, 'od-1')?.spec.containers[0].image === 'nginx:1.28' && ready(byName(ps, 'od-1')),
      20_000,
    );
    expect(byName(after, 'od-1').metadata.labels['controller-revision-hash']).toBe(set.status.updateRevision);
    expect(byName(after, 'od-0').spec.containers[0].image).toBe('nginx:1.27');
  });

  test('revisionHistoryLimit: revisions no pod uses beyond the limit are deleted', async () => {
    const body = statefulSet('hl', 1, { revisionHistoryLimit: 1, volumeClaimTemplates: [] });
    expect((await srv.json('POST', BASE, body)).status).toBe(201);
    for (const image of ['nginx:a', 'nginx:b', 'nginx:c']) {
      await ok(['set', 'image', 'statefulset/hl', `app=${image}`]);
      await ok(['rollout', 'status', 'statefulset/hl', '--timeout=30s']);
    }
    const owned = async () =>
      ((await srv.json('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items as Any[]).filter(
        (r) => r.metadata.ownerReferences?.[0]?.name === 'hl',
      );
    const revs = await until(owned, (rs) => rs.length === 2);
    expect(revs.map((r) => r.revision).sort()).toEqual([3, 4]);
  });
});
