/**
 * Static worst-case cost of a CEL expression (spec 1, "Cost"; issue 12 item 3): cel-go's checker
 * cost estimator with the Kubernetes library's EstimateCallCost and the apiextensions size
 * estimates, used to refuse custom resource rules that could cost too much before any object
 * exists. Only the maximum is computed (the reference refuses on it).
 *
 * Sizes come from the declared type of the value `self` stands for (src/cel/decl-types.ts, the
 * one mapping from schemas to CEL types): maxLength (×4: runes to bytes), maxItems,
 * maxProperties; without them, what fits in a request of 3 MiB (celconfig.MaxRequestSizeBytes)
 * given the smallest JSON each item can have. Costs follow the runtime model of src/cel/cost.ts
 * with those sizes: identifiers, selects and indexes 1, comprehensions their expansion's
 * per-element cost times the range's size, calls from their arguments' sizes. Values reach
 * expressions as JSON, so a formatted string (date-time, duration) is sized as a string here.
 *
 * The reference's own estimation table (apiextensions-apiserver schema/cel compilation_test.go
 * TestCostEstimation) is the test (estimate.test.ts).
 */
import { Environment } from '@marcbachmann/cel-js';
import type { JsonObject } from '../api/meta';
import { type DeclType, declType, jsonSchemaView, MAX_REQUEST_BYTES } from './decl-types';

const MAX_REQUEST = MAX_REQUEST_BYTES;
/** apiextensions StaticEstimatedCostLimit: the estimated cost one rule may have. */
export const STATIC_COST_LIMIT = 10_000_000;
/** apiextensions StaticEstimatedCRDCostLimit: the estimated cost of all of a CRD's rules. */
export const STATIC_CRD_COST_LIMIT = 100_000_000;

const TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

type Kind = 'string' | 'bytes' | 'list' | 'map' | 'object' | 'scalar' | 'dyn';

/** What an expression costs at most, and what its value is at most. */
interface Est {
  cost: number;
  /** Characters, bytes, elements or entries; 0/1 for scalars (see literal()). */
  size: number;
  kind: Kind;
  /** The declared type of the value, when it comes from `self`. */
  decl?: DeclType;
  /** Element estimate of lists/maps (keys for maps, as comprehensions see them). */
  elem?: Est;
}

interface AstNode {
  op: string;
  args: unknown;
  meta: { alternate?: AstNode; macro?: unknown };
}

const sat = (n: number): number => (Number.isFinite(n) && n < UNBOUNDED ? n : UNBOUNDED);
const add = (...xs: number[]): number => sat(xs.reduce((a, b) => a + b, 0));
const mul = (a: number, b: number): number => sat(a * b);
const factor = (n: number, f: number): number => (n >= UNBOUNDED ? UNBOUNDED : Math.ceil(n * f));

const DYN: Est = { cost: 0, size: UNBOUNDED, kind: 'dyn' };

// ---- sizes from declared types -------------------------------------------------------------

/** The estimate of a value of a declared type (cost 0: reading it is charged by the reader). */
function fromDecl(t: DeclType | undefined): Est {
  if (!t) return DYN;
  // Unknown fields are there at run time: as much as a map of anything.
  if (t.preservesUnknown && (t.fields?.length ?? 0) === 0) return { ...DYN, decl: t };
  const size = sat(t.maxElements);
  switch (t.kind) {
    case 'string':
    case 'timestamp':
    case 'duration':
      return { cost: 0, size, kind: 'string', decl: t };
    case 'bytes':
      return { cost: 0, size, kind: 'bytes', decl: t };
    case 'dyn':
      return { cost: 0, size, kind: 'dyn', decl: t };
    case 'list':
      return { cost: 0, size, kind: 'list', decl: t, elem: fromDecl(t.elem) };
    case 'map':
      return { cost: 0, size, kind: 'map', decl: t, elem: { cost: 0, size: MAX_REQUEST - 2, kind: 'string' } };
    case 'object':
      return { cost: 0, size, kind: 'object', decl: t, elem: { cost: 0, size: MAX_REQUEST - 2, kind: 'string' } };
    default:
      return { cost: 0, size: 1, kind: 'scalar', decl: t };
  }
}

/** A field (by its CEL name), an item or a map value of a value. */
function member(e: Est, field: string | undefined): Est {
  const t = e.decl;
  if (!t) return DYN;
  if (t.kind === 'list' || t.kind === 'map') return fromDecl(t.elem);
  const f = field !== undefined ? t.field(field) : undefined;
  return f ? fromDecl(f) : DYN;
}

// ---- the expression walk ---------------------------------------------------------------------

const isNode = (x: unknown): x is AstNode => typeof x === 'object' && x !== null && typeof (x as AstNode).op === 'string';

function literal(v: unknown): Est {
  if (typeof v === 'string') return { cost: 0, size: [...v].length, kind: 'string' };
  if (v instanceof Uint8Array) return { cost: 0, size: v.length, kind: 'bytes' };
  // cel-go sizes an integer literal 1 and a double, bool or null literal 0 (so `x == 0.0` is free).
  if (typeof v === 'bigint' || (typeof v === 'object' && v !== null)) return { cost: 0, size: 1, kind: 'scalar' };
  return { cost: 0, size: 0, kind: 'scalar' };
}

type Scope = Map<string, Est>;

function walk(n: unknown, scope: Scope): Est {
  if (!isNode(n)) return { cost: 0, size: 0, kind: 'scalar' };
  const a = n.args as unknown[];
  switch (n.op) {
    case 'value':
      return literal(n.args);
    case 'id': {
      const v = scope.get(String(n.args));
      return v ? { ...v, cost: 1 } : { ...DYN, cost: 1 };
    }
    case '.':
    case '.?': {
      const o = walk(a[0], scope);
      return { ...member(o, String(a[1])), cost: add(o.cost, 1) };
    }
    case '[]':
    case '[?]': {
      const o = walk(a[0], scope);
      const i = walk(a[1], scope);
      const key = isNode(a[1]) && a[1].op === 'value' && typeof a[1].args === 'string' ? a[1].args : undefined;
      return { ...member(o, key), cost: add(o.cost, i.cost, 1) };
    }
    case 'list': {
      const els = (a ?? []).map((x) => walk(x, scope));
      return { cost: add(10, ...els.map((e) => e.cost)), size: els.length, kind: 'list', elem: els[0] };
    }
    case 'map': {
      let cost = 30;
      for (const entry of (a ?? []) as unknown[][]) cost = add(cost, walk(entry[0], scope).cost, walk(entry[1], scope).cost);
      return { cost, size: (a ?? []).length, kind: 'map' };
    }
    case '&&':
    case '||': {
      const l = walk(a[0], scope);
      const r = walk(a[1], scope);
      return { cost: add(l.cost, r.cost), size: 0, kind: 'scalar' };
    }
    case '?:': {
      const c = walk(a[0], scope);
      const t = walk(a[1], scope);
      const f = walk(a[2], scope);
      const big = t.cost >= f.cost ? t : f;
      return { ...big, cost: add(c.cost, big.cost), size: Math.max(t.size, f.size) };
    }
    case '!_':
    case '-_': {
      // cel-go's parser folds a negative number literal (`-1.0` is a constant).
      if (n.op === '-_' && isNode(n.args) && n.args.op === 'value') return literal(n.args.args);
      const o = walk(n.args, scope);
      return { cost: add(o.cost, 1), size: o.size, kind: o.kind };
    }
    case 'call':
    case 'rcall':
      return call(n, scope);
  }
  if (Array.isArray(a) && a.length === 2 && a.every(isNode)) {
    const l = walk(a[0], scope);
    const r = walk(a[1], scope);
    return operator(n.op, l, r);
  }
  return { cost: 1, size: UNBOUNDED, kind: 'dyn' };
}

const sized = (e: Est): boolean => e.kind === 'string' || e.kind === 'bytes' || e.kind === 'list' || e.kind === 'map' || e.kind === 'dyn';

function operator(op: string, l: Est, r: Est): Est {
  const base = add(l.cost, r.cost);
  switch (op) {
    case '==':
    case '!=':
      return { cost: add(base, factor(Math.min(l.size, r.size), TRAVERSAL)), size: 0, kind: 'scalar' };
    case '<':
    case '<=':
    case '>':
    case '>=':
      if ((l.kind === 'string' || l.kind === 'bytes') && sized(r))
        return { cost: add(base, factor(Math.min(l.size, r.size), TRAVERSAL)), size: 0, kind: 'scalar' };
      return { cost: add(base, 1), size: 0, kind: 'scalar' };
    case '+':
      if (l.kind === 'string' || l.kind === 'bytes')
        return { cost: add(base, factor(add(l.size, r.size), TRAVERSAL)), size: add(l.size, r.size), kind: l.kind };
      if (l.kind === 'list') return { cost: add(base, 1), size: add(l.size, r.size), kind: 'list', elem: l.elem ?? r.elem };
      return { cost: add(base, 1), size: 1, kind: 'scalar' };
    case 'in':
      return { cost: add(base, r.kind === 'list' ? r.size : 1), size: 0, kind: 'scalar' };
    default:
      return { cost: add(base, 1), size: 1, kind: 'scalar' };
  }
}

const FOLDS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

function call(n: AstNode, scope: Scope): Est {
  const a = n.args as unknown[];
  const name = String(a[0]);
  const target = n.op === 'rcall' ? (a[1] as AstNode) : undefined;
  const argNodes = ((n.op === 'rcall' ? a[2] : a[1]) ?? []) as AstNode[];
  if (name === 'has' && n.meta.macro) return { cost: 0, size: 0, kind: 'scalar' };
  if (target && FOLDS.has(name) && n.meta.alternate) return fold(name, target, argNodes, scope);
  if (target && TWO_VAR_FOLDS.has(name) && argNodes.length >= 3 && argNodes[0]?.op === 'id' && argNodes[1]?.op === 'id')
    return fold2(name, target, argNodes, scope);
  if (name === 'bind' && n.meta.macro && argNodes.length === 3) {
    const init = walk(argNodes[1], scope);
    const inner = new Map(scope);
    inner.set(String(argNodes[0]?.args), { ...init, cost: 0 });
    const body = walk(argNodes[2], inner);
    return { ...body, cost: add(10, init.cost, body.cost) };
  }
  const t = target ? walk(target, scope) : undefined;
  const args = argNodes.map((x) => walk(x, scope));
  const base = add(t?.cost ?? 0, ...args.map((x) => x.cost));
  const r = callCost(name, t, args);
  return { ...r.result, cost: add(base, r.cost) };
}

function fold(name: string, target: AstNode, argNodes: AstNode[], scope: Scope): Est {
  const range = walk(target, scope);
  const n = range.size;
  const inner = new Map(scope);
  inner.set(String(argNodes[0]?.args), { ...(range.elem ?? DYN), cost: 0 });
  const e = argNodes.slice(1).map((x) => walk(x, inner));
  const p = e[0]?.cost ?? 0;
  switch (name) {
    case 'all':
      return { cost: add(range.cost, mul(n, add(3, p)), 1), size: 0, kind: 'scalar' };
    case 'exists':
      return { cost: add(range.cost, mul(n, add(4, p)), 1), size: 0, kind: 'scalar' };
    case 'exists_one':
      return { cost: add(range.cost, mul(n, add(2, p)), 2), size: 0, kind: 'scalar' };
    case 'filter':
      return { cost: add(range.cost, 10, mul(n, add(13, p)), 1), size: n, kind: 'list', elem: range.elem };
    default: {
      // map(x, f) or map(x, p, f)
      const f = e.length === 2 ? (e[1]?.cost ?? 0) : p;
      const pred = e.length === 2 ? p : 0;
      const el = e[e.length - 1];
      return { cost: add(range.cost, 10, mul(n, add(pred, 12, f)), 1), size: n, kind: 'list', elem: el && { ...el, cost: 0 } };
    }
  }
}

/** Two-variable comprehensions (src/cel/lib/comprehensions2.ts); the estimator's parser has no such macros. */
const TWO_VAR_FOLDS = new Set(['all', 'exists', 'existsOne', 'exists_one', 'transformList', 'transformMap', 'transformMapEntry']);

/**
 * cel-go's expansions of the two-variable comprehensions have the one-variable ones' loop steps
 * (all/exists/existsOne; transformList as map()), or insert into a map that starts as a map
 * literal (30): transformMap `@mapInsert(accu, k, e)` 3 per element, transformMapEntry
 * `@mapInsert(accu, e)` 2. A filter's cost is added to every element's.
 */
function fold2(name: string, target: AstNode, argNodes: AstNode[], scope: Scope): Est {
  const range = walk(target, scope);
  const n = range.size;
  const inner = new Map(scope);
  const first = range.kind === 'list' ? { cost: 0, size: 1, kind: 'scalar' as Kind } : { ...(range.elem ?? DYN), cost: 0 };
  const second = range.kind === 'list' ? (range.elem ?? DYN) : member(range, undefined);
  inner.set(String(argNodes[0]?.args), first);
  inner.set(String(argNodes[1]?.args), { ...second, cost: 0 });
  const e = argNodes.slice(2).map((x) => walk(x, inner));
  const body = add(...e.map((x) => x.cost));
  const last = e[e.length - 1];
  switch (name) {
    case 'all':
      return { cost: add(range.cost, mul(n, add(3, body)), 1), size: 0, kind: 'scalar' };
    case 'exists':
      return { cost: add(range.cost, mul(n, add(4, body)), 1), size: 0, kind: 'scalar' };
    case 'existsOne':
    case 'exists_one':
      return { cost: add(range.cost, mul(n, add(2, body)), 2), size: 0, kind: 'scalar' };
    case 'transformList':
      return { cost: add(range.cost, 10, mul(n, add(12, body)), 1), size: n, kind: 'list', elem: last && { ...last, cost: 0 } };
    default:
      return { cost: add(range.cost, 30, mul(n, add(name === 'transformMap' ? 3 : 2, body)), 1), size: n, kind: 'map' };
  }
}

const STRING: Kind = 'string';

/** The Kubernetes library's EstimateCallCost and cel-go's estimates of the standard functions. */
function callCost(name: string, t: Est | undefined, args: Est[]): { cost: number; result: Est } {
  const a0 = args[0];
  const scalar = (cost: number): { cost: number; result: Est } => ({ cost, result: { cost: 0, size: 1, kind: 'scalar' } });
  const str = (cost: number, size: number): { cost: number; result: Est } => ({ cost, result: { cost: 0, size, kind: STRING } });
  switch (name) {
    case 'check':
      return scalar(350_000);
    case 'contains':
      if (t && a0) return scalar(mul(factor(t.size, TRAVERSAL), factor(a0.size, TRAVERSAL)));
      break;
    case 'startsWith':
    case 'endsWith':
      if (a0) return scalar(factor(a0.size, TRAVERSAL));
      break;
    case 'matches': {
      const s = t ?? a0;
      const re = t ? a0 : args[1];
      if (s && re) return scalar(mul(factor(add(s.size, 1), TRAVERSAL), factor(re.size, REGEX_LENGTH)));
      break;
    }
    case 'find':
    case 'findAll':
      if (t && a0) {
        const cost = mul(factor(add(t.size, 1), TRAVERSAL), factor(a0.size, REGEX_LENGTH));
        return name === 'find'
          ? str(cost, t.size)
          : { cost, result: { cost: 0, size: t.size, kind: 'list', elem: { cost: 0, size: t.size, kind: STRING } } };
      }
      break;
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      if (t) return str(factor(t.size, TRAVERSAL), t.size);
      break;
    case 'replace':
      if (t) {
        const from = args[0]?.size ?? 0;
        const to = args[1]?.size ?? 0;
        const size = from === 0 ? add(mul(t.size + 1, to), t.size) : to <= from ? t.size : mul(Math.ceil(t.size / from), to);
        return str(factor(t.size, 2 * TRAVERSAL), size);
      }
      break;
    case 'split':
      if (t)
        return {
          cost: factor(t.size, 2 * TRAVERSAL),
          result: { cost: 0, size: t.size, kind: 'list', elem: { cost: 0, size: t.size, kind: STRING } },
        };
      break;
    case 'join':
      if (t) {
        let size = mul(t.size, t.elem?.size ?? UNBOUNDED);
        if (a0) size = add(size, mul(a0.size, Math.max(0, t.size - 1)));
        return str(factor(size, TRAVERSAL), size);
      }
      break;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      if (t?.kind === 'list') {
        const el = t.elem;
        const per = el && (el.kind === 'string' || el.kind === 'bytes') ? add(1, factor(el.size, TRAVERSAL)) : 1;
        return { cost: mul(t.size, per), result: el ? { ...el, cost: 0 } : { cost: 0, size: 1, kind: 'scalar' } };
      }
      if (t) return scalar(factor(t.size, TRAVERSAL));
      break;
    case 'url':
    case 'quantity':
    case 'isQuantity':
    case 'isURL':
    case 'isIP':
    case 'isCIDR':
    case 'cidr':
      if (a0) return scalar(factor(a0.size, TRAVERSAL));
      break;
    case 'ip':
      if (a0) return scalar(factor(a0.size, TRAVERSAL));
      return scalar(1);
    case 'string':
    case 'bytes':
      if (a0 && (a0.kind === 'string' || a0.kind === 'bytes')) return str(factor(a0.size, TRAVERSAL), a0.size);
      return str(1, 20);
    case 'size':
      return scalar(1);
  }
  return { cost: 1, result: { cost: 0, size: UNBOUNDED, kind: 'dyn' } };
}

// ---- entry points ------------------------------------------------------------------------------

let parser: Environment | undefined;

/**
 * The estimated maximum cost of an expression whose `self` (and `oldSelf`) is a value of
 * `schema` (a custom resource's schema node; `resource`: the root of a resource);
 * undefined when it does not parse (the compiler reports that).
 */
export function estimateCost(expr: string, schema: JsonObject | undefined, resource = false): number | undefined {
  parser ??= new Environment({ enableOptionalTypes: true, unlistedVariablesAreDyn: true });
  let ast: AstNode;
  try {
    ast = (parser.parse(expr) as unknown as { ast: AstNode }).ast;
  } catch {
    return undefined;
  }
  const self = fromDecl(schema && declType(jsonSchemaView(schema), resource));
  const scope: Scope = new Map([
    ['self', self],
    ['oldSelf', self],
  ]);
  return walk(ast, scope).cost;
}

/**
 * The reference's getCostErrorMessage: "<what> exceeds budget by factor of <f>x (try
 * simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and
 * strings are declared)".
 */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factorText = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${factorText} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** How many times a node's rules may run in one object: the sizes of the lists and maps around it. */
export function cardinalityOf(parents: JsonObject[]): number {
  let c = 1;
  for (const p of parents) {
    const t = declType(jsonSchemaView(p));
    if (t.kind === 'list' || t.kind === 'map') c = mul(c, sat(t.maxElements));
  }
  return c;
}
