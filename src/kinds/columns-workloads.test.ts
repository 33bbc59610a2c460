import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import type { Column } from '../codec/table';
import { CONTROLLERREVISION_COLUMNS, CRONJOB_COLUMNS, DAEMONSET_COLUMNS, JOB_COLUMNS, STATEFULSET_COLUMNS } from './columns-workloads';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (sec: number) => new Date(NOW - sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const obj = (extra: Record<string, unknown>, meta: Record<string, unknown> = {}): Obj => ({
  metadata: { name: 'x', namespace: 'default', creationTimestamp: ago(3600), ...meta },
  ...extra,
});
const cells = (cols: Column[], o: Obj) => Object.fromEntries(cols.map((c) => [c.name, c.cell(o, NOW)]));
const template = {
  spec: {
    containers: [
      { name: 'a', image: 'img:1' },
      { name: 'b', image: 'img:2' },
    ],
    nodeSelector: { disk: 'ssd' },
  },
};

test('StatefulSet', () => {
  expect(cells(STATEFULSET_COLUMNS, obj({ spec: { replicas: 3, template }, status: { readyReplicas: 2 } }))).toEqual({
    Ready: '2/3',
    Age: '60m',
    Containers: 'a,b',
    Images: 'img:1,img:2',
  });
  expect(STATEFULSET_COLUMNS.map((c) => c.priority)).toEqual([0, 0, 1, 1]);
});

test('DaemonSet', () => {
  const ds = obj({
    spec: { selector: { matchLabels: { app: 'x' } }, template },
    status: { desiredNumberScheduled: 3, currentNumberScheduled: 2, numberReady: 1, updatedNumberScheduled: 2, numberAvailable: 1 },
  });
  expect(cells(DAEMONSET_COLUMNS, ds)).toEqual({
    Desired: 3,
    Current: 2,
    Ready: 1,
    'Up-to-date': 2,
    Available: 1,
    'Node Selector': 'disk=ssd',
    Age: '60m',
    Containers: 'a,b',
    Images: 'img:1,img:2',
    Selector: 'app=x',
  });
});

test('ControllerRevision: the controller as kind.group/name', () => {
  const owned = obj(
    { revision: 4 },
    { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true }] },
  );
  expect(cells(CONTROLLERREVISION_COLUMNS, owned)).toEqual({ Controller: 'statefulset.apps/web', Revision: 4, Age: '60m' });
  const core = obj({ revision: 1 }, { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u', controller: true }] });
  expect(cells(CONTROLLERREVISION_COLUMNS, core).Controller).toBe('pod/p');
  expect(cells(CONTROLLERREVISION_COLUMNS, obj({ revision: 1 })).Controller).toBe('<none>');
});

test('Job: status, completions, duration', () => {
  const job = (spec: Record<string, unknown>, status: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
    cells(JOB_COLUMNS, obj({ spec: { template, selector: { matchLabels: { a: 'b' } }, ...spec }, status }, meta));
  expect(job({ completions: 3 }, { succeeded: 1 })).toMatchObject({ Status: 'Running', Completions: '1/3', Duration: '' });
  expect(job({ parallelism: 4 })).toMatchObject({ Completions: '0/1 of 4' });
  expect(job({ parallelism: 1 })).toMatchObject({ Completions: '0/1' });
  expect(job({ completions: 1 }, { startTime: ago(90) })).toMatchObject({ Duration: '90s' });
  expect(
    job(
      { completions: 1 },
      { succeeded: 1, startTime: ago(600), completionTime: ago(300), conditions: [{ type: 'Complete', status: 'True' }] },
    ),
  ).toMatchObject({ Status: 'Complete', Completions: '1/1', Duration: '5m' });
  expect(job({}, { conditions: [{ type: 'Failed', status: 'True' }] }).Status).toBe('Failed');
  expect(job({}, {}, { deletionTimestamp: ago(1) }).Status).toBe('Terminating');
  expect(job({}, { conditions: [{ type: 'Suspended', status: 'True' }] }).Status).toBe('Suspended');
  expect(job({}, { conditions: [{ type: 'FailureTarget', status: 'True' }] }).Status).toBe('FailureTarget');
  expect(job({}, { conditions: [{ type: 'Complete', status: 'False' }] }).Status).toBe('Running');
  expect(job({}).Selector).toBe('a=b');
});

test('CronJob', () => {
  const cj = obj({
    spec: { schedule: '*/5 * * * *', suspend: true, jobTemplate: { spec: { template } } },
    status: { active: [{ name: 'j1' }, { name: 'j2' }], lastScheduleTime: ago(120) },
  });
  expect(cells(CRONJOB_COLUMNS, cj)).toEqual({
    Schedule: '*/5 * * * *',
    Timezone: '<none>',
    Suspend: 'True',
    Active: 2,
    'Last Schedule': '2m',
    Age: '60m',
    Containers: 'a,b',
    Images: 'img:1,img:2',
    Selector: '<none>',
  });
  const fresh = obj({ spec: { schedule: '@daily', timeZone: 'Europe/Paris' } });
  expect(cells(CRONJOB_COLUMNS, fresh)).toMatchObject({
    Timezone: 'Europe/Paris',
    Suspend: '<unset>',
    Active: 0,
    'Last Schedule': '<none>',
  });
});
