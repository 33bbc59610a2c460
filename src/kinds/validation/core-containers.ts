/**
 * core/v1 containers: what the reference's validateContainerCommon checks for every container
 * (name, image, ports, env, volume mounts, pull policy, resources, resize policy, security
 * context), the probes and lifecycle handlers of regular and restartable init containers, and the
 * lists of regular, init and ephemeral containers.
 */
import { cmpQuantity, formatQuantity, parseQuantity } from '../../api/quantity';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  forbiddenField,
  invalidValue,
  notFound,
  notSupported,
  required,
} from '../../api/validation';
import {
  configMapKey,
  type Errs,
  each,
  isValidPortName,
  isValidPortNum,
  type J,
  list,
  map,
  obj,
  semanticEqual,
  sortedKeys,
  str,
} from './common';
import { isHugePages, isOvercommitAllowed, validateContainerResourceName, validateQuantityValue } from './core-quota';
import { validateSecurityContext } from './core-security';
import { objectFieldSelector, resourceFieldSelector, type Volumes, validateVolumeDevices, validateVolumeMounts } from './core-volumes';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const SCHEMES = ['HTTP', 'HTTPS'];
const RESIZE_RESOURCES = ['cpu', 'memory'];
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'];
const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const INIT_ONLY_ALWAYS = 'may not be set for init containers without restartPolicy=Always';
const EPHEMERAL_FORBIDDEN = 'cannot be set for an Ephemeral Container';
/** EphemeralContainerCommon's fields an ephemeral container may not set, in the struct's order. */
const EPHEMERAL_DISALLOWED = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
];

/** The pod-level facts container rules need. */
export interface PodContext {
  vols: Volumes;
  restartPolicy: string;
  gracePeriod: number | undefined;
  hostUsers: boolean;
}

// ---- ports ----------------------------------------------------------------------------------

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

/** AccumulateUniqueHostPorts over `containers` (a list path): protocol/hostIP/port unique. */
export function hostPortConflicts(containers: J[], path: string, seen = new Set<string>()): Errs {
  const errs: Errs = [];
  containers.forEach((c, ci) => {
    list<J>(c.ports).forEach((p, pi) => {
      if (typeof p.hostPort !== 'number' || p.hostPort === 0) return;
      const key = `${str(p.protocol)}/${str(p.hostIP)}/${p.hostPort}`;
      if (seen.has(key)) errs.push(duplicate(`${path}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return errs;
}

// ---- environment ----------------------------------------------------------------------------

/** IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on in 1.33). */
export function envVarName(name: string): string[] {
  if (name === '') return ['environment variable name must be non-empty'];
  for (const ch of name) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || c > 0x7e || ch === '=')
      return ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
  }
  return [];
}

function keySelector(s: J, path: string): Errs {
  const name = str(s.name);
  const errs = each(`${path}.name`, name, dns1123Subdomain(name));
  const key = str(s.key);
  if (key === '') errs.push(required(`${path}.key`));
  else errs.push(...each(`${path}.key`, key, configMapKey(key)));
  return errs;
}

function envValueFrom(ev: J, path: string): Errs {
  const from = obj(ev.valueFrom);
  if (!from) return [];
  const errs: Errs = [];
  let n = 0;
  if (obj(from.fieldRef)) {
    n++;
    errs.push(...objectFieldSelector(obj(from.fieldRef) ?? {}, ENV_FIELD_PATHS, `${path}.fieldRef`));
  }
  if (obj(from.resourceFieldRef)) {
    n++;
    errs.push(...resourceFieldSelector(obj(from.resourceFieldRef) ?? {}, `${path}.resourceFieldRef`, false));
  }
  for (const key of ['configMapKeyRef', 'secretKeyRef']) {
    const ref = obj(from[key]);
    if (!ref) continue;
    n++;
    errs.push(...keySelector(ref, `${path}.${key}`));
  }
  if (n === 0)
    errs.push(invalidValue(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (str(ev.value) !== '') errs.push(invalidValue(path, '', 'may not be specified when `value` is not empty'));
  else if (n > 1) errs.push(invalidValue(path, '', 'may not have more than one field specified at a time'));
  return errs;
}

/** ValidateEnv. */
export function validateEnv(env: J[], path: string): Errs {
  const errs: Errs = [];
  env.forEach((ev, i) => {
    const p = `${path}[${i}]`;
    const name = str(ev.name);
    if (name === '') errs.push(required(`${p}.name`));
    else errs.push(...each(`${p}.name`, name, envVarName(name)));
    errs.push(...envValueFrom(ev, `${p}.valueFrom`));
  });
  return errs;
}

/** ValidateEnvFrom (the count errors are reported on the list's path, as the reference). */
export function validateEnvFrom(envFrom: J[], path: string): Errs {
  const errs: Errs = [];
  envFrom.forEach((ev, i) => {
    const p = `${path}[${i}]`;
    const prefix = str(ev.prefix);
    if (prefix !== '') errs.push(...each(`${p}.prefix`, prefix, envVarName(prefix)));
    let n = 0;
    for (const key of ['configMapRef', 'secretRef']) {
      const ref = obj(ev[key]);
      if (!ref) continue;
      n++;
      const name = str(ref.name);
      if (name === '') errs.push(required(`${p}.${key}.name`));
      else errs.push(...each(`${p}.${key}.name`, name, dns1123Subdomain(name.replace(/-$/, 'a'))));
    }
    if (n === 0) errs.push(invalidValue(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) errs.push(invalidValue(path, '', 'may not have more than one field specified at a time'));
  });
  return errs;
}

// ---- probes and lifecycle handlers ----------------------------------------------------------

/** ValidatePortNumOrName. */
export function portNumOrName(port: unknown, path: string): Errs {
  if (typeof port === 'number') return each(path, port, isValidPortNum(port));
  if (typeof port === 'string') return each(path, port, isValidPortName(port));
  return [];
}

function httpGet(h: J, path: string): Errs {
  const errs: Errs = str(h.path) === '' ? [required(`${path}.path`)] : [];
  errs.push(...portNumOrName(h.port, `${path}.port`));
  if (!SCHEMES.includes(str(h.scheme))) errs.push(notSupported(`${path}.scheme`, str(h.scheme), SCHEMES));
  for (const header of list<J>(h.httpHeaders)) {
    const name = str(header.name);
    if (!/^[-A-Za-z0-9]+$/.test(name))
      errs.push(
        invalidValue(
          `${path}.httpHeaders`,
          name,
          "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
        ),
      );
  }
  return errs;
}

/** validateHandler: exactly one handler (probes: no sleep; lifecycle hooks: no grpc). */
function handler(h: J, keys: string[], gracePeriod: number | undefined, path: string): Errs {
  const errs: Errs = [];
  let n = 0;
  for (const key of keys) {
    const a = obj(h[key]);
    if (!a) continue;
    if (n > 0) {
      errs.push(forbiddenField(`${path}.${key}`, 'may not specify more than 1 handler type'));
      continue;
    }
    n++;
    const p = `${path}.${key}`;
    if (key === 'exec' && list(a.command).length === 0) errs.push(required(`${p}.command`));
    if (key === 'httpGet') errs.push(...httpGet(a, p));
    if (key === 'tcpSocket' || key === 'grpc') errs.push(...portNumOrName(a.port, `${p}.port`));
    if (key === 'sleep') {
      const s = typeof a.seconds === 'number' ? a.seconds : 0;
      if (gracePeriod !== undefined && (s < 0 || s > gracePeriod))
        errs.push(invalidValue(p, s, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`));
    }
  }
  if (n === 0) errs.push(required(path, 'must specify a handler type'));
  return errs;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'];

/** validateProbe and the rules of its kind (liveness, readiness, startup). */
function probe(p: J | undefined, kind: 'liveness' | 'readiness' | 'startup', gracePeriod: number | undefined, path: string): Errs {
  if (!p) return [];
  const errs = handler(p, PROBE_HANDLERS, gracePeriod, path);
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    const v = p[f];
    if (typeof v === 'number' && v < 0) errs.push(invalidValue(`${path}.${f}`, v, 'must be greater than or equal to 0'));
  }
  const grace = p.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace <= 0)
    errs.push(invalidValue(`${path}.terminationGracePeriodSeconds`, grace, 'must be greater than 0'));
  if (kind !== 'readiness' && typeof p.successThreshold === 'number' && p.successThreshold !== 1)
    errs.push(invalidValue(`${path}.successThreshold`, p.successThreshold, 'must be 1'));
  if (kind === 'readiness' && typeof grace === 'number')
    errs.push(invalidValue(`${path}.terminationGracePeriodSeconds`, grace, 'must not be set for readinessProbes'));
  return errs;
}

function probesAndLifecycle(c: J, gracePeriod: number | undefined, path: string): Errs {
  const errs: Errs = [];
  const lc = obj(c.lifecycle);
  if (lc) {
    for (const hook of ['postStart', 'preStop']) {
      const h = obj(lc[hook]);
      if (h) errs.push(...handler(h, LIFECYCLE_HANDLERS, gracePeriod, `${path}.lifecycle.${hook}`));
    }
  }
  errs.push(...probe(obj(c.livenessProbe), 'liveness', gracePeriod, `${path}.livenessProbe`));
  errs.push(...probe(obj(c.readinessProbe), 'readiness', gracePeriod, `${path}.readinessProbe`));
  errs.push(...probe(obj(c.startupProbe), 'startup', gracePeriod, `${path}.startupProbe`));
  return errs;
}

// ---- resources ------------------------------------------------------------------------------

/** ValidateContainerResourceRequirements: names, quantities, requests not above limits. */
export function validateResources(r: J | undefined, path: string): Errs {
  const errs: Errs = [];
  const limits = map(r?.limits);
  const requests = map(r?.requests);
  const limPath = `${path}.limits`;
  const reqPath = `${path}.requests`;
  let cpuOrMemory = false;
  let hugePages = false;
  for (const k of sortedKeys(limits)) {
    errs.push(...validateContainerResourceName(k, `${limPath}[${k}]`));
    const q = parseQuantity(limits[k]);
    if (q) errs.push(...validateQuantityValue(k, q, `${limPath}[${k}]`));
    if (isHugePages(k)) hugePages = true;
    if (RESIZE_RESOURCES.includes(k)) cpuOrMemory = true;
  }
  for (const k of sortedKeys(requests)) {
    errs.push(...validateContainerResourceName(k, `${reqPath}[${k}]`));
    const q = parseQuantity(requests[k]);
    if (q) errs.push(...validateQuantityValue(k, q, `${reqPath}[${k}]`));
    const lim = limits[k] === undefined ? undefined : parseQuantity(limits[k]);
    if (q && lim) {
      const c = cmpQuantity(q, lim);
      if (c !== 0 && !isOvercommitAllowed(k))
        errs.push(invalidValue(reqPath, formatQuantity(q), `must be equal to ${k} limit of ${formatQuantity(lim)}`));
      else if (c > 0)
        errs.push(invalidValue(reqPath, formatQuantity(q), `must be less than or equal to ${k} limit of ${formatQuantity(lim)}`));
    } else if (limits[k] === undefined && !isOvercommitAllowed(k))
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    if (isHugePages(k)) hugePages = true;
    if (RESIZE_RESOURCES.includes(k)) cpuOrMemory = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(forbiddenField(path, 'HugePages require cpu or memory'));
  return errs;
}

/** validateResizePolicy (errors on the list's path, as the reference). */
function resizePolicy(policies: J[], restartPolicy: string, path: string): Errs {
  const errs: Errs = [];
  const seen = new Set<string>();
  policies.forEach((p, i) => {
    const name = str(p.resourceName);
    if (seen.has(name)) errs.push(duplicate(`${path}[${i}]`, name));
    seen.add(name);
    if (name === '') errs.push(required(path));
    else if (!RESIZE_RESOURCES.includes(name)) errs.push(notSupported(path, name, RESIZE_RESOURCES));
    const policy = str(p.restartPolicy);
    if (policy === '') errs.push(required(path));
    else if (!RESIZE_POLICIES.includes(policy)) errs.push(notSupported(path, policy, RESIZE_POLICIES));
    if (restartPolicy === 'Never' && policy !== 'NotRequired')
      errs.push(invalidValue(path, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
  return errs;
}

// ---- containers -----------------------------------------------------------------------------

/** validateContainerCommon: the rules of every container, regular, init or ephemeral. */
export function validateContainerCommon(c: J, ctx: PodContext, path: string): Errs {
  const errs: Errs = [];
  const name = str(c.name);
  if (name === '') errs.push(required(`${path}.name`));
  else errs.push(...each(`${path}.name`, name, dns1123Label(name)));
  if (str(c.image) === '') errs.push(required(`${path}.image`));
  const tmp = str(c.terminationMessagePolicy);
  if (tmp === '') errs.push(required(`${path}.terminationMessagePolicy`));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp))
    errs.push(notSupported(`${path}.terminationMessagePolicy`, tmp, TERMINATION_MESSAGE_POLICIES));
  errs.push(...validateContainerPorts(list<J>(c.ports), `${path}.ports`));
  errs.push(...validateEnv(list<J>(c.env), `${path}.env`));
  errs.push(...validateEnvFrom(list<J>(c.envFrom), `${path}.envFrom`));
  errs.push(...validateVolumeMounts(c, ctx.vols, `${path}.volumeMounts`));
  errs.push(...validateVolumeDevices(c, ctx.vols, `${path}.volumeDevices`));
  const pull = str(c.imagePullPolicy);
  if (pull === '') errs.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(pull)) errs.push(notSupported(`${path}.imagePullPolicy`, pull, PULL_POLICIES));
  errs.push(...validateResources(obj(c.resources), `${path}.resources`));
  errs.push(...resizePolicy(list<J>(c.resizePolicy), ctx.restartPolicy, `${path}.resizePolicy`));
  errs.push(...validateSecurityContext(obj(c.securityContext), `${path}.securityContext`, ctx.hostUsers));
  return errs;
}

/** validateContainers: at least one, unique names, probes and hooks, no restartPolicy. */
export function validateContainers(containers: J[], ctx: PodContext, path: string): Errs {
  if (containers.length === 0) return [required(path)];
  const errs: Errs = [];
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, ctx, p));
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else names.add(name);
    errs.push(...probesAndLifecycle(c, ctx.gracePeriod, p));
    if (c.restartPolicy !== undefined) errs.push(forbiddenField(`${p}.restartPolicy`, 'may not be set for non-init containers'));
  });
  errs.push(...hostPortConflicts(containers, path));
  return errs;
}

/** validateInitContainers: names unique across regular and init containers; sidecars may have probes. */
export function validateInitContainers(inits: J[], regular: J[], ctx: PodContext, path: string): Errs {
  const errs: Errs = [];
  const names = new Set(regular.map((c) => str(c.name)));
  inits.forEach((c, i) => {
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, ctx, p));
    let always = false;
    if (c.restartPolicy !== undefined) {
      if (c.restartPolicy !== 'Always') errs.push(notSupported(`${p}.restartPolicy`, str(c.restartPolicy), ['Always']));
      always = c.restartPolicy === 'Always';
    }
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else if (name !== '') names.add(name);
    errs.push(...hostPortConflicts([c], path));
    if (always) errs.push(...probesAndLifecycle(c, ctx.gracePeriod, p));
    else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
        if (c[f] !== undefined && c[f] !== null) errs.push(forbiddenField(`${p}.${f}`, INIT_ONLY_ALWAYS));
    }
  });
  return errs;
}

/** validateEphemeralContainers: the common rules, unique names, an existing target, allowed fields only. */
export function validateEphemeralContainers(ecs: J[], regular: J[], inits: J[], ctx: PodContext, path: string): Errs {
  const errs: Errs = [];
  const others = new Set([...regular, ...inits].map((c) => str(c.name)));
  const all = new Set(others);
  ecs.forEach((c, i) => {
    const p = `${path}[${i}]`;
    errs.push(...validateContainerCommon(c, ctx, p));
    const image = str(c.image);
    if (image.trim().length !== image.length) errs.push(invalidValue(`${p}.image`, image, 'must not have leading or trailing whitespace'));
    const name = str(c.name);
    if (all.has(name)) errs.push(duplicate(`${p}.name`, name));
    else all.add(name);
    const target = str(c.targetContainerName);
    if (target !== '' && !others.has(target)) errs.push(notFound(`${p}.targetContainerName`, target));
    for (const f of EPHEMERAL_DISALLOWED) if (!semanticEqual(c[f], undefined)) errs.push(forbiddenField(`${p}.${f}`, EPHEMERAL_FORBIDDEN));
    list<J>(c.volumeMounts).forEach((m, j) => {
      if (str(m.subPath) !== '') errs.push(forbiddenField(`${p}.volumeMounts[${j}].subPath`, EPHEMERAL_FORBIDDEN));
      if (str(m.subPathExpr) !== '') errs.push(forbiddenField(`${p}.volumeMounts[${j}].subPathExpr`, EPHEMERAL_FORBIDDEN));
    });
  });
  return errs;
}
