import { expect, test } from 'bun:test';
import { findDuplicateKeys, JsonDepthError, MAX_JSON_DEPTH } from './json-dups';

test.each([
  ['{"a":1,"b":2}', []],
  ['{"a":1,"a":2}', ['a']],
  ['{"metadata":{"name":"x","name":"y"}}', ['metadata.name']],
  ['{"spec":{"containers":[{"name":"a","image":"b","name":"c"}]}}', ['spec.containers[0].name']],
  ['{"a":{"b":[1,{"c":1,"c":2}],"b":0}}', ['a.b[1].c', 'a.b']],
  ['{"k\\"x":1,"k\\"x":2, "s":"{\\"a\\":1,\\"a\\":2}"}', ['k"x']],
  ['{ "a" : [ ] , "b" : { } , "a" : null }', ['a']],
  // More than 8 members: names past the eighth are checked in a set.
  ['{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m3":0,"m10":1,"m9":2}', ['m3', 'm9']],
  ['{"x":[{"a":1},{"a":1,"b":2,"a":3}],"x":{"l":[[0,{"q":1,"q":2}]]}}', ['x[1].a', 'x', 'x.l[0][1].q']],
])('%s → %p', (text, want) => {
  expect(findDuplicateKeys(text)).toEqual(want);
});

test('nesting: up to MAX_JSON_DEPTH is scanned, one level more is refused (as Go encoding/json)', () => {
  const objects = (d: number) => `${'{"a":'.repeat(d - 1)}{}${'}'.repeat(d - 1)}`;
  const arrays = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
  expect(findDuplicateKeys(objects(MAX_JSON_DEPTH))).toEqual([]);
  expect(findDuplicateKeys(arrays(MAX_JSON_DEPTH))).toEqual([]);
  expect(() => findDuplicateKeys(objects(MAX_JSON_DEPTH + 1))).toThrow(JsonDepthError);
  expect(() => findDuplicateKeys(arrays(MAX_JSON_DEPTH + 1))).toThrow(JsonDepthError);
  // Far deeper than the JS stack takes: refused, not a stack overflow.
  expect(() => findDuplicateKeys(objects(200_000))).toThrow('exceeded max depth');
  // Siblings do not add up: depth is nesting, not count.
  expect(findDuplicateKeys(`[${Array.from({ length: 20_000 }, () => '[]').join(',')}]`)).toEqual([]);
});
