/**
 * The MutatingAdmissionPolicy admission plugin (the reference's admission/plugin/policy/mutating
 * dispatcher), a mutating plugin: policies and bindings are compiled from their watch caches as
 * they change, and each create or update that a bound policy matches is mutated:
 *
 *   for each policy whose matchConstraints take the request (policies by name)
 *     for each of its bindings whose matchResources take it (bindings by name)
 *       for each param (none, the one named, or all selected)
 *         matchConditions: any false skips the invocation
 *         each mutation in order, on the object as the previous one left it (./mutate.ts)
 *
 * reinvocationPolicy IfNeeded (the reference's policyReinvokeContext): when an invocation changes
 * the object, the IfNeeded invocations that ran before it are run once more after the first pass.
 *
 * Errors (a configuration error, a matchCondition or mutation that fails) are collected; those of
 * policies with failurePolicy Ignore are dropped, the first other one refuses the request as the
 * reference's generic policy dispatcher does (403, reason Invalid, every error a cause):
 *
 *   policy 'p' with binding 'b' denied request: error applying patch: invalid ApplyConfiguration: ...
 *
 * With no binding the plugin takes part in no request (the registry skips the chain).
 */

import { svcApiVersion } from '../../api/brand';
import { deepEqual, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { OUT_OF_BUDGET_MESSAGE } from '../../cel/budget';
import { toCel } from '../../cel/index';
import type { Attributes, Operation, Plugin } from '../../registry/admission';
import type { SchemaSet } from '../../schema/engine';
import type { WatchCache } from '../../watch/cache';
import { BoundPolicies } from './bound-policies';
import type { CompiledBinding } from './compile';
import { type Activation, evaluateMatchConditions } from './evaluate';
import { collectParams, namespaceObject, requestActivation, ruleRequest } from './invocation';
import { rulesMatch, selectorsMatch } from './matching';
import { applyMutation, replaceInPlace } from './mutate';
import { type CompiledMutatingPolicy, compileMutatingPolicy } from './mutating-compile';
import { ADMISSION_GROUP, type PolicySources } from './plugin';

/** One mutation's outcome (the reference's apiserver_mutating_admission_policy_check_* metrics). */
export interface MutationCheck {
  policy: string;
  binding: string;
  errorType: 'no_error' | 'compile_error' | 'invalid_error';
  seconds: number;
}

export interface MutatingPolicySources extends Pick<PolicySources, 'params' | 'namespace' | 'decider' | 'log'> {
  /** Each mutation's outcome (metrics). */
  onCheck?: (c: MutationCheck) => void;
  policies: () => WatchCache;
  bindings: () => WatchCache;
  schemas: SchemaSet;
  /** The schema definition of a resource's objects (undefined: none known). */
  schemaOf(group: string, version: string, resource: string): string | undefined;
}

interface PolicyError {
  policy: string;
  binding?: string;
  message: string;
}

/** One policy, binding and param to run: the unit of reinvocation. */
interface Invocation {
  policy: CompiledMutatingPolicy;
  binding: CompiledBinding;
  param: unknown;
  key: string;
}

export class MutatingPolicyAdmission implements Plugin {
  readonly name = 'MutatingAdmissionPolicy';
  private readonly set = new BoundPolicies<CompiledMutatingPolicy>(compileMutatingPolicy, ADMISSION_GROUP, (op) => op !== 'DELETE');

  constructor(private readonly sources: MutatingPolicySources) {}

  async start(): Promise<void> {
    await this.set.start(this.sources.policies(), this.sources.bindings(), this.sources.log);
  }

  stop(): void {
    this.set.stop();
  }

  setPolicy(o: Obj, deleted = false): void {
    this.set.setPolicy(o, deleted);
  }

  setBinding(o: Obj, deleted = false): void {
    this.set.setBinding(o, deleted);
  }

  rebuild(): void {
    this.set.rebuild();
  }

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return this.set.handles(group, resource, subresource, op);
  }

  async admit(a: Attributes): Promise<void> {
    const q = ruleRequest(a);
    const nsName = a.group === '' && a.resource === 'namespaces' ? '' : a.namespace;
    let ns: Obj | undefined | null = null;
    const namespace = async (): Promise<Obj | undefined> => {
      if (ns === null) ns = nsName ? await this.sources.namespace(nsName) : undefined;
      return ns;
    };
    const nsLabels = async () => (nsName ? ((await namespace())?.metadata.labels ?? {}) : undefined);
    const errors: PolicyError[] = [];
    const invocations: Invocation[] = [];
    for (const { policy, bindings } of this.set.active) {
      if (!rulesMatch(policy.match, q)) continue;
      if ((policy.match.namespaceSelector || policy.match.objectSelector) && !selectorsMatch(policy.match, q, await nsLabels())) continue;
      const configError = (message: string, binding?: string) => {
        if (policy.failurePolicy === 'Fail') errors.push({ policy: policy.name, binding, message });
      };
      if (policy.match.badSelector) {
        configError('failed to configure policy: invalid label selector');
        continue;
      }
      const pk = policy.paramKind;
      const source = pk ? this.sources.params(svcApiVersion(pk.apiVersion), pk.kind) : undefined;
      if (pk && !source) {
        configError(`failed to configure policy: failed to find resource referenced by paramKind: '${pk.apiVersion}, Kind=${pk.kind}'`);
        continue;
      }
      for (const b of bindings) {
        if (b.match) {
          if (!rulesMatch(b.match, q)) continue;
          if ((b.match.namespaceSelector || b.match.objectSelector) && !selectorsMatch(b.match, q, await nsLabels())) continue;
        }
        let params: unknown[];
        try {
          params = await collectParams(pk !== undefined, b.paramRef, source, a.namespace);
        } catch (e) {
          configError((e as Error).message, b.name);
          continue;
        }
        params.forEach((param, i) => {
          invocations.push({ policy, binding: b, param, key: `${policy.name}\u0000${b.name}\u0000${i}` });
        });
      }
    }
    if (invocations.length > 0) {
      const act = requestActivation(a, q, this.sources.decider);
      if (invocations.some((i) => i.policy.needsNamespace)) act.namespaceObject = namespaceObject(await namespace());
      const target = { schemas: this.sources.schemas, defName: this.sources.schemaOf(a.group, a.version, a.resource) };
      // First pass, then the IfNeeded invocations that ran before a later change, once.
      let previously = new Set<string>();
      const reinvoke = new Set<string>();
      for (const inv of invocations) {
        if (this.invoke(inv, a, act, target, errors)) {
          for (const k of previously) reinvoke.add(k);
          previously = new Set();
        }
        if (inv.policy.reinvocation === 'IfNeeded') previously.add(inv.key);
      }
      for (const inv of invocations) if (reinvoke.has(inv.key)) this.invoke(inv, a, act, target, errors);
      // For the chain's reinvocation (a later plugin, a webhook, changing the object): what ran IfNeeded.
      const ifNeeded = invocations.filter((i) => i.policy.reinvocation === 'IfNeeded');
      if (ifNeeded.length > 0)
        this.ranIfNeeded.set(a, {
          invocations: ifNeeded,
          target,
          needsNamespace: ifNeeded.some((i) => i.policy.needsNamespace) ? namespace : undefined,
        });
    }
    this.throwErrors(errors, a);
  }

  /** Invocations with reinvocationPolicy IfNeeded that ran in a request's first pass. */
  private readonly ranIfNeeded = new WeakMap<
    Attributes,
    { invocations: Invocation[]; target: { schemas: SchemaSet; defName?: string }; needsNamespace?: () => Promise<Obj | undefined> }
  >();

  /** Whether this request ran IfNeeded policies (the chain then calls reinvoke when a later plugin changed the object). */
  reinvocable(a: Attributes): boolean {
    return this.ranIfNeeded.has(a);
  }

  /** The reference's reinvocation: the IfNeeded invocations run once more on the object as later plugins left it. */
  async reinvoke(a: Attributes): Promise<void> {
    const ran = this.ranIfNeeded.get(a);
    if (!ran) return;
    this.ranIfNeeded.delete(a);
    const act = requestActivation(a, ruleRequest(a), this.sources.decider);
    if (ran.needsNamespace) act.namespaceObject = namespaceObject(await ran.needsNamespace());
    const errors: PolicyError[] = [];
    for (const inv of ran.invocations) this.invoke(inv, a, act, ran.target, errors);
    this.throwErrors(errors, a);
  }

  private throwErrors(errors: PolicyError[], a: Attributes): void {
    if (errors.length === 0) return;
    const messages = errors.map((e) =>
      e.binding !== undefined
        ? `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`
        : `policy "${e.policy}" denied request: ${e.message}`,
    );
    const name = a.name || a.object?.metadata?.name || '';
    const details: Record<string, unknown> = {};
    if (name) details.name = name;
    if (a.group) details.group = a.group;
    details.kind = a.resource;
    details.causes = messages.map((message) => ({ message }));
    throw new StatusError(403, 'Invalid', messages[0] as string, details);
  }

  /**
   * One invocation: its matchConditions, then its mutations in order on `a.object` (changed in
   * place). Returns whether the object changed; errors go to `errors` under the failurePolicy.
   */
  private invoke(
    inv: Invocation,
    a: Attributes,
    act: Activation,
    target: { schemas: SchemaSet; defName?: string },
    errors: PolicyError[],
  ): boolean {
    const { policy, binding, param } = inv;
    const fail = policy.failurePolicy === 'Fail';
    const report = (message: string) => {
      if (fail) errors.push({ policy: policy.name, binding: binding.name, message });
    };
    let celObject: unknown = toCel(a.object);
    const current: Activation = { ...act, object: celObject };
    const mc = evaluateMatchConditions(policy, current, param);
    if (mc.error !== undefined || mc.outOfBudget) {
      report(mc.error ?? OUT_OF_BUDGET_MESSAGE);
      return false;
    }
    if (!mc.matches) return false;
    const ctx: Record<string, unknown> = {
      oldObject: act.oldObject,
      request: act.request,
      namespaceObject: act.namespaceObject,
      authorizer: act.authorizer,
    };
    if (policy.paramKind) ctx.params = param;
    let object = a.object;
    for (const m of policy.mutations) {
      const started = performance.now();
      let errorType: MutationCheck['errorType'] = 'no_error';
      try {
        // The CEL form of the object as the previous mutation left it, made only when needed.
        if (celObject === undefined) celObject = toCel(object);
        object = applyMutation(m, policy.variables, ctx, object, celObject, target);
        celObject = undefined;
      } catch (e) {
        errorType = m.expr.fn ? 'invalid_error' : 'compile_error';
        report((e as Error).message);
      }
      this.sources.onCheck?.({ policy: policy.name, binding: binding.name, errorType, seconds: (performance.now() - started) / 1000 });
    }
    if (object === a.object || deepEqual(object, a.object)) return false;
    replaceInPlace(a.object, object);
    return true;
  }
}
