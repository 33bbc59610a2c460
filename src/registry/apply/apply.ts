/**
 * Server-side apply and field ownership, after the reference's field manager
 * (k8s.io/apimachinery/pkg/util/managedfields/internal) and structured-merge-diff's merge.Updater.
 *
 *  - `apply(live, applied, opts)`: merges the applied configuration into the live object (the
 *    request's values win), removes what the manager applied last time and omits now unless
 *    another manager owns it, detects conflicts with other managers (a field they own whose value
 *    would change), and records the manager's `Apply` entry. `force` takes the conflicting fields
 *    away from the other managers instead of failing.
 *  - `recordUpdate(old, next, opts)`: for create/update/patch (non-apply) writes: the changed
 *    fields go to the writer's `Update` entry and leave every other entry; honours the `[{}]`
 *    reset marker and direct edits of managedFields.
 *  - `conflictStatus(err)`: the 409 Status of an ApplyConflictError, worded as the reference.
 */

import { cloneJson, type JsonObject, type Obj } from '../../api/meta';
import { badRequest, StatusError } from '../../api/status';
import type { SchemaSet } from '../../schema/engine';
import type { DefName, Schema } from '../../schema/types';
import { type FieldSet, pathString } from './fieldset';
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  type Managed,
  type ManagedEntry,
  ManagedFieldsError,
  managerId,
  type Operation,
  STRIPPED_FIELDS,
  stripManager,
} from './managed-fields';
import { memoFor, shapeOf } from './shape';
import { compare, deepEqual, ensureNamedFieldsAreMembers, merge, removeItems, TypedValueError, Typer, toFieldSet } from './typed';

export interface WriteOptions {
  /** The field manager (`fieldManager`, or the user-agent prefix); empty becomes `unknown`. */
  manager: string;
  /** group/version of the request (`v1`, `apps/v1`). */
  apiVersion: string;
  /** RFC 3339 time of the write. */
  now: string;
  schemas: SchemaSet;
  /** Definition of the object, e.g. `io.svc.api.apps.v1.Deployment`. */
  defName: DefName;
  /** Subresource written through (`status`, `scale`), recorded in the entry. */
  subresource?: string;
  /**
   * Fields the write cannot set (the strategy resets them, e.g. `status` on the main resource):
   * never recorded as owned by this write and never in conflict.
   */
  ignoredFields?: FieldSet;
}

export interface ApplyOptions extends WriteOptions {
  force: boolean;
  /** When given, the applied object's apiVersion/kind must match (`opts.apiVersion`, `kind`). */
  kind?: string;
  /** Tests: prune by the general computation even when it cannot remove anything. */
  generalPrune?: boolean;
}

/** One field in conflict: the other manager (as in its entry) and the path, rendered. */
export interface ApplyConflict {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
  /** `.spec.replicas`, `.spec.template.spec.containers[name="nginx"].image`. */
  field: string;
}

/** An apply that would change fields other managers own. `message` is the Status message. */
export class ApplyConflictError extends Error {
  constructor(readonly conflicts: ApplyConflict[]) {
    super(conflictMessage(conflicts));
    this.name = 'ApplyConflictError';
  }
}

// ---------------------------------------------------------------------------------------------
// Conflict rendering
// ---------------------------------------------------------------------------------------------

function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** `"mgr" using apps/v1` for updaters, `"mgr"` for appliers (the reference's printManager). */
function printManager(c: ApplyConflict): string {
  return c.operation === 'Update' ? `${goQuote(c.manager)} using ${c.apiVersion}` : goQuote(c.manager);
}

function conflictMessage(conflicts: ApplyConflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${printManager(c)}: ${c.field}`;
  }
  // Grouped by manager, managers in identifier order (the conflicts already come in that order).
  const groups = new Map<string, ApplyConflict[]>();
  for (const c of conflicts) {
    const id = managerId(c);
    const g = groups.get(id);
    if (g) g.push(c);
    else groups.set(id, [c]);
  }
  const lines: string[] = [];
  for (const id of [...groups.keys()].sort(cmpStr)) {
    const g = groups.get(id)!;
    lines.push(`conflicts with ${printManager(g[0]!)}:`);
    for (const c of g) lines.push(`- ${c.field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/**
 * The 409 Conflict Status of an apply conflict: the reference's NewApplyConflict, with one
 * `FieldManagerConflict` cause per field. As in the reference, details carry only the causes
 * (no name or kind); the target and name are accepted for symmetry with the other constructors.
 */
export function conflictStatus(err: ApplyConflictError, _target?: { group: string; resource: string }, _name?: string): StatusError {
  const causes = err.conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c)}`,
    field: c.field,
  }));
  return new StatusError(409, 'Conflict', err.message, { causes });
}

// ---------------------------------------------------------------------------------------------
// Checks on the applied object
// ---------------------------------------------------------------------------------------------

/** 400 unless the apply body leaves managedFields out (a list, even empty, is refused; null is fine). */
export function checkApplyManagedFields(applied: unknown): void {
  const meta = (applied as { metadata?: unknown } | null)?.metadata;
  if (typeof meta === 'object' && meta !== null && Array.isArray((meta as JsonObject).managedFields)) {
    throw badRequest('metadata.managedFields must be nil');
  }
}

function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const k = typeof kind === 'string' ? kind : '';
  const parts = av.split('/');
  let group = '';
  let version = '';
  if (parts.length === 1) version = parts[0]!;
  else if (parts.length === 2) [group, version] = parts as [string, string];
  return `${group}/${version}, Kind=${k}`;
}

/** 400 `invalid object type: <gvk>` unless the applied object is of the endpoint's apiVersion and kind. */
export function checkApplyType(applied: unknown, apiVersion: string, kind: string): void {
  const o = (applied ?? {}) as JsonObject;
  if (o.apiVersion !== apiVersion || o.kind !== kind) throw badRequest(`invalid object type: ${gvkString(o.apiVersion, o.kind)}`);
}

// ---------------------------------------------------------------------------------------------
// Shared machinery
// ---------------------------------------------------------------------------------------------

const cmpStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const typers = new WeakMap<SchemaSet, Typer>();

export function typerFor(schemas: SchemaSet): Typer {
  let t = typers.get(schemas);
  if (!t) {
    t = new Typer(schemas);
    typers.set(schemas, t);
  }
  return t;
}

/** A shallow copy without metadata.managedFields (the values compared and merged never include it). */
export function withoutManagedFields(o: Obj): JsonObject {
  const out: JsonObject = { ...o };
  if (typeof o.metadata === 'object' && o.metadata !== null) {
    const meta = { ...o.metadata };
    delete meta.managedFields;
    out.metadata = meta;
  }
  return out;
}

export function setManagedFields(obj: Obj, managed: Managed): void {
  if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {};
  const list = encodeManagedFields(managed);
  if (list) obj.metadata.managedFields = list;
  else delete obj.metadata.managedFields;
}

export function entryInfo(opts: WriteOptions, operation: Operation, manager = opts.manager): Omit<ManagedEntry, 'fields'> {
  const e: Omit<ManagedEntry, 'fields'> = { manager: manager || 'unknown', operation, apiVersion: opts.apiVersion };
  if (opts.subresource) e.subresource = opts.subresource;
  return e;
}

/**
 * The ownership update common to apply and update (merge.Updater.update): fields changed from
 * `oldV` to `newV` that other managers own are conflicts; without `force` they fail the write,
 * with it they leave those managers. Removed fields leave every other manager. Empty entries go.
 */
function updateOwnership(
  t: Typer,
  root: Schema,
  oldV: unknown,
  newV: unknown,
  managed: Managed,
  workflow: string,
  force: boolean,
  ignored: FieldSet | undefined,
) {
  const cmp = compare(t, root, oldV, newV, ignored);
  if (ignored && !ignored.empty()) {
    cmp.added = cmp.added.recursiveDifference(ignored);
    cmp.modified = cmp.modified.recursiveDifference(ignored);
    cmp.removed = cmp.removed.recursiveDifference(ignored);
  }
  const changed = cmp.modified.union(cmp.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [id, e] of managed) {
    if (id === workflow) continue;
    const c = e.fields.intersection(changed);
    if (!c.empty()) conflicts.set(id, c);
  }
  if (!force && conflicts.size > 0) {
    const list: ApplyConflict[] = [];
    for (const id of [...conflicts.keys()].sort(cmpStr)) {
      const e = managed.get(id)!;
      for (const path of conflicts.get(id)!.paths()) {
        const c: ApplyConflict = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, field: pathString(path) };
        if (e.subresource) c.subresource = e.subresource;
        list.push(c);
      }
    }
    throw new ApplyConflictError(list);
  }
  for (const [id, c] of conflicts) {
    const e = managed.get(id)!;
    e.fields = e.fields.difference(c);
  }
  if (!cmp.removed.empty()) {
    for (const [id, e] of managed) if (id !== workflow) e.fields = e.fields.difference(cmp.removed);
  }
  for (const [id, e] of managed) if (e.fields.empty()) managed.delete(id);
  return cmp;
}

const CURRENT_OPERATION = 'current-operation';

/**
 * An Update by `info` from `oldV` to `newV` (merge.Updater.Update wrapped in the reference's
 * managedFieldsUpdater, stripMetaManager and capManagersManager).
 */
export function updateManaged(
  t: Typer,
  root: Schema,
  oldV: unknown,
  newV: unknown,
  managed: Managed,
  info: Omit<ManagedEntry, 'fields'>,
  now: string,
  ignored: FieldSet | undefined,
): void {
  const cmp = updateOwnership(t, root, oldV, newV, managed, CURRENT_OPERATION, true, ignored);
  let self = cmp.modified.union(cmp.added).difference(cmp.removed);
  if (ignored && !ignored.empty()) self = self.recursiveDifference(ignored);
  self = self.difference(STRIPPED_FIELDS);
  if (!self.empty()) {
    const id = managerId(info);
    const prev = managed.get(id);
    managed.set(id, { ...info, fields: prev ? self.union(prev.fields) : self, time: now });
  }
  capUpdateManagers(managed);
}

// ---------------------------------------------------------------------------------------------
// Apply
// ---------------------------------------------------------------------------------------------

function objectGVKNN(o: JsonObject): string {
  const meta = (o.metadata ?? {}) as JsonObject;
  const ns = typeof meta.namespace === 'string' ? meta.namespace : '';
  const name = typeof meta.name === 'string' ? meta.name : '';
  return `${ns}/${name}; ${gvkString(o.apiVersion, o.kind)}`;
}

/**
 * Removes what the applier applied last time (`lastSet`) and no longer applies, unless another
 * manager (or the applier's new configuration) owns it; unowned fields the applier never owned
 * stay. (merge.Updater.prune with addBackOwnedItems / addBackDanglingItems.)
 */
function prune(
  t: Typer,
  root: Schema,
  merged: unknown,
  managed: Managed,
  lastSet: FieldSet | undefined,
  configSet: FieldSet,
  general: boolean,
): unknown {
  if (!lastSet || lastSet.empty()) return merged;
  // The applier applies again everything it applied last time (the common case: the same
  // configuration sent again). Every field of the last set is then owned by the new one, and so
  // is every list item holding one (a field set holds an item with each field inside it): the
  // removals below take only unowned fields and what lies under them, none of them in the last
  // set, so the answer is `merged`. Skips three walks of the object and two removals (~45% of a
  // repeated apply; apply.test.ts checks both routes agree).
  if (!general && lastSet.difference(configSet).empty()) return merged;
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(t, root, s);
  const fieldsOf = (v: unknown) => toFieldSet(t, root, v ?? {}, false);
  const last = named(lastSet);
  let pruned = removeItems(t, root, merged, last) ?? {};
  // Owned by anyone (including the applier's new configuration) comes back. The fields no
  // manager can own (name, uid, resourceVersion, ...) always count as owned here.
  let owned = STRIPPED_FIELDS; // union() never changes its operands: the shared set stays as it is
  for (const e of managed.values()) owned = owned.union(e.fields);
  const mergedSet = named(fieldsOf(merged));
  const unowned = mergedSet.difference(named(fieldsOf(pruned)).union(named(owned)));
  // Everything the first removal took is owned (an applier sending the same fields again, the
  // common case): the second removal takes nothing, so the last one takes nothing either and the
  // merged object is the answer. Skips two walks and two removals (~40% of an apply patch's prune).
  if (unowned.empty()) return merged;
  pruned = removeItems(t, root, merged, unowned) ?? {};
  // Only what the applier owned last time may go; anything else that went comes back.
  const prunedSet = named(fieldsOf(pruned));
  return removeItems(t, root, merged, mergedSet.difference(prunedSet).intersection(last)) ?? {};
}

export interface ApplyResult {
  /** The merged object with its new managedFields. */
  obj: Obj;
  /** False when the apply changed nothing but ownership (the object is then a copy of live). */
  changed: boolean;
}

/**
 * Server-side apply of `applied` (the request body, already decoded) onto `live` (undefined:
 * create). Throws ApplyConflictError on conflicts (see conflictStatus), a 400 StatusError for a
 * body with managedFields (or of the wrong type when `opts.kind` is given), and a 500 StatusError
 * when the body's lists cannot be keyed (a map-list item without its key, duplicates, ...).
 * The result is not defaulted or validated.
 */
export function apply(live: Obj | undefined, applied: Obj, opts: ApplyOptions): ApplyResult {
  const t = typerFor(opts.schemas);
  const root = t.root(opts.defName);
  let managed: Managed;
  try {
    managed = decodeManagedFields(live?.metadata?.managedFields);
  } catch (e) {
    if (e instanceof ManagedFieldsError) throw new StatusError(500, 'InternalError', `failed to decode managed fields: ${e.message}`);
    throw e;
  }
  if (opts.kind !== undefined) checkApplyType(applied, opts.apiVersion, opts.kind);
  checkApplyManagedFields(applied);

  const config = withoutManagedFields(applied);
  let configSet: FieldSet;
  let merged: unknown;
  const liveV: JsonObject = live ? withoutManagedFields(live) : {};
  try {
    configSet = configSetOf(t, root, config, opts);
    merged = merge(t, root, liveV, config) ?? {};
  } catch (e) {
    if (e instanceof TypedValueError) {
      throw new StatusError(500, 'InternalError', `failed to create typed patch object (${objectGVKNN(config)}): ${e.message}`);
    }
    throw e;
  }

  // An object nobody manages yet: everything in it belongs to `before-first-apply`.
  if (live && managed.size === 0) {
    updateManaged(t, root, {}, liveV, managed, entryInfo(opts, 'Update', 'before-first-apply'), opts.now, opts.ignoredFields);
  }

  const info = entryInfo(opts, 'Apply');
  const id = managerId(info);
  const previous = managed.get(id);
  if (opts.ignoredFields && !opts.ignoredFields.empty()) configSet = configSet.recursiveDifference(opts.ignoredFields);
  const entry: ManagedEntry = { ...info, fields: configSet };
  if (previous?.time) entry.time = previous.time;
  managed.set(id, entry);

  merged = prune(t, root, merged, managed, previous?.fields, configSet, opts.generalPrune === true);
  updateOwnership(t, root, liveV, merged, managed, id, opts.force, opts.ignoredFields);

  const changed = !live || !deepEqual(liveV, merged);
  stripManager(managed, id);
  const mine = managed.get(id);
  if (changed && mine) mine.time = opts.now;

  const obj = (changed ? merged : cloneJson(liveV)) as Obj;
  setManagedFields(obj, managed);
  return { obj, changed };
}

/** Per set of definitions, applied configurations' field sets by definition and shape. */
const configSets = new WeakMap<SchemaSet, { generation: number; memo: Map<string, FieldSet> }>();
const MAX_CONFIG_SHAPES = 4096;

/**
 * The applied configuration's field set, which depends only on its shape (shapeOf: keys, kinds
 * of values, arrays in full) and the definition: the same configuration applied to many objects
 * (a controller's, a benchmark's) walks it once. Sets are never changed once made, so one is
 * shared by the entries that hold it. A configuration that does not type throws each time.
 */
function configSetOf(t: Typer, root: Schema, config: JsonObject, opts: ApplyOptions): FieldSet {
  const memo = memoFor(opts.schemas, configSets);
  const key = `${opts.defName}\u0000${shapeOf(config)}`;
  let set = memo.get(key);
  if (set === undefined) {
    set = toFieldSet(t, root, config, true);
    if (memo.size >= MAX_CONFIG_SHAPES) memo.clear();
    memo.set(key, set);
  }
  return set;
}

/** The field set of an object of definition `defName` (leaves, list items, map entries). */
export function fieldSetOf(obj: unknown, schemas: SchemaSet, defName: DefName): FieldSet {
  const t = typerFor(schemas);
  return toFieldSet(t, t.root(defName), obj, false);
}
