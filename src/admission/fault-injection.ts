/**
 * FaultInjection authorization (issue 40): creating or changing a FaultInjection makes the server
 * fail other users' requests, so beyond `create`/`update` it needs the verb `inject` on
 * `faultinjections` (as the reference's `escalate`/`bind` on roles): members of system:masters
 * have it, anyone else through a role granting it. The server's own writes (no user) pass; so
 * do writes of the status alone (the engine's counters).
 *
 *   faultinjections.testing.svc.io "slow-pods" is forbidden: user "dev" (groups=["system:authenticated"])
 *   is attempting to inject faults without the verb "inject" on faultinjections.testing.svc.io
 */
import { forbidden } from '../api/status';
import type { Authorizer } from '../auth/authz';
import { TESTING_GROUP } from '../kinds/specs/testing';
import type { Attributes, Operation, Plugin } from '../registry/admission';

const RESOURCE = 'faultinjections';

export class FaultInjectionAuthorization implements Plugin {
  readonly name = 'FaultInjectionAuthorization';

  constructor(private readonly authz: Authorizer) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === TESTING_GROUP && resource === RESOURCE && subresource === '' && (op === 'CREATE' || op === 'UPDATE');
  }

  validate(a: Attributes): void {
    if (!a.user) return;
    const allowed = this.authz.allows(a.user, {
      verb: 'inject',
      resourceRequest: true,
      namespace: '',
      group: TESTING_GROUP,
      resource: RESOURCE,
      subresource: '',
      name: a.name,
      path: '',
    });
    if (allowed) return;
    const groups = a.user.groups.map((g) => JSON.stringify(g)).join(' ');
    throw forbidden(
      { group: TESTING_GROUP, resource: RESOURCE },
      a.name,
      `user "${a.user.name}" (groups=[${groups}]) is attempting to inject faults without the verb "inject" on ${RESOURCE}.${TESTING_GROUP}`,
    );
  }
}
