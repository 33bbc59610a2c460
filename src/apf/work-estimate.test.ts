import { describe, expect, test } from 'bun:test';
import { parseRequestInfo } from '../api/request-info';
import { estimateWork } from './work-estimate';

const req = (method: string, path: string) => {
  const [p, q] = path.split('?');
  return { info: parseRequestInfo(method, p as string, new URLSearchParams(q ?? '')), query: new URLSearchParams(q ?? '') };
};
const counts = (objects: number, watchers: number, averageBytes?: number) => () => ({
  objects,
  watchers,
  averageBytes: averageBytes === undefined ? undefined : () => averageBytes,
});
const seats = (path: string, objects: number, nominal = 49) => {
  const { info, query } = req('GET', path);
  return estimateWork(info, query, nominal, counts(objects, 0)).initialSeats;
};
const bySize = (path: string, objects: number, averageBytes: number) => {
  const { info, query } = req('GET', path);
  return estimateWork(info, query, 49, counts(objects, 0, averageBytes), true).initialSeats;
};

describe('work estimates', () => {
  test('a GET takes one seat', () => {
    const { info, query } = req('GET', '/api/v1/namespaces/a/pods/p');
    expect(estimateWork(info, query, 49, counts(100_000, 1000))).toEqual({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
  });

  test('a LIST from the cache takes a seat per 100 objects stored, at most 10 and at most the level', () => {
    expect(seats('/api/v1/pods', 50)).toBe(1);
    expect(seats('/api/v1/pods', 250)).toBe(3);
    expect(seats('/api/v1/pods', 100_000)).toBe(10);
    expect(seats('/api/v1/pods', 100_000, 4)).toBe(4);
    // Served from the cache: a consistent read, resourceVersion=0 with or without a limit, NotOlderThan.
    expect(seats('/api/v1/namespaces/a/pods?limit=100', 500)).toBe(5);
    expect(seats('/api/v1/pods?limit=100&resourceVersion=0', 500)).toBe(5);
    expect(seats('/api/v1/pods?limit=100&resourceVersion=7&resourceVersionMatch=NotOlderThan', 500)).toBe(5);
  });

  test('a LIST from storage reads twice its page; with a selector, everything plus the page; by name, one object', () => {
    expect(seats('/api/v1/pods?limit=100&resourceVersion=42', 5000)).toBe(2);
    expect(seats('/api/v1/pods?limit=100&continue=abc', 5000)).toBe(2);
    expect(seats('/api/v1/pods?resourceVersion=42&resourceVersionMatch=Exact', 250)).toBe(5);
    expect(seats('/api/v1/pods?limit=100&resourceVersion=42&labelSelector=a%3Db', 500)).toBe(6);
    expect(seats('/api/v1/pods?fieldSelector=metadata.name%3Dp', 100_000)).toBe(1);
    expect(seats('/api/v1/pods?fieldSelector=metadata.name!%3Dp', 1000)).toBe(10);
  });

  test('a watch pays for its initial events only when it asks for them', () => {
    expect(seats('/api/v1/pods?watch=true', 700)).toBe(1);
    expect(seats('/api/v1/pods?watch=true&resourceVersion=42', 700)).toBe(1);
    expect(seats('/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 700)).toBe(7);
  });

  test('by size: a seat per 100 kB held at once, at most 1 MB from the cache', () => {
    expect(bySize('/api/v1/pods', 100, 600)).toBe(1);
    expect(bySize('/api/v1/pods', 1000, 600)).toBe(6);
    expect(bySize('/api/v1/pods', 100_000, 600)).toBe(10);
    expect(bySize('/api/v1/pods?limit=500&resourceVersion=42', 100_000, 1000)).toBe(5);
    // From storage with a selector: at least half of what is stored.
    expect(bySize('/api/v1/pods?limit=10&resourceVersion=42&labelSelector=a', 400, 1000)).toBe(2);
  });

  test('a write with many watchers holds seats for their notifications after it returns', () => {
    const { info, query } = req('PUT', '/api/v1/namespaces/a/pods/p');
    expect(estimateWork(info, query, 49, counts(0, 9))).toEqual({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
    expect(estimateWork(info, query, 49, counts(0, 35))).toEqual({ initialSeats: 1, finalSeats: 4, additionalLatencyMs: 5 });
    // 1,000 watchers: 100 seats of 5 ms reshaped into 10 seats of 50 ms.
    expect(estimateWork(info, query, 49, counts(0, 1000))).toEqual({ initialSeats: 1, finalSeats: 10, additionalLatencyMs: 50 });
  });
});
