import { expect, test } from 'bun:test';
import { warningHeader } from './warning';

test.each([
  ['plain', '299 - "plain"'],
  ['quote " and \\ back', '299 - "quote \\" and \\\\ back"'],
  ['line\r\nbreak', '299 - "line\\r\\nbreak"'],
  ['ü', '299 - "\u00c3\u00bc"'],
  ['日', '299 - "\u00e6\u0097\u00a5"'],
])('warningHeader(%j)', (text, want) => {
  const v = warningHeader(text);
  expect(v).toBe(want);
  // A value Headers takes, whose bytes are the UTF-8 of the quoted text.
  expect(new Headers([['Warning', v]]).get('warning')).toBe(want);
  expect(Buffer.from(v, 'latin1').toString('utf8')).toBe(`299 - ${JSON.stringify(text)}`);
});
