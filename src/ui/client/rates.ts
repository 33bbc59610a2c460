/**
 * Rates and latency percentiles over a window, from two cumulative reads of the request series
 * (the server keeps only its /metrics counters; the browser takes the differences).
 */
import type { RequestSeries, Requests } from './types';

export interface Row {
  verb: string;
  resource: string;
  perSecond: number;
  errors4xx: number;
  errors5xx: number;
  p50: number | undefined;
  p99: number | undefined;
}

const keyOf = (s: RequestSeries) =>
  `${s.verb} ${s.group ? `${s.resource}.${s.group}` : s.resource}${s.subresource ? `/${s.subresource}` : ''}`;

/**
 * The q-quantile of a histogram's per-bucket counts, interpolated inside its bucket as
 * Prometheus' histogram_quantile does; past the last bound, the last bound.
 */
export function quantile(q: number, bounds: readonly number[], buckets: readonly number[], count: number): number | undefined {
  if (count <= 0) return undefined;
  const rank = q * count;
  let cum = 0;
  for (let i = 0; i < bounds.length; i++) {
    const n = buckets[i] ?? 0;
    if (cum + n >= rank && n > 0) {
      const lo = i === 0 ? 0 : (bounds[i - 1] as number);
      const hi = bounds[i] as number;
      return lo + ((hi - lo) * (rank - cum)) / n;
    }
    cum += n;
  }
  return bounds[bounds.length - 1];
}

/** Per verb and resource: what happened between `then` and `now` (then absent: since start). */
export function windowRows(now: Requests, then: Requests | undefined): { rows: Row[]; seconds: number } {
  const seconds = then ? Math.max((now.now - then.now) / 1000, 0.001) : 0;
  const before = new Map((then?.series ?? []).map((s) => [keyOf(s), s]));
  const rows: Row[] = [];
  for (const s of now.series) {
    const b = before.get(keyOf(s));
    const total = s.total - (b?.total ?? 0);
    if (then && total === 0) continue;
    let e4 = 0;
    let e5 = 0;
    for (const [code, n] of Object.entries(s.codes)) {
      const d = n - (b?.codes[code] ?? 0);
      if (code.startsWith('4')) e4 += d;
      else if (code.startsWith('5')) e5 += d;
    }
    const buckets = s.buckets.map((n, i) => n - (b?.buckets[i] ?? 0));
    const count = s.count - (b?.count ?? 0);
    rows.push({
      verb: s.verb,
      resource: keyOf(s).slice(s.verb.length + 1),
      perSecond: seconds > 0 ? total / seconds : Number.NaN,
      errors4xx: e4,
      errors5xx: e5,
      p50: quantile(0.5, now.bounds, buckets, count),
      p99: quantile(0.99, now.bounds, buckets, count),
    });
  }
  rows.sort((a, b) => (b.perSecond || 0) - (a.perSecond || 0) || (a.resource < b.resource ? -1 : 1));
  return { rows, seconds };
}

/** All requests per second between two reads. */
export function totalRate(now: Requests, then: Requests): number {
  const sum = (r: Requests) => r.series.reduce((a, s) => a + s.total, 0);
  return (sum(now) - sum(then)) / Math.max((now.now - then.now) / 1000, 0.001);
}
