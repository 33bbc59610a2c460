import type { QueryObserverResult } from '@tanstack/query-core';
import { fill, h } from '../dom';

/** A page: draws into `root`, returns its cleanup (unsubscribe, destroy charts). */
export type Page = (root: HTMLElement, params: URLSearchParams) => () => void;

/** Show an error (or nothing while loading) in a status line; true when there is data. */
export function status<T>(el: HTMLElement, r: QueryObserverResult<T, Error>): r is QueryObserverResult<T, Error> & { data: T } {
  if (r.error) fill(el, h('span', { class: 'err' }, `Error: ${r.error.message}`));
  else if (r.data === undefined) fill(el, h('span', { class: 'muted' }, 'Loading…'));
  else fill(el, h('span', { class: 'muted' }, `Updated ${new Date(r.dataUpdatedAt).toLocaleTimeString()}`));
  return r.data !== undefined;
}

/** A figure: a label over a value. */
export const card = (label: string, value: string | number, id?: string) =>
  h('div', { class: 'card' }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-figure': id ?? label }, String(value)));
