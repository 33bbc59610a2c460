/**
 * The CronJob controller, as the reference's pkg/controller/cronjob (v2): each CronJob creates a
 * Job at the schedule's times (spec.schedule in spec.timeZone, UTC when unset), named
 * `<cronjob>-<scheduled time in minutes since the epoch>` and annotated
 * batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339 in the zone).
 *
 *   missed times    only the most recent unmet time since lastScheduleTime (or creation) runs;
 *                   with startingDeadlineSeconds, times older than the deadline are not
 *                   considered, and a time found later than it is missed (MissSchedule); more
 *                   than 100 unmet times is warned about (TooManyMissedTimes)
 *   concurrency     Allow; Forbid skips a time while a Job is active (JobAlreadyActive);
 *                   Replace deletes the active Jobs first
 *   suspend         no new Jobs (the active ones are still tracked)
 *   status          active (references to running Jobs), lastScheduleTime, lastSuccessfulTime
 *   history         finished Jobs beyond successfulJobsHistoryLimit (3) / failedJobsHistoryLimit
 *                   (1) are deleted, oldest first
 *
 * The clock is injectable (`now`): the server's --cronjob-time-scale runs it faster for tests.
 * It follows the watch caches of CronJobs and Jobs and writes through the registry.
 */

import { next, parseSchedule, type Schedule } from '../api/cron';
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';
import { controllerOf, controllerRef, timeText, writeOptions } from './controller-utils';
import { jobFinished } from './job/util';
import { follow, WorkQueue } from './workqueue';

export const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
const W = () => writeOptions('cronjob-controller');
/** More unmet start times than this are warned about (the reference's 100). */
const MAX_MISSED = 100;

interface CronJobSpec {
  schedule?: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  suspend?: boolean;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate?: { metadata?: Obj['metadata']; spec?: Record<string, unknown> };
}

interface ObjectRef {
  apiVersion?: string;
  kind?: string;
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
}

interface CronJobStatus {
  active?: ObjectRef[];
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
}

/** The Job's name for a scheduled time: `<cronjob>-<minutes since the epoch>`. */
export const jobNameFor = (cronJob: string, scheduledMs: number): string => `${cronJob}-${Math.floor(scheduledMs / 60_000)}`;

/** RFC 3339 of `ms` in `tz` (Go's time.Format(time.RFC3339) of the time in that location). */
export function rfc3339In(ms: number, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(ms));
  const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
  const off = (p.timeZoneName ?? 'GMT').replace('GMT', '');
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${off === '' || off === '+00:00' ? 'Z' : off}`;
}

/**
 * mostRecentScheduleTime: the latest schedule time in (earliest, now], where earliest is the last
 * schedule time (or creation), moved up to now − startingDeadlineSeconds; and how many there are
 * (counted up to MAX_MISSED + 1: more is "too many"). Past that, the search skips ahead to the
 * span of the last MAX_MISSED times before now, so a long outage costs no more than a short one.
 */
export function mostRecentScheduleTime(
  sched: Schedule,
  tz: string,
  earliest: number,
  now: number,
  startingDeadlineSeconds?: number,
): { time?: number; missed: number } {
  let from = earliest;
  if (startingDeadlineSeconds !== undefined) from = Math.max(from, now - startingDeadlineSeconds * 1000);
  const after = (t: number) => next(sched, new Date(t), tz)?.getTime();
  const first = after(from);
  let missed = 0;
  let last: number | undefined;
  for (let t = first; t !== undefined && t <= now; t = after(t)) {
    last = t;
    if (++missed > MAX_MISSED) break;
  }
  if (missed <= MAX_MISSED || last === undefined || first === undefined) return { time: last, missed };
  // Too many: look again from now minus the span those took (if that finds none, on from `last`).
  const span = last - first;
  let t = after(Math.max(last, now - span));
  let found: number | undefined;
  for (; t !== undefined && t <= now; t = after(t)) found = t;
  if (found === undefined) for (t = after(last); t !== undefined && t <= now; t = after(t)) found = t;
  return { time: found ?? last, missed };
}

export class CronJobController {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  /** Jobs this controller created (uid → real time), until the cache shows them. */
  private readonly created = new Map<string, number>();

  constructor(
    private readonly cronJobs: ResourceStore,
    private readonly cronJobCache: WatchCache,
    private readonly jobs: ResourceStore,
    private readonly jobCache: WatchCache,
    private readonly recorder: EventRecorder,
    private readonly opts: { log?: (msg: string) => void; now?: () => number; timeScale?: number } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (m) => opts.log?.(`cronjob controller: ${m}`),
    );
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  async start(): Promise<void> {
    await Promise.all([this.cronJobCache.start(), this.jobCache.start()]);
    const onJob = (j: Obj) => {
      const ref = controllerOf(j);
      if (ref?.kind === 'CronJob') this.queue.add(`${j.metadata.namespace}/${ref.name}`);
    };
    this.follows.push(
      follow(
        this.cronJobCache,
        (objs) => {
          for (const o of objs) this.queue.add(this.keyOf(o));
        },
        (o, type) => {
          if (type !== 'DELETED') this.queue.add(this.keyOf(o));
        },
      ),
      follow(
        this.jobCache,
        (objs) => {
          for (const j of objs) onJob(j);
        },
        onJob,
      ),
    );
  }

  stop(): void {
    for (const f of this.follows) f.stop();
    this.queue.stop();
  }

  private keyOf(o: Obj): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  /** Sync again when the clock reaches `at` (clock ms). */
  private requeueAt(key: string, at: number): void {
    const scale = this.opts.timeScale ?? 1;
    this.queue.after(key, Math.max(1, Math.ceil((at - this.now()) / scale)) + 100);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    let cj: Obj;
    try {
      cj = decodeStored(await this.cronJobs.get(ns, name));
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
    const spec = (cj.spec ?? {}) as CronJobSpec;
    const st = structuredClone((cj.status ?? {}) as CronJobStatus);
    const owned = this.jobCache
      .list(`${this.jobs.prefix}${ns}/`)
      .map((c) => c.obj)
      .filter((j) => controllerOf(j)?.uid === cj.metadata.uid);
    this.trackActive(cj, st, owned);
    try {
      if (!cj.metadata.deletionTimestamp) await this.schedule(key, cj, spec, st);
    } finally {
      await this.writeStatus(cj, st);
    }
    await this.cleanupHistory(cj, spec, owned);
  }

  /** The active list against the owned Jobs: finished ones leave it (SawCompletedJob), missing ones too (MissingJob). */
  private trackActive(cj: Obj, st: CronJobStatus, owned: Obj[]): void {
    const active = new Map((st.active ?? []).map((r) => [r.uid, r]));
    const byUid = new Map(owned.map((j) => [j.metadata.uid as string, j]));
    for (const j of owned) {
      const uid = j.metadata.uid as string;
      this.created.delete(uid);
      const finished = jobFinished(j);
      if (!active.has(uid) && !finished) {
        void this.recorder.event(
          cj,
          'Warning',
          'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${j.metadata.name}`,
        );
      } else if (active.has(uid) && finished) {
        active.delete(uid);
        const cond = ((j.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).find(
          (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
        );
        void this.recorder.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata.name}, condition: ${cond?.type}`);
      }
      const done = (j.status as { completionTime?: string } | undefined)?.completionTime;
      if (finished && done && (!st.lastSuccessfulTime || Date.parse(done) > Date.parse(st.lastSuccessfulTime)))
        st.lastSuccessfulTime = done;
    }
    for (const [uid, r] of active) {
      if (byUid.has(uid)) continue;
      // Not in the cache: a Job just created may not be there yet; only a recorded uid older than a minute is dropped.
      const made = this.created.get(uid);
      if (made !== undefined && Date.now() - made < 60_000) continue;
      active.delete(uid);
      void this.recorder.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${r.name}`);
    }
    st.active = [...active.values()];
    if (st.active.length === 0) delete st.active;
  }

  private async schedule(key: string, cj: Obj, spec: CronJobSpec, st: CronJobStatus): Promise<void> {
    const tz = spec.timeZone ?? 'UTC';
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
    } catch {
      void this.recorder.event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(tz)}: unknown time zone ${tz}`);
      return;
    }
    if (spec.suspend) return;
    const sched = parseSchedule(spec.schedule ?? '');
    if (sched instanceof Error) {
      void this.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${sched.message}`,
      );
      return;
    }
    const now = this.now();
    const earliest = Date.parse(st.lastScheduleTime ?? cj.metadata.creationTimestamp ?? '') || now;
    const { time, missed } = mostRecentScheduleTime(sched, tz, earliest, now, spec.startingDeadlineSeconds);
    const upcoming = next(sched, new Date(now), tz)?.getTime();
    if (upcoming !== undefined) this.requeueAt(key, upcoming);
    if (missed > MAX_MISSED) {
      void this.recorder.event(
        cj,
        'Warning',
        'TooManyMissedTimes',
        'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
      );
    }
    if (time === undefined) return;
    if (spec.startingDeadlineSeconds !== undefined && time + spec.startingDeadlineSeconds * 1000 < now) {
      void this.recorder.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${new Date(time).toUTCString()}`);
      return;
    }
    const jobName = jobNameFor(cj.metadata.name as string, time);
    if ((st.active ?? []).some((r) => r.name === jobName) || (st.lastScheduleTime && Date.parse(st.lastScheduleTime) === time)) return;
    const policy = spec.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (st.active ?? []).length > 0) {
      void this.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return;
    }
    if (policy === 'Replace') {
      for (const r of st.active ?? []) {
        await this.deleteJob(cj, r.name, r.uid);
      }
      delete st.active;
    }
    const ns = cj.metadata.namespace as string;
    const tm = spec.jobTemplate?.metadata ?? {};
    const body: Obj = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName,
        namespace: ns,
        labels: { ...(tm.labels ?? {}) },
        annotations: { ...(tm.annotations ?? {}), [SCHEDULED_TIMESTAMP]: rfc3339In(time, tz) },
        ownerReferences: [controllerRef(cj, 'batch/v1', 'CronJob')],
      },
      spec: structuredClone(spec.jobTemplate?.spec ?? {}),
    };
    let job: Obj;
    try {
      job = await this.jobs.create(ns, body, W());
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) {
        // Created before (a status write lost): this time is done.
        st.lastScheduleTime = timeText(time);
        return;
      }
      void this.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
    this.created.set(job.metadata.uid as string, Date.now());
    void this.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${jobName}`);
    st.active = [
      ...(st.active ?? []),
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: jobName,
        namespace: ns,
        uid: job.metadata.uid as string,
        resourceVersion: job.metadata.resourceVersion as string,
      },
    ];
    st.lastScheduleTime = timeText(time);
  }

  private async deleteJob(cj: Obj, name: string, uid: string): Promise<void> {
    try {
      await this.jobs.delete(cj.metadata.namespace as string, name, {
        dryRun: false,
        propagationPolicy: 'Background',
        preconditions: { uid },
      });
      void this.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      void this.recorder.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
  }

  private async writeStatus(cj: Obj, st: CronJobStatus): Promise<void> {
    if (JSON.stringify(cj.status ?? {}) === JSON.stringify(st)) return;
    const uid = cj.metadata.uid;
    try {
      await this.cronJobs.updateFrom(cj.metadata.namespace as string, cj.metadata.name as string, 'status', W(), (cur) => {
        if (cur.metadata.uid !== uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...cur, status: st };
      });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }

  /** cleanupFinishedJobs: the oldest finished Jobs beyond each history limit are deleted. */
  private async cleanupHistory(cj: Obj, spec: CronJobSpec, owned: Obj[]): Promise<void> {
    const started = (j: Obj) => Date.parse((j.status as { startTime?: string } | undefined)?.startTime ?? '') || 0;
    const trim = async (type: string, limit: number) => {
      const done = owned
        .filter((j) => !j.metadata.deletionTimestamp && jobFinished(j))
        .filter((j) =>
          ((j.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).some(
            (c) => c.type === type && c.status === 'True',
          ),
        )
        .sort((a, b) => started(a) - started(b) || (a.metadata.name as string).localeCompare(b.metadata.name as string));
      for (const j of done.slice(0, Math.max(0, done.length - limit)))
        await this.deleteJob(cj, j.metadata.name as string, j.metadata.uid as string);
    };
    await trim('Complete', spec.successfulJobsHistoryLimit ?? 3);
    await trim('Failed', spec.failedJobsHistoryLimit ?? 1);
  }
}
