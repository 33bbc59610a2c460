import { describe, expect, test } from 'bun:test';
import {
  CostBudget,
  type CostedProgram,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
} from './budget';
import { CostLimitExceeded } from './cost';

/** A program that costs `cost` (stopping past the limit as a costed program does) and gives `value`. */
function program(cost: number, value: unknown = true): CostedProgram & { runs: number } {
  let last = 0;
  return {
    runs: 0,
    run(_ctx, limit = Number.POSITIVE_INFINITY) {
      this.runs++;
      last = Math.min(cost, limit + 1);
      if (cost > limit) throw new CostLimitExceeded();
      return value;
    },
    cost: () => last,
  };
}

describe('the reference limits', () => {
  test('celconfig values', () => {
    expect([PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS]).toEqual([1_000_000, 10_000_000, 2_500_000]);
  });
});

describe('CostBudget', () => {
  test('runs are charged until one costs more than remains; then nothing runs', () => {
    const b = new CostBudget(2_500_000);
    const p = program(900_000);
    const runs = [b.run(p, {}), b.run(p, {}), b.run(p, {}), b.run(p, {})];
    expect(runs.map((r) => [r.value, r.overBudget, r.cost])).toEqual([
      [true, false, 900_000],
      [true, false, 900_000],
      [undefined, true, 900_000],
      [undefined, true, 0],
    ]);
    expect([b.remaining, b.exhausted, p.runs]).toEqual([700_000, true, 3]);
  });

  test('past the per-call limit the run is an error, charged, and the budget goes on', () => {
    const b = new CostBudget(RUNTIME_CEL_COST_BUDGET);
    const r = b.run(program(5_000_000), {});
    expect(r.error).toBeInstanceOf(CostLimitExceeded);
    expect([r.overBudget, r.cost, b.remaining, b.exhausted]).toEqual([
      false,
      PER_CALL_LIMIT + 1,
      RUNTIME_CEL_COST_BUDGET - PER_CALL_LIMIT - 1,
      false,
    ]);
    expect(b.run(program(10), {}).value).toBe(true);
  });

  test('exhaust() stops later runs; a run nested in another that exhausted the budget makes the outer one over it too', () => {
    const b = new CostBudget(100);
    b.exhaust();
    expect(b.run(program(1), {})).toEqual({ overBudget: true, cost: 0 });
    const outer = new CostBudget(100);
    const inner = program(150);
    const nesting: CostedProgram = {
      run: () => outer.run(inner, {}).value,
      cost: () => 10,
    };
    expect(outer.run(nesting, {}).overBudget).toBe(true);
  });
});
