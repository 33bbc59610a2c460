/**
 * The Job controller, as the reference's pkg/controller/job: each Job runs pods from its template
 * until enough succeed (completions, parallelism at a time; NonIndexed, or Indexed with one pod
 * per index), or it fails (backoffLimit, backoffLimitPerIndex/maxFailedIndexes, the pod failure
 * policy, activeDeadlineSeconds). Parts:
 *
 *   pods.ts      the pods it creates (tracking finalizer, index annotation/label/hostname/env)
 *   tracking.ts  counting finished pods through status.uncountedTerminatedPods and the finalizer
 *   policy.ts    podFailurePolicy and successPolicy
 *   util.ts      spec/status types, conditions, interval text, the failure back-off
 *
 * A finishing Job first gets FailureTarget or SuccessCriteriaMet, its remaining pods are deleted,
 * and once none is left running or terminating it gets Failed or Complete (same reason). A
 * suspended Job's pods are deleted (condition Suspended) and its startTime cleared; resuming sets
 * startTime anew. After a failed pod, replacements wait the back-off (base·2^(n-1), base 10 s by
 * --job-pod-failure-backoff, at most ten minutes). Pods whose Job is gone lose the finalizer.
 *
 * It follows the watch caches of Jobs and pods, reads each Job afresh when syncing it, and writes
 * through the registry.
 */
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { decodeStored } from '../../codec/stored';
import type { EventRecorder } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import {
  claim,
  controllerOf,
  isPodActive,
  isPodReady,
  labelsOf,
  selectorOf,
  slowStartBatch,
  timeText,
  writeOptions,
} from '../controller-utils';
import { OwnerIndex } from '../owner-index';
import { Expectations, podsToDelete } from '../replicaset';
import { follow, WorkQueue } from '../workqueue';
import { podForJob } from './pods';
import { matchSuccessPolicy } from './policy';
import { indexFailures, pastBackoffLimitOnFailure, type Tracked, track } from './tracking';
import {
  conditionOf,
  failureBackoffMs,
  formatIntervals,
  hasTrackingFinalizer,
  isIndexed,
  isTerminating,
  type JobStatus,
  jobFinished,
  jobSpec,
  MAX_POD_CREATE_DELETE,
  onlyReplaceFailed,
  perIndex,
  podIndex,
  setCondition,
  TRACKING_FINALIZER,
} from './util';

const W = () => writeOptions('job-controller');
const ORPHAN = 'orphan:';
const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const gone = (e: unknown): boolean => e instanceof StatusError && (e.code === 404 || e.code === 409);

export interface JobControllerOptions {
  log?: (msg: string) => void;
  /** The back-off base after a failed pod (the reference's 10 s). */
  podFailureBackoffMs?: number;
  now?: () => number;
  /** The pods by controller, shared with the other controllers of pods (absent: its own). */
  index?: OwnerIndex;
}

export class JobController {
  readonly expectations = new Expectations();
  private readonly queue: WorkQueue;
  private readonly index: OwnerIndex;
  private readonly follows: { stop(): void }[] = [];
  /** Pods whose finalizer this controller removed, until the cache shows it (uid). */
  private readonly released = new Set<string>();
  /** Each Job's failures since its last success and the last one's time (the reference's backoff record). */
  private readonly backoff = new Map<string, { failures: number; last: number }>();

  constructor(
    private readonly jobs: ResourceStore,
    private readonly jobCache: WatchCache,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly recorder: EventRecorder,
    private readonly opts: JobControllerOptions = {},
  ) {
    this.index = opts.index ?? new OwnerIndex(podCache, pods.prefix);
    this.queue = new WorkQueue(
      (k) => (k.startsWith(ORPHAN) ? this.syncOrphan(k.slice(ORPHAN.length)) : this.sync(k)),
      (m) => opts.log?.(`job controller: ${m}`),
    );
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  async start(): Promise<void> {
    await Promise.all([this.jobCache.start(), this.podCache.start()]);
    await this.index.start();
    this.follows.push(
      follow(
        this.jobCache,
        (objs) => {
          for (const o of objs) this.queue.add(this.keyOf(o));
        },
        (o, type) => {
          if (type === 'DELETED') {
            this.expectations.delete(this.keyOf(o));
            this.backoff.delete(o.metadata.uid as string);
          }
          this.queue.add(this.keyOf(o));
        },
      ),
      follow(
        this.podCache,
        (objs) => {
          for (const p of objs) this.onPod(p, 'MODIFIED');
        },
        (p, type) => this.onPod(p, type),
      ),
    );
  }

  stop(): void {
    this.index.stop();
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private onPod(p: Obj, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void {
    const uid = p.metadata.uid as string;
    if (type === 'DELETED' || !hasTrackingFinalizer(p)) this.released.delete(uid);
    const ns = p.metadata.namespace as string;
    const ref = controllerOf(p);
    if (ref?.kind === 'Job') {
      const job = this.jobCache.get(this.jobs.key(ns, ref.name))?.obj;
      if (!job || job.metadata.uid !== ref.uid) {
        if (type !== 'DELETED' && hasTrackingFinalizer(p)) this.queue.after(`${ORPHAN}${this.keyOf(p)}`, 1000);
        return;
      }
      const key = this.keyOf(job);
      if (type === 'DELETED' || p.metadata.deletionTimestamp) this.expectations.deletionObserved(key, this.keyOf(p));
      else if (type === 'ADDED') this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    if (ref || type === 'DELETED' || p.metadata.deletionTimestamp) {
      if (!ref && hasTrackingFinalizer(p)) this.queue.after(`${ORPHAN}${this.keyOf(p)}`, 1000);
      return;
    }
    for (const c of this.jobCache.list(`${this.jobs.prefix}${ns}/`)) {
      if (selectorOf(c.obj)?.matches(labelsOf(p))) this.queue.add(this.keyOf(c.obj));
    }
  }

  private async getJob(ns: string, name: string): Promise<Obj | undefined> {
    try {
      return decodeStored(await this.jobs.get(ns, name));
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** A pod with the tracking finalizer whose Job is gone (or not its controller): the finalizer goes. */
  private async syncOrphan(podKey: string): Promise<void> {
    const [ns, name] = podKey.split('/') as [string, string];
    const p = this.podCache.get(this.pods.key(ns, name))?.obj;
    if (!p || !hasTrackingFinalizer(p)) return;
    const ref = controllerOf(p);
    if (ref?.kind === 'Job') {
      const job = await this.getJob(ns, ref.name);
      if (job && job.metadata.uid === ref.uid) {
        this.queue.add(`${ns}/${ref.name}`);
        return;
      }
    }
    await this.releasePods([p]);
  }

  private async releasePods(pods: Obj[]): Promise<void> {
    const results = await Promise.allSettled(
      pods.map((p) =>
        this.pods.updateFrom(p.metadata.namespace as string, p.metadata.name as string, '', W(), (cur) => {
          if (cur.metadata.uid !== p.metadata.uid) throw new StatusError(404, 'NotFound', 'replaced');
          const finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== TRACKING_FINALIZER);
          const meta: Obj['metadata'] = { ...cur.metadata, finalizers };
          if (finalizers.length === 0) delete meta.finalizers;
          return { ...cur, metadata: meta };
        }),
      ),
    );
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled' || gone(r.reason)) this.released.add((pods[i] as Obj).metadata.uid as string);
      else throw r.reason;
    }
  }

  private async deletePods(job: Obj, victims: Obj[]): Promise<number> {
    const key = this.keyOf(job);
    this.expectations.expectDeletions(
      key,
      victims.map((p) => this.keyOf(p)),
    );
    let removed = 0;
    let err: unknown;
    await Promise.all(
      victims.map(async (p) => {
        try {
          await this.pods.delete(p.metadata.namespace as string, p.metadata.name as string, {
            dryRun: false,
            preconditions: { uid: p.metadata.uid as string },
          });
          removed++;
          void this.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
        } catch (e) {
          this.expectations.deletionObserved(key, this.keyOf(p));
          if (gone(e)) return;
          void this.recorder.event(job, 'Warning', 'FailedDelete', `Error deleting: ${errText(e)}`);
          err ??= e;
        }
      }),
    );
    if (err !== undefined) throw err;
    return removed;
  }

  private async writeStatus(job: Obj, st: JobStatus): Promise<Obj | undefined> {
    if (JSON.stringify(job.status ?? {}) === JSON.stringify(st)) return job;
    const uid = job.metadata.uid;
    try {
      return await this.jobs.updateFrom(job.metadata.namespace as string, job.metadata.name as string, 'status', W(), (cur) => {
        if (cur.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...cur, status: st };
      });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** The Job's pods (adopting orphans its selector matches). */
  private async podsOf(job: Obj): Promise<Obj[]> {
    const ns = job.metadata.namespace as string;
    const sel = selectorOf(job);
    // Its pods and the namespace's orphans, from the owner index.
    const all = this.index.candidates(ns, job.metadata.uid as string);
    if (!sel || sel.empty) return all.filter((p) => controllerOf(p)?.uid === job.metadata.uid);
    return claim(job, 'batch/v1', 'Job', sel, all, this.pods, W(), () => this.getJob(ns, job.metadata.name as string));
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const job = await this.getJob(ns, key.slice(slash + 1));
    if (!job) {
      this.expectations.delete(key);
      return;
    }
    const pods = await this.podsOf(job);
    const pending = pods.filter((p) => hasTrackingFinalizer(p) && !this.released.has(p.metadata.uid as string));
    // Finished or being deleted: nothing runs any more; every pod loses the finalizer.
    if (jobFinished(job) || job.metadata.deletionTimestamp) {
      const done = jobFinished(job) ? pending : pending.filter((p) => p.metadata.deletionTimestamp || !isPodActive(p));
      if (done.length > 0) await this.releasePods(done);
      return;
    }
    const now = this.now();
    const spec = jobSpec(job);
    const st = structuredClone((job.status ?? {}) as JobStatus);
    const failing = !!conditionOf(st, 'FailureTarget');
    const succeeding = !!conditionOf(st, 'SuccessCriteriaMet');
    const t = track(job, st, pods, this.released, now, failing, succeeding);
    this.recordBackoff(job, t);
    // 1. New finished pods into uncountedTerminatedPods, then their finalizers off.
    const indexesText = (s: Set<number>) => formatIntervals(s);
    const withUncounted = (s: JobStatus): JobStatus => {
      s.uncountedTerminatedPods = {};
      if (t.uncountedSucceeded.size > 0) s.uncountedTerminatedPods.succeeded = [...t.uncountedSucceeded];
      if (t.uncountedFailed.size > 0) s.uncountedTerminatedPods.failed = [...t.uncountedFailed];
      if (isIndexed(job)) s.completedIndexes = indexesText(t.succeededIndexes);
      if (perIndex(job)) s.failedIndexes = indexesText(t.failedIndexes);
      return s;
    };
    if (t.release.length > 0) {
      const written = await this.writeStatus(job, withUncounted(structuredClone(st)));
      if (!written) return;
      job.status = written.status;
      await this.releasePods(t.release);
    }
    // 2. Counted: uncounted pods no longer holding the finalizer move into the counters.
    const byUid = new Map(pods.map((p) => [p.metadata.uid as string, p]));
    const holds = (uid: string) => {
      const p = byUid.get(uid);
      return !!p && hasTrackingFinalizer(p) && !this.released.has(uid);
    };
    for (const uid of [...t.uncountedSucceeded]) {
      if (holds(uid)) continue;
      t.uncountedSucceeded.delete(uid);
      st.succeeded = (st.succeeded ?? 0) + 1;
    }
    for (const uid of [...t.uncountedFailed]) {
      if (holds(uid)) continue;
      t.uncountedFailed.delete(uid);
      st.failed = (st.failed ?? 0) + 1;
    }
    withUncounted(st);
    await this.decide(key, job, spec, st, t, pods, now);
  }

  private recordBackoff(job: Obj, t: Tracked): void {
    const uid = job.metadata.uid as string;
    const b = this.backoff.get(uid) ?? { failures: 0, last: 0 };
    if (t.newSuccess) b.failures = 0;
    if (t.newFailures > 0) {
      b.failures += t.newFailures;
      b.last = Math.max(b.last, t.lastFailureAt);
    }
    this.backoff.set(uid, b);
  }

  /** Conditions, suspension, the deadline, and the pods to create or delete; then the status write. */
  private async decide(key: string, job: Obj, spec: ReturnType<typeof jobSpec>, st: JobStatus, t: Tracked, pods: Obj[], now: number) {
    let active = pods.filter(isPodActive);
    const terminatingOf = () => pods.filter(isTerminating).length;
    const succeeded = st.succeeded ?? 0;
    const failed = (st.failed ?? 0) + t.uncountedFailed.size;
    const completions = spec.completions;
    const suspended = spec.suspend === true;
    let interim = conditionOf(st, 'FailureTarget') ?? conditionOf(st, 'SuccessCriteriaMet');
    if (!interim) {
      const deadline = spec.activeDeadlineSeconds;
      const start = Date.parse(st.startTime ?? '');
      let target: [string, string, string] | undefined;
      if (t.failJob) target = ['FailureTarget', 'PodFailurePolicy', t.failJob];
      else if (perIndex(job) && spec.maxFailedIndexes !== undefined && t.failedIndexes.size > spec.maxFailedIndexes)
        target = ['FailureTarget', 'MaxFailedIndexesExceeded', 'Job has exceeded the specified maximal number of failed indexes'];
      else if (!perIndex(job) && (failed > (spec.backoffLimit ?? 6) || pastBackoffLimitOnFailure(job, active)))
        target = ['FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
      else if (!suspended && deadline !== undefined && !Number.isNaN(start) && now - start >= deadline * 1000)
        target = ['FailureTarget', 'DeadlineExceeded', 'Job was active longer than specified deadline'];
      else {
        const policy = isIndexed(job) ? matchSuccessPolicy(spec, t.succeededIndexes) : undefined;
        if (policy) target = ['SuccessCriteriaMet', 'SuccessPolicy', policy];
        else if (isIndexed(job) && t.succeededIndexes.size + t.failedIndexes.size >= (completions ?? 0)) {
          target =
            t.failedIndexes.size > 0
              ? ['FailureTarget', 'FailedIndexes', 'Job has failed indexes']
              : ['SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'];
        } else if (
          !isIndexed(job) &&
          (completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0) &&
          t.uncountedSucceeded.size === 0
        ) {
          target = ['SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'];
        }
      }
      if (target) {
        setCondition(st, target[0], 'True', target[1], target[2], now);
        interim = conditionOf(st, target[0]);
      }
    }
    let err: unknown;
    try {
      if (interim) {
        // Finishing: the remaining pods go; the final condition once none is left.
        if (active.length > 0) await this.deletePods(job, active);
        active = [];
        const left = pods.filter((p) => isTerminating(p) || (isPodActive(p) && !p.metadata.deletionTimestamp)).length;
        if (left === 0 && t.uncountedFailed.size === 0 && t.uncountedSucceeded.size === 0 && this.expectations.satisfied(key)) {
          const complete = interim.type === 'SuccessCriteriaMet';
          setCondition(st, complete ? 'Complete' : 'Failed', 'True', interim.reason ?? '', interim.message ?? '', now);
          if (complete) {
            st.completionTime = timeText(now);
            void this.recorder.event(job, 'Normal', 'Completed', 'Job completed');
          } else {
            void this.recorder.event(job, 'Warning', interim.reason ?? 'Failed', interim.message ?? '');
          }
        }
      } else if (suspended) {
        const stopping = active.length;
        if (stopping > 0) await this.deletePods(job, active);
        active = [];
        if (setCondition(st, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now))
          void this.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
        // Once no pod is left running, the Job is as if it never started.
        if (stopping === 0 && terminatingOf() === 0) delete st.startTime;
      } else {
        if (conditionOf(st, 'Suspended') && setCondition(st, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)) {
          void this.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
          st.startTime = timeText(now);
        }
        st.startTime ??= timeText(now);
        if (spec.activeDeadlineSeconds !== undefined) {
          this.queue.after(key, Date.parse(st.startTime) + spec.activeDeadlineSeconds * 1000 - now + 50);
        }
        if (this.expectations.satisfied(key)) active = await this.manage(key, job, spec, pods, active, succeeded, t, now);
      }
    } catch (e) {
      err = e;
    }
    st.active = active.length;
    st.ready = active.filter(isPodReady).length;
    st.terminating = terminatingOf();
    st.succeeded = st.succeeded ?? 0;
    st.failed = st.failed ?? 0;
    await this.writeStatus(job, st);
    if (err !== undefined) throw err;
  }

  /** manageJob: create or delete pods toward the active pods wanted; answers the active pods after. */
  private async manage(
    key: string,
    job: Obj,
    spec: ReturnType<typeof jobSpec>,
    pods: Obj[],
    active: Obj[],
    succeeded: number,
    t: Tracked,
    now: number,
  ): Promise<Obj[]> {
    const parallelism = spec.parallelism ?? 1;
    const terminating = onlyReplaceFailed(job) ? pods.filter(isTerminating) : [];
    // Replaced once failed: a terminating pod counts as failed at its deletion deadline.
    for (const p of terminating) this.queue.after(key, Date.parse(p.metadata.deletionTimestamp as string) - now + 50);
    let victims: Obj[] = [];
    let toCreate: (number | undefined)[] = [];
    if (!isIndexed(job)) {
      const want =
        spec.completions === undefined
          ? succeeded > 0
            ? active.length
            : parallelism
          : Math.max(0, Math.min(parallelism, spec.completions - succeeded));
      if (active.length > want) victims = podsToDelete(active, active, active.length - want);
      else toCreate = new Array(Math.max(0, want - active.length - terminating.length)).fill(undefined);
    } else {
      const completions = spec.completions ?? 0;
      const seen = new Set<number>();
      const keep: Obj[] = [];
      for (const p of active) {
        const ix = podIndex(p);
        if (ix === undefined || ix >= completions || seen.has(ix) || t.succeededIndexes.has(ix) || t.failedIndexes.has(ix)) victims.push(p);
        else {
          seen.add(ix);
          keep.push(p);
        }
      }
      for (const p of terminating) {
        const ix = podIndex(p);
        if (ix !== undefined) seen.add(ix);
      }
      const want = Math.max(0, Math.min(parallelism, completions - t.succeededIndexes.size - t.failedIndexes.size));
      if (keep.length > want) {
        keep.sort((a, b) => (podIndex(b) ?? 0) - (podIndex(a) ?? 0));
        victims.push(...keep.splice(0, keep.length - want));
      }
      const slots = want - keep.length - terminating.length;
      for (let ix = 0; ix < completions && toCreate.length < slots; ix++) {
        if (!seen.has(ix) && !t.succeededIndexes.has(ix) && !t.failedIndexes.has(ix)) toCreate.push(ix);
      }
    }
    if (victims.length > 0) {
      victims = victims.slice(0, MAX_POD_CREATE_DELETE);
      await this.deletePods(job, victims);
      const gone = new Set(victims.map((p) => p.metadata.uid));
      return active.filter((p) => !gone.has(p.metadata.uid));
    }
    if (toCreate.length === 0) return active;
    // The failure back-off: the Job's (failures since the last success), or each index's with backoffLimitPerIndex.
    const base = this.opts.podFailureBackoffMs ?? 10_000;
    const failures = perIndex(job) ? indexFailures(job, pods, now) : undefined;
    const waitOf = (ix: number | undefined): number => {
      const b = failures ? (ix === undefined ? undefined : failures.get(ix)) : this.backoff.get(job.metadata.uid as string);
      return b ? failureBackoffMs(b.failures, base) - (now - b.last) : 0;
    };
    const waits = toCreate.map(waitOf).filter((w) => w > 0);
    if (waits.length > 0) this.queue.after(key, Math.min(...waits) + 20);
    toCreate = toCreate.filter((ix) => waitOf(ix) <= 0).slice(0, MAX_POD_CREATE_DELETE);
    if (toCreate.length === 0) return active;
    this.expectations.expectCreations(key, toCreate.length);
    let i = 0;
    const { ok, err } = await slowStartBatch(toCreate.length, 1, async () => {
      const ix = toCreate[i++];
      const f = ix !== undefined ? failures?.get(ix) : undefined;
      const info = ix === undefined ? undefined : { index: ix, failures: failures ? (f?.failures ?? 0) : undefined, ignored: f?.ignored };
      try {
        const pod = await this.pods.create(job.metadata.namespace as string, podForJob(job, info), W());
        active = [...active, pod];
        void this.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
      } catch (e) {
        void this.recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${errText(e)}`);
        throw e;
      }
    });
    for (let j = ok; j < toCreate.length; j++) this.expectations.creationObserved(key);
    if (err !== undefined) throw err;
    return active;
  }
}
