/**
 * The pods a Job creates, as the reference's job controller builds them from spec.template:
 * owned by the Job (controller reference), with the tracking finalizer, named `<job>-` plus a
 * random suffix; an Indexed Job's pod also carries its index (annotation and label
 * batch.kubernetes.io/job-completion-index, the JOB_COMPLETION_INDEX variable in every container,
 * hostname `<job>-<index>`) and, with backoffLimitPerIndex, the index's failure counts so far.
 */
import type { Obj } from '../../api/meta';
import { controllerRef } from '../controller-utils';
import { COMPLETION_INDEX, INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT, jobSpec, TRACKING_FINALIZER } from './util';

interface Container {
  env?: { name: string }[];
}

const INDEX_ENV = 'JOB_COMPLETION_INDEX';

function addIndexEnv(containers: unknown): void {
  if (!Array.isArray(containers)) return;
  for (const c of containers as Container[]) {
    const env = c.env ?? [];
    if (env.some((e) => e.name === INDEX_ENV)) continue;
    c.env = [
      ...env,
      { name: INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } } } as { name: string },
    ];
  }
}

export interface IndexInfo {
  index: number;
  failures?: number;
  ignored?: number;
}

/** The pod to create for `job` (at `ix` when Indexed). */
export function podForJob(job: Obj, ix?: IndexInfo): Obj {
  const t = jobSpec(job).template ?? {};
  const tm = t.metadata ?? {};
  const name = job.metadata.name as string;
  const labels: Record<string, string> = { ...(tm.labels ?? {}) };
  const annotations: Record<string, string> = { ...(tm.annotations ?? {}) };
  const spec = structuredClone(t.spec ?? {});
  let generateName = `${name}-`;
  if (ix) {
    const index = String(ix.index);
    generateName = `${name}-${index}-`;
    annotations[COMPLETION_INDEX] = index;
    labels[COMPLETION_INDEX] = index;
    if (ix.failures !== undefined) annotations[INDEX_FAILURE_COUNT] = String(ix.failures);
    if (ix.ignored) annotations[INDEX_IGNORED_FAILURE_COUNT] = String(ix.ignored);
    if (!spec.hostname) spec.hostname = `${name}-${index}`;
    addIndexEnv(spec.initContainers);
    addIndexEnv(spec.containers);
  }
  if (generateName.length > 58) generateName = generateName.slice(0, 58);
  const meta: Obj['metadata'] = {
    generateName,
    namespace: job.metadata.namespace,
    ownerReferences: [controllerRef(job, 'batch/v1', 'Job')],
    finalizers: [...(tm.finalizers ?? []).filter((f) => f !== TRACKING_FINALIZER), TRACKING_FINALIZER],
  };
  if (Object.keys(labels).length > 0) meta.labels = labels;
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec };
}
