/**
 * Pod eviction (`POST pods/{name}/eviction`, a policy/v1 Eviction), as the reference's eviction
 * subresource: a pod selected by a PodDisruptionBudget is deleted only when the budget allows a
 * disruption, and the budget records it in one conditional status write before the delete:
 *
 *   disruptionsAllowed - 1, disruptedPods[pod] = now      (a conflict re-reads and retries)
 *
 * Refusals: 429 TooManyRequests "Cannot evict pod as it would violate the pod's disruption
 * budget." with a DisruptionBudget cause; 500 for a pod under several budgets. Pods that are
 * Pending, Succeeded or Failed, or already being deleted, skip the budget; an unready pod may go
 * without using the allowance under unhealthyPodEvictionPolicy AlwaysAllow, or IfHealthyBudget when
 * the budget is met.
 */
import { isObject, type Obj } from '../api/meta';
import { selectorMatcher } from '../api/selectors';
import { badRequest, internal, StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from './generic';
import { ALL_OBJECTS } from './list';
import type { DeleteOptions } from './options';

const ALL = ALL_OBJECTS;

const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";
/** The reference's limit on unconfirmed evictions in one budget. */
const MAX_DISRUPTED_PODS = 2000;
const RETRIES = 10;

function tooMany(cause: string): StatusError {
  return new StatusError(429, 'TooManyRequests', VIOLATION, { causes: [{ reason: 'DisruptionBudget', message: cause }] });
}

const isReady = (p: Obj): boolean => {
  const conds = (p.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return Array.isArray(conds) && conds.some((c) => c.type === 'Ready' && c.status === 'True');
};

/** DeleteOptions of an Eviction body (`deleteOptions`), with the request's dry run. */
export function evictionDeleteOptions(body: Record<string, unknown>, dryRun: boolean): DeleteOptions {
  const d = isObject(body.deleteOptions) ? body.deleteOptions : {};
  return {
    dryRun: dryRun || (Array.isArray(d.dryRun) && d.dryRun.includes('All')),
    gracePeriodSeconds: typeof d.gracePeriodSeconds === 'number' ? d.gracePeriodSeconds : undefined,
    propagationPolicy: d.propagationPolicy as DeleteOptions['propagationPolicy'],
    preconditions: isObject(d.preconditions) ? (d.preconditions as DeleteOptions['preconditions']) : undefined,
  };
}

export async function evict(
  pods: ResourceStore,
  budgets: ResourceStore | undefined,
  namespace: string,
  name: string,
  body: unknown,
  dryRun: boolean,
  now: () => number,
): Promise<void> {
  if (!isObject(body)) throw badRequest('Eviction must be an object');
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  const del = evictionDeleteOptions(body, dryRun);
  const pod = decodeStored(await pods.get(namespace, name));
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !budgets) {
    await pods.delete(namespace, name, del);
    return;
  }
  const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
  const listed = await budgets.list(namespace, ALL);
  const matching = listed.items
    .map((i) => i.obj)
    .filter((b) => selectorMatcher((b.spec as { selector?: unknown } | undefined)?.selector)?.matches(labels) === true);
  if (matching.length > 1)
    throw internal('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  if (matching.length === 0) {
    await pods.delete(namespace, name, del);
    return;
  }
  const pdbName = (matching[0] as Obj).metadata.name as string;
  for (let attempt = 0; ; attempt++) {
    const pdb = decodeStored(await budgets.get(namespace, pdbName));
    const spec = (pdb.spec ?? {}) as { unhealthyPodEvictionPolicy?: string };
    const status = (isObject(pdb.status) ? pdb.status : {}) as {
      observedGeneration?: number;
      disruptionsAllowed?: number;
      currentHealthy?: number;
      desiredHealthy?: number;
      disruptedPods?: Record<string, string>;
      conditions?: Record<string, unknown>[];
    };
    if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) {
      throw tooMany(`The disruption budget ${pdbName} is still being processed by the server.`);
    }
    // An unready pod does not count as healthy: it may go without using the allowance.
    if (!isReady(pod)) {
      const desired = status.desiredHealthy ?? 0;
      if (spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((status.currentHealthy ?? 0) >= desired && desired > 0)) {
        await pods.delete(namespace, name, del);
        return;
      }
    }
    const allowed = status.disruptionsAllowed ?? 0;
    if (allowed < 0) throw new StatusError(403, 'Forbidden', 'pdb disruptions allowed is negative');
    if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
      throw new StatusError(403, 'Forbidden', 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    }
    if (allowed === 0) {
      throw tooMany(
        `The disruption budget ${pdbName} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`,
      );
    }
    const next = {
      ...status,
      disruptionsAllowed: allowed - 1,
      disruptedPods: { ...(status.disruptedPods ?? {}), [name]: new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    };
    if (next.disruptionsAllowed === 0 && Array.isArray(status.conditions)) {
      next.conditions = status.conditions.map((c) =>
        c.type === 'DisruptionAllowed' && c.status !== 'False'
          ? { ...c, status: 'False', reason: 'InsufficientPods', lastTransitionTime: next.disruptedPods[name] }
          : c,
      );
    }
    try {
      // Conditional on the version read: a concurrent eviction makes this conflict, then re-read.
      await budgets.update(
        namespace,
        pdbName,
        { ...pdb, status: next },
        { dryRun, fieldValidation: 'Ignore', warnings: [], fieldManager: 'eviction' },
        'status',
      );
      break;
    } catch (e) {
      if (e instanceof StatusError && e.code === 409 && attempt < RETRIES) continue;
      throw e;
    }
  }
  await pods.delete(namespace, name, del);
}
