import { describe, expect, test } from 'bun:test';
import { CorruptObjectError, storedListJson, storedTextAt } from './stored';

const enc = new TextEncoder();
const dec = new TextDecoder();
const items = (values: string[], rvs: number[]) => ({
  count: values.length,
  key: (i: number) => `/k/${i}`,
  value: (i: number) => enc.encode(values[i] as string),
  rv: (i: number) => rvs[i] as number,
});

describe('storedListJson', () => {
  test('the same JSON as the texts joined, resourceVersion spliced into each item', () => {
    const values = [
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"x":"é \\"q\\""}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{}}',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"metadata":"{"}}}',
    ];
    const rvs = [7, 12, 123456789];
    const head = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"99"},"items":[';
    const got = dec.decode(storedListJson(head, items(values, rvs), ']}'));
    const want = `${head}${values.map((v, i) => storedTextAt(`/k/${i}`, enc.encode(v), rvs[i] as number)).join(',')}]}`;
    expect(got).toBe(want);
    expect(JSON.parse(got).items.map((o: { metadata: { resourceVersion: string } }) => o.metadata.resourceVersion)).toEqual([
      '7',
      '12',
      '123456789',
    ]);
  });

  test('an empty list, and bytes that are not a stored object', () => {
    expect(dec.decode(storedListJson('{"items":[', items([], []), ']}'))).toBe('{"items":[]}');
    expect(() => storedListJson('[', items(['{"kind":"X"}'], [1]), ']')).toThrow(CorruptObjectError);
    expect(() => storedListJson('[', items(['"metadata":{}'], [1]), ']')).toThrow(CorruptObjectError);
  });
});
