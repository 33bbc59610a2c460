/**
 * Schema-aware operations on decoded JSON objects, after structured-merge-diff's `typed` package:
 * the field set an object sets (ToFieldSet), the comparison of two objects (Compare: added,
 * modified, removed), the merge of an applied configuration into a live object (Merge), and the
 * removal of items named by a set (RemoveItems).
 *
 * How the schema shapes paths:
 *  - scalars are leaves;
 *  - lists: atomic (default) is one leaf; `set` items are `v:<value>` elements; `map` items are
 *    `k:{...}` elements keyed by the list-map keys (a key absent from an item takes the key
 *    field's schema default). Without listType, patchStrategy `merge` reads as a map list keyed
 *    by patchMergeKey, or a set without a merge key;
 *  - structs and maps are granular (recursed) unless mapType is atomic (one leaf); the mapType
 *    on a ref overrides the target's;
 *  - `any` content and the unknown fields of preserveUnknown structs are "deduced" from the value:
 *    objects granular, arrays atomic, scalars leaves (the reference's `__untyped_deduced_`).
 */

import { cloneJson, deepEqual, isObject, type JsonObject } from '../../api/meta';
import type { SchemaSet } from '../../schema/engine';
import type { DefName, Schema } from '../../schema/types';
import { FieldSet, fieldPE, keyPE, type PathElement, pathString, peString, serializePE, singleKeyPE, valuePE } from './fieldset';

export { deepEqual };

type Json = unknown;

/** An own property (never one inherited from Object.prototype, whatever the key). */
const own = (o: JsonObject | undefined, k: string): Json => (o !== undefined && Object.hasOwn(o, k) ? o[k] : undefined);

/** Sets an own property (a `__proto__` key stays data, as JSON.parse makes it). */
function setOwn(o: JsonObject, k: string, v: Json): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** A value that does not fit the list rules of its schema (missing key, duplicate, bad set item). */
export class TypedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TypedValueError';
  }
}

// ---------------------------------------------------------------------------------------------
// Schema nodes
// ---------------------------------------------------------------------------------------------

const ANY: Schema = { type: 'any' };

export type TypeNode =
  | { k: 'scalar' }
  | { k: 'deduced' }
  | {
      k: 'struct';
      name: string | undefined;
      fields: Record<string, Schema>;
      /** Schema of undeclared keys (additionalProperties, or ANY with preserveUnknown). */
      extra: Schema | null;
      atomic: boolean;
      /** Fields always present in the reference's typed objects (non-pointer structs), with their zero shape. */
      skeleton: Record<string, Json> | null;
    }
  | { k: 'map'; elem: Schema; atomic: boolean }
  | { k: 'list'; elem: Schema; rel: 'atomic' | 'set' | 'map'; keys: string[] };

/**
 * Struct definitions that the reference's Go types embed by value (not by pointer): in a typed
 * object they are never absent, so a comparison never sees them appear or disappear as a whole.
 * This only affects the `".": {}` markers of Update entries (which non-leaf nodes count as added).
 */
const NON_POINTER_STRUCTS = new Set([
  'ObjectMeta',
  'PodSpec',
  'PodStatus',
  'PodTemplateSpec',
  'ResourceRequirements',
  'VolumeResourceRequirements',
  'ContainerState',
  'DeploymentSpec',
  'DeploymentStatus',
  'DeploymentStrategy',
  'ReplicaSetSpec',
  'ReplicaSetStatus',
  'DaemonSetSpec',
  'DaemonSetStatus',
  'DaemonSetUpdateStrategy',
  'StatefulSetSpec',
  'StatefulSetStatus',
  'StatefulSetUpdateStrategy',
  'ReplicationControllerSpec',
  'ReplicationControllerStatus',
  'JobSpec',
  'JobStatus',
  'JobTemplateSpec',
  'CronJobSpec',
  'CronJobStatus',
  'ServiceSpec',
  'ServiceStatus',
  'LoadBalancerStatus',
  'IngressSpec',
  'IngressStatus',
  'IngressLoadBalancerStatus',
  'IngressClassSpec',
  'IngressBackend',
  'ServiceBackendPort',
  'IPAddressSpec',
  'ServiceCIDRSpec',
  'ServiceCIDRStatus',
  'CSIDriverSpec',
  'CSINodeSpec',
  'VolumeAttachmentSpec',
  'VolumeAttachmentSource',
  'VolumeAttachmentStatus',
  'NamespaceSpec',
  'NamespaceStatus',
  'NodeSpec',
  'NodeStatus',
  'NodeSystemInfo',
  'NodeDaemonEndpoints',
  'DaemonEndpoint',
  'PersistentVolumeSpec',
  'PersistentVolumeStatus',
  'PersistentVolumeClaimSpec',
  'PersistentVolumeClaimStatus',
  'ResourceQuotaSpec',
  'ResourceQuotaStatus',
  'LimitRangeSpec',
  'NetworkPolicySpec',
  'PodDisruptionBudgetSpec',
  'PodDisruptionBudgetStatus',
  'HorizontalPodAutoscalerSpec',
  'HorizontalPodAutoscalerStatus',
  'CustomResourceDefinitionSpec',
  'CustomResourceDefinitionStatus',
  'CustomResourceDefinitionNames',
  'LeaseSpec',
  'PriorityLevelConfigurationSpec',
  'PriorityLevelConfigurationStatus',
  'FlowSchemaSpec',
  'FlowSchemaStatus',
  'ValidatingAdmissionPolicySpec',
  'ValidatingAdmissionPolicyStatus',
  'ValidatingAdmissionPolicyBindingSpec',
]);

/** `<Struct>.<field>` embedded by pointer although the type is usually embedded by value. */
const POINTER_FIELDS = new Set([
  'ReplicationControllerSpec.template',
  'VolumeAttachmentSource.inlineVolumeSpec',
  'IngressSpec.defaultBackend',
]);

/** Other always-present fields: Go fields without `omitempty` (null lists) or by-value atomic structs. */
const PRESENT_FIELDS: Record<string, Json> = {
  'PodSpec.containers': null,
  'NetworkPolicySpec.podSelector': {},
};

const shortName = (def: string): string => def.slice(def.lastIndexOf('.') + 1);

export class Typer {
  private readonly cache = new WeakMap<Schema, TypeNode>();

  /**
   * Root schemas by definition, made once per generation of the definitions: a new one each call
   * missed the node cache and built the root's node again (with its skeleton) on every apply and
   * every compared update, ~7% of an apply (bench/README.md, 2026-11-29).
   */
  private readonly roots = new Map<DefName, Schema>();
  private rootsGeneration = -1;

  constructor(readonly schemas: SchemaSet) {}

  /** The root schema of a definition. */
  root(defName: DefName): Schema {
    if (this.rootsGeneration !== this.schemas.generation) {
      this.roots.clear();
      this.rootsGeneration = this.schemas.generation;
    }
    let s = this.roots.get(defName);
    if (s === undefined) {
      if (!this.schemas.get(defName)) throw new Error(`unknown definition ${defName}`);
      s = { type: 'ref', ref: defName };
      this.roots.set(defName, s);
    }
    return s;
  }

  node(s: Schema): TypeNode {
    let n = this.cache.get(s);
    if (!n) {
      n = this.build(s);
      this.cache.set(s, n);
    }
    return n;
  }

  private build(s: Schema): TypeNode {
    let mapType: 'atomic' | 'granular' | undefined;
    let name: string | undefined;
    let cur = s;
    for (let hops = 0; cur.type === 'ref'; hops++) {
      if (mapType === undefined && cur.mapType) mapType = cur.mapType;
      name = cur.ref;
      const next = this.schemas.get(cur.ref);
      if (!next) throw new Error(`unknown definition ${cur.ref}`);
      if (hops > 64) throw new Error(`ref cycle at ${cur.ref}`);
      cur = next;
    }
    switch (cur.type) {
      case 'object': {
        const atomic = (mapType ?? cur.mapType) === 'atomic';
        if (cur.properties) {
          const extra = cur.additionalProperties ?? (cur.preserveUnknown ? ANY : null);
          return { k: 'struct', name, fields: cur.properties, extra, atomic, skeleton: this.skeleton(name, cur.properties) };
        }
        return { k: 'map', elem: cur.additionalProperties ?? ANY, atomic };
      }
      case 'array': {
        let rel = cur.listType;
        let keys = cur.listMapKeys ?? [];
        const merge = (cur.patchStrategy ?? '').split(',').includes('merge');
        if (!rel) {
          if (merge && cur.patchMergeKey) rel = 'map';
          else if (merge) rel = 'set';
          else rel = 'atomic';
        }
        if (rel === 'map' && keys.length === 0 && cur.patchMergeKey) keys = [cur.patchMergeKey];
        return { k: 'list', elem: cur.items, rel, keys };
      }
      case 'any':
        return { k: 'deduced' };
      default:
        return { k: 'scalar' };
    }
  }

  private skeleton(name: string | undefined, fields: Record<string, Schema>): Record<string, Json> | null {
    if (!name) return null;
    const parent = shortName(name);
    let out: Record<string, Json> | null = null;
    for (const f in fields) {
      const p = fields[f]!;
      const id = `${parent}.${f}`;
      let zero: Json | undefined = own(PRESENT_FIELDS, id);
      if (zero === undefined && p.type === 'ref' && NON_POINTER_STRUCTS.has(shortName(p.ref)) && !POINTER_FIELDS.has(id)) zero = {};
      if (zero !== undefined) {
        out ??= {};
        out[f] = zero;
      }
    }
    return out;
  }

  /** The node of a value: deduced schemas take their shape from the value. */
  nodeFor(s: Schema, v: Json): TypeNode {
    const n = this.node(s);
    return n.k === 'deduced' ? deducedNode(v) : n;
  }

  /** Schema of a struct/map member. */
  memberSchema(n: TypeNode, key: string): Schema {
    if (n.k === 'struct') return (own(n.fields, key) as Schema | undefined) ?? n.extra ?? ANY;
    if (n.k === 'map') return n.elem;
    return ANY;
  }

  /** The path element of a list item; throws TypedValueError for an item that has none. */
  itemPE(n: Extract<TypeNode, { k: 'list' }>, item: Json): PathElement {
    if (n.rel === 'map') {
      if (item === null) throw new TypedValueError('associative list with keys may not have a null element');
      if (!isObject(item)) throw new TypedValueError('associative list with keys may not have non-map elements');
      const elem = this.node(n.elem);
      if (n.keys.length === 1) {
        const v = own(item, n.keys[0]!);
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return singleKeyPE(n.keys[0]!, v);
      }
      const fields: [string, Json][] = [];
      for (const key of n.keys) {
        let v = own(item, key);
        if (v === undefined && elem.k === 'struct') v = (own(elem.fields, key) as Schema | undefined)?.default;
        if (v === undefined) {
          throw new TypedValueError(
            `associative list with keys has an element that omits key field ${JSON.stringify(key)} (and doesn't have default value)`,
          );
        }
        fields.push([key, v]);
      }
      return keyPE(fields);
    }
    if (isObject(item)) throw new TypedValueError("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) throw new TypedValueError('not supported: associative list with lists as elements');
    if (item === null) throw new TypedValueError("associative list without keys has an element that's an explicit null");
    return valuePE(item);
  }
}

const DEDUCED_MAP: TypeNode = { k: 'map', elem: ANY, atomic: false };
const DEDUCED_LIST: TypeNode = { k: 'list', elem: ANY, rel: 'atomic', keys: [] };
const SCALAR: TypeNode = { k: 'scalar' };

function deducedNode(v: Json): TypeNode {
  if (isObject(v)) return DEDUCED_MAP;
  if (Array.isArray(v)) return DEDUCED_LIST;
  return SCALAR;
}

function isLeaf(n: TypeNode): boolean {
  return (
    n.k === 'scalar' || n.k === 'deduced' || ((n.k === 'struct' || n.k === 'map') && n.atomic) || (n.k === 'list' && n.rel === 'atomic')
  );
}

function isEmptyContainer(v: Json): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) {
    for (const _ in v) return false;
    return true;
  }
  return false;
}

/** Both present (not null) but of different JSON kinds (object, array, scalar): compared as leaves. */
function mismatched(l: Json, r: Json): boolean {
  if (l === undefined || r === undefined || l === null || r === null) return false;
  return Array.isArray(l) !== Array.isArray(r) || isObject(l) !== isObject(r);
}

function clone<T>(v: T): T {
  return cloneJson(v) as T;
}

/** A list's items with their path elements; later duplicates of an element are set aside. */
interface IndexedList {
  order: PathElement[];
  byKey: Map<string, { pe: PathElement; item: Json; dups: Json[] }>;
}

function indexList(t: Typer, n: Extract<TypeNode, { k: 'list' }>, list: Json[] | undefined, path: Path, strict: boolean): IndexedList {
  const out: IndexedList = { order: [], byKey: new Map() };
  if (!list) return out;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    let pe: PathElement;
    try {
      pe = t.itemPE(n, item);
    } catch (e) {
      if (strict && e instanceof TypedValueError) throw new TypedValueError(`${pathString(path)}: element ${i}: ${e.message}`);
      continue;
    }
    // The FieldsV1 key: the element's serialization is cached with it for the sets built next.
    const k = serializePE(pe);
    const seen = out.byKey.get(k);
    if (seen) {
      if (strict) throw new TypedValueError(`${pathString(path)}: duplicate entries for key ${peString(pe)}`);
      seen.dups.push(item);
      continue;
    }
    out.byKey.set(k, { pe, item, dups: [] });
    out.order.push(pe);
  }
  return out;
}

type Path = PathElement[];

// ---------------------------------------------------------------------------------------------
// ToFieldSet
// ---------------------------------------------------------------------------------------------

/**
 * The set of fields a value sets: leaves (scalars, atomic lists/maps/structs), list items
 * (members with the `.` marker when they have children) and map entries; struct fields that
 * are themselves granular are not members, only their contents. With `strict`, list items
 * without a usable path element throw TypedValueError; otherwise they are skipped.
 */
export function toFieldSet(t: Typer, schema: Schema, value: Json, strict = true): FieldSet {
  const set = new FieldSet();
  const walk = (s: Schema, v: Json, path: Path): void => {
    const n = t.nodeFor(s, v);
    if (isLeaf(n)) {
      set.insert(path);
      return;
    }
    if (n.k === 'list') {
      if (!Array.isArray(v)) return;
      for (let i = 0; i < v.length; i++) {
        let pe: PathElement;
        try {
          pe = t.itemPE(n, v[i]);
        } catch (e) {
          if (strict && e instanceof TypedValueError) throw new TypedValueError(`${pathString(path)}: element ${i}: ${e.message}`);
          continue;
        }
        path.push(pe);
        walk(n.elem, v[i], path);
        set.insert(path);
        path.pop();
      }
      return;
    }
    if (!isObject(v)) return;
    for (const key in v) {
      path.push(fieldPE(key));
      walk(t.memberSchema(n, key), v[key], path);
      if (n.k !== 'struct' || !Object.hasOwn(n.fields, key)) set.insert(path);
      path.pop();
    }
  };
  walk(schema, value, []);
  return set;
}

// ---------------------------------------------------------------------------------------------
// Compare
// ---------------------------------------------------------------------------------------------

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Compares `lhs` (old) with `rhs` (new): leaves present only in rhs are added, only in lhs
 * removed, in both with different values modified; non-leaf nodes (list items, map entries,
 * maps, lists, structs) present on one side only are added or removed too. Empty or absent
 * containers on both sides compare as leaves. List items that have no path element are ignored,
 * as are later duplicates. Top-level fields that are members of `skip` are not compared.
 */
export function compare(t: Typer, schema: Schema, lhs: Json, rhs: Json, skip?: FieldSet): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const leaf = (l: Json, r: Json, path: Path) => {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!deepEqual(l, r)) c.modified.insert(path);
  };
  const walk = (s: Schema, l: Json, r: Json, path: Path): void => {
    const n = t.nodeFor(s, r !== undefined ? r : l);
    const kindMismatch = mismatched(l, r);
    if (isLeaf(n) || kindMismatch || (isEmptyContainer(l) && isEmptyContainer(r))) {
      leaf(l, r, path);
      return;
    }
    if (n.k === 'list') {
      const li = indexList(t, n, Array.isArray(l) ? l : undefined, path, false);
      const ri = indexList(t, n, Array.isArray(r) ? r : undefined, path, false);
      for (const [k, { pe, item }] of li.byKey) {
        path.push(pe);
        walk(n.elem, item, ri.byKey.get(k)?.item, path);
        path.pop();
      }
      for (const [k, { pe, item }] of ri.byKey) {
        if (li.byKey.has(k)) continue;
        path.push(pe);
        walk(n.elem, undefined, item, path);
        path.pop();
      }
    } else if (n.k === 'struct' || n.k === 'map') {
      const lo = isObject(l) ? l : undefined;
      const ro = isObject(r) ? r : undefined;
      const skel = n.k === 'struct' ? n.skeleton : null;
      // The keys of either side and of the skeleton, each once, in that order (without a Set of
      // them: a third of a small object's comparison went to building and reading it), each
      // with its values on both sides (a key enumerated on one side is that side's own).
      if (lo) for (const key in lo) member(n, lo, ro, skel, key, lo[key], own(ro, key), path);
      if (ro) for (const key in ro) if (lo === undefined || !Object.hasOwn(lo, key)) member(n, lo, ro, skel, key, undefined, ro[key], path);
      if (skel) {
        for (const key in skel) {
          if ((lo === undefined || !Object.hasOwn(lo, key)) && (ro === undefined || !Object.hasOwn(ro, key))) {
            member(n, lo, ro, skel, key, undefined, undefined, path);
          }
        }
      }
    }
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  };
  const member = (
    n: Extract<TypeNode, { k: 'struct' | 'map' }>,
    lo: JsonObject | undefined,
    ro: JsonObject | undefined,
    skel: Record<string, Json> | null,
    key: string,
    lc: Json,
    rc: Json,
    path: Path,
  ): void => {
    if (skel && Object.hasOwn(skel, key)) {
      if (lo && lc === undefined) lc = skel[key];
      if (ro && rc === undefined) rc = skel[key];
    }
    if (lc === undefined && rc === undefined) return;
    // A top-level field the write cannot set (a status write's spec): whatever differs there
    // would be taken out of the comparison again.
    if (path.length === 0 && skip?.hasMember(fieldPE(key))) return;
    // Near the root, an unchanged branch (a status update's spec and metadata) is skipped
    // whole: equal values add nothing to any set, and deepEqual is cheaper than the walk.
    // Deeper down the walk itself finds the differences (no quadratic re-comparison).
    if (path.length < 2 && lc !== undefined && rc !== undefined && deepEqual(lc, rc)) return;
    path.push(fieldPE(key));
    walk(t.memberSchema(n, key), lc, rc, path);
    path.pop();
  };
  walk(schema, lhs, rhs, []);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Merge
// ---------------------------------------------------------------------------------------------

/**
 * Merges a partially specified object `rhs` into `lhs`: rhs wins on every leaf it sets, nothing
 * is removed; map lists and sets are merged by item (order: like lhs where rhs does not reorder
 * shared items, rhs items inserted where rhs places them). Throws TypedValueError when rhs has
 * list items without a usable key or duplicates.
 */
export function merge(t: Typer, schema: Schema, lhs: Json, rhs: Json): Json {
  const walk = (s: Schema, l: Json, r: Json, path: Path): Json => {
    const n = t.nodeFor(s, r !== undefined ? r : l);
    const kindMismatch = mismatched(l, r);
    if (isLeaf(n) || kindMismatch || (isEmptyContainer(l) && isEmptyContainer(r))) return r !== undefined ? clone(r) : clone(l);
    // An explicit null for a container with content on the other side leaves it alone.
    if (r === null) r = undefined;
    if (n.k === 'list') return mergeList(n, Array.isArray(l) ? l : undefined, Array.isArray(r) ? r : undefined, path);
    if (n.k === 'struct' || n.k === 'map') {
      const lo = isObject(l) ? l : undefined;
      const ro = isObject(r) ? r : undefined;
      const out: JsonObject = {};
      if (lo) {
        for (const key in lo) {
          path.push(fieldPE(key));
          const v = walk(t.memberSchema(n, key), lo[key], own(ro, key), path);
          path.pop();
          if (v !== undefined) setOwn(out, key, v);
        }
      }
      if (ro) {
        for (const key in ro) {
          if (lo && Object.hasOwn(lo, key)) continue;
          path.push(fieldPE(key));
          const v = walk(t.memberSchema(n, key), undefined, ro[key], path);
          path.pop();
          if (v !== undefined) setOwn(out, key, v);
        }
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    return r !== undefined ? clone(r) : clone(l);
  };

  const mergeList = (n: Extract<TypeNode, { k: 'list' }>, l: Json[] | undefined, r: Json[] | undefined, path: Path): Json => {
    const ri = indexList(t, n, r, path, true);
    const li = indexList(t, n, l, path, false);
    const out: Json[] = [];
    const emit = (pe: PathElement, lc: Json, rc: Json) => {
      path.push(pe);
      const v = walk(n.elem, lc, rc, path);
      path.pop();
      if (v !== undefined) out.push(v);
    };
    const inR = (pe: PathElement) => ri.byKey.has(serializePE(pe));
    const sharedOrder = ri.order.filter((pe) => li.byKey.has(serializePE(pe)));
    let nextShared: PathElement | undefined = sharedOrder.shift();
    const same = (a: PathElement, b: PathElement | undefined) => b !== undefined && serializePE(a) === serializePE(b);
    const lOrder = li.order;
    const rOrder = ri.order;
    let lI = 0;
    let rI = 0;
    while (lI < lOrder.length || rI < rOrder.length) {
      if (lI < lOrder.length && rI < rOrder.length) {
        const pe = lOrder[lI]!;
        if (same(pe, rOrder[rI])) {
          const k = serializePE(pe);
          emit(pe, li.byKey.get(k)!.item, ri.byKey.get(k)!.item);
          lI++;
          rI++;
          nextShared = sharedOrder.shift();
          continue;
        }
        if (inR(pe) && nextShared !== undefined && !same(pe, nextShared)) {
          // A shared item, but not the one due in this round.
          lI++;
          continue;
        }
      }
      if (lI < lOrder.length) {
        const pe = lOrder[lI]!;
        if (!inR(pe)) {
          // Take the lhs item (and any duplicates of it, untouched).
          const e = li.byKey.get(serializePE(pe))!;
          emit(pe, e.item, undefined);
          for (const d of e.dups) out.push(clone(d));
          lI++;
          continue;
        }
      }
      if (rI < rOrder.length) {
        const pe = rOrder[rI]!;
        const k = serializePE(pe);
        emit(pe, li.byKey.get(k)?.item, ri.byKey.get(k)!.item);
        rI++;
        if (same(pe, nextShared)) nextShared = sharedOrder.shift();
      }
    }
    // lhs items without a path element are kept as they are.
    if (l) {
      for (const item of l) {
        try {
          t.itemPE(n, item);
        } catch {
          out.push(clone(item));
        }
      }
    }
    return out.length > 0 ? out : undefined;
  };

  return walk(schema, lhs, rhs, []);
}

// ---------------------------------------------------------------------------------------------
// RemoveItems and named-field membership
// ---------------------------------------------------------------------------------------------

/**
 * A copy of `value` without the members of `set` (a member removes the field, map entry or list
 * item with everything below it). A container left empty by removals disappears from its parent.
 */
export function removeItems(t: Typer, schema: Schema, value: Json, set: FieldSet): Json {
  const walk = (s: Schema, v: Json, toRemove: FieldSet): Json => {
    const n = t.nodeFor(s, v);
    if (n.k === 'scalar' || n.k === 'deduced') return v;
    if (n.k === 'list') {
      if (!Array.isArray(v) || n.rel === 'atomic') return v;
      if (v.length === 0) return undefined;
      const out: Json[] = [];
      for (const item of v) {
        let pe: PathElement;
        try {
          pe = t.itemPE(n, item);
        } catch {
          out.push(item);
          continue;
        }
        if (toRemove.hasMember(pe)) continue;
        const sub = toRemove.withPrefix(pe);
        const nv = sub.empty() ? item : walk(n.elem, item, sub);
        out.push(nv === undefined ? null : nv);
      }
      return out.length > 0 ? out : undefined;
    }
    if (!isObject(v) || n.atomic) return v;
    const out: JsonObject = {};
    for (const key in v) {
      const pe = fieldPE(key);
      if (toRemove.hasMember(pe)) continue;
      const sub = toRemove.withPrefix(pe);
      const nv = sub.empty() ? v[key] : walk(t.memberSchema(n, key), v[key], sub);
      if (nv !== undefined) setOwn(out, key, nv);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  return walk(schema, value, set);
}

/**
 * The set plus the struct fields (named fields) on the way to its members: with `a.b.c` in the
 * set, `a` becomes a member if `a` is a declared struct field (not if it is a map key).
 */
export function ensureNamedFieldsAreMembers(t: Typer, schema: Schema, set: FieldSet): FieldSet {
  return set.withPromotedChildren(
    schema,
    (s, pe) => {
      if (pe.kind !== 'field') return false;
      const n = t.node(s);
      return n.k === 'struct' && Object.hasOwn(n.fields, pe.name);
    },
    (s, pe) => {
      if (pe.kind === 'field') return t.memberSchema(t.node(s), pe.name);
      const n = t.node(s);
      return n.k === 'list' ? n.elem : ANY;
    },
  );
}
