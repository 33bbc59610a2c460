import type { Apf } from '../api';
import { LiveChart } from '../chart';
import { fill, h, table } from '../dom';
import { observeApi } from '../query';
import { type Page, status } from './common';

export const apfPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const chartEl = h('div', { class: 'chart' });
  const body = h('div');
  fill(root, h('h2', {}, 'Priority and fairness'), line, chartEl, body);
  const chart = new LiveChart(chartEl, 'Seats in use, requests waiting (all levels)', ['seats in use', 'waiting']);
  let lastAt = 0;
  const off = observeApi<Apf>('apf', (r) => {
    if (!status(line, r)) return;
    const a = r.data;
    if (!a.enabled) {
      fill(body, h('p', { id: 'apf-off' }, 'Priority and fairness is off (--enable-priority-and-fairness=false).'));
      return;
    }
    if (a.now && a.now > lastAt) {
      lastAt = a.now;
      chart.push(a.now, [a.levels.reduce((s, l) => s + l.seatsInUse, 0), a.levels.reduce((s, l) => s + l.waiting, 0)]);
    }
    fill(
      body,
      h('p', { class: 'muted' }, `${a.flowSchemas} flow schemas, ${a.levels.length} priority levels`),
      table(
        ['Level', 'Seats (limit)', 'Seats in use', 'Executing', 'Waiting', 'Queues (active)', 'Dispatched', 'Rejected', 'Timed out'],
        a.levels,
        (l) => [
          l.name,
          l.exempt ? 'exempt' : String(l.seatLimit),
          l.seatsInUse,
          l.executing,
          l.waiting,
          l.exempt ? '–' : `${l.queues} (${l.activeQueues})`,
          l.dispatched,
          l.rejected,
          l.timedOut,
        ],
        { id: 'levels' },
      ),
    );
  });
  return () => {
    off();
    chart.destroy();
  };
};
