/**
 * Resource arithmetic of the scheduler, as the reference's framework.Resource: cpu in
 * millicores, memory and ephemeral storage in bytes, and every other resource (extended
 * resources, hugepages) by name as an integer value. Quantities are parsed once per pod or node
 * event, never per scheduling attempt.
 */
import { isObject } from '../api/meta';
import { parseQuantity, quantityMilliValue, quantityValue } from '../api/quantity';

export interface Resources {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  /** Extended resources, hugepages, attachable volumes: name → value. */
  scalar: Map<string, number>;
}

/** The requests the reference assumes for a container that sets none (schedutil.DefaultMilliCPURequest/DefaultMemoryRequest). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** The scalar resources of every pod that requests none (shared: never written to). */
const NO_SCALARS = new Map<string, number>();

export const emptyResources = (): Resources => ({ milliCPU: 0, memory: 0, ephemeralStorage: 0, scalar: new Map() });

export const isZero = (r: Resources): boolean => r.milliCPU === 0 && r.memory === 0 && r.ephemeralStorage === 0 && r.scalar.size === 0;

/** `into += r` (sign -1: `into -= r`). */
export function addResources(into: Resources, r: Resources, sign: 1 | -1 = 1): void {
  into.milliCPU += sign * r.milliCPU;
  into.memory += sign * r.memory;
  into.ephemeralStorage += sign * r.ephemeralStorage;
  for (const [k, v] of r.scalar) into.scalar.set(k, (into.scalar.get(k) ?? 0) + sign * v);
}

/** `into = max(into, r)` per resource. */
function maxResources(into: Resources, r: Resources): void {
  into.milliCPU = Math.max(into.milliCPU, r.milliCPU);
  into.memory = Math.max(into.memory, r.memory);
  into.ephemeralStorage = Math.max(into.ephemeralStorage, r.ephemeralStorage);
  for (const [k, v] of r.scalar) into.scalar.set(k, Math.max(into.scalar.get(k) ?? 0, v));
}

const copy = (r: Resources): Resources => ({ ...r, scalar: new Map(r.scalar) });

/** A resource list (`{cpu: "500m", memory: "1Gi", ...}`) as Resources; `pods` is left out. */
export function resourceList(list: unknown): Resources {
  const r = emptyResources();
  if (!isObject(list)) return r;
  for (const [name, raw] of Object.entries(list)) {
    const q = parseQuantity(raw);
    if (!q) continue;
    if (name === 'cpu') r.milliCPU = Number(quantityMilliValue(q));
    else if (name === 'memory') r.memory = Number(quantityValue(q));
    else if (name === 'ephemeral-storage') r.ephemeralStorage = Number(quantityValue(q));
    else if (name !== 'pods') r.scalar.set(name, Number(quantityValue(q)));
  }
  return r;
}

interface Container {
  restartPolicy?: string;
  resources?: { requests?: unknown };
}

/** A container's requests; with `nonZero`, cpu and memory that are not set count as the defaults. */
function containerRequests(c: Container, nonZero: boolean): Resources {
  const req = c.resources?.requests;
  const r = resourceList(req);
  if (nonZero) {
    const set = isObject(req) ? req : {};
    if (set.cpu === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (set.memory === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * A pod's requests as the reference's resourcehelper.PodRequests: the sum of its containers
 * and of its sidecars (init containers with restartPolicy Always), or the largest init
 * container's (plus the sidecars started before it) if that is more, per resource; plus
 * spec.overhead. With `nonZero`, unset cpu/memory requests count as 100m/200Mi (used by scoring,
 * so that pods without requests still spread).
 */
export function podRequests(spec: unknown, nonZero = false): Resources {
  const s = (isObject(spec) ? spec : {}) as { containers?: Container[]; initContainers?: Container[]; overhead?: unknown };
  const reqs = emptyResources();
  for (const c of s.containers ?? []) addResources(reqs, containerRequests(c, nonZero));
  const sidecars = emptyResources();
  const initMax = emptyResources();
  for (const c of s.initContainers ?? []) {
    const own = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      addResources(reqs, own);
      addResources(sidecars, own);
      maxResources(initMax, sidecars);
    } else {
      const during = copy(own);
      addResources(during, sidecars);
      maxResources(initMax, during);
    }
  }
  maxResources(reqs, initMax);
  if (s.overhead !== undefined) addResources(reqs, resourceList(s.overhead));
  // A pod's requests are never added to after this (only sums are): pods without scalar
  // resources share one empty map (two maps fewer per pod in the cache).
  if (reqs.scalar.size === 0) reqs.scalar = NO_SCALARS;
  return reqs;
}

/** A node's allocatable resources and how many pods it takes (status.allocatable). */
export function nodeAllocatable(status: unknown): { resources: Resources; pods: number } {
  const alloc = isObject(status) ? status.allocatable : undefined;
  const pods = isObject(alloc) ? parseQuantity(alloc.pods) : undefined;
  return { resources: resourceList(alloc), pods: pods ? Number(quantityValue(pods)) : 0 };
}
