import { expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { faultInjection } from './fault-injection';

const MATCH = [
  {
    subjects: [{ kind: 'User', user: { name: 'alice' } }],
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['*'] }],
  },
];
const errors = (spec: Record<string, unknown>): string[] =>
  (faultInjection.validate?.({ metadata: { name: 'f' }, spec: { match: MATCH, ...spec } } as Obj) ?? []).map(
    (e) => `${e.field}: ${fieldErrorText(e)}`,
  );

test.each([
  [
    'every action at its best',
    { actions: [{ error: { code: 429, retryAfterSeconds: 2 } }, { delay: { fixedMs: 5, phase: 'After' } }] },
    [],
  ],
  ['a watch expiring at once', { actions: [{ watch: { expire: true } }] }, []],
  ['a store compaction', { actions: [{ store: { compact: true } }], probability: 0, seed: -5, limit: 1 }, []],
  ['no actions', { actions: [] }, ['spec.actions: Required value: must contain at least one action']],
  [
    'an unknown code',
    { actions: [{ error: { code: 404 } }] },
    ['spec.actions[0].error.code: Unsupported value: 404: supported values: "409", "429", "500", "503", "504"'],
  ],
  [
    'a reason not the code’s',
    { actions: [{ error: { code: 503, reason: 'Conflict' } }] },
    ['spec.actions[0].error.reason: Invalid value: "Conflict": must be "ServiceUnavailable" for code 503 (or unset)'],
  ],
  [
    'Retry-After on a 500',
    { actions: [{ error: { code: 500, retryAfterSeconds: 1 } }] },
    ['spec.actions[0].error.retryAfterSeconds: Invalid value: 1: only codes 429 and 503 retry after'],
  ],
  [
    'a zero delay',
    { actions: [{ delay: {} }] },
    ['spec.actions[0].delay: Invalid value: 0: fixedMs + jitterMs must be between 1 and 60000'],
  ],
  [
    'two of a kind',
    { actions: [{ stale: { revisions: 1 } }, { stale: { revisions: 2 } }] },
    ['spec.actions[1].stale: Duplicate value: "stale"'],
  ],
  [
    'two members in one action',
    { actions: [{ stale: { revisions: 1 }, delay: { fixedMs: 1 } }] },
    ['spec.actions[0]: Invalid value: "delay,stale": must set exactly one of error, delay, watch, stale, store'],
  ],
  [
    'a probability above 1',
    { probability: 2, actions: [{ store: { failWrites: true } }] },
    ['spec.probability: Invalid value: 2: must be between 0 and 1, inclusive'],
  ],
  [
    'a negative schedule',
    { schedule: { startAfterSeconds: -1 }, actions: [{ store: { failWrites: true } }] },
    ['spec.schedule.startAfterSeconds: Invalid value: -1: must be greater than or equal to 0'],
  ],
] as const)('%s', (_, spec, want) => {
  expect(errors(spec as Record<string, unknown>)).toEqual([...want]);
});

test('match rules are FlowSchema rules', () => {
  const errs = (
    faultInjection.validate?.({
      metadata: { name: 'f' },
      spec: { match: [{ subjects: [] }], actions: [{ stale: { revisions: 1 } }] },
    } as Obj) ?? []
  ).map((e) => e.field);
  expect(errs).toEqual(['spec.match[0].subjects', 'spec.match[0]']);
});
