/**
 * The Deployment controller (src/controllers/deployment), end to end with kubectl on simulated
 * nodes: create and `rollout status`; `set image` rolls to a new ReplicaSet `<name>-<hash>` while
 * never fewer than replicas - maxUnavailable pods are ready; `rollout undo` and `rollout history`;
 * `scale`; `rollout restart`; pause and resume; Recreate (no new pod before the old ones are
 * gone); proportional scaling of a stuck rollout and ProgressDeadlineExceeded; a server restarted
 * in the middle of a rollout finishes it.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { computeHash, maxUnavailable, proportion, resolveFenceposts, safeEncodeString } from '../src/controllers/deployment/util';
import { KUBECTL, type Server, serverForFile, startServer } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const ARGS = ['--simulated-nodes=3'];
const srv = serverForFile({ args: ARGS });

/** kubectl without blocking the test's event loop (pods are watched meanwhile). */
async function kubectl(s: Server, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${s.kubeconfig}`, ...args], {
    env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, stdout, stderr };
}

const ok = async (args: string[], s: Server = srv): Promise<string> => {
  const r = await kubectl(s, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

const getDeploy = async (name: string, s: Server = srv): Promise<Any> =>
  (await s.json('GET', `/apis/apps/v1/namespaces/default/deployments/${name}`)).body;
const listRS = async (app: string, s: Server = srv): Promise<Any[]> =>
  (await s.json('GET', `/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3D${app}`)).body.items;
const listPods = async (app: string, s: Server = srv): Promise<Any[]> =>
  (await s.json('GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).body.items;
const live = (pods: Any[]) => pods.filter((p) => !p.metadata.deletionTimestamp);
const ready = (p: Any) => (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True');
const cond = (d: Any, type: string) => (d.status?.conditions ?? []).find((c: Any) => c.type === type);
const rev = (o: Any) => o.metadata.annotations?.['deployment.kubernetes.io/revision'];
const byRevision = (rss: Any[]) => [...rss].sort((a, b) => Number(rev(a)) - Number(rev(b)));

/** Polls `f` until stopped; answers everything seen. */
function watchWhile<T>(f: () => Promise<T>): { stop(): Promise<T[]> } {
  const seen: T[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      seen.push(await f());
      await Bun.sleep(15);
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

function deployment(name: string, replicas: number, spec: Any = {}, annotations: Record<string, string> = {}): Any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { 'sim.svc.io/stop-delay': '0s', ...annotations } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      },
      ...spec,
    },
  };
}

describe('Deployment controller with kubectl', () => {
  test('create deployment, rollout status: 3 pods Running and Ready in ReplicaSet <name>-<pod-template-hash>', async () => {
    await ok(['create', 'deployment', 'web', '--image=nginx', '--replicas=3']);
    expect(await ok(['rollout', 'status', 'deployment/web', '--timeout=60s'])).toContain('deployment "web" successfully rolled out');
    const pods = live(await listPods('web'));
    expect(pods).toHaveLength(3);
    expect(pods.every((p) => p.status.phase === 'Running' && ready(p))).toBe(true);
    const [rs] = await listRS('web');
    const hash = rs.metadata.labels['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs.metadata.name).toBe(`web-${hash}`);
    expect(rs.spec.selector.matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(rs.metadata.ownerReferences[0]).toMatchObject({ kind: 'Deployment', name: 'web', controller: true, blockOwnerDeletion: true });
    expect(rs.metadata.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    expect(pods.every((p) => p.metadata.labels['pod-template-hash'] === hash)).toBe(true);
    const d = await getDeploy('web');
    expect(rev(d)).toBe('1');
    expect(d.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
    expect(cond(d, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(cond(d, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
  });

  test('set image: a new ReplicaSet, never fewer than replicas - maxUnavailable ready pods, the old one scaled to 0', async () => {
    const w = watchWhile(async () => live(await listPods('web')).filter(ready).length);
    await ok(['set', 'image', 'deployment/web', 'nginx=nginx:1.27']);
    await ok(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const readyCounts = await w.stop();
    // 3 replicas, 25 %: maxUnavailable rounds down to 0 (maxSurge up to 1).
    expect(Math.min(...readyCounts)).toBeGreaterThanOrEqual(3);
    const [old, cur] = byRevision(await listRS('web'));
    expect(rev(old)).toBe('1');
    expect(rev(cur)).toBe('2');
    expect(old.spec.replicas).toBe(0);
    expect(cur.spec.replicas).toBe(3);
    expect(cur.spec.template.spec.containers[0].image).toBe('nginx:1.27');
    const pods = live(await listPods('web'));
    expect(pods.every((p) => p.spec.containers[0].image === 'nginx:1.27')).toBe(true);
    expect(rev(await getDeploy('web'))).toBe('2');
    const events = (await srv.json('GET', '/api/v1/namespaces/default/events')).body.items as Any[];
    const scaling = events.filter((e) => e.involvedObject.name === 'web' && e.reason === 'ScalingReplicaSet').map((e) => e.message);
    expect(scaling).toContain(`Scaled up replica set ${cur.metadata.name} from 0 to 1`);
    expect(scaling.some((m) => m.startsWith(`Scaled down replica set ${old.metadata.name} from`))).toBe(true);
  });

  test('rollout undo returns to the old template with a new revision; rollout history lists them', async () => {
    expect(await ok(['rollout', 'undo', 'deployment/web'])).toContain('rolled back');
    await ok(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const d = await getDeploy('web');
    expect(d.spec.template.spec.containers[0].image).toBe('nginx');
    expect(rev(d)).toBe('3');
    const rss = byRevision(await listRS('web'));
    expect(rss.map(rev)).toEqual(['2', '3']);
    const back = rss[1];
    expect(back.spec.replicas).toBe(3);
    expect(back.spec.template.spec.containers[0].image).toBe('nginx');
    expect(back.metadata.annotations['deployment.kubernetes.io/revision-history']).toBe('1');
    const history = await ok(['rollout', 'history', 'deployment/web']);
    expect(
      history
        .split('\n')
        .filter((l) => /^\d+\s/.test(l))
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(['2', '3']);
    expect(await ok(['rollout', 'history', 'deployment/web', '--revision=2'])).toContain('nginx:1.27');
  });

  test('scale: 5 ready pods; the ReplicaSet records desired and max replicas', async () => {
    await ok(['scale', 'deployment/web', '--replicas=5']);
    await ok(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const d = await until(
      () => getDeploy('web'),
      (x) => x.status?.availableReplicas === 5,
      20_000,
    );
    expect(d.status).toMatchObject({ replicas: 5, updatedReplicas: 5, availableReplicas: 5 });
    const cur = byRevision(await listRS('web'))[1];
    expect(cur.metadata.annotations).toMatchObject({
      'deployment.kubernetes.io/desired-replicas': '5',
      'deployment.kubernetes.io/max-replicas': '7',
    });
    expect(live(await listPods('web')).filter(ready)).toHaveLength(5);
  });

  test('rollout restart: a new ReplicaSet from the restartedAt annotation', async () => {
    await ok(['rollout', 'restart', 'deployment/web']);
    await ok(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const rss = byRevision(await listRS('web'));
    const cur = rss[rss.length - 1];
    expect(rev(cur)).toBe('4');
    expect(cur.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toBeDefined();
    expect(cur.status.availableReplicas).toBe(5);
    expect(rss.slice(0, -1).every((rs) => rs.spec.replicas === 0)).toBe(true);
  });

  test('a paused deployment does not roll; resumed, it does', async () => {
    await ok(['rollout', 'pause', 'deployment/web']);
    await ok(['set', 'image', 'deployment/web', 'nginx=nginx:1.28']);
    const d = await until(
      () => getDeploy('web'),
      (x) => cond(x, 'Progressing')?.reason === 'DeploymentPaused' && x.status.observedGeneration === x.metadata.generation,
      10_000,
    );
    expect(cond(d, 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused' });
    await Bun.sleep(1000);
    expect(byRevision(await listRS('web')).map(rev)).toEqual(['2', '3', '4']);
    await ok(['rollout', 'resume', 'deployment/web']);
    await ok(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const pods = live(await listPods('web'));
    expect(pods).toHaveLength(5);
    expect(pods.every((p) => p.spec.containers[0].image === 'nginx:1.28')).toBe(true);
    expect(cond(await getDeploy('web'), 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
  });

  test('Recreate: the old pods are gone before any new one is created', async () => {
    const body = deployment('recreate', 3, { strategy: { type: 'Recreate' } }, { 'sim.svc.io/stop-delay': '1s' });
    expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', body, JSON_CT)).status).toBe(201);
    await ok(['rollout', 'status', 'deployment/recreate', '--timeout=60s']);
    const w = watchWhile(async () => {
      const pods = await listPods('recreate');
      return new Set(pods.map((p) => p.spec.containers[0].image)).size;
    });
    await ok(['set', 'image', 'deployment/recreate', 'app=nginx:1.28']);
    await ok(['rollout', 'status', 'deployment/recreate', '--timeout=60s']);
    const images = await w.stop();
    expect(Math.max(...images)).toBe(1);
    const pods = await listPods('recreate');
    expect(pods.every((p) => p.spec.containers[0].image === 'nginx:1.28' && ready(p))).toBe(true);
    expect(pods).toHaveLength(3);
  });

  test('a stuck rollout times out (ProgressDeadlineExceeded) and is scaled proportionally', async () => {
    const body = deployment('stuck', 10, {
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } },
    });
    expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', body, JSON_CT)).status).toBe(201);
    await ok(['rollout', 'status', 'deployment/stuck', '--timeout=60s']);
    // New pods never become ready; 2 s without progress is the deadline.
    const patch = { spec: { progressDeadlineSeconds: 2, template: { metadata: { annotations: { 'sim.svc.io/ready': 'false' } } } } };
    expect((await srv.json('PATCH', '/apis/apps/v1/namespaces/default/deployments/stuck', patch, MERGE)).status).toBe(200);
    const status = await kubectl(srv, ['rollout', 'status', 'deployment/stuck', '--timeout=30s']);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain('exceeded its progress deadline');
    const d = await getDeploy('stuck');
    expect(cond(d, 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    // 10 replicas, surge 3, unavailable 2: old 8 (available), new 5 (not ready).
    let [old, cur] = byRevision(await listRS('stuck'));
    expect([old.spec.replicas, cur.spec.replicas]).toEqual([8, 5]);
    expect(d.status.unavailableReplicas).toBe(5);
    // 20 replicas: 10 more over 13, in proportion (max-replicas 13 -> 23): old +6, new +4.
    await ok(['scale', 'deployment/stuck', '--replicas=20']);
    [old, cur] = await until(
      async () => byRevision(await listRS('stuck')),
      (rss) => rss[0].spec.replicas + rss[1].spec.replicas === 23,
      10_000,
    );
    expect([old.spec.replicas, cur.spec.replicas]).toEqual([14, 9]);
    expect(old.metadata.annotations['deployment.kubernetes.io/desired-replicas']).toBe('20');
    expect(cur.metadata.annotations['deployment.kubernetes.io/max-replicas']).toBe('23');
  });
});

describe('Deployment controller: history and arithmetic', () => {
  test('revisionHistoryLimit: old ReplicaSets beyond it are deleted once scaled to zero', async () => {
    const body = deployment('hist', 2, { revisionHistoryLimit: 1 });
    expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', body, JSON_CT)).status).toBe(201);
    for (const image of ['nginx:1.28', 'nginx:1.29', 'nginx:1.30']) {
      await ok(['set', 'image', 'deployment/hist', `app=${image}`]);
      await ok(['rollout', 'status', 'deployment/hist', '--timeout=60s']);
    }
    const rss = await until(
      () => listRS('hist'),
      (x) => x.length === 2,
      15_000,
    );
    expect(byRevision(rss).map(rev)).toEqual(['3', '4']);
    expect(byRevision(rss)[1].spec.template.spec.containers[0].image).toBe('nginx:1.30');
  });

  test("a quota that stops pod creation: the ReplicaSet's ReplicaFailure shows on the Deployment, Available False", async () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dquota' } };
    expect((await srv.json('POST', '/api/v1/namespaces', ns, JSON_CT)).status).toBe(201);
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '2' } } };
    expect((await srv.json('POST', '/api/v1/namespaces/dquota/resourcequotas', quota, JSON_CT)).status).toBe(201);
    // Until the quota controller has written the quota's status, admission refuses pods with
    // "status unknown for quota" (the reference's e2e tests wait for it too).
    await until(
      async () => (await srv.json('GET', '/api/v1/namespaces/dquota/resourcequotas/q')).body,
      (x) => x.status?.hard?.pods === '2' && x.status?.used?.pods !== undefined,
      10_000,
    );
    expect((await srv.json('POST', '/apis/apps/v1/namespaces/dquota/deployments', deployment('capped', 3), JSON_CT)).status).toBe(201);
    const d = await until(
      async () => (await srv.json('GET', '/apis/apps/v1/namespaces/dquota/deployments/capped')).body,
      (x) => !!cond(x, 'ReplicaFailure') && x.status?.availableReplicas === 2,
      20_000,
    );
    expect(cond(d, 'ReplicaFailure')).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(cond(d, 'ReplicaFailure').message).toContain('exceeded quota');
    expect(cond(d, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
    expect(d.status).toMatchObject({ replicas: 2, updatedReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 });
  });

  test('pod-template-hash: FNV-32a rendered with SafeEncodeString, changed by collisionCount; fenceposts and proportions', () => {
    const tmpl = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'a', image: 'b' }] } };
    const h = computeHash(tmpl);
    expect(h).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(computeHash(structuredClone(tmpl))).toBe(h);
    expect(computeHash(tmpl, 1)).not.toBe(h);
    // Digits 0-9 are bytes 48-57: characters 21..26, 0..3 of the alphabet.
    expect(safeEncodeString('0123456789')).toBe('456789bcdf');
    const d = (replicas: number, maxSurge: unknown, maxUnavailable: unknown): Any => ({
      metadata: {},
      spec: { replicas, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } },
    });
    expect(resolveFenceposts(d(3, '25%', '25%'))).toEqual({ surge: 1, unavailable: 0 });
    expect(resolveFenceposts(d(10, '25%', '25%'))).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts(d(10, 0, '0%'))).toEqual({ surge: 0, unavailable: 1 });
    expect(maxUnavailable(d(2, 0, 5))).toBe(2);
    const rs = (replicas: number, max: number): Any => ({
      metadata: { annotations: { 'deployment.kubernetes.io/max-replicas': String(max) } },
      spec: { replicas },
    });
    expect(proportion(rs(8, 13), d(20, 3, 2), 10, 0)).toBe(6);
    expect(proportion(rs(5, 13), d(20, 3, 2), 10, 6)).toBe(4);
  });
});

describe('Deployment controller across a restart', () => {
  test('a rollout under way when the server stops finishes after it starts again', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-deploy-'));
    let s = await startServer({ args: ARGS, dataDir });
    try {
      const body = deployment('resume', 4, { minReadySeconds: 1 });
      expect((await s.json('POST', '/apis/apps/v1/namespaces/default/deployments', body, JSON_CT)).status).toBe(201);
      await ok(['rollout', 'status', 'deployment/resume', '--timeout=60s'], s);
      await ok(['set', 'image', 'deployment/resume', 'app=nginx:1.28'], s);
      const mid = await until(
        () => listRS('resume', s),
        (rss) => rss.length === 2,
        10_000,
      );
      expect(mid).toHaveLength(2);
      await s.stop();
      s = await startServer({ args: ARGS, dataDir });
      await ok(['rollout', 'status', 'deployment/resume', '--timeout=60s'], s);
      const [old, cur] = byRevision(await listRS('resume', s));
      expect([old.spec.replicas, cur.spec.replicas]).toEqual([0, 4]);
      const pods = live(await listPods('resume', s));
      expect(pods.filter((p) => p.spec.containers[0].image === 'nginx:1.28' && ready(p))).toHaveLength(4);
    } finally {
      await s.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
