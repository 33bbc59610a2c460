/**
 * The EndpointSlice reconciler both slice controllers share, as the reference's staging
 * endpointslice reconciler (reconcileByPortMapping) with its churn-avoiding rules:
 *
 *   desired endpoints are grouped by their ports (one group per port set);
 *   an existing slice of a group keeps the endpoints still desired (replaced by their desired
 *   version) and is updated only when something changed; one left empty is deleted;
 *   endpoints not in any slice fill first the slices being updated anyway (fullest first), then
 *   one unchanged slice they fit in, then new slices of at most `maxPerSlice`;
 *   a slice to create takes the place of one to delete (an update instead of a create and a
 *   delete); slices of port sets no longer desired are deleted.
 *
 * It computes the plan; the controllers write it.
 */
import { deepEqual, type Obj } from '../../api/meta';

export const MAX_ENDPOINTS_PER_SLICE = 100;

export interface SlicePort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
}

/** The endpoints of one port set. */
export interface DesiredGroup {
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

export interface SlicePlan {
  /** New slices: ports and endpoints (the controller adds metadata). */
  create: { ports: SlicePort[]; endpoints: SliceEndpoint[] }[];
  /** Existing slices with new ports or endpoints. */
  update: { slice: Obj; ports: SlicePort[]; endpoints: SliceEndpoint[] }[];
  delete: Obj[];
  /** Slices left as they are. */
  unchanged: Obj[];
}

export const portsKey = (ports: SlicePort[]): string =>
  ports
    .map((p) => `${p.name}/${p.port}/${p.protocol}/${p.appProtocol ?? ''}`)
    .sort()
    .join(',');

/** An endpoint's identity in a slice: its pod, else its first address. */
export const endpointKey = (e: SliceEndpoint): string => (e.targetRef?.uid ? `uid/${e.targetRef.uid}` : `ip/${e.addresses[0] ?? ''}`);

const slicePorts = (s: Obj): SlicePort[] => ((s as { ports?: SlicePort[] }).ports ?? []) as SlicePort[];
const sliceEndpoints = (s: Obj): SliceEndpoint[] => ((s as { endpoints?: SliceEndpoint[] }).endpoints ?? []) as SliceEndpoint[];

/** Plan the slices of one address type from the desired groups and the existing slices. */
export function planSlices(desired: DesiredGroup[], existing: Obj[], maxPerSlice = MAX_ENDPOINTS_PER_SLICE): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [], unchanged: [] };
  const groups = new Map<string, DesiredGroup>();
  for (const g of desired) {
    const k = portsKey(g.ports);
    const cur = groups.get(k);
    if (cur) cur.endpoints.push(...g.endpoints);
    else groups.set(k, { ports: g.ports, endpoints: [...g.endpoints] });
  }
  const byGroup = new Map<string, Obj[]>();
  for (const s of existing) {
    const k = portsKey(slicePorts(s));
    if (!groups.has(k)) plan.delete.push(s);
    else byGroup.set(k, [...(byGroup.get(k) ?? []), s]);
  }
  for (const [k, g] of groups) {
    const want = new Map<string, SliceEndpoint>();
    for (const e of g.endpoints) want.set(endpointKey(e), e);
    const toUpdate: { slice: Obj; ports: SlicePort[]; endpoints: SliceEndpoint[] }[] = [];
    const unchanged: Obj[] = [];
    const placed = new Set<string>();
    for (const s of byGroup.get(k) ?? []) {
      const kept: SliceEndpoint[] = [];
      let changed = false;
      for (const e of sliceEndpoints(s)) {
        const ek = endpointKey(e);
        const d = want.get(ek);
        if (!d || placed.has(ek)) {
          changed = true;
          continue;
        }
        placed.add(ek);
        if (!deepEqual(d, e)) changed = true;
        kept.push(d);
      }
      if (kept.length === 0) plan.delete.push(s);
      else if (changed || kept.length > maxPerSlice) toUpdate.push({ slice: s, ports: g.ports, endpoints: kept });
      else unchanged.push(s);
    }
    let remaining = [...want.entries()].filter(([ek]) => !placed.has(ek)).map(([, e]) => e);
    // Fill the slices being written anyway, fullest first.
    toUpdate.sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const u of toUpdate) {
      const room = maxPerSlice - u.endpoints.length;
      if (room <= 0 || remaining.length === 0) continue;
      u.endpoints.push(...remaining.slice(0, room));
      remaining = remaining.slice(room);
    }
    // Whole new slices for the full chunks; the rest into the unchanged slice it fits best.
    while (remaining.length >= maxPerSlice) {
      plan.create.push({ ports: g.ports, endpoints: remaining.slice(0, maxPerSlice) });
      remaining = remaining.slice(maxPerSlice);
    }
    if (remaining.length > 0) {
      const fits = unchanged
        .filter((s) => maxPerSlice - sliceEndpoints(s).length >= remaining.length)
        .sort((a, b) => sliceEndpoints(b).length - sliceEndpoints(a).length)[0];
      if (fits) {
        unchanged.splice(unchanged.indexOf(fits), 1);
        toUpdate.push({ slice: fits, ports: g.ports, endpoints: [...sliceEndpoints(fits), ...remaining] });
      } else plan.create.push({ ports: g.ports, endpoints: remaining });
    }
    plan.update.push(...toUpdate);
    plan.unchanged.push(...unchanged);
  }
  // A slice to create takes the place of one to delete.
  while (plan.create.length > 0 && plan.delete.length > 0) {
    const c = plan.create.pop() as SlicePlan['create'][number];
    plan.update.push({ slice: plan.delete.pop() as Obj, ...c });
  }
  return plan;
}
