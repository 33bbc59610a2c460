import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { cronJob, generateSelector, indexesFormat, job } from './batch';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const texts = (errs: Parameters<typeof fieldErrorText>[0][]) => errs.map((e) => `${e.field}: ${fieldErrorText(e)}`);

const UID = '0b6e2f3c-1111-2222-3333-444455556666';
const template = (spec: Any = {}) => ({
  metadata: { labels: { app: 'batch' } },
  spec: {
    containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
    restartPolicy: 'Never',
    dnsPolicy: 'ClusterFirst',
    terminationGracePeriodSeconds: 30,
    ...spec,
  },
});
/** A Job as the server has it after defaulting and selector generation. */
function mkJob(spec: Any = {}): Obj {
  const o: Obj = {
    metadata: { name: 'pi', namespace: 'default', uid: UID },
    spec: { parallelism: 1, completions: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, template: template(), ...spec },
  };
  generateSelector(o);
  return o;
}

describe('Job', () => {
  const cases: [string, Any, string[]][] = [
    ['valid', {}, []],
    ['valid indexed', { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1, maxFailedIndexes: 1 }, []],
    ['negative parallelism', { parallelism: -1 }, ['spec.parallelism: Invalid value: -1: must be greater than or equal to 0']],
    [
      'restart Always',
      { template: template({ restartPolicy: 'Always' }) },
      ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ],
    [
      'unknown completion mode',
      { completionMode: 'Sometimes' },
      ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'],
    ],
    [
      'indexed without completions',
      { completionMode: 'Indexed', completions: undefined },
      ['spec.completions: Required value: when completion mode is Indexed'],
    ],
    [
      'per-index limits need Indexed',
      { backoffLimitPerIndex: 1, maxFailedIndexes: 1 },
      [
        'spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
        'spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode',
      ],
    ],
    [
      'maxFailedIndexes without backoffLimitPerIndex',
      { completionMode: 'Indexed', completions: 3, maxFailedIndexes: 1 },
      ['spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified'],
    ],
    [
      'maxFailedIndexes above completions',
      { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1, maxFailedIndexes: 4 },
      ['spec.maxFailedIndexes: Invalid value: 4: must be less than or equal to completions'],
    ],
    [
      'success policy needs Indexed',
      { successPolicy: { rules: [{ succeededCount: 1 }] } },
      ['spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode'],
    ],
    [
      'success policy rules',
      { completionMode: 'Indexed', completions: 3, successPolicy: { rules: [{}, { succeededIndexes: '0-1,1', succeededCount: 4 }] } },
      [
        'spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified',
        'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "0-1,1": error parsing succeededIndexes: non-increasing order, previous: 1, current: 1',
        'spec.successPolicy.rules[1].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of specified completions)',
        'spec.successPolicy.rules[1].succeededCount: Invalid value: 4: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)',
      ],
    ],
    [
      'pod failure policy',
      {
        podFailurePolicy: {
          rules: [
            { action: 'FailJob', onExitCodes: { operator: 'In', values: [3, 0, 3], containerName: 'other' } },
            { action: 'Explode', onPodConditions: [{ type: 'DisruptionTarget', status: 'Maybe' }] },
            { action: 'FailIndex', onExitCodes: { operator: 'NotIn', values: [1] }, onPodConditions: [{ type: 'X', status: 'True' }] },
            { action: 'Ignore' },
          ],
        },
        podReplacementPolicy: 'TerminatingOrFailed',
      },
      [
        'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "other": must be one of the container or initContainer names in the pod template',
        'spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator',
        'spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3',
        'spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered',
        'spec.podFailurePolicy.rules[1].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
        'spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
        'spec.podFailurePolicy.rules[2].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
        'spec.podFailurePolicy.rules[2]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported',
        'spec.podFailurePolicy.rules[3]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required',
        'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
      ],
    ],
    [
      'pod failure policy needs restartPolicy Never',
      {
        podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } }] },
        template: template({ restartPolicy: 'OnFailure' }),
      },
      ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'],
    ],
  ];
  for (const [name, spec, want] of cases) {
    test(name, () => {
      expect(texts(job.validate?.(mkJob(spec)) ?? [])).toEqual(want);
    });
  }

  test('generated selector and labels; a selector of its own is not auto-generated', () => {
    const o = mkJob();
    expect((o.spec as Any).selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': UID } });
    const own = mkJob({ selector: { matchLabels: { app: 'batch' } } });
    expect(texts(job.validate?.(own) ?? [])).toEqual([
      `spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"batch", "batch.kubernetes.io/controller-uid":"${UID}"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: \`selector\` not auto-generated`,
    ]);
    const wrongName = mkJob({ template: { ...template(), metadata: { labels: { app: 'batch', 'job-name': 'other' } } } });
    expect(texts(job.validate?.(wrongName) ?? [])[0]).toStartWith(
      'spec.template.metadata.labels[job-name]: Invalid value: map[string]string{',
    );
  });

  test('manualSelector: the selector must match the template', () => {
    const o = mkJob({ manualSelector: true, selector: { matchLabels: { app: 'other' } } });
    expect(texts(job.validate?.(o) ?? [])).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"batch"}: `selector` does not match template `labels`',
    ]);
  });

  test('an indexed job whose last pod host name is not a DNS label', () => {
    const o = mkJob({ completionMode: 'Indexed', completions: 2 });
    o.metadata.name = 'a'.repeat(62);
    generateSelector(o);
    expect(texts(job.validate?.(o) ?? []).at(-1)).toBe(
      `metadata.name: Invalid value: "${'a'.repeat(62)}": will not able to create pod with invalid DNS label: ${'a'.repeat(62)}-1`,
    );
  });

  test('updates: completions, selector, template immutable; scheduling directives of a suspended job not started', () => {
    const old = mkJob();
    const more = mkJob({ completions: 2 });
    expect(texts(job.validateUpdate?.(more, old) ?? [])).toEqual(['spec.completions: Invalid value: 2: field is immutable']);
    const image = mkJob({
      template: template({ containers: [{ name: 'c', image: 'other', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }] }),
    });
    expect(texts(job.validateUpdate?.(image, old) ?? [])[0]).toStartWith('spec.template: Invalid value: ');
    const suspended = mkJob({ suspend: true });
    const scheduled = mkJob({
      suspend: true,
      template: template({ nodeSelector: { disk: 'ssd' }, tolerations: [{ operator: 'Exists' }] }),
    });
    expect(job.validateUpdate?.(scheduled, suspended)).toEqual([]);
    const started = { ...suspended, status: { startTime: '2026-01-01T00:00:00Z' } };
    expect(texts(job.validateUpdate?.(scheduled, started) ?? [])[0]).toStartWith('spec.template: Invalid value: ');
    // Elastic indexed jobs: completions change with parallelism.
    const indexed = mkJob({ completionMode: 'Indexed', completions: 3, parallelism: 3 });
    expect(job.validateUpdate?.(mkJob({ completionMode: 'Indexed', completions: 4, parallelism: 4 }), indexed)).toEqual([]);
    expect(texts(job.validateUpdate?.(mkJob({ completionMode: 'Indexed', completions: 4, parallelism: 3 }), indexed) ?? [])).toEqual([
      'spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism',
    ]);
  });
});

test('indexesFormat', () => {
  expect(indexesFormat('', 5)).toBe(0);
  expect(indexesFormat('0,2-4', 5)).toBe(4);
  expect(() => indexesFormat('5', 5)).toThrow('too large index: "5"');
  expect(() => indexesFormat('x', 5)).toThrow('cannot convert string to integer for index: "x"');
  expect(() => indexesFormat('1-2-3', 5)).toThrow(
    'the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by \'-\'',
  );
});

const mkCron = (spec: Any = {}, name = 'nightly'): Obj => ({
  metadata: { name, namespace: 'default' },
  spec: {
    schedule: '0 3 * * *',
    concurrencyPolicy: 'Allow',
    suspend: false,
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
    jobTemplate: { spec: { template: template() } },
    ...spec,
  },
});

describe('CronJob', () => {
  const cases: [string, Any, string[]][] = [
    ['valid', {}, []],
    ['valid zone and macro', { schedule: '@daily', timeZone: 'America/New_York' }, []],
    ['no schedule', { schedule: '' }, ['spec.schedule: Required value']],
    [
      'TZ in schedule',
      { schedule: 'CRON_TZ=UTC 0 3 * * *' },
      ['spec.schedule: Invalid value: "CRON_TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'],
    ],
    ['bad schedule', { schedule: '0 3 * *' }, ['spec.schedule: Invalid value: "0 3 * *": expected exactly 5 fields, found 4: [0 3 * *]']],
    ['empty zone', { timeZone: '' }, ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    ['unknown zone', { timeZone: 'Mars/Olympus' }, ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']],
    [
      'zone with bad characters',
      { timeZone: 'Europe/Paris Nord' },
      ['spec.timeZone: Invalid value: "Europe/Paris Nord": unknown time zone Europe/Paris Nord'],
    ],
    [
      'Local',
      { timeZone: 'Local' },
      [
        'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
        'spec.timeZone: Invalid value: "Local": unknown time zone Local',
      ],
    ],
    [
      'concurrency',
      { concurrencyPolicy: 'Never' },
      ['spec.concurrencyPolicy: Unsupported value: "Never": supported values: "Allow", "Forbid", "Replace"'],
    ],
    ['deadline', { startingDeadlineSeconds: -5 }, ['spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0']],
    [
      'history',
      { successfulJobsHistoryLimit: -1 },
      ['spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'job template',
      { jobTemplate: { spec: { manualSelector: true, backoffLimit: -1, template: template({ restartPolicy: 'Always' }) } } },
      [
        'spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0',
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"',
      ],
    ],
  ];
  for (const [name, spec, want] of cases) {
    test(name, () => {
      expect(texts(cronJob.validate?.(mkCron(spec)) ?? [])).toEqual(want);
    });
  }

  test('names longer than 52 characters only on create', () => {
    const long = mkCron({}, 'c'.repeat(53));
    expect(texts(cronJob.validate?.(long) ?? [])).toEqual([
      `metadata.name: Invalid value: "${'c'.repeat(53)}": must be no more than 52 characters`,
    ]);
    expect(cronJob.validate?.(long, long)).toEqual([]);
  });

  test('a TZ already in the schedule may stay on update, but not with timeZone', () => {
    const old = mkCron({ schedule: 'TZ=UTC 0 3 * * *' });
    expect(cronJob.validate?.(mkCron({ schedule: 'TZ=UTC 0 4 * * *' }), old)).toEqual([]);
    expect(texts(cronJob.validate?.(mkCron({ schedule: 'TZ=UTC 0 4 * * *', timeZone: 'UTC' }), old) ?? [])).toEqual([
      'spec.schedule: Invalid value: "TZ=UTC 0 4 * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule',
    ]);
  });
});

test('Job status updates: counters and uncounted pods', () => {
  const old = mkJob();
  const next = mkJob();
  next.status = { active: -1, uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } };
  expect(texts(job.validate?.(next, old) ?? [])).toEqual([
    'status.active: Invalid value: -1: must be greater than or equal to 0',
    'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
    'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
  ]);
});
