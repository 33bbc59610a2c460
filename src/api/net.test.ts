import { describe, expect, test } from 'bun:test';
import { ipv4ToNumber, ipv4ToString, parseCidr, parseIPv4Range, strictSubset, validateCidr } from './net';

describe('CIDRs', () => {
  const cases: [string, string | null][] = [
    ['10.0.0.0/8', null],
    ['192.168.1.0/24', null],
    ['0.0.0.0/0', null],
    ['2001:db8::/64', null],
    ['::/0', null],
    ['10.0.0.1/8', 'must not have bits set beyond the prefix length'],
    ['010.0.0.0/8', 'must not have leading 0s in IP or prefix length'],
    ['10.0.0.0/08', 'must not have leading 0s in IP or prefix length'],
    ['::ffff:1.2.3.0/120', 'must not have an IPv4-mapped IPv6 address'],
    ['10.0.0.0', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['10.0.0.0/33', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['300.0.0.0/8', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['2001:db8:::/64', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['foo', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
  ];
  test.each(cases)('%p', (cidr, detail) => {
    const errs = validateCidr('f', cidr);
    expect(errs.map((e) => e.detail)).toEqual(detail ? [detail] : []);
  });

  test('previously stored values are accepted as they are', () => {
    expect(validateCidr('f', '10.0.0.1/8', ['10.0.0.1/8'])).toEqual([]);
  });

  test('strict subsets', () => {
    const c = (s: string) => parseCidr(s)!;
    expect(strictSubset(c('10.0.0.0/8'), c('10.1.0.0/16'))).toBe(true);
    expect(strictSubset(c('10.0.0.0/8'), c('10.0.0.0/8'))).toBe(false);
    expect(strictSubset(c('10.0.0.0/8'), c('11.0.0.0/16'))).toBe(false);
    expect(strictSubset(c('10.0.0.0/16'), c('10.0.0.0/8'))).toBe(false);
    expect(strictSubset(c('2001:db8::/32'), c('2001:db8:1::/48'))).toBe(true);
    expect(strictSubset(c('10.0.0.0/8'), c('2001:db8:1::/48'))).toBe(false);
  });
});

describe('the IPv4 service range', () => {
  test('first address and size', () => {
    expect(parseIPv4Range('10.0.0.0/24')).toEqual({ base: 0x0a000000, size: 256, text: '10.0.0.0/24' });
    // Bits past the prefix are masked off: the range starts at the network's address.
    expect(parseIPv4Range('10.96.0.7/12')).toEqual({ base: 0x0a600000, size: 2 ** 20, text: '10.96.0.7/12' });
  });

  test.each([
    ['10.0.0.0', 'invalid IPv4 CIDR "10.0.0.0"'],
    ['2001:db8::/64', 'invalid IPv4 CIDR "2001:db8::/64"'],
    ['10.0.0.0/024', 'invalid IPv4 CIDR "10.0.0.0/024"'],
    ['10.0.0.0/31', 'invalid service IP range 10.0.0.0/31: at most /30 IPv4'],
    ['300.0.0.0/24', 'invalid service IP range 300.0.0.0/24: at most /30 IPv4'],
  ])('%p is refused', (s, message) => {
    expect(() => parseIPv4Range(s)).toThrow(message);
  });

  test('addresses as numbers and back', () => {
    expect(ipv4ToNumber('10.0.0.17')).toBe(0x0a000011);
    expect(ipv4ToNumber('255.255.255.255')).toBe(2 ** 32 - 1);
    for (const bad of ['10.0.0', '10.0.0.256', '::1', '', 'a.b.c.d']) expect(ipv4ToNumber(bad)).toBeUndefined();
    expect(ipv4ToString(0x0a000011)).toBe('10.0.0.17');
    expect(ipv4ToString(2 ** 32 - 1)).toBe('255.255.255.255');
  });
});
