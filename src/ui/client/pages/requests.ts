import type { Requests } from '../api';
import { LiveChart } from '../chart';
import { fill, fmt, h, table } from '../dom';
import { observeApi } from '../query';
import { totalRate, windowRows } from '../rates';
import { type Page, status } from './common';

/** Reads kept for the window (the longest window, 5 minutes, at one read per poll). */
const KEEP_MS = 5 * 60_000;

export const requestsPage: Page = (root, params) => {
  const windowMs = Number(params.get('window') ?? 60) * 1000;
  const line = h('div', { class: 'status' });
  const chartEl = h('div', { class: 'chart' });
  const body = h('div');
  const choose = h(
    'div',
    { class: 'controls' },
    'Window: ',
    ...[60, 300].map((s) =>
      h('a', { href: `#/requests?window=${s}`, class: windowMs === s * 1000 ? 'on' : '' }, s === 60 ? '1 min' : '5 min'),
    ),
  );
  fill(root, h('h2', {}, 'Requests'), line, choose, chartEl, body);
  const chart = new LiveChart(chartEl, 'Requests per second', ['all'], 300);
  const reads: Requests[] = [];
  const off = observeApi<Requests>('requests', (r) => {
    if (!status(line, r)) return;
    const now = r.data;
    const last = reads[reads.length - 1];
    if (last && now.now <= last.now) return;
    if (last) chart.push(now.now, [totalRate(now, last)]);
    reads.push(now);
    while (reads.length > 1 && now.now - (reads[0] as Requests).now > KEEP_MS) reads.shift();
    const then = reads.find((x) => now.now - x.now <= windowMs && x !== now) ?? (reads.length > 1 ? reads[0] : undefined);
    const { rows, seconds } = windowRows(now, then);
    fill(
      body,
      h(
        'p',
        { class: 'muted' },
        then ? `Over the last ${Math.round(seconds)} s` : 'Since the server started (rates appear with the next read)',
      ),
      table(
        ['Verb', 'Resource', 'Requests/s', 'p50', 'p99', '4xx', '5xx'],
        rows,
        (x) => [x.verb, x.resource, fmt.num(x.perSecond, 2), fmt.ms(x.p50), fmt.ms(x.p99), x.errors4xx, x.errors5xx],
        { id: 'requests' },
      ),
    );
  });
  return () => {
    off();
    chart.destroy();
  };
};
