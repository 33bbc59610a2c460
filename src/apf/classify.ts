/**
 * Classification: which FlowSchema a request belongs to, and its flow distinguisher (spec 2,
 * FlowSchema). The schemas are tried in order of matchingPrecedence, then name; the first whose
 * rules match wins. A rule matches when one of its subjects matches the user and one of its
 * resource or non-resource rules matches the request:
 *
 *   subject   User name | Group name | ServiceAccount namespace/name   ('*': any)
 *   resource  verbs × apiGroups × resources ('res' or 'res/sub') × (clusterScope for requests
 *             without a namespace | namespaces for requests with one; '*' matches only those)
 *   path      verbs × nonResourceURLs (exact, '*', or a 'prefix/*' matching below prefix/)
 *
 * The distinguisher is the user's name (ByUser), the request's namespace (ByNamespace) or ''.
 */
import { svcGroup } from '../api/brand';
import type { Obj } from '../api/meta';
import type { RequestInfo } from '../api/request-info';
import type { UserInfo } from '../api/user';

type J = Record<string, unknown>;

const SA_PREFIX = 'system:serviceaccount:';

export interface CompiledFlowSchema {
  name: string;
  uid: string;
  precedence: number;
  priorityLevel: string;
  distinguisher: 'ByUser' | 'ByNamespace' | undefined;
  rules: CompiledRule[];
  /** The object as stored (for the Dangling controller and dumps). */
  obj: Obj;
}

interface CompiledRule {
  users: Set<string>;
  groups: Set<string>;
  /** `system:serviceaccount:<ns>:<name>` names, and namespaces whose every account matches. */
  accounts: Set<string>;
  accountNamespaces: Set<string>;
  anyUser: boolean;
  resourceRules: CompiledResourceRule[];
  nonResourceRules: CompiledNonResourceRule[];
}

interface CompiledResourceRule {
  verbs: Set<string> | undefined;
  groups: Set<string> | undefined;
  resources: Set<string> | undefined;
  clusterScope: boolean;
  anyNamespace: boolean;
  namespaces: Set<string>;
}

interface CompiledNonResourceRule {
  verbs: Set<string> | undefined;
  any: boolean;
  exact: Set<string>;
  prefixes: string[];
}

const obj = (v: unknown): J => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string');
/** A set, or undefined for '*' (matches everything). */
const setOrAll = (v: unknown, map: (s: string) => string = (s) => s): Set<string> | undefined => {
  const xs = strs(v);
  return xs.includes('*') ? undefined : new Set(xs.map(map));
};

function compileRule(r: J): CompiledRule {
  const out: CompiledRule = {
    users: new Set(),
    groups: new Set(),
    accounts: new Set(),
    accountNamespaces: new Set(),
    anyUser: false,
    resourceRules: [],
    nonResourceRules: [],
  };
  for (const s of arr(r.subjects).map(obj)) {
    if (s.kind === 'User') {
      const name = String(obj(s.user).name ?? '');
      if (name === '*') out.anyUser = true;
      else out.users.add(name);
    } else if (s.kind === 'Group') {
      const name = String(obj(s.group).name ?? '');
      if (name === '*') out.anyUser = true;
      else out.groups.add(name);
    } else if (s.kind === 'ServiceAccount') {
      const sa = obj(s.serviceAccount);
      const ns = String(sa.namespace ?? '');
      if (sa.name === '*') out.accountNamespaces.add(ns);
      else out.accounts.add(`${SA_PREFIX}${ns}:${String(sa.name ?? '')}`);
    }
  }
  for (const rr of arr(r.resourceRules).map(obj)) {
    const ns = strs(rr.namespaces);
    out.resourceRules.push({
      verbs: setOrAll(rr.verbs),
      groups: setOrAll(rr.apiGroups, svcGroup),
      resources: setOrAll(rr.resources),
      clusterScope: rr.clusterScope === true,
      anyNamespace: ns.includes('*'),
      namespaces: new Set(ns),
    });
  }
  for (const nr of arr(r.nonResourceRules).map(obj)) {
    const urls = strs(nr.nonResourceURLs);
    out.nonResourceRules.push({
      verbs: setOrAll(nr.verbs),
      any: urls.includes('*'),
      exact: new Set(urls),
      // 'prefix/*' matches below 'prefix/' (not 'prefix' itself).
      prefixes: urls.filter((u) => u.endsWith('/*')).map((u) => u.slice(0, -1)),
    });
  }
  return out;
}

export function compileFlowSchema(o: Obj): CompiledFlowSchema {
  const spec = obj(o.spec);
  const method = obj(spec.distinguisherMethod).type;
  return {
    name: o.metadata.name as string,
    uid: String(o.metadata.uid ?? ''),
    precedence: typeof spec.matchingPrecedence === 'number' ? spec.matchingPrecedence : 1000,
    priorityLevel: String(obj(spec.priorityLevelConfiguration).name ?? ''),
    distinguisher: method === 'ByUser' || method === 'ByNamespace' ? method : undefined,
    rules: arr(spec.rules).map((r) => compileRule(obj(r))),
    obj: o,
  };
}

/** Matching order: precedence, then name. */
export function byPrecedence(a: CompiledFlowSchema, b: CompiledFlowSchema): number {
  return a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function subjectMatches(r: CompiledRule, user: UserInfo): boolean {
  if (r.anyUser || r.users.has(user.name)) return true;
  for (const g of user.groups) if (r.groups.has(g)) return true;
  if (user.name.startsWith(SA_PREFIX)) {
    if (r.accounts.has(user.name)) return true;
    if (r.accountNamespaces.size > 0) {
      const rest = user.name.slice(SA_PREFIX.length);
      const colon = rest.indexOf(':');
      if (colon > 0 && r.accountNamespaces.has(rest.slice(0, colon))) return true;
    }
  }
  return false;
}

function resourceMatches(rr: CompiledResourceRule, info: RequestInfo & { isResourceRequest: true }): boolean {
  if (rr.verbs && !rr.verbs.has(info.verb)) return false;
  if (rr.groups && !rr.groups.has(info.group)) return false;
  if (rr.resources && !rr.resources.has(info.subresource ? `${info.resource}/${info.subresource}` : info.resource)) return false;
  if (info.namespace === '') return rr.clusterScope;
  return rr.anyNamespace || rr.namespaces.has(info.namespace);
}

function pathMatches(nr: CompiledNonResourceRule, verb: string, path: string): boolean {
  if (nr.verbs && !nr.verbs.has(verb)) return false;
  if (nr.any || nr.exact.has(path)) return true;
  for (const p of nr.prefixes) if (path.startsWith(p)) return true;
  return false;
}

export function flowSchemaMatches(fs: CompiledFlowSchema, user: UserInfo, info: RequestInfo): boolean {
  for (const r of fs.rules) {
    if (!subjectMatches(r, user)) continue;
    if (info.isResourceRequest) {
      for (const rr of r.resourceRules) if (resourceMatches(rr, info)) return true;
    } else {
      for (const nr of r.nonResourceRules) if (pathMatches(nr, info.verb, info.path)) return true;
    }
  }
  return false;
}

/** The flow distinguisher of a request under `fs`. */
export function distinguisher(fs: CompiledFlowSchema, user: UserInfo, info: RequestInfo): string {
  if (fs.distinguisher === 'ByUser') return user.name;
  if (fs.distinguisher === 'ByNamespace') return info.isResourceRequest ? info.namespace : '';
  return '';
}

/** The first of `schemas` (sorted by byPrecedence) that matches. */
export function classify(schemas: readonly CompiledFlowSchema[], user: UserInfo, info: RequestInfo): CompiledFlowSchema | undefined {
  for (const fs of schemas) if (flowSchemaMatches(fs, user, info)) return fs;
  return undefined;
}
