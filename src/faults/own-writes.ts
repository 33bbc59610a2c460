/**
 * Faults in the server's own writes: the controllers, the scheduler and the simulated kubelets
 * write in-process through the registry, so the front end's filter never sees them. Their writes
 * pass the admission chain, where this plugin decides on them as the filter does for requests,
 * with two differences (issue 40: "the server's own controllers are matched only when a rule
 * names them"):
 *
 * - a fault matches only through a rule whose subjects name the writer's identity itself (a
 *   User or a ServiceAccount subject); groups and '*' never reach the server's own writes;
 * - only `error` and `delay` act (and `store.failWrites`, as the write error the registry gives);
 *   a write has no watch, no read to make stale, and no answer to hold.
 *
 * The identity is the reference's for each writer, by its field manager: `default-scheduler` is
 * `system:kube-scheduler`; any other (the simulated kubelets' `kubelet` too) is the service
 * account `system:serviceaccount:kube-system:<manager>`, as kube-controller-manager's controllers
 * are with
 * --use-service-account-credentials). Each injection is logged with the writer and the fault.
 */
import type { RequestInfo, RequestUrl } from '../api/request-info';
import type { UserInfo } from '../api/user';
import type { Attributes, Operation, Plugin } from '../registry/admission';
import { describe, type FaultSet } from './engine';

const VERBS: Record<Operation, 'create' | 'update' | 'delete' | undefined> = {
  CREATE: 'create',
  UPDATE: 'update',
  DELETE: 'delete',
};

const NO_QUERY: RequestUrl = { pathname: '', searchParams: new URLSearchParams() };

/** The identity a write of the server's own is matched as, by its field manager. */
export function ownIdentity(manager: string | undefined): UserInfo | undefined {
  if (!manager) return undefined;
  if (manager === 'default-scheduler') return { name: 'system:kube-scheduler', uid: '', groups: ['system:authenticated'] };
  return {
    name: `system:serviceaccount:kube-system:${manager}`,
    uid: '',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  };
}

export interface OwnWriteDeps {
  set: FaultSet;
  /** The error of a write the store could not persist (store.failWrites). */
  writeFailure: (info: RequestInfo) => Error;
  log: (msg: string) => void;
  /** Faults are never injected into writes of the faults themselves. */
  exempt: (group: string, resource: string) => boolean;
}

export function ownWritesPlugin(d: OwnWriteDeps): Plugin {
  return {
    name: 'OwnWriteFaults',
    handles: (group, resource) => d.set.active && !d.exempt(group, resource),
    validate: async (a: Attributes) => {
      if (a.user || a.dryRun) return;
      const verb = VERBS[a.operation];
      const user = ownIdentity(a.fieldManager);
      if (!verb || !user) return;
      const info: RequestInfo = {
        isResourceRequest: true,
        verb,
        group: a.group,
        brand: 'svc',
        version: a.version,
        resource: a.resource,
        subresource: a.subresource,
        namespace: a.namespace,
        name: a.name,
        parts: [],
      };
      const inj = d.set.decide(user, info, NO_QUERY, Date.now, true);
      if (!inj) return;
      d.log(
        `fault injected into ${user.name}'s ${verb} of ${a.resource} ${a.namespace ? `${a.namespace}/` : ''}${a.name}: ${describe(inj)}`,
      );
      const delay = inj.delayBeforeMs + inj.delayAfterMs;
      if (delay > 0) await Bun.sleep(delay);
      const err = inj.error ?? (inj.failWrite ? d.writeFailure(info) : undefined);
      if (err) throw err;
    },
  };
}
