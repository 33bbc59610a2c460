/**
 * Replacing the handler of one of cel-js's own overloads (or macros) in one environment.
 *
 * cel-js refuses to register an overload that overlaps an existing one, so where its standard
 * library differs from the reference (cel-go) the fix cannot be a new registration: the built-in
 * declaration is swapped for a copy (declarations are frozen) carrying the new handler.
 *
 * The declaration tables belong to the environment's registry, which cel-js keeps private. A
 * checked call records its candidate table on its AST (`ast.candidates`, as src/cel/lists-typed.ts
 * uses) and a candidate table knows its registry, whose `operatorCandidates(op)` and
 * `functionCandidates(receiver, name, argCount)` give any table: one probe per environment.
 *
 * Tables are shared with the parent registry until the environment registers a function (for
 * function tables) or an operator (for operator tables) of its own; callers must have done both
 * before replacing, or the change would reach every environment. Each replacement checks that
 * against a fresh environment's tables. When cel-js changes its tables, building an environment
 * fails loudly with a `bug:` error rather than silently keeping the built-in behaviour.
 */
import { Environment } from '@marcbachmann/cel-js';

/** An operator handler as cel-js calls it: operands, then the AST node and the evaluator. */
export type OperatorHandler = (a: never, b: never, ast: unknown, ev: unknown) => unknown;
// biome-ignore lint/suspicious/noExplicitAny: handlers receive CEL values of the declared types.
export type FunctionHandler = (...args: any[]) => unknown;

interface TypeRef {
  readonly name: string;
}
interface Declaration {
  readonly returnType?: TypeRef;
  readonly signature: string;
  readonly handler: (...args: never[]) => unknown;
}
interface Registry {
  /** Drops a variable or constant from this registry's own copy of the declarations. */
  deleteVariable(name: string): void;
  operatorCandidates(op: string): Candidates;
  functionCandidates(receiver: boolean, name: string, argCount: number): Candidates;
}
interface Candidates {
  readonly registry: Registry;
  /** The macro declaration of the partition, if any (what the parser expands). */
  macro: Declaration | false;
  readonly declarations: Declaration[];
  /** Appends a declaration and clears the table's lookup caches. */
  add(decl: Declaration): void;
}

const registries = new WeakMap<Environment, Registry>();

function registryOf(env: Environment): Registry {
  let r = registries.get(env);
  if (r === undefined) {
    const parsed = env.parse("''.size()");
    parsed.check();
    r = (parsed.ast as unknown as { candidates?: Candidates }).candidates?.registry;
    if (typeof r?.operatorCandidates !== 'function' || typeof r.functionCandidates !== 'function') {
      throw new Error('bug: cel-js records no candidate table with a registry on a checked call');
    }
    registries.set(env, r);
  }
  return r;
}

/** The tables every environment starts with (those of cel-js's global registry). */
let shared: Registry | undefined;

function ownTable(env: Environment, pick: (r: Registry) => Candidates, what: string): Candidates {
  shared ??= registryOf(new Environment());
  const table = pick(registryOf(env));
  if (table === pick(shared)) throw new Error(`bug: replacing ${what} would change every environment; register one first`);
  if (!Array.isArray(table.declarations)) throw new Error(`bug: cel-js's table for ${what} has no declarations`);
  return table;
}

function find(table: Candidates, signature: string): Declaration {
  const decl = table.declarations.find((d) => d.signature === signature);
  if (!decl) throw new Error(`bug: cel-js has no overload '${signature}' to replace`);
  return decl;
}

function replaceIn(table: Candidates, decl: Declaration, changes: Partial<Declaration>, move: boolean): Declaration {
  const i = table.declarations.indexOf(decl);
  const copy = Object.freeze(Object.assign(Object.create(Object.getPrototypeOf(decl)), decl, changes)) as Declaration;
  if (move) {
    // Operator tables cache lookups: add() clears them (the copy goes last; order is irrelevant
    // there because an operator lookup takes the exact match or the only match).
    table.declarations.splice(i, 1);
    table.add(copy);
  } else {
    // Function tables keep no cache and are searched in order: replace in place.
    table.declarations[i] = copy;
  }
  return copy;
}

/**
 * Replaces the handler of the built-in overload `signature` of operator `op` (cel-js's names:
 * `<`, `==`, `in`, `-_` for negation), e.g. `int - int: int`, `-_int: int`. `wrap` receives the
 * original handler. `returnTypeOf` corrects a declared result type: the signature of another
 * overload of the same operator whose result type to declare instead.
 */
export function replaceOperator(
  env: Environment,
  op: string,
  signature: string,
  wrap: (original: OperatorHandler) => OperatorHandler,
  returnTypeOf?: string,
): void {
  const table = ownTable(env, (r) => r.operatorCandidates(op), `operator ${op}`);
  const decl = find(table, signature);
  const handler = wrap(decl.handler as OperatorHandler) as never;
  const changes: Partial<Declaration> =
    returnTypeOf === undefined ? { handler } : { handler, returnType: find(table, returnTypeOf).returnType };
  replaceIn(table, decl, changes, true);
}

/** Receiver use, name and argument count of a function signature (`[Receiver.]name(args): result`). */
function partition(signature: string): [boolean, string, number] {
  const m = /^(?:(.+)\.)?(\w+)\((.*)\):/.exec(signature);
  if (!m) throw new Error(`bug: not a function signature: '${signature}'`);
  let depth = 0;
  let args = m[3]?.trim() ? 1 : 0;
  for (const ch of m[3] ?? '') {
    if (ch === '<') depth++;
    else if (ch === '>') depth--;
    else if (ch === ',' && depth === 0) args++;
  }
  return [m[1] !== undefined, m[2] as string, args];
}

/**
 * Replaces the handler of the built-in function overload `signature` (e.g. `string.trim(): string`).
 * `wrap` receives the original handler.
 */
export function replaceFunction(env: Environment, signature: string, wrap: (original: FunctionHandler) => FunctionHandler): void {
  const [receiver, name, argCount] = partition(signature);
  const table = ownTable(env, (r) => r.functionCandidates(receiver, name, argCount), `function ${name}`);
  const decl = find(table, signature);
  replaceIn(table, decl, { handler: wrap(decl.handler as FunctionHandler) as never }, false);
}

/**
 * Replaces the expander of the built-in macro `signature` (e.g. `has(ast): bool`). The parser
 * expands a call by its table's `macro` declaration, which is replaced too.
 */
export function replaceMacro(env: Environment, signature: string, expander: FunctionHandler): void {
  const [receiver, name, argCount] = partition(signature);
  const table = ownTable(env, (r) => r.functionCandidates(receiver, name, argCount), `macro ${name}`);
  const decl = find(table, signature);
  if (table.macro !== decl) throw new Error(`bug: '${signature}' is not cel-js's macro`);
  table.macro = replaceIn(table, decl, { handler: expander as never }, false);
}

/** Replaces the value (and declared type) of a constant cel-js declares, e.g. `null_type`. */
export function replaceConstant(env: Environment, name: string, type: string, value: unknown): void {
  const registry = registryOf(env);
  if (typeof registry.deleteVariable !== 'function') throw new Error('bug: cel-js registries no longer delete variables');
  if (!env.hasVariable(name)) throw new Error(`bug: cel-js has no constant '${name}' to replace`);
  registry.deleteVariable(name);
  env.registerConstant(name, type, value);
}
