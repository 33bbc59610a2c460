import { describe, expect, test } from 'bun:test';
import { fieldErrorText } from '../../api/status';
import {
  configMapKey,
  GO_SYNTAX,
  goLabelSelector,
  goStringMap,
  goStrings,
  isValidPortName,
  isValidPortNum,
  semanticEqual,
  stringsValue,
  validateLabelSelector,
} from './common';
import { parseCidr, strictSubset, validateCidr } from './net';

const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

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

describe('label selectors', () => {
  test.each([
    ['valid', { matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] }, []],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, [['s.matchExpressions[0].values', 'FieldValueRequired']]],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      [['s.matchExpressions[0].values', 'FieldValueForbidden']],
    ],
    ['bad operator', { matchExpressions: [{ key: 'a', operator: 'Gt' }] }, [['s.matchExpressions[0].operator', 'FieldValueInvalid']]],
    ['bad key', { matchExpressions: [{ key: 'a b', operator: 'Exists' }] }, [['s.matchExpressions[0].key', 'FieldValueInvalid']]],
    [
      'bad value',
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['a b'] }] },
      [['s.matchExpressions[0].values[0]', 'FieldValueInvalid']],
    ],
    ['bad label', { matchLabels: { 'a b': 'c' } }, [['s.matchLabels', 'FieldValueInvalid']]],
    ['bad label value', { matchLabels: { a: '-x' } }, [['s.matchLabels', 'FieldValueInvalid']]],
  ] as [string, unknown, string[][]][])('%s', (_name, sel, want) => {
    expect(pairs(validateLabelSelector(sel, 's'))).toEqual(want);
  });
});

describe('names and ports', () => {
  test('port numbers and names', () => {
    expect(isValidPortNum(0)).toEqual(['must be between 1 and 65535, inclusive']);
    expect(isValidPortNum(65535)).toEqual([]);
    expect(isValidPortName('http')).toEqual([]);
    expect(isValidPortName('123')).toEqual(['must contain at least one letter (a-z)']);
    expect(isValidPortName('a--b')).toEqual(['must not contain consecutive hyphens']);
    expect(isValidPortName('-ab')).toEqual(['must not begin or end with a hyphen']);
    expect(isValidPortName('HTTP')).toEqual(['must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)']);
    expect(isValidPortName('abcdefghijklmnop')).toEqual(['must be no more than 15 characters']);
  });

  test('config keys', () => {
    expect(configMapKey('a.b_C-1')).toEqual([]);
    expect(configMapKey('a b')).toEqual([
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
    expect(configMapKey('..')).toEqual(["must not be '..'"]);
    expect(configMapKey('..a')).toEqual(["must not start with '..'"]);
    expect(configMapKey('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
  });
});

describe('Go rendering of bad values', () => {
  test('slices, maps and selectors', () => {
    expect(goStrings(['*', 'get'])).toBe('[]string{"*", "get"}');
    expect(goStrings(undefined)).toBe('[]string(nil)');
    expect(goStringMap({ b: '2', a: '1' })).toBe('map[string]string{"a":"1", "b":"2"}');
    expect(goStringMap(undefined)).toBe('map[string]string(nil)');
    expect(goLabelSelector({ matchLabels: { app: 'x' } })).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}',
    );
  });

  test('a GoValue carries its Go text and falls back to JSON', () => {
    const v = stringsValue(['*', 'get']);
    expect(v[GO_SYNTAX]).toBe('[]string{"*", "get"}');
    expect(JSON.stringify(v)).toBe('["*","get"]');
    // status.ts prints the Go text once it reads GO_SYNTAX, JSON until then.
    const text = fieldErrorText({ type: 'FieldValueInvalid', field: 'f', detail: 'd', badValue: v });
    expect(['Invalid value: []string{"*", "get"}: d', 'Invalid value: ["*","get"]: d']).toContain(text);
  });

  test('semantic equality treats absent and empty alike', () => {
    expect(semanticEqual(undefined, {})).toBe(true);
    expect(semanticEqual({ a: [] }, {})).toBe(true);
    expect(semanticEqual({ a: 1 }, { a: 2 })).toBe(false);
  });
});
