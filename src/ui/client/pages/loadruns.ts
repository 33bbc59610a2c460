import type { LoadRuns } from '../api';
import { fill, h, table } from '../dom';
import { observeApi } from '../query';
import { card, type Page, status } from './common';

/**
 * The load runs: the running scenario's progress and figures, and past reports. The load
 * harness does not exist yet: the server answers no runs (src/ui/load-runs.ts is the hook).
 */
export const loadRunsPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const body = h('div');
  fill(root, h('h2', {}, 'Load runs'), line, body);
  return observeApi<LoadRuns>(
    'loadruns',
    (r) => {
      if (!status(line, r)) return;
      const { running, past } = r.data;
      if (!running && past.length === 0) {
        fill(body, h('p', { id: 'no-runs' }, 'No load runs: nothing is running and there are no past reports.'));
        return;
      }
      fill(
        body,
        running
          ? h(
              'div',
              { class: 'cards' },
              card('Scenario', running.scenario),
              card('Progress', `${(running.progress * 100).toFixed(0)} %`),
              ...Object.entries(running.figures).map(([k, v]) => card(k, v)),
            )
          : h('p', { class: 'muted' }, 'Nothing running.'),
        h('h3', {}, 'Past runs'),
        table(['Scenario', 'Started', 'Finished', 'Outcome'], past, (p) => [p.scenario, p.startedAt, p.finishedAt, p.outcome]),
      );
    },
    5000,
  );
};
