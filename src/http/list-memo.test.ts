import { expect, test } from 'bun:test';
import type { Encoded } from '../codec/media';
import { ListMemo } from './list-memo';

const enc = (s: string): Encoded => ({ body: s, contentType: 'application/json' });

test('an answer is encoded once per key, the least recently used dropped first, long ones not kept', () => {
  const memo = new ListMemo(2, 10);
  let encodes = 0;
  const get = (key: string, body = key) =>
    memo.get(key, () => {
      encodes++;
      return enc(body);
    }).body;
  expect(get('a')).toBe('a');
  expect(get('a')).toBe('a');
  expect(encodes).toBe(1);
  get('b');
  get('a'); // a is now the most recent
  get('c'); // drops b
  expect(memo.size).toBe(2);
  expect(encodes).toBe(3);
  get('a');
  expect(encodes).toBe(3);
  get('b');
  expect(encodes).toBe(4);
  // Longer than the limit: answered, never kept.
  expect(get('long', 'x'.repeat(11))).toBe('x'.repeat(11));
  get('long', 'x'.repeat(11));
  expect(encodes).toBe(6);
  expect(memo.hits).toBe(3);
});
