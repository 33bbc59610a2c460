/**
 * networking.svc.io: NetworkPolicy, IPAddress and ServiceCIDR (the reference's
 * pkg/apis/networking/validation); Ingress and IngressClass are in ingress.ts.
 */
import type { Obj } from '../../api/meta';
import { ipFamily, parseCidr, strictSubset, validateCanonicalCidr, validateCidr, validateIP } from '../../api/net';
import { dns1123Subdomain, forbiddenField, invalidValue, notSupported, pathSegmentName, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  each,
  FIELD_IMMUTABLE,
  GoValue,
  immutable,
  isUpdate,
  isValidPortName,
  isValidPortNum,
  type J,
  list,
  obj,
  str,
  stringsValue,
  validateLabelSelector,
} from './common';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];

function validatePort(p: J, path: string): Errs {
  const errs: Errs = [];
  if (p.protocol !== undefined && !PROTOCOLS.includes(str(p.protocol)))
    errs.push(notSupported(`${path}.protocol`, str(p.protocol), PROTOCOLS));
  const endPort = typeof p.endPort === 'number' ? p.endPort : undefined;
  if (typeof p.port === 'number') {
    errs.push(...each(`${path}.port`, p.port, isValidPortNum(p.port)));
    if (endPort !== undefined) {
      // The reference reports the port (not endPort) as the bad value here.
      if (endPort < p.port) errs.push(invalidValue(`${path}.endPort`, p.port, 'must be greater than or equal to `port`'));
      errs.push(...each(`${path}.endPort`, endPort, isValidPortNum(endPort)));
    }
  } else if (typeof p.port === 'string') {
    if (endPort !== undefined) errs.push(invalidValue(`${path}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    errs.push(...each(`${path}.port`, p.port, isValidPortName(p.port)));
  } else if (endPort !== undefined) {
    errs.push(invalidValue(`${path}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

function validateIPBlock(b: J, path: string, allowed: readonly string[]): Errs {
  const cidr = str(b.cidr);
  if (cidr === '') return [required(`${path}.cidr`)];
  const errs = validateCidr(`${path}.cidr`, cidr, allowed);
  const outer = parseCidr(cidr);
  if (!outer) return errs;
  list<string>(b.except).forEach((e, i) => {
    const p = `${path}.except[${i}]`;
    errs.push(...validateCidr(p, e, allowed));
    const inner = parseCidr(e);
    if (inner && !strictSubset(outer, inner)) errs.push(invalidValue(p, e, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

function validatePeer(peer: J, path: string, allowed: readonly string[]): Errs {
  const errs: Errs = [];
  let n = 0;
  if (peer.podSelector !== undefined) {
    n++;
    errs.push(...validateLabelSelector(peer.podSelector, `${path}.podSelector`));
  }
  if (peer.namespaceSelector !== undefined) {
    n++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${path}.namespaceSelector`));
  }
  const ipBlock = obj(peer.ipBlock);
  if (ipBlock) {
    n++;
    errs.push(...validateIPBlock(ipBlock, `${path}.ipBlock`, allowed));
  }
  if (n === 0) errs.push(required(path, 'must specify a peer'));
  else if (n > 1 && ipBlock) errs.push(forbiddenField(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** ValidateNetworkPolicySpec; `allowedCidrs` are the CIDRs of the stored object on update. */
export function validateNetworkPolicySpec(spec: J, allowedCidrs: readonly string[] = []): Errs {
  const errs = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  list<J>(spec.ingress).forEach((rule, i) => {
    const p = `spec.ingress[${i}]`;
    list<J>(rule.ports).forEach((port, j) => {
      errs.push(...validatePort(port, `${p}.ports[${j}]`));
    });
    list<J>(rule.from).forEach((peer, j) => {
      errs.push(...validatePeer(peer, `${p}.from[${j}]`, allowedCidrs));
    });
  });
  list<J>(spec.egress).forEach((rule, i) => {
    const p = `spec.egress[${i}]`;
    list<J>(rule.ports).forEach((port, j) => {
      errs.push(...validatePort(port, `${p}.ports[${j}]`));
    });
    list<J>(rule.to).forEach((peer, j) => {
      errs.push(...validatePeer(peer, `${p}.to[${j}]`, allowedCidrs));
    });
  });
  const types = list<string>(spec.policyTypes);
  if (types.length > POLICY_TYPES.length) {
    errs.push(
      invalidValue('spec.policyTypes', stringsValue(types, '[]networking.PolicyType'), 'may not specify more than two policyTypes'),
    );
    return errs;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) errs.push(notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
  });
  return errs;
}

/** The CIDRs (cidr and except) of every ipBlock peer of a policy. */
function existingCidrs(o: Obj): string[] {
  const spec = obj(o.spec) ?? {};
  const peers = [...list<J>(spec.ingress).flatMap((r) => list<J>(r.from)), ...list<J>(spec.egress).flatMap((r) => list<J>(r.to))];
  return peers.flatMap((p) => {
    const b = obj(p.ipBlock);
    return b ? [str(b.cidr), ...list<string>(b.except)] : [];
  });
}

export const networkPolicy: Strategy = {
  // On update the stored CIDRs stay acceptable, so the spec is checked once, in validateUpdate.
  validate: (o) => (isUpdate(o) ? [] : validateNetworkPolicySpec(obj(o.spec) ?? {})),
  validateUpdate: (o, old) => validateNetworkPolicySpec(obj(o.spec) ?? {}, existingCidrs(old)),
};

// ---- IPAddress and ServiceCIDR ----------------------------------------------------------------

/** ValidateIPAddress: the name is an IP address in canonical form; parentRef names its owner. */
function validateIPAddress(o: Obj): Errs {
  const errs = validateIP('metadata.name', o.metadata.name ?? '');
  const ref = obj(obj(o.spec)?.parentRef);
  if (!ref) return [...errs, required('spec.parentRef')];
  const p = 'spec.parentRef';
  const group = str(ref.group);
  if (group !== '') errs.push(...each(`${p}.group`, group, dns1123Subdomain(group)));
  for (const f of ['resource', 'name']) {
    const v = str(ref[f]);
    if (v === '') errs.push(required(`${p}.${f}`));
    else errs.push(...each(`${p}.${f}`, v, pathSegmentName(v)));
  }
  const ns = str(ref.namespace);
  if (ns !== '') errs.push(...each(`${p}.namespace`, ns, pathSegmentName(ns)));
  return errs;
}

/**
 * The bad value of an immutable parentRef as the reference prints it: field errors dereference
 * pointers (`null` for nil), then Go's %#v of the struct.
 */
function parentRefValue(ref: unknown): GoValue | null {
  const r = obj(ref);
  if (!r) return null;
  const f = (k: string) => JSON.stringify(str(r[k]));
  return new GoValue(
    `networking.ParentReference{Group:${f('group')}, Resource:${f('resource')}, Namespace:${f('namespace')}, Name:${f('name')}}`,
    r,
  );
}

export const ipAddress: Strategy = {
  validate: validateIPAddress,
  validateUpdate: (o, old) => {
    const next = obj(o.spec)?.parentRef;
    return immutable(next, obj(old.spec)?.parentRef, 'spec.parentRef', parentRefValue(next));
  },
};

const CIDRS = 'spec.cidrs';

/** validateServiceCIDRSpec: one or two canonical CIDRs, at most one per IP family. */
function validateServiceCIDRSpec(spec: J): Errs {
  const cidrs = list<string>(spec.cidrs);
  if (cidrs.length === 0) return [required(CIDRS, 'at least one CIDR required')];
  if (cidrs.length > 2) {
    const text = `networking.ServiceCIDRSpec{CIDRs:${stringsValue(cidrs)}}`;
    return [invalidValue(CIDRS, new GoValue(text, spec), 'may only hold up to 2 values')];
  }
  const errs = cidrs.flatMap((c, i) => validateCanonicalCidr(`${CIDRS}[${i}]`, c));
  const [a, b] = cidrs as [string, string | undefined];
  if (b !== undefined && ipFamily(a) !== 0 && ipFamily(a) === ipFamily(b)) {
    errs.push(
      invalidValue(CIDRS, stringsValue(cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'),
    );
  }
  return errs;
}

/** ValidateServiceCIDRUpdate: the CIDRs never change, except that a single-stack one may gain a second family. */
function validateServiceCIDRUpdate(o: Obj, old: Obj): Errs {
  const next = list<string>(obj(o.spec)?.cidrs);
  const prev = list<string>(obj(old.spec)?.cidrs);
  if (next.length === prev.length) {
    return prev.flatMap((c, i) => (c === next[i] ? [] : [invalidValue(`${CIDRS}[${i}]`, next[i], FIELD_IMMUTABLE)]));
  }
  if (prev.length === 1 && next.length === 2) return next[0] === prev[0] ? [] : [invalidValue(`${CIDRS}[0]`, next[0], FIELD_IMMUTABLE)];
  return [invalidValue(CIDRS, stringsValue(next), FIELD_IMMUTABLE)];
}

export const serviceCIDR: Strategy = {
  prepareForCreate(o) {
    o.status = {};
  },
  // An update is checked as a whole by validateUpdate (a second CIDR is validated there too).
  validate: (o) => (isUpdate(o) ? [] : validateServiceCIDRSpec(obj(o.spec) ?? {})),
  validateUpdate: (o, old) => {
    const errs = validateServiceCIDRUpdate(o, old);
    const n = list(obj(o.spec)?.cidrs).length;
    if (n === 2 && list(obj(old.spec)?.cidrs).length === 1) errs.push(...validateServiceCIDRSpec(obj(o.spec) ?? {}));
    return errs;
  },
};
