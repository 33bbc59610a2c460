/**
 * The estimated cost of a CRD version's validation rules (the reference's apiextensions
 * validation with StaticEstimatedCostLimit and StaticEstimatedCRDCostLimit): each rule's and
 * messageExpression's worst case (src/cel/estimate.ts) times the number of times its node can
 * occur in one object must stay within 10,000,000, and all of them together within 100,000,000.
 */
import { isObject, type JsonObject } from '../../api/meta';
import { cardinalityOf, costErrorMessage, estimateCost, STATIC_COST_LIMIT, STATIC_CRD_COST_LIMIT } from '../../cel/estimate';

export interface RuleCostError {
  /** Path below the version's `schema` (e.g. `openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`). */
  path: string;
  detail: string;
  /** The expression (absent on the total). */
  expr?: string;
}

/** The cost errors of one schema (none when every estimate is within the limits). */
export function ruleCostErrors(root: JsonObject): RuleCostError[] {
  const errs: RuleCostError[] = [];
  const costs: { path: string; cost: number }[] = [];
  const visit = (s: JsonObject, path: string, parents: JsonObject[]): void => {
    const rules = Array.isArray(s['x-svc-validations']) ? s['x-svc-validations'].filter(isObject) : [];
    if (rules.length > 0) {
      const cardinality = cardinalityOf(parents);
      rules.forEach((r, i) => {
        const at = `${path}.x-kubernetes-validations[${i}]`;
        for (const [key, what] of [
          ['rule', 'estimated rule cost'],
          ['messageExpression', 'estimated messageExpression cost'],
        ] as const) {
          const expr = r[key];
          if (typeof expr !== 'string' || expr === '') continue;
          const est = estimateCost(expr, s, parents.length === 0);
          if (est === undefined) continue;
          const cost = Math.min(est * cardinality, Number.MAX_SAFE_INTEGER);
          if (cost > STATIC_COST_LIMIT) errs.push({ path: `${at}.${key}`, detail: costErrorMessage(what, cost, STATIC_COST_LIMIT), expr });
          costs.push({ path: `${at}.${key}`, cost });
        }
      });
    }
    const inner = [...parents, s];
    if (isObject(s.properties))
      for (const [k, v] of Object.entries(s.properties)) if (isObject(v)) visit(v, `${path}.properties[${k}]`, inner);
    if (isObject(s.items)) visit(s.items, `${path}.items`, inner);
    if (isObject(s.additionalProperties)) visit(s.additionalProperties, `${path}.additionalProperties`, inner);
  };
  visit(root, 'openAPIV3Schema', []);
  const total = costs.reduce((a, c) => Math.min(a + c.cost, Number.MAX_SAFE_INTEGER), 0);
  if (total > STATIC_CRD_COST_LIMIT) {
    // The reference names the (at most four) most expensive expressions, then the total.
    for (const c of [...costs].sort((a, b) => b.cost - a.cost).slice(0, 4)) {
      errs.push({
        path: c.path,
        detail: 'contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema',
      });
    }
    errs.push({
      path: 'openAPIV3Schema',
      detail: costErrorMessage(
        'x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema',
        total,
        STATIC_CRD_COST_LIMIT,
      ),
    });
  }
  return errs;
}
