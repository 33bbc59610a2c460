/**
 * Counting a Job's finished pods, as the reference's trackJobStatusAndRemoveFinalizers: a
 * finished pod that still has the tracking finalizer goes into status.uncountedTerminatedPods,
 * its finalizer is removed, and then it moves into status.succeeded / status.failed (so a pod is
 * counted once, whatever the controller's crashes). Failed pods go through the pod failure
 * policy; with backoffLimitPerIndex an index whose failures pass the limit joins failedIndexes.
 */
import type { Obj } from '../../api/meta';
import { phaseOf } from '../controller-utils';
import { matchPodFailurePolicy } from './policy';
import {
  finishTime,
  hasTrackingFinalizer,
  INDEX_FAILURE_COUNT,
  INDEX_IGNORED_FAILURE_COUNT,
  isIndexed,
  isPodFailed,
  type JobStatus,
  jobSpec,
  parseIntervals,
  perIndex,
  podIndex,
} from './util';

export interface Tracked {
  /** Pods whose tracking finalizer is to be removed now. */
  release: Obj[];
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  succeededIndexes: Set<number>;
  failedIndexes: Set<number>;
  /** A FailJob rule matched: the Job's failure message. */
  failJob?: string;
  /** Newly counted: the last success or failure, for the back-off record. */
  newSuccess: boolean;
  newFailures: number;
  lastFailureAt: number;
}

const count = (p: Obj, key: string): number => {
  const v = Number(p.metadata.annotations?.[key] ?? '0');
  return Number.isInteger(v) && v >= 0 ? v : 0;
};

/**
 * What tracking does with `pods` (the Job's) given its status; `released` are pods whose
 * finalizer this controller already removed (its cache may not show it yet); `failing` and
 * `succeeding` say an interim condition is set (FailureTarget / SuccessCriteriaMet).
 */
export function track(
  job: Obj,
  st: JobStatus,
  pods: Obj[],
  released: Set<string>,
  now: number,
  failing: boolean,
  succeeding: boolean,
): Tracked {
  const spec = jobSpec(job);
  const completions = spec.completions ?? 0;
  const indexed = isIndexed(job);
  const t: Tracked = {
    release: [],
    uncountedSucceeded: new Set(st.uncountedTerminatedPods?.succeeded ?? []),
    uncountedFailed: new Set(st.uncountedTerminatedPods?.failed ?? []),
    succeededIndexes: indexed ? parseIntervals(st.completedIndexes, completions) : new Set(),
    failedIndexes: perIndex(job) ? parseIntervals(st.failedIndexes, completions) : new Set(),
    newSuccess: false,
    newFailures: 0,
    lastFailureAt: 0,
  };
  for (const p of pods) {
    const uid = p.metadata.uid as string;
    if (!hasTrackingFinalizer(p) || released.has(uid)) continue;
    const succeeded = phaseOf(p) === 'Succeeded';
    const failed = !succeeded && (isPodFailed(p, job, now) || (failing && !!p.metadata.deletionTimestamp));
    if (!succeeded && !failed) {
      // Terminated on a success policy: released without counting.
      if (succeeding && p.metadata.deletionTimestamp) t.release.push(p);
      continue;
    }
    t.release.push(p);
    if (t.uncountedSucceeded.has(uid) || t.uncountedFailed.has(uid)) continue;
    const ix = podIndex(p);
    if (indexed && (ix === undefined || ix >= completions)) continue;
    if (succeeded) {
      if (indexed) {
        if (t.succeededIndexes.has(ix as number)) continue;
        t.succeededIndexes.add(ix as number);
      }
      t.uncountedSucceeded.add(uid);
      t.newSuccess = true;
      continue;
    }
    let counts = true;
    if (spec.podFailurePolicy && phaseOf(p) === 'Failed') {
      const m = matchPodFailurePolicy(spec, p);
      counts = m.count;
      if (m.action === 'FailJob') t.failJob ??= m.message;
      if (m.action === 'FailIndex' && perIndex(job)) t.failedIndexes.add(ix as number);
    }
    if (!counts) continue;
    if (perIndex(job) && count(p, INDEX_FAILURE_COUNT) + 1 > (spec.backoffLimitPerIndex ?? 0)) t.failedIndexes.add(ix as number);
    t.uncountedFailed.add(uid);
    t.newFailures++;
    t.lastFailureAt = Math.max(t.lastFailureAt, finishTime(p, now));
  }
  return t;
}

/** An index's failures so far (counted and ignored, from its failed pods' annotations, for its next pod) and the last counted one's time. */
export function indexFailures(job: Obj, pods: Obj[], now: number): Map<number, { failures: number; ignored: number; last: number }> {
  const out = new Map<number, { failures: number; ignored: number; last: number }>();
  const spec = jobSpec(job);
  for (const p of pods) {
    const ix = podIndex(p);
    if (ix === undefined || !isPodFailed(p, job, now)) continue;
    let failures = count(p, INDEX_FAILURE_COUNT);
    let ignored = count(p, INDEX_IGNORED_FAILURE_COUNT);
    const m = spec.podFailurePolicy && phaseOf(p) === 'Failed' ? matchPodFailurePolicy(spec, p) : { count: true };
    if (m.count) failures++;
    else ignored++;
    const cur = out.get(ix) ?? { failures: 0, ignored: 0, last: 0 };
    out.set(ix, {
      failures: Math.max(cur.failures, failures),
      ignored: Math.max(cur.ignored, ignored),
      last: m.count ? Math.max(cur.last, finishTime(p, now)) : cur.last,
    });
  }
  return out;
}

/** pastBackoffLimitOnFailure: with restartPolicy OnFailure, the active pods' container restarts reach backoffLimit. */
export function pastBackoffLimitOnFailure(job: Obj, active: Obj[]): boolean {
  const spec = jobSpec(job);
  if ((spec.template?.spec as { restartPolicy?: string } | undefined)?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of active) {
    const st = (p.status ?? {}) as { containerStatuses?: { restartCount?: number }[]; initContainerStatuses?: { restartCount?: number }[] };
    for (const c of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) restarts += c.restartCount ?? 0;
  }
  const limit = spec.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}
