/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins (the reference's
 * admission/plugin/webhook/{generic,mutating,validating}): the webhooks of every configuration,
 * followed from their watch caches (a change applies as soon as the cache has it), configurations
 * in name order and webhooks in their order, each called when
 *
 *   its namespaceSelector takes the request's namespace (cluster-scoped objects always; a
 *   namespace by its own labels), its objectSelector the new or the old object, one of its rules
 *   the request, and none of its matchConditions is false (an error in one: the request is
 *   refused under failurePolicy Fail, the webhook skipped under Ignore)
 *
 * Mutating webhooks run one after another, each given the object as the previous left it; their
 * JSONPatch is applied and the result decoded as a request body is (pruned, defaulted), and the
 * kind's validation runs on it later as on any write. A webhook with `reinvocationPolicy:
 * IfNeeded` is called once more when a webhook after it changed the object. Validating webhooks
 * of one request are called at once and the first refusal in their order is the answer.
 *
 * Errors, as the reference words them:
 *   refusal          `<resource> "<name>" is forbidden: admission webhook "<w>" denied the request: <message>`
 *                    (the webhook's code and reason; 403 Forbidden when it gives none)
 *   call failed      500 `Internal error occurred: failed calling webhook "<w>": failed to call webhook: Post "<url>": ...`
 *                    under failurePolicy Fail; under Ignore the webhook is skipped (fail open)
 *   dry run          400 `admission webhook "<w>" does not support dry run` for sideEffects Unknown or Some
 *
 * Under `matchPolicy: Equivalent` a webhook whose rules list not the request's version but another
 * version the resource is served in sees the request in that version (the reference's
 * VersionedAttributes): object and oldObject converted (src/admission/webhook/equivalents.ts),
 * `kind` and `resource` of that version, `requestKind` and `requestResource` of the request's; a
 * mutating webhook's patch is applied to the converted object, which is converted back. A
 * conversion that fails refuses the request with a 500 whatever the failure policy.
 *
 * Webhooks are never called for the admission configuration kinds themselves, so a broken webhook
 * can always be removed.
 */
import { apiVersionOf, isObject, type Obj } from '../../api/meta';
import { StatusError, type StatusReason } from '../../api/status';
import type { UserInfo } from '../../api/user';
import { warningHeader } from '../../api/warning';
import { CostBudget, OUT_OF_BUDGET_MESSAGE, RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS } from '../../cel/budget';
import type { Decider } from '../../cel/lib/authz';
import type { Attributes, Operation, Plugin } from '../../registry/admission';
import { applyJsonPatch } from '../../registry/patch/json-patch';
import type { WatchCache } from '../../watch/cache';
import { requestActivation, ruleRequest } from '../policy/invocation';
import { equivalentVersion, mayMatch, rulesMatch, selectorsMatch } from '../policy/matching';
import { ADMISSION_GROUP } from '../policy/plugin';
import { CallError, post, type ServiceResolver, target } from './client';
import type { Equivalents, EquivalentVersion } from './equivalents';
import { compileHooks, groupFor, type Hook, type HookType } from './hooks';
import { createReview, objectFor, type ReviewResponse, reviewVersion, type View, verifyResponse } from './review';

/** Resources whose writes no webhook sees (the reference's IsExemptAdmissionConfigurationResource). */
const EXEMPT = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** One call, for the metrics (apiserver_admission_webhook_*). */
export interface WebhookCall {
  name: string;
  type: HookType;
  operation: Operation;
  rejected: boolean;
  /** The HTTP code the webhook answered with (0: no answer). */
  code: number;
  seconds: number;
  /** Why the request was refused: calling_webhook_error, no_error (a denial), apiserver_internal_error. */
  rejection?: 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error';
  rejectionCode?: number;
  failedOpen?: boolean;
}

export interface WebhookSources {
  /** The configurations' watch caches (resolved at start). */
  configurations: (type: HookType) => WatchCache;
  namespace(name: string): Promise<Obj | undefined>;
  resolve: ServiceResolver;
  /** The other served versions of a resource (matchPolicy Equivalent); absent: none. */
  equivalents?: Equivalents;
  decider?: (user: UserInfo) => Decider;
  observe?: (c: WebhookCall) => void;
  log: (msg: string) => void;
}

/** A calling failure (the reference's ErrCallingWebhook): subject to the failure policy. */
class CallingError extends Error {
  constructor(
    hook: Hook,
    why: string,
    readonly code = 0,
  ) {
    super(`failed calling webhook "${hook.name}": ${why}`);
  }
}

const internalError = (message: string) =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

/**
 * A dry run may reach only webhooks without side effects (None, NoneOnDryRun). v1 accepts no
 * other value, but a configuration stored by an older server may still carry Unknown or Some.
 */
export function dryRunRefusal(hook: Hook, a: Pick<Attributes, 'dryRun'>): StatusError | undefined {
  if (!a.dryRun || hook.sideEffects === 'None' || hook.sideEffects === 'NoneOnDryRun') return undefined;
  return new StatusError(400, 'BadRequest', `admission webhook "${hook.name}" does not support dry run`);
}

/** A refusal carries the request's warnings so far (`Warning: 299` headers on the error answer). */
function withWarnings(e: unknown, a: Attributes): unknown {
  if (!(e instanceof StatusError) || !a.warnings || a.warnings.length === 0) return e;
  e.headers = { ...e.headers, Warning: a.warnings.map(warningHeader).join(', ') };
  return e;
}

/** A webhook's refusal as the reference's ToStatusErr makes it. */
function refusal(a: Attributes, hook: Hook, result: Record<string, unknown> | undefined): StatusError {
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code !== 0 ? r.code : 403;
  const deniedBy = `admission webhook "${hook.name}" denied the request`;
  const message =
    typeof r.message === 'string' && r.message !== ''
      ? `${deniedBy}: ${r.message}`
      : typeof r.reason === 'string' && r.reason !== ''
        ? `${deniedBy}: ${r.reason}`
        : `${deniedBy} without explanation`;
  const name = a.name || (a.object?.metadata?.name as string | undefined) || 'Unknown';
  let details = isObject(r.details) ? (r.details as Record<string, unknown>) : undefined;
  if (!details) {
    details = code === 500 ? { causes: [{ message }] } : { name, ...(a.group ? { group: a.group } : {}), kind: a.resource };
  }
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
  const prefix = code === 500 ? 'Internal error occurred' : `${qualified} "${name}" is forbidden`;
  const reason = typeof r.reason === 'string' && r.reason !== '' ? r.reason : code === 500 ? 'InternalError' : 'Forbidden';
  return new StatusError(code, reason as StatusReason, `${prefix}: ${message}`, details);
}

/** The webhooks of one type, compiled as their configurations change. */
class HookSet {
  hooks: Hook[] = [];
  private readonly configs = new Map<string, Hook[]>();
  private readonly wanted = new Map<string, boolean>();

  set(o: Obj, deleted: boolean, type: HookType): void {
    const name = o.metadata.name as string;
    if (deleted) this.configs.delete(name);
    else this.configs.set(name, compileHooks(o, type));
  }

  rebuild(): void {
    this.hooks = [...this.configs.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).flatMap(([, h]) => h);
    this.wanted.clear();
  }

  wants(group: string, resource: string, subresource: string, op: Operation): boolean {
    if (this.hooks.length === 0) return false;
    if (group === ADMISSION_GROUP && EXEMPT.has(resource)) return false;
    const key = `${group}/${resource}/${subresource}/${op}`;
    let w = this.wanted.get(key);
    if (w === undefined) {
      w = this.hooks.some((h) => mayMatch(h.match, group, resource, subresource, op));
      this.wanted.set(key, w);
    }
    return w;
  }
}

/** What one request's calls share: its namespace's labels, read once; its equivalent versions and conversions. */
class RequestScope {
  private ns: Promise<Obj | undefined> | undefined;
  private others: EquivalentVersion[] | undefined;
  private readonly views = new Map<string, Promise<View>>();
  constructor(
    readonly a: Attributes,
    private readonly sources: WebhookSources,
  ) {}

  /** The resource's other served versions (looked up once). */
  equivalents(): EquivalentVersion[] {
    this.others ??= this.sources.equivalents?.(this.a.group, this.a.resource, this.a.version) ?? [];
    return this.others;
  }

  /** The request in `version` (its own, or converted once); a 500 when the conversion fails. */
  view(version: string | undefined): Promise<View> {
    const a = this.a;
    const object = a.operation === 'DELETE' ? undefined : a.object;
    const as = version === undefined || version === a.version ? undefined : this.equivalents().find((e) => e.version === version);
    if (!as) return Promise.resolve({ object, oldObject: a.oldObject });
    let v = this.views.get(as.version);
    if (!v) {
      v = (async (): Promise<View> => {
        try {
          return {
            as,
            object: object && (await as.to(object)),
            oldObject: a.oldObject && (await as.to(a.oldObject)),
          };
        } catch (e) {
          throw internalError(e instanceof StatusError ? e.message : (e as Error).message);
        }
      })();
      this.views.set(as.version, v);
    }
    return v;
  }

  /** The object changed (a mutation): conversions made before are stale. */
  changed(): void {
    this.views.clear();
  }

  /** The labels of the request's namespace; undefined for cluster-scoped requests. */
  async nsLabels(): Promise<Record<string, string> | undefined> {
    const a = this.a;
    if (a.namespace === '' || (a.group === '' && a.resource === 'namespaces')) return undefined;
    this.ns ??= this.sources.namespace(a.namespace);
    const ns = await this.ns;
    if (!ns) throw new StatusError(404, 'NotFound', `namespaces "${a.namespace}" not found`, { name: a.namespace, kind: 'namespaces' });
    return ns.metadata.labels ?? {};
  }
}

export class WebhookAdmission {
  private readonly sets: Record<HookType, HookSet> = { admit: new HookSet(), validating: new HookSet() };
  private stopped = false;
  readonly mutating: Plugin;
  readonly validating: Plugin;

  constructor(private readonly sources: WebhookSources) {
    this.mutating = {
      name: 'MutatingAdmissionWebhook',
      handles: (g, r, s, op) => this.sets.admit.wants(g, r, s, op),
      admit: (a) => this.admit(a),
    };
    this.validating = {
      name: 'ValidatingAdmissionWebhook',
      handles: (g, r, s, op) => this.sets.validating.wants(g, r, s, op),
      validate: (a) => this.validate(a),
    };
  }

  async start(): Promise<void> {
    const caches = (['admit', 'validating'] as const).map((t) => [t, this.sources.configurations(t)] as const);
    await Promise.all(caches.map(([, c]) => c.start()));
    for (const [type, cache] of caches) this.follow(cache, type);
  }

  stop(): void {
    this.stopped = true;
  }

  private follow(cache: WatchCache, type: HookType): void {
    const set = this.sets[type];
    const apply = (o: Obj, deleted: boolean) => {
      try {
        set.set(o, deleted, type);
      } catch (e) {
        this.sources.log(`admission webhooks: cannot compile ${o.metadata.name}: ${(e as Error).message}`);
      }
    };
    const w = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of w.initial) apply(c.obj, false);
    set.rebuild();
    void (async () => {
      while (!this.stopped && !w.watcher.ended) {
        const events = await w.watcher.next(Number.POSITIVE_INFINITY);
        for (const e of events) apply(e.obj, e.type === 'DELETED');
        if (events.length > 0) set.rebuild();
      }
    })();
  }

  /**
   * The request as `hook` is to see it when it is to be called (the reference's ShouldCallHook),
   * else undefined; throws a refusal.
   */
  private async shouldCall(hook: Hook, scope: RequestScope): Promise<View | undefined> {
    const a = scope.a;
    const q = ruleRequest(a);
    if (!rulesMatch(hook.match, q)) return undefined;
    if (hook.match.badSelector) throw internalError(`webhook "${hook.name}": invalid label selector`);
    if (hook.match.namespaceSelector || hook.match.objectSelector) {
      if (!selectorsMatch(hook.match, q, hook.match.namespaceSelector ? await scope.nsLabels() : undefined)) return undefined;
    }
    const view = await scope.view(equivalentVersion(hook.match, q, () => scope.equivalents().map((e) => e.version)));
    if (hook.matchConditions.length === 0) return view;
    const act = requestActivation(
      view.as ? { ...a, version: view.as.version, kind: view.as.kind } : a,
      { object: objectFor(hook, view.object), oldObject: objectFor(hook, view.oldObject) },
      this.sources.decider,
      groupFor(hook, a.group),
    );
    const ctx = act as unknown as Record<string, unknown>;
    const budget = new CostBudget(RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS);
    const errors: string[] = [];
    for (const mc of hook.matchConditions) {
      if (!mc.expr.fn) {
        errors.push(`compilation error: ${mc.expr.error ?? 'unknown error'}`);
        continue;
      }
      const r = budget.run(mc.expr.fn, ctx);
      if (r.overBudget) {
        errors.push(OUT_OF_BUDGET_MESSAGE);
        break;
      }
      if (r.error !== undefined) {
        const msg = r.error instanceof Error ? r.error.message : String(r.error);
        errors.push(`expression '${mc.expr.expr}' resulted in error: ${msg}`);
      } else if (r.value === false) return undefined;
      else if (r.value !== true) errors.push(`expression '${mc.expr.expr}' resulted in error: no such overload`);
    }
    if (errors.length === 0) return view;
    if (hook.failurePolicy === 'Ignore') return undefined;
    const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
    const why = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
    throw new StatusError(403, 'Forbidden', `${qualified} "${a.name}" is forbidden: ${why}`, {
      name: a.name,
      ...(a.group ? { group: a.group } : {}),
      kind: a.resource,
    });
  }

  /** One call: the review sent, the answer checked. CallingError for failures, StatusError for refusals before calling. */
  private async call(hook: Hook, a: Attributes, view: View, object: Obj | undefined): Promise<{ r: ReviewResponse; code: number }> {
    const refused = dryRunRefusal(hook, a);
    if (refused) throw refused;
    const version = reviewVersion(hook);
    if (!version)
      throw new CallingError(
        hook,
        'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
      );
    const uid = crypto.randomUUID();
    const review = createReview(hook, version, uid, a, view, object);
    let t: ReturnType<typeof target>;
    try {
      t = target(hook.client, hook.client.caBundle, hook.timeoutSeconds, this.sources.resolve);
    } catch (e) {
      throw new CallingError(hook, `failed to call webhook: ${(e as Error).message}`);
    }
    let body: unknown;
    try {
      body = await post(t, JSON.stringify(review), hook.timeoutSeconds * 1000);
    } catch (e) {
      const code = e instanceof CallError ? (e.code ?? 0) : 0;
      throw new CallingError(hook, `failed to call webhook: ${(e as Error).message}`, code);
    }
    try {
      return { r: verifyResponse(body, version, uid, hook.type === 'admit'), code: 200 };
    } catch (e) {
      throw new CallingError(hook, `received invalid webhook response: ${(e as Error).message}`, 200);
    }
  }

  /** Warnings and audit annotations of an answer into the request. */
  private record(a: Attributes, hook: Hook, r: ReviewResponse): void {
    if (a.annotations) for (const [k, v] of Object.entries(r.auditAnnotations)) a.annotations[`${hook.name}/${k}`] = v;
    if (a.warnings) a.warnings.push(...r.warnings);
  }

  private observe(hook: Hook, a: Attributes, started: number, outcome: Partial<WebhookCall> & { code: number; rejected: boolean }): void {
    this.sources.observe?.({
      name: hook.name,
      type: hook.type,
      operation: a.operation,
      seconds: (performance.now() - started) / 1000,
      ...outcome,
    });
  }

  private async admit(a: Attributes): Promise<void> {
    try {
      await this.admitRounds(a);
    } catch (e) {
      throw withWarnings(e, a);
    }
  }

  private async admitRounds(a: Attributes): Promise<void> {
    const hooks = this.sets.admit.hooks;
    const scope = new RequestScope(a, this.sources);
    const invokedReinvocable = new Set<string>();
    let reinvoke = new Set<string>();
    for (let round = 0; round < 2; round++) {
      if (round === 1 && reinvoke.size === 0) return;
      const reinvoking = reinvoke;
      reinvoke = new Set();
      for (let i = 0; i < hooks.length; i++) {
        const hook = hooks[i] as Hook;
        if (round === 1 && !reinvoking.has(hook.uid)) continue;
        const view = await this.shouldCall(hook, scope);
        if (!view) continue;
        const changed = await this.mutateOnce(hook, a, view, round, i);
        if (changed) scope.changed();
        if (changed) for (const uid of invokedReinvocable) reinvoke.add(uid);
        if (hook.reinvoke) invokedReinvocable.add(hook.uid);
      }
    }
  }

  /** One mutating webhook's call; whether it changed the object. */
  private async mutateOnce(hook: Hook, a: Attributes, view: View, round: number, index: number): Promise<boolean> {
    const started = performance.now();
    const key = `round_${round}_index_${index}`;
    let changed = false;
    const annotate = () => {
      if (a.annotations)
        a.annotations[`mutation.webhook.admission.k8s.io/${key}`] = JSON.stringify({
          configuration: hook.configuration,
          webhook: hook.name,
          mutated: changed,
        });
    };
    const sent = a.operation === 'DELETE' ? undefined : objectFor(hook, view.object);
    let result: { r: ReviewResponse; code: number };
    try {
      result = await this.call(hook, a, view, sent);
    } catch (e) {
      annotate();
      if (e instanceof CallingError) {
        if (hook.failurePolicy === 'Ignore') {
          this.observe(hook, a, started, { code: e.code, rejected: false, failedOpen: true });
          if (a.annotations) a.annotations[`failed-open.mutation.webhook.admission.k8s.io/${key}`] = hook.name;
          this.sources.log(`W failed calling webhook, failing open ${hook.name}: ${e.message}`);
          return false;
        }
        this.observe(hook, a, started, { code: e.code, rejected: true, rejection: 'calling_webhook_error', rejectionCode: e.code });
        throw internalError(e.message);
      }
      this.observe(hook, a, started, { code: 0, rejected: true, rejection: 'apiserver_internal_error', rejectionCode: 0 });
      throw e;
    }
    const { r } = result;
    this.record(a, hook, r);
    if (!r.allowed) {
      const err = refusal(a, hook, r.result);
      this.observe(hook, a, started, { code: 200, rejected: true, rejection: 'no_error', rejectionCode: err.code });
      annotate();
      throw err;
    }
    if (r.patch) {
      if (a.operation === 'DELETE') {
        annotate();
        throw internalError(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`);
      }
      let patched: Obj;
      try {
        patched = applyJsonPatch(sent, r.patch) as Obj;
        if (!isObject(patched) || !isObject(patched.metadata)) throw new Error('the patched object is not an object with metadata');
        if (view.as) {
          // Patched in the version the webhook saw: back into the request's.
          patched.apiVersion = apiVersionOf({ group: a.group, version: view.as.version });
          patched.kind = view.as.kind;
          patched = await view.as.back(patched);
        }
        patched.apiVersion = a.object.apiVersion;
        patched.kind = a.object.kind;
        a.decode?.(patched);
      } catch (e) {
        annotate();
        this.observe(hook, a, started, { code: 200, rejected: true, rejection: 'apiserver_internal_error', rejectionCode: 500 });
        throw e instanceof StatusError ? internalError(e.message) : internalError((e as Error).message);
      }
      changed = !Bun.deepEquals(patched, a.object, true);
      if (changed) {
        for (const k of Object.keys(a.object)) delete (a.object as Record<string, unknown>)[k];
        Object.assign(a.object, patched);
      }
      if (a.annotations)
        a.annotations[`patch.webhook.admission.k8s.io/${key}`] = JSON.stringify({
          configuration: hook.configuration,
          webhook: hook.name,
          patch: r.patch,
          patchType: 'JSONPatch',
        });
    }
    annotate();
    this.observe(hook, a, started, { code: 200, rejected: false });
    return changed;
  }

  private async validate(a: Attributes): Promise<void> {
    const scope = new RequestScope(a, this.sources);
    const relevant: [Hook, View][] = [];
    for (const hook of this.sets.validating.hooks) {
      const view = await this.shouldCall(hook, scope);
      if (view) relevant.push([hook, view]);
    }
    if (relevant.length === 0) return;
    const outcomes = await Promise.all(
      relevant.map(([hook, view]) =>
        this.validateOnce(hook, a, view).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    const first = outcomes.find((e) => e !== undefined);
    if (first !== undefined) throw withWarnings(first, a);
  }

  private async validateOnce(hook: Hook, a: Attributes, view: View): Promise<void> {
    const started = performance.now();
    let result: { r: ReviewResponse; code: number };
    try {
      result = await this.call(hook, a, view, a.operation === 'DELETE' ? undefined : objectFor(hook, view.object));
    } catch (e) {
      if (e instanceof CallingError) {
        if (hook.failurePolicy === 'Ignore') {
          this.observe(hook, a, started, { code: e.code, rejected: false, failedOpen: true });
          this.sources.log(`W failed calling webhook, failing open ${hook.name}: ${e.message}`);
          return;
        }
        this.observe(hook, a, started, { code: e.code, rejected: true, rejection: 'calling_webhook_error', rejectionCode: e.code });
        throw internalError(e.message);
      }
      this.observe(hook, a, started, { code: 0, rejected: true, rejection: 'apiserver_internal_error', rejectionCode: 0 });
      throw e;
    }
    this.record(a, hook, result.r);
    if (result.r.allowed) {
      this.observe(hook, a, started, { code: 200, rejected: false });
      return;
    }
    const err = refusal(a, hook, result.r.result);
    this.observe(hook, a, started, { code: 200, rejected: true, rejection: 'no_error', rejectionCode: err.code });
    throw err;
  }
}
