/**
 * The parts of cel-go's optional types library (cel.OptionalTypes, which the reference enables)
 * that cel-js 8 lacks; cel-js has optional.of/none, hasValue, value, or, orValue, `.?` and `[?]`.
 *
 *   optional.ofNonZeroValue(v)  optional.none() when v is its type's zero value (null, false, 0,
 *                               0u, 0.0, '', b'', [], {}, duration 0, timestamp 0), else optional.of(v)
 *   o.optMap(x, e)              optional.of(e with x = o.value()), or optional.none() when o has none
 *   o.optFlatMap(x, e)          e with x = o.value() (an optional), or optional.none()
 *   a == b, a != b              equal when both are none, or both have equal values
 *   optional_type               the type of optional values: type(optional.none()) == optional_type
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import {
  type CelTypeDecl,
  concrete,
  iterVarName,
  type MacroCall,
  type MacroChecker,
  type MacroContext,
  type MacroEvaluator,
  type MacroNode,
} from './macro-api.ts';

/** cel-go's traits.Zeroer: the values ofNonZeroValue drops. */
function isZeroValue(v: unknown): boolean {
  switch (typeof v) {
    case 'boolean':
      return v === false;
    case 'bigint':
      return v === 0n;
    case 'number':
      return v === 0;
    case 'string':
      return v === '';
    case 'object':
      if (v === null) return true;
      if (v instanceof Uint8Array) return v.length === 0;
      if (Array.isArray(v)) return v.length === 0;
      if (v instanceof Set || v instanceof Map) return v.size === 0;
      if (v instanceof UnsignedInt) return v.valueOf() === 0n;
      if (v instanceof Duration) return v.seconds === 0n && v.nanos === 0;
      if (v instanceof Date) return v.getTime() === 0;
      if (v.constructor === Object || v.constructor === undefined) return Object.keys(v).length === 0;
      return false;
    default:
      return false;
  }
}

interface OptMapMacro {
  readonly flat: boolean;
  readonly fn: string;
  readonly receiver: MacroNode;
  readonly var: string;
  readonly expr: MacroNode;
  /** The body (seen by the cost tracker, src/cel/cost.ts). */
  readonly args: readonly MacroNode[];
  varType?: CelTypeDecl;
  readonly async: false;
  typeCheck(chk: MacroChecker, m: OptMapMacro, ctx: MacroContext): CelTypeDecl;
  evaluate(ev: MacroEvaluator, m: OptMapMacro, ctx: MacroContext): unknown;
}

function optMapTypeCheck(chk: MacroChecker, m: OptMapMacro, ctx: MacroContext): CelTypeDecl {
  const rt = chk.check(m.receiver, ctx);
  if (rt.kind !== 'optional' && rt.kind !== 'dyn')
    throw chk.createError('optional_expected', `${m.fn}() receiver must be optional, got '${chk.formatType(rt)}'`, m.receiver);
  m.varType = concrete(chk, rt.kind === 'optional' ? rt.valueType : undefined);
  const et = chk.check(m.expr, ctx.forkWithVariable(m.var, m.varType));
  if (!m.flat) return chk.registry.getOptionalType(et);
  if (et.kind === 'optional') return et;
  if (et.kind === 'dyn') return chk.getType('optional');
  throw chk.createError('optional_expected', `${m.fn}() expression must be optional, got '${chk.formatType(et)}'`, m.expr);
}

function optMapEvaluate(ev: MacroEvaluator, m: OptMapMacro, ctx: MacroContext): unknown {
  const o = ev.run(m.receiver, ctx);
  if (!(o instanceof Optional)) throw ev.createError('optional_expected', `${m.fn}() receiver must be optional`, m.receiver);
  if (!o.hasValue()) return Optional.none();
  const r = ev.run(m.expr, ctx.forkWithVariable(m.var, m.varType as CelTypeDecl).setIterValue(o.value(), ev));
  if (!m.flat) return Optional.of(r);
  if (r instanceof Optional) return r;
  throw ev.createError('optional_expected', `${m.fn}() expression must be optional`, m.expr);
}

function optMapExpander(fn: 'optMap' | 'optFlatMap') {
  return ({ args, receiver }: MacroCall): OptMapMacro => ({
    flat: fn === 'optFlatMap',
    fn,
    receiver: receiver as MacroNode,
    var: iterVarName(args[0] as MacroNode, fn),
    expr: args[1] as MacroNode,
    args: [args[1] as MacroNode],
    async: false,
    typeCheck: optMapTypeCheck,
    evaluate: optMapEvaluate,
  });
}

/**
 * CEL equality of two values by the environment's `==` overloads, looked up as cel-js looks them
 * up for dyn operands (so 1 == 1.0); types without an overload are not equal.
 */
function valuesEqual(a: unknown, b: unknown, ast: unknown, ev: MacroEvaluator): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  const o = ev.registry.findBinaryOverload('==', ev.debugTypeDeep(a).wrappedType, ev.debugTypeDeep(b).wrappedType);
  return o ? o.handler(a, b, ast, ev) === true : false;
}

function optionalsEqual(a: unknown, b: unknown, ast: unknown, ev: MacroEvaluator): boolean {
  if (!(a instanceof Optional && b instanceof Optional)) return false;
  if (!a.hasValue() || !b.hasValue()) return a.hasValue() === b.hasValue();
  return valuesEqual(a.value(), b.value(), ast, ev);
}

/** Registers the optional-types additions on `env` (built with enableOptionalTypes). */
export function registerOptionals(env: Environment): void {
  env.registerFunction(
    'OptionalNamespace.ofNonZeroValue(A): optional<A>',
    (_ns: unknown, v: unknown) => (isZeroValue(v) ? Optional.none() : Optional.of(v)),
    { async: false },
  );
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optMapExpander('optMap') as never);
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optMapExpander('optFlatMap') as never);
  env.registerOperator('optional == optional', optionalsEqual as never);
  // cel-js has a Type for optional values but no type() overload or name for it.
  const TypeCtor = (env.evaluate('type(1)') as object).constructor as new (name: string) => object;
  const optionalType = new TypeCtor('optional_type');
  env.registerFunction('type(optional): type', () => optionalType, { async: false });
  env.registerConstant('optional_type', 'type', optionalType);
}
