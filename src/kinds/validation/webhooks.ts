/**
 * admissionregistration.svc.io/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * rules, as the reference's pkg/apis/admissionregistration/validation (v1: sideEffects and
 * admissionReviewVersions required). Stored and validated; not called yet.
 */
import type { Obj } from '../../api/meta';
import { dns1123Subdomain, duplicate, type FieldError, invalidValue, notSupported, required } from '../../api/validation';
import { validateMatchConditions, validateRuleWithOperations } from './admissionregistration';
import { dns1035Label, type Errs, each, isValidPortNum, type J, list, obj, str, stringsValue, validateLabelSelector } from './common';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION = ['IfNeeded', 'Never'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** ValidateWebhookURL (forceHttps). */
function validateURL(path: string, raw: string): Errs {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [invalidValue(path, raw, 'host must be specified')];
  }
  const errs: Errs = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalidValue(path, scheme, "'https' is the only allowed URL scheme"));
  if (u.host === '') errs.push(invalidValue(path, u.host, 'host must be specified'));
  if (u.username || u.password) {
    errs.push(invalidValue(path, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  }
  if (u.hash.length > 1) errs.push(invalidValue(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) errs.push(invalidValue(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

/** ValidateWebhookService. */
function validateService(path: string, s: J): Errs {
  const errs: Errs = [];
  if (str(s.name) === '') errs.push(required(`${path}.name`, 'service name is required'));
  if (str(s.namespace) === '') errs.push(required(`${path}.namespace`, 'service namespace is required'));
  if (typeof s.port === 'number') {
    const bad = isValidPortNum(s.port);
    if (bad.length > 0) errs.push(invalidValue(`${path}.port`, s.port, `port is not valid: ${bad.join(', ')}`));
  }
  if (s.path === undefined) return errs;
  const p = str(s.path);
  if (!p.startsWith('/')) return [...errs, invalidValue(`${path}.path`, p, "must start with a '/'")];
  if (p === '/') return errs;
  p.slice(1)
    .split('/')
    .forEach((step, i) => {
      if (step === '') errs.push(invalidValue(`${path}.path`, p, `segment[${i}] may not be empty`));
      else {
        const m = dns1123Subdomain(step);
        if (m.length > 0) errs.push(invalidValue(`${path}.path`, p, `segment[${i}]: ${m.join(', ')}`));
      }
    });
  return errs;
}

function validateReviewVersions(versions: string[], path: string): Errs {
  if (versions.length === 0) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errs: Errs = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    errs.push(...each(`${path}[${i}]`, v, dns1035Label(v)));
    if (seen.has(v)) errs.push(invalidValue(`${path}[${i}]`, v, 'duplicate version'));
    seen.add(v);
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) {
    errs.push(invalidValue(path, stringsValue(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
  return errs;
}

function validateWebhook(h: J, path: string, mutating: boolean): Errs {
  const errs: Errs = [];
  const name = str(h.name);
  if (name === '') errs.push(required(`${path}.name`));
  else {
    errs.push(...each(`${path}.name`, name, dns1123Subdomain(name)));
    if (name.split('.').length < 3) {
      errs.push(invalidValue(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'));
    }
  }
  list<J>(h.rules).forEach((r, i) => {
    errs.push(...validateRuleWithOperations(r, `${path}.rules[${i}]`));
  });
  if (h.failurePolicy !== undefined && !FAILURE_POLICIES.includes(str(h.failurePolicy)))
    errs.push(notSupported(`${path}.failurePolicy`, h.failurePolicy, FAILURE_POLICIES));
  if (h.matchPolicy !== undefined && !MATCH_POLICIES.includes(str(h.matchPolicy)))
    errs.push(notSupported(`${path}.matchPolicy`, h.matchPolicy, MATCH_POLICIES));
  if (h.sideEffects === undefined) errs.push(required(`${path}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`));
  else if (!SIDE_EFFECTS.includes(str(h.sideEffects))) errs.push(notSupported(`${path}.sideEffects`, h.sideEffects, SIDE_EFFECTS));
  if (typeof h.timeoutSeconds === 'number' && (h.timeoutSeconds > 30 || h.timeoutSeconds < 1)) {
    errs.push(invalidValue(`${path}.timeoutSeconds`, h.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  for (const sel of ['namespaceSelector', 'objectSelector']) {
    if (h[sel] !== undefined) errs.push(...validateLabelSelector(h[sel], `${path}.${sel}`));
  }
  errs.push(...validateReviewVersions(list<string>(h.admissionReviewVersions), `${path}.admissionReviewVersions`));
  const cc = obj(h.clientConfig) ?? {};
  const url = cc.url;
  const service = obj(cc.service);
  if ((url === undefined) === (service === undefined)) {
    errs.push(required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  } else if (url !== undefined) errs.push(...validateURL(`${path}.clientConfig.url`, str(url)));
  else if (service) errs.push(...validateService(`${path}.clientConfig.service`, service));
  if (mutating && h.reinvocationPolicy !== undefined && !REINVOCATION.includes(str(h.reinvocationPolicy))) {
    errs.push(notSupported(`${path}.reinvocationPolicy`, h.reinvocationPolicy, REINVOCATION));
  }
  errs.push(...validateMatchConditions(list<J>(h.matchConditions), `${path}.matchConditions`));
  return errs;
}

/** The rules of both configurations: each webhook, names unique. */
export function webhookConfigurationRules(mutating: boolean): (o: Obj) => FieldError[] {
  return (o) => {
    const errs: FieldError[] = [];
    const seen = new Set<string>();
    list<J>(o.webhooks).forEach((h, i) => {
      const name = str(h.name);
      if (seen.has(name)) errs.push(duplicate(`webhooks[${i}].name`, name));
      seen.add(name);
      errs.push(...validateWebhook(h, `webhooks[${i}]`, mutating));
    });
    return errs;
  };
}
