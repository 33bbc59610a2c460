import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { needs, REFERENCE } from '../../../test/helpers/needs';
import { MAX_JSON_PATCH_OPERATIONS, PatchError, UNPROCESSABLE_MESSAGE } from './errors';
import { applyJsonPatch, jsonPatchUnknownFields } from './json-patch';

/** The reference data sits beside the repository (../shared/reference; test/helpers/needs). */
const SUITE = path.join(REFERENCE, 'json-patch-tests');

interface SuiteCase {
  comment?: string;
  doc: unknown;
  patch: unknown;
  expected?: unknown;
  error?: string;
  disabled?: boolean;
}

function thrown(f: () => unknown): PatchError {
  try {
    f();
  } catch (e) {
    if (e instanceof PatchError) return e;
    throw e;
  }
  throw new Error('expected a PatchError');
}

for (const file of ['tests.json', 'spec_tests.json']) {
  needs('reference').describe(`community suite ${file}`, () => {
    const cases: SuiteCase[] = JSON.parse(fs.readFileSync(path.join(SUITE, file), 'utf8'));
    for (const [i, c] of cases.entries()) {
      const name = `#${i} ${c.comment ?? c.error ?? JSON.stringify(c.patch).slice(0, 60)}`;
      // The suite's own rule: disabled tests are not run.
      if (c.disabled) {
        test.skip(name, () => {});
        continue;
      }
      test(name, () => {
        const before = JSON.stringify(c.doc);
        if (c.error !== undefined) {
          expect(() => applyJsonPatch(c.doc, c.patch)).toThrow(PatchError);
        } else if ('expected' in c) {
          expect(applyJsonPatch(c.doc, c.patch)).toEqual(c.expected);
        } else {
          applyJsonPatch(c.doc, c.patch);
        }
        expect(JSON.stringify(c.doc)).toBe(before);
      });
    }
  });
}

describe('applyJsonPatch', () => {
  const ok: { name: string; doc: unknown; ops: unknown; want: unknown }[] = [
    { name: 'null patch is empty', doc: { a: 1 }, ops: null, want: { a: 1 } },
    { name: 'empty patch', doc: { a: 1 }, ops: [], want: { a: 1 } },
    { name: 'add member', doc: { a: 1 }, ops: [{ op: 'add', path: '/b', value: [1] }], want: { a: 1, b: [1] } },
    { name: 'add replaces existing member', doc: { a: 1 }, ops: [{ op: 'add', path: '/a', value: 2 }], want: { a: 2 } },
    { name: 'add null value', doc: {}, ops: [{ op: 'add', path: '/a', value: null }], want: { a: null } },
    { name: 'append with -', doc: { l: [1] }, ops: [{ op: 'add', path: '/l/-', value: 2 }], want: { l: [1, 2] } },
    { name: 'insert at index', doc: { l: [1, 3] }, ops: [{ op: 'add', path: '/l/1', value: 2 }], want: { l: [1, 2, 3] } },
    { name: 'insert at length', doc: { l: [1] }, ops: [{ op: 'add', path: '/l/1', value: 2 }], want: { l: [1, 2] } },
    { name: 'escapes ~0 ~1', doc: {}, ops: [{ op: 'add', path: '/a~1b~0c', value: 1 }], want: { 'a/b~c': 1 } },
    {
      name: 'label with slash',
      doc: { metadata: { labels: { 'app.kubernetes.io/name': 'x' } } },
      ops: [{ op: 'remove', path: '/metadata/labels/app.kubernetes.io~1name' }],
      want: { metadata: { labels: {} } },
    },
    { name: 'remove array item', doc: { l: [1, 2, 3] }, ops: [{ op: 'remove', path: '/l/1' }], want: { l: [1, 3] } },
    { name: 'replace', doc: { a: { b: 1 } }, ops: [{ op: 'replace', path: '/a/b', value: { c: 2 } }], want: { a: { b: { c: 2 } } } },
    { name: 'replace root', doc: { a: 1 }, ops: [{ op: 'replace', path: '', value: { b: 2 } }], want: { b: 2 } },
    {
      name: 'move member',
      doc: { a: { x: 1 }, b: {} },
      ops: [{ op: 'move', from: '/a/x', path: '/b/y' }],
      want: { a: {}, b: { y: 1 } },
    },
    { name: 'move array item', doc: { l: [1, 2, 3] }, ops: [{ op: 'move', from: '/l/0', path: '/l/-' }], want: { l: [2, 3, 1] } },
    { name: 'move to itself', doc: { a: 1 }, ops: [{ op: 'move', from: '/a', path: '/a' }], want: { a: 1 } },
    {
      name: 'copy is deep',
      doc: { a: { x: [1] } },
      ops: [
        { op: 'copy', from: '/a', path: '/b' },
        { op: 'add', path: '/b/x/-', value: 2 },
      ],
      want: { a: { x: [1] }, b: { x: [1, 2] } },
    },
    {
      name: 'test deep equality ignores member order',
      doc: { a: { x: 1, y: [1, { z: true }] } },
      ops: [{ op: 'test', path: '/a', value: { y: [1, { z: true }], x: 1 } }],
      want: { a: { x: 1, y: [1, { z: true }] } },
    },
    { name: 'test number 1 equals 1.0', doc: { a: 1 }, ops: [{ op: 'test', path: '/a', value: 1.0 }], want: { a: 1 } },
    {
      name: 'resourceVersion precondition then change',
      doc: { metadata: { resourceVersion: '5' }, spec: { replicas: 1 } },
      ops: [
        { op: 'test', path: '/metadata/resourceVersion', value: '5' },
        { op: 'replace', path: '/spec/replicas', value: 3 },
      ],
      want: { metadata: { resourceVersion: '5' }, spec: { replicas: 3 } },
    },
    {
      name: 'clear managedFields (spec)',
      doc: { metadata: { managedFields: [{ manager: 'a' }] } },
      ops: [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }],
      want: { metadata: { managedFields: [{}] } },
    },
    { name: 'unknown members of an operation are ignored', doc: {}, ops: [{ op: 'add', path: '/a', value: 1, foo: 2 }], want: { a: 1 } },
    {
      name: '__proto__ is a plain member',
      doc: {},
      ops: [{ op: 'add', path: '/__proto__', value: { x: 1 } }],
      want: JSON.parse('{"__proto__":{"x":1}}'),
    },
  ];
  for (const c of ok) {
    test(c.name, () => {
      const before = JSON.stringify([c.doc, c.ops]);
      const got = applyJsonPatch(c.doc, c.ops);
      expect(got).toEqual(c.want);
      expect(JSON.stringify([c.doc, c.ops])).toBe(before);
    });
  }

  test('result shares no structure with the inputs', () => {
    const value = { deep: [1] };
    const doc = { keep: { x: 1 } };
    const got = applyJsonPatch(doc, [{ op: 'add', path: '/v', value }]) as { keep: object; v: object };
    expect(got.keep).not.toBe(doc.keep);
    expect(got.v).not.toBe(value);
  });

  const fail: { name: string; doc: unknown; ops: unknown; kind: PatchError['kind']; code: number; message?: string; opIndex?: number }[] = [
    { name: 'failed test', doc: { a: 1 }, ops: [{ op: 'test', path: '/a', value: 2 }], kind: 'test-failed', code: 422 },
    { name: 'test of an absent member', doc: {}, ops: [{ op: 'test', path: '/a', value: null }], kind: 'test-failed', code: 422 },
    { name: 'remove absent member', doc: {}, ops: [{ op: 'remove', path: '/a' }], kind: 'path', code: 422 },
    { name: 'remove under absent parent', doc: {}, ops: [{ op: 'remove', path: '/a/b' }], kind: 'path', code: 422 },
    { name: 'replace absent member', doc: {}, ops: [{ op: 'replace', path: '/a', value: 1 }], kind: 'path', code: 422 },
    { name: 'add index beyond length', doc: { l: [] }, ops: [{ op: 'add', path: '/l/1', value: 1 }], kind: 'path', code: 422 },
    { name: 'negative index', doc: { l: [1] }, ops: [{ op: 'remove', path: '/l/-1' }], kind: 'path', code: 422 },
    { name: 'leading zero index', doc: { l: [1, 2] }, ops: [{ op: 'remove', path: '/l/01' }], kind: 'path', code: 422 },
    { name: '- outside add', doc: { l: [1] }, ops: [{ op: 'replace', path: '/l/-', value: 1 }], kind: 'path', code: 422 },
    { name: 'add below a scalar', doc: { a: 1 }, ops: [{ op: 'add', path: '/a/b', value: 1 }], kind: 'path', code: 422 },
    { name: 'bad escape', doc: {}, ops: [{ op: 'add', path: '/a~2', value: 1 }], kind: 'path', code: 422 },
    { name: 'path without slash', doc: {}, ops: [{ op: 'add', path: 'a', value: 1 }], kind: 'path', code: 422 },
    { name: 'move into own child', doc: { a: { b: {} } }, ops: [{ op: 'move', from: '/a', path: '/a/b/c' }], kind: 'path', code: 422 },
    { name: 'remove root', doc: { a: 1 }, ops: [{ op: 'remove', path: '' }], kind: 'path', code: 422 },
    { name: 'unknown op', doc: {}, ops: [{ op: 'spam', path: '/a' }], kind: 'operation', code: 422 },
    { name: 'missing op', doc: {}, ops: [{ path: '/a', value: 1 }], kind: 'operation', code: 422 },
    { name: 'null operation', doc: {}, ops: [null], kind: 'operation', code: 422 },
    { name: 'missing value', doc: {}, ops: [{ op: 'add', path: '/a' }], kind: 'operation', code: 422 },
    { name: 'missing from', doc: { a: 1 }, ops: [{ op: 'copy', path: '/b' }], kind: 'operation', code: 422 },
    { name: 'null path', doc: {}, ops: [{ op: 'add', path: null, value: 1 }], kind: 'operation', code: 422 },
    {
      name: 'second operation fails',
      doc: { a: 1 },
      ops: [
        { op: 'add', path: '/b', value: 1 },
        { op: 'test', path: '/a', value: 0 },
      ],
      kind: 'test-failed',
      code: 422,
      opIndex: 1,
    },
    {
      name: 'object body (default fieldValidation)',
      doc: {},
      ops: { op: 'add' },
      kind: 'invalid',
      code: 400,
      message: 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    },
    {
      name: 'string operation',
      doc: {},
      ops: ['add'],
      kind: 'invalid',
      code: 400,
      message: 'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp',
    },
    {
      name: 'numeric op member',
      doc: {},
      ops: [{ op: 1, path: '/a' }],
      kind: 'invalid',
      code: 400,
      message: 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string',
    },
    {
      name: 'too many operations',
      doc: {},
      ops: Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '', value: {} })),
      kind: 'too-large',
      code: 413,
      message: `Request entity too large: The allowed maximum operations in a JSON patch is 10000, got ${MAX_JSON_PATCH_OPERATIONS + 1}`,
    },
  ];
  for (const c of fail) {
    test(`error: ${c.name}`, () => {
      const e = thrown(() => applyJsonPatch(c.doc, c.ops));
      expect(e.kind).toBe(c.kind);
      expect(e.code).toBe(c.code);
      expect(e.message).toBe(c.message ?? UNPROCESSABLE_MESSAGE);
      if (c.opIndex !== undefined) expect(e.opIndex).toBe(c.opIndex);
    });
  }

  test('Ignore wording of decode errors', () => {
    const e = thrown(() => applyJsonPatch({}, 'x', { fieldValidation: 'Ignore' }));
    expect(e.message).toBe('json: cannot unmarshal string into Go value of type jsonpatch.Patch');
    const e2 = thrown(() => applyJsonPatch({}, [1], { fieldValidation: 'Ignore' }));
    expect(e2.message).toBe('json: cannot unmarshal number into Go value of type jsonpatch.Operation');
    // Without the strict pre-decode an ill-typed op is an unknown op at apply time.
    expect(thrown(() => applyJsonPatch({}, [{ op: 1, path: '/a' }], { fieldValidation: 'Ignore' })).code).toBe(422);
  });

  test('exactly 10000 operations are accepted', () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS }, () => ({ op: 'test', path: '/a', value: 1 }));
    expect(applyJsonPatch({ a: 1 }, ops)).toEqual({ a: 1 });
  });

  test('toStatusError renders the reference bodies', () => {
    const e = thrown(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]));
    expect(e.toStatusError().body()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
    const b = thrown(() => applyJsonPatch({}, {}))
      .toStatusError()
      .body();
    expect(b.code).toBe(400);
    expect(b.reason).toBe('BadRequest');
    expect(b.details).toBeUndefined();
  });

  test('unknown operation members as strict-decoding warnings', () => {
    expect(jsonPatchUnknownFields([{ op: 'add', path: '/a', value: 1, Value: 2 }, null, { op: 'remove', path: '/b', foo: 1 }])).toEqual([
      'json patch unknown field "Value"',
      'json patch unknown field "foo"',
    ]);
  });

  test('many operations on a large object stay fast', () => {
    const doc = { items: Array.from({ length: 2000 }, (_, i) => ({ name: `n${i}`, v: i })) };
    const ops = Array.from({ length: 2000 }, (_, i) => ({ op: 'replace', path: `/items/${i}/v`, value: -i }));
    const t0 = performance.now();
    const got = applyJsonPatch(doc, ops) as typeof doc;
    expect(performance.now() - t0).toBeLessThan(500);
    expect(got.items[1999]!.v).toBe(-1999);
  });
});
