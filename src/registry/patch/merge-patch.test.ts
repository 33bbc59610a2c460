import { describe, expect, test } from 'bun:test';
import { PatchError } from './errors';
import { applyMergePatch, checkMergePatchDocument } from './merge-patch';

describe('applyMergePatch', () => {
  // RFC 7386 Appendix A, then Kubernetes-shaped cases.
  const cases: { name: string; doc: unknown; patch: unknown; want: unknown }[] = [
    { name: 'A1 replace member', doc: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'A2 add member', doc: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { name: 'A3 null deletes', doc: { a: 'b' }, patch: { a: null }, want: {} },
    { name: 'A4 null deletes one', doc: { a: 'b', b: 'c' }, patch: { a: null }, want: { b: 'c' } },
    { name: 'A5 array replaces', doc: { a: ['b'] }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'A6 scalar replaced by array', doc: { a: 'c' }, patch: { a: ['b'] }, want: { a: ['b'] } },
    { name: 'A7 nested', doc: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, want: { a: { b: 'd' } } },
    { name: 'A8 array of objects replaced', doc: { a: [{ b: 'c' }] }, patch: { a: [1] }, want: { a: [1] } },
    { name: 'A9 arrays replaced', doc: ['a', 'b'], patch: ['c', 'd'], want: ['c', 'd'] },
    { name: 'A10 object replaced by array', doc: { a: 'b' }, patch: ['c'], want: ['c'] },
    { name: 'A11 null replaces document', doc: { a: 'foo' }, patch: null, want: null },
    { name: 'A12 string replaces document', doc: { a: 'foo' }, patch: 'bar', want: 'bar' },
    { name: 'A13 null member of new object', doc: { e: null }, patch: { a: 1 }, want: { e: null, a: 1 } },
    { name: 'A14 array document becomes object', doc: [1, 2], patch: { a: 'b', c: null }, want: { a: 'b' } },
    { name: 'A15 nested nulls dropped in new objects', doc: {}, patch: { a: { bb: { ccc: null } } }, want: { a: { bb: {} } } },
    { name: 'deleting an absent member', doc: { a: 1 }, patch: { b: null }, want: { a: 1 } },
    { name: 'empty patch', doc: { a: 1 }, patch: {}, want: { a: 1 } },
    { name: 'arrays keep their nulls', doc: {}, patch: { a: [null, { b: null }] }, want: { a: [null, { b: null }] } },
    {
      name: 'labels',
      doc: { metadata: { name: 'x', labels: { a: '1', b: '2' } } },
      patch: { metadata: { labels: { a: null, c: '3' } } },
      want: { metadata: { name: 'x', labels: { b: '2', c: '3' } } },
    },
    {
      name: 'containers list is replaced whole',
      doc: { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b' }] } },
      patch: { spec: { containers: [{ name: 'a', image: 'y' }] } },
      want: { spec: { containers: [{ name: 'a', image: 'y' }] } },
    },
    {
      name: 'clear managedFields (spec)',
      doc: { metadata: { managedFields: [{ manager: 'm' }] } },
      patch: { metadata: { managedFields: [{}] } },
      want: { metadata: { managedFields: [{}] } },
    },
    { name: '__proto__ member', doc: {}, patch: JSON.parse('{"__proto__":{"a":1}}'), want: JSON.parse('{"__proto__":{"a":1}}') },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const before = JSON.stringify([c.doc, c.patch]);
      const got = applyMergePatch(c.doc, c.patch);
      expect(got).toEqual(c.want);
      expect(JSON.stringify([c.doc, c.patch])).toBe(before);
      if (got !== null && typeof got === 'object')
        expect(Object.getPrototypeOf(got)).toBe(Array.isArray(got) ? Array.prototype : Object.prototype);
    });
  }

  test('result shares no structure with the inputs', () => {
    const doc = { keep: { x: 1 }, m: { y: 1 } };
    const patch = { v: { z: [1] }, m: { w: 1 } };
    const got = applyMergePatch(doc, patch) as Record<string, unknown>;
    expect(got['keep']).not.toBe(doc.keep);
    expect(got['m']).not.toBe(doc.m);
    expect(got['v']).not.toBe(patch.v);
  });
});

describe('checkMergePatchDocument', () => {
  const cases: { body: unknown; fv?: 'Ignore' | 'Warn' | 'Strict'; message?: string }[] = [
    { body: {} },
    { body: [1], message: 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}' },
    {
      body: 'x',
      fv: 'Strict',
      message: 'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}',
    },
    { body: null, message: 'Invalid JSON Patch' },
    { body: 5, fv: 'Ignore', message: 'Invalid JSON Patch' },
    { body: [1], fv: 'Ignore' },
  ];
  for (const c of cases) {
    test(`${JSON.stringify(c.body)} ${c.fv ?? 'Warn'}`, () => {
      if (c.message === undefined) {
        expect(() => checkMergePatchDocument(c.body, c.fv)).not.toThrow();
        return;
      }
      try {
        checkMergePatchDocument(c.body, c.fv);
        throw new Error('no error');
      } catch (e) {
        expect(e).toBeInstanceOf(PatchError);
        expect((e as PatchError).code).toBe(400);
        expect((e as PatchError).message).toBe(c.message);
      }
    });
  }
});
