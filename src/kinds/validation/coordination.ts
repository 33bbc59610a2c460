/**
 * coordination.svc.io: Lease (the reference's pkg/apis/coordination/validation).
 */
import type { Obj } from '../../api/meta';
import { forbiddenField, invalidValue, notSupported, qualifiedName } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, obj, str } from './common';

const STRATEGIES = ['OldestEmulationVersion'];

export function validateLease(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0)
    errs.push(invalidValue('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0)
    errs.push(invalidValue('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  const strategy = str(spec.strategy);
  if (spec.strategy !== undefined) {
    // The reference names this path spec.strategy.strategy.
    if (!strategy.includes('/')) {
      if (!STRATEGIES.includes(strategy)) errs.push(notSupported('spec.strategy.strategy', strategy, STRATEGIES));
    } else errs.push(...each('spec.strategy.strategy', strategy, qualifiedName(strategy)));
  }
  if (str(spec.preferredHolder) !== '' && strategy === '')
    errs.push(forbiddenField('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  return errs;
}

export const lease: Strategy = { validate: validateLease };
