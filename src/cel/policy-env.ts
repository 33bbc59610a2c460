/**
 * The CEL environments of a ValidatingAdmissionPolicy's expressions, by where they stand (the
 * reference's validatingadmissionpolicy compiler): the variables each place declares.
 *
 *   matchConditions                       object, oldObject, request, params, authorizer
 *   variables, validations,               object, oldObject, request, params, namespaceObject,
 *   messageExpressions                    variables, authorizer
 *   auditAnnotations                      the same without authorizer
 *
 * `params` is declared only when the policy has a paramKind (elsewhere naming it is a compile
 * error, as the reference). Used where policies are validated on write and where they are
 * compiled to run, so an expression accepted by one compiles in the other.
 */
import { type CelEnv, celEnv } from './index';

export type PolicyPlace = 'matchCondition' | 'validation' | 'auditAnnotation';

const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
const ENVS = new Map<string, CelEnv>();

export function policyEnv(place: PolicyPlace, withParams: boolean): CelEnv {
  const names = ['object', 'oldObject', 'request', ...(withParams ? ['params'] : [])];
  if (place !== 'matchCondition') names.push('namespaceObject', 'variables');
  if (place !== 'auditAnnotation') names.push('authorizer');
  const key = names.join(',');
  let e = ENVS.get(key);
  if (!e) {
    const vars: Record<string, string> = {};
    for (const n of names) vars[n] = n === 'variables' ? 'map<string, dyn>' : n === 'authorizer' ? AUTHORIZER_TYPE : 'dyn';
    e = celEnv(vars);
    ENVS.set(key, e);
  }
  return e;
}
