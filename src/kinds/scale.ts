/**
 * The Scale (autoscaling/v1) of an object with spec.replicas (Deployment, ReplicaSet, StatefulSet,
 * ReplicationController; a custom kind through its CRD's paths): built from the object by the
 * scale subresource (src/http/scale.ts) and read and written in-process by the HPA controller
 * (`readScale`, `writeScale`: through the registry's normal update path).
 */
import { isObject, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from '../registry/generic';
import type { KindDef } from '../registry/kind';
import type { WriteOptions } from '../registry/options';
import { labelSelectorString } from './columns';

/** The value at a `.a.b` path (the paths of a CRD's subresources.scale). */
function at(o: unknown, path: string): unknown {
  let cur = o;
  for (const k of path.split('.').filter(Boolean)) cur = isObject(cur) ? cur[k] : undefined;
  return cur;
}

/** A copy of `o` with the value at a `.a.b` path set. */
export function withValue(o: Obj, path: string, v: unknown): Obj {
  const keys = path.split('.').filter(Boolean);
  const root: Record<string, unknown> = { ...o };
  let cur = root;
  for (const k of keys.slice(0, -1)) {
    const next = isObject(cur[k]) ? { ...(cur[k] as Record<string, unknown>) } : {};
    cur[k] = next;
    cur = next;
  }
  cur[keys[keys.length - 1] as string] = v;
  return root as Obj;
}

/** labels.SelectorFromSet(m).String(): sorted `k=v` pairs joined by commas. */
function selectorFromSet(m: unknown): string {
  if (!isObject(m)) return '';
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${String(m[k])}`)
    .join(',');
}

/** The autoscaling/v1 Scale of an object (of a custom kind: through its CRD's paths). */
export function scaleOf(o: Obj, paths?: KindDef['scalePaths'], selectorMap = false): Obj {
  const spec = paths
    ? { replicas: at(o, paths.specReplicas) as number | undefined, selector: undefined }
    : ((o.spec ?? {}) as { replicas?: number; selector?: unknown });
  const status = paths ? { replicas: at(o, paths.statusReplicas) as number | undefined } : ((o.status ?? {}) as { replicas?: number });
  const selector = paths
    ? paths.labelSelector
      ? at(o, paths.labelSelector)
      : undefined
    : selectorMap
      ? selectorFromSet(spec.selector)
      : labelSelectorString(spec.selector);
  const meta = o.metadata;
  const s: Obj = {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, selector: typeof selector === 'string' ? selector : '' },
  };
  return s;
}

/** The Scale of `<store>/<namespace>/<name>`. */
export async function readScale(store: ResourceStore, namespace: string, name: string): Promise<Obj> {
  const d = store.def;
  return scaleOf(decodeStored(await store.get(namespace, name)), d.scalePaths, d.scaleSelectorMap === true);
}

/** Set the object's replicas as a write of its scale subresource would; answers the new Scale. */
export async function writeScale(store: ResourceStore, namespace: string, name: string, replicas: number, w: WriteOptions): Promise<Obj> {
  const d = store.def;
  const paths = d.scalePaths;
  for (let attempt = 0; ; attempt++) {
    const cur = decodeStored(await store.get(namespace, name));
    const next: Obj = paths
      ? withValue(cur, paths.specReplicas, replicas)
      : { ...cur, spec: { ...((cur.spec as object) ?? {}), replicas } };
    try {
      return scaleOf(await store.update(namespace, name, next, w, ''), paths, d.scaleSelectorMap === true);
    } catch (e) {
      if (e instanceof StatusError && e.code === 409 && attempt < 5) continue;
      throw e;
    }
  }
}
