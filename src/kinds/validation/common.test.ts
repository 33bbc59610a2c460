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

const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

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
    // A key on one side only counts as absent; lists compare item by item.
    expect(semanticEqual({}, { x: null })).toBe(true);
    expect(semanticEqual({ x: null }, {})).toBe(true);
    expect(semanticEqual({ a: { b: [1, { c: {} }] } }, { a: { b: [1, {}] } })).toBe(true);
    expect(semanticEqual({ a: { b: [1, { c: 1 }] } }, { a: { b: [1, {}] } })).toBe(false);
    expect(semanticEqual([1, 2], [1])).toBe(false);
    expect(semanticEqual({ a: 'x' }, { a: 'x', b: 'y' })).toBe(false);
    expect(semanticEqual('x', 'x')).toBe(true);
    expect(semanticEqual(0, '0')).toBe(false);
    const same = { spec: { containers: [{ name: 'c' }] } };
    expect(semanticEqual(same, same)).toBe(true);
  });
});
