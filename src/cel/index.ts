/**
 * CEL engine (spec 1, "Expression language"; issue 12 items 1-3) on @marcbachmann/cel-js.
 *
 * The boundary is plain data so the worker pool (src/workers/cel-pool.ts) can send it between threads:
 * - `celEnv(vars)` declares variables by CEL type name (`'int'`, `'string'`, `'dyn'`,
 *   `'map<string, dyn>'`, `'list<string>'` ...). The result `CelEnv` is plain data (its `vars`);
 *   the engine's environment behind it is built once and cached per distinct declaration.
 * - `compile(expr, env)` parses and type-checks: `{ ok: true, program }` or `{ ok: false, errors }`.
 *   A `Program` is `{ expr, env }` (plain data, re-compilable in a worker); the compiled closure is
 *   cached per process by environment key and expression.
 * - `evaluate(program, activation, budget?)` runs it on a JSON activation: JSON integers are CEL
 *   `int`, other numbers `double`. The result value is converted back to JSON-compatible data
 *   (int/uint as number when safe, otherwise a decimal string; bytes as base64; timestamps as RFC 3339;
 *   durations as `"<seconds>s"`).
 *
 * Libraries (src/cel/env.ts, src/cel/lib/): ext strings (charAt, replace, reverse, strings.quote,
 * format; cel-js's own lowerAscii, upperAscii, trim, split, indexOf, lastIndexOf, substring, join),
 * lists, regex find/findAll (re2js), quantity, url, authorizer (src/cel/lib/authz.ts; the caller
 * supplies the decisions). Escaping of property names: src/cel/escaping.ts. Schema-derived types
 * (custom resource rules, admission policy type checking, the cost estimate): src/cel/decl-types.ts.
 * Runtime cost (cel-go's CostTracker with the Kubernetes library's costs): src/cel/cost.ts;
 * `evaluate` reports it and, given a budget (src/cel/budget.ts), stops at its per-call limit and
 * charges it; `costedExecutable` gives callers the same on CEL-form activations.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { type CostBudget, type CostedProgram, OUT_OF_BUDGET_MESSAGE } from './budget.ts';
import { CostLimitExceeded, CostTracker, instrument } from './cost.ts';
import { engineEnvironment } from './env.ts';

/** A CEL type name as cel-js spells it, e.g. `int`, `dyn`, `list<string>`, `map<string, dyn>`. */
export type CelType = string;

/** Variables with their CEL types. Plain data. */
export interface CelEnv {
  readonly vars: Readonly<Record<string, CelType>>;
  /** Stable key of the declaration, used for caching compiled programs. */
  readonly key: string;
}

/** A type-checked expression; plain data so it can be re-created in another thread. */
export interface Program {
  readonly expr: string;
  readonly env: CelEnv;
  /** The CEL type of the result as inferred by the checker. */
  readonly resultType: string;
}

export type CompileResult = { ok: true; program: Program } | { ok: false; errors: string[] };

/** `cost`: the runtime cost of the evaluation (up to where it stopped). */
export type EvalResult = { ok: true; value: unknown; cost: number | null } | { ok: false; error: string; cost: number | null };

export type Compiled = (ctx: Record<string, unknown>) => unknown;

/**
 * Compiled environments and programs, by declarations and expression. The expressions come from
 * stored objects (CRD validation rules, admission policies), so the caches are bounded: created
 * and deleted definitions with ever new expressions or schemas would otherwise grow them for the
 * life of the process. The oldest entry goes first; a program evicted is compiled again on use.
 */
const MAX_ENVIRONMENTS = 512;
const MAX_PROGRAMS = 4096;
const environments = new Map<string, Environment>();
const programs = new Map<string, Compiled>();

function remember<V>(cache: Map<string, V>, key: string, value: V, max: number): void {
  if (cache.size >= max && !cache.has(key)) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
}

/** @internal The caches' sizes (tests). */
export function cacheSizes(): { environments: number; programs: number; costedPrograms: number } {
  return { environments: environments.size, programs: programs.size, costedPrograms: costedPrograms.size };
}

/** Declares variables for expressions. */
export function celEnv(vars: Record<string, CelType>): CelEnv {
  const names = Object.keys(vars).sort();
  const key = names.map((n) => `${n}:${vars[n]}`).join(';');
  return { vars: { ...vars }, key };
}

function engineEnv(env: CelEnv): Environment {
  let e = environments.get(env.key);
  if (e === undefined) {
    e = engineEnvironment(env.vars);
    remember(environments, env.key, e, MAX_ENVIRONMENTS);
  }
  return e;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Parses and type-checks `expr` against `env`. */
export function compile(expr: string, env: CelEnv): CompileResult {
  let e: Environment;
  try {
    e = engineEnv(env);
  } catch (err) {
    return { ok: false, errors: [errorText(err)] };
  }
  try {
    const parsed = e.parse(expr);
    const checked = parsed.check();
    if (!checked.valid) return { ok: false, errors: [errorText(checked.error)] };
    remember(programs, `${env.key}\u0000${expr}`, parsed as Compiled, MAX_PROGRAMS);
    return { ok: true, program: { expr, env, resultType: String(checked.type) } };
  } catch (err) {
    return { ok: false, errors: [errorText(err)] };
  }
}

function compiled(program: Program): Compiled {
  const key = `${program.env.key}\u0000${program.expr}`;
  let fn = programs.get(key);
  if (fn === undefined) {
    const r = compile(program.expr, program.env);
    if (!r.ok) throw new Error(r.errors.join('; '));
    fn = programs.get(key) as Compiled;
  }
  return fn;
}

/**
 * The compiled closure of a program, for callers that evaluate it often on activations already
 * in CEL form (see toCel): it returns the raw CEL value and throws on an evaluation error.
 */
export function executable(program: Program): Compiled {
  return compiled(program);
}

export type { CostedProgram } from './budget.ts';

const costedPrograms = new Map<string, CostedProgram>();

/**
 * The program's costed twin: its own parsed copy with every node instrumented (src/cel/cost.ts),
 * cached per process like the plain closure.
 */
export function costedExecutable(program: Program): CostedProgram {
  const key = `${program.env.key}\u0000${program.expr}`;
  let c = costedPrograms.get(key);
  if (c === undefined) {
    const parsed = engineEnv(program.env).parse(program.expr);
    const checked = parsed.check();
    if (!checked.valid) throw new Error(errorText(checked.error));
    const tracker = new CostTracker();
    instrument((parsed as unknown as { ast: Parameters<typeof instrument>[0] }).ast, tracker);
    const fn = parsed as unknown as Compiled;
    c = {
      run(ctx, limit = Number.POSITIVE_INFINITY) {
        tracker.reset(limit);
        const v = fn(ctx);
        if (tracker.exceeded) throw new CostLimitExceeded();
        return v;
      },
      cost: () => tracker.cost,
    };
    remember(costedPrograms, key, c, MAX_PROGRAMS);
  }
  return c;
}

/** JSON value to CEL value: integers become int (bigint). */
export function toCel(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = toCel(v[i]);
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  // for-in over a plain object (JSON data has no inherited enumerable keys): no entry arrays.
  const out: Record<string, unknown> = {};
  for (const k in v) out[k] = toCel((v as Record<string, unknown>)[k]);
  return out;
}

/** CEL value to JSON-compatible value. */
export function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) out[String(fromCel(k))] = fromCel(x);
    return out;
  }
  if (v !== null && typeof v === 'object') {
    if (typeof (v as { valueOf(): unknown }).valueOf() === 'bigint') return fromCel((v as { valueOf(): unknown }).valueOf());
    if (Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = fromCel(x);
      return out;
    }
    return String(v);
  }
  return v;
}

/**
 * Evaluates a compiled program on a JSON activation, counting its runtime cost. With a budget,
 * past its per-call limit it stops with cel-go's "operation cancelled: actual cost limit
 * exceeded", and the cost is charged to it (more than it has left: the reference's
 * out-of-budget error).
 */
export function evaluate(program: Program, activation: Record<string, unknown>, budget?: CostBudget): EvalResult {
  let c: CostedProgram | undefined;
  try {
    c = costedExecutable(program);
    const ctx: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(activation)) ctx[k] = toCel(v);
    if (!budget) return { ok: true, value: fromCel(c.run(ctx)), cost: c.cost() };
    const r = budget.run(c, ctx);
    if (r.error !== undefined) return { ok: false, error: errorText(r.error), cost: r.cost };
    if (r.overBudget) return { ok: false, error: OUT_OF_BUDGET_MESSAGE, cost: r.cost };
    return { ok: true, value: fromCel(r.value), cost: r.cost };
  } catch (err) {
    return { ok: false, error: errorText(err), cost: c ? c.cost() : 0 };
  }
}
