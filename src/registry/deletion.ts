/**
 * The deletion lifecycle, as decisions over an object and the delete options: which options
 * conflict, which preconditions fail, which garbage collector finalizer a propagation policy
 * adds, whether an object is removed now or becomes Terminating (deletionTimestamp, grace
 * period), and when an update of a Terminating object removes it. The store reads and writes
 * are in deleting.ts (ResourceStore.delete).
 */

import { clone, now, type Obj } from '../api/meta';
import { conflict, invalid, type Target } from '../api/status';
import type { FieldError } from '../api/validation';
import type { Strategy } from './kind';
import type { DeleteOptions } from './options';

/** Finalizers of the garbage collector (propagationPolicy Orphan / Foreground). */
export const ORPHAN = 'orphan';
export const FOREGROUND = 'foregroundDeletion';

/** The DeleteOptions field of a forced deletion of an unreadable object. */
export const UNSAFE_DELETE_FIELD = 'ignoreStoreReadErrorWithClusterBreakingPotential';

/** orphanDependents and propagationPolicy together are 422 Invalid. */
export function checkDeleteOptions(o: DeleteOptions): void {
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    throw invalid('DeleteOptions', 'meta.svc.io', '', [
      {
        type: 'FieldValueInvalid',
        field: 'propagationPolicy',
        badValue: o.propagationPolicy,
        detail: 'orphanDependents and deletionPropagation cannot be both set',
      },
    ]);
  }
}

/** A forced deletion (UNSAFE_DELETE_FIELD) with any other delete option set is 422 Invalid. */
export function checkUnsafeDeleteOptions(o: DeleteOptions): void {
  const errs: FieldError[] = [];
  const field = UNSAFE_DELETE_FIELD;
  const set: [string, boolean][] = [
    ['dryRun', o.dryRun],
    ['gracePeriodSeconds', o.gracePeriodSeconds !== undefined],
    ['orphanDependents', o.orphanDependents !== undefined],
    ['preconditions', o.preconditions !== undefined],
    ['propagationPolicy', o.propagationPolicy !== undefined],
  ];
  for (const [f, on] of set)
    if (on) errs.push({ type: 'FieldValueInvalid', field, badValue: true, detail: `cannot be set together with .${f}` });
  if (errs.length > 0) throw invalid('DeleteOptions', 'meta.svc.io', '', errs);
}

/** Preconditions (uid, resourceVersion) that `cur` does not meet are 409 Conflict. */
export function checkPreconditions(target: Target, name: string, cur: Obj, pre: DeleteOptions['preconditions']): void {
  if (pre?.uid && pre.uid !== cur.metadata.uid) {
    throw conflict(target, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
    throw conflict(
      target,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`,
    );
  }
}

/**
 * What a delete does to `cur`: the propagation policy adds the `orphan` / `foregroundDeletion`
 * finalizer; a first delete lets the strategy begin a graceful deletion (Strategy.beginDelete),
 * a later one may shorten the grace period. `remove`: nothing holds the object (no finalizers,
 * no grace period, nothing pending), it is removed now. Otherwise `next` is the object
 * Terminating (deletionTimestamp set; equal to `cur` when a Terminating object is deleted again
 * with nothing new). `cur` is not modified.
 */
export function planDelete(strategy: Strategy, cur: Obj, o: DeleteOptions, clock: () => number): { next: Obj; remove: boolean } {
  const next = clone(cur);
  const finalizers = [...(cur.metadata.finalizers ?? [])];
  // orphanDependents (deprecated) is the older spelling of Orphan (true) / Background (false).
  const policy = o.propagationPolicy ?? (o.orphanDependents === undefined ? undefined : o.orphanDependents ? 'Orphan' : 'Background');
  const want = policy === 'Orphan' ? ORPHAN : policy === 'Foreground' ? FOREGROUND : undefined;
  if (want && !finalizers.includes(want)) {
    // A later delete may switch the policy: the other GC finalizer goes.
    const other = want === ORPHAN ? FOREGROUND : ORPHAN;
    const i = finalizers.indexOf(other);
    if (i >= 0) finalizers.splice(i, 1);
    finalizers.push(want);
  }
  let grace = 0;
  let pending = false;
  if (!cur.metadata.deletionTimestamp) {
    const g = strategy.beginDelete?.(next, o.gracePeriodSeconds);
    grace = g?.grace ?? 0;
    pending = g?.pending ?? false;
    // Finalizers the strategy adds (a CRD's cleanup) hold the object like any other.
    for (const f of next.metadata.finalizers ?? []) if (!finalizers.includes(f)) finalizers.push(f);
  } else {
    pending = strategy.deletePending?.(next) ?? false;
    const remaining = cur.metadata.deletionGracePeriodSeconds ?? 0;
    // A shorter grace period (e.g. 0 to force) replaces a longer one.
    if (o.gracePeriodSeconds !== undefined && o.gracePeriodSeconds < remaining) {
      grace = o.gracePeriodSeconds;
      pending = grace > 0 || pending;
      if (grace > 0) next.metadata.deletionTimestamp = now(() => clock() + grace * 1000);
      next.metadata.deletionGracePeriodSeconds = grace;
      if (grace === 0)
        pending = strategy.deletePending?.({ ...next, metadata: { ...next.metadata, deletionGracePeriodSeconds: 0 } }) ?? false;
    } else if (remaining > 0) {
      pending = true;
    }
  }
  if (finalizers.length === 0 && grace === 0 && !pending) return { next, remove: true };
  if (finalizers.length > 0) next.metadata.finalizers = finalizers;
  if (!cur.metadata.deletionTimestamp) {
    next.metadata.deletionTimestamp = now(() => clock() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    // As the reference's BeforeDelete: the first delete bumps the generation.
    if ((cur.metadata.generation ?? 0) > 0) next.metadata.generation = (cur.metadata.generation as number) + 1;
  }
  return { next, remove: false };
}

/** Whether an update leaves a Terminating object with nothing holding it (its last finalizer gone): it is removed. */
export function deletionComplete(next: Obj, strategy: Strategy): boolean {
  return !!next.metadata.deletionTimestamp && !next.metadata.finalizers?.length && !strategy.deletePending?.(next);
}
