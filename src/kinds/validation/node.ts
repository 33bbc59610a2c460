/** node.svc.io RuntimeClass (the reference's pkg/apis/node/validation). */
import { dns1123Label, invalidValue, labelValue, notSupported, qualifiedName } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, immutable, type J, list, map, obj, str, validateLabels } from './common';
import { validateResourceLimits } from './core-quota';

const OPERATORS = ['Equal', 'Exists'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** ValidateTolerations (the reference's core validation). */
export function validateTolerations(tolerations: J[], path: string): Errs {
  const errs: Errs = [];
  tolerations.forEach((t, i) => {
    const p = `${path}[${i}]`;
    const key = str(t.key);
    const operator = str(t.operator);
    if (key !== '') errs.push(...each(`${p}.key`, key, qualifiedName(key)));
    if (key === '' && operator !== 'Exists') {
      errs.push(
        invalidValue(`${p}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'),
      );
    }
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      errs.push(invalidValue(`${p}.effect`, str(t.effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case '':
      case 'Equal':
        if (labelValue(str(t.value)).length > 0) errs.push(invalidValue(`${p}.operator`, str(t.value), labelValue(str(t.value)).join(';')));
        break;
      case 'Exists':
        if (str(t.value) !== '') errs.push(invalidValue(`${p}.operator`, t, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(`${p}.operator`, operator, OPERATORS));
    }
    const effect = str(t.effect);
    if (effect !== '' && !EFFECTS.includes(effect)) errs.push(notSupported(`${p}.effect`, effect, EFFECTS));
  });
  return errs;
}

/** ValidateRuntimeClass: a DNS-label handler, overhead quantities, scheduling constraints. */
export function validateRuntimeClass(o: J): Errs {
  const handler = str(o.handler);
  const errs = each('handler', handler, dns1123Label(handler));
  const overhead = obj(o.overhead);
  // ValidateResourceRequirements over {limits: podFixed}, at the overhead's path.
  if (overhead) errs.push(...validateResourceLimits(overhead.podFixed, 'overhead.limits'));
  const scheduling = obj(o.scheduling);
  if (scheduling) {
    if (scheduling.nodeSelector !== undefined) errs.push(...validateLabels(map(scheduling.nodeSelector), 'scheduling.nodeSelector'));
    errs.push(...validateTolerations(list<J>(scheduling.tolerations), 'scheduling.tolerations'));
  }
  return errs;
}

export const runtimeClass: Strategy = {
  validate: (o) => validateRuntimeClass(o as unknown as J),
  validateUpdate: (o, old) => immutable(o.handler, old.handler, 'handler'),
};
