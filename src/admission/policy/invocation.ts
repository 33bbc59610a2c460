/**
 * What the validating and the mutating policy plugins share around an evaluation (the
 * reference's admission/plugin/policy/generic): following the policies' and bindings' watch
 * caches, the request's variables in CEL form, the namespace object, and the parameter objects
 * of a binding (CollectParams).
 */
import { isObject, type Obj } from '../../api/meta';
import { selectorMatcher } from '../../api/selectors';
import type { UserInfo } from '../../api/user';
import { toCel } from '../../cel/index';
import { authorizerFor, type Decider } from '../../cel/lib/authz';
import type { Attributes } from '../../registry/admission';
import type { WatchCache } from '../../watch/cache';
import type { Activation } from './evaluate';
import type { RuleRequest } from './matching';

/** Objects of a parameter kind, from its watch cache. */
export interface ParamSource {
  readonly namespaced: boolean;
  get(namespace: string, name: string): Promise<Obj | undefined>;
  list(namespace: string): Promise<Obj[]>;
}

/** A binding's paramRef as compiled (compile.ts). */
export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: unknown;
  parameterNotFoundAction?: string;
}

const DENY_ALL: Decider = {
  decide: () => ({ allowed: false, reason: 'no user' }),
  serviceAccount: () => DENY_ALL,
};

/** namespaceObject: the request's namespace without its managedFields, in CEL form. */
export function namespaceObject(ns: Obj | undefined): unknown {
  if (!ns) return null;
  const { managedFields: _m, ...metadata } = ns.metadata;
  return toCel({ apiVersion: 'v1', kind: 'Namespace', metadata, spec: ns.spec ?? {}, status: ns.status ?? {} });
}

/**
 * Applies every object of a watch cache, then each change as it comes, calling `rebuild` after
 * each batch; `apply` throwing for one object is logged and skips only that object.
 */
export function followCache(
  cache: WatchCache,
  apply: (o: Obj, deleted: boolean) => void,
  rebuild: () => void,
  stopped: () => boolean,
  log?: (msg: string) => void,
): void {
  const w = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
  for (const c of w.initial) apply(c.obj, false);
  rebuild();
  void (async () => {
    while (!stopped() && !w.watcher.ended) {
      const events = await w.watcher.next(Number.POSITIVE_INFINITY);
      for (const e of events) {
        try {
          apply(e.obj, e.type === 'DELETED');
        } catch (err) {
          log?.(`admission policy: cannot compile ${e.obj.metadata.name}: ${(err as Error).message}`);
        }
      }
      if (events.length > 0) rebuild();
    }
  })();
}

/** The request's view for the rules (the object absent on DELETE). */
export function ruleRequest(a: Attributes): RuleRequest {
  return {
    group: a.group,
    version: a.version,
    resource: a.resource,
    subresource: a.subresource,
    namespace: a.namespace,
    name: a.name,
    operation: a.operation,
    object: a.operation === 'DELETE' ? undefined : a.object,
    oldObject: a.oldObject,
  };
}

/**
 * The variables of a request in CEL form (built once per request, for the first matching policy;
 * for a webhook's matchConditions, with the objects and `group` spelling it is sent).
 */
export function requestActivation(
  a: Attributes,
  q: Pick<RuleRequest, 'object' | 'oldObject'>,
  decider?: (user: UserInfo) => Decider,
  group = a.group,
): Activation {
  const gvk = { group, version: a.version, kind: a.kind };
  const gvr = { group, version: a.version, resource: a.resource };
  const user = a.user ? { username: a.user.name, uid: a.user.uid, groups: a.user.groups } : { username: '', groups: [] };
  // Already CEL data (strings, booleans, lists and maps: no integers to convert); the uid is
  // made only if an expression reads it.
  const request: Record<string, unknown> = {
    kind: gvk,
    resource: gvr,
    subResource: a.subresource,
    requestKind: gvk,
    requestResource: gvr,
    requestSubResource: a.subresource,
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: user,
    dryRun: a.dryRun,
    options: a.options ?? null,
  };
  let uid: string | undefined;
  Object.defineProperty(request, 'uid', { enumerable: true, get: () => (uid ??= crypto.randomUUID()) });
  return {
    object: q.object ? toCel(q.object) : null,
    oldObject: q.oldObject ? toCel(q.oldObject) : null,
    request,
    namespaceObject: null,
    authorizer: authorizerFor(a.user && decider ? decider(a.user) : DENY_ALL, {
      group: a.group,
      resource: a.resource,
      subresource: a.subresource,
      namespace: a.namespace,
      name: a.name,
    }),
  };
}

/**
 * The parameter objects of one binding (the reference's CollectParams): [null] without a
 * paramKind or paramRef; else the named object or those selected, in the paramRef's namespace,
 * or the request's for a namespaced kind. Throws the reference's configuration errors.
 */
export async function collectParams(
  hasParamKind: boolean,
  ref: ParamRef | undefined,
  source: ParamSource | undefined,
  objectNamespace: string,
): Promise<unknown[]> {
  if (!hasParamKind || !ref || !source) return [null];
  let namespace = ref.namespace ?? '';
  if (!source.namespaced) {
    if (namespace !== '') throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  } else if (namespace === '') {
    if (objectNamespace === '') throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    namespace = objectNamespace;
  }
  let found: Obj[];
  if (ref.name !== undefined && ref.name !== '') {
    const o = await source.get(namespace, ref.name);
    found = o ? [o] : [];
  } else if (ref.selector !== undefined) {
    const sel = isObject(ref.selector) ? selectorMatcher(ref.selector) : { empty: true, matches: () => true };
    if (!sel) throw new Error('invalid paramRef.selector');
    found = (await source.list(namespace)).filter((o) => sel.matches(o.metadata.labels ?? {}));
  } else throw new Error('one of name or selector must be provided');
  if (found.length === 0 && ref.parameterNotFoundAction === 'Deny') {
    throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return found.map(toCel);
}
