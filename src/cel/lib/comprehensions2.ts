/**
 * Two-variable comprehensions (cel-go ext.TwoVarComprehensions, which the reference's environment
 * enables): over a list the variables are the index (int) and the element, over a map the key and
 * the value.
 *
 *   all(i, v, p)        true unless some p is false; stops at the first false. An error (or a
 *                       non-bool p) is the result only if no p is false (cel-go's `accu && p`).
 *   exists(i, v, p)     false unless some p is true; stops at the first true; errors likewise.
 *   existsOne(i, v, p)  exactly one p is true; an error is the result (no short circuit).
 *   exists_one          the same.
 *   transformList(i, v, [f,] e)      [e for each entry where f], in iteration order
 *   transformMap(k, v, [f,] e)       {k: e for each entry where f} (a list gives index keys)
 *   transformMapEntry(k, v, [f,] e)  the union of the maps e; a key produced twice is an error
 *                                    ("insert failed: key ... already exists")
 *
 * cel-go expands them into comprehensions; here each is a cel-js macro (a function with `ast`
 * parameters, see macro-api.ts) that checks and evaluates its body with two iteration variables.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import {
  type CelTypeDecl,
  concrete,
  iterVarName,
  type MacroCall,
  type MacroChecker,
  type MacroContext,
  type MacroEvaluator,
  type MacroNode,
  macroArgumentError,
} from './macro-api.ts';

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

interface TwoVarMacro {
  readonly kind: Kind;
  readonly fn: string;
  readonly ast: MacroNode;
  readonly receiver: MacroNode;
  readonly var1: string;
  readonly var2: string;
  readonly filter: MacroNode | undefined;
  readonly expr: MacroNode;
  /** The body nodes (seen by the cost tracker, src/cel/cost.ts). */
  readonly args: readonly MacroNode[];
  /** The variables' types, set by typeCheck. */
  type1?: CelTypeDecl;
  type2?: CelTypeDecl;
  /** The receiver's map key type when it is a map (keys of a map literal are JS strings). */
  keyType?: CelTypeDecl;
  readonly async: false;
  typeCheck(chk: MacroChecker, m: TwoVarMacro, ctx: MacroContext): CelTypeDecl;
  evaluate(ev: MacroEvaluator, m: TwoVarMacro, ctx: MacroContext): unknown;
}

const QUANTIFIERS: ReadonlySet<Kind> = new Set(['all', 'exists', 'existsOne']);

function typeCheck(chk: MacroChecker, m: TwoVarMacro, ctx: MacroContext): CelTypeDecl {
  const rt = chk.check(m.receiver, ctx);
  const dyn = chk.getType('dyn');
  if (rt.kind === 'dyn') {
    m.type1 = dyn;
    m.type2 = dyn;
  } else if (rt.kind === 'list') {
    m.type1 = chk.getType('int');
    m.type2 = concrete(chk, rt.valueType);
  } else if (rt.kind === 'map') {
    m.type1 = concrete(chk, rt.keyType);
    m.type2 = concrete(chk, rt.valueType);
    m.keyType = m.type1;
  } else {
    throw chk.createError(
      'invalid_comprehension_range',
      `Expression of type '${chk.formatType(rt)}' cannot be range of a comprehension (must be list, map, or dynamic).`,
      m.receiver,
    );
  }
  const inner = ctx.forkWithVariable(m.var1, m.type1).forkWithVariable(m.var2, m.type2);
  if (m.filter) {
    const ft = chk.check(m.filter, inner);
    if (!ft.isDynOrBool())
      throw chk.createError('invalid_condition_type', `${m.fn}() filter must be bool, got '${chk.formatType(ft)}'`, m.filter);
  }
  const et = chk.check(m.expr, inner);
  if (QUANTIFIERS.has(m.kind)) {
    if (!et.isDynOrBool())
      throw chk.createError('invalid_condition_type', `${m.fn}() predicate must be bool, got '${chk.formatType(et)}'`, m.expr);
    return chk.getType('bool');
  }
  switch (m.kind) {
    case 'transformList':
      return chk.registry.getListType(et);
    case 'transformMap':
      return chk.registry.getMapType(m.type1, et);
    default:
      if (et.kind === 'map') return et;
      if (et.kind === 'dyn') return chk.getType('map');
      throw chk.createError('no_matching_overload', `${m.fn}() expression must be a map, got '${chk.formatType(et)}'`, m.expr);
  }
}

/** A key of a map literal (cel-js stores them as JS object keys) as the value of its checked type. */
function typedKey(k: string, t: CelTypeDecl | undefined): unknown {
  switch (t?.name) {
    case 'int':
      return /^-?\d+$/.test(k) ? BigInt(k) : k;
    case 'uint':
      return /^\d+$/.test(k) ? new UnsignedInt(BigInt(k)) : k;
    case 'double':
      return Number(k);
    case 'bool':
      return k === 'true' ? true : k === 'false' ? false : k;
    default:
      return k;
  }
}

/** Calls `each(var1, var2)` per entry until it returns false. */
function forEachEntry(ev: MacroEvaluator, m: TwoVarMacro, coll: unknown, each: (a: unknown, b: unknown) => boolean): void {
  if (Array.isArray(coll)) {
    for (let i = 0; i < coll.length; i++) if (!each(BigInt(i), coll[i])) return;
    return;
  }
  if (coll instanceof Set) {
    let i = 0;
    for (const v of coll) if (!each(BigInt(i++), v)) return;
    return;
  }
  if (coll instanceof Map) {
    for (const [k, v] of coll) if (!each(k, v)) return;
    return;
  }
  if (coll !== null && typeof coll === 'object' && (coll.constructor === Object || coll.constructor === undefined)) {
    const o = coll as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!each(typedKey(k, m.keyType), o[k])) return;
    return;
  }
  throw ev.createError(
    'invalid_comprehension_range',
    `Expression of type '${ev.debugType(coll).name}' cannot be range of a comprehension (must be list, map, or dynamic).`,
    m.receiver,
  );
}

function notBool(ev: MacroEvaluator, m: TwoVarMacro, node: MacroNode, v: unknown): Error {
  return ev.createError('no_matching_overload', `no such overload: ${m.fn}() predicate must be bool, got '${ev.debugType(v).name}'`, node);
}

/** A map result: a plain object (as cel-js's map literals) when every key is an ordinary string. */
function mapValue(entries: Map<unknown, unknown>): unknown {
  for (const k of entries.keys())
    if (typeof k !== 'string' || k === '__proto__' || k === 'constructor' || k === 'prototype') return entries;
  return Object.fromEntries(entries);
}

/** The identity of a map key: numerically equal int, uint and double keys are one key in CEL. */
function keyIdentity(k: unknown): unknown {
  if (k instanceof UnsignedInt) return k.valueOf();
  if (typeof k === 'number' && Number.isInteger(k)) return BigInt(k);
  return k;
}

function mapEntries(ev: MacroEvaluator, m: TwoVarMacro, v: unknown): Iterable<[unknown, unknown]> {
  if (v instanceof Map) return v.entries();
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined))
    return Object.entries(v as Record<string, unknown>);
  throw ev.createError('no_matching_overload', `${m.fn}() expression must be a map, got '${ev.debugType(v).name}'`, m.expr);
}

function evaluate(ev: MacroEvaluator, m: TwoVarMacro, ctx: MacroContext): unknown {
  const coll = ev.run(m.receiver, ctx);
  const c1 = ctx.forkWithVariable(m.var1, m.type1 as CelTypeDecl);
  const c2 = c1.forkWithVariable(m.var2, m.type2 as CelTypeDecl);
  const bind = (a: unknown, b: unknown): MacroContext => {
    c1.setIterValue(a, ev);
    return c2.setIterValue(b, ev);
  };
  switch (m.kind) {
    case 'all':
    case 'exists': {
      // cel-go: accu && p (all) / accu || p (exists) while the accumulator is not decided.
      const decisive = m.kind === 'exists';
      let decided = false;
      let error: unknown;
      forEachEntry(ev, m, coll, (a, b) => {
        const r = ev.tryEval(m.expr, bind(a, b));
        if (r === decisive) {
          decided = true;
          return false;
        }
        if (r !== !decisive) error ??= r instanceof Error ? r : notBool(ev, m, m.expr, r);
        return true;
      });
      if (decided) return decisive;
      if (error !== undefined) throw error;
      return !decisive;
    }
    case 'existsOne': {
      let n = 0;
      forEachEntry(ev, m, coll, (a, b) => {
        const r = ev.run(m.expr, bind(a, b));
        if (typeof r !== 'boolean') throw notBool(ev, m, m.expr, r);
        if (r) n++;
        return true;
      });
      return n === 1;
    }
    case 'transformList': {
      const out: unknown[] = [];
      forEachEntry(ev, m, coll, (a, b) => {
        const c = bind(a, b);
        if (passes(ev, m, c)) out.push(ev.run(m.expr, c));
        return true;
      });
      return out;
    }
    case 'transformMap': {
      const out = new Map<unknown, unknown>();
      forEachEntry(ev, m, coll, (a, b) => {
        const c = bind(a, b);
        if (passes(ev, m, c)) out.set(a, ev.run(m.expr, c));
        return true;
      });
      return mapValue(out);
    }
    case 'transformMapEntry': {
      const out = new Map<unknown, unknown>();
      const seen = new Set<unknown>();
      forEachEntry(ev, m, coll, (a, b) => {
        const c = bind(a, b);
        if (!passes(ev, m, c)) return true;
        for (const [k, v] of mapEntries(ev, m, ev.run(m.expr, c))) {
          const id = keyIdentity(k);
          if (seen.has(id)) throw ev.createError('invalid_argument', `insert failed: key ${String(k)} already exists`, m.expr);
          seen.add(id);
          out.set(k, v);
        }
        return true;
      });
      return mapValue(out);
    }
  }
}

function passes(ev: MacroEvaluator, m: TwoVarMacro, c: MacroContext): boolean {
  if (!m.filter) return true;
  const f = ev.run(m.filter, c);
  if (typeof f !== 'boolean') throw notBool(ev, m, m.filter, f);
  return f;
}

function expander(kind: Kind, fn: string, withFilter: boolean) {
  return ({ ast, args, receiver }: MacroCall): TwoVarMacro => {
    const var1 = iterVarName(args[0] as MacroNode, fn);
    const var2 = iterVarName(args[1] as MacroNode, fn);
    if (var1 === var2) throw macroArgumentError(args[1] as MacroNode, `${fn}() duplicate variable name '${var2}'`);
    const filter = withFilter ? args[2] : undefined;
    const expr = args[withFilter ? 3 : 2] as MacroNode;
    return {
      kind,
      fn,
      ast,
      receiver: receiver as MacroNode,
      var1,
      var2,
      filter,
      expr,
      args: filter ? [filter, expr] : [expr],
      async: false,
      typeCheck,
      evaluate,
    };
  };
}

/** Registers the two-variable comprehension macros on `env`. */
export function registerTwoVarComprehensions(env: Environment): void {
  const macros: [Kind, string, 'bool' | 'list<dyn>' | 'map<dyn, dyn>'][] = [
    ['all', 'all', 'bool'],
    ['exists', 'exists', 'bool'],
    ['existsOne', 'existsOne', 'bool'],
    ['existsOne', 'exists_one', 'bool'],
    ['transformList', 'transformList', 'list<dyn>'],
    ['transformMap', 'transformMap', 'map<dyn, dyn>'],
    ['transformMapEntry', 'transformMapEntry', 'map<dyn, dyn>'],
  ];
  for (const [kind, fn, result] of macros) {
    env.registerFunction(`dyn.${fn}(ast, ast, ast): ${result}`, expander(kind, fn, false) as never);
    if (!QUANTIFIERS.has(kind)) env.registerFunction(`dyn.${fn}(ast, ast, ast, ast): ${result}`, expander(kind, fn, true) as never);
  }
}
