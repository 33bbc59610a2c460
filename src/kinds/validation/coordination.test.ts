import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { lease } from './coordination';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const pairs = (errs: { field: string; type: string }[]) => errs.map((e) => [e.field, e.type]);

describe('Lease', () => {
  const l = (spec: Any): Obj => ({ metadata: { name: 'l', namespace: 'default' }, spec });
  test.each([
    ['valid', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 }, []],
    ['zero duration', { leaseDurationSeconds: 0 }, [['spec.leaseDurationSeconds', 'FieldValueInvalid']]],
    ['negative transitions', { leaseTransitions: -1 }, [['spec.leaseTransitions', 'FieldValueInvalid']]],
    ['unknown strategy', { strategy: 'Newest' }, [['spec.strategy.strategy', 'FieldValueNotSupported']]],
    ['preferred holder without strategy', { preferredHolder: 'x' }, [['spec.preferredHolder', 'FieldValueForbidden']]],
  ] as [string, Any, string[][]][])('%s', (_n, spec, want) => {
    expect(pairs(lease.validate!(l(spec)))).toEqual(want);
  });

  test('message', () => {
    const [e] = lease.validate!(l({ leaseDurationSeconds: -5 }));
    expect(fieldErrorText(e!)).toBe('Invalid value: -5: must be greater than 0');
    const [holder] = lease.validate!(l({ preferredHolder: 'x' }));
    expect(fieldErrorText(holder!)).toBe('Forbidden: may only be specified if `strategy` is defined');
  });
});
