/**
 * One evaluation of a compiled policy for one binding and one parameter object (the reference's
 * validating/validator.go), on an activation already in CEL form:
 *
 *   1. matchConditions in order: any false skips the policy; otherwise an error (none false) is
 *      a denial under failurePolicy Fail and a skip under Ignore
 *   2. validations, each to a decision: true admits; anything else denies with the first of
 *      messageExpression (a non-blank single-line string of at most 5 KiB), message,
 *      "failed expression: <expression>"; an error denies under Fail, admits under Ignore
 *   3. auditAnnotations: a string (trimmed, non-empty) is published, null omits it, another
 *      type or an error denies under Fail
 *
 * Variables are evaluated lazily, each at most once per evaluation: `variables` is an object
 * whose properties compute on first access.
 *
 * Cost (the reference's cel filter and validator, src/cel/budget.ts): each expression may cost
 * up to PER_CALL_LIMIT (past it, "operation cancelled: actual cost limit exceeded" is that
 * expression's error); the matchConditions share RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS, the
 * validations with their messageExpressions (and the variables they evaluate) share
 * RUNTIME_CEL_COST_BUDGET, the auditAnnotations another RUNTIME_CEL_COST_BUDGET. Running out of
 * one makes the whole evaluation one error under failurePolicy ("validation failed due to running
 * out of cost budget, no further validation rules will be run").
 */
import { CostBudget, OUT_OF_BUDGET_MESSAGE, RUNTIME_CEL_COST_BUDGET, RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS } from '../../cel/budget';
import type { CompiledPolicy, Expr } from './compile';

/** The request's variables in CEL form, shared by every evaluation of one request. */
export interface Activation {
  object: unknown;
  oldObject: unknown;
  request: unknown;
  namespaceObject: unknown;
  /** The authorizer library's variable (an Authorizer for the request's user). */
  authorizer: unknown;
}

export interface Decision {
  deny: boolean;
  /** An evaluation or configuration error rather than a validation that was false. */
  error: boolean;
  message: string;
  reason: string;
  /** The validation's index (expressionIndex of the audit annotation). */
  index: number;
  /** Denies whatever the binding's validationActions (an audit annotation's error). */
  always?: boolean;
}

export interface Annotation {
  key: string;
  value: string;
}

export interface Result {
  decisions: Decision[];
  annotations: Annotation[];
}

/** cel-go reports MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

const firstLine = (s: string): string => {
  const i = s.indexOf('\n');
  return i < 0 ? s : s.slice(0, i);
};

class ExpressionError extends Error {}

function run(e: Expr, ctx: Record<string, unknown>, budget: CostBudget): unknown {
  if (!e.fn) throw new ExpressionError(`compilation error: ${firstLine(e.error ?? 'unknown error')}`);
  const c = budget.run(e.fn, ctx);
  if (c.overBudget) throw new ExpressionError(OUT_OF_BUDGET_MESSAGE);
  const error = c.error;
  if (error === undefined) return c.value;
  if (error instanceof ExpressionError) throw error;
  const msg = error instanceof Error ? error.message : String(error);
  throw new ExpressionError(`expression '${e.expr}' resulted in error: ${firstLine(msg)}`);
}

export function tryRun(e: Expr, ctx: Record<string, unknown>, budget: CostBudget): { value?: unknown; error?: string } {
  try {
    return { value: run(e, ctx, budget) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Out of budget: the evaluation is one error decision under the failure policy (none under Ignore). */
function outOfBudget(fail: boolean): Result {
  return { decisions: fail ? [{ deny: true, error: true, message: OUT_OF_BUDGET_MESSAGE, reason: '', index: 0 }] : [], annotations: [] };
}

/**
 * `variables`: each computed on first access, then kept, its cost charged to the budget of the
 * expression that reached it first (`budget()`); an error is the accessing expression's.
 */
export function lazyVariables(
  variables: readonly { name: string; expr: Expr }[],
  ctx: Record<string, unknown>,
  budget: () => CostBudget,
): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const v of variables) {
    let done = false;
    let value: unknown;
    let error: string | undefined;
    Object.defineProperty(vars, v.name, {
      enumerable: true,
      get() {
        if (!done) {
          done = true;
          const r = tryRun(v.expr, ctx, budget());
          value = r.value;
          error = r.error;
        }
        if (error !== undefined) throw new ExpressionError(error);
        return value;
      },
    });
  }
  return vars;
}

export const celTypeName = (v: unknown): string =>
  typeof v === 'bigint' ? 'int' : typeof v === 'number' ? 'double' : typeof v === 'boolean' ? 'bool' : Array.isArray(v) ? 'list' : 'map';

/** What of a policy its matchConditions need (validating and mutating policies alike). */
export interface MatchConditionsOf {
  readonly paramKind?: unknown;
  readonly matchConditions: readonly { name: string; expr: Expr }[];
}

/**
 * The matchConditions in order (the reference's matchconditions.Matcher): any false is no
 * match; else an error (none false) is `error` (one message, or several as a bracketed list);
 * `outOfBudget` when they ran out of their shared budget.
 */
export function evaluateMatchConditions(
  p: MatchConditionsOf,
  act: Activation,
  params: unknown,
): { matches: boolean; error?: string; outOfBudget?: boolean } {
  if (p.matchConditions.length === 0) return { matches: true };
  const budget = new CostBudget(RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS);
  const ctx: Record<string, unknown> = { object: act.object, oldObject: act.oldObject, request: act.request, authorizer: act.authorizer };
  if (p.paramKind) ctx.params = params;
  const errors: string[] = [];
  for (const mc of p.matchConditions) {
    const r = tryRun(mc.expr, ctx, budget);
    if (budget.exhausted) return { matches: false, outOfBudget: true };
    if (r.error !== undefined) errors.push(r.error);
    else if (r.value === false) return { matches: false };
    else if (r.value !== true)
      errors.push(`expression '${mc.expr.expr}' resulted in error: no such overload: expected bool, got ${celTypeName(r.value)}`);
  }
  if (errors.length > 0) return { matches: false, error: errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]` };
  return { matches: true };
}

export function evaluatePolicy(p: CompiledPolicy, act: Activation, params: unknown): Result {
  const fail = p.failurePolicy === 'Fail';
  const out: Result = { decisions: [], annotations: [] };
  const mc = evaluateMatchConditions(p, act, params);
  if (mc.outOfBudget) return outOfBudget(fail);
  if (mc.error !== undefined) {
    if (fail) out.decisions.push({ deny: true, error: true, message: mc.error, reason: '', index: 0 });
    return out;
  }
  if (!mc.matches) return out;
  const ctx: Record<string, unknown> = {
    object: act.object,
    oldObject: act.oldObject,
    request: act.request,
    namespaceObject: act.namespaceObject,
    authorizer: act.authorizer,
  };
  if (p.paramKind) ctx.params = params;
  let budget = new CostBudget(RUNTIME_CEL_COST_BUDGET);
  ctx.variables = lazyVariables(p.variables, ctx, () => budget);
  p.validations.forEach((v, index) => {
    if (budget.exhausted) return;
    const r = tryRun(v.expr, ctx, budget);
    if (r.error !== undefined) {
      if (fail) out.decisions.push({ deny: true, error: true, message: r.error, reason: '', index });
      return;
    }
    if (r.value === true) return;
    let message = '';
    if (v.messageExpr) {
      const m = tryRun(v.messageExpr, ctx, budget);
      if (typeof m.value === 'string') {
        message = m.value.trim();
        if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
      }
    }
    if (message === '' && v.message !== '') message = v.message.trim();
    if (message === '') message = `failed expression: ${v.expr.expr.trim()}`;
    out.decisions.push({ deny: true, error: false, message, reason: v.reason, index });
  });
  if (budget.exhausted) return outOfBudget(fail);
  // The reference gives the audit annotations a budget of their own.
  budget = new CostBudget(RUNTIME_CEL_COST_BUDGET);
  for (const a of p.auditAnnotations) {
    const r = tryRun(a.expr, ctx, budget);
    if (budget.exhausted) return outOfBudget(fail);
    let error = r.error;
    if (error === undefined) {
      if (typeof r.value === 'string') {
        const value = r.value.trim();
        if (value !== '') out.annotations.push({ key: a.key, value });
        continue;
      }
      if (r.value === null) continue;
      error = `valueExpression '${a.expr.expr}' resulted in unsupported return type: ${celTypeName(r.value)}. Return type must be either string or null.`;
    }
    if (fail) out.decisions.push({ deny: true, error: true, message: error, reason: '', index: 0, always: true });
  }
  return budget.exhausted ? outOfBudget(fail) : out;
}
