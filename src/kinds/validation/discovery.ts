/**
 * discovery.svc.io EndpointSlice (the reference's pkg/apis/discovery/validation): the address
 * type, endpoints and their addresses for that type, ports with unique names.
 */
import { parseIP } from '../../api/net';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  invalidValue,
  labelValue,
  notSupported,
  qualifiedName,
  required,
  tooMany,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, immutable, type J, list, map, obj, semanticEqual, str, validateLabels } from './common';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
/** The deprecated type IP stays acceptable on update. */
const ADDRESS_TYPES_ON_UPDATE = ['FQDN', 'IP', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_TOPOLOGY_LABELS = 16;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 100;
const MAX_ENDPOINTS = 1000;
const MAX_HINTS = 8;

/** ValidateNonSpecialIP. */
export function nonSpecialIP(v: string, path: string): Errs {
  const ip = parseIP(v);
  if (!ip) return [invalidValue(path, v, 'must be a valid IP address')];
  const b = ip.bytes;
  const errs: Errs = [];
  const v4 = b.length === 4 ? b : b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255 ? b.slice(12) : undefined;
  if (b.every((x) => x === 0)) errs.push(invalidValue(path, v, `may not be unspecified (${v})`));
  const loopback = v4 ? v4[0] === 127 : b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  if (loopback) errs.push(invalidValue(path, v, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  const linkLocal = v4 ? v4[0] === 169 && v4[1] === 254 : b[0] === 0xfe && ((b[1] as number) & 0xc0) === 0x80;
  if (linkLocal) errs.push(invalidValue(path, v, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  const llMulticast = v4 ? v4[0] === 224 && v4[1] === 0 && v4[2] === 0 : b[0] === 0xff && ((b[1] as number) & 0x0f) === 0x02;
  if (llMulticast) errs.push(invalidValue(path, v, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}

/** IsFullyQualifiedDomainName. */
function fqdn(name: string, path: string): Errs {
  if (name === '') return [required(path)];
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  const sub = dns1123Subdomain(n);
  if (sub.length > 0) return [invalidValue(path, n, sub.join(','))];
  const labels = n.split('.');
  if (labels.length < 2) return [invalidValue(path, n, 'should be a domain with at least two segments separated by dots')];
  for (const l of labels) {
    const e = dns1123Label(l);
    if (e.length > 0) return [invalidValue(path, l, e.join(','))];
  }
  return [];
}

function validateAddress(type: string, a: string, path: string): Errs {
  switch (type) {
    case 'IPv4': {
      const ip = parseIP(a);
      const ok = ip !== undefined && (ip.bytes.length === 4 || ip.bytes.slice(0, 12).join() === '0,0,0,0,0,0,0,0,0,0,255,255');
      return [...(ok ? [] : [invalidValue(path, a, 'must be a valid IPv4 address')]), ...nonSpecialIP(a, path)];
    }
    case 'IPv6': {
      const ip = parseIP(a);
      const ok = ip !== undefined && ip.bytes.length === 16 && ip.bytes.slice(0, 12).join() !== '0,0,0,0,0,0,0,0,0,0,255,255';
      return [...(ok ? [] : [invalidValue(path, a, 'must be a valid IPv6 address')]), ...nonSpecialIP(a, path)];
    }
    case 'FQDN':
      return fqdn(a, path);
    default:
      return [];
  }
}

function validateEndpoints(endpoints: J[], type: string): Errs {
  if (endpoints.length > MAX_ENDPOINTS) return [tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const errs: Errs = [];
  endpoints.forEach((e, i) => {
    const p = `endpoints[${i}]`;
    const addresses = list<string>(e.addresses);
    if (addresses.length === 0) errs.push(required(`${p}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(`${p}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => {
      errs.push(...validateAddress(type, a, `${p}.addresses[${j}]`));
    });
    // v1 serves the internal Topology field as deprecatedTopology; errors name it as the reference does.
    const topology = map(e.deprecatedTopology);
    const n = Object.keys(topology).length;
    if (n > MAX_TOPOLOGY_LABELS) errs.push(tooMany(`${p}.topology`, n, MAX_TOPOLOGY_LABELS));
    errs.push(...validateLabels(topology, `${p}.topology`));
    if (typeof e.hostname === 'string') errs.push(...each(`${p}.hostname`, e.hostname, dns1123Label(e.hostname)));
    if (typeof e.nodeName === 'string') errs.push(...each(`${p}.nodeName`, e.nodeName, dns1123Subdomain(e.nodeName)));
    const hints = obj(e.hints);
    if (hints) errs.push(...validateHints(hints, `${p}.hints`));
  });
  return errs;
}

/** validateHints: at most 8 zones (label values) and 8 nodes (node names), each once. */
function validateHints(hints: J, path: string): Errs {
  const errs: Errs = [];
  for (const [field, check] of [
    ['forZones', labelValue],
    ['forNodes', dns1123Subdomain],
  ] as const) {
    const items = list<J>(hints[field]);
    if (items.length > MAX_HINTS) {
      errs.push(tooMany(`${path}.${field}`, items.length, MAX_HINTS));
      continue;
    }
    const seen = new Set<string>();
    items.forEach((h, i) => {
      const p = `${path}.${field}[${i}].name`;
      const name = str(h.name);
      if (seen.has(name)) errs.push(duplicate(p, name));
      seen.add(name);
      errs.push(...each(p, name, check(name)));
    });
  }
  return errs;
}

function validatePorts(ports: J[]): Errs {
  if (ports.length > MAX_PORTS) return [tooMany('ports', ports.length, MAX_PORTS)];
  const errs: Errs = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = `ports[${i}]`;
    const name = str(port.name);
    if (name !== '') errs.push(...each(`${p}.name`, name, dns1123Label(name)));
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else names.add(name);
    if (port.protocol === undefined) errs.push(required(`${p}.protocol`));
    else if (!PROTOCOLS.includes(str(port.protocol))) errs.push(notSupported(`${p}.protocol`, str(port.protocol), PROTOCOLS));
    if (typeof port.appProtocol === 'string') errs.push(...each(`${p}.appProtocol`, port.appProtocol, qualifiedName(port.appProtocol)));
  });
  return errs;
}

/** ValidateEndpointSlice with the address types allowed (IP too on update). */
export function validateEndpointSlice(o: J, types: readonly string[]): Errs {
  const type = str(o.addressType);
  const errs: Errs = [];
  if (type === '') errs.push(required('addressType'));
  else if (!types.includes(type)) errs.push(notSupported('addressType', type, types));
  errs.push(...validateEndpoints(list<J>(o.endpoints), type));
  errs.push(...validatePorts(list<J>(o.ports)));
  return errs;
}

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * dropTopologyOnV1: v1 writes drop endpoints[].deprecatedTopology, unless an update leaves the
 * endpoints as they were; a dropped hostname label the old slice had becomes the nodeName.
 */
function dropTopology(o: J, old?: J): void {
  if (old && semanticEqual(o.endpoints, old.endpoints)) return;
  const before = new Set(list<J>(old?.endpoints).map((e) => str(map(e.deprecatedTopology)[HOSTNAME_LABEL])));
  for (const e of list<J>(o.endpoints)) {
    const host = map(e.deprecatedTopology)[HOSTNAME_LABEL];
    if (e.nodeName === undefined && typeof host === 'string' && before.has(host) && dns1123Subdomain(host).length === 0) e.nodeName = host;
    delete e.deprecatedTopology;
  }
}

export const endpointSlice: Strategy = {
  prepareForCreate: (o) => dropTopology(o as unknown as J),
  prepareForUpdate: (o, old) => dropTopology(o as unknown as J, old as unknown as J),
  validate: (o, old) => validateEndpointSlice(o as unknown as J, old ? ADDRESS_TYPES_ON_UPDATE : ADDRESS_TYPES),
  validateUpdate: (o, old) => immutable(o.addressType, old.addressType, 'addressType'),
};
