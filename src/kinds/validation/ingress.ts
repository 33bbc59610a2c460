/**
 * networking.svc.io Ingress and IngressClass (the reference's pkg/apis/networking/validation):
 * rules and paths, backends, TLS hosts, the class name and the class's controller and parameters.
 */
import type { Obj } from '../../api/meta';
import { parseIP, validateIPForLegacyField } from '../../api/net';
import {
  dns1123Label,
  dns1123Subdomain,
  type FieldError,
  forbiddenField,
  invalidValue,
  notSupported,
  pathSegmentName,
  required,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  dns1035Label,
  type Errs,
  each,
  GoValue,
  immutable,
  isValidPortName,
  isValidPortNum,
  type J,
  list,
  map,
  maxLenError,
  obj,
  regexError,
  str,
} from './common';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const SCOPES = ['Cluster', 'Namespace'];
const MAX_CONTROLLER = 250;

const WILDCARD_FMT = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const WILDCARD = new RegExp(`^${WILDCARD_FMT}$`);

/** IsWildcardDNS1123Subdomain. */
export function wildcardSubdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!WILDCARD.test(v)) {
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_FMT,
        '*.example.com',
      ),
    );
  }
  return errs;
}

/** A host of a rule or TLS entry: a wildcard or plain DNS subdomain. */
const hostErrors = (host: string): readonly string[] => (host.includes('*') ? wildcardSubdomain(host) : dns1123Subdomain(host));

/** validateIngressTypedLocalObjectReference (a resource backend). */
function validateTypedRef(ref: J, path: string): Errs {
  const errs: Errs = [];
  if (typeof ref.apiGroup === 'string') errs.push(...each(`${path}.apiGroup`, ref.apiGroup, dns1123Subdomain(ref.apiGroup)));
  for (const f of ['kind', 'name']) {
    const v = str(ref[f]);
    if (v === '') errs.push(required(`${path}.${f}`));
    else errs.push(...each(`${path}.${f}`, v, pathSegmentName(v)));
  }
  return errs;
}

/** validateIngressBackend: exactly one of service and resource; a service port by name or number. */
function validateBackend(b: J, path: string): Errs {
  const resource = obj(b.resource);
  const service = obj(b.service);
  if (resource && service) return [invalidValue(path, '', 'cannot set both resource and service backends')];
  if (resource) return validateTypedRef(resource, `${path}.resource`);
  if (!service) return [invalidValue(path, '', 'resource or service backend is required')];
  const errs: Errs = [];
  const name = str(service.name);
  if (name === '') errs.push(required(`${path}.service.name`));
  else errs.push(...each(`${path}.service.name`, name, dns1035Label(name)));
  const port = map(service.port);
  const portName = str(port.name);
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName !== '' && portNumber !== 0) errs.push(invalidValue(path, '', 'cannot set both port name & port number'));
  else if (portName !== '') errs.push(...each(`${path}.service.port.name`, portName, isValidPortName(portName)));
  else if (portNumber !== 0) errs.push(...each(`${path}.service.port.number`, portNumber, isValidPortNum(portNumber)));
  else errs.push(required(path, 'port name or number is required'));
  return errs;
}

function validatePath(p: J, path: string): Errs {
  if (p.pathType === undefined) return [required(`${path}.pathType`, 'pathType must be specified')];
  const errs: Errs = [];
  const value = str(p.path);
  switch (p.pathType) {
    case 'Exact':
    case 'Prefix':
      if (!value.startsWith('/')) errs.push(invalidValue(`${path}.path`, value, 'must be an absolute path'));
      for (const seq of INVALID_PATH_SEQUENCES)
        if (value.includes(seq)) errs.push(invalidValue(`${path}.path`, value, `must not contain '${seq}'`));
      for (const suffix of INVALID_PATH_SUFFIXES)
        if (value.endsWith(suffix)) errs.push(invalidValue(`${path}.path`, value, `cannot end with '${suffix}'`));
      break;
    case 'ImplementationSpecific':
      if (value !== '' && !value.startsWith('/')) errs.push(invalidValue(`${path}.path`, value, 'must be an absolute path'));
      break;
    default:
      errs.push(notSupported(`${path}.pathType`, str(p.pathType), PATH_TYPES));
  }
  errs.push(...validateBackend(map(p.backend), `${path}.backend`));
  return errs;
}

/** validateIngressRuleValue: an http rule has paths, each valid. */
function validateRuleValue(rule: J, p: string): Errs {
  const http = obj(rule.http);
  if (!http) return [];
  const paths = list<J>(http.paths);
  const errs: Errs = paths.length === 0 ? [required(`${p}.http.paths`)] : [];
  paths.forEach((hp, j) => {
    errs.push(...validatePath(hp, `${p}.http.paths[${j}]`));
  });
  return errs;
}

/** Update tolerances for what older servers stored (the reference's IngressValidationOptions). */
interface Options {
  /** A stored TLS secret name is invalid: secret names are not checked. */
  allowInvalidSecretName: boolean;
  /** A stored wildcard-host rule is invalid: rules of wildcard hosts are not checked. */
  allowInvalidWildcardHostRule: boolean;
}

function optionsFor(old: Obj | undefined): Options {
  const spec = map(old?.spec);
  return {
    allowInvalidSecretName: list<J>(spec.tls).some((t) => str(t.secretName) !== '' && dns1123Subdomain(str(t.secretName)).length > 0),
    allowInvalidWildcardHostRule: list<J>(spec.rules).some((r) => str(r.host).includes('*') && validateRuleValue(r, '').length > 0),
  };
}

function validateRules(rules: J[], opts: Options): Errs {
  const errs: Errs = [];
  rules.forEach((rule, i) => {
    const p = `spec.rules[${i}]`;
    const host = str(rule.host);
    if (host !== '') {
      if (parseIP(host)) errs.push(invalidValue(`${p}.host`, host, 'must be a DNS name, not an IP address'));
      errs.push(...each(`${p}.host`, host, hostErrors(host)));
    }
    if (!host.includes('*') || !opts.allowInvalidWildcardHostRule) errs.push(...validateRuleValue(rule, p));
  });
  return errs;
}

/** ValidateIngressCreate / ValidateIngressUpdate (`old`: the stored object on update). */
export function validateIngress(o: Obj, old?: Obj): Errs {
  const create = old === undefined;
  const opts = optionsFor(old);
  const spec = map(o.spec);
  const rules = list<J>(spec.rules);
  const errs: Errs = [];
  const backend = obj(spec.defaultBackend);
  if (rules.length === 0 && !backend) {
    errs.push(
      invalidValue(
        'spec',
        new GoValue(Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)', spec.rules ?? null),
        'either `defaultBackend` or `rules` must be specified',
      ),
    );
  }
  if (backend) errs.push(...validateBackend(backend, 'spec.defaultBackend'));
  errs.push(...validateRules(rules, opts));
  list<J>(spec.tls).forEach((tls, i) => {
    list<string>(tls.hosts).forEach((h, j) => {
      errs.push(...each(`spec.tls[${i}].hosts[${j}]`, h, hostErrors(h)));
    });
    const secret = str(tls.secretName);
    if (secret !== '' && !opts.allowInvalidSecretName) errs.push(...each(`spec.tls[${i}].secretName`, secret, dns1123Subdomain(secret)));
  });
  const className = spec.ingressClassName;
  if (typeof className === 'string') errs.push(...each('spec.ingressClassName', className, dns1123Subdomain(className)));
  const annotation = o.metadata.annotations?.[CLASS_ANNOTATION];
  if (create && annotation !== undefined && typeof className === 'string' && annotation !== className) {
    errs.push(invalidValue(`annotations.${CLASS_ANNOTATION}`, annotation, 'must match `ingressClassName` when both are specified'));
  }
  return errs;
}

/**
 * ValidateIngressLoadBalancerStatus: IPs (the stored ones pass as they are) and DNS hostnames that
 * are no IPs. The registry validates the whole object on status writes too, so this runs there.
 */
function validateLoadBalancerStatus(status: J, old: J | undefined): Errs {
  const existing = list<J>(map(old?.loadBalancer).ingress)
    .map((i) => str(i.ip))
    .filter((ip) => ip !== '');
  const errs: Errs = [];
  list<J>(map(status.loadBalancer).ingress).forEach((i, n) => {
    const p = `status.loadBalancer.ingress[${n}]`;
    const ip = str(i.ip);
    if (ip !== '') errs.push(...validateIPForLegacyField(`${p}.ip`, ip, existing));
    const host = str(i.hostname);
    if (host !== '') {
      errs.push(...each(`${p}.hostname`, host, dns1123Subdomain(host)));
      if (parseIP(host)) errs.push(invalidValue(`${p}.hostname`, host, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

export const ingress: Strategy = {
  prepareForCreate(o) {
    o.status = { loadBalancer: {} };
  },
  validate: (o, old) => [...validateIngress(o, old), ...(old ? validateLoadBalancerStatus(map(o.status), map(old.status)) : [])],
};

// ---- IngressClass -----------------------------------------------------------------------------

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH = new RegExp(`^${HTTP_PATH_FMT}$`);

/** IsDomainPrefixedPath. */
function domainPrefixedPath(path: string, v: string): Errs {
  const slash = v.indexOf('/');
  const host = slash < 0 ? v : v.slice(0, slash);
  const rest = slash < 0 ? '' : v.slice(slash + 1);
  if (slash < 0 || host === '' || rest === '') return [invalidValue(path, v, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = each(path, host, dns1123Subdomain(host));
  if (!HTTP_PATH.test(rest)) errs.push(invalidValue(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  return errs;
}

function validateParameters(p: J, path: string): Errs {
  const errs: Errs = [];
  if (typeof p.apiGroup === 'string') errs.push(...each(`${path}.apiGroup`, p.apiGroup, dns1123Subdomain(p.apiGroup)));
  for (const f of ['kind', 'name']) {
    const v = str(p[f]);
    if (v === '') errs.push(required(`${path}.${f}`));
    else errs.push(...each(`${path}.${f}`, v, pathSegmentName(v)));
  }
  if (p.scope === undefined) {
    errs.push(required(`${path}.scope`));
    return errs;
  }
  const scope = str(p.scope);
  if (!SCOPES.includes(scope)) {
    errs.push(notSupported(`${path}.scope`, scope, SCOPES));
    return errs;
  }
  if (scope === 'Namespace') {
    if (typeof p.namespace !== 'string') errs.push(required(`${path}.namespace`, "`parameters.scope` is set to 'Namespace'"));
    else errs.push(...each(`${path}.namespace`, p.namespace, dns1123Label(p.namespace)));
  }
  if (scope === 'Cluster' && p.namespace !== undefined)
    errs.push(forbiddenField(`${path}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  return errs;
}

function validateIngressClassSpec(spec: J): Errs {
  const errs: Errs = [];
  const controller = str(spec.controller);
  if (controller === '') errs.push(required('spec.controller'));
  else {
    if (new TextEncoder().encode(controller).length > MAX_CONTROLLER) {
      const tooLong: FieldError = {
        type: 'FieldValueTooLong',
        field: 'spec.controller',
        detail: `may not be more than ${MAX_CONTROLLER} bytes`,
      };
      errs.push(tooLong);
    }
    errs.push(...domainPrefixedPath('spec.controller', controller));
  }
  const params = obj(spec.parameters);
  if (params) errs.push(...validateParameters(params, 'spec.parameters'));
  return errs;
}

export const ingressClass: Strategy = {
  validate: (o) => validateIngressClassSpec(map(o.spec)),
  validateUpdate: (o, old) => immutable(map(o.spec).controller, map(old.spec).controller, 'spec.controller'),
};
