/** certificates.svc.io/v1 CertificateSigningRequest (rules in src/kinds/validation/certificates.ts). */
import type { Obj } from '../../api/meta';
import { humanDuration } from '../../codec/table';
import { CSR_SUBRESOURCES, prepareCSRForCreate, validateCSR, validateCSRUpdate } from '../validation/certificates';
import { AGE, col } from './cells';
import type { Spec } from './spec';

const spec = (o: Obj): Record<string, unknown> => (o.spec ?? {}) as Record<string, unknown>;

/** The Condition column (the reference's extractCSRStatus). */
function csrCondition(o: Obj): string {
  const status = (o.status ?? {}) as { conditions?: { type?: string }[]; certificate?: string };
  const types = new Set((status.conditions ?? []).map((c) => c.type));
  let out = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) out += ',Failed';
  if (status.certificate) out += ',Issued';
  return out;
}

export const CERTIFICATES: Spec[] = [
  {
    group: 'certificates.svc.io',
    kind: 'CertificateSigningRequest',
    plural: 'certificatesigningrequests',
    shortNames: ['csr'],
    namespaced: false,
    status: true,
    pkg: 'certificates',
    // The reference's CSR has no metadata.generation.
    generation: false,
    subresources: CSR_SUBRESOURCES,
    fields: { 'spec.signerName': (o) => String(spec(o).signerName ?? '') },
    rules: {
      prepareForCreate: prepareCSRForCreate,
      // The spec never changes after create (the reference's PrepareForUpdate keeps the old one).
      prepareForUpdate: (o, old) => {
        o.spec = old.spec;
      },
      validate: validateCSR,
      validateUpdate: validateCSRUpdate,
    },
    columns: [
      AGE,
      col('SignerName', 'string', 'Only available on v1beta1 and newer.', (x) => String(spec(x).signerName ?? '')),
      col('Requestor', 'string', 'Name of the user who requested the CSR.', (x) => String(spec(x).username ?? '')),
      col('RequestedDuration', 'string', 'Duration of the requested certificate.', (x) =>
        typeof spec(x).expirationSeconds === 'number' ? humanDuration((spec(x).expirationSeconds as number) * 1000) : '<none>',
      ),
      col('Condition', 'string', 'Current status of the CSR.', csrCondition),
    ],
  },
];
