/**
 * RBAC escalation prevention (the reference's policy-based Role and binding storage): a user may
 * write a Role or ClusterRole only with rules it holds itself (in that namespace, or cluster-wide
 * for a ClusterRole), unless it may `escalate` roles; and a binding only to a role whose rules it
 * holds, unless it may `bind` that role. system:masters and the server's own writes pass.
 *
 *   clusterroles.rbac.authorization.svc.io "x" is forbidden: user "dev" (groups=["developers"
 *   "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
 *   {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
 */
import { isObject } from '../api/meta';
import { forbidden } from '../api/status';
import type { Authorizer } from '../auth/authz';
import { type RbacIndex, type Rule, rulesOf } from '../auth/rbac';
import { MASTERS } from '../auth/tokens';
import type { Attributes, Operation, Plugin } from '../registry/admission';

const GROUP = 'rbac.authorization.svc.io';

const has = (list: string[], v: string) => list.includes('*') || list.includes(v);

function resourceCovered(owner: string[], r: string): boolean {
  if (owner.includes('*') || owner.includes(r)) return true;
  const slash = r.indexOf('/');
  if (slash < 0) return false;
  return owner.includes(`${r.slice(0, slash)}/*`) || owner.includes(`*${r.slice(slash)}`);
}

/** Whether the owner's rules cover every verb × group × resource × name (or URL) of `rule`. */
function covered(owner: Rule[], rule: Rule): boolean {
  for (const verb of rule.verbs) {
    if (rule.nonResourceURLs.length > 0) {
      for (const url of rule.nonResourceURLs) {
        const ok = owner.some(
          (o) =>
            has(o.verbs, verb) &&
            o.nonResourceURLs.some((u) => u === '*' || u === url || (u.endsWith('*') && url.startsWith(u.slice(0, -1)))),
        );
        if (!ok) return false;
      }
      continue;
    }
    for (const g of rule.apiGroups)
      for (const r of rule.resources) {
        const names = rule.resourceNames.length > 0 ? rule.resourceNames : [undefined];
        for (const n of names) {
          const ok = owner.some(
            (o) =>
              has(o.verbs, verb) &&
              has(o.apiGroups, g) &&
              resourceCovered(o.resources, r) &&
              (o.resourceNames.length === 0 || (n !== undefined && o.resourceNames.includes(n))),
          );
          if (!ok) return false;
        }
      }
  }
  return true;
}

const goList = (l: string[]) => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;
function ruleText(r: Rule): string {
  const parts: string[] = [];
  if (r.apiGroups.length > 0) parts.push(`APIGroups:${goList(r.apiGroups)}`);
  if (r.resources.length > 0) parts.push(`Resources:${goList(r.resources)}`);
  if (r.resourceNames.length > 0) parts.push(`ResourceNames:${goList(r.resourceNames)}`);
  if (r.nonResourceURLs.length > 0) parts.push(`NonResourceURLs:${goList(r.nonResourceURLs)}`);
  parts.push(`Verbs:${goList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

export class RbacEscalation implements Plugin {
  readonly name = 'RBACEscalation';

  constructor(
    private readonly rbac: RbacIndex,
    private readonly authz: Authorizer,
  ) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return (
      group === GROUP &&
      subresource === '' &&
      (op === 'CREATE' || op === 'UPDATE') &&
      ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'].includes(resource)
    );
  }

  validate(a: Attributes): void {
    const user = a.user;
    if (!user || user.groups.includes(MASTERS)) return;
    const o = a.object;
    const isBinding = a.resource.endsWith('bindings');
    let wanted: Rule[];
    if (isBinding) {
      const ref = isObject(o.roleRef) ? o.roleRef : {};
      const kind = String(ref.kind ?? '');
      const roleName = String(ref.name ?? '');
      // May bind this role by name: no rule check.
      const bindable = this.authz.allows(user, {
        verb: 'bind',
        resourceRequest: true,
        namespace: a.namespace,
        group: GROUP,
        resource: kind === 'Role' ? 'roles' : 'clusterroles',
        subresource: '',
        name: roleName,
        path: '',
      });
      if (bindable) return;
      wanted = this.rbac.rulesOfRef(kind, a.namespace, roleName);
    } else {
      const escalate = this.authz.allows(user, {
        verb: 'escalate',
        resourceRequest: true,
        namespace: a.namespace,
        group: GROUP,
        resource: a.resource,
        subresource: '',
        name: a.name,
        path: '',
      });
      if (escalate) return;
      wanted = rulesOf(o);
    }
    const own = this.rbac.rulesIn(user, a.namespace);
    const missing = wanted.filter((r) => !covered(own, r));
    if (missing.length === 0) return;
    throw forbidden(
      { group: GROUP, resource: a.resource },
      a.name,
      `user ${JSON.stringify(user.name)} (groups=${goList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.map(ruleText).join('\n')}`,
    );
  }
}
