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

const FORM = '; desired format: https://host[/path]';

/** What Go's url.Parse finds in a URL: scheme, host, user information, query and fragment. */
function parseURL(raw: string): { scheme: string; host: string; user?: string; query: string; fragment: string } {
  let rest = raw;
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  const scheme = m ? (m[1] as string).toLowerCase() : '';
  if (m) rest = rest.slice(m[0].length);
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let host = '';
  let user: string | undefined;
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    const at = authority.lastIndexOf('@');
    if (at >= 0) user = authority.slice(0, at);
    host = at >= 0 ? authority.slice(at + 1) : authority;
  }
  return { scheme, host, user, query, fragment };
}

/** ValidateWebhookURL (forceHttps). */
function validateURL(path: string, raw: string): Errs {
  const u = parseURL(raw);
  const errs: Errs = [];
  if (u.scheme !== 'https') errs.push(invalidValue(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (u.host === '') errs.push(invalidValue(path, u.host, `host must be specified${FORM}`));
  if (u.user !== undefined) errs.push(invalidValue(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment !== '') errs.push(invalidValue(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query !== '') errs.push(invalidValue(path, u.query, 'query parameters are not permitted in the URL'));
  return errs;
}

/** ValidateWebhookService. */
function validateService(path: string, s: J): Errs {
  const errs: Errs = [];
  if (str(s.name) === '') errs.push(required(`${path}.name`));
  if (str(s.namespace) === '') errs.push(required(`${path}.namespace`));
  const port = typeof s.port === 'number' ? s.port : 443;
  const bad = isValidPortNum(port);
  if (bad.length > 0) errs.push(invalidValue(`${path}.port`, port, `port is not valid: ${bad.join(', ')}`));
  const p = str(s.path);
  if (s.path === undefined || p === '/' || p === '') return errs;
  if (p === '//') return [...errs, invalidValue(`${path}.path`, p, 'segment[0] may not be empty')];
  if (!p.startsWith('/')) errs.push(invalidValue(`${path}.path`, p, "must start with a '/'"));
  let check = p.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step === '') errs.push(invalidValue(`${path}.path`, p, `segment[${i}] may not be empty`));
    else for (const m of dns1123Subdomain(step)) errs.push(invalidValue(`${path}.path`, p, `segment[${i}]: ${m}`));
  });
  return errs;
}

function validateReviewVersions(versions: string[], path: string): Errs {
  if (versions.length === 0) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errs: Errs = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalidValue(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    errs.push(...each(`${path}[${i}]`, v, dns1035Label(v)));
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) {
    errs.push(invalidValue(path, stringsValue(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  }
  return errs;
}

/** IsFullyQualifiedName: a DNS subdomain of at least three labels. */
function fullyQualified(path: string, name: string): Errs {
  if (name === '') return [required(path)];
  const bad = dns1123Subdomain(name);
  if (bad.length > 0) return [invalidValue(path, name, bad.join(','))];
  if (name.split('.').length < 3) return [invalidValue(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** validateValidatingWebhook / validateMutatingWebhook, in the reference's order. */
function validateWebhook(h: J, path: string, mutating: boolean): Errs {
  const errs: Errs = [...fullyQualified(`${path}.name`, str(h.name))];
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
  if (mutating && h.reinvocationPolicy !== undefined && !REINVOCATION.includes(str(h.reinvocationPolicy))) {
    errs.push(notSupported(`${path}.reinvocationPolicy`, h.reinvocationPolicy, REINVOCATION));
  }
  errs.push(...validateClientConfig(h.clientConfig, `${path}.clientConfig`));
  errs.push(...validateMatchConditions(list<J>(h.matchConditions), `${path}.matchConditions`));
  return errs;
}

/** A webhook's clientConfig (admission and CRD conversion webhooks): a URL or a Service. */
export function validateClientConfig(v: unknown, path: string): Errs {
  const cc = obj(v) ?? {};
  const service = obj(cc.service);
  if ((cc.url === undefined) === (service === undefined)) return [required(path, 'exactly one of url or service is required')];
  if (cc.url !== undefined) return validateURL(`${path}.url`, str(cc.url));
  return service ? validateService(`${path}.service`, service) : [];
}

/** The rules of both configurations: each webhook, names unique. */
export function webhookConfigurationRules(mutating: boolean): (o: Obj) => FieldError[] {
  return (o) => {
    const errs: FieldError[] = [];
    const seen = new Set<string>();
    list<J>(o.webhooks).forEach((h, i) => {
      errs.push(...validateWebhook(h, `webhooks[${i}]`, mutating));
      errs.push(...validateReviewVersions(list<string>(h.admissionReviewVersions), `webhooks[${i}].admissionReviewVersions`));
      const name = str(h.name);
      if (name !== '' && seen.has(name)) errs.push(duplicate(`webhooks[${i}].name`, name));
      seen.add(name);
    });
    return errs;
  };
}
