/**
 * apiregistration.svc.io/v1 APIService, with the reference's validation
 * (kube-aggregator/pkg/apis/apiregistration/validation). The server keeps one per served group
 * version (src/registry/api-services.ts); they are `Local` (no aggregation to other servers).
 */
import { now, type Obj } from '../../api/meta';
import { dns1123Subdomain, type FieldError, invalidValue, required } from '../../api/validation';
import { dns1035Label, isValidPortNum, obj, str } from '../validation/common';
import { AGE, col } from './cells';
import type { Spec } from './spec';

function validateAPIService(o: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = obj(o.spec) ?? {};
  const group = str(spec.group);
  const version = str(spec.version);
  const want = `${version}.${group}`;
  const name = o.metadata.name ?? '';
  if (name !== '' && name !== want) errs.push(invalidValue('metadata.name', name, `must be \`spec.version+"."+spec.group\`: "${want}"`));
  if (group === '' && version !== 'v1') {
    errs.push(required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  }
  if (group !== '') for (const m of dns1123Subdomain(group)) errs.push(invalidValue('spec.group', group, m));
  for (const m of dns1035Label(version)) errs.push(invalidValue('spec.version', version, m));
  const gpm = typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0;
  if (gpm <= 0 || gpm > 20000) errs.push(invalidValue('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = typeof spec.versionPriority === 'number' ? spec.versionPriority : 0;
  if (vp <= 0 || vp > 1000) errs.push(invalidValue('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const caBundle = str(spec.caBundle);
  const service = obj(spec.service);
  if (!service) {
    if (caBundle !== '') {
      errs.push(
        invalidValue('spec.caBundle', `${Buffer.from(caBundle, 'base64').length} bytes`, 'local APIServices may not have a caBundle'),
      );
    }
    if (spec.insecureSkipTLSVerify === true) {
      errs.push(invalidValue('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    }
    return errs;
  }
  if (str(service.namespace) === '') errs.push(required('spec.service.namespace'));
  if (str(service.name) === '') errs.push(required('spec.service.name'));
  const port = typeof service.port === 'number' ? service.port : 0;
  const bad = isValidPortNum(port);
  if (bad.length > 0) errs.push(invalidValue('spec.service.port', port, `port is not valid: ${bad.join(', ')}`));
  if (spec.insecureSkipTLSVerify === true && caBundle !== '') {
    errs.push(invalidValue('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  }
  return errs;
}

/** The Available column: True, or False/Unknown with the reason (the aggregator's printer). */
function available(o: Obj): string {
  const conds = (obj(o.status)?.conditions ?? []) as { type?: string; status?: string; reason?: string }[];
  const c = conds.find((x) => x.type === 'Available');
  if (!c) return 'Unknown';
  if (c.status === 'True') return 'True';
  return c.reason ? `${c.status} (${c.reason})` : String(c.status);
}

export const APIREGISTRATION: Spec[] = [
  {
    group: 'apiregistration.svc.io',
    kind: 'APIService',
    plural: 'apiservices',
    categories: ['api-extensions'],
    namespaced: false,
    status: true,
    pkg: 'apiregistration',
    schema: 'io.svc.kube-aggregator.pkg.apis.apiregistration.v1.APIService',
    nameRule: 'path-segment',
    generation: false,
    rules: {
      // The reference's PrepareForCreate: a local APIService is available from its creation on.
      prepareForCreate: (o) => {
        o.status = obj(o.spec)?.service
          ? {}
          : {
              conditions: [
                {
                  type: 'Available',
                  status: 'True',
                  lastTransitionTime: now(),
                  reason: 'Local',
                  message: 'Local APIServices are always available',
                },
              ],
            };
      },
      validate: validateAPIService,
    },
    columns: [
      col('Service', 'string', 'The reference to the service that hosts this API endpoint.', (x) => {
        const s = obj(obj(x.spec)?.service);
        return s ? `${str(s.namespace)}/${str(s.name)}` : 'Local';
      }),
      col('Available', 'string', 'Whether this service is available.', available),
      AGE,
    ],
  },
];
