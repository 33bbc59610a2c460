import { describe, expect, test } from 'bun:test';
import { cmpQuantity, formatQuantity, isQuantity, parseQuantity, quantityMilliValue, quantityValue } from './quantity';

describe('quantities', () => {
  const canonical: [string | number, string][] = [
    ['1', '1'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['0.5', '500m'],
    ['100M', '100M'],
    ['1k', '1k'],
    ['1000', '1k'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1Gi', '1Gi'],
    ['512', '512'],
    ['100Ki', '100Ki'],
    ['0.5Gi', '512Mi'],
    ['1e3', '1e3'],
    ['1E6', '1e6'],
    ['-1', '-1'],
    ['0', '0'],
    ['0m', '0'],
    ['10n', '10n'],
    ['1u', '1u'],
    [2, '2'],
    ['12e-1', '1200e-3'],
  ];
  test.each(canonical)('%p prints as %p', (input, want) => {
    const q = parseQuantity(input);
    expect(q).toBeDefined();
    expect(formatQuantity(q!)).toBe(want);
  });

  test('invalid texts do not parse', () => {
    for (const s of ['', 'abc', '1Z', '--1', '1.2.3', 'Mi']) expect(parseQuantity(s)).toBeUndefined();
  });

  test('compare, Value and MilliValue round up', () => {
    const q = (s: string) => parseQuantity(s)!;
    expect(cmpQuantity(q('1'), q('1000m'))).toBe(0);
    expect(cmpQuantity(q('1Ki'), q('1k'))).toBe(1);
    expect(cmpQuantity(q('100m'), q('0.2'))).toBe(-1);
    expect(quantityValue(q('1500m'))).toBe(2n);
    expect(quantityMilliValue(q('1.0001'))).toBe(1001n);
    expect(quantityMilliValue(q('2'))).toBe(2000n);
  });

  test('parsed texts are remembered (bounded) without changing any answer', () => {
    // Twice each: the second answer comes from the memo; invalid texts stay invalid.
    for (let round = 0; round < 2; round++) {
      expect(formatQuantity(parseQuantity(' 1Gi ')!)).toBe('1Gi');
      expect(parseQuantity('1Z')).toBeUndefined();
      expect(cmpQuantity(parseQuantity('100m')!, parseQuantity('0.1')!)).toBe(0);
    }
    // More distinct texts than the memo holds: every one still parses to its own value.
    for (let i = 0; i < 10_000; i++) expect(quantityMilliValue(parseQuantity(`${i}m`)!)).toBe(BigInt(i));
    expect(formatQuantity(parseQuantity('256Mi')!)).toBe('256Mi');
  });

  test('the grammar: the reference pattern, values trimmed', () => {
    const valid = ['1', '+1', '-1', '1.', '.5', '1.5Gi', '1e3', '1E-3', '1e+3', '1E', '5Ei', '0.1m', ' 1Gi '];
    const invalid = ['', '.', '+', '-', '1.2.3', '1Z', 'Mi', '1 Gi', '1ki', '1KI', '1e', '1e1.5', 'e3', '--1', '0x10', '1_000'];
    for (const s of valid) expect([s, isQuantity(s), parseQuantity(s) !== undefined]).toEqual([s, true, true]);
    for (const s of invalid) expect([s, isQuantity(s), parseQuantity(s) !== undefined]).toEqual([s, false, false]);
  });

  test('precision below nano rounds the magnitude up, for negative values too', () => {
    const text = (s: string) => formatQuantity(parseQuantity(s)!);
    expect(text('0.0000000001')).toBe('1n');
    expect(text('-0.0000000001')).toBe('-1n');
    expect(text('1.0000000001')).toBe('1000000001n');
    expect(text('-1.0000000001')).toBe('-1000000001n');
  });

  test('binary values print with a binary suffix from 1024 up in magnitude', () => {
    const text = (s: string) => formatQuantity(parseQuantity(s)!);
    expect(text('2Ki')).toBe('2Ki');
    expect(text('-2Ki')).toBe('-2Ki');
    expect(text('1023')).toBe('1023');
    expect(text('0.5Ki')).toBe('512');
    expect(text('1.5Ki')).toBe('1536');
    expect(text('1.1Ki')).toBe('1126400m');
  });
});
