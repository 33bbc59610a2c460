/**
 * events.k8s.io/v1 Event ⇄ core/v1 Event: one stored object (core/v1), two views, field for
 * field as the reference converts them (pkg/apis/events/v1 conversion through the internal
 * Event): regarding ⇄ involvedObject, note ⇄ message, reportingController ⇄ reportingComponent,
 * deprecatedSource/FirstTimestamp/LastTimestamp/Count ⇄ source/firstTimestamp/lastTimestamp/count.
 */
import type { Obj } from '../../api/meta';

export const EVENTS_V1 = 'events.svc.io/v1';
export const CORE_V1 = 'v1';

/** [events.k8s.io/v1 name, core/v1 name], in the events.k8s.io/v1 struct's order. */
const FIELDS: [string, string][] = [
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['reportingController', 'reportingComponent'],
  ['reportingInstance', 'reportingInstance'],
  ['action', 'action'],
  ['reason', 'reason'],
  ['regarding', 'involvedObject'],
  ['related', 'related'],
  ['note', 'message'],
  ['type', 'type'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];
/** core/v1 Event's struct order. */
const CORE_ORDER = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];
const TO_CORE = new Map(FIELDS);

const isEmptySource = (v: unknown): boolean =>
  v === undefined || (typeof v === 'object' && v !== null && Object.keys(v).every((k) => (v as Record<string, unknown>)[k] === ''));

/** A stored core/v1 Event as events.k8s.io/v1 shows it. */
export function eventFromCore(o: Obj): Obj {
  const src = o as Record<string, unknown>;
  const out: Record<string, unknown> = { kind: 'Event', apiVersion: EVENTS_V1, metadata: o.metadata };
  for (const [to, from] of FIELDS) {
    const v = src[from];
    if (v === undefined || v === null) continue;
    // Zero values the core form always writes are left out of this one (Go omitempty).
    if (from === 'source' && isEmptySource(v)) continue;
    if (from === 'count' && v === 0) continue;
    out[to] = v;
  }
  return out as Obj;
}

/** An events.k8s.io/v1 Event in the stored core/v1 form. */
export function eventToCore(o: Obj): Obj {
  const src = o as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    const core = TO_CORE.get(k);
    if (core !== undefined && v !== undefined && v !== null) fields[core] = v;
  }
  const out: Record<string, unknown> = { kind: 'Event', apiVersion: CORE_V1, metadata: o.metadata };
  for (const k of CORE_ORDER) if (fields[k] !== undefined) out[k] = fields[k];
  return out as Obj;
}
