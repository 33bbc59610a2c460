/**
 * The part of cel-js's macro interface that src/cel/lib macros use (cel-js 8 declares it in
 * lib/macros.js and lib/registry.js, not in its typings). A function registered with an `ast`
 * parameter is a macro: at parse time its handler gets the call's nodes and returns an object with
 * `typeCheck(checker, macro, ctx)` (the call's type; runs once, before any evaluation) and
 * `evaluate(evaluator, macro, ctx)`. Iteration variables live in overlay contexts:
 * `ctx.forkWithVariable(name, type)` declares one, `setIterValue(value, evaluator)` binds it
 * (checking the value against the declared type) and returns the context.
 */
import { ParseError } from '@marcbachmann/cel-js';

/** An AST node. `args` is the identifier's name for an `id` node. */
export interface MacroNode {
  readonly op: string;
  readonly args: unknown;
}

export interface CelTypeDecl {
  readonly kind: string;
  readonly name: string;
  readonly keyType?: CelTypeDecl;
  readonly valueType?: CelTypeDecl;
  /** The type as dyn<...>, which is how cel-js looks operators up for runtime values. */
  readonly wrappedType: CelTypeDecl;
  isDynOrBool(): boolean;
}

export interface MacroContext {
  forkWithVariable(name: string, type: CelTypeDecl): MacroContext;
  setIterValue(value: unknown, ev: MacroEvaluator): MacroContext;
}

export interface MacroChecker {
  check(node: MacroNode, ctx: MacroContext): CelTypeDecl;
  getType(name: string): CelTypeDecl;
  createError(code: string, message: string, node: MacroNode): Error;
  formatType(t: CelTypeDecl): string;
  readonly registry: {
    getListType(t: CelTypeDecl): CelTypeDecl;
    getMapType(k: CelTypeDecl, v: CelTypeDecl): CelTypeDecl;
    getOptionalType(t: CelTypeDecl): CelTypeDecl;
    findBinaryOverload(op: string, l: CelTypeDecl, r: CelTypeDecl): { handler: BinaryHandler } | false | undefined;
  };
}
export type BinaryHandler = (a: unknown, b: unknown, ast: unknown, ev: MacroEvaluator) => unknown;

export interface MacroEvaluator {
  run(node: MacroNode, ctx: MacroContext): unknown;
  tryEval(node: MacroNode, ctx: MacroContext): unknown;
  createError(code: string, message: string, node?: MacroNode): Error;
  debugType(v: unknown): CelTypeDecl;
  /** The type of a value, with element types of lists and maps from their first entry. */
  debugTypeDeep(v: unknown): CelTypeDecl;
  readonly registry: MacroChecker['registry'];
}

/** What a macro handler receives at parse time. */
export interface MacroCall {
  readonly ast: MacroNode;
  readonly args: readonly MacroNode[];
  readonly receiver: MacroNode | null;
}

/** The name of an iteration-variable argument, or a parse error (cel-go: "argument must be a simple name"). */
export function iterVarName(node: MacroNode, fn: string): string {
  if (node.op === 'id' && typeof node.args === 'string') return node.args;
  throw macroArgumentError(node, `${fn}() argument must be a simple name`);
}

/** A parse error of a macro's argument. */
export function macroArgumentError(node: MacroNode, message: string): Error {
  return new ParseError({ code: 'invalid_macro_argument', message, node: node as never });
}

/**
 * The type a variable bound to elements of `t` is checked with: a type parameter (the element
 * type of `[]` is `T`) is `dyn`, as cel-go's checker leaves it unconstrained.
 */
export function concrete(chk: MacroChecker, t: CelTypeDecl | undefined): CelTypeDecl {
  return t === undefined || t.kind === 'param' ? chk.getType('dyn') : t;
}
