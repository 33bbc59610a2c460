/**
 * The scale subresource (`<resource>/{name}/scale`, autoscaling/v1 Scale) of kinds with
 * spec.replicas (Deployment, ReplicaSet, ReplicationController): what `kubectl scale` and autoscalers use. The Scale is
 * a view: reads build it from the object; writes change only spec.replicas of the object, through
 * the normal update path (validation, managedFields, watch events).
 */
import { isObject, type Obj } from '../api/meta';
import type { ResourceRequest } from '../api/request-info';
import { badRequest, conflict, invalid, methodNotAllowed, STALE_OBJECT } from '../api/status';
import { decodeStored } from '../codec/stored';
import { scaleOf, withValue } from '../kinds/scale';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import { applyPatch, JSON_PATCH, MERGE_PATCH, PatchError } from '../registry/patch';
import { decodeBody } from './body';
import { type BodyType, negotiateBody } from './negotiate';

function replicasOf(scale: unknown, name: string): { replicas: number; resourceVersion?: string } {
  if (!isObject(scale)) throw badRequest('Scale in version "v1" cannot be handled as a Scale: the body must be an object');
  const r = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  if (typeof r !== 'number' || !Number.isInteger(r)) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof r} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  if (r < 0) {
    throw invalid('Scale', 'autoscaling', name, [
      { type: 'FieldValueInvalid', field: 'spec.replicas', badValue: r, detail: 'must be greater than or equal to 0' },
    ]);
  }
  const rv = (scale.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return { replicas: r, resourceVersion: typeof rv === 'string' && rv !== '' ? rv : undefined };
}

/** GET/PUT/PATCH of `<name>/scale`; answers the Scale. */
export async function handleScale(store: ResourceStore, info: ResourceRequest, req: Request, w: WriteOptions): Promise<Obj> {
  const { namespace, name } = info;
  const paths = store.def.scalePaths;
  const map = store.def.scaleSelectorMap === true;
  if (info.verb === 'get') return scaleOf(decodeStored(await store.get(namespace, name)), paths, map);
  if (info.verb !== 'update' && info.verb !== 'patch') throw methodNotAllowed();
  const allowed: BodyType[] = info.verb === 'update' ? ['json', 'yaml'] : ['json-patch', 'merge-patch', 'strategic-merge-patch'];
  const body = await decodeBody(req, negotiateBody(req.headers.get('content-type'), allowed));
  for (;;) {
    const cur = decodeStored(await store.get(namespace, name));
    let wanted: unknown = body.value;
    if (info.verb === 'patch') {
      // A Scale has no lists, so a strategic merge patch of it is a merge patch.
      try {
        wanted = applyPatch(body.type === 'json-patch' ? JSON_PATCH : MERGE_PATCH, scaleOf(cur, paths, map), body.value, {
          fieldValidation: w.fieldValidation,
        });
      } catch (e) {
        if (e instanceof PatchError) throw e.toStatusError();
        throw e;
      }
    }
    const want = replicasOf(wanted, name);
    if (want.resourceVersion !== undefined && want.resourceVersion !== cur.metadata.resourceVersion) {
      if (info.verb === 'update') throw conflict(store.target, name, STALE_OBJECT);
      // A patch keeps the current resourceVersion unless it changed it.
      if (want.resourceVersion !== scaleOf(cur, paths, map).metadata.resourceVersion) throw conflict(store.target, name, STALE_OBJECT);
    }
    const next: Obj = paths
      ? withValue(cur, paths.specReplicas, want.replicas)
      : { ...cur, spec: { ...((cur.spec as object) ?? {}), replicas: want.replicas } };
    try {
      return scaleOf(await store.update(namespace, name, next, w, ''), paths, map);
    } catch (e) {
      // Raced with another writer between the read and the write: read again (the update pins
      // the version it read through metadata.resourceVersion). A patch is applied again to the
      // newer object, as the reference's patcher does: the resourceVersion it carries came from
      // the Scale it patched, unless the patch set one, which the check above then refuses.
      if (
        e instanceof Error &&
        'code' in e &&
        (e as { code: number }).code === 409 &&
        (want.resourceVersion === undefined || info.verb === 'patch')
      )
        continue;
      throw e;
    }
  }
}
