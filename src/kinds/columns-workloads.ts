/**
 * Table columns of StatefulSet, DaemonSet, ControllerRevision, Job and CronJob, as the
 * reference's printers (pkg/printers/internalversion/printers.go) print them; the specs in
 * src/kinds/specs/{apps,batch}.ts name them.
 */
import type { Obj } from '../api/meta';
import { age, type Column, humanDuration, since } from '../codec/table';
import { AGE, CONTAINERS_DESCRIPTION, col, containerCells, formatLabelSelector, formatLabels, IMAGES_DESCRIPTION } from './columns';
import { list, map as o } from './validation/common';

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
const spec = (x: Obj) => o(x.spec);
const status = (x: Obj) => o(x.status);
const templateSpec = (t: unknown) => o(o(t).spec);
const containers = (x: Obj) => containerCells(templateSpec(spec(x).template).containers);

const CONTAINERS = col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => containers(x).names, 1);
const IMAGES = col('Images', 'string', IMAGES_DESCRIPTION, (x) => containers(x).images, 1);

export const STATEFULSET_COLUMNS: Column[] = [
  col('Ready', 'string', 'Number of the pod with ready state', (x) => {
    const replicas = spec(x).replicas === undefined ? 1 : n(spec(x).replicas);
    return `${n(status(x).readyReplicas)}/${replicas}`;
  }),
  AGE,
  CONTAINERS,
  IMAGES,
];

export const DAEMONSET_COLUMNS: Column[] = [
  col(
    'Desired',
    'integer',
    'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
    (x) => n(status(x).desiredNumberScheduled),
  ),
  col(
    'Current',
    'integer',
    'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
    (x) => n(status(x).currentNumberScheduled),
  ),
  col(
    'Ready',
    'integer',
    'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.',
    (x) => n(status(x).numberReady),
  ),
  col('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod', (x) => n(status(x).updatedNumberScheduled)),
  col(
    'Available',
    'integer',
    'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    (x) => n(status(x).numberAvailable),
  ),
  col(
    'Node Selector',
    'string',
    "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    (x) => formatLabels(templateSpec(spec(x).template).nodeSelector),
  ),
  AGE,
  CONTAINERS,
  IMAGES,
  col(
    'Selector',
    'string',
    'A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    (x) => formatLabelSelector(spec(x).selector),
    1,
  ),
];

/** metav1.GetControllerOf then formatResourceName: `kind.group/name`, "<none>" without one. */
function controllerOf(x: Obj): string {
  const ref = list(x.metadata.ownerReferences)
    .map(o)
    .find((r) => r.controller === true);
  if (!ref) return '<none>';
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = typeof ref.kind === 'string' ? ref.kind : '';
  if (kind === '' && group === '') return String(ref.name ?? '');
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${String(ref.name ?? '')}`;
}

export const CONTROLLERREVISION_COLUMNS: Column[] = [
  col('Controller', 'string', 'Controller of the object', controllerOf),
  col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.', (x) => n(x.revision)),
  AGE,
];

/** hasJobCondition: the first condition of the type decides. */
function jobCondition(x: Obj, type: string): boolean {
  const c = list(status(x).conditions)
    .map(o)
    .find((c) => c.type === type);
  return c?.status === 'True';
}

function jobStatus(x: Obj): string {
  if (jobCondition(x, 'Complete')) return 'Complete';
  if (jobCondition(x, 'Failed')) return 'Failed';
  if (x.metadata.deletionTimestamp) return 'Terminating';
  if (jobCondition(x, 'Suspended')) return 'Suspended';
  if (jobCondition(x, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobCompletions(x: Obj): string {
  const succeeded = n(status(x).succeeded);
  if (typeof spec(x).completions === 'number') return `${succeeded}/${spec(x).completions}`;
  const parallelism = n(spec(x).parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

const ms = (ts: unknown): number => (typeof ts === 'string' ? Date.parse(ts) : Number.NaN);

function jobDuration(x: Obj, now: number): string {
  const start = status(x).startTime;
  if (typeof start !== 'string' || start === '') return '';
  const done = status(x).completionTime;
  if (typeof done !== 'string' || done === '') return age(start, now);
  return humanDuration(ms(done) - ms(start));
}

const JOB_SELECTOR_DESCRIPTION =
  'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors';

export const JOB_COLUMNS: Column[] = [
  col('Status', 'string', 'Status of the job.', jobStatus),
  col(
    'Completions',
    'string',
    'The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.',
    jobCompletions,
  ),
  col('Duration', 'string', 'Time required to complete the job.', jobDuration),
  AGE,
  CONTAINERS,
  IMAGES,
  col('Selector', 'string', JOB_SELECTOR_DESCRIPTION, (x) => formatLabelSelector(spec(x).selector), 1),
];

const jobTemplateSpec = (x: Obj) => o(o(spec(x).jobTemplate).spec);
const cronContainers = (x: Obj) => containerCells(templateSpec(jobTemplateSpec(x).template).containers);

export const CRONJOB_COLUMNS: Column[] = [
  col('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.', (x) =>
    typeof spec(x).schedule === 'string' ? spec(x).schedule : '',
  ),
  col(
    'Timezone',
    'string',
    'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process.',
    (x) => (typeof spec(x).timeZone === 'string' ? spec(x).timeZone : '<none>'),
  ),
  col(
    'Suspend',
    'boolean',
    'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.',
    (x) => (typeof spec(x).suspend === 'boolean' ? (spec(x).suspend ? 'True' : 'False') : '<unset>'),
  ),
  col('Active', 'integer', 'A list of pointers to currently running jobs.', (x) => list(status(x).active).length),
  col('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.', (x, now) =>
    status(x).lastScheduleTime ? since(status(x).lastScheduleTime, now) : '<none>',
  ),
  AGE,
  col('Containers', 'string', CONTAINERS_DESCRIPTION, (x) => cronContainers(x).names, 1),
  col('Images', 'string', IMAGES_DESCRIPTION, (x) => cronContainers(x).images, 1),
  col('Selector', 'string', JOB_SELECTOR_DESCRIPTION, (x) => formatLabelSelector(jobTemplateSpec(x).selector), 1),
];
