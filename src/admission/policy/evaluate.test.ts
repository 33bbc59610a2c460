import { describe, expect, test } from 'bun:test';
import type { CostedProgram } from '../../cel/budget';
import { OUT_OF_BUDGET_MESSAGE } from '../../cel/budget';
import type { CompiledPolicy, Expr } from './compile';
import { evaluatePolicy } from './evaluate';

/** An expression that costs `cost` and gives `value` (no CEL: the budgets are under test). */
function expr(cost: number, value: unknown = true): Expr {
  const fn: CostedProgram = { run: () => value, cost: () => cost };
  return { expr: `cost(${cost})`, fn };
}

function policy(p: { match?: Expr[]; validate?: Expr[]; audit?: Expr[] }): CompiledPolicy {
  return {
    name: 'p',
    uid: '',
    resourceVersion: '1',
    failurePolicy: 'Fail',
    match: {
      rules: undefined,
      excludes: [],
      equivalent: true,
      namespaceSelector: undefined,
      objectSelector: undefined,
      badSelector: false,
    },
    matchConditions: (p.match ?? []).map((e, i) => ({ name: `m${i}`, expr: e })),
    variables: [],
    validations: (p.validate ?? []).map((e) => ({ expr: e, message: '', reason: 'Invalid' })),
    auditAnnotations: (p.audit ?? []).map((e, i) => ({ key: `a${i}`, expr: e })),
    needsNamespace: false,
    usesAuthorizer: false,
    nesting: 0,
    obj: { apiVersion: 'admissionregistration.svc.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' } },
  };
}

const act = { object: {}, oldObject: null, request: {}, namespaceObject: null, authorizer: null };
const times = (n: number, e: Expr): Expr[] => Array.from({ length: n }, () => e);
const outOfBudget = { decisions: [{ deny: true, error: true, message: OUT_OF_BUDGET_MESSAGE, reason: '', index: 0 }], annotations: [] };

describe('the reference budgets of one policy binding', () => {
  const cases: [string, Parameters<typeof policy>[0], unknown][] = [
    ['matchConditions share 2,500,000', { match: times(3, expr(900_000)), validate: [expr(1)] }, outOfBudget],
    [
      'validations have 10,000,000 of their own',
      { match: times(2, expr(900_000)), validate: times(10, expr(950_000)), audit: [expr(1, 'x')] },
      { decisions: [], annotations: [{ key: 'a0', value: 'x' }] },
    ],
    ['validations past 10,000,000', { validate: times(11, expr(950_000)) }, outOfBudget],
    [
      'audit annotations have another 10,000,000',
      { validate: times(10, expr(950_000)), audit: [expr(900_000, 'y')] },
      { decisions: [], annotations: [{ key: 'a0', value: 'y' }] },
    ],
  ];
  for (const [name, p, want] of cases) test(name, () => expect(evaluatePolicy(policy(p), act, undefined)).toEqual(want as never));
});
