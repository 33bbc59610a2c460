/**
 * The dashboard in the browser: a hash router over the pages; the page shown observes its
 * queries, the others observe nothing.
 */
import { fill, h } from './dom';
import { apfPage } from './pages/apf';
import type { Page } from './pages/common';
import { loadRunsPage } from './pages/loadruns';
import { nodesPage } from './pages/nodes';
import { objectsPage } from './pages/objects';
import { overviewPage } from './pages/overview';
import { requestsPage } from './pages/requests';
import { watchesPage } from './pages/watches';

const PAGES: { path: string; title: string; page: Page }[] = [
  { path: 'overview', title: 'Overview', page: overviewPage },
  { path: 'requests', title: 'Requests', page: requestsPage },
  { path: 'apf', title: 'Priority & fairness', page: apfPage },
  { path: 'watches', title: 'Watches', page: watchesPage },
  { path: 'objects', title: 'Objects', page: objectsPage },
  { path: 'nodes', title: 'Nodes', page: nodesPage },
  { path: 'loadruns', title: 'Load runs', page: loadRunsPage },
];

const nav = document.getElementById('nav') as HTMLElement;
const root = document.getElementById('page') as HTMLElement;
let cleanup: (() => void) | undefined;

function route(): void {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?');
  const entry = PAGES.find((p) => p.path === path) ?? (PAGES[0] as (typeof PAGES)[number]);
  fill(nav, ...PAGES.map((p) => h('a', { href: `#/${p.path}`, class: p === entry ? 'on' : '', id: `nav-${p.path}` }, p.title)));
  cleanup?.();
  cleanup = undefined;
  root.replaceChildren();
  document.title = `${entry.title} · svc-apiserver`;
  cleanup = entry.page(root, new URLSearchParams(query));
}

window.addEventListener('hashchange', route);
route();
