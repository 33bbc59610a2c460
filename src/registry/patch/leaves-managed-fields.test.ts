/**
 * leavesManagedFields: a body it passes gives, applied to an object whose managedFields were
 * swapped for an empty list, the same object as applied to the object itself once the list is
 * put back (what the registry's patch does with it); bodies that could reach the list are not
 * passed.
 */
import { describe, expect, test } from 'bun:test';
import { cloneJson, type JsonObject } from '../../api/meta';
import { SchemaSet } from '../../schema/engine';
import generated from '../../schema/generated/definitions.json';
import { overlays } from '../../schema/overlays';
import type { Definitions } from '../../schema/types';
import { applyPatch, JSON_PATCH, leavesManagedFields, MERGE_PATCH, type PatchType, STRATEGIC_MERGE_PATCH } from './index';

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const opts = { schemas, defName: 'io.svc.api.core.v1.Pod' };

const LIST = [
  {
    manager: 'kubectl',
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-11-29T10:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } } },
    },
  },
  {
    manager: 'kubelet',
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-11-29T10:00:01Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:status': { 'f:phase': {} } },
    subresource: 'status',
  },
];
const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', labels: { app: 'a' }, managedFields: cloneJson(LIST) as JsonObject[], finalizers: ['x/y'] },
  spec: { containers: [{ name: 'c', image: 'i:1' }] },
  status: { phase: 'Pending' },
});

/** The patch applied with the list lent, as the registry applies it. */
function lent(type: PatchType, body: unknown): unknown {
  const doc = pod();
  const meta = doc.metadata as JsonObject;
  const live = meta.managedFields;
  meta.managedFields = [];
  let out: unknown;
  try {
    out = applyPatch(type, doc, body, opts);
  } finally {
    meta.managedFields = live;
  }
  ((out as JsonObject).metadata as JsonObject).managedFields = live;
  expect(doc).toEqual(pod());
  return out;
}

const passed: [string, PatchType, unknown][] = [
  ['a merge patch of a label', MERGE_PATCH, { metadata: { labels: { rev: 'r1' } } }],
  ['a merge patch removing a label and setting status', MERGE_PATCH, { metadata: { labels: { app: null } }, status: { phase: 'Running' } }],
  ['a merge patch without metadata', MERGE_PATCH, { spec: { activeDeadlineSeconds: 5 } }],
  ['a merge patch of metadata: {}', MERGE_PATCH, { metadata: {} }],
  ['a strategic merge patch of a label', STRATEGIC_MERGE_PATCH, { metadata: { labels: { rev: 'r1' } } }],
  ['a strategic merge patch of a container by its key', STRATEGIC_MERGE_PATCH, { spec: { containers: [{ name: 'c', image: 'i:2' }] } }],
  ['a strategic merge patch of status conditions', STRATEGIC_MERGE_PATCH, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
  [
    'a strategic merge patch with a directive below metadata',
    STRATEGIC_MERGE_PATCH,
    { spec: { containers: [{ name: 'c', $patch: 'delete' }] } },
  ],
];

const refused: [string, PatchType, unknown][] = [
  ['a merge patch of managedFields', MERGE_PATCH, { metadata: { managedFields: [{}] } }],
  ['a merge patch of managedFields: []', MERGE_PATCH, { metadata: { managedFields: [] } }],
  ['a merge patch deleting metadata', MERGE_PATCH, { metadata: null }],
  ['a merge patch that is not an object', MERGE_PATCH, ['x']],
  ['a strategic merge patch replacing the object', STRATEGIC_MERGE_PATCH, { $patch: 'replace', metadata: { name: 'p' } }],
  ['a strategic merge patch retaining keys at the top', STRATEGIC_MERGE_PATCH, { $retainKeys: ['spec'], spec: {} }],
  ['a strategic merge patch replacing metadata', STRATEGIC_MERGE_PATCH, { metadata: { $patch: 'replace', name: 'p' } }],
  ['a strategic merge patch ordering finalizers', STRATEGIC_MERGE_PATCH, { metadata: { '$setElementOrder/finalizers': ['x/y'] } }],
  ['a strategic merge patch of managedFields', STRATEGIC_MERGE_PATCH, { metadata: { managedFields: null } }],
  ['a JSON patch of a label', JSON_PATCH, [{ op: 'add', path: '/metadata/labels/rev', value: 'r1' }]],
];

describe('leavesManagedFields', () => {
  for (const [name, type, body] of passed) {
    test(`passes ${name}; lent, the result is the same`, () => {
      expect(leavesManagedFields(type, body)).toBe(true);
      const want = applyPatch(type, pod(), body, opts) as JsonObject;
      expect(lent(type, body)).toEqual(want);
      expect((want.metadata as JsonObject).managedFields).toEqual(LIST);
    });
  }
  for (const [name, type, body] of refused) {
    test(`refuses ${name}`, () => {
      expect(leavesManagedFields(type, body)).toBe(false);
    });
  }
  test('what it refuses, lent, would have changed the result: the check is needed', () => {
    // A reset marker in a merge patch: lent, the list put back would undo the reset.
    const body = { metadata: { managedFields: [{}] } };
    expect(lent(MERGE_PATCH, body)).not.toEqual(applyPatch(MERGE_PATCH, pod(), body, opts));
    // A strategic merge patch replacing metadata drops the list.
    const replace = { metadata: { $patch: 'replace', name: 'p' } };
    expect(((applyPatch(STRATEGIC_MERGE_PATCH, pod(), replace, opts) as JsonObject).metadata as JsonObject).managedFields).toBeUndefined();
  });
});
