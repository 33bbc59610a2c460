import { expect, test } from 'bun:test';
import { findDuplicateKeys } from './json-dups';

test.each([
  ['{"a":1,"b":2}', []],
  ['{"a":1,"a":2}', ['a']],
  ['{"metadata":{"name":"x","name":"y"}}', ['metadata.name']],
  ['{"spec":{"containers":[{"name":"a","image":"b","name":"c"}]}}', ['spec.containers[0].name']],
  ['{"a":{"b":[1,{"c":1,"c":2}],"b":0}}', ['a.b[1].c', 'a.b']],
  ['{"k\\"x":1,"k\\"x":2, "s":"{\\"a\\":1,\\"a\\":2}"}', ['k"x']],
  ['{ "a" : [ ] , "b" : { } , "a" : null }', ['a']],
])('%s → %p', (text, want) => {
  expect(findDuplicateKeys(text)).toEqual(want);
});
