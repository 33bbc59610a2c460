import { describe, expect, test } from 'bun:test';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, selectorMatcher } from './selectors';

describe('the query form', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  test.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app in (web,db)', true],
    ['app notin (web)', false],
    ['tier', true],
    ['!tier', false],
    ['missing', false],
    ['!missing', true],
    ['n>4', true],
    ['n<5', false],
    ['app=web,tier=back', false],
  ] as [string, boolean][])('%p selects: %p', (sel, want) => {
    expect(matchesLabels(parseLabelSelector(sel), labels)).toBe(want);
  });

  test('errors are the reference texts', () => {
    expect(() => parseLabelSelector('a=b,')).toThrow("found '', expected: identifier");
    expect(() => parseLabelSelector('n>x')).toThrow("for 'Gt', 'Lt' operators, the value must be an integer");
    expect(() => parseFieldSelector('spec.x=1', new Set(['metadata.name']))).toThrow('field label not supported: spec.x');
  });

  test('field selectors', () => {
    const reqs = parseFieldSelector('metadata.name=a,spec.nodeName!=n1', new Set(['metadata.name', 'spec.nodeName']));
    const fields = (v: Record<string, string>) => (f: string) => v[f] ?? '';
    expect(matchesFields(reqs, fields({ 'metadata.name': 'a', 'spec.nodeName': 'n2' }))).toBe(true);
    expect(matchesFields(reqs, fields({ 'metadata.name': 'a', 'spec.nodeName': 'n1' }))).toBe(false);
  });
});

describe('the object form (metav1.LabelSelector)', () => {
  test('matching: nil selects nothing, {} everything, expressions as the reference', () => {
    expect(selectorMatcher(undefined)!.matches({ a: 'b' })).toBe(false);
    expect(selectorMatcher({})!.empty).toBe(true);
    const m = selectorMatcher({ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] })!;
    expect(m.matches({ app: 'x' })).toBe(true);
    expect(m.matches({ app: 'x', tier: 'db' })).toBe(false);
    expect(m.matches({ app: 'y' })).toBe(false);
    expect(selectorMatcher({ matchExpressions: [{ key: 'a', operator: 'In' }] })).toBeUndefined();
  });

  test('a selector that cannot be converted matches nothing it could be asked', () => {
    expect(selectorMatcher({ matchLabels: { 'a b': 'c' } })).toBeUndefined();
    expect(selectorMatcher({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] })).toBeUndefined();
    expect(selectorMatcher({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toBeUndefined();
  });
});
