/**
 * Table and PartialObjectMetadata conversions (`Accept: application/json;as=Table;g=meta.svc.io;v=v1`).
 * Columns come from the kind (src/kinds/columns.ts); a kind without columns gets the default
 * table the reference serves: Name and Created At.
 */

import type { Obj } from '../api/meta';

/** What each Table row carries (`includeObject`): PartialObjectMetadata (default), the whole object, or nothing. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A Table column of a kind: its definition and how to compute an object's cell. */
export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0: shown by default; 1: only with -o wide. */
  priority: number;
  /** The cell for an object (a string, number, boolean or null). */
  cell: (o: Obj, now: number) => unknown;
}

const NAME_COLUMN = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

const CREATED_AT: Column = {
  name: 'Created At',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
  cell: (o) => o.metadata.creationTimestamp ?? null,
};

export function partialObjectMetadata(o: Obj, group: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `${group}/v1`, metadata: o.metadata };
}

function columnsOf(defColumns: readonly Column[]): readonly Column[] {
  return defColumns.length > 0 ? defColumns : [CREATED_AT];
}

export function toTable(
  def: { readonly columns: readonly Column[] },
  objs: Obj[],
  listMeta: Record<string, unknown>,
  group: string,
  nowMs: number,
  include: IncludeObject = 'Metadata',
): Record<string, unknown> {
  return { ...tableHead(def.columns, listMeta, group), rows: tableRows(def.columns, objs, group, nowMs, include) };
}

/** A Table without its rows: kind, apiVersion, metadata, columnDefinitions (in that order). */
export function tableHead(defColumns: readonly Column[], listMeta: Record<string, unknown>, group: string): Record<string, unknown> {
  const cols = columnsOf(defColumns);
  // A kind may place Name itself (Event: last, wide only); else it comes first.
  const own = cols.some((c) => c.format === 'name');
  return {
    kind: 'Table',
    apiVersion: `${group}/v1`,
    metadata: listMeta,
    columnDefinitions: [
      ...(own ? [] : [NAME_COLUMN]),
      ...cols.map((c) => {
        const d: Record<string, unknown> = {
          name: c.name,
          type: c.type,
          format: c.format ?? '',
          description: c.description ?? '',
          priority: c.priority,
        };
        return d;
      }),
    ],
  };
}

/**
 * A Table's rows for `objs` (a kind's own columns, or the default ones when it has none), each
 * with what `include` asks for (the reference's includeObject): PartialObjectMetadata, the whole
 * object (as the request names its kind), or no object.
 */
export function tableRows(
  defColumns: readonly Column[],
  objs: readonly Obj[],
  group: string,
  nowMs: number,
  include: IncludeObject = 'Metadata',
): Record<string, unknown>[] {
  const cols = columnsOf(defColumns);
  const own = cols.some((c) => c.format === 'name');
  return objs.map((o) => {
    const cells = [...(own ? [] : [o.metadata.name ?? '']), ...cols.map((c) => c.cell(o, nowMs))];
    if (include === 'None') return { cells };
    return { cells, object: include === 'Object' ? o : partialObjectMetadata(o, group) };
  });
}

/** Human age as kubectl prints it (translateTimestampSince / duration.HumanDuration). */
export function age(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<invalid>';
  return humanDuration(nowMs - t);
}

/** translateTimestampSince: "<unknown>" for a zero time. */
export function since(ts: unknown, now: number): string {
  if (typeof ts !== 'string' || ts === '') return '<unknown>';
  return age(ts.replace(/(\.\d{3})\d+/, '$1'), now);
}

export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}
