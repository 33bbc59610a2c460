import type { LoadRuns } from '../api';
import { LiveChart } from '../chart';
import { fill, fmt, h, table } from '../dom';
import { observeApi } from '../query';
import { card, type Page, status } from './common';

/** The live charts of a run: each plots the figures it names that the run has. */
const CHARTS: { title: string; figures: string[] }[] = [
  { title: 'Requests per second', figures: ['requests/s'] },
  { title: 'API latency (ms)', figures: ['API p50 ms', 'API p99 ms'] },
  { title: 'Pods', figures: ['pods created', 'pods ready'] },
];

const summaryText = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? fmt.int(v) : fmt.num(v, 1)}`)
    .join(', ');

/**
 * The load runs: the running scenario's progress, figures and their live charts, and past
 * reports. The load harness publishes its runs to this server (src/load/publish.ts); the
 * server answers them from its ConfigMaps cache (src/ui/load-runs.ts).
 */
export const loadRunsPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const empty = h('div');
  const running = h('div', { id: 'running-run' });
  const charts = h('div', { class: 'charts' });
  const pastHead = h('h3', {}, 'Past runs');
  const past = h('div');
  fill(root, h('h2', {}, 'Load runs'), line, empty, running, charts, pastHead, past);
  /** The charts of the run shown (a new run gets new charts). */
  let shown: { id: string; charts: { chart: LiveChart; figures: string[] }[]; last: string } | undefined;
  const dropCharts = () => {
    for (const c of shown?.charts ?? []) c.chart.destroy();
    fill(charts);
    shown = undefined;
  };
  const off = observeApi<LoadRuns>(
    'loadruns',
    (r) => {
      if (!status(line, r)) return;
      const { running: run, past: runs } = r.data;
      const none = !run && runs.length === 0;
      fill(empty, none ? h('p', { id: 'no-runs' }, 'No load runs: nothing is running and there are no past reports.') : null);
      pastHead.hidden = none;
      if (!run) {
        dropCharts();
        fill(running, none ? null : h('p', { class: 'muted' }, 'Nothing running.'));
      } else {
        fill(
          running,
          h(
            'div',
            { class: 'cards' },
            card('Scenario', run.scenario, 'running-scenario'),
            card('Started', run.startedAt),
            card('Progress', `${(run.progress * 100).toFixed(0)} %`, 'running-progress'),
            ...Object.entries(run.figures).map(([k, v]) => card(k, Number.isInteger(v) ? fmt.int(v) : fmt.num(v, 1))),
          ),
        );
        if (shown?.id !== run.id) {
          dropCharts();
          shown = { id: run.id, charts: [], last: '' };
        }
        // The charts come with the run's first figures (its first update has none yet).
        if (shown.charts.length === 0)
          shown.charts = CHARTS.map((c) => ({ title: c.title, figures: c.figures.filter((f) => f in run.figures) }))
            .filter((c) => c.figures.length > 0)
            .map((c) => {
              const el = h('div', { class: 'chart' });
              charts.append(el);
              return { chart: new LiveChart(el, c.title, c.figures), figures: c.figures };
            });
        // A point per new set of figures (the harness publishes every 2 s at most).
        const key = JSON.stringify(run.figures);
        if (key !== shown.last) {
          shown.last = key;
          const now = Date.now();
          for (const c of shown.charts)
            c.chart.push(
              now,
              c.figures.map((f) => run.figures[f] ?? Number.NaN),
            );
        }
      }
      fill(
        past,
        none
          ? null
          : table(
              ['Scenario', 'Started', 'Finished', 'Outcome', 'Summary'],
              runs,
              (p) => [
                p.scenario,
                p.startedAt,
                p.finishedAt,
                h('span', { class: p.outcome === 'passed' ? 'ok' : 'bad' }, p.outcome),
                summaryText(p.summary),
              ],
              { id: 'past-runs' },
            ),
      );
    },
    2000,
  );
  return () => {
    off();
    dropCharts();
  };
};
