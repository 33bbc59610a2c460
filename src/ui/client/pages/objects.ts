/**
 * Browse any resource: pick a kind and a namespace, see its objects, click one for its YAML.
 * The list is read once; then the server's change stream (an EventSource on
 * /ui/api/objects/watch, batched at most every ~300 ms) is applied to the cached list
 * (live-list.ts, queryClient.setQueryData): live without polling and without reading the list
 * again. The list is read again only when the stream says too much changed at once (`resync`),
 * when it (re)starts after the list's revision, or when a cut page lost a row; at most once per
 * MIN_GAP_MS. The YAML view reads its one object, again when a batch names it.
 */
import { getJson, type Kind, type Objects, type ObjectsBatch } from '../api';
import { fill, h, table } from '../dom';
import { applyChanges } from '../live-list';
import { observe, queryClient } from '../query';
import { type Page, status } from './common';

/**
 * Least time between two reads of the list: under a burst of writes (a load run creating
 * thousands of objects a second) the page reads one page of the list once a second at most.
 */
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
  const objectKey = ['object', sel.group, sel.version, sel.resource, sel.namespace, name];

  // ---- the stream's state --------------------------------------------------------------------
  /** Revision the stream (re)started at: a list older than it missed changes. */
  let streamFrom = 0;
  /** Batches that arrive while a read of the list is under way, one buffer per read. */
  const reading = new Set<ObjectsBatch[]>();
  /** A read is due (resync, gap): batches until then are not applied (the read covers them). */
  let stale = false;
  let lastRead = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const apply = (o: Objects, b: ObjectsBatch) =>
    'changes' in b ? applyChanges(o, b.revision, b.total, b.changes) : { data: o, short: false };

  /** The list's query function: one read, then the batches that came meanwhile. */
  const readList = async (): Promise<Objects> => {
    const mine: ObjectsBatch[] = [];
    reading.add(mine);
    stale = false;
    lastRead = Date.now();
    try {
      let o = await getJson<Objects>('objects', q);
      for (const b of mine) o = apply(o, b).data;
      if (o.revision < streamFrom) readAgain();
      return o;
    } finally {
      reading.delete(mine);
    }
  };

  /** Read the list (and the shown object) again, no sooner than MIN_GAP_MS after the last read. */
  const readAgain = () => {
    stale = true;
    if (timer) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        void queryClient.refetchQueries({ queryKey: listKey, exact: true });
        if (name) void queryClient.invalidateQueries({ queryKey: objectKey, exact: true });
      },
      Math.max(0, lastRead + MIN_GAP_MS - Date.now()),
    );
  };

  let rendered: Objects['items'] | undefined;
  cleanups.push(
    observe<Objects>(
      listKey,
      readList,
      (r) => {
        if (!status(line, r)) return;
        const o = r.data;
        const counts = `${o.total} objects at revision ${o.revision}${o.total > o.items.length ? ` (first ${o.items.length} shown)` : ''}`;
        const summary = list.querySelector('#objects-summary');
        // A batch that changed no row (objects past a cut page) moves only the counts.
        if (o.items === rendered && summary) {
          summary.textContent = counts;
          return;
        }
        rendered = o.items;
        fill(
          list,
          h('p', { class: 'muted', id: 'objects-summary' }, counts),
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
        objectKey,
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

  // Live updates: each batch is applied to the cached list.
  const es = new EventSource(`/ui/api/objects/watch?${new URLSearchParams(q)}`);
  let first = true;
  es.onopen = () => {
    live.textContent = 'live';
    first = true;
  };
  es.onerror = () => {
    live.textContent = 'reconnecting…';
  };
  es.onmessage = (m) => {
    const b = JSON.parse(m.data) as ObjectsBatch;
    const cur = queryClient.getQueryData<Objects>(listKey);
    if (first) {
      // Where the stream (re)starts: changes between the list's revision and here were not seen.
      first = false;
      streamFrom = b.revision;
      if (cur && cur.revision < b.revision) readAgain();
      return;
    }
    if (!('changes' in b)) return readAgain();
    for (const mine of reading) mine.push(b);
    if (name && b.changes.some((c) => c.name === name)) void queryClient.invalidateQueries({ queryKey: objectKey, exact: true });
    if (stale || !cur) return;
    const r = applyChanges(cur, b.revision, b.total, b.changes);
    if (r.data !== cur) queryClient.setQueryData(listKey, r.data);
    if (r.short) readAgain();
  };
  cleanups.push(() => {
    es.close();
    if (timer) clearTimeout(timer);
  });
  return () => {
    for (const c of cleanups) c();
  };
};
