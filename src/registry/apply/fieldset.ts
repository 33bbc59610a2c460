/**
 * Field sets as structured-merge-diff (fieldpath) defines them: a set of paths into an object,
 * stored as a tree. A path is a list of path elements:
 *
 *  - field `f:<name>`          a struct field or a map key
 *  - key   `k:{"name":"x"}`    an item of a map list (listType=map), by its key fields (sorted)
 *  - value `v:"x"`             an item of a set list (listType=set), by its value
 *  - index `i:0`               an item by position (never produced here; accepted when decoding)
 *
 * A node of the tree may itself be a member of the set (it is owned as a whole: a leaf, an atomic
 * list/map/struct, a list item, a map entry) and may have children that are members. Serialized
 * as FieldsV1 JSON, a member without children is `{}`, and a member with children carries the
 * marker `".": {}` next to its children.
 *
 * The set operations are path-wise (union, intersection, difference), plus `recursiveDifference`
 * (also drops the subtrees of removed paths) and `leaves`.
 */

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, unknown])[] }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'index'; readonly index: number };

export type Path = readonly PathElement[];

/** Bounded caches: field elements and parsed keys recur across objects (`f:spec`, `f:metadata`, ...). */
const CACHE_LIMIT = 10_000;
const fieldCache = new Map<string, PathElement>();
const parseCache = new Map<string, PathElement>();
/** Serialized form of each element object (elements are never mutated). */
const serialized = new WeakMap<PathElement, string>();

function remember(cache: Map<string, PathElement>, k: string, pe: PathElement): PathElement {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(k, pe);
  return pe;
}

export function fieldPE(name: string): PathElement {
  return fieldCache.get(name) ?? remember(fieldCache, name, { kind: 'field', name });
}

/** A key element; the fields are sorted by name as the reference keeps them. */
export function keyPE(fields: Iterable<readonly [string, unknown]>): PathElement {
  const list = [...fields].sort((a, b) => cmpStr(a[0], b[0]));
  return { kind: 'key', fields: list };
}

const singleKeyCache = new Map<string, PathElement>();

/**
 * keyPE of one key field with a scalar value (`k:{"type":"Ready"}`, `k:{"name":"web"}`), the
 * same element object each time, so its serialization is made once (serializePE keeps it per
 * element): the typed walks make one per list item of every write.
 */
export function singleKeyPE(name: string, value: string | number | boolean): PathElement {
  const k = `${typeof value}\u0000${name}\u0000${value}`;
  return singleKeyCache.get(k) ?? remember(singleKeyCache, k, { kind: 'key', fields: [[name, value]] });
}

export const valuePE = (value: unknown): PathElement => ({ kind: 'value', value });

export const indexPE = (index: number): PathElement => ({ kind: 'index', index });

// ---------------------------------------------------------------------------------------------
// Ordering (fieldpath.PathElement.Compare and value.Compare)
// ---------------------------------------------------------------------------------------------

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpNum(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const isFloat = (v: unknown): v is number => typeof v === 'number' && !Number.isInteger(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isMapValue = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A total order over JSON values: floats, ints (numbers compare numerically), strings, bools, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  if (isFloat(a)) {
    if (!isFloat(b)) return isInt(b) ? cmpNum(a, b) : -1;
    return cmpNum(a, b);
  }
  if (isFloat(b)) return isInt(a) ? cmpNum(a, b) : 1;
  if (isInt(a)) return isInt(b) ? cmpNum(a, b) : -1;
  if (isInt(b)) return 1;
  if (typeof a === 'string') return typeof b === 'string' ? cmpStr(a, b) : -1;
  if (typeof b === 'string') return 1;
  if (typeof a === 'boolean') return typeof b === 'boolean' ? cmpNum(Number(a), Number(b)) : -1;
  if (typeof b === 'boolean') return 1;
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return -1;
    for (let i = 0; i < a.length && i < b.length; i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return cmpNum(a.length, b.length);
  }
  if (Array.isArray(b)) return 1;
  if (isMapValue(a)) {
    if (!isMapValue(b)) return -1;
    const ak = Object.keys(a).sort(cmpStr);
    const bk = Object.keys(b).sort(cmpStr);
    for (let i = 0; i < ak.length && i < bk.length; i++) {
      const c = cmpStr(ak[i]!, bk[i]!) || compareValues(a[ak[i]!], b[bk[i]!]);
      if (c !== 0) return c;
    }
    return cmpNum(ak.length, bk.length);
  }
  if (isMapValue(b)) return 1;
  return 0;
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

/** Fields before keys before values before indices; within a kind by name, key list, value, index. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  switch (a.kind) {
    case 'field':
      return cmpStr(a.name, (b as typeof a).name);
    case 'key': {
      const bf = (b as typeof a).fields;
      for (let i = 0; i < a.fields.length && i < bf.length; i++) {
        const c = cmpStr(a.fields[i]![0], bf[i]![0]) || compareValues(a.fields[i]![1], bf[i]![1]);
        if (c !== 0) return c;
      }
      return cmpNum(a.fields.length, bf.length);
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index':
      return cmpNum(a.index, (b as typeof a).index);
  }
}

// ---------------------------------------------------------------------------------------------
// Serialization of path elements (`f:`, `k:`, `v:`, `i:`) and human-readable paths
// ---------------------------------------------------------------------------------------------

/** JSON as Go's encoding/json writes it: HTML-safe escapes, sorted map keys. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, goEscape);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort(cmpStr);
  return `{${keys.map((k) => `${goJson(k)}:${goJson(o[k])}`).join(',')}}`;
}

function goEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The FieldsV1 key of a path element: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`. */
export function serializePE(pe: PathElement): string {
  let s = serialized.get(pe);
  if (s === undefined) {
    s = serializeUncached(pe);
    serialized.set(pe, s);
  }
  return s;
}

function serializeUncached(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([n, v]) => `${goJson(n)}:${goJson(v)}`).join(',')}}`;
    case 'value':
      return `v:${goJson(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

/** Thrown for a FieldsV1 key with an unknown type letter (such keys are skipped when decoding). */
class UnknownPathElementType extends Error {}

/** Parses a FieldsV1 key. */
export function parsePE(s: string): PathElement {
  return parseCache.get(s) ?? remember(parseCache, s, parseUncached(s));
}

function parseUncached(s: string): PathElement {
  if (s.length < 2) throw new Error('key must be 2 characters long:');
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldPE(body);
    case 'v':
      return valuePE(JSON.parse(body));
    case 'k': {
      const o = JSON.parse(body);
      if (!isMapValue(o)) throw new Error(`key element is not an object: ${s}`);
      return keyPE(Object.entries(o));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`);
      return indexPE(Number.parseInt(body, 10));
    }
    default:
      throw new UnknownPathElementType('unknown path element type');
  }
}

/** A Go `%q` rendering of a string (close enough: JSON escapes, \x for other control characters). */
function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** value.ToString of the reference. */
function valueToString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  const o = v as Record<string, unknown>;
  return Object.keys(o)
    .map((k) => `${k}=${valueToString(o[k])}`)
    .join('');
}

/** One path element as the reference prints it: `.name`, `[name="x",port=80]`, `[="x"]`, `[0]`. */
export function peString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([n, v]) => `${n}=${valueToString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueToString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** A path as the reference prints it in conflicts: `.spec.containers[name="nginx"].image`. */
export function pathString(path: Path): string {
  let s = '';
  for (const pe of path) s += peString(pe);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The set
// ---------------------------------------------------------------------------------------------

interface Child {
  pe: PathElement;
  set: FieldSet;
}

/** The maps every set starts with (see FieldSet.members): never written. */
const NO_MEMBERS: ReadonlyMap<string, PathElement> = new Map();
const NO_CHILDREN: ReadonlyMap<string, Child> = new Map();

/**
 * A set is a value: insert, addMember and setChild only build a new set (the typed walks, the
 * decoder), and nothing changes a set once it is handed on. So the operations share what they
 * leave alone: union and difference put the operands' untouched subtrees into their results
 * (or answer an operand itself) instead of copying them.
 */
export class FieldSet {
  /**
   * Members at this level, by serialized path element. Both maps start as a shared empty map,
   * replaced by a set's own on its first entry (addM, addC): most sets leave one of them empty
   * (a leaf level has no children, a root no members), and two new maps were a third of making a
   * set (~55 ns of ~150). Nothing writes into the shared ones.
   */
  private members: ReadonlyMap<string, PathElement> = NO_MEMBERS;
  /** Subtrees, by serialized path element; never empty. */
  private children: ReadonlyMap<string, Child> = NO_CHILDREN;
  /**
   * toFieldsV1's tree, once made. A set is not changed once built (union and the others make new
   * ones; the mutators below, which build, drop it), and a tree is never written into once made
   * (update.ts shares stored trees the same way), so a set written again, such as an applied
   * configuration's memoized set (apply.ts configSetOf), hands out the same tree.
   */
  private tree: Record<string, unknown> | undefined;

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (not its parents). The empty path (the whole object) is never a member. */
  insert(path: Path): this {
    if (path.length === 0) return this;
    this.tree = undefined;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.descend(path[i]!);
    const last = path[path.length - 1]!;
    s.addM(serializePE(last), last);
    return this;
  }

  private descend(pe: PathElement): FieldSet {
    const k = serializePE(pe);
    let c = this.children.get(k);
    if (!c) {
      c = { pe, set: new FieldSet() };
      this.addC(k, c);
    }
    return c.set;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1; i++) {
      s = s.children.get(serializePE(path[i]!))?.set;
      if (!s) return false;
    }
    return s.members.has(serializePE(path[path.length - 1]!));
  }

  /** True if the path element is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePE(pe));
  }

  /** The subset below `pe` (without the prefix); empty if none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializePE(pe))?.set ?? new FieldSet();
  }

  /**
   * O(1): a subtree is attached only when non-empty (put, setChild) or when a member is inserted
   * into it right away (insert), and nothing removes from a set in place, so a set with any
   * child is non-empty.
   */
  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  /** Number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  /** Members at this level, sorted. */
  memberElements(): PathElement[] {
    return [...this.members.values()].sort(comparePE);
  }

  /** Children at this level, sorted by path element. */
  childEntries(): { pe: PathElement; set: FieldSet }[] {
    return [...this.children.values()].sort((a, b) => comparePE(a.pe, b.pe));
  }

  /** Every member path, in the reference's order (members of a level first, then each subtree). */
  paths(): PathElement[][] {
    const out: PathElement[][] = [];
    const walk = (s: FieldSet, prefix: PathElement[]) => {
      for (const pe of s.memberElements()) out.push([...prefix, pe]);
      for (const c of s.childEntries()) walk(c.set, [...prefix, c.pe]);
    };
    walk(this, []);
    return out;
  }

  /** The member paths rendered like `.spec.replicas`. */
  toStrings(): string[] {
    return this.paths().map(pathString);
  }

  equals(o: FieldSet): boolean {
    if (this.members.size !== o.members.size) return false;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    const mine = [...this.children].filter(([, c]) => !c.set.empty());
    const theirs = [...o.children].filter(([, c]) => !c.set.empty());
    if (mine.length !== theirs.length) return false;
    for (const [k, c] of mine) {
      const oc = o.children.get(k);
      if (!oc || !c.set.equals(oc.set)) return false;
    }
    return true;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.addM(k, pe);
    for (const [k, c] of this.children) out.addC(k, { pe: c.pe, set: c.set.clone() });
    return out;
  }

  union(o: FieldSet): FieldSet {
    if (o.empty()) return this;
    if (this.empty()) return o;
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.addM(k, pe);
    for (const [k, pe] of o.members) out.addM(k, pe);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      out.put(k, c.pe, oc ? c.set.union(oc.set) : c.set);
    }
    for (const [k, c] of o.children) if (!this.children.has(k)) out.put(k, c.pe, c.set);
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (o.members.has(k)) out.addM(k, pe);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      if (oc) out.put(k, c.pe, c.set.intersection(oc.set));
    }
    return out;
  }

  /** Paths in this set and not in `o` (path by path: removing a parent keeps its children). */
  difference(o: FieldSet): FieldSet {
    return this.minus(o, false);
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.minus(o, true);
  }

  /** difference / recursiveDifference; answers `this` itself when `o` takes nothing from it. */
  private minus(o: FieldSet, recursive: boolean): FieldSet {
    if (o.empty() || this.empty()) return this;
    let same = true;
    for (const k of this.members.keys()) if (o.members.has(k)) same = false;
    const kids: [string, Child, FieldSet][] = [];
    for (const [k, c] of this.children) {
      if (recursive && o.members.has(k)) {
        same = false;
        continue;
      }
      const oc = o.children.get(k);
      const rest = oc ? c.set.minus(oc.set, recursive) : c.set;
      if (rest !== c.set) same = false;
      kids.push([k, c, rest]);
    }
    if (same) return this;
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (!o.members.has(k)) out.addM(k, pe);
    for (const [k, c, rest] of kids) {
      if (rest === c.set) out.addC(k, c);
      else out.put(k, c.pe, rest);
    }
    return out;
  }

  /** Only the leaf members: members that have no members below them. */
  leaves(): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) {
      const c = this.children.get(k);
      if (!c || c.set.empty()) out.addM(k, pe);
    }
    for (const [k, c] of this.children) out.put(k, c.pe, c.set.leaves());
    return out;
  }

  /**
   * A copy in which a child subtree also becomes a member at its level when `promote(state, pe)`
   * says so; `below(state, pe)` is the state for the child's own level (the schema, for
   * ensureNamedFieldsAreMembers). Walks the maps as they are: no sorting, no serializing.
   */
  withPromotedChildren<S>(state: S, promote: (state: S, pe: PathElement) => boolean, below: (state: S, pe: PathElement) => S): FieldSet {
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.addM(k, pe);
    for (const [k, c] of this.children) {
      if (promote(state, c.pe)) out.addM(k, c.pe);
      out.put(k, c.pe, c.set.withPromotedChildren(below(state, c.pe), promote, below));
    }
    return out;
  }

  /**
   * Whether this set and the FieldsV1 tree `json` share a member path, read from the tree as
   * it is (no decoding): a node of the tree is a member when it carries `.` or no child of a
   * known element type, as fromFieldsV1 reads it. Keys are compared as serialized, so the tree
   * must be as toFieldsV1 writes it; a value that is not an object answers true (let the
   * decoder judge it).
   */
  intersectsFieldsV1(json: unknown): boolean {
    if (!isMapValue(json)) return true;
    for (const k of this.members.keys()) {
      const node = json[k];
      if (node === undefined) continue;
      if (!isMapValue(node) || isFieldsV1Member(node)) return true;
    }
    for (const [k, c] of this.children) {
      const node = json[k];
      if (node !== undefined && c.set.intersectsFieldsV1(node)) return true;
    }
    return false;
  }

  /**
   * Whether every member path of this set is a member of the FieldsV1 tree `json`, read as
   * intersectsFieldsV1 reads it (keys as serialized: the tree must be as toFieldsV1 writes it).
   */
  isSubsetOfFieldsV1(json: unknown): boolean {
    if (!isMapValue(json)) return false;
    for (const k of this.members.keys()) {
      const node = json[k];
      if (!isMapValue(node) || !isFieldsV1Member(node)) return false;
    }
    for (const [k, c] of this.children) if (!c.set.isSubsetOfFieldsV1(json[k])) return false;
    return true;
  }

  /** Adds a member at this level (its own map made on the first). */
  private addM(k: string, pe: PathElement): void {
    let m = this.members as Map<string, PathElement>;
    if (m === NO_MEMBERS) this.members = m = new Map();
    m.set(k, pe);
  }

  /** Adds a subtree at this level (its own map made on the first). */
  private addC(k: string, c: Child): void {
    let m = this.children as Map<string, Child>;
    if (m === NO_CHILDREN) this.children = m = new Map();
    m.set(k, c);
  }

  /** Adds a subtree unless it is empty. */
  private put(k: string, pe: PathElement, set: FieldSet): void {
    if (!set.empty()) this.addC(k, { pe, set });
  }

  /** Adds `pe` as a member at this level (used by schema-aware helpers). */
  addMember(pe: PathElement): void {
    this.tree = undefined;
    this.addM(serializePE(pe), pe);
  }

  /** Replaces the subtree below `pe` (used by schema-aware helpers). */
  setChild(pe: PathElement, set: FieldSet): void {
    this.tree = undefined;
    const k = serializePE(pe);
    if (set.empty()) {
      if (this.children !== NO_CHILDREN) (this.children as Map<string, Child>).delete(k);
    } else this.addC(k, { pe, set });
  }

  // -------------------------------------------------------------------------------------------
  // FieldsV1
  // -------------------------------------------------------------------------------------------

  /** The FieldsV1 JSON object (`{"f:spec":{"f:replicas":{}}}`); key order as the reference writes it. */
  toFieldsV1(): Record<string, unknown> {
    if (this.tree === undefined) this.tree = this.emit(false);
    return this.tree;
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (includeSelf && !this.empty()) out['.'] = {};
    const items: { pe: PathElement; set?: FieldSet; member: boolean }[] = [];
    for (const [k, pe] of this.members) {
      const c = this.children.get(k);
      items.push(c && !c.set.empty() ? { pe, set: c.set, member: true } : { pe, member: true });
    }
    for (const [k, c] of this.children) {
      if (!this.members.has(k) && !c.set.empty()) items.push({ pe: c.pe, set: c.set, member: false });
    }
    items.sort((a, b) => comparePE(a.pe, b.pe));
    for (const it of items) out[serializePE(it.pe)] = it.set ? it.set.emit(it.member) : {};
    return out;
  }

  /** Parses FieldsV1 JSON (an object, or its JSON text). Keys of unknown types are ignored. */
  static fromFieldsV1(json: unknown): FieldSet {
    const v = typeof json === 'string' ? JSON.parse(json) : json;
    if (v === null || v === undefined) return new FieldSet();
    if (!isMapValue(v)) throw new Error('FieldsV1 must be a JSON object');
    return FieldSet.read(v).set;
  }

  private static read(o: Record<string, unknown>): { set: FieldSet; self: boolean } {
    const set = new FieldSet();
    let self = false;
    let any = false;
    for (const key in o) {
      const v = o[key];
      if (key === '.') {
        self = true;
        continue;
      }
      let pe: PathElement;
      try {
        pe = parsePE(key);
      } catch (e) {
        if (e instanceof UnknownPathElementType) continue;
        throw new Error(`parsing key as path element: ${(e as Error).message}`);
      }
      any = true;
      if (!isMapValue(v)) throw new Error(`FieldsV1: value of ${JSON.stringify(key)} must be an object`);
      const child = FieldSet.read(v);
      if (child.self) set.addMember(pe);
      if (!child.set.empty()) set.setChild(pe, child.set);
    }
    // A node with no children at all is a member ({}).
    return { set, self: self || !any };
  }
}

/** A FieldsV1 node that is itself a member: it has `.`, or no child of a known element type. */
function isFieldsV1Member(node: Record<string, unknown>): boolean {
  if (Object.hasOwn(node, '.')) return true;
  for (const key in node) if (key.length >= 2 && key[1] === ':' && 'fkvi'.includes(key[0]!)) return false;
  return true;
}

/** Decoded FieldsV1 trees by their JSON text; see fieldSetOfTree. */
const decodedTrees = new Map<string, FieldSet>();
const MAX_DECODED_TREES = 2048;
/** Trees longer than this (as JSON) are decoded each time: the memo's memory stays bounded. */
const MAX_MEMO_TREE_CHARS = 4096;

/**
 * FieldSet.fromFieldsV1 of a stored entry's tree, one set per distinct tree: managedFields
 * entries repeat across objects (every object a controller or client writes the same way has
 * the same tree), and an apply or update decoded each manager's tree on every write (a tenth of
 * an apply's CPU with encoding them back, bench/README.md). Sets are not changed once built, so
 * one is shared by every entry that decodes to it, and it hands out one tree (toFieldsV1) when
 * written back. A tree that does not decode throws each time.
 */
export function fieldSetOfTree(tree: unknown): FieldSet {
  if (tree === null || typeof tree !== 'object') return FieldSet.fromFieldsV1(tree);
  const key = JSON.stringify(tree);
  if (key.length > MAX_MEMO_TREE_CHARS) return FieldSet.fromFieldsV1(tree);
  let set = decodedTrees.get(key);
  if (set === undefined) {
    set = FieldSet.fromFieldsV1(tree);
    if (decodedTrees.size >= MAX_DECODED_TREES) decodedTrees.clear();
    decodedTrees.set(key, set);
  }
  return set;
}

/** Encodes a set as FieldsV1 JSON. */
export const encodeFieldsV1 = (s: FieldSet): Record<string, unknown> => s.toFieldsV1();

/** Decodes FieldsV1 JSON into a set. */
export const decodeFieldsV1 = (json: unknown): FieldSet => FieldSet.fromFieldsV1(json);
