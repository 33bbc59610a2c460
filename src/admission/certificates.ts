/**
 * The reference's certificate admission plugins (plugin/pkg/admission/certificates):
 *
 *   CertificateApproval            an update of csr/approval needs `approve` on signers/<signerName>
 *   CertificateSigning             an update of csr/status changing the certificate needs `sign` on it
 *   CertificateSubjectRestriction  a request for kubernetes.io/kube-apiserver-client may not name
 *                                  the group system:masters (the subject's organization)
 *
 * `signers` names are checked as the reference's IsAuthorizedForSignerName: the signer itself,
 * then `<domain>/*`. Writes of the server itself (no user) pass.
 */
import type { Obj } from '../api/meta';
import { forbidden } from '../api/status';
import type { UserInfo } from '../api/user';
import type { Authorizer } from '../auth/authz';
import { checkRequest } from '../kinds/validation/csr-der';
import type { Attributes, Operation, Plugin } from '../registry/admission';

const GROUP = 'certificates.svc.io';
const RESOURCE = 'certificatesigningrequests';
const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';

const spec = (o: Obj | undefined): Record<string, unknown> => (o?.spec ?? {}) as Record<string, unknown>;
const signerOf = (o: Obj | undefined): string => String(spec(o).signerName ?? '');
const certificateOf = (o: Obj | undefined): string => String((o?.status as { certificate?: string } | undefined)?.certificate ?? '');

export class CertificateAdmission implements Plugin {
  readonly name = 'CertificateApproval,CertificateSigning,CertificateSubjectRestriction';

  constructor(private readonly authz: Authorizer) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    if (group !== GROUP || resource !== RESOURCE) return false;
    return (op === 'CREATE' && subresource === '') || (op === 'UPDATE' && (subresource === 'approval' || subresource === 'status'));
  }

  validate(a: Attributes): void {
    const target = { group: GROUP, resource: RESOURCE };
    if (a.operation === 'CREATE') {
      if (signerOf(a.object) !== KUBE_APISERVER_CLIENT) return;
      const r = checkRequest(String(spec(a.object).request ?? ''));
      if ('problem' in r) throw forbidden(target, a.name, `failed to parse CSR: ${r.problem}`);
      if (r.parsed.organizations.includes('system:masters')) {
        throw forbidden(target, a.name, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
      }
      return;
    }
    if (!a.user) return;
    const signer = signerOf(a.object);
    if (a.subresource === 'approval' && !this.authorizedFor(a.user, 'approve', signer)) {
      throw forbidden(target, a.name, `user not permitted to approve requests with signerName "${signer}"`);
    }
    if (
      a.subresource === 'status' &&
      certificateOf(a.object) !== certificateOf(a.oldObject) &&
      !this.authorizedFor(a.user, 'sign', signer)
    ) {
      throw forbidden(target, a.name, `user not permitted to sign requests with signerName "${signer}"`);
    }
  }

  private authorizedFor(user: UserInfo, verb: string, signer: string): boolean {
    const slash = signer.indexOf('/');
    const names = slash < 0 ? [signer] : [signer, `${signer.slice(0, slash)}/*`];
    return names.some((name) =>
      this.authz.allows(user, {
        verb,
        resourceRequest: true,
        namespace: '',
        group: GROUP,
        resource: 'signers',
        subresource: '',
        name,
        path: '',
      }),
    );
  }
}
