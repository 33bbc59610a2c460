/**
 * Which requests an admission policy looks at (spec 2, MatchResources; the reference's
 * admission/plugin/policy/matching and webhook/predicates/rules):
 *
 *   resourceRules     any rule matches group, version, operation, resource[/subresource], scope
 *                     and, when listed, the name
 *   excludeResourceRules  take precedence over the includes
 *   namespaceSelector the labels of the request's namespace (of the namespace object itself for
 *                     namespaces); cluster-scoped objects are never skipped
 *   objectSelector    the labels of the new or the old object: either matching is enough
 *
 * `matchPolicy: Equivalent` (the default) also matches a request for the same resource under
 * another group spelling (`networking.k8s.io` for `networking.svc.io`) or another version. Most
 * resources are served in one version here, so an equivalent request is the same resource; for
 * those served in several (a CRD's versions, autoscaling v1 and v2) `equivalentVersion` says in
 * which version a webhook is to see the request.
 */
import { svcGroup } from '../../api/brand';
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { selectorMatcher } from '../../api/selectors';
import type { Operation } from '../../registry/admission';

/** What of a request the rules look at. */
export interface RuleRequest {
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  operation: Operation;
  object?: Obj;
  oldObject?: Obj;
}

type Matcher = (labels: Record<string, string>) => boolean;

interface Rule {
  groups: Set<string> | '*';
  versions: Set<string> | '*';
  operations: Set<string> | '*';
  /** [resource, subresource] pairs, `*` a wildcard in either place. */
  resources: [string, string][];
  names: Set<string> | undefined;
  scope: string;
}

/** A MatchResources compiled once: rules as sets, selectors as functions. */
export interface CompiledMatch {
  rules: Rule[] | undefined;
  excludes: Rule[];
  equivalent: boolean;
  namespaceSelector: Matcher | undefined;
  objectSelector: Matcher | undefined;
  /** Whether the selector could not be parsed (a configuration error). */
  badSelector: boolean;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function set(values: string[], normalize: (s: string) => string = (s) => s): Set<string> | '*' {
  return values.includes('*') ? '*' : new Set(values.map(normalize));
}

function compileRule(r: JsonObject, equivalent: boolean): Rule {
  const names = strings(r.resourceNames);
  return {
    groups: set(strings(r.apiGroups), equivalent ? svcGroup : undefined),
    versions: set(strings(r.apiVersions)),
    operations: set(strings(r.operations)),
    resources: strings(r.resources).map((s) => {
      const slash = s.indexOf('/');
      return slash < 0 ? [s, ''] : [s.slice(0, slash), s.slice(slash + 1)];
    }),
    names: names.length > 0 ? new Set(names) : undefined,
    scope: typeof r.scope === 'string' ? r.scope : '*',
  };
}

/** A label selector as a function; undefined for "everything" (absent or `{}`). */
function selector(v: unknown): { matcher: Matcher | undefined; bad: boolean } {
  if (v === undefined || v === null) return { matcher: undefined, bad: false };
  const m = selectorMatcher(v);
  if (!m) return { matcher: () => false, bad: true };
  return { matcher: m.empty ? undefined : m.matches, bad: false };
}

export function compileMatch(mr: unknown, isPolicy: boolean): CompiledMatch {
  const m = isObject(mr) ? mr : {};
  const equivalent = m.matchPolicy !== 'Exact';
  const rules = Array.isArray(m.resourceRules) ? m.resourceRules.filter(isObject).map((r) => compileRule(r, equivalent)) : undefined;
  const excludes = Array.isArray(m.excludeResourceRules)
    ? m.excludeResourceRules.filter(isObject).map((r) => compileRule(r, equivalent))
    : [];
  const ns = selector(m.namespaceSelector);
  const os = selector(m.objectSelector);
  return {
    // A policy's resourceRules are required (validation); an empty list matches nothing there,
    // while a binding without rules adds no constraint.
    rules: rules ?? (isPolicy ? [] : undefined),
    excludes,
    equivalent,
    namespaceSelector: ns.matcher,
    objectSelector: os.matcher,
    badSelector: ns.bad || os.bad,
  };
}

const inSet = (s: Set<string> | '*', v: string): boolean => s === '*' || s.has(v);

function ruleMatches(r: Rule, q: RuleRequest, group: string, anyVersion: boolean): boolean {
  if (!inSet(r.groups, group) || (!anyVersion && !inSet(r.versions, q.version)) || !inSet(r.operations, q.operation)) return false;
  let resourceOk = false;
  for (const [res, sub] of r.resources) {
    if ((res === '*' || res === q.resource) && (sub === '*' || sub === q.subresource)) {
      resourceOk = true;
      break;
    }
  }
  if (!resourceOk) return false;
  if (r.names && !r.names.has(q.name)) return false;
  if (r.scope === 'Namespaced') return q.resource !== 'namespaces' && q.namespace !== '';
  if (r.scope === 'Cluster') return q.resource === 'namespaces' || q.namespace === '';
  return true;
}

/**
 * Whether the rules (not the selectors) take the request. Under Equivalent, in any version: the
 * version the request is seen in is `equivalentVersion`'s answer.
 */
export function rulesMatch(m: CompiledMatch, q: RuleRequest): boolean {
  return rulesMatchIn(m, q, m.equivalent);
}

function rulesMatchIn(m: CompiledMatch, q: RuleRequest, anyVersion: boolean): boolean {
  const group = m.equivalent ? svcGroup(q.group) : q.group;
  if (m.rules && !m.rules.some((r) => ruleMatches(r, q, group, anyVersion))) return false;
  return !m.excludes.some((r) => ruleMatches(r, q, group, anyVersion));
}

/**
 * The version a request the rules take is to be seen in (the reference's ShouldCallHook): its own
 * when the rules list it; under Equivalent, else the first of `others()` (the other served versions
 * of its resource, the reference's equivalent resources) they list; undefined when they list
 * none of them (a rule naming only versions this server does not serve: the request is seen in
 * its own version, as before equivalent versions were served).
 */
export function equivalentVersion(m: CompiledMatch, q: RuleRequest, others: () => readonly string[]): string | undefined {
  if (!m.equivalent || rulesMatchIn(m, q, false)) return q.version;
  for (const version of others()) if (version !== q.version && rulesMatchIn(m, { ...q, version }, false)) return version;
  return undefined;
}

/** Whether a rule of the match could take requests for this group/resource/operation at all. */
export function mayMatch(m: CompiledMatch, group: string, resource: string, subresource: string, op: Operation): boolean {
  const g = m.equivalent ? svcGroup(group) : group;
  if (!m.rules) return true;
  return m.rules.some(
    (r) =>
      inSet(r.groups, g) &&
      inSet(r.operations, op) &&
      r.resources.some(([res, sub]) => (res === '*' || res === resource) && (sub === '*' || sub === subresource)),
  );
}

const labelsOf = (o: Obj | undefined): Record<string, string> | undefined => o?.metadata?.labels ?? (o ? {} : undefined);

/**
 * The selectors: `nsLabels` are the labels of the request's namespace (undefined for
 * cluster-scoped requests, which the namespace selector never skips).
 */
export function selectorsMatch(m: CompiledMatch, q: RuleRequest, nsLabels: Record<string, string> | undefined): boolean {
  if (m.namespaceSelector) {
    if (q.resource === 'namespaces' && q.group === '') {
      const labels = labelsOf(q.object ?? q.oldObject) ?? {};
      if (!m.namespaceSelector(labels)) return false;
    } else if (nsLabels !== undefined && !m.namespaceSelector(nsLabels)) return false;
  }
  if (m.objectSelector) {
    const sel = m.objectSelector;
    const n = labelsOf(q.object);
    const o = labelsOf(q.oldObject);
    if (!((n !== undefined && sel(n)) || (o !== undefined && sel(o)))) return false;
  }
  return true;
}
