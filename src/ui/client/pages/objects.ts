/**
 * Browse any resource: pick a kind and a namespace, see its objects, click one for its YAML.
 * The list is fetched once and again whenever the server's watch says something changed (an
 * EventSource on /ui/api/objects/watch invalidates the query): live without polling.
 */
import { getJson, type Kind, type Objects } from '../api';
import { fill, h, table } from '../dom';
import { observe, queryClient } from '../query';
import { type Page, status } from './common';

/**
 * Changes arriving within COALESCE_MS are one refetch, and refetches are at least MIN_GAP_MS
 * apart: under a burst of writes (a load run creating thousands of objects a second) the page
 * reads the list once a second, not once per change.
 */
const COALESCE_MS = 150;
const MIN_GAP_MS = 1000;

const link = (p: Record<string, string>) => `#/objects?${new URLSearchParams(p)}`;

export const objectsPage: Page = (root, params) => {
  const sel = {
    group: params.get('group') ?? '',
    version: params.get('version') ?? 'v1',
    resource: params.get('resource') ?? 'configmaps',
    namespace: params.get('namespace') ?? '',
  };
  const name = params.get('name') ?? '';
  const line = h('div', { class: 'status' });
  const kindSelect = h('select', { id: 'kind' }) as HTMLSelectElement;
  const nsInput = h('input', { id: 'namespace', placeholder: 'all namespaces', value: sel.namespace }) as HTMLInputElement;
  const go = () => {
    const [group = '', version = '', resource = ''] = kindSelect.value.split('|');
    location.hash = link({ group, version, resource, namespace: nsInput.value.trim() });
  };
  kindSelect.addEventListener('change', go);
  nsInput.addEventListener('change', go);
  const live = h('span', { class: 'muted', id: 'live' }, 'connecting…');
  const list = h('div', { class: 'objects' });
  const yaml = h('pre', { id: 'yaml', class: 'yaml' });
  fill(
    root,
    h('h2', {}, 'Objects'),
    h('div', { class: 'controls' }, 'Kind ', kindSelect, ' Namespace ', nsInput, ' ', live),
    line,
    h('div', { class: 'split' }, list, yaml),
  );

  const cleanups: (() => void)[] = [];
  cleanups.push(
    observe<{ kinds: Kind[] }>(
      ['kinds'],
      () => getJson('kinds'),
      (r) => {
        if (!r.data) return;
        const current = `${sel.group}|${sel.version}|${sel.resource}`;
        fill(
          kindSelect,
          ...r.data.kinds.map((k) => {
            const v = `${k.group}|${k.version}|${k.resource}`;
            const o = h('option', { value: v }, k.group ? `${k.kind} (${k.group})` : k.kind) as HTMLOptionElement;
            o.selected = v === current;
            return o;
          }),
        );
      },
      false,
    ),
  );

  const q = { ...sel };
  const listKey = ['objects', sel.group, sel.version, sel.resource, sel.namespace];
  cleanups.push(
    observe<Objects>(
      listKey,
      () => getJson('objects', q),
      (r) => {
        if (!status(line, r)) return;
        const o = r.data;
        fill(
          list,
          h(
            'p',
            { class: 'muted' },
            `${o.total} objects at revision ${o.revision}${o.total > o.items.length ? ` (first ${o.items.length} shown)` : ''}`,
          ),
          table(
            ['Namespace', 'Name', 'Created', 'Resource version'],
            o.items,
            (x) => [
              x.namespace,
              h('a', { href: link({ ...sel, name: x.name, ...(x.namespace ? { namespace: x.namespace } : {}) }) }, x.name),
              x.created,
              x.resourceVersion,
            ],
            { id: 'objects' },
          ),
        );
      },
      // The watch keeps it current; a slow refetch in case the stream broke unseen.
      60_000,
    ),
  );

  if (name) {
    cleanups.push(
      observe<{ yaml: string }>(
        ['object', sel.group, sel.version, sel.resource, sel.namespace, name],
        () => getJson('object', { ...q, name }),
        (r) => {
          if (r.error) yaml.textContent = `Error: ${r.error.message}`;
          else if (r.data) yaml.textContent = r.data.yaml;
        },
        false,
      ),
    );
  } else {
    yaml.textContent = 'Select an object to see it as YAML.';
  }

  // Live updates: each change notice invalidates the list (and the shown object), coalesced.
  const es = new EventSource(`/ui/api/objects/watch?${new URLSearchParams(q)}`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let changed = new Set<string>();
  let lastRefetch = 0;
  let opened = false;
  es.onopen = () => {
    live.textContent = 'live';
    // A reconnect (the server ended the stream, or the network dropped): changes in between
    // were not seen, so read the list again.
    if (opened) void queryClient.invalidateQueries({ queryKey: listKey });
    opened = true;
  };
  es.onerror = () => {
    live.textContent = 'reconnecting…';
  };
  es.onmessage = (m) => {
    const e = JSON.parse(m.data) as { name: string };
    changed.add(e.name);
    timer ??= setTimeout(
      () => {
        timer = undefined;
        lastRefetch = Date.now();
        const names = changed;
        changed = new Set();
        void queryClient.invalidateQueries({ queryKey: listKey });
        if (name && names.has(name)) {
          void queryClient.invalidateQueries({ queryKey: ['object', sel.group, sel.version, sel.resource, sel.namespace, name] });
        }
      },
      Math.max(COALESCE_MS, lastRefetch + MIN_GAP_MS - Date.now()),
    );
  };
  cleanups.push(() => {
    es.close();
    if (timer) clearTimeout(timer);
  });
  return () => {
    for (const c of cleanups) c();
  };
};
