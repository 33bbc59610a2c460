/**
 * Authorizer library (spec 1, "Authorizer"; the reference's library.Authz): expressions ask the
 * server's authorizer about the requesting user.
 *
 *   authorizer.group('apps').resource('deployments').namespace('ns').name('web').check('update').allowed()
 *   authorizer.path('/healthz').check('get').allowed()
 *   authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').reason()
 *   authorizer.requestResource.check('delete').allowed()     (the request's own resource)
 *
 * Decision: allowed(), reason(), errored(), error(). The decision function behind an Authorizer
 * is given by the caller (the admission plugin passes the server's authorizer for the request's
 * user), so this file knows nothing of users or RBAC.
 */
import type { Environment } from '@marcbachmann/cel-js';

/** What is asked: a resource (group set) or a non-resource path. */
export interface AuthzAttributes {
  verb: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path?: string;
}

export interface AuthzDecision {
  allowed: boolean;
  reason: string;
  error?: string;
}

/** Decides for one user; `serviceAccount` gives the decider of a service account. */
export interface Decider {
  decide(a: AuthzAttributes): AuthzDecision;
  serviceAccount(namespace: string, name: string): Decider;
}

export class Authorizer {
  constructor(
    readonly decider: Decider,
    readonly requestResource: ResourceCheck,
  ) {}
}

export class GroupCheck {
  constructor(
    readonly decider: Decider,
    readonly group: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly decider: Decider,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
  ) {}

  with(f: Partial<Pick<ResourceCheck, 'subresource' | 'namespace' | 'name'>>): ResourceCheck {
    return new ResourceCheck(
      this.decider,
      this.group,
      this.resource,
      f.subresource ?? this.subresource,
      f.namespace ?? this.namespace,
      f.name ?? this.name,
    );
  }
}

export class PathCheck {
  constructor(
    readonly decider: Decider,
    readonly path: string,
  ) {}
}

export class Decision {
  constructor(readonly d: AuthzDecision) {}
}

/** An Authorizer for `decider`, its requestResource the request's own resource. */
export function authorizerFor(decider: Decider, request: Omit<AuthzAttributes, 'verb' | 'path'>): Authorizer {
  const rr = new ResourceCheck(
    decider,
    request.group ?? '',
    request.resource ?? '',
    request.subresource ?? '',
    request.namespace ?? '',
    request.name ?? '',
  );
  return new Authorizer(decider, rr);
}

export function registerAuthz(env: Environment): void {
  env
    .registerType('kubernetes.authorization.ResourceCheck', ResourceCheck)
    .registerType('kubernetes.authorization.GroupCheck', GroupCheck)
    .registerType('kubernetes.authorization.PathCheck', PathCheck)
    .registerType('kubernetes.authorization.Decision', Decision)
    .registerType('kubernetes.authorization.Authorizer', {
      ctor: Authorizer,
      fields: { requestResource: 'kubernetes.authorization.ResourceCheck' },
    })
    .registerFunction(
      'kubernetes.authorization.Authorizer.group(string): kubernetes.authorization.GroupCheck',
      (a: Authorizer, g: string) => new GroupCheck(a.decider, g),
    )
    .registerFunction(
      'kubernetes.authorization.Authorizer.path(string): kubernetes.authorization.PathCheck',
      (a: Authorizer, p: string) => new PathCheck(a.decider, p),
    )
    .registerFunction(
      'kubernetes.authorization.Authorizer.serviceAccount(string, string): kubernetes.authorization.Authorizer',
      (a: Authorizer, ns: string, name: string) => {
        const d = a.decider.serviceAccount(ns, name);
        return new Authorizer(d, new ResourceCheck(d, a.requestResource.group, a.requestResource.resource));
      },
    )
    .registerFunction(
      'kubernetes.authorization.GroupCheck.resource(string): kubernetes.authorization.ResourceCheck',
      (g: GroupCheck, r: string) => new ResourceCheck(g.decider, g.group, r),
    )
    .registerFunction(
      'kubernetes.authorization.ResourceCheck.subresource(string): kubernetes.authorization.ResourceCheck',
      (r: ResourceCheck, s: string) => r.with({ subresource: s }),
    )
    .registerFunction(
      'kubernetes.authorization.ResourceCheck.namespace(string): kubernetes.authorization.ResourceCheck',
      (r: ResourceCheck, s: string) => r.with({ namespace: s }),
    )
    .registerFunction(
      'kubernetes.authorization.ResourceCheck.name(string): kubernetes.authorization.ResourceCheck',
      (r: ResourceCheck, s: string) => r.with({ name: s }),
    )
    .registerFunction(
      'kubernetes.authorization.ResourceCheck.check(string): kubernetes.authorization.Decision',
      (r: ResourceCheck, verb: string) =>
        new Decision(
          r.decider.decide({
            verb,
            group: r.group,
            resource: r.resource,
            subresource: r.subresource,
            namespace: r.namespace,
            name: r.name,
          }),
        ),
    )
    .registerFunction(
      'kubernetes.authorization.PathCheck.check(string): kubernetes.authorization.Decision',
      (p: PathCheck, verb: string) => new Decision(p.decider.decide({ verb, path: p.path })),
    )
    .registerFunction('kubernetes.authorization.Decision.allowed(): bool', (d: Decision) => d.d.allowed)
    .registerFunction('kubernetes.authorization.Decision.reason(): string', (d: Decision) => d.d.reason)
    .registerFunction('kubernetes.authorization.Decision.errored(): bool', (d: Decision) => d.d.error !== undefined)
    .registerFunction('kubernetes.authorization.Decision.error(): string', (d: Decision) => d.d.error ?? '');
}
