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
    properties: {
      match: { type: 'array', items: ref('io.svc.api.flowcontrol.v1.PolicyRulesWithSubjects'), listType: 'atomic' },
      probability: { type: 'number', format: 'double', default: 1 },
      seed: int('int64'),
      schedule: ref(`${PKG}.FaultSchedule`),
      limit: int('int64'),
      warn: { type: 'boolean' },
      actions: { type: 'array', items: ref(`${PKG}.FaultAction`), listType: 'atomic' },
    },
    required: ['match', 'actions'],
  },
  [`${PKG}.FaultSchedule`]: {
    type: 'object',
    properties: { startAfterSeconds: int(), activeForSeconds: int() },
  },
  [`${PKG}.FaultAction`]: {
    type: 'object',
    properties: {
      error: ref(`${PKG}.ErrorFault`),
      delay: ref(`${PKG}.DelayFault`),
      watch: ref(`${PKG}.WatchFault`),
      stale: ref(`${PKG}.StaleFault`),
      store: ref(`${PKG}.StoreFault`),
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
    properties: {
      matched: int('int64'),
      injected: int('int64'),
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
