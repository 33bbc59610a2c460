/**
 * Runtime cost budgets (spec 1, "Cost"): the one budget type every evaluator charges, with the
 * reference's limits (k8s.io/apiserver/pkg/apis/cel config.go):
 *
 *   PER_CALL_LIMIT                       1,000,000   one expression (cel-go's CostLimit); past it
 *                                                     the expression stops with "operation
 *                                                     cancelled: actual cost limit exceeded"
 *   RUNTIME_CEL_COST_BUDGET             10,000,000   all the rules of one custom resource write;
 *                                                     the validations (and their messages) of one
 *                                                     policy binding; again its audit annotations
 *   RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS  2,500,000   the matchConditions of one policy binding
 *
 * A budget runs each expression within the per-call limit and then takes what it cost from what
 * remains; an expression that cost more than remained exhausts the budget (the reference's
 * "validation failed due to running out of cost budget, no further validation rules will be
 * run"), and every later run is refused without evaluating:
 *
 *   const b = new CostBudget(RUNTIME_CEL_COST_BUDGET);
 *   b.run(rule, ctx)   // { value: true, overBudget: false }; b.remaining is 10,000,000 - its cost
 */

/** celconfig.PerCallLimit: roughly 0.1 s of evaluation for one expression. */
export const PER_CALL_LIMIT = 1_000_000;
/**
 * celconfig.RuntimeCELCostBudget: roughly 1 s of evaluation per custom resource (all its rules)
 * or per ValidatingAdmissionPolicyBinding (its validations and messageExpressions; its audit
 * annotations have another of the same size).
 */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/** celconfig.RuntimeCELCostBudgetMatchConditions: the matchConditions of one policy binding (1/4 s). */
export const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS = 2_500_000;

/** The reference's error once a budget ran out (CRD rules and policies alike). */
export const OUT_OF_BUDGET_MESSAGE = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** A compiled program that counts its runtime cost (src/cel/index.ts costedExecutable). */
export interface CostedProgram {
  /** Evaluates on a CEL-form activation; throws CostLimitExceeded once the cost passes `limit`. */
  run(ctx: Record<string, unknown>, limit?: number): unknown;
  /** The cost of the last run (also after it threw). */
  cost(): number;
}

/** What one run under a budget came to. */
export interface Charged {
  /** The program's result (undefined when it threw or did not run). */
  readonly value?: unknown;
  /** What the program threw: CostLimitExceeded past the per-call limit, or an evaluation error. */
  readonly error?: unknown;
  /** The run cost more than remained, or the budget was already exhausted (then it did not run). */
  readonly overBudget: boolean;
  /** What the run cost (0 when it did not run). */
  readonly cost: number;
}

export class CostBudget {
  private left: number;
  private stopped = false;

  /** `total` for all the runs together; each run stops at `perCallLimit`. */
  constructor(
    total: number,
    readonly perCallLimit: number = PER_CALL_LIMIT,
  ) {
    this.left = total;
  }

  /** What later runs may still cost together. */
  get remaining(): number {
    return this.left;
  }

  /** True once a run went over the budget, or a caller stopped it: nothing more runs. */
  get exhausted(): boolean {
    return this.stopped;
  }

  /** Stops every later run (the reference stops CRD validation after a rule past the per-call limit). */
  exhaust(): void {
    this.stopped = true;
  }

  /**
   * Runs `p` on `ctx` within the per-call limit and charges its cost. Over the budget, nothing is
   * charged and the budget is exhausted; the caller reports which of `overBudget` and `error`
   * comes first (the reference's CRD validator and policy filter order them differently).
   */
  run(p: CostedProgram, ctx: Record<string, unknown>): Charged {
    if (this.stopped) return { overBudget: true, cost: 0 };
    let value: unknown;
    let error: unknown;
    try {
      value = p.run(ctx, this.perCallLimit);
    } catch (e) {
      error = e;
    }
    const cost = p.cost();
    // Exhausted meanwhile: a run nested in this one (a policy variable) went over the budget.
    if (this.stopped || cost > this.left) {
      this.stopped = true;
      return { error, overBudget: true, cost };
    }
    this.left -= cost;
    return error === undefined ? { value, overBudget: false, cost } : { error, overBudget: false, cost };
  }
}
