/**
 * managedFields of non-apply writes (create, update, patch, and their subresources): the changed
 * fields go to the writer's `Update` entry and leave every other entry (merge.Updater.Update in
 * the reference's managedFieldsUpdater, stripMetaManager and capManagersManager).
 *
 * The general computation is recordUpdateSlow: decode every entry, compare the objects typed,
 * take the changes out of each entry, encode them all again. Three cheaper routes give the same
 * answer for the commonest writes, each tried in turn and each falling back to the next:
 *  - a create without managedFields: one entry that depends only on the object's shape, kept
 *    per shape (createdManaged);
 *  - an update that only changes scalar values its writer alone owns: only the writer's time
 *    moves (recordUpdateFast);
 *  - an update whose changes reach few entries (a kubelet's status write: the creator's entry
 *    holds the whole spec): the entries they do not reach keep their FieldsV1 trees as they are
 *    (recordUpdateSparse).
 */

import { cloneJson, type JsonObject, type Obj } from '../../api/meta';
import type { SchemaSet } from '../../schema/engine';
import { entryInfo, setManagedFields, typerFor, updateManaged, type WriteOptions, withoutManagedFields } from './apply';
import { type FieldSet, fieldPE, fieldSetOfTree, pathString } from './fieldset';
import {
  decodeManagedFields,
  entryOrder,
  isResetManagedFields,
  MAX_UPDATE_MANAGERS,
  type Managed,
  type ManagedEntry,
  managerId,
  STRIPPED_FIELDS,
} from './managed-fields';
import { memoFor, type Shape, sameShape, shapeOf, shapeTree } from './shape';
import { type Comparison, compare, deepEqual } from './typed';

function decodeOrEmpty(list: unknown): Managed {
  try {
    return decodeManagedFields(list);
  } catch {
    return new Map();
  }
}

/**
 * Records a create/update/patch (non-apply) write from `old` (undefined: create) to `next`, in
 * place: `next.metadata.managedFields` becomes the new list. Ownership starts from the request's
 * managedFields when they are valid and non-empty (direct edits), else from `old`'s; a request
 * carrying the reset marker `[{}]` starts from nothing (`[]` does not reset). On a subresource
 * the request's managedFields are ignored. The changed fields go to the writer's Update entry
 * (time `now`) and leave the other entries; entries left empty are dropped; at most 10 Update
 * entries are kept. Never throws for bad data: the old managedFields are kept instead.
 */
export function recordUpdate(old: Obj | undefined, next: Obj, opts: WriteOptions): void {
  if (typeof next.metadata !== 'object' || next.metadata === null) next.metadata = {};
  if (old === undefined && !opts.subresource && next.metadata.managedFields === undefined) {
    createdManaged(next, opts);
    return;
  }
  if (old !== undefined && (recordUpdateFast(old, next, opts) || recordUpdateSparse(old, next, opts))) return;
  recordUpdateSlow(old, next, opts);
}

/**
 * The commonest controller write, without the typed walk: an update that only changes scalar
 * values (no key added or removed, no list changed), each owned by the writer's own Update entry
 * and by no other. updateManaged would then find no conflict, nothing removed and nothing new
 * for the writer, and only move the writer's time to now: that is done here directly (decoded
 * and encoded as the slow path does, so the two agree). Anything else: false (the slow path).
 */
function recordUpdateFast(old: Obj, next: Obj, opts: WriteOptions): boolean {
  const live = old.metadata?.managedFields;
  if (!Array.isArray(live) || live.length === 0) return false;
  const requested = next.metadata.managedFields;
  if (!opts.subresource && requested !== undefined && requested !== live && !deepEqual(requested, live)) return false;
  const changed: string[][] = [];
  if (!changedLeaves(withoutManagedFields(old), withoutManagedFields(next), [], changed, opts.ignoredFields) || changed.length === 0)
    return false;
  const id = managerId(entryInfo(opts, 'Update'));
  const entries = live as JsonObject[];
  const writer = entries.findIndex((e) => managerId(e as unknown as ManagedEntry) === id);
  if (writer < 0) return false;
  for (const path of changed) {
    for (let i = 0; i < entries.length; i++) {
      if (ownsLeaf((entries[i] as JsonObject).fieldsV1, path) !== (i === writer)) return false;
    }
  }
  // The live list was written by setManagedFields (any other list took the slow path when it
  // was written), so decoding and encoding it again would give it back unchanged: only the
  // writer's time moves, and the order, which depends on times, is made again. The fieldsV1
  // trees are shared with `old`; nothing writes into them.
  const ids = new Set<string>();
  const list: JsonObject[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as JsonObject;
    if (!wellFormed(e)) return false;
    ids.add(managerId(e as unknown as ManagedEntry));
    list.push(wireEntry(e, i === writer ? opts.now : e.time, e.fieldsV1));
  }
  if (ids.size !== entries.length) return false;
  list.sort((p, q) => entryOrder(p as unknown as ManagedEntry, q as unknown as ManagedEntry));
  next.metadata.managedFields = list as typeof next.metadata.managedFields;
  return true;
}

const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An entry of a stored list as setManagedFields writes it: operation Apply or Update, an
 * apiVersion, FieldsV1 with at least one field, string manager, subresource and time.
 */
function wellFormed(e: unknown): e is JsonObject {
  if (!isJsonObject(e)) return false;
  const { manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource } = e;
  if (operation !== 'Apply' && operation !== 'Update') return false;
  if (typeof apiVersion !== 'string' || apiVersion === '' || fieldsType !== 'FieldsV1' || !isJsonObject(fieldsV1)) return false;
  if ((manager !== undefined && typeof manager !== 'string') || (subresource !== undefined && typeof subresource !== 'string'))
    return false;
  if (time !== undefined && typeof time !== 'string') return false;
  for (const _ in fieldsV1) return true;
  return false;
}

/** A well-formed entry on the wire again, with `time` and `fieldsV1`, in encodeManagedFields' key order. */
function wireEntry(e: JsonObject, time: unknown, fieldsV1: unknown): JsonObject {
  const o: JsonObject = {};
  if (e.manager) o.manager = e.manager;
  o.operation = e.operation;
  o.apiVersion = e.apiVersion;
  if (time) o.time = time;
  o.fieldsType = 'FieldsV1';
  o.fieldsV1 = fieldsV1;
  if (e.subresource) o.subresource = e.subresource;
  return o;
}

/**
 * An update whose changed and removed fields reach few entries: those they do not reach are
 * kept as they are, FieldsV1 tree and all (shared with `old`: nothing writes into them), instead
 * of decoded, copied and encoded again; the reached ones and the writer's own go through the
 * general set operations, as updateManaged does them. A kubelet's status write touches no other
 * entry, so only the comparison and its own new entry are left. The live list was written by
 * setManagedFields (as recordUpdateFast assumes), so an untouched entry decoded and encoded again
 * would come back as it is. Anything else answers false for the general path: an entry not well
 * formed or not decodable, two entries of one manager, as many Update entries as the cap (the
 * oldest would be merged), the request editing managedFields, a value the schema rejects.
 */
function recordUpdateSparse(old: Obj, next: Obj, opts: WriteOptions): boolean {
  const live = old.metadata?.managedFields;
  if (!Array.isArray(live) || live.length === 0) return false;
  const requested = next.metadata.managedFields;
  if (!opts.subresource && requested !== undefined && requested !== live && !deepEqual(requested, live)) return false;
  const entries = live as unknown[];
  const ids: string[] = [];
  let updaters = 0;
  for (const e of entries) {
    if (!wellFormed(e)) return false;
    ids.push(managerId(e as unknown as ManagedEntry));
    if (e.operation === 'Update') updaters++;
  }
  if (updaters >= MAX_UPDATE_MANAGERS || new Set(ids).size !== ids.length) return false;

  const t = typerFor(opts.schemas);
  const ignored = opts.ignoredFields && !opts.ignoredFields.empty() ? opts.ignoredFields : undefined;
  let cmp: Comparison;
  try {
    cmp = compare(t, t.root(opts.defName), withoutManagedFields(old), withoutManagedFields(next), ignored);
  } catch {
    return false;
  }
  if (ignored) {
    cmp.added = cmp.added.recursiveDifference(ignored);
    cmp.modified = cmp.modified.recursiveDifference(ignored);
    cmp.removed = cmp.removed.recursiveDifference(ignored);
  }
  const changed = cmp.modified.union(cmp.added);
  const removed = cmp.removed.empty() ? undefined : cmp.removed;
  let self = changed.difference(cmp.removed);
  if (ignored) self = self.recursiveDifference(ignored);
  self = self.difference(STRIPPED_FIELDS);

  const info = entryInfo(opts, 'Update');
  const writerId = managerId(info);
  let writerFound = false;
  const list: JsonObject[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as JsonObject;
    const isWriter = ids[i] === writerId;
    writerFound ||= isWriter;
    const reached = changed.intersectsFieldsV1(e.fieldsV1) || (removed?.intersectsFieldsV1(e.fieldsV1) ?? false);
    if (!reached && !(isWriter && !self.empty())) {
      list.push(wireEntry(e, e.time, e.fieldsV1));
      continue;
    }
    // The writer changing only fields it owns already (a kubelet's status writes after its first,
    // a patch of the same labels again): with nothing taken out of `changed` on the way to `self`
    // (difference answers its operand itself then) and nothing of its fields removed, its new
    // set self ∪ (F − changed) is F again, kept as its tree, with the write's time.
    if (isWriter && self === changed && !(removed?.intersectsFieldsV1(e.fieldsV1) ?? false) && self.isSubsetOfFieldsV1(e.fieldsV1)) {
      list.push(wireEntry(e, opts.now, e.fieldsV1));
      continue;
    }
    let fields: FieldSet;
    try {
      fields = fieldSetOfTree(e.fieldsV1);
    } catch {
      return false;
    }
    if (reached) {
      fields = fields.difference(changed);
      if (removed) fields = fields.difference(removed);
    }
    if (isWriter && !self.empty()) list.push(wireEntry(e, opts.now, self.union(fields).toFieldsV1()));
    else if (!fields.empty()) list.push(wireEntry(e, e.time, fields.toFieldsV1()));
  }
  if (!writerFound && !self.empty()) list.push(wireEntry(info as unknown as JsonObject, opts.now, self.toFieldsV1()));
  list.sort((p, q) => entryOrder(p as unknown as ManagedEntry, q as unknown as ManagedEntry));
  if (list.length > 0) next.metadata.managedFields = list as typeof next.metadata.managedFields;
  else delete next.metadata.managedFields;
  return true;
}

/**
 * The paths of scalar values that differ between two objects of the same shape; false when the
 * shapes differ (a key added or removed, a scalar became an object) or a list changed. Top-level
 * fields that are members of `ignored` are not compared.
 */
function changedLeaves(a: unknown, b: unknown, path: string[], out: string[][], ignored?: FieldSet): boolean {
  if (a === b) return true;
  const ao = typeof a === 'object' && a !== null;
  const bo = typeof b === 'object' && b !== null;
  if (!ao && !bo) {
    out.push(path);
    return true;
  }
  if (!ao || !bo || Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && deepEqual(a, b);
  const ak = Object.keys(a as JsonObject);
  if (ak.length !== Object.keys(b as JsonObject).length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(b as JsonObject, k)) return false;
    // A top-level field the write cannot set (a status write's spec): its changes are not the writer's.
    if (ignored?.hasMember(fieldPE(k))) continue;
    if (!changedLeaves((a as JsonObject)[k], (b as JsonObject)[k], [...path, k], out)) return false;
  }
  return true;
}

/** Whether a FieldsV1 tree has `path` as a leaf (`{"f:a":{"f:b":{}}}` owns a.b). */
function ownsLeaf(fields: unknown, path: string[]): boolean {
  let node = fields;
  for (const seg of path) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as JsonObject)[`f:${seg}`];
  }
  return typeof node === 'object' && node !== null && Object.keys(node).length === 0;
}

/**
 * Creates without managedFields in the request (nearly all of them): the writer's one Update
 * entry holds every field of the object, which depends only on the object's shape (its keys,
 * the kinds of its values and its lists, which carry the items' keys), the definition, the
 * manager and the version. Computed once per shape and reused with the write's time; the
 * computation is the general one (recordUpdateSlow), so both agree by construction.
 */
const MAX_SHAPES = 4096;

function createdManaged(next: Obj, opts: WriteOptions): void {
  const createdByShape = memoFor(opts.schemas, createdBySchemas);
  // Creates come in runs of one shape (a client's or a controller's loop): the last create of the
  // definition is compared first, by a walk of the object (sameShape), before the shape's text and
  // the memo's key are built (under wrk, 1 KB ConfigMaps: shapeOf, the key and its lookup were 7.8%
  // of the server's thread, bench/api.ts --writes with --cpu-prof, 2026-11-29).
  let lasts = lastCreates.get(createdByShape);
  if (lasts === undefined) {
    lasts = new Map();
    lastCreates.set(createdByShape, lasts);
  }
  const last = lasts.get(opts.defName);
  let list: JsonObject[] | null | undefined;
  if (
    last !== undefined &&
    last.manager === opts.manager &&
    last.apiVersion === opts.apiVersion &&
    last.ignoredFields === opts.ignoredFields &&
    sameShape(next, last.shape)
  )
    list = last.list;
  else {
    const key = `${opts.defName}\u0000${opts.manager}\u0000${opts.apiVersion}\u0000${opts.ignoredFields ? pathsKey(opts.ignoredFields) : ''}\u0000${shapeOf(next)}`;
    list = createdByShape.get(key);
    if (list === undefined) {
      // The shape's tree is taken before the write's managedFields go in.
      const shape = shapeTree(next);
      recordUpdateSlow(undefined, next, opts);
      const got = next.metadata.managedFields as JsonObject[] | undefined;
      list = got ? got.map((e) => ({ ...e })) : null;
      if (createdByShape.size >= MAX_SHAPES) createdByShape.clear();
      createdByShape.set(key, list);
      remember(lasts, opts, shape, list);
      return;
    }
    remember(lasts, opts, shapeTree(next), list);
  }
  if (list === null) delete next.metadata.managedFields;
  else next.metadata.managedFields = list.map((e) => ({ ...e, time: opts.now }));
}

/** A definition's last create: who wrote it, its shape, and its managedFields as createdManaged keeps them. */
interface LastCreate {
  manager: string;
  apiVersion: string;
  ignoredFields: FieldSet | undefined;
  shape: Shape;
  list: JsonObject[] | null;
}

/** Per memo (so emptied with it), the last create of each definition. */
const lastCreates = new WeakMap<Map<string, JsonObject[] | null>, Map<string, LastCreate>>();

function remember(lasts: Map<string, LastCreate>, opts: WriteOptions, shape: Shape, list: JsonObject[] | null): void {
  // Bounded by the definitions written (a custom resource's memo goes with its schema set).
  lasts.set(opts.defName, { manager: opts.manager, apiVersion: opts.apiVersion, ignoredFields: opts.ignoredFields, shape, list });
}

/** Per set of definitions, the managedFields of a create by shape (see memoFor). */
const createdBySchemas = new WeakMap<SchemaSet, { generation: number; memo: Map<string, JsonObject[] | null> }>();

/** A set's paths as text, kept per set (writes of one resource and subresource share their set). */
const pathsKeys = new WeakMap<FieldSet, string>();

function pathsKey(s: FieldSet): string {
  let k = pathsKeys.get(s);
  if (k === undefined) {
    k = s
      .paths()
      .map((p) => pathString(p))
      .join('|');
    pathsKeys.set(s, k);
  }
  return k;
}

/** recordUpdate without the per-shape reuse for creates (@internal: exported for tests). */
export function recordUpdateSlow(old: Obj | undefined, next: Obj, opts: WriteOptions): void {
  const liveList = old?.metadata?.managedFields;
  const requested = next.metadata.managedFields;
  let managed: Managed;
  if (opts.subresource) managed = decodeOrEmpty(liveList);
  else if (isResetManagedFields(requested)) managed = new Map();
  else {
    managed = decodeOrEmpty(requested);
    if (managed.size === 0) managed = decodeOrEmpty(liveList);
  }
  const t = typerFor(opts.schemas);
  const root = t.root(opts.defName);
  try {
    const oldV = old ? withoutManagedFields(old) : {};
    updateManaged(t, root, oldV, withoutManagedFields(next), managed, entryInfo(opts, 'Update'), opts.now, opts.ignoredFields);
    setManagedFields(next, managed);
  } catch {
    if (liveList !== undefined) next.metadata.managedFields = cloneJson(liveList) as typeof liveList;
    else delete next.metadata.managedFields;
  }
}
