/**
 * rbac.authorization.svc.io: Role, ClusterRole, RoleBinding, ClusterRoleBinding (the reference's
 * pkg/apis/rbac/validation): rules need verbs, and either resources with apiGroups or
 * nonResourceURLs (those only in ClusterRoles); bindings need a roleRef (immutable) to a Role or
 * ClusterRole of rbac.authorization.k8s.io, and subjects of a known kind with a name (service
 * accounts with a namespace in ClusterRoleBindings).
 */
import type { Obj } from '../../api/meta';
import { invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, list, obj, str } from './common';

const RBAC_GROUPS = ['rbac.authorization.k8s.io', 'rbac.authorization.svc.io'];

function validateRules(o: Obj, cluster: boolean): Errs {
  const errs: Errs = [];
  list<Record<string, unknown>>(o.rules).forEach((r, i) => {
    const p = `rules[${i}]`;
    if (list(r.verbs).length === 0) errs.push(required(`${p}.verbs`, 'verbs must contain at least one value'));
    const urls = list(r.nonResourceURLs);
    if (urls.length > 0) {
      if (!cluster) errs.push(invalidValue(`${p}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (list(r.apiGroups).length > 0 || list(r.resources).length > 0)
        errs.push(invalidValue(`${p}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
      return;
    }
    if (list(r.apiGroups).length === 0) errs.push(required(`${p}.apiGroups`, 'resource rules must supply at least one api group'));
    if (list(r.resources).length === 0) errs.push(required(`${p}.resources`, 'resource rules must supply at least one resource'));
  });
  return errs;
}

function validateBinding(o: Obj, cluster: boolean): Errs {
  const errs: Errs = [];
  const ref = obj(o.roleRef);
  if (!RBAC_GROUPS.includes(str(ref?.apiGroup)))
    errs.push(notSupported('roleRef.apiGroup', str(ref?.apiGroup), ['rbac.authorization.k8s.io']));
  const kind = str(ref?.kind);
  if (cluster ? kind !== 'ClusterRole' : kind !== 'Role' && kind !== 'ClusterRole')
    errs.push(notSupported('roleRef.kind', kind, cluster ? ['ClusterRole'] : ['Role', 'ClusterRole']));
  if (str(ref?.name) === '') errs.push(required('roleRef.name'));
  list<Record<string, unknown>>(o.subjects).forEach((s, i) => {
    const p = `subjects[${i}]`;
    if (str(s.name) === '') errs.push(required(`${p}.name`));
    const k = str(s.kind);
    if (k === 'ServiceAccount') {
      if (cluster && str(s.namespace) === '') errs.push(required(`${p}.namespace`));
    } else if (k === 'User' || k === 'Group') {
      if (!RBAC_GROUPS.includes(str(s.apiGroup))) errs.push(notSupported(`${p}.apiGroup`, str(s.apiGroup), ['rbac.authorization.k8s.io']));
    } else errs.push(notSupported(`${p}.kind`, k, ['ServiceAccount', 'User', 'Group']));
  });
  return errs;
}

const roleRefImmutable = (o: Obj, old: Obj): Errs =>
  JSON.stringify(o.roleRef) === JSON.stringify(old.roleRef) ? [] : [invalidValue('roleRef', o.roleRef, 'cannot change roleRef')];

export const role: Strategy = { validate: (o) => validateRules(o, false) };
export const clusterRole: Strategy = { validate: (o) => validateRules(o, true) };
export const roleBinding: Strategy = { validate: (o) => validateBinding(o, false), validateUpdate: roleRefImmutable };
export const clusterRoleBinding: Strategy = { validate: (o) => validateBinding(o, true), validateUpdate: roleRefImmutable };
