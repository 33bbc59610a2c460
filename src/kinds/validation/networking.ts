/**
 * networking.svc.io: NetworkPolicy (the reference's pkg/apis/networking/validation).
 */
import type { Obj } from '../../api/meta';
import { parseCidr, strictSubset, validateCidr } from '../../api/net';
import { forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  each,
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
