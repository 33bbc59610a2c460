/**
 * The Job and TTL-after-finished controllers (src/controllers/job, ttl-after-finished.ts) end to
 * end on simulated nodes: `kubectl create job` runs to Complete; completions 5 / parallelism 2
 * never has more than 2 pods running; an Indexed Job's pods and completedIndexes; backoffLimit
 * (BackoffLimitExceeded) and a pod failure policy's FailJob rule (PodFailurePolicy);
 * activeDeadlineSeconds (DeadlineExceeded); suspend and resume; ttlSecondsAfterFinished deleting
 * the Job and its pods. Simulated pods run for `sim.svc.io/run-duration` (a Job's: 1 s) and exit
 * with `sim.svc.io/exit-code`; the failure back-off is shortened by --job-pod-failure-backoff.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, type Server, serverForFile } from './helpers/server';
import { until } from './helpers/until';
import { openWatch } from './helpers/watch';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const srv = serverForFile({ args: ['--simulated-nodes=2', '--job-pod-failure-backoff=100ms'] });
const JOBS = '/apis/batch/v1/namespaces/default/jobs';

async function kubectl(s: Server, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${s.kubeconfig}`, ...args], {
    env: { ...process.env, KUBECONFIG: s.kubeconfig, HOME: s.dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, stdout, stderr };
}

function job(name: string, spec: Any = {}, annotations: Record<string, string> = {}, podSpec: Any = {}): Any {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      ...spec,
      template: {
        metadata: { annotations },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }], ...podSpec },
      },
    },
  };
}

const create = async (body: Any): Promise<Any> => {
  const r = await srv.json('POST', JOBS, body, JSON_CT);
  if (r.status !== 201) throw new Error(`create ${body.metadata.name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const getJob = async (name: string): Promise<Any> => (await srv.json('GET', `${JOBS}/${name}`)).body;
const cond = (j: Any, type: string): Any => (j.status?.conditions ?? []).find((c: Any) => c.type === type && c.status === 'True');
const waitCond = (name: string, type: string, ms = 30_000) =>
  until(
    () => getJob(name),
    (j) => !!cond(j, type),
    ms,
  );
const podsOf = async (name: string): Promise<Any[]> =>
  (await srv.json('GET', `/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D${name}`)).body.items;
const events = async (name: string): Promise<string[]> =>
  (await srv.json('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`)).body.items.map(
    (e: Any) => e.reason,
  );

describe('Job controller', () => {
  test('kubectl create job runs to Complete', async () => {
    const r = await kubectl(srv, ['create', 'job', 'hello', '--image=busybox', '--', 'echo', 'hi']);
    expect(r.stderr).toBe('');
    const w = await kubectl(srv, ['wait', '--for=condition=complete', 'job/hello', '--timeout=30s']);
    expect(w.stdout).toContain('job.batch/hello condition met');
    const j = await getJob('hello');
    expect(j.status).toMatchObject({ succeeded: 1, active: 0, failed: 0, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(j.status.startTime).toBeString();
    expect(j.status.completionTime).toBeString();
    expect(cond(j, 'Complete').reason).toBe('CompletionsReached');
    expect(cond(j, 'SuccessCriteriaMet').message).toBe('Reached expected number of succeeded pods');
    const pods = await podsOf('hello');
    expect(pods.length).toBe(1);
    expect(pods[0].metadata.finalizers ?? []).not.toContain('batch.kubernetes.io/job-tracking');
    expect(pods[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'Job', name: 'hello', controller: true });
    expect(pods[0].status.phase).toBe('Succeeded');
    // Finished: nothing more is written.
    await Bun.sleep(500);
    expect((await getJob('hello')).metadata.resourceVersion).toBe(j.metadata.resourceVersion);
    const reasons = await until(
      () => events('hello'),
      (e) => e.includes('Completed'),
    );
    expect(reasons).toContain('SuccessfulCreate');
    expect(reasons).toContain('Completed');
  });

  test('completions 5, parallelism 2: never more than 2 pods running', async () => {
    const w = await openWatch(srv, '/api/v1/namespaces/default/pods?watch=1&labelSelector=batch.kubernetes.io%2Fjob-name%3Dpar');
    await create(job('par', { completions: 5, parallelism: 2 }, { 'sim.svc.io/run-duration': '500ms' }));
    const j = await waitCond('par', 'Complete');
    await Bun.sleep(200);
    const evs = await w.drain(100);
    await w.close();
    const running = new Map<string, boolean>();
    let most = 0;
    for (const e of evs) {
      const p = e.object;
      const on = e.type !== 'DELETED' && !['Succeeded', 'Failed'].includes(p.status?.phase) && !p.metadata.deletionTimestamp;
      running.set(p.metadata.name, on);
      most = Math.max(most, [...running.values()].filter(Boolean).length);
    }
    expect(most).toBe(2);
    expect(j.status.succeeded).toBe(5);
    expect((await podsOf('par')).length).toBe(5);
  });

  test('Indexed: one pod per index, completedIndexes', async () => {
    await create(job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
    const j = await waitCond('idx', 'Complete');
    expect(j.status.completedIndexes).toBe('0-2');
    expect(j.status.succeeded).toBe(3);
    const pods = (await podsOf('idx')).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    expect(pods.map((p) => p.metadata.annotations['batch.kubernetes.io/job-completion-index'])).toEqual(['0', '1', '2']);
    expect(pods.map((p) => p.metadata.labels['batch.kubernetes.io/job-completion-index'])).toEqual(['0', '1', '2']);
    expect(pods.map((p) => p.spec.hostname)).toEqual(['idx-0', 'idx-1', 'idx-2']);
    expect(pods[1].metadata.name).toStartWith('idx-1-');
    expect(pods[0].spec.containers[0].env).toContainEqual({
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } },
    });
  });

  test('Indexed with backoffLimitPerIndex: failedIndexes, FailedIndexes / MaxFailedIndexesExceeded', async () => {
    const fail = { 'sim.svc.io/exit-code': '1' };
    await create(job('perix', { completionMode: 'Indexed', completions: 2, parallelism: 2, backoffLimitPerIndex: 1 }, fail));
    await create(
      job('maxfx', { completionMode: 'Indexed', completions: 3, parallelism: 1, backoffLimitPerIndex: 0, maxFailedIndexes: 0 }, fail),
    );
    const j = await waitCond('perix', 'Failed');
    expect(cond(j, 'Failed')).toMatchObject({ reason: 'FailedIndexes', message: 'Job has failed indexes' });
    expect(j.status).toMatchObject({ failedIndexes: '0-1', failed: 4, succeeded: 0 });
    const pods = await podsOf('perix');
    expect(pods.map((p) => p.metadata.annotations['batch.kubernetes.io/job-index-failure-count']).sort()).toEqual(['0', '0', '1', '1']);
    const m = await waitCond('maxfx', 'Failed');
    expect(cond(m, 'Failed').reason).toBe('MaxFailedIndexesExceeded');
    expect(m.status).toMatchObject({ failedIndexes: '0', failed: 1 });
  });

  test('successPolicy: SuccessCriteriaMet with SuccessPolicy', async () => {
    const successPolicy = { rules: [{ succeededCount: 1 }] };
    await create(job('sp', { completionMode: 'Indexed', completions: 3, parallelism: 1, successPolicy }));
    const j = await waitCond('sp', 'Complete');
    expect(cond(j, 'Complete')).toMatchObject({ reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
    expect(cond(j, 'SuccessCriteriaMet').reason).toBe('SuccessPolicy');
    expect(j.status).toMatchObject({ completedIndexes: '0', succeeded: 1 });
  });

  test('a failing pod: backoffLimit → Failed BackoffLimitExceeded', async () => {
    await create(job('fails', { backoffLimit: 1 }, { 'sim.svc.io/exit-code': '1' }));
    const j = await waitCond('fails', 'Failed');
    expect(cond(j, 'Failed')).toMatchObject({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    expect(cond(j, 'FailureTarget').reason).toBe('BackoffLimitExceeded');
    expect(j.status.failed).toBe(2);
    expect(j.status.completionTime).toBeUndefined();
    expect((await podsOf('fails')).length).toBe(2);
    expect(
      await until(
        () => events('fails'),
        (e) => e.includes('BackoffLimitExceeded'),
      ),
    ).toContain('BackoffLimitExceeded');
  });

  test('podFailurePolicy FailJob on an exit code', async () => {
    const rules = [{ action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } }];
    await create(job('pfp', { backoffLimit: 6, podFailurePolicy: { rules } }, { 'sim.svc.io/exit-code': '42' }));
    const j = await waitCond('pfp', 'Failed');
    expect(cond(j, 'Failed').reason).toBe('PodFailurePolicy');
    expect(cond(j, 'Failed').message).toMatch(
      /^Container c for pod default\/pfp-\w+ failed with exit code 42 matching FailJob rule at index 0$/,
    );
    expect(j.status.failed).toBe(1);
  });

  test('podFailurePolicy Ignore: the failure does not count', async () => {
    const rules = [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [7] } }];
    await create(job('ign', { backoffLimit: 0, podFailurePolicy: { rules } }, { 'sim.svc.io/exit-code': '7' }));
    await until(
      () => podsOf('ign'),
      (p) => p.length >= 3,
      15_000,
    );
    const j = await getJob('ign');
    expect(cond(j, 'Failed')).toBeUndefined();
    expect(j.status.failed).toBe(0);
    // Deleted: its pods go too (the finalizer of a pod whose Job is gone is removed).
    await srv.json('DELETE', `${JOBS}/ign?propagationPolicy=Background`);
    expect(
      await until(
        () => podsOf('ign'),
        (p) => p.length === 0,
        10_000,
      ),
    ).toEqual([]);
  });

  test('activeDeadlineSeconds: DeadlineExceeded, pods deleted', async () => {
    await create(job('deadline', { activeDeadlineSeconds: 2, parallelism: 2, completions: 2 }, { 'sim.svc.io/run-duration': '1h' }));
    const j = await waitCond('deadline', 'Failed', 15_000);
    expect(cond(j, 'Failed')).toMatchObject({ reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    expect(j.status.active).toBe(0);
    const pods = await until(
      () => podsOf('deadline'),
      (p) => p.length === 0,
      10_000,
    );
    expect(pods).toEqual([]);
  });

  test('suspend and resume', async () => {
    await create(job('susp', { suspend: true }, { 'sim.svc.io/run-duration': '1h' }));
    let j = await waitCond('susp', 'Suspended', 10_000);
    expect(cond(j, 'Suspended').reason).toBe('JobSuspended');
    expect(j.status.startTime).toBeUndefined();
    expect(await podsOf('susp')).toEqual([]);
    await srv.json('PATCH', `${JOBS}/susp`, { spec: { suspend: false } }, MERGE);
    j = await until(
      () => getJob('susp'),
      (x) => x.status?.active === 1 && !cond(x, 'Suspended'),
      10_000,
    );
    expect(j.status.conditions.find((c: Any) => c.type === 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });
    expect(j.status.startTime).toBeString();
    // Suspended while running: the pod goes, startTime is cleared.
    await srv.json('PATCH', `${JOBS}/susp`, { spec: { suspend: true } }, MERGE);
    j = await until(
      () => getJob('susp'),
      (x) => !!cond(x, 'Suspended') && x.status.active === 0 && x.status.terminating === 0 && !x.status.startTime,
      15_000,
    );
    expect(j.status.active).toBe(0);
    expect(j.status.startTime).toBeUndefined();
    expect(
      await until(
        () => podsOf('susp'),
        (p) => p.length === 0,
        10_000,
      ),
    ).toEqual([]);
  });

  test('podReplacementPolicy Failed: no replacement while the pod terminates', async () => {
    await create(
      job('repl', { podReplacementPolicy: 'Failed' }, { 'sim.svc.io/run-duration': '1h' }, { terminationGracePeriodSeconds: 2 }),
    );
    const [first] = await until(
      () => podsOf('repl'),
      (p) => p.length === 1 && p[0].status?.phase === 'Running',
      10_000,
    );
    expect((await srv.json('DELETE', `/api/v1/namespaces/default/pods/${first.metadata.name}`)).status).toBe(200);
    const j = await until(
      () => getJob('repl'),
      (x) => x.status?.terminating === 1,
      5000,
    );
    expect(j.status).toMatchObject({ terminating: 1, active: 0 });
    await Bun.sleep(500);
    expect((await podsOf('repl')).length).toBe(1);
    const after = await until(
      () => getJob('repl'),
      (x) => x.status?.active === 1 && x.status.failed === 1 && x.status.terminating === 0,
      10_000,
    );
    expect(after.status).toMatchObject({ active: 1, failed: 1, terminating: 0 });
    await srv.json('DELETE', `${JOBS}/repl?propagationPolicy=Background`);
  });

  test('ttlSecondsAfterFinished deletes the job and its pods', async () => {
    await create(job('ttl', { ttlSecondsAfterFinished: 1 }, { 'sim.svc.io/run-duration': '200ms' }));
    await waitCond('ttl', 'Complete');
    const gone = await until(
      () => srv.json('GET', `${JOBS}/ttl`),
      (r) => r.status === 404,
      15_000,
    );
    expect(gone.status).toBe(404);
    expect(
      await until(
        () => podsOf('ttl'),
        (p) => p.length === 0,
        10_000,
      ),
    ).toEqual([]);
  });

  test('the server logged no controller errors', () => {
    expect(srv.logs()).not.toMatch(/(job|ttl-after-finished) controller:/);
  });
});
