/**
 * Runtime cost of CEL evaluations (spec 1, "Cost"; issue 12 item 3), as the reference counts it:
 * cel-go's CostTracker with the Kubernetes library's CallCost.
 *
 * A costed program is a second copy of the parsed expression whose every node reports its value
 * after evaluation; the tracker keeps them on a stack (as cel-go's refValStack), so a call finds
 * its arguments' values there and charges what cel-go charges:
 *
 *   constant 0 · identifier 1 · each select or index qualifier 1 (a select on something that is
 *   not an attribute: 2) · has() 1 + its root identifier · list literal 10 · map literal 30 ·
 *   && || ?: 0 · `in` a list: its size · == != and string/bytes ordering: ⌈min(size)·0.1⌉ ·
 *   string/bytes +: ⌈(m+n)·0.1⌉ · matches/find/findAll: ⌈(1+len)·0.1⌉·⌈len(re)·0.25⌉ ·
 *   contains: ⌈len·0.1⌉·⌈len(sub)·0.1⌉ · the Kubernetes library table below · any other call 1.
 *
 * Macros are comprehensions in cel-go and charged as their expansions: per element all() 3 + its
 * predicate (2 for the loop condition, 1 for the accumulator), exists() 4, exists_one() 1-2,
 * map() 12 and filter() 13 per element kept (1 otherwise), plus 1 for the result and 10 for the
 * empty list map()/filter()/cel.bind() start from; the two-variable comprehensions as their
 * expansions too (twoVarCost). cel-go's own runtime cost tests are the table in cost.test.ts.
 *
 * Past the limit the evaluation stops with cel-go's "operation cancelled: actual cost limit
 * exceeded" (every later node throws too, so no `||`, `&&` or all() can absorb it). The limits
 * and the budget that charges each run: src/cel/budget.ts.
 */

export const COST_LIMIT_MESSAGE = 'operation cancelled: actual cost limit exceeded';

export class CostLimitExceeded extends Error {
  constructor() {
    super(COST_LIMIT_MESSAGE);
  }
}

const TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;

/** One cel-js AST node, as far as the tracker looks at it. */
interface Node {
  op: string;
  args: unknown;
  meta: { evaluate?: Evaluate; alternate?: Node; macro?: Macro };
  evaluate: Evaluate;
}
type Evaluate = (ev: unknown, ast: unknown, ctx: unknown) => unknown;
interface Macro {
  evaluate: Evaluate;
  args?: unknown;
  val?: Node;
  exp?: Node;
  var?: string;
}
interface Comprehension {
  iterable: Node;
  init: Node;
  step: Node;
}

type Kind = 'all' | 'exists' | 'exists_one' | 'map' | 'filter';
/** Two-variable comprehensions (src/cel/lib/comprehensions2.ts), cel-js macros charged here. */
type TwoVarKind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

/** What each node is, decided once at instrumentation. */
interface Role {
  /** Comprehension kind (the comprehension node of a macro). */
  fold?: Kind;
  /** A cel.bind() or has() macro call. */
  macro?: 'bind' | 'has';
  /** A two-variable comprehension call. */
  twoVar?: TwoVarKind;
  /** The call or operator name of a call node. */
  fn?: string;
  /** Argument nodes of a call (receiver first), in cel-go's order. */
  argNodes?: Node[];
  /** A sized call of two arguments (BINARY_COST): its cost from their values. */
  binary?: BinaryCost;
}

/** The cost of one evaluation; reused (evaluations are synchronous). */
export class CostTracker {
  cost = 0;
  limit = Number.POSITIVE_INFINITY;
  exceeded = false;
  nodes: Node[] = [];
  values: unknown[] = [];
  sp = 0;
  /** Evaluations of comprehension steps so far (a comprehension charges the difference). */
  steps = 0;
  /** Sizes of the maps comprehensions ran over in this evaluation (counting keys is O(n)). */
  private sizes: WeakMap<object, number> | undefined;

  reset(limit: number): void {
    this.cost = 0;
    this.limit = limit;
    this.exceeded = false;
    this.sp = 0;
    this.steps = 0;
    this.sizes = undefined;
  }

  /** sizeOf(v), remembered for plain objects (a nested comprehension sizes its map each time). */
  sizeOf(v: unknown): number {
    if (!isPlainObject(v)) return sizeOf(v);
    this.sizes ??= new WeakMap();
    let n = this.sizes.get(v);
    if (n === undefined) {
      n = sizeOf(v);
      this.sizes.set(v, n);
    }
    return n;
  }

  push(n: Node, v: unknown): void {
    this.nodes[this.sp] = n;
    this.values[this.sp++] = v;
  }

  /** Adds `c`; past the limit, stops the evaluation (and every node after it). */
  charge(c: number): void {
    this.cost += c;
    if (this.cost > this.limit) {
      this.exceeded = true;
      throw new CostLimitExceeded();
    }
  }

  /**
   * A node that read the stack is done: drops what was reported above `mark`, counts it if it is
   * a comprehension's step, reports its value if a consumer reads it, and charges `c`.
   */
  settle(n: Node, v: unknown, mark: number, c: number, step: boolean, kept: boolean): void {
    this.sp = mark;
    if (step) this.steps++;
    if (kept) this.push(n, v);
    this.charge(c);
  }

  /** The newest value `n` reported above `mark`, or undefined. */
  valueOf(n: Node, mark: number): unknown {
    // Literals are not instrumented (they cost nothing): their value is in the AST.
    if (n.op === 'value') return n.args;
    for (let i = this.sp - 1; i >= mark; i--) if (this.nodes[i] === n) return this.values[i];
    return undefined;
  }

  count(n: Node, mark: number): number {
    let c = 0;
    for (let i = mark; i < this.sp; i++) if (this.nodes[i] === n) c++;
    return c;
  }

  /** How many times `n` reported `v` above `mark`. */
  countValue(n: Node, v: unknown, mark: number): number {
    let c = 0;
    for (let i = mark; i < this.sp; i++) if (this.nodes[i] === n && this.values[i] === v) c++;
    return c;
  }
}

const isNode = (x: unknown): x is Node =>
  typeof x === 'object' && x !== null && typeof (x as Node).op === 'string' && 'meta' in (x as object);

/** Attributes in cel-go: identifiers and selects/indexes on them. */
const ATTRIBUTE_OPS = new Set(['id', '.', '.?', '[]', '[?]']);
const isAttribute = (n: unknown): boolean => isNode(n) && ATTRIBUTE_OPS.has(n.op);

const FOLDS: Record<string, Kind> = { all: 'all', exists: 'exists', exists_one: 'exists_one', map: 'map', filter: 'filter' };
const TWO_VAR: Record<string, TwoVarKind> = {
  all: 'all',
  exists: 'exists',
  existsOne: 'existsOne',
  exists_one: 'existsOne',
  transformList: 'transformList',
  transformMap: 'transformMap',
  transformMapEntry: 'transformMapEntry',
};

/**
 * Wraps every node of a checked expression so that `tracker` sees its evaluations. The AST must
 * be a copy used only for costed evaluation.
 *
 * Most nodes cost a constant (an identifier, a select, a call whose cost does not depend on its
 * arguments): they only add it. Only nodes whose values or evaluations a consumer reads (a sized
 * call's arguments, a comprehension's iterable and step, a two-variable comprehension's nodes)
 * report them on the tracker's stack, so a visit of a nested comprehension costs about 1.5× the
 * plain evaluation instead of 4× (every node pushing and scanning).
 */
export function instrument(root: Node, tracker: CostTracker): void {
  const seen = new WeakSet<object>();
  const wrapped: [Node, Role][] = [];
  const visit = (x: unknown, role?: Role): void => {
    if (Array.isArray(x)) {
      for (const y of x) visit(y);
      return;
    }
    if (!isNode(x)) {
      if (typeof x === 'object' && x !== null && !seen.has(x)) {
        seen.add(x);
        // Comprehension arguments and map entries.
        for (const k of Object.keys(x)) if (k !== 'iterCtx') visit((x as Record<string, unknown>)[k]);
      }
      return;
    }
    if (seen.has(x)) return;
    seen.add(x);
    if (x.op === 'value') return;
    const r = role ?? roleOf(x);
    wrapped.push([x, r]);
    const alt = x.meta.alternate;
    if (alt) visit(alt, r.fold ? { fold: r.fold } : undefined);
    const m = x.meta.macro;
    if (m) {
      visit(m.val);
      visit(m.exp);
      visit(m.args);
      const props = (m as { macroHasProps?: Node[] }).macroHasProps;
      // has(a.b.c): only the root identifier is evaluated as a node.
      if (props) visit(props[props.length - 1]);
    }
    if (x.op !== 'value' && x.op !== 'id') visit(x.args);
  };
  visit(root);
  // The nodes a consumer looks up on the stack, and the comprehensions' steps (counted).
  const kept = new Set<Node>();
  const steps = new Set<Node>();
  for (const [n, r] of wrapped) {
    if (n.op === 'comprehension') {
      const args = n.args as Comprehension;
      kept.add(args.iterable);
      steps.add(args.step);
    } else if (staticCost(n, r) === undefined) for (const a of r.argNodes ?? []) kept.add(a);
  }
  for (const [n, r] of wrapped) wrap(n, r, tracker, kept.has(n), steps.has(n));
}

function roleOf(n: Node): Role {
  const r: Role = {};
  const a = n.args as unknown[];
  if (n.op === 'call' || n.op === 'rcall') {
    r.fn = String(a[0]);
    const args = (n.op === 'call' ? a[1] : a[2]) as Node[];
    r.argNodes = n.op === 'rcall' ? [a[1] as Node, ...args] : [...args];
    if (n.meta.alternate && FOLDS[r.fn]) r.fold = FOLDS[r.fn];
    if (n.meta.macro) r.macro = r.fn === 'has' ? 'has' : r.fn === 'bind' ? 'bind' : undefined;
    if (n.meta.macro && n.op === 'rcall' && args.length >= 3) r.twoVar = TWO_VAR[r.fn];
  } else if (Array.isArray(a) && a.every(isNode)) {
    r.fn = n.op;
    r.argNodes = a as Node[];
  } else if (isNode(a)) {
    r.fn = n.op;
    r.argNodes = [a];
  }
  if (r.fn !== undefined && r.argNodes?.length === 2 && !r.fold && !r.macro && !r.twoVar) r.binary = BINARY_COST.get(r.fn);
  return r;
}

function wrap(n: Node, role: Role, t: CostTracker, kept: boolean, step: boolean): void {
  const meta = n.meta;
  const inner: Evaluate = meta.alternate
    ? (ev, _ast, ctx) => (meta.alternate as Node).evaluate(ev, meta.alternate, ctx)
    : meta.macro
      ? (ev, _ast, ctx) => (meta.macro as Macro).evaluate(ev, meta.macro, ctx)
      : (meta.evaluate as Evaluate);
  const isFold = n.op === 'comprehension';
  const fixed = isFold ? undefined : staticCost(n, role);
  if (fixed !== undefined && !kept) {
    // Nothing below it reported anything (no consumer is among its descendants' parents here
    // but the consumers themselves, which clear what they read), and nothing reads it.
    n.evaluate = function costedConstant(this: unknown, ev, ast, ctx) {
      if (t.exceeded) throw new CostLimitExceeded();
      const v = inner.call(this, ev, ast, ctx);
      if (step) t.steps++;
      t.charge(fixed);
      return v;
    };
    return;
  }
  if (isFold) {
    n.evaluate = function costedFold(this: unknown, ev, ast, ctx) {
      if (t.exceeded) throw new CostLimitExceeded();
      const mark = t.sp;
      const steps0 = t.steps;
      let v: unknown;
      try {
        v = inner.call(this, ev, ast, ctx);
      } catch (e) {
        t.steps = steps0;
        throw e;
      }
      // Its steps are its own: the enclosing comprehension counts only its own.
      const own = t.steps - steps0;
      t.steps = steps0;
      t.settle(n, v, mark, foldCost(n, role.fold, t, mark, own), step, kept);
      return v;
    };
    return;
  }
  n.evaluate = function costed(this: unknown, ev, ast, ctx) {
    if (t.exceeded) throw new CostLimitExceeded();
    const mark = t.sp;
    const v = inner.call(this, ev, ast, ctx);
    t.settle(n, v, mark, fixed ?? dynamicCost(role, v, t, mark), step, kept);
    return v;
  };
}

function foldCost(n: Node, kind: Kind | undefined, t: CostTracker, mark: number, steps: number): number {
  const args = n.args as Comprehension;
  const size = t.sizeOf(t.valueOf(args.iterable, mark));
  const conds = steps + (steps < size ? 1 : 0);
  switch (kind) {
    case 'all':
      return 2 * conds + steps + 1;
    case 'exists':
      return 3 * conds + steps + 1;
    case 'exists_one':
      return 2;
    default:
      // map / filter: the accumulator pushes are charged at their nodes; the result 1.
      return 1;
  }
}

/**
 * What cel-go's expansion of a two-variable comprehension costs beyond its body's nodes (charged
 * at them): all/exists/existsOne as their one-variable forms; transformList as map() (10 for the
 * empty list, 12 per element kept); transformMap and transformMapEntry 30 for the empty map and
 * `@mapInsert(accu, k, e)` 3, `@mapInsert(accu, e)` 2 per element kept; an element the filter
 * drops 1 (the accumulator); the result 1. `nodes` are the receiver, the two variables, the body.
 */
function twoVarCost(kind: TwoVarKind, nodes: Node[], t: CostTracker, mark: number): number {
  const body = nodes.slice(3);
  const expr = body[body.length - 1] as Node;
  const steps = t.count(expr, mark);
  const size = sizeOf(t.valueOf(nodes[0] as Node, mark));
  const conds = steps + (steps < size ? 1 : 0);
  const visited = body.length === 2 ? t.count(body[0] as Node, mark) : steps;
  switch (kind) {
    case 'all':
      return 2 * conds + steps + 1;
    case 'exists':
      return 3 * conds + steps + 1;
    case 'existsOne':
      return 2 + steps + t.countValue(expr, true, mark);
    case 'transformList':
      return 10 + 12 * steps + (visited - steps) + 1;
    case 'transformMap':
      return 30 + 3 * steps + (visited - steps) + 1;
    case 'transformMapEntry':
      return 30 + 2 * steps + (visited - steps) + 1;
  }
}

/**
 * What an evaluation of `n` costs when that does not depend on what it or its arguments
 * evaluated to; undefined for the nodes dynamicCost charges (sized calls, two-variable
 * comprehensions) and for comprehensions (foldCost).
 */
function staticCost(n: Node, role: Role): number | undefined {
  switch (n.op) {
    case 'value':
      return 0;
    case 'id':
    case 'accuValue':
      return 1;
    case 'accuInc':
      return 2;
    case 'accuPush':
      return 1 + LIST_CREATE + 1;
    case '.':
    case '.?':
    case '[]':
    case '[?]': {
      const [operand, index] = n.args as Node[];
      if (!isAttribute(operand)) return 2;
      // A variable index of an attribute is resolved inside it (its identifier is not charged).
      return index?.op === 'id' ? 0 : 1;
    }
    case 'list':
      return LIST_CREATE;
    case 'map':
      return MAP_CREATE;
    case '&&':
    case '||':
      return 0;
    case '?:': {
      const a = n.args as Node[];
      // Both branches attributes: cel-go resolves a conditional attribute, whose branch is not
      // charged as an identifier.
      return isAttribute(a[1]) && isAttribute(a[2]) ? -1 : 0;
    }
    case 'comprehension':
      return undefined;
  }
  // cel-go's parser folds a negative number literal (`-1.0` is a constant).
  if (n.op === '-_' && isNode(n.args) && n.args.op === 'value') return 0;
  if (role.twoVar) return undefined;
  if (role.macro === 'has') return 1;
  if (role.macro === 'bind') return LIST_CREATE;
  if (role.fold) return 0;
  const fn = role.fn;
  if (!fn) return 0;
  // Every other call's cost is its name's alone (libraryCost reads a result only for join()).
  return SIZED_COST.has(fn) ? undefined : callCost(fn, NO_ARGS, undefined);
}

/** The cost of an evaluation of a sized call or a two-variable comprehension (see staticCost). */
function dynamicCost(role: Role, v: unknown, t: CostTracker, mark: number): number {
  if (role.twoVar) return twoVarCost(role.twoVar, role.argNodes ?? [], t, mark);
  const nodes = role.argNodes ?? [];
  if (role.binary) return role.binary(t.valueOf(nodes[0] as Node, mark), t.valueOf(nodes[1] as Node, mark));
  const args = new Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) args[i] = t.valueOf(nodes[i] as Node, mark);
  return callCost(role.fn as string, args, v);
}

const NO_ARGS: unknown[] = [];

/** The calls whose cost depends on their arguments (or result); every other costs a constant. */
const SIZED_COST = new Set([
  'startsWith',
  'endsWith',
  'string',
  'bytes',
  'in',
  '<',
  '<=',
  '>',
  '>=',
  '==',
  '!=',
  '+',
  'matches',
  'contains',
  'isSorted',
  'sum',
  'max',
  'min',
  'indexOf',
  'lastIndexOf',
  'url',
  'lowerAscii',
  'upperAscii',
  'substring',
  'trim',
  'cidr',
  'isIP',
  'isCIDR',
  'quantity',
  'isQuantity',
  'replace',
  'split',
  'join',
  'find',
  'findAll',
  'ip',
  'ip.isCanonical',
  'containsIP',
  'containsCIDR',
]);

type BinaryCost = (a0: unknown, a1: unknown) => number;

const traversed = (v: unknown): number => Math.ceil(sizeOf(v) * TRAVERSAL);
const ordering: BinaryCost = (a0, a1) =>
  isSized(a0) && isSized(a1) && (typeof a0 === 'string' || a0 instanceof Uint8Array)
    ? Math.ceil(Math.min(sizeOf(a0), sizeOf(a1)) * TRAVERSAL)
    : 1;
const equality: BinaryCost = (a0, a1) => Math.ceil(Math.min(sizeOf(a0), sizeOf(a1)) * TRAVERSAL);

/**
 * cel-go's sized calls of one or two arguments (receiver first), each charged by its own function
 * (an evaluation looks its node's up once, not by name on every call). None of these names is in
 * the Kubernetes library's table (libraryCost), which callCost asks first.
 */
const BINARY_COST = new Map<string, BinaryCost>([
  ['startsWith', traversed],
  ['endsWith', traversed],
  ['in', (_a0, a1) => (Array.isArray(a1) ? sizeOf(a1) : 1)],
  ['<', ordering],
  ['<=', ordering],
  ['>', ordering],
  ['>=', ordering],
  ['==', equality],
  ['!=', equality],
  ['+', (a0, a1) => (typeof a0 === 'string' || a0 instanceof Uint8Array ? Math.ceil((sizeOf(a0) + sizeOf(a1)) * TRAVERSAL) : 1)],
  ['matches', (a0, a1) => regexCost(a0, a1)],
  ['contains', (a0, a1) => (typeof a0 !== 'string' ? 1 : traversed(a0) * traversed(a1))],
]);

/** cel-go's CostTracker.costCall with the Kubernetes library's CallCost before it. */
export function callCost(fn: string, args: unknown[], result: unknown): number {
  const k8s = libraryCost(fn, args, result);
  if (k8s !== undefined) return k8s;
  const binary = BINARY_COST.get(fn);
  if (binary) return binary(args[0], args[1]);
  const a0 = args[0];
  switch (fn) {
    case 'string':
      return a0 instanceof Uint8Array ? traversed(a0) : 1;
    case 'bytes':
      return typeof a0 === 'string' ? traversed(a0) : 1;
    default:
      return 1;
  }
}

const regexCost = (s: unknown, re: unknown): number => Math.ceil((1 + sizeOf(s)) * TRAVERSAL) * Math.ceil(sizeOf(re) * REGEX_LENGTH);

/** k8s.io/apiserver/pkg/cel/library CostEstimator.CallCost. */
function libraryCost(fn: string, args: unknown[], result: unknown): number | undefined {
  const a0 = args[0];
  switch (fn) {
    case 'check':
      return 350_000;
    case 'serviceAccount':
    case 'path':
    case 'group':
    case 'resource':
    case 'subresource':
    case 'namespace':
    case 'name':
    case 'allowed':
    case 'reason':
    case 'error':
    case 'errored':
      return 1;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return args.length > 0 ? traversalCost(a0) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
      return args.length >= 1 ? Math.ceil(sizeOf(a0) * TRAVERSAL) : undefined;
    case 'replace':
    case 'split':
      return args.length >= 1 ? Math.ceil(sizeOf(a0) * 2 * TRAVERSAL) : undefined;
    case 'join':
      return args.length >= 1 ? Math.ceil(sizeOf(result) * 2 * TRAVERSAL) : undefined;
    case 'find':
    case 'findAll':
      return args.length >= 2 ? regexCost(a0, args[1]) : undefined;
    case 'ip':
      // cidr.ip() reads a field; ip(string) parses.
      if (args.length >= 1) return typeof a0 === 'string' ? Math.ceil(sizeOf(a0) * TRAVERSAL) : 1;
      return undefined;
    case 'ip.isCanonical':
      return args.length >= 1 ? Math.ceil(sizeOf(a0) * 2 * TRAVERSAL) : undefined;
    case 'masked':
    case 'prefixLength':
    case 'family':
    case 'isUnspecified':
    case 'isLoopback':
    case 'isLinkLocalMulticast':
    case 'isLinkLocalUnicast':
      return 1;
    case 'containsIP':
    case 'containsCIDR': {
      if (args.length < 2) return undefined;
      const cidr = sizeOf(a0);
      let cost = Math.ceil((cidr + cidr) * TRAVERSAL);
      if (fn === 'containsCIDR') cost += Math.ceil(cidr * TRAVERSAL) + 1;
      if (typeof args[1] === 'string') cost += Math.ceil(sizeOf(args[1]) * TRAVERSAL);
      return cost;
    }
    case 'sign':
    case 'asInteger':
    case 'isInteger':
    case 'asApproximateFloat':
    case 'isGreaterThan':
    case 'isLessThan':
    case 'compareTo':
    case 'add':
    case 'sub':
      return 1;
  }
  return undefined;
}

const isSized = (v: unknown): boolean =>
  typeof v === 'string' || v instanceof Uint8Array || Array.isArray(v) || v instanceof Map || isPlainObject(v);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** traits.Sizer: code points of a string, bytes, list and map entries; 1 for anything else. */
export function sizeOf(v: unknown): number {
  if (typeof v === 'string') return stringSize(v);
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof Map) return v.size;
  if (isPlainObject(v)) {
    let n = 0;
    for (const _ in v) n++;
    return n;
  }
  // Sized library values (IP addresses, CIDRs) report their byte length.
  if (typeof v === 'object' && v !== null && typeof (v as { size?: unknown }).size === 'number') return (v as { size: number }).size;
  return 1;
}

function stringSize(s: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII test
  if (/^[\u0000-\u007f]*$/.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The library's traversalCost: a value's cost as a data tree. */
export function traversalCost(v: unknown): number {
  if (typeof v === 'string') return Math.floor(stringSize(v) * TRAVERSAL);
  if (v instanceof Uint8Array) return Math.floor(v.length * TRAVERSAL);
  if (Array.isArray(v)) {
    let c = 0;
    for (const x of v) c += traversalCost(x);
    return c;
  }
  if (v instanceof Map) {
    let c = 0;
    for (const [k, x] of v) c += traversalCost(k) + traversalCost(x);
    return c;
  }
  if (isPlainObject(v)) {
    let c = 0;
    for (const k in v) c += traversalCost(k) + traversalCost(v[k]);
    return c;
  }
  return 1;
}
