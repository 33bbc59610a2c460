/**
 * core/v1 pods and pod templates: the basic PodSpec rules of the reference's ValidatePodSpec
 * (containers, init containers, ports, restart and DNS policy). Pod templates of apps kinds reuse
 * them through validatePodTemplateSpec.
 */
import { isObject, type Obj } from '../../api/meta';
import { dns1123Label, dns1123Subdomain, duplicate, forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, isValidPortName, isValidPortNum, type J, list, obj, semanticEqual, str, validateLabels } from './common';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const MAX_INT32 = 2147483647;

function validateContainerPorts(ports: J[], path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const ip = `${path}[${i}]`;
    const name = str(p.name);
    if (name.length > 0) {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) errs.push(...each(`${ip}.name`, name, msgs));
      else if (names.has(name)) errs.push(duplicate(`${ip}.name`, name));
      else names.add(name);
    }
    const containerPort = typeof p.containerPort === 'number' ? p.containerPort : 0;
    if (containerPort === 0) errs.push(required(`${ip}.containerPort`));
    else errs.push(...each(`${ip}.containerPort`, containerPort, isValidPortNum(containerPort)));
    if (typeof p.hostPort === 'number' && p.hostPort !== 0) errs.push(...each(`${ip}.hostPort`, p.hostPort, isValidPortNum(p.hostPort)));
    const protocol = str(p.protocol);
    if (protocol === '') errs.push(required(`${ip}.protocol`));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${ip}.protocol`, protocol, PROTOCOLS));
  });
  return errs;
}

/** validateContainerCommon: name, image, ports and the enumerated fields of any container. */
function validateContainer(c: J, path: string): Errs {
  const errs: Errs = [];
  const name = str(c.name);
  if (name === '') errs.push(required(`${path}.name`));
  else errs.push(...each(`${path}.name`, name, dns1123Label(name)));
  if (str(c.image) === '') errs.push(required(`${path}.image`));
  if (c.terminationMessagePolicy !== undefined && !TERMINATION_MESSAGE_POLICIES.includes(str(c.terminationMessagePolicy)))
    errs.push(notSupported(`${path}.terminationMessagePolicy`, str(c.terminationMessagePolicy), TERMINATION_MESSAGE_POLICIES));
  errs.push(...validateContainerPorts(list<J>(c.ports), `${path}.ports`));
  if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(str(c.imagePullPolicy)))
    errs.push(notSupported(`${path}.imagePullPolicy`, str(c.imagePullPolicy), PULL_POLICIES));
  return errs;
}

/** ValidatePodSpec (basics) at `path` (`spec` for pods, `spec.template.spec` for templates). */
export function validatePodSpec(spec: J, path: string): Errs {
  const errs: Errs = [];
  const containers = list<J>(spec.containers);
  const names = new Set<string>();
  if (containers.length === 0) errs.push(required(`${path}.containers`));
  containers.forEach((c, i) => {
    const p = `${path}.containers[${i}]`;
    errs.push(...validateContainer(c, p));
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else names.add(name);
  });
  list<J>(spec.initContainers).forEach((c, i) => {
    const p = `${path}.initContainers[${i}]`;
    errs.push(...validateContainer(c, p));
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else names.add(name);
  });
  const restart = str(spec.restartPolicy);
  if (restart === '') errs.push(required(`${path}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(restart)) errs.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = str(spec.dnsPolicy);
  if (dns === '') errs.push(required(`${path}.dnsPolicy`));
  else if (!DNS_POLICIES.includes(dns)) errs.push(notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  errs.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  for (const key of ['serviceAccountName', 'nodeName']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...each(`${path}.${key}`, v, dns1123Subdomain(v)));
  }
  if (typeof spec.activeDeadlineSeconds === 'number' && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > MAX_INT32))
    errs.push(invalidValue(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, `must be between 1 and ${MAX_INT32}, inclusive`));
  for (const key of ['hostname', 'subdomain']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...each(`${path}.${key}`, v, dns1123Label(v)));
  }
  return errs;
}

/** ValidatePodTemplateSpec (basics): template labels and the pod spec. */
export function validatePodTemplateSpec(template: J, path: string): Errs {
  const meta = obj(template.metadata) ?? {};
  return [...validateLabels(meta.labels, `${path}.labels`), ...validatePodSpec(obj(template.spec) ?? {}, `${path}.spec`)];
}

// ---- updates (ValidatePodUpdate) ------------------------------------------------------------

/** The fields a pod update may change, as the reference lists them in its message. */
const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');
export const POD_UPDATE_FORBIDDEN = `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS}`;
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** ValidateContainerUpdates: same number of containers; `stop` when that fails. */
function containerUpdates(next: J[], prev: J[], path: string): { errs: Errs; stop: boolean } {
  if (next.length !== prev.length) return { errs: [forbiddenField(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: Errs = [];
  next.forEach((c, i) => {
    // An empty image is reported by the spec rules already (the reference's aggregate drops the repeat).
    const image = str(c.image);
    if (image.trim().length !== image.length)
      errs.push(invalidValue(`${path}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

/** activeDeadlineSeconds may be set, or lowered, but not raised or removed. */
function activeDeadlineUpdate(next: unknown, prev: unknown): Errs {
  const path = 'spec.activeDeadlineSeconds';
  if (typeof next === 'number') {
    if (next < 0 || next > MAX_INT32) return [invalidValue(path, next, `must be between 0 and ${MAX_INT32}, inclusive`)];
    if (typeof prev === 'number' && prev < next) return [invalidValue(path, next, 'must be less than or equal to previous value')];
    return [];
  }
  return typeof prev === 'number' ? [invalidValue(path, null, 'must not update from a positive integer to nil value')] : [];
}

/** validateOnlyAddedTolerations: every existing toleration stays, up to its tolerationSeconds. */
function onlyAddedTolerations(next: J[], prev: J[]): Errs {
  const strip = (t: J): J => {
    const { tolerationSeconds: _, ...rest } = t;
    return rest;
  };
  for (const old of prev) {
    const o = strip(old);
    if (!next.some((t) => semanticEqual(strip(t), o)))
      return [forbiddenField('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return [];
}

/** validateOnlyDeletedSchedulingGates: gates may be removed, never added. */
function onlyDeletedSchedulingGates(next: J[], prev: J[]): Errs {
  const had = new Set(prev.map((g) => str(g.name)));
  const errs: Errs = [];
  const seen = new Set<string>();
  next.forEach((g, i) => {
    const name = str(g.name);
    if (had.has(name) || seen.has(name)) return;
    seen.add(name);
    errs.push(forbiddenField(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${name}'`));
  });
  return errs;
}

/** The mirror-pod annotation may be neither added, changed nor removed (ValidatePodSpecificAnnotationUpdates). */
function mirrorAnnotationUpdate(o: Obj, old: Obj): Errs {
  const next = o.metadata.annotations ?? {};
  const prev = old.metadata.annotations ?? {};
  const path = `metadata.annotations[${MIRROR_ANNOTATION}]`;
  if (Object.hasOwn(prev, MIRROR_ANNOTATION) && next[MIRROR_ANNOTATION] !== prev[MIRROR_ANNOTATION])
    return [forbiddenField(path, 'may not remove or update mirror pod annotation')];
  if (!Object.hasOwn(prev, MIRROR_ANNOTATION) && Object.hasOwn(next, MIRROR_ANNOTATION))
    return [forbiddenField(path, 'may not add mirror pod annotation')];
  return [];
}

/** A short account of what differs between two specs (the reference appends a go-cmp diff). */
export function specDiff(prev: unknown, next: unknown, path = 'spec'): string[] {
  if (semanticEqual(prev, next)) return [];
  if (isObject(prev) && isObject(next)) {
    const keys = [...new Set([...Object.keys(prev), ...Object.keys(next)])].sort();
    return keys.flatMap((k) => specDiff(prev[k], next[k], `${path}.${k}`));
  }
  if (Array.isArray(prev) && Array.isArray(next) && prev.length === next.length)
    return prev.flatMap((v, i) => specDiff(v, next[i], `${path}[${i}]`));
  const show = (v: unknown) => (v === undefined ? '<unset>' : JSON.stringify(v));
  return [`- ${path}: ${show(prev)}`, `+ ${path}: ${show(next)}`];
}

/** ValidatePodUpdate: only the fields the reference lists may change in a pod's spec. */
export function validatePodUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs = mirrorAnnotationUpdate(o, old);
  for (const key of ['containers', 'initContainers']) {
    const r = containerUpdates(list<J>(spec[key]), list<J>(prev[key]), `spec.${key}`);
    errs.push(...r.errs);
    if (r.stop) return errs;
  }
  const deadline = activeDeadlineUpdate(spec.activeDeadlineSeconds, prev.activeDeadlineSeconds);
  errs.push(...deadline);
  if (deadline.length > 0 && typeof spec.activeDeadlineSeconds === 'number') return errs;
  errs.push(...onlyAddedTolerations(list<J>(spec.tolerations), list<J>(prev.tolerations)));
  errs.push(...onlyDeletedSchedulingGates(list<J>(spec.schedulingGates), list<J>(prev.schedulingGates)));
  if (semanticEqual(spec, prev)) return errs;
  // The updatable fields take their old values; whatever still differs is forbidden.
  const munged: J = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    const olds = list<J>(prev[key]);
    if (Array.isArray(spec[key])) munged[key] = list<J>(spec[key]).map((c, i) => ({ ...c, image: olds[i]?.image }));
  }
  for (const key of ['activeDeadlineSeconds', 'schedulingGates', 'tolerations']) {
    if (prev[key] === undefined) delete munged[key];
    else munged[key] = prev[key];
  }
  const oldGrace = prev.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = oldGrace;
  if (!semanticEqual(munged, prev)) errs.push(forbiddenField('spec', `${POD_UPDATE_FORBIDDEN}\n${specDiff(prev, munged).join('\n')}`));
  return errs;
}

/** validateContainersOnlyForPod: a pod's images (not a template's) carry no surrounding spaces. */
function imagesTrimmed(spec: J): Errs {
  return ['containers', 'initContainers'].flatMap((key) =>
    list<J>(spec[key]).flatMap((c, i) => {
      const image = str(c.image);
      return image.trim().length === image.length
        ? []
        : [invalidValue(`spec.${key}[${i}].image`, image, 'must not have leading or trailing whitespace')];
    }),
  );
}

export const pod: Strategy = {
  validate: (o: Obj) => {
    const spec = obj(o.spec) ?? {};
    return [...validatePodSpec(spec, 'spec'), ...imagesTrimmed(spec)];
  },
  validateUpdate: validatePodUpdate,
};
