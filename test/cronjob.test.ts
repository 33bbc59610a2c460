/**
 * The CronJob controller (src/controllers/cronjob.ts) end to end on simulated nodes, its clock
 * run 60 times as fast (--cronjob-time-scale=60: `* * * * *` fires about every second): Jobs named
 * `<cronjob>-<minutes since the epoch>` with the scheduled-timestamp annotation, status
 * lastScheduleTime / lastSuccessfulTime / active; Forbid skips while a Job runs; Replace deletes
 * the running Job; suspend; the history limits trim finished Jobs.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const JSON_CT = { 'content-type': 'application/json' };
const srv = serverForFile({ args: ['--simulated-nodes=2', '--cronjob-time-scale=60'] });
const BATCH = '/apis/batch/v1/namespaces/default';

function cronJob(name: string, spec: Any = {}, annotations: Record<string, string> = {}): Any {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      ...spec,
      jobTemplate: {
        metadata: { labels: { cj: name } },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { annotations },
            spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
    },
  };
}

const create = async (body: Any): Promise<Any> => {
  const r = await srv.json('POST', `${BATCH}/cronjobs`, body, JSON_CT);
  if (r.status !== 201) throw new Error(`create ${body.metadata.name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const getCj = async (name: string): Promise<Any> => (await srv.json('GET', `${BATCH}/cronjobs/${name}`)).body;
const jobsOf = async (name: string): Promise<Any[]> =>
  (await srv.json('GET', `${BATCH}/jobs?labelSelector=cj%3D${name}`)).body.items.filter((j: Any) => !j.metadata.deletionTimestamp);
const done = (j: Any, type: string) => (j.status?.conditions ?? []).some((c: Any) => c.type === type && c.status === 'True');
const events = async (name: string): Promise<string[]> =>
  (await srv.json('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`)).body.items.map(
    (e: Any) => e.reason,
  );

describe('CronJob controller', () => {
  test('creates a Job on schedule; status follows it', async () => {
    const cj = await create(cronJob('tick', { successfulJobsHistoryLimit: 10 }, { 'sim.svc.io/run-duration': '100ms' }));
    const jobs = await until(
      () => jobsOf('tick'),
      (js) => js.some((j) => done(j, 'Complete')),
      20_000,
    );
    const j = jobs.find((x) => done(x, 'Complete'));
    const ts = j.metadata.annotations['batch.kubernetes.io/cronjob-scheduled-timestamp'];
    expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(j.metadata.name).toBe(`tick-${Date.parse(ts) / 60_000}`);
    expect(j.metadata.ownerReferences[0]).toMatchObject({ kind: 'CronJob', name: 'tick', uid: cj.metadata.uid, controller: true });
    const s = await until(
      () => getCj('tick'),
      (c) => !!c.status?.lastSuccessfulTime,
      10_000,
    );
    expect(s.status.lastScheduleTime).toMatch(/:00Z$/);
    expect(s.status.lastSuccessfulTime).toBeString();
    expect(
      await until(
        () => events('tick'),
        (e) => e.includes('SawCompletedJob'),
      ),
    ).toContain('SuccessfulCreate');
  });

  test('timeZone: the scheduled timestamp in the zone', async () => {
    await create(cronJob('zoned', { timeZone: 'Asia/Kolkata', schedule: '*/2 * * * *' }, { 'sim.svc.io/run-duration': '100ms' }));
    const [j] = await until(
      () => jobsOf('zoned'),
      (js) => js.length > 0,
      10_000,
    );
    const ts = j.metadata.annotations['batch.kubernetes.io/cronjob-scheduled-timestamp'];
    expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d[02468]:00\+05:30$/);
    expect(j.metadata.name).toBe(`zoned-${Date.parse(ts) / 60_000}`);
    await srv.json('PATCH', `${BATCH}/cronjobs/zoned`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' });
  });

  test('Forbid: no new Job while one runs', async () => {
    await create(cronJob('forbid', { concurrencyPolicy: 'Forbid' }, { 'sim.svc.io/run-duration': '1h' }));
    const first = await until(
      () => getCj('forbid'),
      (c) => (c.status?.active ?? []).length === 1,
      10_000,
    );
    await Bun.sleep(3500);
    const jobs = await jobsOf('forbid');
    expect(jobs.map((j) => j.metadata.name)).toEqual([first.status.active[0].name]);
    expect(
      await until(
        () => events('forbid'),
        (e) => e.includes('JobAlreadyActive'),
      ),
    ).toContain('JobAlreadyActive');
  });

  test('Replace: the running Job is deleted for the next', async () => {
    await create(cronJob('replace', { concurrencyPolicy: 'Replace' }, { 'sim.svc.io/run-duration': '1h' }));
    const first = await until(
      () => getCj('replace'),
      (c) => (c.status?.active ?? []).length === 1,
      10_000,
    );
    const name = first.status.active[0].name;
    const later = await until(
      () => getCj('replace'),
      (c) => (c.status?.active ?? []).length === 1 && c.status.active[0].name !== name,
      10_000,
    );
    expect(later.status.active.length).toBe(1);
    expect(
      await until(
        () => events('replace'),
        (e) => e.includes('SuccessfulDelete'),
      ),
    ).toContain('SuccessfulDelete');
  });

  test('suspend: no Jobs', async () => {
    await create(cronJob('off', { suspend: true }));
    await Bun.sleep(2500);
    expect(await jobsOf('off')).toEqual([]);
    expect((await getCj('off')).status?.lastScheduleTime).toBeUndefined();
  });

  test('history limits trim finished Jobs', async () => {
    await create(cronJob('hist', { successfulJobsHistoryLimit: 1 }, { 'sim.svc.io/run-duration': '100ms' }));
    await create(cronJob('histf', { failedJobsHistoryLimit: 1 }, { 'sim.svc.io/exit-code': '1' }));
    await until(
      () => events('hist'),
      (e) => e.includes('SuccessfulDelete'),
      20_000,
    );
    await until(
      () => events('histf'),
      (e) => e.includes('SuccessfulDelete'),
      20_000,
    );
    await Bun.sleep(300);
    expect((await jobsOf('hist')).filter((j) => done(j, 'Complete')).length).toBeLessThanOrEqual(1);
    expect((await jobsOf('histf')).filter((j) => done(j, 'Failed')).length).toBeLessThanOrEqual(1);
    await srv.json('PATCH', `${BATCH}/cronjobs/hist`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' });
    await srv.json('PATCH', `${BATCH}/cronjobs/histf`, { spec: { suspend: true } }, { 'content-type': 'application/merge-patch+json' });
  });

  test('the server logged no controller errors', () => {
    expect(srv.logs()).not.toMatch(/(cronjob|job) controller:/);
  });
});
