/**
 * core/v1 pods and pod templates: the reference's ValidatePodSpec (containers in
 * core-containers.ts, volumes in core-volumes.ts, scheduling constraints in core-scheduling.ts,
 * security contexts in core-security.ts) and ValidatePodUpdate. Pod templates of other kinds
 * reuse them through validatePodTemplateSpec.
 */
import { isObject, type Obj } from '../../api/meta';
import { parseIP } from '../../api/net';
import {
  dns1123Label,
  dns1123Subdomain,
  forbiddenField,
  invalidValue,
  notSupported,
  qualifiedName,
  required,
  validateAnnotations,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, items, type J, map, obj, pushAll, pushEach, semanticEqual, str, validateLabels } from './common';
import {
  type PodContext,
  validateContainers,
  validateEphemeralContainers,
  validateInitContainers,
  validateResources,
} from './core-containers';
import { validateAffinity, validateTolerations, validateTopologySpread } from './core-scheduling';
import { validateHostUsers, validateOSSecurity, validatePodSecurityContext } from './core-security';
import { validateVolumes } from './core-volumes';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];
const OS_NAMES = ['linux', 'windows'];
const MAX_INT32 = 2147483647;
const SUBDOMAIN_FIELDS = ['serviceAccountName', 'nodeName'];
const LABEL_FIELDS = ['hostname', 'subdomain'];
const CLASS_FIELDS = ['priorityClassName', 'runtimeClassName'];
const CONTAINER_LISTS = ['containers', 'initContainers'];
const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** IsValidIP. */
export const validIP = (ip: string, path: string): Errs => (parseIP(ip) ? [] : [invalidValue(path, ip, IP_MSG)]);

/** validatePodDNSConfig. */
function dnsConfig(spec: J, path: string): Errs {
  const cfg = obj(spec.dnsConfig);
  if (spec.dnsPolicy === 'None') {
    if (!cfg) return [required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (items(cfg.nameservers).length === 0)
      return [required(`${path}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (!cfg) return [];
  const errs: Errs = [];
  const servers = items<string>(cfg.nameservers).map(str);
  if (servers.length > 3) errs.push(invalidValue(`${path}.nameservers`, servers, 'must not have more than 3 nameservers'));
  servers.forEach((ns, i) => {
    pushAll(errs, validIP(ns, `${path}.nameservers[${i}]`));
  });
  const searches = items<string>(cfg.searches).map(str);
  if (searches.length > 32) errs.push(invalidValue(`${path}.searches`, searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048)
    errs.push(invalidValue(`${path}.searches`, searches, 'must not have more than 2048 characters (including spaces) in the search list'));
  searches.forEach((s, i) => {
    if (s === '.') return;
    const v = s.replace(/\.$/, '');
    const msgs = dns1123Subdomain(v.replaceAll('_', 'a'));
    pushAll(errs, each(`${path}.searches[${i}]`, v, msgs));
  });
  items<J>(cfg.options).forEach((o, i) => {
    if (str(o.name) === '') errs.push(required(`${path}.options[${i}]`, 'must not be empty'));
  });
  return errs;
}

/** The pod-only rule of validatePodHostNetworkDeps: host ports equal container ports. */
function hostNetworkPorts(spec: J, path: string, isPod: boolean): Errs {
  if (spec.hostNetwork !== true) return [];
  const errs: Errs = [];
  items<J>(spec.containers).forEach((c, i) => {
    items<J>(c.ports).forEach((p, j) => {
      const hp = typeof p.hostPort === 'number' ? p.hostPort : 0;
      const cp = typeof p.containerPort === 'number' ? p.containerPort : 0;
      if ((isPod || hp !== 0) && hp !== cp)
        errs.push(
          invalidValue(`${path}.containers[${i}].ports[${j}].hostPort`, hp, 'must match `containerPort` when `hostNetwork` is true'),
        );
    });
  });
  return errs;
}

function qualifiedNames(items: readonly J[], key: string, path: string, child: string, unique: boolean): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  items.forEach((g, i) => {
    const name = str(g[key]);
    const p = child === '' ? `${path}[${i}]` : `${path}[${i}].${child}`;
    pushAll(errs, each(p, name, qualifiedName(name)));
    if (unique && seen.has(name)) errs.push({ type: 'FieldValueDuplicate', field: p, detail: '', badValue: name });
    seen.add(name);
  });
  return errs;
}

/** The host aliases' IPs and hostnames. */
function hostAliases(errs: Errs, aliases: readonly J[], path: string): void {
  aliases.forEach((a, i) => {
    pushAll(errs, validIP(str(a.ip), `${path}.hostAliases[${i}].ip`));
    items<string>(a.hostnames).forEach((h, j) => {
      pushAll(errs, each(`${path}.hostAliases[${i}].hostnames[${j}]`, h, dns1123Subdomain(str(h))));
    });
  });
}

/**
 * ValidatePodSpec at `path` (`spec` for pods, `spec.template.spec` for templates); `podName` for
 * pods (generic ephemeral volumes name their claims after it).
 */
export function validatePodSpec(spec: J, path: string, podName?: string): Errs {
  const errs: Errs = [];
  podSpec(errs, spec, path, podName);
  return errs;
}

/** validatePodSpec into `errs`. */
function podSpec(errs: Errs, spec: J, path: string, podName: string | undefined): void {
  const grace = spec.terminationGracePeriodSeconds;
  if (typeof grace !== 'number') errs.push(required(`${path}.terminationGracePeriodSeconds`));
  const vols = validateVolumes(errs, items<J>(spec.volumes), `${path}.volumes`, podName);
  const restart = str(spec.restartPolicy);
  const ctx: PodContext = {
    vols,
    restartPolicy: restart,
    gracePeriod: typeof grace === 'number' ? grace : undefined,
    hostUsers: spec.hostUsers !== false,
  };
  const containers = items<J>(spec.containers);
  const inits = items<J>(spec.initContainers);
  validateContainers(errs, containers, ctx, `${path}.containers`);
  if (inits.length > 0) validateInitContainers(errs, inits, containers, ctx, `${path}.initContainers`);
  const ephemeral = items<J>(spec.ephemeralContainers);
  if (ephemeral.length > 0) validateEphemeralContainers(errs, ephemeral, containers, inits, ctx, `${path}.ephemeralContainers`);
  if (spec.hostNetwork === true) pushAll(errs, hostNetworkPorts(spec, path, podName !== undefined));
  if (restart === '') errs.push(required(`${path}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(restart)) errs.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = str(spec.dnsPolicy);
  if (dns === '') errs.push(required(`${path}.dnsPolicy`));
  else if (!DNS_POLICIES.includes(dns)) errs.push(notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  if (isObject(spec.nodeSelector)) pushAll(errs, validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  if (isObject(spec.securityContext)) validatePodSecurityContext(errs, spec, `${path}.securityContext`);
  const pullSecrets = items<J>(spec.imagePullSecrets);
  for (let i = 0; i < pullSecrets.length; i++) {
    const s = pullSecrets[i] as J;
    if (Object.keys(s).some((k) => k !== 'name')) errs.push(invalidValue(`${path}.imagePullSecrets[${i}]`, s, 'only name may be set'));
  }
  if (isObject(spec.affinity)) validateAffinity(errs, spec.affinity, `${path}.affinity`);
  if (spec.dnsConfig !== undefined || spec.dnsPolicy === 'None') pushAll(errs, dnsConfig(spec, `${path}.dnsConfig`));
  const readinessGates = items<J>(spec.readinessGates);
  if (readinessGates.length > 0)
    pushAll(errs, qualifiedNames(readinessGates, 'conditionType', `${path}.readinessGates`, 'conditionType', false));
  const schedulingGates = items<J>(spec.schedulingGates);
  if (schedulingGates.length > 0) pushAll(errs, qualifiedNames(schedulingGates, 'name', `${path}.schedulingGates`, '', true));
  const spread = items<J>(spec.topologySpreadConstraints);
  if (spread.length > 0) validateTopologySpread(errs, spread, `${path}.topologySpreadConstraints`);
  if (spec.hostUsers === false) pushAll(errs, validateHostUsers(spec, path));
  for (const key of SUBDOMAIN_FIELDS) {
    const v = str(spec[key]);
    if (v === '') continue;
    const msgs = dns1123Subdomain(v);
    if (msgs.length > 0) pushEach(errs, `${path}.${key}`, v, msgs);
  }
  if (typeof spec.activeDeadlineSeconds === 'number' && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > MAX_INT32))
    errs.push(invalidValue(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, `must be between 1 and ${MAX_INT32}, inclusive`));
  for (const key of LABEL_FIELDS) {
    const v = str(spec[key]);
    if (v === '') continue;
    const msgs = dns1123Label(v);
    if (msgs.length > 0) pushEach(errs, `${path}.${key}`, v, msgs);
  }
  const tolerations = items<J>(spec.tolerations);
  if (tolerations.length > 0) validateTolerations(errs, tolerations, `${path}.tolerations`);
  if (items(spec.hostAliases).length > 0) hostAliases(errs, items<J>(spec.hostAliases), path);
  for (const key of CLASS_FIELDS) {
    const v = str(spec[key]);
    if (v === '' && !(key === 'runtimeClassName' && typeof spec[key] === 'string')) continue;
    const msgs = dns1123Subdomain(v);
    if (msgs.length > 0) pushEach(errs, `${path}.${key}`, v, msgs);
  }
  if (typeof spec.preemptionPolicy === 'string' && !PREEMPTION_POLICIES.includes(spec.preemptionPolicy))
    errs.push(
      spec.preemptionPolicy === ''
        ? required(`${path}.preemptionPolicy`)
        : notSupported(`${path}.preemptionPolicy`, spec.preemptionPolicy, PREEMPTION_POLICIES),
    );
  if (isObject(spec.overhead)) validateResources(errs, { limits: spec.overhead }, `${path}.overhead`);
  const os = obj(spec.os);
  if (os) {
    if (str(os.name) === '') errs.push(required(`${path}.os.name`, 'cannot be empty'));
    else if (!OS_NAMES.includes(str(os.name))) errs.push(notSupported(`${path}.os`, str(os.name), OS_NAMES));
    else pushAll(errs, validateOSSecurity(spec, path));
  }
}

/** ValidatePodTemplateSpec: template labels, the pod spec, no ephemeral containers. */
export function validatePodTemplateSpec(template: J, path: string): Errs {
  const meta = obj(template.metadata) ?? {};
  const spec = obj(template.spec) ?? {};
  const errs = [
    ...validateLabels(meta.labels, `${path}.labels`),
    ...validateAnnotations(map<string>(meta.annotations), `${path}.annotations`),
    ...validatePodSpec(spec, `${path}.spec`),
  ];
  if (items(spec.ephemeralContainers).length > 0)
    errs.push(forbiddenField(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return errs;
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
function containerUpdates(next: readonly J[], prev: readonly J[], path: string): { errs: Errs; stop: boolean } {
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
function onlyAddedTolerations(next: readonly J[], prev: readonly J[]): Errs {
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
function onlyDeletedSchedulingGates(next: readonly J[], prev: readonly J[]): Errs {
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
    const r = containerUpdates(items<J>(spec[key]), items<J>(prev[key]), `spec.${key}`);
    pushAll(errs, r.errs);
    if (r.stop) return errs;
  }
  const deadline = activeDeadlineUpdate(spec.activeDeadlineSeconds, prev.activeDeadlineSeconds);
  pushAll(errs, deadline);
  if (deadline.length > 0 && typeof spec.activeDeadlineSeconds === 'number') return errs;
  pushAll(errs, onlyAddedTolerations(items<J>(spec.tolerations), items<J>(prev.tolerations)));
  pushAll(errs, onlyDeletedSchedulingGates(items<J>(spec.schedulingGates), items<J>(prev.schedulingGates)));
  if (semanticEqual(spec, prev)) return errs;
  // The updatable fields take their old values; whatever still differs is forbidden.
  const munged: J = { ...spec };
  for (const key of ['containers', 'initContainers']) {
    const olds = items<J>(prev[key]);
    if (Array.isArray(spec[key])) munged[key] = items<J>(spec[key]).map((c, i) => ({ ...c, image: olds[i]?.image }));
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
function imagesTrimmed(errs: Errs, spec: J): void {
  for (const key of CONTAINER_LISTS) {
    const containers = items<J>(spec[key]);
    for (let i = 0; i < containers.length; i++) {
      const image = str((containers[i] as J).image);
      if (image.trim().length !== image.length)
        errs.push(invalidValue(`spec.${key}[${i}].image`, image, 'must not have leading or trailing whitespace'));
    }
  }
}

const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** GetDeletionCostFromPodAnnotations accepts it: '-', a lone '0' or 1-9 first, then an int32. */
function validDeletionCost(v: string): boolean {
  if (!/^(-\d+|0|[1-9]\d*)$/.test(v)) return false;
  const n = Number(v);
  return n >= -2147483648 && n <= 2147483647;
}

/** ValidatePodSpecificAnnotations: the mirror annotation needs a node; a deletion cost is an int32. */
function podAnnotations(o: Obj, old: Obj | undefined, spec: J): Errs {
  const errs: Errs = [];
  const a = o.metadata.annotations;
  if (!a) return errs;
  const mirror = a[MIRROR_ANNOTATION];
  if (mirror !== undefined && str(spec.nodeName) === '')
    errs.push(invalidValue(`metadata.annotations[${MIRROR_ANNOTATION}]`, mirror, 'must set spec.nodeName if mirror pod annotation is set'));
  const cost = a[DELETION_COST];
  // An invalid cost already stored stays allowed (AllowInvalidPodDeletionCost).
  const oldCost = old?.metadata.annotations?.[DELETION_COST];
  if (cost !== undefined && !validDeletionCost(cost) && (oldCost === undefined || validDeletionCost(oldCost)))
    errs.push(invalidValue(`metadata.annotations[${DELETION_COST}]`, cost, 'must be a 32bit integer'));
  return errs;
}

/** validatePodMetadataAndSpec (and, on create, ValidatePodCreate's own rules). */
export function validatePod(o: Obj, old?: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const errs = podAnnotations(o, old, spec);
  // Writes that leave the spec as stored (status, binding, metadata) do not validate it again: the
  // reference's status and binding paths do not, and a pod stored before a rule existed keeps
  // taking status updates.
  if (old && semanticEqual(o.spec, old.spec)) return errs;
  podSpec(errs, spec, 'spec', o.metadata.name ?? '');
  imagesTrimmed(errs, spec);
  if (str(spec.serviceAccountName) === '') {
    const volumes = items<J>(spec.volumes);
    for (let i = 0; i < volumes.length; i++) {
      const projected = obj((volumes[i] as J).projected);
      if (!projected) continue;
      const sources = items<J>(projected.sources);
      for (let j = 0; j < sources.length; j++) {
        if (obj((sources[j] as J).serviceAccountToken))
          errs.push(
            forbiddenField(
              `spec.volumes[${i}].projected.sources[${j}].serviceAccountToken`,
              'must not be specified when serviceAccountName is not set',
            ),
          );
      }
    }
  }
  if (old) return errs;
  if (items(spec.ephemeralContainers).length > 0) errs.push(forbiddenField('spec.ephemeralContainers', 'cannot be set on create'));
  if (str(spec.nodeName) !== '' && items(spec.schedulingGates).length > 0)
    errs.push(forbiddenField('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  return errs;
}

export const pod: Strategy = {
  validate: validatePod,
  validateUpdate: validatePodUpdate,
};
