/**
 * Lists with set or map semantics (a schema's `x-kubernetes-list-type`, stored as
 * `x-svc-list-type`; the reference's apiserver cel/common values.go): for custom-resource rules a
 * `set` or `map` list compares and concatenates as its type says; every other list, `atomic` or
 * unannotated, is an ordinary CEL list.
 *
 *   set  a == b   same size, and every element of b is in a (order ignored)
 *        a + b    a's elements in order, then b's elements not yet present, in order (union)
 *   map  a == b   same size, and every element of b equals a's element with the same key values
 *        a + b    a b element whose key values a has replaces that element in place; others are
 *                 appended in order (`[{k:a,v:1},{k:b,v:2}] + [{k:b,v:3},{k:c,v:4}]` is
 *                 `[{k:a,v:1},{k:b,v:3},{k:c,v:4}]`)
 *
 * The left operand decides, as in the reference (cel-go calls `lhs.Equal(rhs)`, `lhs.Add(rhs)`):
 * `self.tags == ['b', 'a']` ignores order and `['b', 'a'] == self.tags` does not; `self.tags + ['x']`
 * is a union and `['x'] + self.tags` a concatenation. A typed `+` gives a list of the same type, so
 * `self.a + self.b == self.c` compares as sets. Nested equality follows the same rules:
 * `self == oldSelf` on an object holding a set list ignores that list's order.
 *
 * A typed list is a TypedList: an array (indexing, size, `in`, macros and list functions work as
 * on any list) whose `constructor` reads as Array, because cel-js takes a value for a list only
 * when `value.constructor === Array` (and Array methods then build plain arrays: `.map()` of a
 * TypedList is a plain list). Values are typed by src/cel/list-shape.ts from a schema.
 *
 * cel-js cannot overload its built-in list operators (registering `list<V> == list<V>` again is
 * refused), so registerTypedLists replaces the handlers of `list<V> == list<V>`, `!=` and `+` in
 * the environment's operator table by ones that take a TypedList left operand and otherwise call
 * the original: ordinary lists pay one `instanceof` per list comparison or concatenation, and
 * nothing else changes. The table is reached through a checked expression's AST (`[] == []`
 * records its operator candidates); if cel-js changes that, building an environment fails loudly.
 */
import type { Environment } from '@marcbachmann/cel-js';

/** How a list compares and concatenates: the schema's list type (atomic lists are not typed). */
export type ListSemantics = { readonly type: 'set' } | { readonly type: 'map'; readonly keys: readonly string[] };

/** A list with set or map semantics; build it with typedList. */
export class TypedList extends Array<unknown> {
  readonly semantics: ListSemantics;
  constructor(semantics: ListSemantics) {
    super();
    this.semantics = semantics;
  }
}
// cel-js recognises lists by `value.constructor === Array`; Array methods (map, slice, concat)
// create their results from it too, so they give plain lists.
Object.defineProperty(TypedList.prototype, 'constructor', { value: Array, writable: true, configurable: true });

/** A typed list of the given elements (already CEL values). */
export function typedList(semantics: ListSemantics, elements: Iterable<unknown>): TypedList {
  const out = new TypedList(semantics);
  for (const e of elements) out.push(e);
  return out;
}

/** What a cel-js operator handler receives as the evaluator (the members used here). */
interface Evaluator {
  debugType(v: unknown): unknown;
  readonly registry: { findBinaryOverload(op: string, left: unknown, right: unknown): { handler: Handler } | false | undefined };
}
type Handler = (a: unknown, b: unknown, ast: unknown, ev: Evaluator) => unknown;

/** CEL equality of two values, as cel-js's own (1 == 1.0; lists and maps by the registry's `==`). */
function celEqual(a: unknown, b: unknown, ast: unknown, ev: Evaluator): boolean {
  if (a === b) return true;
  switch (typeof a) {
    case 'bigint':
      return typeof b === 'number' && Number(a) === b;
    case 'number':
      return typeof b === 'bigint' && a === Number(b);
    case 'object': {
      if (a === null || b === null || typeof b !== 'object') return false;
      const lt = ev.debugType(a);
      if (lt !== ev.debugType(b)) return false;
      const o = ev.registry.findBinaryOverload('==', lt, lt);
      return o ? o.handler(a, b, ast, ev) === true : false;
    }
    default:
      return false;
  }
}

/** A scalar's identity in a JS Set or Map: ints and integral doubles alike (CEL 1 == 1.0). */
function scalarKey(v: unknown): unknown | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return v;
    case 'number':
      if (Number.isInteger(v)) return BigInt(v);
      return Number.isNaN(v) ? undefined : v; // NaN equals nothing
    case 'undefined':
      return null;
    default:
      return v === null ? null : undefined;
  }
}

/** Membership in a set list: scalars by a JS Set, anything else by CEL equality. */
class Members {
  private readonly scalars = new Set<unknown>();
  private readonly others: unknown[] = [];
  constructor(
    elements: readonly unknown[],
    private readonly ast: unknown,
    private readonly ev: Evaluator,
  ) {
    for (const e of elements) this.add(e);
  }
  has(v: unknown): boolean {
    const k = scalarKey(v);
    if (k !== undefined) return this.scalars.has(k);
    for (const o of this.others) if (celEqual(o, v, this.ast, this.ev)) return true;
    return false;
  }
  add(v: unknown): void {
    const k = scalarKey(v);
    if (k !== undefined) this.scalars.add(k);
    else this.others.push(v);
  }
}

/**
 * The key of a map list element: its key fields' values (missing and null alike), or undefined
 * when it is not an object (it then matches no element, as the reference's error key).
 */
function mapKey(e: unknown, keys: readonly string[]): string | undefined {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return undefined;
  let out = '';
  for (const k of keys) {
    const v = e instanceof Map ? e.get(k) : Object.hasOwn(e, k) ? (e as Record<string, unknown>)[k] : undefined;
    const s = scalarKey(v);
    if (s === undefined) return undefined;
    out += `${typeof s === 'string' ? JSON.stringify(s) : typeof s === 'bigint' ? `${s}n` : String(s)},`;
  }
  return out;
}

const asArray = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : [...(v as Iterable<unknown>)]);

function typedEquals(a: TypedList, other: unknown, ast: unknown, ev: Evaluator): boolean {
  const b = asArray(other);
  if (a.length !== b.length) return false;
  const s = a.semantics;
  if (s.type === 'set') {
    const members = new Members(a, ast, ev);
    for (const x of b) if (!members.has(x)) return false;
    return true;
  }
  const byKey = new Map<string, unknown>();
  for (const e of a) {
    const k = mapKey(e, s.keys);
    if (k !== undefined) byKey.set(k, e);
  }
  for (const x of b) {
    const k = mapKey(x, s.keys);
    const e = k === undefined ? undefined : byKey.get(k);
    if (e === undefined || !celEqual(e, x, ast, ev)) return false;
  }
  return true;
}

function typedAdd(a: TypedList, other: unknown, ast: unknown, ev: Evaluator): TypedList {
  const out = typedList(a.semantics, a);
  const s = a.semantics;
  if (s.type === 'set') {
    const members = new Members(a, ast, ev);
    for (const x of asArray(other)) {
      if (members.has(x)) continue;
      members.add(x);
      out.push(x);
    }
    return out;
  }
  // Positions of a's keys only: b elements with a key a lacks are all appended, as the reference.
  const at = new Map<string, number>();
  a.forEach((e, i) => {
    const k = mapKey(e, s.keys);
    if (k !== undefined) at.set(k, i);
  });
  for (const x of asArray(other)) {
    const k = mapKey(x, s.keys);
    const i = k === undefined ? undefined : at.get(k);
    if (i === undefined) out.push(x);
    else out[i] = x;
  }
  return out;
}

const EXTEND: Record<'==' | '!=' | '+', (original: Handler) => Handler> = {
  '==': (original) => (a, b, ast, ev) => (a instanceof TypedList ? typedEquals(a, b, ast, ev) : original(a, b, ast, ev)),
  '!=': (original) => (a, b, ast, ev) => (a instanceof TypedList ? !typedEquals(a, b, ast, ev) : original(a, b, ast, ev)),
  '+': (original) => (a, b, ast, ev) => (a instanceof TypedList ? typedAdd(a, b, ast, ev) : original(a, b, ast, ev)),
};

/** The parts of cel-js's operator table (registry Candidates, OperatorDeclaration) used here. */
interface OperatorDeclaration {
  readonly leftType: { readonly name: string };
  readonly rightType: { readonly name: string } | null;
  readonly handler: Handler;
}
interface OperatorCandidates {
  readonly declarations: OperatorDeclaration[];
  /** Appends a declaration and clears the table's lookup caches. */
  add(decl: OperatorDeclaration): void;
}

/** Handlers installed by registerTypedLists (a table may be shared by several environments). */
const installed = new WeakSet<Handler>();

/** Gives the environment's list `==`, `!=` and `+` the semantics of TypedList operands. */
export function registerTypedLists(e: Environment): void {
  for (const op of ['==', '!=', '+'] as const) {
    const probe = e.parse(`[] ${op} []`);
    probe.check();
    const table = (probe.ast as unknown as { candidates?: OperatorCandidates }).candidates;
    const i = table?.declarations.findIndex((d) => d.leftType.name === 'list<V>' && d.rightType?.name === 'list<V>') ?? -1;
    const decl = table?.declarations[i];
    if (!table || !decl) throw new Error(`bug: cel-js has no 'list<V> ${op} list<V>' operator to extend`);
    if (installed.has(decl.handler)) continue;
    const handler = EXTEND[op](decl.handler);
    installed.add(handler);
    // A copy with the new handler (declarations are frozen), added last: add() drops the cached
    // lookups that still point at the original.
    const copy = Object.freeze(Object.assign(Object.create(Object.getPrototypeOf(decl)), decl, { handler }));
    table.declarations.splice(i, 1);
    table.add(copy);
  }
}
