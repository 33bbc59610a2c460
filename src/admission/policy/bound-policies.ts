/**
 * The policies and bindings of an admission policy plugin (validating or mutating), compiled as
 * their watch caches change: the policies that have at least one binding, each with its bindings,
 * in name order, and which requests any of them could match (cached per group, resource,
 * subresource and operation until the next change).
 */
import type { Obj } from '../../api/meta';
import type { Operation } from '../../registry/admission';
import type { WatchCache } from '../../watch/cache';
import { type CompiledBinding, compileBinding } from './compile';
import { followCache } from './invocation';
import { type CompiledMatch, mayMatch } from './matching';

/** The admission configuration kinds no policy looks at. */
const EXEMPT = new Set([
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export class BoundPolicies<P extends { readonly name: string; readonly match: CompiledMatch }> {
  private readonly policies = new Map<string, P>();
  private readonly bindings = new Map<string, CompiledBinding>();
  /** Policies with at least one binding, each with its bindings (rebuilt on every change). */
  active: { policy: P; bindings: CompiledBinding[] }[] = [];
  private readonly wanted = new Map<string, boolean>();
  private stopped = false;

  constructor(
    private readonly compile: (o: Obj) => P,
    /** The group of the admission configuration kinds (exempt). */
    private readonly admissionGroup: string,
    /** The operations the plugin looks at. */
    private readonly operations: (op: Operation) => boolean = () => true,
  ) {}

  async start(policies: WatchCache, bindings: WatchCache, log?: (msg: string) => void): Promise<void> {
    await Promise.all([policies.start(), bindings.start()]);
    const stopped = () => this.stopped;
    followCache(
      policies,
      (o, deleted) => this.setPolicy(o, deleted),
      () => this.rebuild(),
      stopped,
      log,
    );
    followCache(
      bindings,
      (o, deleted) => this.setBinding(o, deleted),
      () => this.rebuild(),
      stopped,
      log,
    );
  }

  stop(): void {
    this.stopped = true;
  }

  /** A policy written (compiled now) or deleted; `rebuild()` makes the change take effect. */
  setPolicy(o: Obj, deleted = false): void {
    if (deleted) this.policies.delete(o.metadata.name as string);
    else this.policies.set(o.metadata.name as string, this.compile(o));
  }

  setBinding(o: Obj, deleted = false): void {
    if (deleted) this.bindings.delete(o.metadata.name as string);
    else this.bindings.set(o.metadata.name as string, compileBinding(o));
  }

  rebuild(): void {
    const byPolicy = new Map<string, CompiledBinding[]>();
    for (const b of this.bindings.values()) {
      if (!b.policyName) continue;
      const list = byPolicy.get(b.policyName);
      if (list) list.push(b);
      else byPolicy.set(b.policyName, [b]);
    }
    const active: typeof this.active = [];
    for (const [name, bindings] of byPolicy) {
      const policy = this.policies.get(name);
      if (policy) active.push({ policy, bindings: bindings.sort(byName) });
    }
    this.active = active.sort((a, b) => byName(a.policy, b.policy));
    this.wanted.clear();
  }

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    if (this.active.length === 0 || !this.operations(op)) return false;
    if (group === this.admissionGroup && EXEMPT.has(resource)) return false;
    const key = `${group}/${resource}/${subresource}/${op}`;
    let w = this.wanted.get(key);
    if (w === undefined) {
      w = this.active.some((a) => mayMatch(a.policy.match, group, resource, subresource, op));
      this.wanted.set(key, w);
    }
    return w;
  }
}
