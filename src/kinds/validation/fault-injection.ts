/**
 * testing.svc.io FaultInjection (issue 40): the rules the schema cannot say. Each answer is one
 * 422 Invalid with a cause per field, as the reference's validation:
 *
 *   spec.match          at least one rule; each a FlowSchema PolicyRulesWithSubjects
 *   spec.probability    0 ≤ p ≤ 1
 *   spec.seed           a safe integer (|seed| ≤ 2^53-1)
 *   spec.schedule       startAfterSeconds, activeForSeconds ≥ 0
 *   spec.limit          ≥ 1 when set (absent: no limit)
 *   spec.actions        at least one; each exactly one of error, delay, watch, stale; each kind once
 *     error             code one of 409 429 500 503 504; reason, when set, the code's reason;
 *                       retryAfterSeconds (0..3600) only with 429 or 503; message ≤ 1024 bytes
 *     delay             fixedMs, jitterMs ≥ 0, together 1..60000; phase Before or After
 *     watch             closeAfterEvents, closeAfterSeconds, eventDelayMs (≤ 60000) ≥ 0; at least one
 *                       of them, expire or withholdBookmarks (expire alone: a 410 at once)
 *     stale             revisions ≥ 1
 *     store             at least one of failWrites, slowFsyncMs (1..60000), compact
 */
import type { Obj } from '../../api/meta';
import { duplicate, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, type J, list, obj, str } from './common';
import { validatePolicyRule } from './flowcontrol';

/** The Status reason of each code an error action may answer with. */
export const FAULT_ERROR_REASONS: Readonly<Record<number, string>> = {
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};
const CODES = Object.keys(FAULT_ERROR_REASONS);
const ACTIONS = ['error', 'delay', 'watch', 'stale', 'store'] as const;
/** A delay or an event delay longer than this would outlast the request timeout (60 s). */
const MAX_DELAY_MS = 60_000;
const MAX_MESSAGE = 1024;
const MAX_RETRY_AFTER = 3600;

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function atLeast(errs: Errs, path: string, v: unknown, min: number, max?: number): void {
  const n = num(v);
  if (n === undefined) return;
  if (n < min) errs.push(invalidValue(path, n, `must be greater than or equal to ${min}`));
  else if (max !== undefined && n > max) errs.push(invalidValue(path, n, `must be less than or equal to ${max}`));
}

function validateError(e: J, path: string): Errs {
  const errs: Errs = [];
  const code = num(e.code) ?? 0;
  const reason = FAULT_ERROR_REASONS[code];
  if (reason === undefined) errs.push(notSupported(`${path}.code`, code, CODES));
  else if (str(e.reason) !== '' && e.reason !== reason)
    errs.push(invalidValue(`${path}.reason`, e.reason, `must be "${reason}" for code ${code} (or unset)`));
  if (e.retryAfterSeconds !== undefined) {
    if (code !== 429 && code !== 503)
      errs.push(invalidValue(`${path}.retryAfterSeconds`, e.retryAfterSeconds, 'only codes 429 and 503 retry after'));
    else atLeast(errs, `${path}.retryAfterSeconds`, e.retryAfterSeconds, 0, MAX_RETRY_AFTER);
  }
  if (str(e.message).length > MAX_MESSAGE)
    errs.push(invalidValue(`${path}.message`, '<long>', `must be at most ${MAX_MESSAGE} characters`));
  return errs;
}

function validateDelay(d: J, path: string): Errs {
  const errs: Errs = [];
  atLeast(errs, `${path}.fixedMs`, d.fixedMs, 0, MAX_DELAY_MS);
  atLeast(errs, `${path}.jitterMs`, d.jitterMs, 0, MAX_DELAY_MS);
  const total = (num(d.fixedMs) ?? 0) + (num(d.jitterMs) ?? 0);
  if (errs.length === 0 && (total <= 0 || total > MAX_DELAY_MS))
    errs.push(invalidValue(path, total, `fixedMs + jitterMs must be between 1 and ${MAX_DELAY_MS}`));
  const phase = str(d.phase);
  if (phase !== '' && phase !== 'Before' && phase !== 'After') errs.push(notSupported(`${path}.phase`, phase, ['After', 'Before']));
  return errs;
}

function validateWatch(w: J, path: string): Errs {
  const errs: Errs = [];
  atLeast(errs, `${path}.closeAfterEvents`, w.closeAfterEvents, 0);
  atLeast(errs, `${path}.closeAfterSeconds`, w.closeAfterSeconds, 0);
  atLeast(errs, `${path}.eventDelayMs`, w.eventDelayMs, 0, MAX_DELAY_MS);
  const closes = w.closeAfterEvents !== undefined || w.closeAfterSeconds !== undefined;
  if (!closes && !num(w.eventDelayMs) && w.withholdBookmarks !== true && w.expire !== true)
    errs.push(required(path, 'one of closeAfterEvents, closeAfterSeconds, expire, eventDelayMs or withholdBookmarks must be set'));
  return errs;
}

function validateStore(s: J, path: string): Errs {
  const errs: Errs = [];
  atLeast(errs, `${path}.slowFsyncMs`, s.slowFsyncMs, 1, MAX_DELAY_MS);
  if (s.failWrites !== true && s.compact !== true && s.slowFsyncMs === undefined)
    errs.push(required(path, 'one of failWrites, slowFsyncMs or compact must be set'));
  return errs;
}

function validateSpec(spec: J): Errs {
  const errs: Errs = [];
  const match = list<J>(spec.match);
  if (match.length === 0) errs.push(required('spec.match', 'must contain at least one rule'));
  match.forEach((r, i) => {
    errs.push(...validatePolicyRule(r, `spec.match[${i}]`));
  });
  const p = num(spec.probability);
  if (p !== undefined && !(p >= 0 && p <= 1)) errs.push(invalidValue('spec.probability', p, 'must be between 0 and 1, inclusive'));
  const seed = num(spec.seed);
  if (seed !== undefined && !Number.isSafeInteger(seed))
    errs.push(invalidValue('spec.seed', seed, 'must be an integer of at most 53 bits'));
  const schedule = obj(spec.schedule);
  if (schedule) {
    atLeast(errs, 'spec.schedule.startAfterSeconds', schedule.startAfterSeconds, 0);
    atLeast(errs, 'spec.schedule.activeForSeconds', schedule.activeForSeconds, 0);
  }
  atLeast(errs, 'spec.limit', spec.limit, 1);
  const actions = list<J>(spec.actions);
  if (actions.length === 0) errs.push(required('spec.actions', 'must contain at least one action'));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    const path = `spec.actions[${i}]`;
    const present = ACTIONS.filter((k) => a[k] !== undefined);
    if (present.length !== 1) {
      errs.push(invalidValue(path, present.join(','), `must set exactly one of ${ACTIONS.join(', ')}`));
      return;
    }
    const kind = present[0] as (typeof ACTIONS)[number];
    if (seen.has(kind)) errs.push(duplicate(`${path}.${kind}`, kind));
    seen.add(kind);
    const body = obj(a[kind]) ?? {};
    if (kind === 'error') errs.push(...validateError(body, `${path}.error`));
    else if (kind === 'delay') errs.push(...validateDelay(body, `${path}.delay`));
    else if (kind === 'watch') errs.push(...validateWatch(body, `${path}.watch`));
    else if (kind === 'stale') atLeast(errs, `${path}.stale.revisions`, body.revisions, 1);
    else errs.push(...validateStore(body, `${path}.store`));
  });
  return errs;
}

export const faultInjection: Strategy = {
  validate: (o: Obj) => validateSpec(obj(o.spec) ?? {}),
};
