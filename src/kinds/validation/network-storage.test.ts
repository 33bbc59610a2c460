/** The address rules the networking and discovery kinds share, as functions (the reference's util/validation texts). */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { formatIP, parseIP, validateCanonicalCidr, validateIP } from '../../api/net';
import { validateEndpointSlice } from './discovery';
import { validateIngress, wildcardSubdomain } from './ingress';

const details = (errs: { field: string; detail: string }[]) => errs.map((e) => `${e.field}: ${e.detail}`);

describe('IP addresses and CIDRs', () => {
  test('formatIP prints as Go: the longest zero run (of two or more) as ::, the first of equals', () => {
    const fmt = (s: string) => formatIP(parseIP(s)?.bytes ?? []);
    expect(fmt('2001:0DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(fmt('2001:db8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1');
    expect(fmt('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(fmt('2001:db8:1:0:1:1:1:1')).toBe('2001:db8:1:0:1:1:1:1');
    expect(fmt('::')).toBe('::');
    expect(fmt('::1')).toBe('::1');
    expect(fmt('10.0.0.1')).toBe('10.0.0.1');
  });

  test('validateIP: valid, canonical, no leading zeros, not IPv4-mapped', () => {
    expect(validateIP('n', '10.1.2.3')).toEqual([]);
    expect(details(validateIP('n', 'foo'))).toEqual(['n: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
    expect(details(validateIP('n', '010.1.2.3'))).toEqual(['n: must not have leading 0s']);
    expect(details(validateIP('n', '::ffff:1.2.3.4'))).toEqual(['n: must not be an IPv4-mapped IPv6 address']);
    expect(details(validateIP('n', '2001:db8:0::1'))).toEqual(['n: must be in canonical form ("2001:db8::1")']);
  });

  test('validateCanonicalCidr: canonical network address and prefix', () => {
    expect(validateCanonicalCidr('c', '10.0.0.0/8')).toEqual([]);
    expect(validateCanonicalCidr('c', 'fd00::/64')).toEqual([]);
    expect(details(validateCanonicalCidr('c', '10.0.0.1/8'))).toEqual(['c: must be in canonical form ("10.0.0.0/8")']);
    expect(details(validateCanonicalCidr('c', 'fd00:0::/64'))).toEqual(['c: must be in canonical form ("fd00::/64")']);
    expect(details(validateCanonicalCidr('c', '10.0.0.0/08'))).toEqual(['c: must not have leading 0s in IP or prefix length']);
    expect(details(validateCanonicalCidr('c', '10.0.0.0'))).toEqual(['c: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']);
  });

  test('wildcard hosts: *. and a subdomain', () => {
    expect(wildcardSubdomain('*.example.com')).toEqual([]);
    expect(wildcardSubdomain('*.*.example.com')).toHaveLength(1);
    expect(wildcardSubdomain('a.*.example.com')[0]).toStartWith("a wildcard DNS-1123 subdomain must start with '*.'");
  });
});

describe('EndpointSlice addresses', () => {
  const slice = (addressType: string, addresses: string[]) => ({ addressType, endpoints: [{ addresses }] });
  const TYPES = ['FQDN', 'IPv4', 'IPv6'];

  test('IPv4 and IPv6 addresses of their family, no special ranges', () => {
    expect(validateEndpointSlice(slice('IPv4', ['10.0.0.1']), TYPES)).toEqual([]);
    expect(details(validateEndpointSlice(slice('IPv4', ['fd00::1']), TYPES))).toEqual([
      'endpoints[0].addresses[0]: must be a valid IPv4 address',
    ]);
    expect(details(validateEndpointSlice(slice('IPv6', ['10.0.0.1']), TYPES))).toEqual([
      'endpoints[0].addresses[0]: must be a valid IPv6 address',
    ]);
    expect(details(validateEndpointSlice(slice('IPv4', ['0.0.0.0', '169.254.1.1', '224.0.0.5']), TYPES))).toEqual([
      'endpoints[0].addresses[0]: may not be unspecified (0.0.0.0)',
      'endpoints[0].addresses[1]: may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'endpoints[0].addresses[2]: may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
    expect(details(validateEndpointSlice(slice('IPv6', ['::1', 'ff02::1']), TYPES))).toEqual([
      'endpoints[0].addresses[0]: may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'endpoints[0].addresses[1]: may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
  });

  test('FQDN addresses: two labels at least, a trailing dot allowed', () => {
    expect(validateEndpointSlice(slice('FQDN', ['a.example.com', 'a.example.com.']), TYPES)).toEqual([]);
    expect(details(validateEndpointSlice(slice('FQDN', ['localhost']), TYPES))).toEqual([
      'endpoints[0].addresses[0]: should be a domain with at least two segments separated by dots',
    ]);
  });

  test('limits: 1000 endpoints, 100 addresses, 100 ports; protocol required and supported', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${(i & 255) + 1}`);
    expect(
      details(validateEndpointSlice({ addressType: 'IPv4', endpoints: Array(1001).fill({ addresses: ['10.0.0.1'] }) }, TYPES)),
    ).toEqual(['endpoints: must have at most 1000 items']);
    expect(details(validateEndpointSlice(slice('IPv4', many(101)), TYPES))).toEqual([
      'endpoints[0].addresses: must have at most 100 items',
    ]);
    const ports = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: i + 1, protocol: 'TCP' }));
    expect(details(validateEndpointSlice({ addressType: 'IPv4', ports }, TYPES))).toEqual(['ports: must have at most 100 items']);
    expect(details(validateEndpointSlice({ addressType: 'IPv4', ports: [{ name: 'a' }, { name: 'b', protocol: 'ICMP' }] }, TYPES))).toEqual(
      ['ports[0].protocol: ', 'ports[1].protocol: supported values: "SCTP", "TCP", "UDP"'],
    );
  });
});

test('EndpointSlice endpoints: nodeName a subdomain; hints of at most 8 zones and nodes, each once', () => {
  const TYPES = ['FQDN', 'IPv4', 'IPv6'];
  const ep = (e: Record<string, unknown>) => ({ addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], ...e }] });
  expect(
    validateEndpointSlice(ep({ nodeName: 'node-1', hints: { forZones: [{ name: 'a' }], forNodes: [{ name: 'node-1' }] } }), TYPES),
  ).toEqual([]);
  expect(details(validateEndpointSlice(ep({ nodeName: 'Node_1' }), TYPES))[0]).toStartWith(
    'endpoints[0].nodeName: a lowercase RFC 1123 subdomain',
  );
  expect(details(validateEndpointSlice(ep({ hints: { forZones: [{ name: 'a' }, { name: 'a' }] } }), TYPES))).toEqual([
    'endpoints[0].hints.forZones[1].name: ',
  ]);
  const nine = Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` }));
  expect(details(validateEndpointSlice(ep({ hints: { forZones: nine } }), TYPES))).toEqual([
    'endpoints[0].hints.forZones: must have at most 8 items',
  ]);
});

test('Ingress updates tolerate what was stored: an invalid TLS secret name, invalid rules of a wildcard host', () => {
  const backend = { service: { name: 'web', port: { number: 80 } } };
  const ing = (spec: Record<string, unknown>): Obj => ({
    apiVersion: 'networking.svc.io/v1',
    kind: 'Ingress',
    metadata: { name: 'i' },
    spec,
  });
  const badSecret = ing({ defaultBackend: backend, tls: [{ secretName: 'Bad_Name' }] });
  expect(details(validateIngress(badSecret))[0]).toStartWith('spec.tls[0].secretName: a lowercase RFC 1123 subdomain');
  expect(validateIngress(badSecret, badSecret)).toEqual([]);
  const wildcard = ing({ rules: [{ host: '*.example.com', http: { paths: [] } }] });
  expect(details(validateIngress(wildcard))).toEqual(['spec.rules[0].http.paths: ']);
  expect(validateIngress(wildcard, wildcard)).toEqual([]);
  // A plain host's rules are checked whatever was stored.
  const plain = ing({ rules: [{ host: 'a.example.com', http: { paths: [] } }] });
  expect(details(validateIngress(plain, wildcard))).toEqual(['spec.rules[0].http.paths: ']);
});
