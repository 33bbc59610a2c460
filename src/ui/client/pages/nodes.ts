import type { Nodes } from '../api';
import { fill, h, table } from '../dom';
import { observeApi } from '../query';
import { card, type Page, status } from './common';

export const nodesPage: Page = (root) => {
  const line = h('div', { class: 'status' });
  const cards = h('div', { class: 'cards' });
  const body = h('div');
  fill(root, h('h2', {}, 'Simulated nodes'), line, cards, body);
  const off = observeApi<Nodes>(
    'nodes',
    (r) => {
      if (!status(line, r)) return;
      const n = r.data.nodes;
      const ready = n.filter((x) => x.ready === 'True').length;
      fill(
        cards,
        card('Nodes', n.length, 'nodes'),
        card('Simulated', n.filter((x) => x.simulated).length, 'simulated'),
        card('Ready', ready, 'ready'),
        card('Not ready', n.length - ready, 'not-ready'),
        card(
          'Pods on nodes',
          n.reduce((s, x) => s + x.pods, 0),
          'pods',
        ),
      );
      fill(
        body,
        n.length === 0
          ? h('p', { class: 'muted' }, 'No nodes (start the server with --simulated-nodes=N to have some).')
          : table(
              ['Node', 'Ready', 'Simulated', 'Heartbeat', 'Pods'],
              n,
              (x) => [x.name, x.ready, x.simulated ? 'yes' : 'no', x.heartbeat, x.pods],
              { id: 'nodes' },
            ),
      );
    },
    5000,
  );
  return off;
};
