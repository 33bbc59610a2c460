/**
 * Admission webhooks compiled once from their configurations (the reference's
 * admission/plugin/webhook/accessors.go): each webhook of a ValidatingWebhookConfiguration or
 * MutatingWebhookConfiguration as a Hook, its rules and selectors in the matching form the
 * admission policies use (src/admission/policy/matching.ts), its matchConditions type-checked
 * into CEL programs, its defaults as the reference's v1 defaulting sets them:
 *
 *   failurePolicy Fail · matchPolicy Equivalent · timeoutSeconds 10 · reinvocationPolicy Never
 *   namespaceSelector and objectSelector {} (everything) · admissionReviewVersions as given
 *
 * A webhook's rules name groups in either spelling (`apps`, `networking.k8s.io`,
 * `networking.svc.io`): the two spellings of a group are one group here, under either
 * matchPolicy. The brand the webhook is sent (`sendUpstream`) is the one its rules use.
 *
 * matchPolicy: Exact matches the rules' versions only; Equivalent (the default) also matches a
 * request for the resource in another version, which is sent converted to a version the rules
 * list when the resource is served in one (plugin.ts, equivalents.ts), else in its own.
 */
import { svcGroup, upstreamGroup } from '../../api/brand';
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { compile, costedExecutable } from '../../cel/index';
import { policyEnv } from '../../cel/policy-env';
import type { Expr, FailurePolicy } from '../policy/compile';
import { type CompiledMatch, compileMatch } from '../policy/matching';

export type HookType = 'validating' | 'admit';

/** Where a webhook is reached: a URL, or a Service resolved to an endpoint on each call. */
export type ClientConfig =
  | { url: string; caBundle?: string }
  | { service: { namespace: string; name: string; port: number; path: string }; caBundle?: string };

export interface Hook {
  /** `<configuration>/<webhook name>/<index>`: unique, stable while the configuration is unchanged. */
  readonly uid: string;
  readonly name: string;
  readonly configuration: string;
  readonly type: HookType;
  readonly match: CompiledMatch;
  readonly failurePolicy: FailurePolicy;
  /** Seconds (1 to 30). */
  readonly timeoutSeconds: number;
  readonly sideEffects: string;
  readonly reviewVersions: readonly string[];
  readonly reinvoke: boolean;
  readonly client: ClientConfig;
  readonly matchConditions: readonly { name: string; expr: Expr }[];
  /** Whether a rule names the group in its upstream spelling (or `*`): the review is sent so. */
  readonly sendUpstream: boolean;
}

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function compileCondition(expr: string): Expr {
  const r = compile(expr, policyEnv('matchCondition', false));
  if (!r.ok) return { expr, error: r.errors.join('; ') };
  return { expr, fn: costedExecutable(r.program) };
}

function clientConfig(v: unknown): ClientConfig {
  const c = isObject(v) ? v : {};
  const caBundle = typeof c.caBundle === 'string' && c.caBundle !== '' ? c.caBundle : undefined;
  if (isObject(c.service)) {
    const s = c.service;
    return {
      service: {
        namespace: str(s.namespace),
        name: str(s.name),
        port: typeof s.port === 'number' ? s.port : 443,
        path: str(s.path),
      },
      caBundle,
    };
  }
  return { url: str(c.url), caBundle };
}

/** Whether the rules name upstream-spelled groups (or any group) rather than svc-spelled ones. */
function upstreamRules(rules: JsonObject[]): boolean {
  for (const r of rules) {
    for (const g of strings(r.apiGroups)) {
      if (g === '*' || g.endsWith('.k8s.io')) return true;
      if (g.endsWith('.svc.io')) return false;
    }
  }
  return true;
}

/** The webhooks of one configuration, in their order. */
export function compileHooks(config: Obj, type: HookType): Hook[] {
  const list = objects(config.webhooks);
  const configuration = str(config.metadata.name);
  return list.map((w, i) => {
    const rules = objects(w.rules);
    // The two spellings of a group are one group whatever the matchPolicy: requests reach
    // admission in the svc spelling.
    const matchRules = rules.map((r) => ({ ...r, apiGroups: strings(r.apiGroups).map(svcGroup) }));
    const timeout = typeof w.timeoutSeconds === 'number' ? w.timeoutSeconds : 10;
    return {
      uid: `${configuration}/${str(w.name)}/${i}/${config.metadata.resourceVersion ?? ''}`,
      name: str(w.name),
      configuration,
      type,
      match: compileMatch(
        {
          resourceRules: matchRules,
          matchPolicy: w.matchPolicy ?? 'Equivalent',
          namespaceSelector: w.namespaceSelector,
          objectSelector: w.objectSelector,
        },
        true,
      ),
      failurePolicy: w.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      timeoutSeconds: Math.min(30, Math.max(1, timeout)),
      sideEffects: str(w.sideEffects, 'Unknown'),
      reviewVersions: strings(w.admissionReviewVersions),
      reinvoke: type === 'admit' && w.reinvocationPolicy === 'IfNeeded',
      client: clientConfig(w.clientConfig),
      matchConditions: objects(w.matchConditions).map((m) => ({ name: str(m.name), expr: compileCondition(str(m.expression)) })),
      sendUpstream: upstreamRules(rules),
    };
  });
}

/** The group of a request in the spelling a hook is sent. */
export function groupFor(hook: Hook, group: string): string {
  return hook.sendUpstream ? upstreamGroup(group) : svcGroup(group);
}
