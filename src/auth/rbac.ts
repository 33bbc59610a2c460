/**
 * RBAC (rbac.authorization.svc.io/v1; the reference's rbac authorizer and validation helpers):
 * an index of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings kept current from their
 * watch caches, asked once per request.
 *
 *   allows(user, attrs)   any ClusterRoleBinding, or RoleBinding of the request's namespace,
 *                         whose subjects name the user (User), one of its groups (Group) or its
 *                         service account (ServiceAccount), grants a rule matching the request
 *
 * Rules match as the reference's: verbs (`*`), apiGroups (`*`; upstream names count as their svc
 * names), resources (`*`, `pods`, `pods/log`, `*&#47;scale`), resourceNames (empty: all), and for
 * non-resource requests nonResourceURLs (`*`, exact, or a `prefix*`). Bindings are indexed by
 * subject, so a request looks only at the bindings naming it (1,000 bindings cost nothing to the
 * others). An aggregated ClusterRole (aggregationRule) grants the rules of the ClusterRoles its
 * selectors match.
 */
import { svcGroup } from '../api/brand';
import { isObject, type Obj } from '../api/meta';
import { selectorMatcher } from '../api/selectors';
import type { UserInfo } from '../api/user';

export interface AccessAttributes {
  verb: string;
  resourceRequest: boolean;
  namespace: string;
  group: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

export interface Rule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

interface Binding {
  namespace: string;
  roleKind: string;
  roleName: string;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The rules of a Role or ClusterRole object (apiGroups in svc spelling). */
export function rulesOf(o: Obj): Rule[] {
  return (Array.isArray(o.rules) ? o.rules.filter(isObject) : []).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups).map(svcGroup),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  }));
}

/** The subject keys of a user: what binding subjects can name. */
export function subjectKeys(user: UserInfo): string[] {
  const keys = [`User:${user.name}`];
  for (const g of user.groups) keys.push(`Group:${g}`);
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user.name);
  if (sa) keys.push(`ServiceAccount:${sa[1]}:${sa[2]}`);
  return keys;
}

function resourceMatches(rule: Rule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources) {
    if (r === '*' || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function ruleAllows(rule: Rule, a: AccessAttributes): boolean {
  if (!rule.verbs.includes('*') && !rule.verbs.includes(a.verb)) return false;
  if (!a.resourceRequest) {
    return rule.nonResourceURLs.some((u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
  }
  if (!rule.apiGroups.includes('*') && !rule.apiGroups.includes(a.group)) return false;
  if (!resourceMatches(rule, a.resource, a.subresource)) return false;
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name);
}

export class RbacIndex {
  private readonly roles = new Map<string, Obj>();
  private readonly clusterRoles = new Map<string, Obj>();
  /** Binding key (`ns/name` or `name`) → its subjects' keys and what it binds. */
  private readonly bindings = new Map<string, { subjects: string[]; binding: Binding }>();
  private bySubject = new Map<string, Binding[]>();
  private rulesCache = new Map<string, Rule[]>();
  private dirty = true;

  /** A Role, ClusterRole, RoleBinding or ClusterRoleBinding written or deleted. */
  apply(kind: string, o: Obj, deleted: boolean): void {
    const ns = o.metadata.namespace ?? '';
    const name = o.metadata.name as string;
    const key = kind === 'Role' || kind === 'RoleBinding' ? `${kind}:${ns}/${name}` : `${kind}:${name}`;
    if (kind === 'Role') {
      if (deleted) this.roles.delete(`${ns}/${name}`);
      else this.roles.set(`${ns}/${name}`, o);
    } else if (kind === 'ClusterRole') {
      if (deleted) this.clusterRoles.delete(name);
      else this.clusterRoles.set(name, o);
    } else if (deleted) this.bindings.delete(key);
    else {
      const ref = isObject(o.roleRef) ? o.roleRef : {};
      const subjects = (Array.isArray(o.subjects) ? o.subjects.filter(isObject) : []).map((s) => {
        if (s.kind === 'ServiceAccount')
          return `ServiceAccount:${typeof s.namespace === 'string' && s.namespace ? s.namespace : ns}:${s.name}`;
        return `${s.kind}:${s.name}`;
      });
      this.bindings.set(key, {
        subjects,
        binding: { namespace: kind === 'RoleBinding' ? ns : '', roleKind: String(ref.kind ?? ''), roleName: String(ref.name ?? '') },
      });
    }
    this.dirty = true;
  }

  private rebuild(): void {
    const by = new Map<string, Binding[]>();
    for (const { subjects, binding } of this.bindings.values()) {
      for (const s of subjects) {
        const l = by.get(s);
        if (l) l.push(binding);
        else by.set(s, [binding]);
      }
    }
    this.bySubject = by;
    this.rulesCache = new Map();
    this.dirty = false;
  }

  /** The rules a binding grants (a ClusterRole's own or aggregated ones, or a Role's). */
  private rulesFor(b: Binding): Rule[] {
    const key = b.roleKind === 'Role' ? `Role:${b.namespace}/${b.roleName}` : `ClusterRole:${b.roleName}`;
    let rules = this.rulesCache.get(key);
    if (rules) return rules;
    if (b.roleKind === 'Role') {
      const r = this.roles.get(`${b.namespace}/${b.roleName}`);
      rules = r ? rulesOf(r) : [];
    } else {
      rules = this.clusterRoleRules(b.roleName);
    }
    this.rulesCache.set(key, rules);
    return rules;
  }

  /**
   * A ClusterRole's rules: with an aggregationRule, those of the ClusterRoles it selects too
   * (aggregated ones through their own selections: admin takes edit's, which takes view's).
   */
  clusterRoleRules(name: string, visiting = new Set<string>()): Rule[] {
    const cr = this.clusterRoles.get(name);
    if (!cr || visiting.has(name)) return [];
    visiting.add(name);
    const own = rulesOf(cr);
    const agg = isObject(cr.aggregationRule) ? cr.aggregationRule : undefined;
    if (!agg) return own;
    const selectors = (Array.isArray(agg.clusterRoleSelectors) ? agg.clusterRoleSelectors : []).map((s) => selectorMatcher(s));
    const out = [...own];
    for (const [other, o] of this.clusterRoles) {
      if (other === name) continue;
      const labels = o.metadata.labels ?? {};
      if (selectors.some((m) => m && !m.empty && m.matches(labels))) out.push(...this.clusterRoleRules(other, visiting));
    }
    return out;
  }

  /** Whether RBAC grants the request to the user. */
  allows(user: UserInfo, a: AccessAttributes): boolean {
    if (this.dirty) this.rebuild();
    for (const key of subjectKeys(user)) {
      const bs = this.bySubject.get(key);
      if (!bs) continue;
      for (const b of bs) {
        // A RoleBinding grants only in its own namespace.
        if (b.namespace !== '' && b.namespace !== a.namespace) continue;
        for (const r of this.rulesFor(b)) if (ruleAllows(r, a)) return true;
      }
    }
    return false;
  }

  /** The rules of a role a binding would name (Role in `namespace`, or ClusterRole). */
  rulesOfRef(kind: string, namespace: string, name: string): Rule[] {
    if (kind === 'Role') {
      const r = this.roles.get(`${namespace}/${name}`);
      return r ? rulesOf(r) : [];
    }
    return this.clusterRoleRules(name);
  }

  /** Every rule that applies to the user in a namespace (SelfSubjectRulesReview). */
  rulesIn(user: UserInfo, namespace: string): Rule[] {
    if (this.dirty) this.rebuild();
    const out: Rule[] = [];
    const seen = new Set<Binding>();
    for (const key of subjectKeys(user)) {
      for (const b of this.bySubject.get(key) ?? []) {
        if (seen.has(b) || (b.namespace !== '' && b.namespace !== namespace)) continue;
        seen.add(b);
        out.push(...this.rulesFor(b));
      }
    }
    return out;
  }
}
