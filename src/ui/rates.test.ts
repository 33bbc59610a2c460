/**
 * The dashboard's arithmetic over two reads of the request series (src/ui/client/rates.ts):
 * quantiles interpolated inside their bucket, rates and errors over the window.
 */
import { expect, test } from 'bun:test';
import { quantile, totalRate, windowRows } from './client/rates';
import type { RequestSeries, Requests } from './client/types';

const BOUNDS = [0.005, 0.025, 0.05, 0.1];

test.each([
  // [q, per-bucket counts, count, expected]
  [0.5, [10, 0, 0, 0], 10, 0.0025], // half of the first bucket (0, 5 ms]
  [0.5, [0, 10, 0, 0], 10, 0.015], // half way through (5, 25] ms
  [0.99, [90, 10, 0, 0], 100, 0.005 + 0.02 * 0.9], // the 99th of 100: 9 of the 10 in (5, 25]
  [0.5, [0, 0, 0, 0], 0, undefined], // nothing observed
  [0.99, [0, 0, 0, 0], 5, 0.1], // all past the last bound: the last bound
])('quantile(%p, %p)', (q, buckets, count, expected) => {
  const v = quantile(q, BOUNDS, buckets, count);
  if (expected === undefined) expect(v).toBeUndefined();
  else expect(v).toBeCloseTo(expected, 9);
});

const series = (over: Partial<RequestSeries>): RequestSeries => ({
  verb: 'GET',
  group: '',
  resource: 'configmaps',
  subresource: '',
  codes: {},
  total: 0,
  count: 0,
  sum: 0,
  buckets: [0, 0, 0, 0],
  ...over,
});
const read = (now: number, s: RequestSeries[]): Requests => ({ now, bounds: BOUNDS, series: s });

test('windowRows: rates, errors and percentiles of what happened between two reads', () => {
  const then = read(1_000, [
    series({ codes: { '200': 100, '404': 5 }, total: 105, count: 105, buckets: [105, 0, 0, 0] }),
    series({ verb: 'POST', codes: { '201': 10 }, total: 10, count: 10, buckets: [0, 10, 0, 0] }),
  ]);
  const now = read(11_000, [
    series({ codes: { '200': 300, '404': 7, '500': 1 }, total: 308, count: 308, buckets: [105, 203, 0, 0] }),
    series({ verb: 'POST', codes: { '201': 10 }, total: 10, count: 10, buckets: [0, 10, 0, 0] }),
    series({ verb: 'DELETE', group: 'apps', resource: 'deployments', codes: { '200': 20 }, total: 20, count: 20, buckets: [0, 0, 20, 0] }),
  ]);
  const { rows, seconds } = windowRows(now, then);
  expect(seconds).toBe(10);
  // POST had nothing in the window: not listed. Busiest first.
  expect(rows.map((r) => `${r.verb} ${r.resource}`)).toEqual(['GET configmaps', 'DELETE deployments.apps']);
  const get = rows[0];
  expect(get?.perSecond).toBeCloseTo(20.3, 9);
  expect(get?.errors4xx).toBe(2);
  expect(get?.errors5xx).toBe(1);
  // All 203 requests of the window were in (5, 25] ms: the ones of before do not count.
  expect(get?.p50).toBeCloseTo(0.005 + 0.02 * 0.5, 9);
  expect(rows[1]?.perSecond).toBe(2);
  expect(totalRate(now, then)).toBeCloseTo((338 - 115) / 10, 9);
});

test('windowRows without an earlier read: totals since start, no rate', () => {
  const { rows, seconds } = windowRows(
    read(5_000, [series({ codes: { '200': 4 }, total: 4, count: 4, buckets: [4, 0, 0, 0] })]),
    undefined,
  );
  expect(seconds).toBe(0);
  expect(rows[0]?.perSecond).toBeNaN();
  expect(rows[0]?.p99).toBeCloseTo(0.005 * 0.99, 9);
});

test('the client type-checks under its own tsconfig (DOM types; the root tsconfig leaves it out)', () => {
  const root = `${import.meta.dir}/../..`;
  const r = Bun.spawnSync([`${root}/node_modules/.bin/tsc`, '--noEmit', '-p', `${import.meta.dir}/client`], { cwd: root, stdout: 'pipe' });
  expect(r.stdout.toString()).toBe('');
  expect(r.exitCode).toBe(0);
}, 30_000);
