/**
 * The ValidatingAdmissionPolicy admission plugin (spec 2; the reference's
 * admission/plugin/policy/validating dispatcher): policies and bindings are compiled from their
 * watch caches as they change (a new policy applies within milliseconds of its write, a deleted
 * one stops as fast), and each write that a bound policy matches is evaluated:
 *
 *   for each policy whose matchConstraints take the request
 *     for each of its bindings whose matchResources take it
 *       params: none, the one named, or all selected (each evaluated, results ANDed)
 *       decisions → the binding's validationActions: Deny refuses, Warn adds a
 *       `Warning: 299` header, Audit has no audit log to go to on this server
 *
 * Configuration errors (an unknown paramKind, a missing param with parameterNotFoundAction
 * Deny, a paramRef namespace that cannot apply) deny under failurePolicy Fail and are skipped
 * under Ignore. The first denial is the answer, as the reference:
 *
 *   deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied
 *   request: failed expression: object.spec.replicas <= 5        (reason Invalid, 422)
 *
 * With no binding the plugin takes part in no request (the registry skips the chain).
 */

import { svcApiVersion } from '../../api/brand';
import type { Obj } from '../../api/meta';
import { StatusError, type StatusReason } from '../../api/status';
import type { UserInfo } from '../../api/user';
import { warningHeader } from '../../api/warning';
import type { Decider } from '../../cel/lib/authz';
import type { Attributes, Operation, Plugin } from '../../registry/admission';
import type { WatchCache } from '../../watch/cache';
import { DeadlineError } from '../../workers/pool';
import { BoundPolicies } from './bound-policies';
import type { CelPool } from './cel-pool';
import { type CompiledPolicy, compilePolicy } from './compile';
import { type Activation, type Decision, evaluatePolicy, type Result } from './evaluate';
import { collectParams, namespaceObject, type ParamSource, requestActivation, ruleRequest } from './invocation';
import { type RuleRequest, rulesMatch, selectorsMatch } from './matching';

const NO_PARAMS: unknown[] = [null];
/** Element visits above which a nested comprehension is evaluated in the pool. */
export const POOL_VISITS = 10_000;

/** The length of the longest list or map in a JSON value. */
function longestCollection(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  if (Array.isArray(v)) {
    let m = v.length;
    for (const x of v) if (x !== null && typeof x === 'object') m = Math.max(m, longestCollection(x));
    return m;
  }
  let n = 0;
  let m = 0;
  for (const k in v as Record<string, unknown>) {
    n++;
    const x = (v as Record<string, unknown>)[k];
    if (x !== null && typeof x === 'object') m = Math.max(m, longestCollection(x));
  }
  return Math.max(n, m);
}

export const ADMISSION_GROUP = 'admissionregistration.svc.io';
/** The audit annotation of the Audit validation action. */
export const VALIDATION_FAILURE = 'validation.policy.admission.svc.io/validation_failure';

export type { ParamSource };

export interface PolicySources {
  /** The policies' and bindings' watch caches (resolved at start: the registry is built with this plugin). */
  policies: () => WatchCache;
  bindings: () => WatchCache;
  /** The source of a paramKind (apiVersion in svc spelling), undefined when no such kind is served. */
  params(apiVersion: string, kind: string): ParamSource | undefined;
  /** A namespace object from its watch cache. */
  namespace(name: string): Promise<Obj | undefined>;
  /** The authorizer's decisions for a user (the authorizer library); absent: everything denied. */
  decider?: (user: UserInfo) => Decider;
  /** The CEL pool for evaluations with a large worst case; absent: all inline. */
  pool?: CelPool;
  /** Each binding's check (the metrics of the reference's validating admission policy). */
  onCheck?: (c: PolicyCheck) => void;
  log?: (msg: string) => void;
}

const CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

interface Denial {
  policy: string;
  binding?: string;
  decision: Decision;
}

/** What the plugin counts (apiserver_validating_admission_policy_check_total/_duration_seconds). */
export interface PolicyCheck {
  policy: string;
  binding: string;
  enforcementAction: 'allow' | 'deny' | 'warn' | 'audit';
  errorType: 'no_error' | 'compile_error' | 'invalid_error';
  seconds: number;
}

export class PolicyAdmission implements Plugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly set = new BoundPolicies<CompiledPolicy>(compilePolicy, ADMISSION_GROUP);
  /** Observer of every policy check (the metrics). */

  /** `sources` are shared with the mutating policy plugin (the same params, namespaces and authorizer). */
  constructor(readonly sources: PolicySources) {}

  async start(): Promise<void> {
    await this.set.start(this.sources.policies(), this.sources.bindings(), this.sources.log);
  }

  /** A policy written (compiled now) or deleted; `rebuild()` makes the change take effect. */
  setPolicy(o: Obj, deleted = false): void {
    this.set.setPolicy(o, deleted);
  }

  setBinding(o: Obj, deleted = false): void {
    this.set.setBinding(o, deleted);
  }

  stop(): void {
    this.set.stop();
  }

  rebuild(): void {
    this.set.rebuild();
  }

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return this.set.handles(group, resource, subresource, op);
  }

  async validate(a: Attributes): Promise<void> {
    const q = ruleRequest(a);
    // The request's namespace (its labels for namespaceSelector, namespaceObject for expressions),
    // read once and only when needed; a namespace names no namespace of its own.
    const nsName = a.group === '' && a.resource === 'namespaces' ? '' : a.namespace;
    let ns: Obj | undefined | null = null;
    const namespace = async (): Promise<Obj | undefined> => {
      if (ns === null) ns = nsName ? await this.sources.namespace(nsName) : undefined;
      return ns;
    };
    const nsLabels = async () => (nsName ? ((await namespace())?.metadata.labels ?? {}) : undefined);
    let act: Activation | undefined;
    let nsRead = false;
    const activation = async (policy: CompiledPolicy): Promise<Activation> => {
      act ??= requestActivation(a, q, this.sources.decider);
      if (policy.needsNamespace && !nsRead) {
        nsRead = true;
        act.namespaceObject = namespaceObject(await namespace());
      }
      return act;
    };
    const denials: Denial[] = [];
    const warnings: string[] = [];
    const auditFailures: Record<string, unknown>[] = [];
    const published = new Map<string, string[]>();
    for (const { policy, bindings } of this.set.active) {
      if (!rulesMatch(policy.match, q)) continue;
      if ((policy.match.namespaceSelector || policy.match.objectSelector) && !selectorsMatch(policy.match, q, await nsLabels())) continue;
      const configError = (message: string, binding?: string) => {
        if (policy.failurePolicy === 'Fail')
          denials.push({ policy: policy.name, binding, decision: { deny: true, error: true, message, reason: '', index: 0 } });
      };
      if (policy.match.badSelector) {
        configError('failed to configure policy: invalid label selector');
        continue;
      }
      const source = policy.paramKind ? this.sources.params(svcApiVersion(policy.paramKind.apiVersion), policy.paramKind.kind) : undefined;
      if (policy.paramKind && !source) {
        const pk = policy.paramKind;
        configError(`failed to configure policy: failed to find resource referenced by paramKind: '${pk.apiVersion}, Kind=${pk.kind}'`);
        continue;
      }
      for (const b of bindings) {
        if (b.match) {
          if (!rulesMatch(b.match, q)) continue;
          if ((b.match.namespaceSelector || b.match.objectSelector) && !selectorsMatch(b.match, q, await nsLabels())) continue;
        }
        const started = performance.now();
        let params: unknown[] = NO_PARAMS;
        if (policy.paramKind && b.paramRef && source) {
          try {
            params = await collectParams(policy.paramKind !== undefined, b.paramRef, source, a.namespace);
          } catch (e) {
            configError(`failed to configure binding: ${(e as Error).message}`, b.name);
            continue;
          }
        }
        const act = params.length > 0 ? await activation(policy) : undefined;
        let action: PolicyCheck['enforcementAction'] = 'allow';
        let errorType: PolicyCheck['errorType'] = 'no_error';
        for (const param of params) {
          const r = await this.evaluate(policy, act as Activation, param, q);
          for (const an of r.annotations) {
            // `{policy}/{key}`: each distinct value once, several bindings' values joined.
            const key = `${policy.name}/${an.key}`;
            const values = published.get(key) ?? [];
            if (!values.includes(an.value)) values.push(an.value);
            published.set(key, values);
          }
          for (const d of r.decisions) {
            if (d.error) errorType = d.message.startsWith('compilation error') ? 'compile_error' : 'invalid_error';
            if (d.always) {
              denials.push({ policy: policy.name, binding: b.name, decision: d });
              action = 'deny';
              continue;
            }
            for (const act of b.actions) {
              if (act === 'Deny') {
                denials.push({ policy: policy.name, binding: b.name, decision: d });
                action = 'deny';
              } else if (act === 'Warn') {
                warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${b.name}': ${d.message}`);
                if (action === 'allow') action = 'warn';
              } else if (act === 'Audit') {
                auditFailures.push({
                  message: d.message,
                  policy: policy.name,
                  binding: b.name,
                  expressionIndex: d.index,
                  validationActions: [...b.actions],
                });
                if (action === 'allow') action = 'audit';
              }
            }
          }
        }
        this.sources.onCheck?.({
          policy: policy.name,
          binding: b.name,
          enforcementAction: action,
          errorType,
          seconds: (performance.now() - started) / 1000,
        });
      }
    }
    if (a.warnings) a.warnings.push(...warnings);
    if (a.annotations) {
      // As the reference: the Audit action's failures, and the policies' audit annotations
      // (values cut at 10 KiB), in the request's audit event.
      if (auditFailures.length > 0) a.annotations[VALIDATION_FAILURE] = JSON.stringify(auditFailures);
      for (const [k, values] of published) if (!(k in a.annotations)) a.annotations[k] = values.join(', ').slice(0, 10 * 1024);
    }
    const first = denials[0];
    if (!first) return;
    const message = first.binding
      ? `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.decision.message}`
      : `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.decision.message}`;
    const reason = (first.decision.reason || 'Invalid') as StatusReason;
    const resource = a.resource;
    const qualified = a.group ? `${resource}.${a.group}` : resource;
    const name = a.name || a.object?.metadata?.name || '';
    const subject = name ? `${qualified} "${name}"` : qualified;
    const details: Record<string, unknown> = {};
    if (name) details.name = name;
    if (a.group) details.group = a.group;
    details.kind = resource;
    details.causes = [{ message }];
    const err = new StatusError(CODES[reason] ?? 500, reason, `${subject} is forbidden: ${message}`, details);
    const all = a.warnings ?? warnings;
    if (all.length > 0) err.headers = { Warning: all.map(warningHeader).join(', ') };
    throw err;
  }

  /**
   * One evaluation, inline or in the CEL pool. Inline unless the policy's worst case is large:
   * nested comprehensions (nesting >= 2) whose longest list or map makes more than
   * POOL_VISITS element visits (bench/cel-pool.ts: the pool costs the request thread ~20 us plus
   * the activation's clone, ~1.3 us per list element, while an inline visit costs ~0.4 us, so only
   * a large worst case is worth sending, and there the deadline protects the other requests).
   * Policies that ask the authorizer stay inline (its decisions are made here).
   */
  private async evaluate(policy: CompiledPolicy, act: Activation, param: unknown, q: RuleRequest): Promise<Result> {
    const pool = this.sources.pool;
    if (!pool || policy.nesting < 2 || policy.usesAuthorizer) return evaluatePolicy(policy, act, param);
    const longest = Math.max(longestCollection(q.object), longestCollection(q.oldObject), longestCollection(param));
    if (longest ** policy.nesting <= POOL_VISITS) return evaluatePolicy(policy, act, param);
    const { authorizer: _a, ...activation } = act;
    try {
      return await pool.evaluatePolicy(policy.obj, activation, param);
    } catch (e) {
      const message = e instanceof DeadlineError ? `expression evaluation ${e.message.replace('evaluation ', '')}` : (e as Error).message;
      if (policy.failurePolicy === 'Ignore') return { decisions: [], annotations: [] };
      return { decisions: [{ deny: true, error: true, message, reason: '', index: 0, always: true }], annotations: [] };
    }
  }
}
