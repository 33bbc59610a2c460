import type { Watches } from '../api';
import { LiveChart } from '../chart';
import { fill, fmt, h, table } from '../dom';
import { observeApi } from '../query';
import { type Page, status } from './common';

export const watchesPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const chartEl = h('div', { class: 'chart' });
  const body = h('div');
  fill(root, h('h2', {}, 'Watches'), line, chartEl, body);
  const chart = new LiveChart(chartEl, 'Watch cache events per second, watchers', ['events/s', 'watchers']);
  let prev: Watches | undefined;
  const off = observeApi<Watches>('watches', (r) => {
    if (!status(line, r)) return;
    const w = r.data;
    if (prev && w.now <= prev.now) return;
    const before = new Map((prev?.resources ?? []).map((x) => [x.resource, x.events]));
    const seconds = prev ? (w.now - prev.now) / 1000 : 0;
    const rows = w.resources
      .map((x) => ({ ...x, perSecond: prev ? (x.events - (before.get(x.resource) ?? 0)) / seconds : Number.NaN }))
      .sort((a, b) => b.watchers - a.watchers || (b.perSecond || 0) - (a.perSecond || 0) || (a.resource < b.resource ? -1 : 1));
    if (prev) chart.push(w.now, [rows.reduce((s, x) => s + (x.perSecond || 0), 0), rows.reduce((s, x) => s + x.watchers, 0)]);
    prev = w;
    fill(
      body,
      table(
        ['Resource', 'Watchers', 'Events/s', 'Revision', 'Most queued (one watcher)', 'Slowest watcher behind by (revisions)'],
        rows,
        (x) => [x.resource, x.watchers, fmt.num(x.perSecond, 1), x.revision, x.maxQueued, x.maxLagRevisions],
        { id: 'watches' },
      ),
    );
  });
  return () => {
    off();
    chart.destroy();
  };
};
