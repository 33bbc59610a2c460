/**
 * Writing a slice plan (src/controllers/endpointslice/reconciler.ts) through the registry, for
 * both slice controllers: creates with generateName `<service>-` (the service name cut to 58
 * characters, as getEndpointSlicePrefix), updates keep the slice's name and uid, deletes by uid.
 */
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import type { ResourceStore } from '../../registry/generic';
import { writeOptions } from '../controller-utils';
import { LAST_CHANGE_TRIGGER_TIME, rfc3339Nano } from '../service-endpoints';
import type { SlicePlan } from './reconciler';

export interface SliceMeta {
  namespace: string;
  /** The generated names' base: the service's name. */
  serviceName: string;
  labels: Record<string, string>;
  /** Annotations besides the trigger time (the mirroring controller copies the Endpoints'). */
  annotations?: Record<string, string>;
  ownerReferences: NonNullable<Obj['metadata']['ownerReferences']>;
  addressType: string;
  /** The last-change-trigger-time (ms; 0: none). */
  trigger: number;
  fieldManager: string;
}

const gone = (e: unknown): boolean => e instanceof StatusError && e.code === 404;

function annotationsOf(m: SliceMeta, cur: Record<string, string> | undefined): Record<string, string> | undefined {
  const a: Record<string, string> = { ...(m.annotations ?? cur ?? {}) };
  if (m.trigger > 0) a[LAST_CHANGE_TRIGGER_TIME] = rfc3339Nano(m.trigger);
  else if (m.annotations) delete a[LAST_CHANGE_TRIGGER_TIME];
  return Object.keys(a).length > 0 ? a : undefined;
}

/** What a plan wrote: slice name → its resourceVersion, or null once deleted. */
export type Written = Map<string, string | null>;

/**
 * The endpointSliceTracker's staleness check: whether `cache` shows every slice as written
 * (created and updated ones at their resourceVersion or later, deleted ones gone). A sync on a
 * stale cache would write again what it wrote already (duplicate endpoints in two slices).
 */
export function cacheCaughtUp(written: Written | undefined, get: (name: string) => Obj | undefined): boolean {
  for (const [name, rv] of written ?? []) {
    const cur = get(name);
    if (rv === null) {
      if (cur) return false;
    } else if (!cur || Number(cur.metadata.resourceVersion ?? 0) < Number(rv)) return false;
  }
  return true;
}

/** Write the plan: creates, updates and deletes (deletes last, so that no endpoint is ever missing). */
export async function writePlan(slices: ResourceStore, plan: SlicePlan, m: SliceMeta, written: Written = new Map()): Promise<Written> {
  const w = writeOptions(m.fieldManager);
  const prefix = `${m.serviceName.length > 58 ? m.serviceName.slice(0, 58) : m.serviceName}-`;
  for (const c of plan.create) {
    const metadata: Obj['metadata'] = {
      generateName: prefix,
      namespace: m.namespace,
      labels: m.labels,
      ownerReferences: m.ownerReferences,
    };
    const annotations = annotationsOf(m, undefined);
    if (annotations) metadata.annotations = annotations;
    const o = await slices.create(m.namespace, { metadata, addressType: m.addressType, endpoints: c.endpoints, ports: c.ports }, w);
    written.set(o.metadata.name as string, o.metadata.resourceVersion as string);
  }
  for (const u of plan.update) {
    const uid = u.slice.metadata.uid;
    try {
      const o = await slices.updateFrom(m.namespace, u.slice.metadata.name as string, '', w, (cur) => {
        if (cur.metadata.uid !== uid) throw new StatusError(409, 'Conflict', 'replaced');
        const metadata: Obj['metadata'] = { ...cur.metadata, labels: m.labels, ownerReferences: m.ownerReferences };
        const annotations = annotationsOf(m, cur.metadata.annotations as Record<string, string> | undefined);
        if (annotations) metadata.annotations = annotations;
        else delete metadata.annotations;
        return { ...cur, metadata, addressType: m.addressType, endpoints: u.endpoints, ports: u.ports } as Obj;
      });
      written.set(o.metadata.name as string, o.metadata.resourceVersion as string);
    } catch (e) {
      // Gone meanwhile: the next sync (its delete event) creates what is missing.
      if (!gone(e)) throw e;
      throw new StatusError(409, 'Conflict', 'a slice went away');
    }
  }
  for (const d of plan.delete) {
    try {
      await slices.delete(m.namespace, d.metadata.name as string, { dryRun: false, preconditions: { uid: d.metadata.uid as string } });
      written.set(d.metadata.name as string, null);
    } catch (e) {
      if (!gone(e) && !(e instanceof StatusError && e.code === 409)) throw e;
    }
  }
  return written;
}
