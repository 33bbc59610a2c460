/**
 * Server-side apply after client-side apply, as the reference's lastAppliedManager and
 * lastAppliedUpdater (k8s.io/apimachinery/pkg/util/managedfields/internal), for the field
 * manager `kubectl` only (`kubectl apply --server-side`; another manager opts out):
 *
 *  - an apply whose conflicts are all with fields the `kubectl.kubernetes.io/last-applied-
 *    configuration` annotation records (and the live object still has as recorded) takes them
 *    over, as a forced apply: the user applied them before, client-side;
 *  - after an apply, an object that carries the annotation gets it rewritten to the applied
 *    configuration, so `kubectl apply` (client-side) and `apply view-last-applied` stay in step.
 */

import { svcApiVersion } from '../../api/brand';
import { isObject, type Obj } from '../../api/meta';
import { ApplyConflictError, type ApplyOptions, type ApplyResult, apply, typerFor, withoutManagedFields } from './apply';
import { compare, toFieldSet } from './typed';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const KUBECTL = 'kubectl';

/** JSON as Go writes a map: keys sorted at every level, a newline at the end. */
function goJson(v: unknown): string {
  const sorted = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sorted)
      : isObject(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted(x[k])]),
          )
        : x;
  return `${JSON.stringify(sorted(v))}\n`;
}

/** The paths (rendered) the annotation records as applied that the live object still has so. */
function allowedConflicts(live: Obj, opts: ApplyOptions): Set<string> | undefined {
  const text = live.metadata.annotations?.[LAST_APPLIED];
  if (!text) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(last) || typeof last.apiVersion !== 'string' || svcApiVersion(last.apiVersion) !== svcApiVersion(opts.apiVersion)) {
    return undefined;
  }
  try {
    const t = typerFor(opts.schemas);
    const root = t.root(opts.defName);
    const lastV = withoutManagedFields(last as Obj);
    const cmp = compare(t, root, lastV, withoutManagedFields(live));
    const set = toFieldSet(t, root, lastV, false).difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
    return new Set(set.toStrings());
  } catch {
    return undefined;
  }
}

export function applyAfterClientSideApply(live: Obj | undefined, applied: Obj, opts: ApplyOptions): ApplyResult {
  let result: ApplyResult;
  try {
    result = apply(live, applied, opts);
  } catch (e) {
    if (!(e instanceof ApplyConflictError) || opts.manager !== KUBECTL || !live) throw e;
    const allowed = allowedConflicts(live, opts);
    if (!allowed) throw e;
    const left = e.conflicts.filter((c) => !allowed.has(c.field));
    if (left.length > 0) throw new ApplyConflictError(left);
    result = apply(live, applied, { ...opts, force: true });
  }
  const annotations = result.obj.metadata.annotations;
  if (opts.manager === KUBECTL && annotations?.[LAST_APPLIED]) {
    const config = structuredClone(applied);
    const a = config.metadata?.annotations;
    if (a) delete a[LAST_APPLIED];
    const value = goJson(config);
    if (annotations[LAST_APPLIED] !== value) {
      result.obj.metadata.annotations = { ...annotations, [LAST_APPLIED]: value };
      result = { obj: result.obj, changed: true };
    }
  }
  return result;
}
