import { describe, expect, test } from 'bun:test';
import { parseRequestInfo } from '../api/request-info';
import { estimateWork } from './work-estimate';

const req = (method: string, path: string) => {
  const [p, q] = path.split('?');
  return { info: parseRequestInfo(method, p as string, new URLSearchParams(q ?? '')), query: new URLSearchParams(q ?? '') };
};
const counts = (objects: number, watchers: number) => () => ({ objects, watchers });

describe('work estimates', () => {
  test('a GET takes one seat', () => {
    const { info, query } = req('GET', '/api/v1/namespaces/a/pods/p');
    expect(estimateWork(info, query, 49, counts(100_000, 1000))).toEqual({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
  });

  test('a LIST takes a seat per 100 objects stored, at most 10 and at most the level', () => {
    const { info, query } = req('GET', '/api/v1/pods');
    expect(estimateWork(info, query, 49, counts(50, 0)).initialSeats).toBe(1);
    expect(estimateWork(info, query, 49, counts(250, 0)).initialSeats).toBe(3);
    expect(estimateWork(info, query, 49, counts(100_000, 0)).initialSeats).toBe(10);
    expect(estimateWork(info, query, 4, counts(100_000, 0)).initialSeats).toBe(4);
  });

  test('a paged LIST from storage reads twice its page; with a selector, everything plus the page', () => {
    const paged = req('GET', '/api/v1/pods?limit=100');
    expect(estimateWork(paged.info, paged.query, 49, counts(5000, 0)).initialSeats).toBe(2);
    const selected = req('GET', '/api/v1/pods?limit=100&labelSelector=a%3Db');
    expect(estimateWork(selected.info, selected.query, 49, counts(500, 0)).initialSeats).toBe(6);
    // From the cache (resourceVersion=0): what is stored.
    const cached = req('GET', '/api/v1/pods?limit=100&resourceVersion=0');
    expect(estimateWork(cached.info, cached.query, 49, counts(500, 0)).initialSeats).toBe(5);
  });

  test('a watch pays for its initial events only when it gets them', () => {
    const initial = req('GET', '/api/v1/pods?watch=true');
    expect(estimateWork(initial.info, initial.query, 49, counts(700, 0)).initialSeats).toBe(7);
    const resumed = req('GET', '/api/v1/pods?watch=true&resourceVersion=42');
    expect(estimateWork(resumed.info, resumed.query, 49, counts(700, 0)).initialSeats).toBe(1);
    const asked = req('GET', '/api/v1/pods?watch=true&resourceVersion=42&sendInitialEvents=true');
    expect(estimateWork(asked.info, asked.query, 49, counts(700, 0)).initialSeats).toBe(7);
  });

  test('a write with many watchers holds seats for their notifications after it returns', () => {
    const { info, query } = req('PUT', '/api/v1/namespaces/a/pods/p');
    expect(estimateWork(info, query, 49, counts(0, 9))).toEqual({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
    expect(estimateWork(info, query, 49, counts(0, 35))).toEqual({ initialSeats: 1, finalSeats: 4, additionalLatencyMs: 5 });
    // 1,000 watchers: 100 seats of 5 ms reshaped into 10 seats of 50 ms.
    expect(estimateWork(info, query, 49, counts(0, 1000))).toEqual({ initialSeats: 1, finalSeats: 10, additionalLatencyMs: 50 });
  });
});
