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
  /** The writer's field manager (the server's own writers, which have no user, are known by it). */
  fieldManager?: string;
  /** The request's options as their kind (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
  options?: JsonObject;
  /** Warnings for the response (`Warning: 299` headers). */
  warnings?: string[];
  /** Audit annotations of the request (written with its audit event). */
  annotations?: Record<string, string>;
  /**
   * Decodes an object a plugin rewrote whole (a webhook's patch) as a request body of the kind is
   * decoded, in place: pruned and defaulted; throws a StatusError when it is not of the kind.
   */
  decode?: (o: Obj) => void;
}

export interface Plugin {
  readonly name: string;
  /** Whether the plugin looks at this operation on this resource at all. */
  handles(group: string, resource: string, subresource: string, op: Operation): boolean;
  /** Mutating phase: may change `a.object`; throws a StatusError to refuse. */
  admit?(a: Attributes): void | Promise<void>;
  /** Validating phase: throws a StatusError to refuse. */
  validate?(a: Attributes): void | Promise<void>;
  /**
   * Reinvocation (the reference's reinvocationPolicy IfNeeded across plugins): whether this
   * request's admit ran something that wants to run again if a later plugin changes the object,
   * and that second run.
   */
  reinvocable?(a: Attributes): boolean;
  reinvoke?(a: Attributes): Promise<void>;
}

export class AdmissionChain {
  constructor(readonly plugins: readonly Plugin[]) {}

  /** Whether any plugin takes part (else the registry skips the chain, and its awaits). */
  wants(group: string, resource: string, subresource: string, op: Operation): boolean {
    for (const p of this.plugins) if (p.handles(group, resource, subresource, op)) return true;
    return false;
  }

  /** Whether a mutating plugin takes part (the update and delete paths await admission only then). */
  wantsAdmit(group: string, resource: string, subresource: string, op: Operation): boolean {
    for (const p of this.plugins) if (p.admit && p.handles(group, resource, subresource, op)) return true;
    return false;
  }

  async admit(a: Attributes): Promise<void> {
    // The object as each reinvocable plugin left it (only when one asks: a copy per such plugin).
    const ran: { p: Plugin; after: string }[] = [];
    for (const p of this.plugins) {
      if (!p.admit || !p.handles(a.group, a.resource, a.subresource, a.operation)) continue;
      await p.admit(a);
      if (p.reinvocable?.(a)) ran.push({ p, after: JSON.stringify(a.object) });
    }
    if (ran.length === 0) return;
    // A plugin whose output a later plugin changed runs its IfNeeded parts once more.
    const now = JSON.stringify(a.object);
    for (const { p, after } of ran) if (after !== now) await p.reinvoke?.(a);
  }

  async validate(a: Attributes): Promise<void> {
    for (const p of this.plugins) if (p.validate && p.handles(a.group, a.resource, a.subresource, a.operation)) await p.validate(a);
  }
}
