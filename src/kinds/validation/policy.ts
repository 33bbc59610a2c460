/**
 * policy: PodDisruptionBudget (the reference's pkg/apis/policy/validation).
 */
import type { Obj } from '../../api/meta';
import { duplicate, invalidValue, notSupported } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  type J,
  list,
  nonNegative,
  notMoreThan100Percent,
  obj,
  positiveIntOrPercent,
  str,
  validateLabelSelector,
} from './common';

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

const intOrString = (v: unknown): number | string | undefined => (typeof v === 'number' || typeof v === 'string' ? v : undefined);

export function validatePodDisruptionBudget(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const min = intOrString(spec.minAvailable);
  const max = intOrString(spec.maxUnavailable);
  if (min !== undefined && max !== undefined) errs.push(invalidValue('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  if (min !== undefined) errs.push(...positiveIntOrPercent(min, 'spec.minAvailable'), ...notMoreThan100Percent(min, 'spec.minAvailable'));
  if (max !== undefined)
    errs.push(...positiveIntOrPercent(max, 'spec.maxUnavailable'), ...notMoreThan100Percent(max, 'spec.maxUnavailable'));
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  if (spec.unhealthyPodEvictionPolicy !== undefined && !EVICTION_POLICIES.includes(str(spec.unhealthyPodEvictionPolicy)))
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', str(spec.unhealthyPodEvictionPolicy), EVICTION_POLICIES));
  return errs;
}

/** ValidatePodDisruptionBudgetStatusUpdate (v1): counts non-negative, conditions well formed. */
export function validatePodDisruptionBudgetStatus(o: Obj): Errs {
  const status = obj(o.status) ?? {};
  const errs: Errs = [];
  const seen = new Set<string>();
  list<J>(status.conditions).forEach((c, i) => {
    const p = `status.conditions[${i}]`;
    const type = str(c.type);
    if (seen.has(type)) errs.push(duplicate(`${p}.type`, type));
    seen.add(type);
    if (!['True', 'False', 'Unknown'].includes(str(c.status)))
      errs.push(notSupported(`${p}.status`, str(c.status), ['False', 'True', 'Unknown']));
  });
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'])
    if (typeof status[f] === 'number') errs.push(...nonNegative(status[f] as number, `status.${f}`));
  return errs;
}

export const podDisruptionBudget: Strategy = {
  validate: (o) => [...validatePodDisruptionBudget(o), ...validatePodDisruptionBudgetStatus(o)],
};
