/**
 * batch/v1: Job and CronJob (the reference's pkg/apis/batch/validation and the Job strategy's
 * selector generation). A CronJob's jobTemplate is validated as a Job spec under
 * spec.jobTemplate.spec; its schedule with the cron grammar of src/api/cron.ts.
 */
import { CronError, isTimeZone, parseSchedule } from '../../api/cron';
import type { Obj } from '../../api/meta';
import { selectorMatcher } from '../../api/selectors';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  invalidOmitted,
  invalidValue,
  notSupported,
  qualifiedName,
  required,
  tooMany,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  each,
  GoValue,
  immutable,
  isUpdate,
  type J,
  list,
  map,
  nonNegative,
  obj,
  selectorValue,
  semanticEqual,
  str,
  stringMapValue,
  validateLabelSelector,
} from './common';
import { validatePodTemplateSpec } from './core-pod';

export const CONTROLLER_UID = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME = 'batch.kubernetes.io/job-name';
export const LEGACY_CONTROLLER_UID = 'controller-uid';
export const LEGACY_JOB_NAME = 'job-name';

const MAX_PARALLELISM_INDEXED = 100_000;
const MAX_FAILED_INDEXES = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000;
const MAX_POD_FAILURE_RULES = 20;
const MAX_EXIT_CODES = 255;
const MAX_POD_CONDITIONS = 20;
const MAX_MANAGED_BY = 63;
const MAX_SUCCEEDED_INDEXES = 64 * 1024;
const MAX_SUCCESS_RULES = 20;
const ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed'];
const CONCURRENCY = ['Allow', 'Forbid', 'Replace'];

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
/** Go's %q of a []string, as fmt prints sets.List in "valid values: %q". */
const goQuotedList = (v: string[]): string => `[${v.map((s) => JSON.stringify(s)).join(' ')}]`;

// ---- index intervals (succeededIndexes) -------------------------------------------------------

function parseInterval(text: string, completions: number): [number, number] {
  const parts = text.split('-');
  if (parts.length > 2)
    throw new Error(
      `the fragment ${JSON.stringify(text)} violates the requirement that an index interval can have at most two parts separated by '-'`,
    );
  const toInt = (s: string) => {
    if (!/^[+-]?[0-9]+$/.test(s)) throw new Error(`cannot convert string to integer for index: ${JSON.stringify(s)}`);
    const n = Number(s);
    if (n >= completions) throw new Error(`too large index: ${JSON.stringify(s)}`);
    return n;
  };
  const x = toInt(parts[0] as string);
  if (parts.length === 1) return [x, x];
  const y = toInt(parts[1] as string);
  if (x >= y) throw new Error(`non-increasing order, previous: ${x}, current: ${y}`);
  return [x, y];
}

/** validateIndexesFormat: the number of indexes, or the parse error. */
export function indexesFormat(text: string, completions: number): number {
  if (text === '') return 0;
  let last: number | undefined;
  let total = 0;
  for (const part of text.split(',')) {
    const [x, y] = parseInterval(part, completions);
    if (last !== undefined && last >= x) throw new Error(`non-increasing order, previous: ${last}, current: ${x}`);
    total += y - x + 1;
    last = y;
  }
  return total;
}

// ---- JobSpec ----------------------------------------------------------------------------------

function podFailurePolicy(spec: J, path: string, tspec: J): Errs {
  const errs: Errs = [];
  const rules = list<J>(obj(spec.podFailurePolicy)?.rules);
  if (rules.length > MAX_POD_FAILURE_RULES) errs.push(tooMany(`${path}.rules`, rules.length, MAX_POD_FAILURE_RULES));
  const containers = new Set([...list<J>(tspec.containers), ...list<J>(tspec.initContainers)].map((c) => str(c.name)));
  rules.forEach((rule, i) => {
    const rp = `${path}.rules[${i}]`;
    const action = str(rule.action);
    if (action === '') errs.push(required(`${rp}.action`, `valid values: ${goQuotedList(ACTIONS)}`));
    else if (action === 'FailIndex') {
      if (spec.backoffLimitPerIndex === undefined)
        errs.push(invalidValue(`${rp}.action`, action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!ACTIONS.includes(action)) errs.push(notSupported(`${rp}.action`, action, ACTIONS));
    const onExit = obj(rule.onExitCodes);
    const onConds = list<J>(rule.onPodConditions);
    if (onExit) {
      const ep = `${rp}.onExitCodes`;
      const op = str(onExit.operator);
      if (op === '') errs.push(required(`${ep}.operator`, `valid values: ${goQuotedList(EXIT_OPERATORS)}`));
      else if (!EXIT_OPERATORS.includes(op)) errs.push(notSupported(`${ep}.operator`, op, EXIT_OPERATORS));
      if (typeof onExit.containerName === 'string' && !containers.has(onExit.containerName))
        errs.push(
          invalidValue(
            `${ep}.containerName`,
            onExit.containerName,
            'must be one of the container or initContainer names in the pod template',
          ),
        );
      const values = list<number>(onExit.values);
      if (values.length === 0)
        errs.push(invalidValue(`${ep}.values`, new GoValue('[]int32(nil)', values), 'at least one value is required'));
      else if (values.length > MAX_EXIT_CODES) errs.push(tooMany(`${ep}.values`, values.length, MAX_EXIT_CODES));
      const seen = new Set<number>();
      let ordered = true;
      values.forEach((v, j) => {
        if (op === 'In' && v === 0) errs.push(invalidValue(`${ep}.values[${j}]`, v, 'must not be 0 for the In operator'));
        if (seen.has(v)) errs.push(duplicate(`${ep}.values[${j}]`, v));
        else seen.add(v);
        if (j > 0 && (values[j - 1] as number) > v) ordered = false;
      });
      if (!ordered) errs.push(invalidValue(`${ep}.values`, new GoValue(`[]int32{${values.join(', ')}}`, values), 'must be ordered'));
    }
    if (onConds.length > 0) {
      const cp = `${rp}.onPodConditions`;
      if (onConds.length > MAX_POD_CONDITIONS) errs.push(tooMany(cp, onConds.length, MAX_POD_CONDITIONS));
      onConds.forEach((c, j) => {
        const type = str(c.type);
        errs.push(...each(`${cp}[${j}].type`, type, qualifiedName(type)));
        const status = str(c.status);
        if (status === '') errs.push(required(`${cp}[${j}].status`, `valid values: ${goQuotedList(CONDITION_STATUSES)}`));
        else if (!CONDITION_STATUSES.includes(status)) errs.push(notSupported(`${cp}[${j}].status`, status, CONDITION_STATUSES));
      });
    }
    if (onExit && onConds.length > 0) errs.push(invalidOmitted(rp, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (!onExit && onConds.length === 0) errs.push(invalidOmitted(rp, 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return errs;
}

function successPolicy(spec: J, path: string): Errs {
  const errs: Errs = [];
  const rules = list<J>(obj(spec.successPolicy)?.rules);
  if (rules.length === 0) errs.push(required(`${path}.rules`, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > MAX_SUCCESS_RULES) errs.push(tooMany(`${path}.rules`, rules.length, MAX_SUCCESS_RULES));
  const completions = num(spec.completions) ?? 0;
  rules.forEach((rule, i) => {
    const rp = `${path}.rules[${i}]`;
    const count = num(rule.succeededCount);
    const indexes = typeof rule.succeededIndexes === 'string' ? rule.succeededIndexes : undefined;
    if (count === undefined && indexes === undefined)
      errs.push(required(rp, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (indexes !== undefined) {
      const ip = `${rp}.succeededIndexes`;
      if (indexes.length > MAX_SUCCEEDED_INDEXES)
        errs.push({ type: 'FieldValueTooLong', field: ip, badValue: indexes, detail: `must have at most ${MAX_SUCCEEDED_INDEXES} bytes` });
      try {
        total = indexesFormat(indexes, completions);
      } catch (e) {
        errs.push(invalidValue(ip, indexes, `error parsing succeededIndexes: ${(e as Error).message}`));
      }
    }
    if (count !== undefined) {
      const cp = `${rp}.succeededCount`;
      errs.push(...nonNegative(count, cp));
      if (count > completions)
        errs.push(invalidValue(cp, count, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (indexes !== undefined && count > total)
        errs.push(
          invalidValue(cp, count, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`),
        );
    }
  });
  return errs;
}

/** IsDomainPrefixedPath. */
function domainPrefixedPath(v: string, path: string): Errs {
  if (v === '') return [required(path)];
  const slash = v.indexOf('/');
  const host = v.slice(0, slash);
  const rest = v.slice(slash + 1);
  if (slash <= 0 || rest === '') return [invalidValue(path, v, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = each(path, host, dns1123Subdomain(host));
  if (!/^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(rest))
    errs.push(invalidValue(path, rest, "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  return errs;
}

/** validateJobSpec at `path` (spec, or spec.jobTemplate.spec). */
function validateJobSpecBody(spec: J, path: string): Errs {
  const errs: Errs = [];
  for (const k of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
  ]) {
    const v = num(spec[k]);
    if (v !== undefined) errs.push(...nonNegative(v, `${path}.${k}`));
  }
  const parallelism = num(spec.parallelism);
  const completions = num(spec.completions);
  const perIndex = num(spec.backoffLimitPerIndex);
  const maxFailed = num(spec.maxFailedIndexes);
  if (maxFailed !== undefined) {
    errs.push(...nonNegative(maxFailed, `${path}.maxFailedIndexes`));
    if (perIndex === undefined) errs.push(required(`${path}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  }
  if (typeof spec.managedBy === 'string') {
    errs.push(...domainPrefixedPath(spec.managedBy, `${path}.managedBy`));
    if (spec.managedBy.length > MAX_MANAGED_BY)
      errs.push({
        type: 'FieldValueTooLong',
        field: `${path}.managedBy`,
        badValue: spec.managedBy,
        detail: `may not be more than ${MAX_MANAGED_BY} bytes`,
      });
  }
  const mode = typeof spec.completionMode === 'string' ? spec.completionMode : undefined;
  if (mode !== undefined) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (completions === undefined) errs.push(required(`${path}.completions`, 'when completion mode is Indexed'));
      if (parallelism !== undefined && parallelism > MAX_PARALLELISM_INDEXED)
        errs.push(
          invalidValue(
            `${path}.parallelism`,
            parallelism,
            `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`,
          ),
        );
      if (completions !== undefined && maxFailed !== undefined && maxFailed > completions)
        errs.push(invalidValue(`${path}.maxFailedIndexes`, maxFailed, 'must be less than or equal to completions'));
      if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES)
        errs.push(invalidValue(`${path}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES}`));
      if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && perIndex !== undefined) {
        const suffix = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
        if (maxFailed === undefined)
          errs.push(required(`${path}.maxFailedIndexes`, `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
        if (parallelism !== undefined && parallelism > PARALLELISM_HIGH_COMPLETIONS)
          errs.push(
            invalidValue(`${path}.parallelism`, parallelism, `must be less than or equal to ${PARALLELISM_HIGH_COMPLETIONS} ${suffix}`),
          );
        if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS)
          errs.push(
            invalidValue(
              `${path}.maxFailedIndexes`,
              maxFailed,
              `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} ${suffix}`,
            ),
          );
      }
    }
  }
  if (mode === undefined || mode === 'NonIndexed') {
    if (perIndex !== undefined) errs.push(invalidValue(`${path}.backoffLimitPerIndex`, perIndex, 'requires indexed completion mode'));
    if (maxFailed !== undefined) errs.push(invalidValue(`${path}.maxFailedIndexes`, maxFailed, 'requires indexed completion mode'));
  }
  const template = obj(spec.template) ?? {};
  const tspec = obj(template.spec) ?? {};
  const pfp = obj(spec.podFailurePolicy);
  if (pfp) errs.push(...podFailurePolicy(spec, `${path}.podFailurePolicy`, tspec));
  const sp = obj(spec.successPolicy);
  if (sp) {
    if (mode !== 'Indexed') errs.push(invalidValue(`${path}.successPolicy`, sp, 'requires indexed completion mode'));
    else errs.push(...successPolicy(spec, `${path}.successPolicy`));
  }
  if (typeof spec.podReplacementPolicy === 'string') {
    const prp = spec.podReplacementPolicy;
    if (pfp) {
      if (prp !== 'Failed') errs.push(notSupported(`${path}.podReplacementPolicy`, prp, ['Failed']));
    } else if (!REPLACEMENT_POLICIES.includes(prp)) errs.push(notSupported(`${path}.podReplacementPolicy`, prp, REPLACEMENT_POLICIES));
  }
  errs.push(...validatePodTemplateSpec(template, `${path}.template`));
  const restart = str(tspec.restartPolicy);
  const rpPath = `${path}.template.spec.restartPolicy`;
  if (restart === 'Always' || restart === '') errs.push(required(rpPath, 'valid values: "OnFailure", "Never"'));
  else if (restart !== 'OnFailure' && restart !== 'Never') errs.push(notSupported(rpPath, restart, ['OnFailure', 'Never']));
  else if (pfp && restart !== 'Never')
    errs.push(invalidValue(rpPath, restart, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

/** ValidateJobSpec: the body plus a selector matching the template's labels. */
function validateJobSpec(spec: J): Errs {
  const errs = validateJobSpecBody(spec, 'spec');
  const selector = obj(spec.selector);
  if (!selector) errs.push(required('spec.selector'));
  else errs.push(...validateLabelSelector(selector, 'spec.selector'));
  const matcher = selectorMatcher(spec.selector);
  const labels = obj(obj(spec.template)?.metadata)?.labels;
  if (matcher && !matcher.matches(map<string>(labels)))
    errs.push(invalidValue('spec.template.metadata.labels', stringMapValue(labels), '`selector` does not match template `labels`'));
  return errs;
}

/** ValidateHasLabel. */
function hasLabel(labels: Record<string, string>, key: string, value: string): Errs {
  const path = `spec.template.metadata.labels[${key}]`;
  if (!(key in labels)) return [required(path, value)];
  return labels[key] === value ? [] : [invalidValue(path, stringMapValue(labels), `must be '${value}'`)];
}

/** validateGeneratedSelector: generated labels present and the selector theirs. */
function validateGeneratedSelector(o: Obj, prefixed: boolean): Errs {
  const spec = obj(o.spec) ?? {};
  if (spec.manualSelector === true || !obj(spec.selector)) return [];
  const errs: Errs = [];
  const uid = o.metadata.uid ?? '';
  const name = o.metadata.name ?? '';
  if (uid === '') errs.push(required('metadata.uid'));
  const labels = map<string>(obj(obj(spec.template)?.metadata)?.labels);
  errs.push(...hasLabel(labels, LEGACY_CONTROLLER_UID, uid), ...hasLabel(labels, LEGACY_JOB_NAME, name));
  const expected: Record<string, string> = { [LEGACY_CONTROLLER_UID]: uid, [LEGACY_JOB_NAME]: name };
  if (prefixed) {
    errs.push(...hasLabel(labels, CONTROLLER_UID, uid), ...hasLabel(labels, JOB_NAME, name));
    expected[CONTROLLER_UID] = uid;
    expected[JOB_NAME] = name;
  }
  const matcher = selectorMatcher(spec.selector);
  if (matcher && !matcher.matches(expected))
    errs.push(invalidValue('spec.selector', selectorValue(obj(spec.selector) ?? {}), '`selector` not auto-generated'));
  return errs;
}

/** The Job strategy's generateSelector: labels from the name and uid, a selector on the uid. */
export function generateSelector(o: Obj): void {
  const spec = (obj(o.spec) ?? {}) as J;
  o.spec = spec;
  if (spec.manualSelector === true) return;
  const template = (obj(spec.template) ?? {}) as J;
  spec.template = template;
  const meta = (obj(template.metadata) ?? {}) as J;
  template.metadata = meta;
  const labels = { ...map<string>(meta.labels) };
  const name = o.metadata.name ?? '';
  const uid = o.metadata.uid ?? '';
  for (const k of [LEGACY_JOB_NAME, JOB_NAME]) if (!(k in labels)) labels[k] = name;
  for (const k of [LEGACY_CONTROLLER_UID, CONTROLLER_UID]) if (!(k in labels)) labels[k] = uid;
  meta.labels = labels;
  const selector = (obj(spec.selector) ?? {}) as J;
  const matchLabels = { ...map<string>(selector.matchLabels) };
  if (!(CONTROLLER_UID in matchLabels)) matchLabels[CONTROLLER_UID] = uid;
  selector.matchLabels = matchLabels;
  spec.selector = selector;
}

export function validateJob(o: Obj, old?: Obj): Errs {
  // Updates require the prefixed labels only of jobs that had them (created before 1.27 they did not).
  const oldLabels = map<string>(obj(obj(obj(old?.spec)?.template)?.metadata)?.labels);
  const prefixed = !old || (JOB_NAME in oldLabels && CONTROLLER_UID in oldLabels);
  const errs = validateGeneratedSelector(o, prefixed);
  const spec = obj(o.spec) ?? {};
  errs.push(...validateJobSpec(spec));
  const completions = num(spec.completions);
  if (spec.completionMode === 'Indexed' && completions !== undefined && completions > 0) {
    const host = `${o.metadata.name ?? ''}-${completions - 1}`;
    if (dns1123Label(host).length > 0)
      errs.push(invalidValue('metadata.name', o.metadata.name ?? '', `will not able to create pod with invalid DNS label: ${host}`));
  }
  return errs;
}

/** The template fields a suspended job that never started may change (AllowMutableSchedulingDirectives). */
function schedulingDirectivesReset(template: J, oldTemplate: J): J {
  const t = structuredClone(oldTemplate);
  const spec = (obj(t.spec) ?? {}) as J;
  t.spec = spec;
  const next = obj(template.spec) ?? {};
  const meta = (obj(t.metadata) ?? {}) as J;
  t.metadata = meta;
  const nextMeta = obj(template.metadata) ?? {};
  const affinity = obj(spec.affinity);
  const nextAffinity = obj(next.affinity);
  if (!nextAffinity && affinity) {
    delete affinity.nodeAffinity;
    if (Object.keys(affinity).length === 0) delete spec.affinity;
  } else if (nextAffinity && !affinity) spec.affinity = { nodeAffinity: nextAffinity.nodeAffinity };
  else if (nextAffinity && affinity) affinity.nodeAffinity = nextAffinity.nodeAffinity;
  for (const k of ['nodeSelector', 'tolerations', 'schedulingGates']) spec[k] = next[k];
  for (const k of ['annotations', 'labels']) meta[k] = nextMeta[k];
  return t;
}

/** ValidateJobSpecUpdate (ElasticIndexedJob on, as in 1.33). */
export function validateJobUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs: Errs = [];
  const completions = num(spec.completions);
  if (spec.completionMode !== 'Indexed') errs.push(...immutable(spec.completions, prev.completions, 'spec.completions'));
  else if (!semanticEqual(spec.completions, prev.completions) && completions !== undefined && completions !== num(spec.parallelism))
    errs.push(invalidValue('spec.completions', completions, 'can only be modified in tandem with spec.parallelism'));
  errs.push(...immutable(spec.selector, prev.selector, 'spec.selector', selectorValue(obj(spec.selector) ?? {})));
  const template = obj(spec.template) ?? {};
  let oldTemplate = obj(prev.template) ?? {};
  const status = obj(old.status) ?? {};
  if (prev.suspend === true && status.startTime === undefined) oldTemplate = schedulingDirectivesReset(template, oldTemplate);
  errs.push(...immutable(template, oldTemplate, 'spec.template'));
  for (const k of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy'])
    errs.push(...immutable(spec[k], prev[k], `spec.${k}`));
  return errs;
}

/** validateJobStatus's unconditional part: counters and uncountedTerminatedPods. */
function validateJobStatus(status: J): Errs {
  const errs: Errs = [];
  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating']) {
    const v = num(status[k]);
    if (v !== undefined) errs.push(...nonNegative(v, `status.${k}`));
  }
  const uncounted = obj(status.uncountedTerminatedPods);
  if (uncounted) {
    const seen = new Set<string>();
    for (const k of ['succeeded', 'failed']) {
      list<string>(uncounted[k]).forEach((uid, i) => {
        const p = `status.uncountedTerminatedPods.${k}[${i}]`;
        if (uid === '') errs.push(invalidValue(p, uid, 'must not be empty'));
        else if (seen.has(uid)) errs.push(duplicate(p, uid));
        else seen.add(uid);
      });
    }
  }
  return errs;
}

export const job: Strategy = {
  prepareForCreate: generateSelector,
  validate: (o, old) => [...validateJob(o, old), ...(old ? validateJobStatus(obj(o.status) ?? {}) : [])],
  validateUpdate: validateJobUpdate,
};

// ---- CronJob ----------------------------------------------------------------------------------

const VALID_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** validateTimeZone. */
function validateTimeZone(tz: string, path: string): Errs {
  if (tz === '') return [invalidValue(path, tz, 'timeZone must be nil or non-empty string')];
  for (const part of tz.split('/'))
    if (part === '.' || part === '..' || part.startsWith('-') || !VALID_ZONE_PART.test(part))
      return [invalidValue(path, tz, `unknown time zone ${tz}`)];
  const errs: Errs = [];
  if (tz.toLowerCase() === 'local')
    errs.push(invalidValue(path, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  if (!isTimeZone(tz)) errs.push(invalidValue(path, tz, `unknown time zone ${tz}`));
  return errs;
}

function validateCronJobSpec(spec: J, oldSpec: J | undefined): Errs {
  const errs: Errs = [];
  const schedule = str(spec.schedule);
  const tz = typeof spec.timeZone === 'string' ? spec.timeZone : undefined;
  if (schedule === '') errs.push(required('spec.schedule'));
  else {
    const parsed = parseSchedule(schedule);
    if (parsed instanceof CronError) errs.push(invalidValue('spec.schedule', schedule, parsed.message));
    const allowTZ = oldSpec !== undefined && str(oldSpec.schedule).includes('TZ');
    if (allowTZ && schedule.includes('TZ') && tz !== undefined)
      errs.push(invalidValue('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    else if (!allowTZ && schedule.includes('TZ'))
      errs.push(invalidValue('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  const sds = num(spec.startingDeadlineSeconds);
  if (sds !== undefined) errs.push(...nonNegative(sds, 'spec.startingDeadlineSeconds'));
  if (tz !== undefined && (oldSpec === undefined || oldSpec.timeZone !== tz)) errs.push(...validateTimeZone(tz, 'spec.timeZone'));
  const cp = str(spec.concurrencyPolicy);
  if (cp === '') errs.push(required('spec.concurrencyPolicy'));
  else if (!CONCURRENCY.includes(cp)) errs.push(notSupported('spec.concurrencyPolicy', cp, CONCURRENCY));
  // ValidateJobTemplateSpec: the selector is always generated.
  const jspec = obj(obj(spec.jobTemplate)?.spec) ?? {};
  errs.push(...validateJobSpecBody(jspec, 'spec.jobTemplate.spec'));
  const sel = obj(jspec.selector);
  if (sel) errs.push(invalidValue('spec.jobTemplate.spec.selector', selectorValue(sel), '`selector` will be auto-generated'));
  if (jspec.manualSelector === true) errs.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  for (const k of ['successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) {
    const v = num(spec[k]);
    if (v !== undefined) errs.push(...nonNegative(v, `spec.${k}`));
  }
  return errs;
}

export const cronJob: Strategy = {
  validate: (o, old) => {
    const errs = validateCronJobSpec(obj(o.spec) ?? {}, old ? (obj(old.spec) ?? {}) : undefined);
    // The controller names its jobs <name>-<11 characters>; only creates are held to it.
    const name = o.metadata.name ?? '';
    if (!old && !isUpdate(o) && name.length > 52) errs.push(invalidValue('metadata.name', name, 'must be no more than 52 characters'));
    return errs;
  },
};
