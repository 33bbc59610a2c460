/**
 * CacheState's order against a plain model (the live keys, sorted on each query) over random
 * sets, deletes, deletes and sets again, clears and ranges with limits: enough operations that
 * the sorted base is rebuilt many times, with ranges between the rebuilds.
 */
import { expect, test } from 'bun:test';
import { rng } from '../../test/helpers/rng';
import type { CachedObject } from './events';
import { CacheState } from './state';

const obj = (key: string, v: number) => ({ key, v }) as unknown as CachedObject;

for (const seed of [1, 2, 3]) {
  test(`ranges match the model through sets, deletes, re-sets and rebuilds (seed ${seed})`, () => {
    const r = rng(seed);
    const s = new CacheState();
    const model = new Map<string, CachedObject>();
    // Keys sharing long prefixes, as the cache's do, in several "namespaces".
    const keyOf = (n: number) => `/registry/pods/ns-${n % 7}/pod-${Math.floor(n / 7)}`;
    const check = () => {
      const keys = [...model.keys()].sort();
      for (let q = 0; q < 3; q++) {
        const a = keyOf(Math.floor(r() * 12000));
        const b = r() < 0.3 ? '\uffff' : keyOf(Math.floor(r() * 12000));
        const [from, to] = a < b ? [a, b] : [b, a];
        const limit = r() < 0.5 ? 0 : 1 + Math.floor(r() * 600);
        let want = keys.filter((k) => k >= from && k < to).map((k) => model.get(k));
        if (limit > 0) want = want.slice(0, limit);
        expect(s.range(from, to, limit)).toEqual(want as CachedObject[]);
      }
      expect(s.size).toBe(model.size);
    };
    for (let op = 0; op < 60_000; op++) {
      const x = r();
      const key = keyOf(Math.floor(r() * 12000));
      if (x < 0.6) {
        const o = obj(key, op);
        expect(s.set(key, o)).toBe(!model.has(key));
        model.set(key, o);
      } else if (x < 0.95) {
        expect(s.delete(key)).toBe(model.delete(key));
      } else if (x < 0.99995) {
        expect(s.get(key)).toBe(model.get(key));
      } else {
        s.clear();
        model.clear();
      }
      if (op % 1500 === 0) check();
    }
    check();
    const all: string[] = [];
    s.forEach((k) => {
      all.push(k);
    });
    expect(all.sort()).toEqual([...model.keys()].sort());
  });
}

test('a range reads the keys added since the last rebuild in order, and skips deleted ones', () => {
  const s = new CacheState();
  for (const k of ['/a/3', '/a/1', '/a/2', '/b/1']) s.set(k, obj(k, 0));
  s.delete('/a/2');
  expect(s.range('/a/', '/a0').map((c) => (c as unknown as { key: string }).key)).toEqual(['/a/1', '/a/3']);
  s.set('/a/2', obj('/a/2', 1));
  expect(s.range('/a/', '/a0', 2).map((c) => (c as unknown as { key: string }).key)).toEqual(['/a/1', '/a/2']);
  expect(s.range('/', '\uffff').length).toBe(4);
});

test('a key read, set, deleted and set again reads as it is at each step (the last lookup is remembered)', () => {
  const s = new CacheState();
  const k = '/registry/pods/ns/a';
  expect(s.get(k)).toBeUndefined();
  expect(s.set(k, obj(k, 1))).toBe(true);
  expect(s.get(k)).toEqual(obj(k, 1));
  expect(s.set(`${'/registry/pods/ns/'}a`, obj(k, 2))).toBe(false);
  expect(s.get(k)).toEqual(obj(k, 2));
  expect(s.delete(k)).toBe(true);
  expect(s.get(k)).toBeUndefined();
  expect(s.delete(k)).toBe(false);
  expect(s.set(k, obj(k, 3))).toBe(true);
  expect(s.get(k)).toEqual(obj(k, 3));
  s.clear();
  expect(s.get(k)).toBeUndefined();
  expect(s.set(k, obj(k, 4))).toBe(true);
  expect(s.size).toBe(1);
});
