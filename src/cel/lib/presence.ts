/**
 * The `has(e.f)` macro as the reference (cel-go) has it: `e` may be any expression, not only a
 * chain of selections from a variable as in cel-js (`has({'a': 1}.a)` is true).
 *
 *   has(m.f)        m a map: whether key 'f' is present (whatever its value, optional.none() too)
 *   has(o.f)        o an object of a declared type: whether field f is set (cel-js's answer)
 *   has(x.f)        x an optional: false when it has no value, else has() of its value
 *   has({}.?a.b)    false: an optional selection that finds nothing makes the test false
 *
 * As in cel-js, the selections of the argument are not evaluated as nodes: the first expression
 * that is not a selection (the root: a variable, a literal, a call) is, and the selections are
 * followed from its value, so a missing field before the last one is an error (`has(a.b.c)`
 * without a.b) unless an optional selection came first. This keeps cel-go's runtime cost (has()
 * 1 plus its root, src/cel/cost.ts, which reads `macroHasProps`) and leaves the selected fields
 * unchecked against declared types (`has(self.undeclared)` is false), as before.
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { replaceMacro } from './builtins.ts';

interface Node {
  readonly op: string;
  readonly args: unknown;
}
interface TypeDecl {
  readonly kind: string;
  readonly name: string;
}
interface Checker {
  check(node: Node, ctx: unknown): TypeDecl;
  getType(name: string): TypeDecl;
  createError(code: string, message: string, node: Node): Error;
}
interface Evaluator {
  run(node: Node, ctx: unknown): unknown;
  debugType(v: unknown): { fieldLazy(obj: unknown, key: string, node: Node, ev: Evaluator): unknown; readonly name: string };
  createError(code: string, message: string, node?: Node): Error;
}
const INVALID = 'has() invalid argument';

interface HasMacro {
  readonly args: readonly Node[];
  /** The argument's selections from the last to the first, then the root (as cel-js's has()). */
  macroHasProps?: Node[];
}

function typeCheck(chk: Checker, macro: HasMacro, ctx: unknown): TypeDecl {
  let node = macro.args[0];
  if (node?.op !== '.') throw chk.createError('invalid_macro_argument', INVALID, node ?? (macro as unknown as Node));
  if (!macro.macroHasProps) {
    const props: Node[] = [];
    while (node.op === '.' || node.op === '.?') {
      props.push(node);
      node = (node.args as [Node, string])[0];
    }
    chk.check(node, ctx);
    props.push(node);
    macro.macroHasProps = props;
  }
  return chk.getType('bool');
}

/** The field `key` of `obj` as a selection finds it; undefined when absent. */
function field(ev: Evaluator, obj: unknown, key: string, node: Node): unknown {
  return ev.debugType(obj).fieldLazy(obj, key, node, ev);
}

function evaluate(ev: Evaluator, macro: HasMacro, ctx: unknown): boolean {
  const props = macro.macroHasProps as Node[];
  let i = props.length - 1;
  let obj = ev.run(props[i] as Node, ctx);
  let optionalContext = false;
  while (i--) {
    const node = props[i] as Node;
    if (obj instanceof Optional) {
      if (!obj.hasValue()) return false;
      obj = obj.value();
    }
    const key = (node.args as [Node, string])[1];
    const v = field(ev, obj, key, node);
    if (i === 0) return v !== undefined;
    if (node.op === '.?') optionalContext = true;
    if (v === undefined) {
      if (optionalContext) return false;
      throw ev.createError('no_such_key', `No such key: ${key}`, node);
    }
    obj = v;
  }
  return false;
}

export function registerHas(env: Environment): void {
  replaceMacro(env, 'has(ast): bool', ({ args }: { args: readonly Node[] }) => ({
    args,
    evaluate,
    typeCheck,
    async: false,
  }));
}
