/**
 * What the Job controller's parts share, as the reference's pkg/controller/job: the labels,
 * annotations and finalizer it writes, the spec and status it reads, completion indexes and
 * their interval text (`1,3-5,7`), conditions, and the pod-failure back-off.
 */
import type { Obj } from '../../api/meta';
import { phaseOf, timeText } from '../controller-utils';

/** The finalizer on every pod a Job creates, removed once the pod is counted in the Job's status. */
export const TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** An Indexed Job's pod's index: an annotation, and a label with the same key. */
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
export const INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';
/** The most pods one sync creates or deletes (the reference's MaxPodCreateDeletePerSync). */
export const MAX_POD_CREATE_DELETE = 500;

export interface PodFailurePolicyRule {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  onExitCodes?: { containerName?: string; operator: 'In' | 'NotIn'; values: number[] };
  onPodConditions?: { type: string; status?: string }[];
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  activeDeadlineSeconds?: number;
  suspend?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  podFailurePolicy?: { rules?: PodFailurePolicyRule[] };
  successPolicy?: { rules?: { succeededIndexes?: string; succeededCount?: number }[] };
  ttlSecondsAfterFinished?: number;
  template?: { metadata?: Obj['metadata']; spec?: Record<string, unknown> };
}

export interface JobCondition {
  type: string;
  status: 'True' | 'False';
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobStatus {
  startTime?: string;
  completionTime?: string;
  active?: number;
  ready?: number;
  terminating?: number;
  succeeded?: number;
  failed?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
  conditions?: JobCondition[];
}

export const jobSpec = (j: Obj): JobSpec => (j.spec ?? {}) as JobSpec;
export const isIndexed = (j: Obj): boolean => jobSpec(j).completionMode === 'Indexed';
export const perIndex = (j: Obj): boolean => isIndexed(j) && jobSpec(j).backoffLimitPerIndex !== undefined;
/** Replacement waits for a terminating pod to be Failed (podReplacementPolicy Failed). */
export const onlyReplaceFailed = (j: Obj): boolean => jobSpec(j).podReplacementPolicy === 'Failed' || !!jobSpec(j).podFailurePolicy;

export const conditionOf = (s: JobStatus, type: string): JobCondition | undefined =>
  (s.conditions ?? []).find((c) => c.type === type && c.status === 'True');

/** IsJobFinished: Complete or Failed. */
export const jobFinished = (j: Obj): boolean => {
  const s = (j.status ?? {}) as JobStatus;
  return !!(conditionOf(s, 'Complete') ?? conditionOf(s, 'Failed'));
};

/** ensureJobConditionStatus: sets a condition (a new transition time only when its status changes); whether it changed. */
export function setCondition(s: JobStatus, type: string, status: 'True' | 'False', reason: string, message: string, now: number): boolean {
  const conds = s.conditions ?? [];
  const cur = conds.find((c) => c.type === type);
  if (!cur) {
    if (status === 'False') return false;
    s.conditions = [...conds, { type, status, lastProbeTime: timeText(now), lastTransitionTime: timeText(now), reason, message }];
    return true;
  }
  if (cur.status === status && cur.reason === reason && cur.message === message) return false;
  if (cur.status !== status) cur.lastTransitionTime = timeText(now);
  cur.status = status;
  cur.reason = reason;
  cur.message = message;
  cur.lastProbeTime = timeText(now);
  return true;
}

/** A pod's completion index (annotation, else label); undefined when absent or not a number. */
export function podIndex(p: Obj): number | undefined {
  const v = p.metadata.annotations?.[COMPLETION_INDEX] ?? p.metadata.labels?.[COMPLETION_INDEX];
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  return Number(v);
}

/** Parses interval text (`1,3-5`); indexes at or above `limit` are dropped. */
export function parseIntervals(text: string | undefined, limit = Number.POSITIVE_INFINITY): Set<number> {
  const out = new Set<number>();
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = Math.min(m[2] === undefined ? lo : Number(m[2]), limit - 1);
    for (let i = lo; i <= hi; i++) out.add(i);
  }
  return out;
}

/** Interval text of a set of indexes, ascending: `1,3-5,7`. */
export function formatIntervals(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The delay before a replacement after `failures` failures since the last success: base·2^(n-1), at most 60·base (10 s → 10 min). */
export const failureBackoffMs = (failures: number, baseMs: number): number =>
  failures <= 0 ? 0 : Math.min(baseMs * 2 ** Math.min(failures - 1, 30), baseMs * 60);

export const hasTrackingFinalizer = (p: Obj): boolean => (p.metadata.finalizers ?? []).includes(TRACKING_FINALIZER);

export const isTerminal = (p: Obj): boolean => phaseOf(p) === 'Succeeded' || phaseOf(p) === 'Failed';

/** Being deleted and not yet terminal (status.terminating). */
export const isTerminating = (p: Obj): boolean => !!p.metadata.deletionTimestamp && !isTerminal(p);

/**
 * isPodFailed: phase Failed; without onlyReplaceFailed also a pod being deleted that did not
 * succeed (an orphan that never reaches a phase). With it, a pod still there after its deletion
 * deadline (deletionTimestamp: the kubelet has stopped it; only the finalizer holds it) counts
 * as failed too.
 */
export function isPodFailed(p: Obj, j: Obj, now: number): boolean {
  if (phaseOf(p) === 'Failed') return true;
  if (phaseOf(p) === 'Succeeded' || !p.metadata.deletionTimestamp) return false;
  return !onlyReplaceFailed(j) || Date.parse(p.metadata.deletionTimestamp) <= now;
}

/** When a finished pod's containers last finished (ms), else `dflt`. */
export function finishTime(p: Obj, dflt: number): number {
  let t = 0;
  const st = (p.status ?? {}) as { containerStatuses?: { state?: { terminated?: { finishedAt?: string } } }[] };
  for (const c of st.containerStatuses ?? []) t = Math.max(t, Date.parse(c.state?.terminated?.finishedAt ?? '') || 0);
  return t > 0 ? t : dflt;
}
