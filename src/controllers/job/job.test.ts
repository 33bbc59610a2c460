import { describe, expect, test } from 'bun:test';
import { parseSchedule } from '../../api/cron';
import type { Obj } from '../../api/meta';
import { jobNameFor, mostRecentScheduleTime, rfc3339In } from '../cronjob';
import { expiresAt } from '../ttl-after-finished';
import { podForJob } from './pods';
import { matchPodFailurePolicy, matchSuccessPolicy } from './policy';
import { pastBackoffLimitOnFailure, track } from './tracking';
import { failureBackoffMs, formatIntervals, parseIntervals, TRACKING_FINALIZER } from './util';

const job = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j', namespace: 'ns', uid: 'job-uid' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } }, ...spec },
  status,
});

const pod = (name: string, phase: string, extra: { code?: number; index?: number; failures?: number; deleting?: boolean } = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    finalizers: [TRACKING_FINALIZER],
    annotations: {
      ...(extra.index !== undefined ? { 'batch.kubernetes.io/job-completion-index': String(extra.index) } : {}),
      ...(extra.failures !== undefined ? { 'batch.kubernetes.io/job-index-failure-count': String(extra.failures) } : {}),
    },
    ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  status: {
    phase,
    containerStatuses: extra.code === undefined ? [] : [{ name: 'c', state: { terminated: { exitCode: extra.code } } }],
  },
});

describe('intervals', () => {
  test('format and parse', () => {
    expect(formatIntervals([7, 1, 3, 4, 5])).toBe('1,3-5,7');
    expect(formatIntervals([])).toBe('');
    expect([...parseIntervals('1,3-5,7', 5)]).toEqual([1, 3, 4]);
  });
  test('the failure back-off doubles to 60 times its base', () => {
    expect([0, 1, 2, 3].map((n) => failureBackoffMs(n, 10_000))).toEqual([0, 10_000, 20_000, 40_000]);
    expect(failureBackoffMs(20, 10_000)).toBe(600_000);
  });
});

describe('policies', () => {
  const rules = [
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    { action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [1, 2] } },
    { action: 'Count', onExitCodes: { operator: 'In', values: [1] } },
  ];
  const spec = { podFailurePolicy: { rules } };
  test('exit codes and conditions, first rule wins', () => {
    expect(matchPodFailurePolicy(spec as never, pod('a', 'Failed', { code: 3 }))).toEqual({
      action: 'FailJob',
      count: true,
      message: 'Container c for pod ns/a failed with exit code 3 matching FailJob rule at index 1',
    });
    expect(matchPodFailurePolicy(spec as never, pod('b', 'Failed', { code: 1 }))).toEqual({ action: 'Count', count: true });
    expect(matchPodFailurePolicy(spec as never, pod('c', 'Failed', { code: 2 }))).toEqual({ count: true });
    const disrupted = pod('d', 'Failed', { code: 3 });
    (disrupted.status as { conditions?: unknown[] }).conditions = [{ type: 'DisruptionTarget', status: 'True' }];
    expect(matchPodFailurePolicy(spec as never, disrupted)).toEqual({ action: 'Ignore', count: false });
  });
  test('success policy', () => {
    const s = { completions: 5, successPolicy: { rules: [{ succeededIndexes: '0-2' }, { succeededCount: 4 }] } };
    expect(matchSuccessPolicy(s as never, new Set([0, 1]))).toBeUndefined();
    expect(matchSuccessPolicy(s as never, new Set([0, 1, 2]))).toBe('Matched rules at index 0');
    expect(matchSuccessPolicy(s as never, new Set([1, 2, 3, 4]))).toBe('Matched rules at index 1');
  });
});

describe('tracking', () => {
  test('finished pods go to uncountedTerminatedPods and lose the finalizer', () => {
    const j = job({ completions: 3 });
    const t = track(j, {}, [pod('a', 'Succeeded'), pod('b', 'Failed', { code: 1 }), pod('c', 'Running')], new Set(), 0, false, false);
    expect(t.release.map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect([...t.uncountedSucceeded]).toEqual(['uid-a']);
    expect([...t.uncountedFailed]).toEqual(['uid-b']);
    // Already released: not again.
    expect(track(j, {}, [pod('a', 'Succeeded')], new Set(['uid-a']), 0, false, false).release).toEqual([]);
  });
  test('a pod being deleted counts as failed unless only failed pods are replaced', () => {
    const deleting = pod('a', 'Running', { deleting: true });
    expect([...track(job({}), {}, [deleting], new Set(), 0, false, false).uncountedFailed]).toEqual(['uid-a']);
    expect(track(job({ podReplacementPolicy: 'Failed' }), {}, [deleting], new Set(), 0, false, false).release).toEqual([]);
  });
  test('Indexed: completedIndexes once per index; backoffLimitPerIndex fails an index', () => {
    const j = job({ completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1 });
    const t = track(
      j,
      { completedIndexes: '0' },
      [pod('a', 'Succeeded', { index: 0 }), pod('b', 'Succeeded', { index: 1 }), pod('c', 'Failed', { index: 2, failures: 1 })],
      new Set(),
      0,
      false,
      false,
    );
    expect([...t.succeededIndexes].sort()).toEqual([0, 1]);
    expect([...t.uncountedSucceeded]).toEqual(['uid-b']);
    expect([...t.failedIndexes]).toEqual([2]);
  });
  test('OnFailure restarts count toward backoffLimit', () => {
    const j = job({ backoffLimit: 2, template: { spec: { restartPolicy: 'OnFailure' } } });
    const p = pod('a', 'Running');
    (p.status as Record<string, unknown>).containerStatuses = [{ name: 'c', restartCount: 2 }];
    expect(pastBackoffLimitOnFailure(j, [p])).toBe(true);
    expect(pastBackoffLimitOnFailure(job({ backoffLimit: 2 }), [p])).toBe(false);
  });
});

describe('pods', () => {
  test('an Indexed pod: index annotation, label, hostname, env, finalizer, owner', () => {
    const p = podForJob(job({ completionMode: 'Indexed' }), { index: 4, failures: 1 });
    expect(p.metadata.generateName).toBe('j-4-');
    expect(p.metadata.labels?.['batch.kubernetes.io/job-completion-index']).toBe('4');
    expect(p.metadata.annotations?.['batch.kubernetes.io/job-index-failure-count']).toBe('1');
    expect(p.metadata.finalizers).toEqual([TRACKING_FINALIZER]);
    expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Job', uid: 'job-uid', controller: true, blockOwnerDeletion: true });
    expect((p.spec as { hostname?: string }).hostname).toBe('j-4');
  });
});

describe('cronjob and ttl', () => {
  test('names, timestamps and missed times', () => {
    const t = Date.UTC(2026, 0, 1, 10, 30);
    expect(jobNameFor('cj', t)).toBe(`cj-${t / 60_000}`);
    expect(rfc3339In(t, 'UTC')).toBe('2026-01-01T10:30:00Z');
    expect(rfc3339In(t, 'Europe/Paris')).toBe('2026-01-01T11:30:00+01:00');
    const sched = parseSchedule('*/10 * * * *');
    if (sched instanceof Error) throw sched;
    expect(mostRecentScheduleTime(sched, 'UTC', t, t + 35 * 60_000)).toEqual({ time: t + 30 * 60_000, missed: 3 });
    expect(mostRecentScheduleTime(sched, 'UTC', t, t + 5 * 60_000)).toEqual({ time: undefined, missed: 0 });
    // Many missed: the most recent is still found, the count stops past 100.
    expect(mostRecentScheduleTime(sched, 'UTC', t, t + 30 * 24 * 3600_000 + 60_000)).toEqual({ time: t + 30 * 24 * 3600_000, missed: 101 });
    // startingDeadlineSeconds: times before now − deadline are not considered.
    expect(mostRecentScheduleTime(sched, 'UTC', t, t + 35 * 60_000, 60).missed).toBe(0);
  });
  test('a finished Job expires ttlSecondsAfterFinished after its condition', () => {
    const done = job(
      { ttlSecondsAfterFinished: 5 },
      { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    );
    expect(expiresAt(done)).toBe(Date.parse('2026-01-01T00:00:05Z'));
    expect(expiresAt(job({ ttlSecondsAfterFinished: 5 }))).toBeUndefined();
  });
});
