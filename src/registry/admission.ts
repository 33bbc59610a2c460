/**
 * Admission: what happens to a write between decoding and storage, as the reference's admission
 * chain. Mutating plugins run first and may change the object; validating plugins run after the
 * kind's own validation and may only refuse. Plugins are ordinary code given the request's
 * attributes; the registry runs the chain on every write path (HTTP requests and controllers
 * alike), so nothing reaches storage around it. The chain and its contract live here, with the
 * registry that runs it; the plugins (quota, limits, policies, RBAC escalation) in src/admission.
 *
 *   create:  decode → defaults → mutating admission → kind validation → validating admission → store
 */
import type { JsonObject, Obj } from '../api/meta';
import type { UserInfo } from '../api/user';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface Attributes {
  operation: Operation;
  group: string;
  version: string;
  /** The kind of the resource, e.g. `Pod`. */
  kind: string;
  /** The resource (plural), e.g. `pods`. */
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The object to be written (mutating plugins may change it); the stored one on DELETE. */
  object: Obj;
  /** The stored object on UPDATE and DELETE. */
  oldObject?: Obj;
  dryRun: boolean;
  /** Who asks (absent for the server's own writes). */
  user?: UserInfo;
  /** The request's options as their kind (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
  options?: JsonObject;
  /** Warnings for the response (`Warning: 299` headers). */
  warnings?: string[];
  /** Audit annotations of the request (written with its audit event). */
  annotations?: Record<string, string>;
}

export interface Plugin {
  readonly name: string;
  /** Whether the plugin looks at this operation on this resource at all. */
  handles(group: string, resource: string, subresource: string, op: Operation): boolean;
  /** Mutating phase: may change `a.object`; throws a StatusError to refuse. */
  admit?(a: Attributes): void | Promise<void>;
  /** Validating phase: throws a StatusError to refuse. */
  validate?(a: Attributes): void | Promise<void>;
}

export class AdmissionChain {
  constructor(readonly plugins: readonly Plugin[]) {}

  /** Whether any plugin takes part (else the registry skips the chain, and its awaits). */
  wants(group: string, resource: string, subresource: string, op: Operation): boolean {
    for (const p of this.plugins) if (p.handles(group, resource, subresource, op)) return true;
    return false;
  }

  /** Whether a mutating plugin takes part (updates skip the mutating phase, and its await, otherwise). */
  wantsAdmit(group: string, resource: string, subresource: string, op: Operation): boolean {
    for (const p of this.plugins) if (p.admit && p.handles(group, resource, subresource, op)) return true;
    return false;
  }

  async admit(a: Attributes): Promise<void> {
    for (const p of this.plugins) if (p.admit && p.handles(a.group, a.resource, a.subresource, a.operation)) await p.admit(a);
  }

  async validate(a: Attributes): Promise<void> {
    for (const p of this.plugins) if (p.validate && p.handles(a.group, a.resource, a.subresource, a.operation)) await p.validate(a);
  }
}
