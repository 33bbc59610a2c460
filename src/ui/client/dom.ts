/**
 * A few DOM helpers. Text always goes in as text nodes (object names and labels come from
 * users): nothing here parses HTML.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | ((e: Event) => void) | undefined>;

export function h(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A table of rows under a header; `cells` gives a row's cells (text or nodes). */
export function table<T>(head: string[], rows: readonly T[], cells: (r: T) => Child[], attrs: Attrs = {}): HTMLElement {
  return h(
    'table',
    attrs,
    h('thead', {}, h('tr', {}, ...head.map((x) => h('th', {}, x)))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...cells(r).map((c) => h('td', {}, c))))),
  );
}

/** Replace an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(
    ...children
      .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'object' ? c : String(c))),
  );
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  num: (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–'),
  bytes: (n: number) => (n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`),
  ms: (s: number | undefined) => (s === undefined || !Number.isFinite(s) ? '–' : `${(s * 1000).toFixed(s < 0.01 ? 2 : 1)} ms`),
  duration: (s: number) => {
    const d = Math.floor(s / 86400);
    const hh = Math.floor((s % 86400) / 3600);
    const mm = Math.floor((s % 3600) / 60);
    const ss = Math.floor(s % 60);
    return `${d ? `${d}d ` : ''}${hh}h ${mm}m ${ss}s`;
  },
};
