import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import { CSR_SUBRESOURCES, validateCSRUpdate, validateSignerName } from './certificates';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const csr = (status: Any = {}, spec: Any = {}): Obj => ({
  metadata: { name: 'c' },
  spec: { signerName: 'example.com/s', usages: ['client auth'], ...spec },
  status,
});
const texts = (errs: { field: string }[]) => errs.map((e) => `${e.field}: ${fieldErrorText(e as never)}`);
const approved = { type: 'Approved', status: 'True', reason: 'R', lastUpdateTime: 't', lastTransitionTime: 't' };

describe('CertificateSigningRequest updates', () => {
  test('status may not add, change or remove Approved/Denied; approval may add but not remove', () => {
    expect(texts(validateCSRUpdate(csr({ conditions: [approved] }), csr(), 'status'))).toEqual([
      'status.conditions: Forbidden: updates may not add a condition of type "Approved"',
    ]);
    expect(validateCSRUpdate(csr({ conditions: [approved] }), csr(), 'approval')).toEqual([]);
    expect(texts(validateCSRUpdate(csr(), csr({ conditions: [approved] }), 'approval'))).toEqual([
      'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
    ]);
  });

  test('the certificate is set through status only, once', () => {
    expect(texts(validateCSRUpdate(csr({ certificate: 'QQ==' }), csr(), ''))).toEqual([
      'status.certificate: Forbidden: updates may not set certificate content',
    ]);
    expect(validateCSRUpdate(csr({ certificate: 'QQ==' }), csr(), 'status')).toEqual([]);
    expect(texts(validateCSRUpdate(csr({ certificate: 'Qg==' }), csr({ certificate: 'QQ==' }), 'status'))).toEqual([
      'status.certificate: Forbidden: updates may not modify existing certificate content',
    ]);
  });

  test('approval changes only the conditions (timestamps filled); status keeps Approved as stored', () => {
    const cur = csr({ certificate: 'QQ==' });
    const next = CSR_SUBRESOURCES.approval?.merge(
      csr({ conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Qg==' }, { signerName: 'x/y' }),
      cur,
    ) as Any;
    expect(next.spec.signerName).toBe('example.com/s');
    expect(next.status.certificate).toBe('QQ==');
    expect(next.status.conditions[0].lastUpdateTime).toMatch(/Z$/);
    const stored = csr({ conditions: [approved] });
    const viaStatus = CSR_SUBRESOURCES.status?.merge(csr({ conditions: [{ ...approved, reason: 'Changed' }] }), stored) as Any;
    expect(viaStatus.status.conditions[0].reason).toBe('R');
  });

  test('signer names', () => {
    expect(validateSignerName('s', 'example.com/a.b')).toEqual([]);
    expect(texts(validateSignerName('s', 'example/a'))).toEqual([
      's: Invalid value: "example": should be a domain with at least two segments separated by dots',
    ]);
    expect(texts(validateSignerName('s', ''))).toEqual(['s: Required value']);
  });
});
