import { expect, test } from 'bun:test';
import { mulberry32 } from './rng';

const draws = (seed: number, n: number) => {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => r.next());
};

test('the same seed gives the same sequence, another seed another', () => {
  expect(draws(42, 50)).toEqual(draws(42, 50));
  expect(draws(42, 50)).not.toEqual(draws(43, 50));
  // Seeds past 32 bits still differ from their low word.
  expect(draws(2 ** 40 + 7, 10)).not.toEqual(draws(7, 10));
});

test('draws are in [0, 1) and spread evenly', () => {
  const xs = draws(1, 20_000);
  for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  const below = xs.filter((x) => x < 0.25).length / xs.length;
  expect(below).toBeGreaterThan(0.23);
  expect(below).toBeLessThan(0.27);
});
