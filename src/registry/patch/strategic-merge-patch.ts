/**
 * Strategic merge patch (`application/strategic-merge-patch+json`): a JSON merge patch whose lists
 * merge according to the schema, with directives. A port of the apply half of
 * k8s.io/apimachinery/pkg/util/strategicpatch (patch.go, StrategicMergeMapPatch with
 * MergeParallelList and IgnoreUnmatchedNulls, the way the API server calls it), driven by our
 * schema instead of Go struct tags:
 *
 * - Lists whose field carries patchStrategy `merge` merge: lists of objects by patchMergeKey (an
 *   item with `$patch: delete` removes every item with its key, `$patch: replace` makes the other
 *   items the whole list), lists of scalars as sets (with `$deleteFromPrimitiveList/<field>`
 *   removing values). Every other list is replaced. Like the reference, `x-kubernetes-list-type`
 *   and `map-type` (server-side-apply markers) play no part: the reference reads only the
 *   patchStrategy/patchMergeKey struct tags, so `listType: map` without patchStrategy replaces and
 *   `mapType: atomic` maps still merge.
 * - Objects merge member by member; null deletes; `$patch: replace` replaces the object with the
 *   patch's other members, `$patch: delete` empties it; a field whose patchStrategy is `replace`
 *   (PodDisruptionBudgetSpec.selector) is replaced.
 * - `$retainKeys: [...]` clears the object's members not listed (the patch may only set listed
 *   members). The `retainKeys` patch strategy (DeploymentSpec.strategy, PodSpec.volumes) only tells
 *   clients to send that directive; applying does not depend on it, as in the reference.
 * - `$setElementOrder/<field>: [...]` orders a merging list: listed items in that order, the
 *   server's other items interleaved where they were.
 *
 * Order of merged lists follows the reference exactly, including its quirks: items the patch adds
 * come before the server's items unless `$setElementOrder` says otherwise, and the way
 * `$setElementOrder` interleaves server-only items depends on the server list as modified in place
 * by the merge (Go slice aliasing, emulated here with the capacity the server's unstructured
 * conversion gives: the list's length).
 *
 * Leniency: fields not in the schema (and everything under `any`-typed or preserve-unknown fields)
 * merge like a JSON merge patch with lists replaced; the reference fails such patches with a 500
 * (`unable to find api field in struct ...`) when both sides hold an object or a list there.
 *
 * Errors: PatchError 'invalid' (400) for a patch that is not an object and for malformed
 * directives (the reference's ErrBadPatchFormatFor*), 'unprocessable' (422) for lists of lists,
 * and 'internal' (500, no reason, raw text) for what the reference passes through unchanged
 * (missing merge key, unknown `$patch` value, `$patch: merge`, mixed list item types, ...).
 */
import type { SchemaSet } from '../../schema/engine';
import type { Schema } from '../../schema/types';
import { PatchError, unprocessable } from './errors';
import { cloneJson, getOwn, goFormat, goJsonType, goTypeName, hasOwn, isObject, type JsonObject, setOwn } from './json';

const DIRECTIVE = '$patch';
const DELETE = 'delete';
const REPLACE = 'replace';
const MERGE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

// mergepatch's error texts.
const BAD_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const BAD_RETAIN_KEYS = 'invalid patch format of retainKeys';
const BAD_SET_ELEMENT_ORDER = 'invalid patch format of setElementOrder list';
const NO_LIST_OF_LISTS = 'lists of lists are not supported';

const internal = (message: string): PatchError => new PatchError('internal', message);
const badArgType = (expected: string, actual: unknown): PatchError =>
  internal(`expected a ${expected}, but received a ${goTypeName(actual)}`);
const noMergeKey = (m: unknown, key: string): PatchError => internal(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
/** Go's `%s` of a decoded JSON value. */
const goS = (t: unknown): string =>
  typeof t === 'string'
    ? t
    : t === null
      ? '%!s(<nil>)'
      : isObject(t) || Array.isArray(t)
        ? goFormat(t)
        : `%!s(${goTypeName(t)}=${goFormat(t)})`;
const badPatchType = (t: unknown, m: unknown): PatchError => internal(`unknown patch type: ${goS(t)} in map: ${goFormat(m)}`);

const MAP_TYPE = 'map[string]interface {}';
const SLICE_TYPE = '[]interface {}';

/**
 * Applies the strategic merge patch `patch` to `doc`, an object of definition `defName`. Neither
 * input is modified; the result shares no structure with them. A `null` patch changes nothing.
 */
export function applyStrategicMergePatch(doc: object, patch: unknown, schemas: SchemaSet, defName: string): JsonObject {
  const root = schemas.get(defName);
  if (!root) throw new Error(`unknown definition ${defName}`);
  if (patch === null) return cloneJson(doc) as JsonObject;
  if (!isObject(patch)) {
    throw new PatchError('invalid', `json: cannot unmarshal ${goJsonType(patch)} into Go value of type ${MAP_TYPE}`);
  }
  const original = isObject(doc) ? (cloneJson(doc) as JsonObject) : {};
  return new Merger(schemas).mergeMap(original, patch, root);
}

interface FieldMeta {
  /** The field's schema (unresolved), null when unknown. */
  schema: Schema | null;
  strategies: string[];
  mergeKey: string;
}

const NO_META: FieldMeta = { schema: null, strategies: [], mergeKey: '' };

/** A Go slice header over a shared backing array: writes below `cap` are seen by every header on `buf`. */
interface GoSlice {
  buf: unknown[];
  len: number;
  cap: number;
}

function goAppend(s: GoSlice, v: unknown): GoSlice {
  if (s.len < s.cap) {
    s.buf[s.len] = v;
    return { buf: s.buf, len: s.len + 1, cap: s.cap };
  }
  const buf = s.buf.slice(0, s.len);
  buf.push(v);
  return { buf, len: s.len + 1, cap: Number.POSITIVE_INFINITY };
}

const items = (s: GoSlice): unknown[] => (s.len === s.buf.length ? s.buf.slice() : s.buf.slice(0, s.len));

type Kind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as Kind;
}

/** The common kind of the items of all lists (the reference's sliceElementType). */
function sliceElementKind(...lists: unknown[][]): Kind {
  let prev: Kind | undefined;
  for (const l of lists) {
    for (const v of l) {
      const k = kindOf(v);
      if (prev === undefined) {
        prev = k;
        if (k === 'array') throw unprocessable('unprocessable', NO_LIST_OF_LISTS);
      } else if (k !== prev) {
        throw internal(`list element types are not identical: ${goFormat(lists)}`);
      }
    }
  }
  if (prev === undefined) throw internal('no elements in any of the given slices');
  return prev;
}

function extractRetainKeysPatchStrategy(strategies: string[]): string {
  switch (strategies.length) {
    case 0:
      return '';
    case 1:
      return strategies[0] === RETAIN_KEYS_STRATEGY ? '' : strategies[0]!;
    case 2:
      if (strategies[0] === RETAIN_KEYS_STRATEGY) return strategies[1]!;
      if (strategies[1] === RETAIN_KEYS_STRATEGY) return strategies[0]!;
      break;
  }
  throw internal(`unexpected patch strategy: [${strategies.join(' ')}]`);
}

/** `$deleteFromPrimitiveList/x` → `x`. */
function extractKey(s: string, prefix: string): string {
  const at = s.indexOf('/');
  if (at < 0 || s.slice(0, at) !== prefix)
    throw new PatchError('invalid', prefix === SET_ELEMENT_ORDER ? BAD_SET_ELEMENT_ORDER : BAD_PRIMITIVE_LIST);
  return s.slice(at + 1);
}

/** Go `==` on decoded JSON scalars (maps and lists never compare equal here). */
const goEq = (a: unknown, b: unknown): boolean => a === b;

/**
 * The value of a map list item's merge key for ordering comparisons: Go's `item[mergeKey]` gives
 * nil both for an absent key and for a non-map item.
 */
const NIL = Symbol('nil');
function keyValue(item: unknown, mergeKey: string, isMap: boolean): unknown {
  if (!isMap) return item;
  if (!isObject(item)) return NIL;
  const v = getOwn(item, mergeKey);
  return v === undefined || v === null ? NIL : v;
}

/** Index of `val` in `l` (by merge key value for map lists), -1 when absent. */
function indexIn(l: unknown[], val: unknown, mergeKey: string, isMap: boolean): number {
  const want = keyValue(val, mergeKey, isMap);
  for (let i = 0; i < l.length; i++) if (goEq(keyValue(l[i], mergeKey, isMap), want)) return i;
  return -1;
}

/** A fast `indexIn(l, ·)` for repeated lookups in the same (unchanging) list. */
function indexer(l: unknown[], mergeKey: string, isMap: boolean): (v: unknown) => number {
  if (l.length < 8) return (v) => indexIn(l, v, mergeKey, isMap);
  const first = new Map<unknown, number>();
  for (let i = 0; i < l.length; i++) {
    const k = keyValue(l[i], mergeKey, isMap);
    if (!first.has(k)) first.set(k, i);
  }
  return (v) => first.get(keyValue(v, mergeKey, isMap)) ?? -1;
}

/** Go's sort.SliceStable (insertion sort in blocks of 20, then SymMerge), with the same comparator calls. */
function goSliceStable(data: unknown[], less: (a: unknown, b: unknown) => boolean): void {
  const lessAt = (i: number, j: number): boolean => less(data[i], data[j]);
  const swap = (i: number, j: number): void => {
    const t = data[i];
    data[i] = data[j];
    data[j] = t;
  };
  const insertionSort = (a: number, b: number): void => {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
  };
  const swapRange = (a: number, b: number, n: number): void => {
    for (let i = 0; i < n; i++) swap(a + i, b + i);
  };
  const rotate = (a: number, m: number, b: number): void => {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      let i = m;
      let j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = n - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };
  const n = data.length;
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertionSort(a, b);
    a = b;
    b += blockSize;
  }
  insertionSort(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const l of lists) {
    for (const item of l) {
      if (!isObject(item)) throw badArgType(MAP_TYPE, item);
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    }
  }
}

/** Splits a list of maps into items without and with `$patch: delete`. */
function extractToDeleteItems(l: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const del: unknown[] = [];
  for (const v of l) {
    if (!isObject(v)) throw badArgType(MAP_TYPE, v);
    if (getOwn(v, DIRECTIVE) === DELETE) del.push(v);
    else keep.push(v);
  }
  return [keep, del];
}

/** Sorts `toSort` by the position of its items in `order` (items with `$patch: delete` last). */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, isMap: boolean): unknown[] {
  let del: unknown[] = [];
  let list = toSort;
  if (isMap) {
    validateMergeKeyInLists(mergeKey, toSort, order);
    [list, del] = extractToDeleteItems(toSort);
  }
  const at = indexer(order, mergeKey, isMap);
  goSliceStable(list, (x, y) => {
    const ix = at(x);
    if (ix >= 0) {
      const iy = at(y);
      if (iy >= 0) return ix < iy;
    }
    return true;
  });
  return del.length ? list.concat(del) : list;
}

/** Interleaves server-only items (`left`) into the patch's items (`right`) by the server's order. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, isMap: boolean): unknown[] {
  const size = left.length + right.length;
  const out = new Array<unknown>(size);
  const at = indexer(serverOrder, mergeKey, isMap);
  let i = 0;
  let j = 0;
  for (let k = 0; k < size; k++) {
    if (i >= left.length && j < right.length) {
      out[k] = right[j++];
    } else if (j >= right.length && i < left.length) {
      out[k] = left[i++];
    } else {
      const li = at(left[i]);
      const ri = at(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out[k] = left[i++];
      else out[k] = right[j++];
    }
  }
  return out;
}

function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: Kind,
): unknown[] {
  const isMap = kind === 'object';
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, isMap);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, isMap);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, isMap);
}

function partitionPrimitivesByPresentInList(list: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const inPatch = new Set(by);
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of list) (inPatch.has(v) ? patch : serverOnly).push(v);
  return [patch, serverOnly];
}

/** The item of `l` whose `key` equals `value`, and its index (the reference's findMapInSliceBasedOnKeyValue). */
function findByKey(l: unknown[], len: number, key: string, value: unknown): number {
  for (let k = 0; k < len; k++) {
    const v = l[k];
    if (!isObject(v)) throw internal(`value for key ${k} is not a map`);
    if (hasOwn(v, key) && goEq(v[key], value)) return k;
  }
  return -1;
}

function partitionMapsByPresentInList(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  // With only maps in `by`, membership is a set lookup; otherwise keep the reference's scan and its errors.
  let keys: Set<unknown> | undefined;
  if (by.length >= 8 && by.every(isObject)) {
    keys = new Set();
    for (const b of by as JsonObject[]) if (hasOwn(b, mergeKey)) keys.add(b[mergeKey]);
  }
  for (const v of list) {
    if (!isObject(v)) throw badArgType(MAP_TYPE, v);
    if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    const found = keys ? keys.has(v[mergeKey]) : findByKey(by, by.length, mergeKey, v[mergeKey]) >= 0;
    (found ? patch : serverOnly).push(v);
  }
  return [patch, serverOnly];
}

/** Go's deduplicateScalars on s.buf[0:s.len] in place (it moves the last item into a duplicate's slot). */
function deduplicateScalars(s: GoSlice): GoSlice {
  const b = s.buf;
  let length = s.len - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goEq(b[i], b[j])) {
        b[j] = b[length];
        length--;
        j--;
      }
    }
  }
  return { buf: b, len: Math.max(length + 1, 0), cap: s.cap };
}

function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  const del = new Set(toDelete);
  const out: unknown[] = [];
  for (const v of current) if (!del.has(v)) out.push(v);
  return out;
}

function containsDirectiveMarker(item: unknown): boolean {
  return isObject(item) && hasOwn(item, DIRECTIVE);
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return goEq(left, right);
  if (!isObject(left)) throw badArgType(MAP_TYPE, left);
  if (!isObject(right)) throw badArgType(MAP_TYPE, right);
  if (!hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return goEq(left[mergeKey], right[mergeKey]);
}

/** Checks that the patch list's items appear in `$setElementOrder` in the same relative order. */
function validatePatchWithSetOrderList(patchList: unknown[], setOrder: unknown[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? extractToDeleteItems(patchList)[0] : patchList;
  let pi = 0;
  let si = 0;
  while (pi < nonDelete.length && si < setOrder.length) {
    if (containsDirectiveMarker(nonDelete[pi])) {
      pi++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[pi], setOrder[si], mergeKey)) pi++;
    si++;
  }
  if (pi < nonDelete.length && si >= setOrder.length) {
    throw internal(`the order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(setOrder)}`);
  }
}

/**
 * A copy of `v` without the items and members that carry `$patch` (the reference's
 * removeDirectives), optionally also without null members (discardNullValuesFromPatch).
 * undefined when `v` itself carries `$patch`.
 */
function stripDirectives(v: unknown, discardNulls: boolean): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const y = stripDirectives(x, discardNulls);
      if (y !== undefined) out.push(y);
    }
    return out;
  }
  if (!isObject(v)) return v;
  const marker = getOwn(v, DIRECTIVE);
  if (marker !== undefined && !(discardNulls && marker === null)) return undefined;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === null && discardNulls) continue;
    const y = stripDirectives(x, discardNulls);
    if (y !== undefined) setOwn(out, k, y);
  }
  return out;
}

class Merger {
  constructor(private readonly schemas: SchemaSet) {}

  private resolved(s: Schema | null): Schema | null {
    return s ? this.schemas.resolve(s) : null;
  }

  /** Patch metadata of member `key` of an object of schema `parent`. */
  private field(parent: Schema | null, key: string): FieldMeta {
    const r = this.resolved(parent);
    if (r?.type !== 'object') return NO_META;
    const f = r.properties && Object.hasOwn(r.properties, key) ? r.properties[key] : undefined;
    if (f) {
      return {
        schema: f,
        strategies: f.patchStrategy ? f.patchStrategy.split(',') : [],
        mergeKey: f.type === 'array' ? (f.patchMergeKey ?? '') : '',
      };
    }
    // A Go map: values have no patch metadata.
    if (r.additionalProperties) return { schema: r.additionalProperties, strategies: [], mergeKey: '' };
    return NO_META;
  }

  /** Schema of the items of a list field. */
  private itemsOf(s: Schema | null): Schema | null {
    const r = this.resolved(s);
    return r && r.type === 'array' ? r.items : null;
  }

  /** Merges `patch` into `original` (owned, modified in place) and returns the result. */
  mergeMap(original: JsonObject, patch: JsonObject, schema: Schema | null): JsonObject {
    if (hasOwn(patch, DIRECTIVE)) return this.directiveInMergeMap(patch[DIRECTIVE], patch);
    applyRetainKeysDirective(original, patch);
    const consumed = this.mergePatchIntoOriginal(original, patch, schema);
    for (const pk of Object.keys(patch)) {
      if (pk === RETAIN_KEYS || consumed?.has(pk)) continue;
      const patchV = patch[pk];
      let k = pk;
      let isDeleteList = false;
      if (pk.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
        k = extractKey(pk, DELETE_FROM_PRIMITIVE_LIST);
        isDeleteList = true;
      }
      if (patchV === null) {
        if (hasOwn(original, k)) delete original[k];
        continue;
      }
      const cur = getOwn(original, k);
      const curKind = cur === undefined ? undefined : kindOf(cur);
      if (curKind !== kindOf(patchV)) {
        // Absent or of another type: take the patch value, less its directives and nulls.
        if (!isDeleteList) {
          const v = stripDirectives(patchV, true);
          if (v === undefined) delete original[k];
          else setOwn(original, k, v);
        }
        continue;
      }
      if (curKind === 'object') {
        const meta = this.field(schema, k);
        const strategy = extractRetainKeysPatchStrategy(meta.strategies);
        setOwn(original, k, strategy !== REPLACE ? this.mergeMap(cur as JsonObject, patchV as JsonObject, meta.schema) : cloneJson(patchV));
      } else if (curKind === 'array') {
        const meta = this.field(schema, k);
        const strategy = extractRetainKeysPatchStrategy(meta.strategies);
        setOwn(original, k, this.mergeSliceHandler(cur as unknown[], patchV as unknown[], meta, strategy, isDeleteList));
      } else {
        setOwn(original, k, patchV);
      }
    }
    return original;
  }

  private directiveInMergeMap(directive: unknown, patch: JsonObject): JsonObject {
    if (directive === REPLACE) {
      const out = cloneJson(patch) as JsonObject;
      delete out[DIRECTIVE];
      return out;
    }
    if (directive === DELETE) return {};
    throw badPatchType(directive, patch);
  }

  /**
   * Processes the `$setElementOrder/<field>` directives of `patch` together with their lists.
   * Returns the patch members it consumed (the directives and the lists), if any.
   */
  private mergePatchIntoOriginal(original: JsonObject, patch: JsonObject, schema: Schema | null): Set<string> | undefined {
    let consumed: Set<string> | undefined;
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
      consumed ??= new Set();
      consumed.add(key);
      const setOrder = patch[key];
      if (!Array.isArray(setOrder)) throw badArgType(SLICE_TYPE, setOrder);
      const originalKey = extractKey(key, SET_ELEMENT_ORDER);
      const foundOriginal = hasOwn(original, originalKey);
      const foundPatch = hasOwn(patch, originalKey);
      const originalList = foundOriginal ? original[originalKey] : undefined;
      const patchList = foundPatch ? patch[originalKey] : undefined;
      if (foundOriginal && !Array.isArray(originalList)) throw badArgType(SLICE_TYPE, originalList);
      if (foundPatch && !Array.isArray(patchList)) throw badArgType(SLICE_TYPE, patchList);
      const originalItems = (originalList as unknown[] | undefined) ?? [];
      const patchItemsIn = (patchList as unknown[] | undefined) ?? [];
      const meta = this.field(schema, originalKey);
      const strategy = extractRetainKeysPatchStrategy(meta.strategies);
      validatePatchWithSetOrderList(patchItemsIn, setOrder, meta.mergeKey);

      let merged: unknown[];
      if (foundOriginal && !foundPatch) merged = originalItems;
      else if (!foundOriginal && foundPatch) merged = stripDirectives(patchItemsIn, false) as unknown[];
      else if (foundOriginal && foundPatch) merged = this.mergeSliceHandler(originalItems, patchItemsIn, meta, strategy, false);
      else continue;

      const [patchItems, serverOnly] =
        meta.mergeKey === ''
          ? partitionPrimitivesByPresentInList(merged, setOrder)
          : partitionMapsByPresentInList(merged, setOrder, meta.mergeKey);
      // originalItems may have been changed in place by the merge (see GoSlice): the reference
      // orders by the list as it is then.
      const kind = sliceElementKind(originalItems, patchItemsIn);
      setOwn(original, originalKey, normalizeElementOrder(patchItems, serverOnly, setOrder, originalItems, meta.mergeKey, kind));
      consumed.add(originalKey);
    }
    return consumed;
  }

  /** `original` is owned and may be modified in place. Delete lists apply whatever the strategy. */
  private mergeSliceHandler(original: unknown[], patch: unknown[], meta: FieldMeta, strategy: string, isDeleteList: boolean): unknown[] {
    if (strategy !== MERGE && !isDeleteList) return cloneJson(patch) as unknown[];
    return this.mergeSlice(original, patch, this.itemsOf(meta.schema), meta.mergeKey, isDeleteList);
  }

  private mergeSlice(backing: unknown[], patch: unknown[], itemSchema: Schema | null, mergeKey: string, isDeleteList: boolean): unknown[] {
    if (backing.length === 0 && patch.length === 0) return backing;
    const kind = sliceElementKind(backing, patch);
    let original: GoSlice = { buf: backing, len: backing.length, cap: backing.length };
    let patchList = patch;
    let merged: GoSlice;
    if (kind !== 'object') {
      if (isDeleteList) return deleteFromSlice(backing, patch);
      // append(original, patch...) reallocates (the capacity is the length) unless the patch is
      // empty, in which case the deduplication below works on the server's list in place.
      let both = original;
      if (patch.length > 0) {
        const buf = backing.concat(patch);
        both = { buf, len: buf.length, cap: buf.length };
      }
      merged = deduplicateScalars(both);
    } else {
      if (mergeKey === '') throw internal(`cannot merge lists without merge key for ${this.goKind(itemSchema)}`);
      const special = this.mergeSliceWithSpecialElements(original, patch, mergeKey);
      original = special.original;
      patchList = special.patch;
      merged = this.mergeSliceWithoutSpecialElements(original, patchList, mergeKey, itemSchema);
    }
    const mergedItems = items(merged);
    const [patchItems, serverOnly] =
      mergeKey === ''
        ? partitionPrimitivesByPresentInList(mergedItems, patchList)
        : partitionMapsByPresentInList(mergedItems, patchList, mergeKey);
    return normalizeElementOrder(patchItems, serverOnly, patchList, items(original), mergeKey, kind);
  }

  private goKind(s: Schema | null): string {
    const r = this.resolved(s);
    if (!r) return 'interface';
    if (r.type === 'object') return r.properties ? 'struct' : 'map';
    return r.type;
  }

  /** Applies the `$patch` items of a map list: deletions by key, or `replace`. */
  private mergeSliceWithSpecialElements(original: GoSlice, patch: unknown[], mergeKey: string): { original: GoSlice; patch: unknown[] } {
    const rest: unknown[] = [];
    let replace = false;
    for (const v of patch) {
      const item = v as JsonObject;
      if (!hasOwn(item, DIRECTIVE)) {
        rest.push(v);
        continue;
      }
      const directive = item[DIRECTIVE];
      if (directive === DELETE) {
        if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
        original = deleteMatchingEntries(original, mergeKey, item[mergeKey]);
      } else if (directive === REPLACE) {
        replace = true;
      } else if (directive === MERGE) {
        throw internal('merging lists cannot yet be specified in the patch');
      } else {
        throw badPatchType(directive, item);
      }
    }
    if (replace) {
      const buf = cloneJson(rest) as unknown[];
      return { original: { buf, len: buf.length, cap: Number.POSITIVE_INFINITY }, patch: [] };
    }
    return { original, patch: rest };
  }

  private mergeSliceWithoutSpecialElements(original: GoSlice, patch: unknown[], mergeKey: string, itemSchema: Schema | null): GoSlice {
    for (const v of patch) {
      const item = v as JsonObject;
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      const at = findByKey(original.buf, original.len, mergeKey, item[mergeKey]);
      if (at >= 0) original.buf[at] = this.mergeMap(original.buf[at] as JsonObject, item, itemSchema);
      else original = goAppend(original, cloneJson(v));
    }
    return original;
  }
}

/** Removes every item whose merge key equals `value`, in place as Go's `append(s[:i], s[i+1:]...)` does. */
function deleteMatchingEntries(s: GoSlice, mergeKey: string, value: unknown): GoSlice {
  const b = s.buf;
  let len = s.len;
  for (;;) {
    const at = findByKey(b, len, mergeKey, value);
    if (at < 0) break;
    for (let k = at; k < len - 1; k++) b[k] = b[k + 1];
    len--;
  }
  return { buf: b, len, cap: s.cap };
}

/** `$retainKeys`: clears the members of `original` not listed; the patch may only set listed members. */
function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw new PatchError('invalid', BAD_RETAIN_KEYS);
  const keep = new Set<unknown>(list);
  for (const k of Object.keys(patch)) {
    if (k === RETAIN_KEYS || patch[k] === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(k)) throw new PatchError('invalid', BAD_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}
