/**
 * What a simulated pod does and when: its annotations and the profile give a Behaviour, and
 * `transition` gives the RunState that follows another and how long after it begins.
 *
 *   sim.svc.io/start-delay   pending → containers started (default: the profile's step delay)
 *   sim.svc.io/run-duration  the containers exit after running this long (Jobs' pods: 1 s)
 *   sim.svc.io/exit-code     their exit code (default 0); without run-duration they exit at once
 *   sim.svc.io/ready         "false": running but never ready
 *   sim.svc.io/stop-delay    a deleted pod is gone this long after (default: its grace period)
 *
 * Profiles: `fast` (no delay: steps are written together, one status write per pod) or
 * `realistic` (1 s to 5 s per step, as kwok's general stages: 1 s delay, 5 s jitter).
 */
import type { Obj } from '../api/meta';
import { parseDuration } from '../config/flags';
import { hexId } from './node-status';
import { backoffFor, containersOf, type RunState } from './pod-status';

export type Profile = 'fast' | 'realistic';

export const START_DELAY = 'sim.svc.io/start-delay';
export const RUN_DURATION = 'sim.svc.io/run-duration';
export const EXIT_CODE = 'sim.svc.io/exit-code';
export const READY = 'sim.svc.io/ready';
export const STOP_DELAY = 'sim.svc.io/stop-delay';

/** How long a Job's pod runs when it says nothing. */
const JOB_RUN_MS = 1000;
const REALISTIC_MIN_MS = 1000;
const REALISTIC_MAX_MS = 5000;

export interface Behaviour {
  startDelayMs: number;
  /** Each init container's run. */
  stepMs: number;
  runMs?: number;
  exitCode: number;
  ready: boolean;
  stopDelayMs?: number;
  restartPolicy: 'Always' | 'OnFailure' | 'Never';
}

function duration(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  try {
    return parseDuration(v);
  } catch {
    return undefined;
  }
}

/** The pod's behaviour; a realistic profile's jitter is drawn from the pod's uid (the same at every look). */
export function behaviourOf(pod: Obj, profile: Profile): Behaviour {
  const a = pod.metadata.annotations ?? {};
  const uid = pod.metadata.uid ?? '';
  const step = (what: string) =>
    profile === 'fast'
      ? 0
      : REALISTIC_MIN_MS + (Number.parseInt(hexId(`${uid}/${what}`, 8), 16) / 2 ** 32) * (REALISTIC_MAX_MS - REALISTIC_MIN_MS);
  const exitText = a[EXIT_CODE];
  const exitCode = exitText !== undefined && /^-?\d+$/.test(exitText) ? Number(exitText) : 0;
  let runMs = duration(a[RUN_DURATION]);
  const isJob = (pod.metadata.ownerReferences ?? []).some((r) => r.kind === 'Job');
  if (runMs === undefined && isJob) runMs = JOB_RUN_MS;
  if (runMs === undefined && exitText !== undefined) runMs = 0;
  const policy = (pod.spec as { restartPolicy?: string } | undefined)?.restartPolicy;
  return {
    startDelayMs: duration(a[START_DELAY]) ?? step('start'),
    stepMs: step('init'),
    runMs,
    exitCode,
    ready: a[READY] !== 'false',
    stopDelayMs: duration(a[STOP_DELAY]),
    restartPolicy: policy === 'Never' || policy === 'OnFailure' ? policy : 'Always',
  };
}

/** The state after `rs` and its delay from when `rs` began (`at`: when it begins); undefined: none. */
export function transition(pod: Obj, rs: RunState, b: Behaviour, at: number): { next: RunState; delayMs: number } | undefined {
  const inits = containersOf(pod, 'initContainers').length;
  switch (rs.stage) {
    case 'new':
      return { next: { stage: 'pending', initDone: 0, restarts: 0, since: at }, delayMs: 0 };
    case 'pending':
      return inits > 0
        ? { next: { stage: 'init', initDone: 0, restarts: 0, since: at }, delayMs: b.startDelayMs }
        : { next: { stage: 'running', initDone: 0, restarts: 0, since: at }, delayMs: b.startDelayMs };
    case 'init':
      return rs.initDone + 1 < inits
        ? { next: { ...rs, initDone: rs.initDone + 1, since: at }, delayMs: b.stepMs }
        : { next: { ...rs, stage: 'running', initDone: inits, since: at }, delayMs: b.stepMs };
    case 'running': {
      if (b.runMs === undefined) return undefined;
      const startedAt = rs.since ?? at;
      const exit = { code: b.exitCode, startedAt, finishedAt: startedAt + b.runMs };
      const done = b.restartPolicy === 'Never' || (b.restartPolicy === 'OnFailure' && b.exitCode === 0);
      if (done) return { next: { ...rs, stage: b.exitCode === 0 ? 'succeeded' : 'failed', lastExit: exit }, delayMs: b.runMs };
      return {
        next: { ...rs, stage: 'backoff', lastExit: exit, backoffSec: backoffFor(rs.restarts), since: exit.finishedAt },
        delayMs: b.runMs,
      };
    }
    case 'backoff':
      return {
        next: { ...rs, stage: 'running', restarts: rs.restarts + 1, since: at },
        delayMs: (rs.backoffSec ?? backoffFor(rs.restarts)) * 1000,
      };
    default:
      return undefined;
  }
}
