/** batch/v1 kinds. */
import { CRONJOB_COLUMNS, JOB_COLUMNS } from '../columns-workloads';
import { cronJob, job } from '../validation/batch';
import { at, type Spec } from './spec';

export const BATCH: Spec[] = [
  {
    group: 'batch',
    kind: 'Job',
    plural: 'jobs',
    categories: ['all'],
    namespaced: true,
    status: true,
    pkg: 'batch',
    emptyStatus: true,
    rules: job,
    columns: JOB_COLUMNS,
    fields: { 'status.successful': (o) => String(at('status', 'succeeded')(o) ?? 0) },
  },
  {
    group: 'batch',
    kind: 'CronJob',
    plural: 'cronjobs',
    shortNames: ['cj'],
    categories: ['all'],
    namespaced: true,
    status: true,
    pkg: 'batch',
    emptyStatus: true,
    rules: cronJob,
    columns: CRONJOB_COLUMNS,
  },
];
