/**
 * The pod's spec subresources: pods/ephemeralcontainers (adds ephemeral containers, nothing else)
 * and pods/resize (1.33: changes container resources and resize policies, nothing else), as the
 * reference's podEphemeralContainersStrategy and podResizeStrategy with
 * ValidatePodEphemeralContainersUpdate and ValidatePodResize.
 */
import { clone, type Obj } from '../../api/meta';
import { cmpQuantity, parseQuantity } from '../../api/quantity';
import { type FieldError, forbiddenField, invalidValue } from '../../api/validation';
import type { StatusLike } from '../../registry/kind';
import { qosClass } from '../qos';
import { type Errs, type J, list, map, obj, semanticEqual, str } from './common';
import { specDiff, validatePod } from './core-pod';

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

const specOf = (o: Obj): J => obj(o.spec) ?? {};

/** Copy of the stored pod with only `spec.<key>` taken from the input. */
function withSpec(cur: Readonly<Obj>, f: (spec: J) => void): Obj {
  const next = clone(cur) as Obj;
  const spec = specOf(next);
  f(spec);
  next.spec = spec;
  return next;
}

// ---- ephemeral containers -------------------------------------------------------------------

/** ValidatePodEphemeralContainersUpdate: the new spec is valid; existing ones neither removed nor changed. */
export function validateEphemeralContainersUpdate(next: Obj, old: Obj): FieldError[] {
  const errs = validatePod(next, old);
  if (old.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined)
    return [forbiddenField('', 'static pods do not support ephemeral containers')];
  const path = 'spec.ephemeralContainers';
  const byName = new Map(list<J>(specOf(next).ephemeralContainers).map((c) => [str(c.name), c]));
  for (const prev of list<J>(specOf(old).ephemeralContainers)) {
    const name = str(prev.name);
    const cur = byName.get(name);
    if (!cur) errs.push(forbiddenField(path, `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`));
    else if (!semanticEqual(prev, cur))
      errs.push(
        forbiddenField(
          path,
          `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n${specDiff(prev, cur, name).join('\n')}`,
        ),
      );
  }
  return errs;
}

export const ephemeralContainers: StatusLike = {
  merge: (input, cur) =>
    withSpec(cur, (spec) => {
      const want = specOf(input).ephemeralContainers;
      if (want === undefined) delete spec.ephemeralContainers;
      else spec.ephemeralContainers = clone(want);
    }),
  validate: validateEphemeralContainersUpdate,
};

// ---- resize ---------------------------------------------------------------------------------

/** resourcesRemoved: a resource of the old list is gone from the new one. */
function removed(next: unknown, prev: unknown): boolean {
  const n = map(next);
  return Object.keys(map(prev)).some((k) => n[k] === undefined);
}

/** validateContainerResize: no requests or limits removed; memory limits not lowered under NotRequired. */
function containerResize(c: J, prev: J, path: string): Errs {
  const errs: Errs = [];
  const r = obj(c.resources) ?? {};
  const p = obj(prev.resources) ?? {};
  if (removed(r.requests, p.requests)) errs.push(forbiddenField(`${path}.requests`, 'resource requests cannot be removed'));
  if (removed(r.limits, p.limits)) errs.push(forbiddenField(`${path}.limits`, 'resource limits cannot be removed'));
  const memPolicy = str(list<J>(c.resizePolicy).find((x) => x.resourceName === 'memory')?.restartPolicy);
  if (memPolicy === 'NotRequired' || memPolicy === '') {
    const lim = map(r.limits).memory;
    const oldLim = map(p.limits).memory;
    const q = lim === undefined ? undefined : parseQuantity(lim);
    const oq = oldLim === undefined ? undefined : parseQuantity(oldLim);
    if (q && oq && cmpQuantity(q, oq) < 0)
      errs.push(forbiddenField(`${path}.limits[memory]`, 'memory limits cannot be decreased unless resizePolicy is RestartContainer'));
    else if (q && !oq)
      errs.push(forbiddenField(`${path}.limits[memory]`, 'memory limits cannot be added unless resizePolicy is RestartContainer'));
  }
  return errs;
}

/** A container with its cpu and memory requests and limits set back to the old ones (dropCPUMemoryResourcesFromContainer). */
function withoutCpuMemory(c: J, prev: J): J {
  const r = obj(c.resources) ?? {};
  const p = obj(prev.resources) ?? {};
  const munge = (list: unknown, old: unknown): unknown => {
    if (old === undefined || old === null) return undefined;
    const m = { ...map(list) };
    delete m.cpu;
    delete m.memory;
    const o = map(old);
    if (o.cpu !== undefined) m.cpu = o.cpu;
    if (o.memory !== undefined) m.memory = o.memory;
    return m;
  };
  const resources: J = {};
  const limits = munge(r.limits, p.limits);
  const requests = munge(r.requests, p.requests);
  if (limits !== undefined) resources.limits = limits as J;
  if (requests !== undefined) resources.requests = requests as J;
  return { ...c, resources };
}

const isSidecar = (c: J): boolean => c.restartPolicy === 'Always';

/** ValidatePodResize (1.33). */
export function validatePodResize(next: Obj, old: Obj): FieldError[] {
  const errs = validatePod(next, old);
  const spec = specOf(next);
  const prev = specOf(old);
  const podLevel = (s: J) => Object.keys(map(obj(s.resources)?.requests)).length + Object.keys(map(obj(s.resources)?.limits)).length > 0;
  if (podLevel(prev) || podLevel(spec)) return [forbiddenField('', 'pods with pod-level resources cannot be resized')];
  if (old.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) return [forbiddenField('', 'static pods cannot be resized')];
  if (obj(prev.os)?.name === 'windows') return [forbiddenField('', 'windows pods cannot be resized')];
  const oldQos = str(obj(old.status)?.qosClass) || qosClass(old);
  if (oldQos !== qosClass(next))
    errs.push(invalidValue('spec', str(obj(next.status)?.qosClass), 'Pod QOS Class may not change as a result of resizing'));
  const running = list<J>(obj(old.status)?.containerStatuses).find((s) => obj(obj(s.state)?.running));
  if (running && running.resources === undefined) errs.push(forbiddenField('spec', 'Pod running on node without support for resize'));
  const inits = list<J>(spec.initContainers);
  list<J>(prev.initContainers).forEach((c, i) => {
    if (isSidecar(c)) errs.push(...containerResize(inits[i] ?? {}, c, `spec.initContainers[${i}].resources`));
  });
  const containers = list<J>(spec.containers);
  list<J>(prev.containers).forEach((c, i) => {
    errs.push(...containerResize(containers[i] ?? {}, c, `spec.containers[${i}].resources`));
  });
  const prevContainers = list<J>(prev.containers);
  const munged: J = { ...spec };
  munged.containers = containers.map((c, i) => {
    const m = withoutCpuMemory(c, prevContainers[i] ?? {});
    if (!semanticEqual(m, prevContainers[i])) errs.push(forbiddenField('spec', 'only cpu and memory resources are mutable'));
    return m;
  });
  const prevInits = list<J>(prev.initContainers);
  if (Array.isArray(spec.initContainers))
    munged.initContainers = inits.map((c, i) => {
      const before = prevInits[i] ?? {};
      if (!isSidecar(c)) {
        if (!semanticEqual(c, before)) errs.push(forbiddenField('spec', 'resources for non-sidecar init containers are immutable'));
        return c;
      }
      const m = withoutCpuMemory(c, before);
      if (!semanticEqual(m, before)) errs.push(forbiddenField('spec', 'only cpu and memory resources for sidecar containers are mutable'));
      return m;
    });
  if (errs.length > 0) return errs;
  if (!semanticEqual(munged, prev)) errs.push(forbiddenField('spec', 'only cpu and memory resources are mutable'));
  return errs;
}

/** dropNonResizeUpdates: the containers (by name) take only resources and resizePolicy from the input. */
function resizeMerge(input: Obj, cur: Readonly<Obj>): Obj {
  return withSpec(cur, (spec) => {
    const want = specOf(input);
    for (const key of ['containers', 'initContainers']) {
      const byName = new Map(list<J>(want[key]).map((c) => [str(c.name), c]));
      const mine = list<J>(spec[key]);
      mine.forEach((c, i) => {
        const w = byName.get(str(c.name));
        // Init containers too (SidecarContainers is on): validation refuses non-sidecar changes.
        if (!w) return;
        const next: J = { ...c };
        if (w.resources === undefined) delete next.resources;
        else next.resources = clone(w.resources);
        if (w.resizePolicy === undefined) delete next.resizePolicy;
        else next.resizePolicy = clone(w.resizePolicy);
        mine[i] = next;
      });
    }
  });
}

export const resize: StatusLike = { merge: resizeMerge, validate: validatePodResize };

/** The pod's spec subresources, as discovery lists them. */
export const POD_SPEC_SUBRESOURCES: Record<string, StatusLike> = { ephemeralcontainers: ephemeralContainers, resize };
