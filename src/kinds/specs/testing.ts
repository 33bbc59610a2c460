/**
 * testing.svc.io/v1alpha1: FaultInjection (issue 40), served only with the feature gate
 * FaultInjection. Its schema is written here (the generated definitions hold the reference's
 * kinds only); its rules are src/kinds/validation/fault-injection.ts; the engine that applies
 * it is src/faults/.
 */

import type { Obj } from '../../api/meta';
import type { Definitions, Schema } from '../../schema/types';
import { AGE, col } from '../columns';
import { faultInjection } from '../validation/fault-injection';
import type { Spec } from './spec';

export const TESTING_GROUP = 'testing.svc.io';
const PKG = 'io.svc.api.testing.v1alpha1';
const META = 'io.svc.apimachinery.pkg.apis.meta.v1';

const ref = (name: string): Schema => ({ type: 'ref', ref: name });
const int = (format: 'int32' | 'int64' = 'int32'): Schema => ({ type: 'integer', format });
const gvk = (kind: string) => [{ group: TESTING_GROUP, version: 'v1alpha1', kind }];

export const TESTING_DEFINITIONS: Definitions = {
  [`${PKG}.FaultInjection`]: {
    type: 'object',
    description: 'FaultInjection makes the API server misbehave on purpose for the requests it matches, reproducibly.',
    properties: {
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: ref(`${META}.ObjectMeta`),
      spec: ref(`${PKG}.FaultInjectionSpec`),
      status: ref(`${PKG}.FaultInjectionStatus`),
    },
    gvk: gvk('FaultInjection'),
  },
  [`${PKG}.FaultInjectionList`]: {
    type: 'object',
    description: 'FaultInjectionList is a list of FaultInjection.',
    properties: {
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: ref(`${META}.ListMeta`),
      items: { type: 'array', items: ref(`${PKG}.FaultInjection`) },
    },
    required: ['items'],
    gvk: gvk('FaultInjectionList'),
  },
  [`${PKG}.FaultInjectionSpec`]: {
    type: 'object',
    description: 'FaultInjectionSpec says which requests get which faults, how often and when.',
    properties: {
      match: {
        type: 'array',
        items: ref('io.svc.api.flowcontrol.v1.PolicyRulesWithSubjects'),
        listType: 'atomic',
        description: 'The requests the fault applies to, as a FlowSchema matches them: any rule matching matches.',
      },
      probability: {
        type: 'number',
        format: 'double',
        default: 1,
        description: 'The chance (0 to 1) that a matched request gets the fault. Default 1.',
      },
      seed: {
        ...int('int64'),
        description: 'Seed of the generator deciding injections: the same seed and requests give the same injections.',
      },
      schedule: { ...ref(`${PKG}.FaultSchedule`), description: 'When the fault is active, relative to its creation.' },
      limit: { ...int('int64'), description: 'At most this many injections (absent: no limit).' },
      warn: { type: 'boolean', description: 'Answers a fault was injected into carry a Warning header naming it.' },
      actions: {
        type: 'array',
        items: ref(`${PKG}.FaultAction`),
        listType: 'atomic',
        description: 'What an injection does; each action applies to the requests it can (see FaultAction).',
      },
    },
    required: ['match', 'actions'],
  },
  [`${PKG}.FaultSchedule`]: {
    type: 'object',
    properties: {
      startAfterSeconds: { ...int(), description: 'Active from this many seconds after creation.' },
      activeForSeconds: { ...int(), description: 'Active for this many seconds (absent or 0: until deleted).' },
    },
  },
  [`${PKG}.FaultAction`]: {
    type: 'object',
    description: 'Exactly one of error, delay, watch, stale or store.',
    properties: {
      error: { ...ref(`${PKG}.ErrorFault`), description: 'Answer with a Status error instead of serving (409 only on writes).' },
      delay: { ...ref(`${PKG}.DelayFault`), description: 'Wait before or after serving.' },
      watch: { ...ref(`${PKG}.WatchFault`), description: 'Misbehave on watches: close, expire, hold events, withhold bookmarks.' },
      stale: {
        ...ref(`${PKG}.StaleFault`),
        description: 'Serve lists and GETs from an older revision, as a lagging cache would (a GET of an object absent then: 404).',
      },
      store: {
        ...ref(`${PKG}.StoreFault`),
        description:
          "Fail writes as the store would; slow the store's fsync while a matched write is in flight (every write committed meanwhile waits); compact the store now.",
      },
    },
  },
  [`${PKG}.StoreFault`]: {
    type: 'object',
    properties: { failWrites: { type: 'boolean' }, slowFsyncMs: int(), compact: { type: 'boolean' } },
  },
  [`${PKG}.ErrorFault`]: {
    type: 'object',
    properties: { code: int(), reason: { type: 'string' }, message: { type: 'string' }, retryAfterSeconds: int() },
    required: ['code'],
  },
  [`${PKG}.DelayFault`]: {
    type: 'object',
    properties: { fixedMs: int(), jitterMs: int(), phase: { type: 'string', default: 'Before', enum: ['Before', 'After'] } },
  },
  [`${PKG}.WatchFault`]: {
    type: 'object',
    properties: {
      closeAfterEvents: int(),
      closeAfterSeconds: int(),
      expire: { type: 'boolean' },
      eventDelayMs: int(),
      withholdBookmarks: { type: 'boolean' },
    },
  },
  [`${PKG}.StaleFault`]: {
    type: 'object',
    properties: { revisions: int('int64') },
    required: ['revisions'],
  },
  [`${PKG}.FaultInjectionStatus`]: {
    type: 'object',
    description: "This server's counts, written back about once a second, and the conditions Accepted and Active.",
    properties: {
      matched: { ...int('int64'), description: 'Requests matched while the fault was active and under its limit.' },
      injected: { ...int('int64'), description: 'Requests the fault was injected into.' },
      conditions: {
        type: 'array',
        items: ref(`${META}.Condition`),
        listType: 'map',
        listMapKeys: ['type'],
        patchStrategy: 'merge',
        patchMergeKey: 'type',
      },
    },
  },
};

const count = (field: 'matched' | 'injected') => (o: Obj) => {
  const v = ((o.status ?? {}) as Record<string, unknown>)[field];
  return typeof v === 'number' ? v : 0;
};

export const TESTING: Spec[] = [
  {
    group: TESTING_GROUP,
    version: 'v1alpha1',
    kind: 'FaultInjection',
    plural: 'faultinjections',
    namespaced: false,
    status: true,
    emptyStatus: true,
    pkg: 'testing',
    gate: 'FaultInjection',
    rules: faultInjection,
    columns: [
      col('Matched', 'integer', 'Requests the rules matched while the fault was active.', count('matched')),
      col('Injected', 'integer', 'Requests the fault was injected into.', count('injected')),
      AGE,
    ],
  },
];
