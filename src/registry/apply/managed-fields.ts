/**
 * `metadata.managedFields` as the reference's field manager keeps it: decoding the wire entries
 * into per-manager field sets (keyed by a manager identifier: manager + operation + apiVersion
 * for updaters, manager + operation for appliers, + subresource), encoding them back in the
 * reference's order, the reset marker (`[{}]`), the fields no manager ever owns (stripped), and
 * the cap on the number of Update entries.
 */

import { isObject } from '../../api/meta';
import { FieldSet, fieldPE, fieldSetOfTree, type Path } from './fieldset';

export type Operation = 'Apply' | 'Update';

/** One manager's entry, decoded. */
export interface ManagedEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
  /** RFC 3339; absent when the reference would have no time for the entry. */
  time?: string;
  fields: FieldSet;
}

/** Entries by manager identifier. */
export type Managed = Map<string, ManagedEntry>;

/**
 * The reference's manager identifier: the JSON of the entry without fields, fieldsType and time,
 * and without apiVersion for appliers (an applier keeps one entry whatever version it applies).
 */
export function managerId(e: { manager: string; operation: Operation; apiVersion?: string; subresource?: string }): string {
  const o: Record<string, string> = {};
  if (e.manager) o.manager = e.manager;
  o.operation = e.operation;
  if (e.operation !== 'Apply' && e.apiVersion) o.apiVersion = e.apiVersion;
  if (e.subresource) o.subresource = e.subresource;
  return JSON.stringify(o);
}

/** A malformed managedFields list. */
export class ManagedFieldsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManagedFieldsError';
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Decodes `metadata.managedFields` (undefined/null → no entries). Throws ManagedFieldsError for
 * an entry whose operation is not Apply/Update, whose apiVersion is empty, whose fieldsType is not
 * FieldsV1 or whose fieldsV1 does not parse, with the reference's messages.
 */
export function decodeManagedFields(list: unknown): Managed {
  const out: Managed = new Map();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new ManagedFieldsError('managedFields must be a list');
  list.forEach((raw, i) => {
    const e = isObject(raw) ? raw : {};
    const operation = str(e.operation);
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = str(e.apiVersion);
    if (apiVersion.length < 1) throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = str(e.fieldsType);
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    let fields: FieldSet;
    try {
      fields = fieldSetOfTree(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set from entry ${i}: error decoding set: ${(err as Error).message}`);
    }
    const entry: ManagedEntry = { manager: str(e.manager), operation, apiVersion, fields };
    if (str(e.subresource)) entry.subresource = str(e.subresource);
    if (typeof e.time === 'string' && e.time) entry.time = e.time;
    out.set(managerId(entry), entry);
  });
  return out;
}

/**
 * Seconds of the entries' times, by time: the order's comparator asks for each entry's time
 * several times per sort, and Date.parse was 4% of an apply (bench/README.md, 2026-11-29);
 * writes within one second share their time, so the map stays small (and is cleared at its cap).
 */
const secondsOf = new Map<string, number>();

function seconds(t: string | undefined): number {
  if (!t) return 0;
  let s = secondsOf.get(t);
  if (s === undefined) {
    const ms = Date.parse(t);
    s = Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
    if (secondsOf.size >= 1024) secondsOf.clear();
    secondsOf.set(t, s);
  }
  return s;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The reference's order of entries: operation, time in seconds, manager, apiVersion, subresource. */
export function entryOrder(
  p: { operation: string; time?: string; manager: string; apiVersion: string; subresource?: string },
  q: { operation: string; time?: string; manager: string; apiVersion: string; subresource?: string },
): number {
  return (
    cmp(p.operation, q.operation) ||
    seconds(p.time) - seconds(q.time) ||
    cmp(p.manager, q.manager) ||
    cmp(p.apiVersion, q.apiVersion) ||
    cmp(p.subresource ?? '', q.subresource ?? '')
  );
}

/**
 * Encodes entries as the wire list, sorted as the reference sorts them (operation, time in
 * seconds, manager, apiVersion, subresource). Empty field sets are dropped. Returns undefined for
 * no entries (the field is then omitted).
 */
export function encodeManagedFields(managed: Managed | Iterable<ManagedEntry>): Record<string, unknown>[] | undefined {
  const entries = [...(managed instanceof Map ? managed.values() : managed)].filter((e) => !e.fields.empty());
  if (entries.length === 0) return undefined;
  entries.sort(entryOrder);
  return entries.map((e) => {
    const o: Record<string, unknown> = {};
    if (e.manager) o.manager = e.manager;
    o.operation = e.operation;
    o.apiVersion = e.apiVersion;
    if (e.time) o.time = e.time;
    o.fieldsType = 'FieldsV1';
    o.fieldsV1 = e.fields.toFieldsV1();
    if (e.subresource) o.subresource = e.subresource;
    return o;
  });
}

const ENTRY_STRING_FIELDS = ['manager', 'operation', 'apiVersion', 'fieldsType', 'subresource'];

/**
 * The reset marker: a list with exactly one entry that decodes to the zero entry (`[{}]`, or an
 * entry whose known fields are all empty). An empty list `[]` is not a reset.
 */
export function isResetManagedFields(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 1) return false;
  const e = list[0];
  if (!isObject(e)) return e === null;
  for (const k of ENTRY_STRING_FIELDS) if (e[k] !== undefined && e[k] !== null && e[k] !== '') return false;
  if (e.time !== undefined && e.time !== null) return false;
  if (e.fieldsV1 !== undefined && e.fieldsV1 !== null) return false;
  return true;
}

const p = (...names: string[]): Path => names.map(fieldPE);

/** Fields no manager ever owns (the reference's stripMetaManager). Removed as exact paths. */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  p('apiVersion'),
  p('kind'),
  p('metadata'),
  p('metadata', 'name'),
  p('metadata', 'namespace'),
  p('metadata', 'creationTimestamp'),
  p('metadata', 'selfLink'),
  p('metadata', 'uid'),
  p('metadata', 'clusterName'),
  p('metadata', 'generation'),
  p('metadata', 'managedFields'),
  p('metadata', 'resourceVersion'),
);

/** Removes the stripped fields from one manager's entry; drops the entry if nothing is left. */
/**
 * A set without the stripped fields, by set: an applied configuration's memoized set (apply.ts
 * configSetOf) is stripped to the same set each time, which then hands out the same FieldsV1
 * tree (fieldset.ts) instead of encoding it per request. Sets are not changed once made.
 */
const strippedOf = new WeakMap<FieldSet, FieldSet>();

export function stripManager(managed: Managed, id: string): void {
  const e = managed.get(id);
  if (!e) return;
  let fields = strippedOf.get(e.fields);
  if (fields === undefined) {
    fields = e.fields.difference(STRIPPED_FIELDS);
    strippedOf.set(e.fields, fields);
  }
  if (fields.empty()) managed.delete(id);
  else e.fields = fields;
}

/** Most Update entries kept; older ones are merged into `ancient-changes` buckets per apiVersion. */
export const MAX_UPDATE_MANAGERS = 10;

/** The reference's capManagersManager: merges the oldest Update entries until at most `max` remain. */
export function capUpdateManagers(managed: Managed, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.keys()].filter((id) => managed.get(id)!.operation === 'Update');
  if (updaters.length <= max) return;
  updaters.sort((a, b) => seconds(managed.get(a)!.time) - seconds(managed.get(b)!.time) || cmp(a, b));
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const e = managed.get(id);
    if (!e) continue;
    const version = e.apiVersion;
    const bucketEntry = { manager: 'ancient-changes', operation: 'Update' as const, apiVersion: version };
    const bucket = managerId(bucketEntry);
    const first = firstByVersion.get(version);
    if (first === undefined) {
      firstByVersion.set(version, id);
      continue;
    }
    let b = managed.get(bucket);
    if (!b) {
      const f = managed.get(first)!;
      managed.delete(first);
      b = { ...bucketEntry, fields: f.fields };
      if (f.time) b.time = f.time;
      managed.set(bucket, b);
    }
    b.fields = e.fields.union(b.fields);
    managed.delete(id);
    length--;
    if (e.time) b.time = e.time;
    else delete b.time;
  }
}
