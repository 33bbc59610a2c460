/**
 * core/v1 containers: what the reference's validateContainerCommon checks for every container
 * (name, image, ports, env, volume mounts, pull policy, resources, resize policy, security
 * context), the probes and lifecycle handlers of regular and restartable init containers, and the
 * lists of regular, init and ephemeral containers.
 */
import { cmpQuantity, formatQuantity, isNegative, parseQuantity, type Quantity } from '../../api/quantity';
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
  isValidPortName,
  isValidPortNum,
  items,
  type J,
  map,
  obj,
  pushAll,
  pushEach,
  SCAN_MAX,
  seenBefore,
  semanticEqual,
  sortedKeys,
  str,
} from './common';
import {
  isHugePages,
  isOvercommitAllowed,
  quantityValueValid,
  STANDARD_CONTAINER_RESOURCES,
  validateContainerResourceName,
  validateQuantityValue,
} from './core-quota';
import { validateSecurityContext } from './core-security';
import { localDescendingPath, objectFieldSelector, resourceFieldSelector, type Volumes } from './core-volumes';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const ENV_FROM_SOURCES = ['configMapRef', 'secretRef'];
const LIFECYCLE_HOOKS = ['postStart', 'preStop'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const SCHEMES = ['HTTP', 'HTTPS'];
const RESIZE_RESOURCES = ['cpu', 'memory'];
const RESIZE_POLICIES = ['NotRequired', 'RestartContainer'];
const PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'];
const RECURSIVE_READ_ONLY = ['Disabled', 'Enabled', 'IfPossible'];
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

/*
 * The rules below run for every pod write, and almost every value they see is valid: they push
 * into the caller's `errs` and build a field path only when they report an error under it.
 */

/** validateContainerPorts of the container at `path` (its list is `${path}.ports`). */
function validateContainerPorts(errs: Errs, ports: readonly J[], path: string): void {
  // A list of one cannot hold a duplicate name.
  const names = ports.length > 1 ? new Set<string>() : undefined;
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i] as J;
    const name = str(p.name);
    if (name.length > 0) {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) pushEach(errs, `${path}.ports[${i}].name`, name, msgs);
      else if (names?.has(name)) errs.push(duplicate(`${path}.ports[${i}].name`, name));
      else names?.add(name);
    }
    const containerPort = typeof p.containerPort === 'number' ? p.containerPort : 0;
    if (containerPort === 0) errs.push(required(`${path}.ports[${i}].containerPort`));
    else if (!validPortNum(containerPort))
      pushEach(errs, `${path}.ports[${i}].containerPort`, containerPort, isValidPortNum(containerPort));
    if (typeof p.hostPort === 'number' && p.hostPort !== 0 && !validPortNum(p.hostPort))
      pushEach(errs, `${path}.ports[${i}].hostPort`, p.hostPort, isValidPortNum(p.hostPort));
    const protocol = str(p.protocol);
    if (protocol === '') errs.push(required(`${path}.ports[${i}].protocol`));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${path}.ports[${i}].protocol`, protocol, PROTOCOLS));
  }
}

const validPortNum = (port: number): boolean => port >= 1 && port <= 65535;

/** AccumulateUniqueHostPorts over `containers` (a list path): protocol/hostIP/port unique. */
export function hostPortConflicts(errs: Errs, containers: readonly J[], path: string): void {
  // Made for the first host port (most pods have none).
  let seen: Set<string> | undefined;
  for (let ci = 0; ci < containers.length; ci++) {
    const ports = items<J>((containers[ci] as J).ports);
    for (let pi = 0; pi < ports.length; pi++) {
      const p = ports[pi] as J;
      if (typeof p.hostPort !== 'number' || p.hostPort === 0) continue;
      const key = `${str(p.protocol)}/${str(p.hostIP)}/${p.hostPort}`;
      seen ??= new Set();
      if (seen.has(key)) errs.push(duplicate(`${path}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    }
  }
}

// ---- environment ----------------------------------------------------------------------------

/** Printable ASCII other than '=' (a lone surrogate or any code point outside it fails, as in the reference). */
const RELAXED_ENV_NAME = /^[ -<>-~]+$/;

/** IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on in 1.33). */
export function envVarName(name: string): string[] {
  if (name === '') return ['environment variable name must be non-empty'];
  if (!RELAXED_ENV_NAME.test(name))
    return ["a valid environment variable name must consist only of printable ASCII characters other than '='"];
  return [];
}

function keySelector(errs: Errs, s: J, path: string): void {
  const name = str(s.name);
  const msgs = dns1123Subdomain(name);
  if (msgs.length > 0) pushEach(errs, `${path}.name`, name, msgs);
  const key = str(s.key);
  if (key === '') errs.push(required(`${path}.key`));
  else {
    const keyMsgs = configMapKey(key);
    if (keyMsgs.length > 0) pushEach(errs, `${path}.key`, key, keyMsgs);
  }
}

/** The env var's valueFrom (at `path`, built only for a var that has one). */
function envValueFrom(errs: Errs, ev: J, from: J, path: string): void {
  let n = 0;
  const fieldRef = obj(from.fieldRef);
  if (fieldRef) {
    n++;
    objectFieldSelector(errs, fieldRef, ENV_FIELD_PATHS, `${path}.fieldRef`);
  }
  const resourceRef = obj(from.resourceFieldRef);
  if (resourceRef) {
    n++;
    resourceFieldSelector(errs, resourceRef, `${path}.resourceFieldRef`, false);
  }
  const configMapRef = obj(from.configMapKeyRef);
  if (configMapRef) {
    n++;
    keySelector(errs, configMapRef, `${path}.configMapKeyRef`);
  }
  const secretRef = obj(from.secretKeyRef);
  if (secretRef) {
    n++;
    keySelector(errs, secretRef, `${path}.secretKeyRef`);
  }
  if (n === 0)
    errs.push(invalidValue(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
  else if (str(ev.value) !== '') errs.push(invalidValue(path, '', 'may not be specified when `value` is not empty'));
  else if (n > 1) errs.push(invalidValue(path, '', 'may not have more than one field specified at a time'));
}

/** ValidateEnv of the list at `path`. */
export function validateEnv(errs: Errs, env: readonly J[], path: string): void {
  for (let i = 0; i < env.length; i++) {
    const ev = env[i] as J;
    const name = str(ev.name);
    if (name === '') errs.push(required(`${path}[${i}].name`));
    else if (!RELAXED_ENV_NAME.test(name)) pushEach(errs, `${path}[${i}].name`, name, envVarName(name));
    const from = obj(ev.valueFrom);
    if (from) envValueFrom(errs, ev, from, `${path}[${i}].valueFrom`);
  }
}

/** ValidateEnvFrom (the count errors are reported on the list's path, as the reference). */
export function validateEnvFrom(errs: Errs, envFrom: readonly J[], path: string): void {
  for (let i = 0; i < envFrom.length; i++) {
    const ev = envFrom[i] as J;
    const prefix = str(ev.prefix);
    if (prefix !== '' && !RELAXED_ENV_NAME.test(prefix)) pushEach(errs, `${path}[${i}].prefix`, prefix, envVarName(prefix));
    let n = 0;
    for (const key of ENV_FROM_SOURCES) {
      const ref = obj(ev[key]);
      if (!ref) continue;
      n++;
      const name = str(ref.name);
      if (name === '') errs.push(required(`${path}[${i}].${key}.name`));
      else {
        const msgs = dns1123Subdomain(name.replace(/-$/, 'a'));
        if (msgs.length > 0) pushEach(errs, `${path}[${i}].${key}.name`, name, msgs);
      }
    }
    if (n === 0) errs.push(invalidValue(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (n > 1) errs.push(invalidValue(path, '', 'may not have more than one field specified at a time'));
  }
}

// ---- probes and lifecycle handlers ----------------------------------------------------------

/** ValidatePortNumOrName. */
export function portNumOrName(errs: Errs, port: unknown, path: string): void {
  if (typeof port === 'number') {
    if (!validPortNum(port)) pushEach(errs, path, port, isValidPortNum(port));
  } else if (typeof port === 'string') {
    const msgs = isValidPortName(port);
    if (msgs.length > 0) pushEach(errs, path, port, msgs);
  }
}

const HEADER_NAME = /^[-A-Za-z0-9]+$/;

function httpGet(errs: Errs, h: J, path: string): void {
  if (str(h.path) === '') errs.push(required(`${path}.path`));
  portNumOrName(errs, h.port, `${path}.port`);
  if (!SCHEMES.includes(str(h.scheme))) errs.push(notSupported(`${path}.scheme`, str(h.scheme), SCHEMES));
  for (const header of items<J>(h.httpHeaders)) {
    const name = str(header.name);
    if (!HEADER_NAME.test(name))
      errs.push(
        invalidValue(
          `${path}.httpHeaders`,
          name,
          "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
        ),
      );
  }
}

/** validateHandler: exactly one handler (probes: no sleep; lifecycle hooks: no grpc). */
function handler(errs: Errs, h: J, keys: string[], gracePeriod: number | undefined, path: string): void {
  let n = 0;
  for (const key of keys) {
    const a = obj(h[key]);
    if (!a) continue;
    if (n > 0) {
      errs.push(forbiddenField(`${path}.${key}`, 'may not specify more than 1 handler type'));
      continue;
    }
    n++;
    if (key === 'exec' && items(a.command).length === 0) errs.push(required(`${path}.${key}.command`));
    if (key === 'httpGet') httpGet(errs, a, `${path}.${key}`);
    if (key === 'tcpSocket' || key === 'grpc') portNumOrName(errs, a.port, `${path}.${key}.port`);
    if (key === 'sleep') {
      const s = typeof a.seconds === 'number' ? a.seconds : 0;
      if (gracePeriod !== undefined && (s < 0 || s > gracePeriod))
        errs.push(invalidValue(`${path}.${key}`, s, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`));
    }
  }
  if (n === 0) errs.push(required(path, 'must specify a handler type'));
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'];
const PROBE_COUNTS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];

/** validateProbe and the rules of its kind (liveness, readiness, startup). */
function probe(
  errs: Errs,
  p: J | undefined,
  kind: 'liveness' | 'readiness' | 'startup',
  gracePeriod: number | undefined,
  path: string,
): void {
  if (!p) return;
  handler(errs, p, PROBE_HANDLERS, gracePeriod, path);
  for (const f of PROBE_COUNTS) {
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
}

function probesAndLifecycle(errs: Errs, c: J, gracePeriod: number | undefined, path: string): void {
  const lc = obj(c.lifecycle);
  if (lc) {
    for (const hook of LIFECYCLE_HOOKS) {
      const h = obj(lc[hook]);
      if (h) handler(errs, h, LIFECYCLE_HANDLERS, gracePeriod, `${path}.lifecycle.${hook}`);
    }
  }
  const liveness = obj(c.livenessProbe);
  if (liveness) probe(errs, liveness, 'liveness', gracePeriod, `${path}.livenessProbe`);
  const readiness = obj(c.readinessProbe);
  if (readiness) probe(errs, readiness, 'readiness', gracePeriod, `${path}.readinessProbe`);
  const startup = obj(c.startupProbe);
  if (startup) probe(errs, startup, 'startup', gracePeriod, `${path}.startupProbe`);
}

// ---- resources ------------------------------------------------------------------------------

/** The name and value rules of one resource of the `field` list (`${path}.${field}[${k}]`). */
function resourceEntry(errs: Errs, k: string, q: Quantity | undefined, path: string, field: string): void {
  if (STANDARD_CONTAINER_RESOURCES.includes(k)) {
    // The common case: a valid name, and not a counted resource, so only a negative value is wrong.
    if (q && isNegative(q)) pushAll(errs, validateQuantityValue(k, q, `${path}.${field}[${k}]`));
    return;
  }
  pushAll(errs, validateContainerResourceName(k, `${path}.${field}[${k}]`));
  if (q && !quantityValueValid(k, q)) pushAll(errs, validateQuantityValue(k, q, `${path}.${field}[${k}]`));
}

/** ValidateContainerResourceRequirements: names, quantities, requests not above limits. */
export function validateResources(errs: Errs, r: J | undefined, path: string): void {
  const limits = map(r?.limits);
  const requests = map(r?.requests);
  let cpuOrMemory = false;
  let hugePages = false;
  for (const k of sortedKeys(limits)) {
    resourceEntry(errs, k, parseQuantity(limits[k]), path, 'limits');
    if (isHugePages(k)) hugePages = true;
    if (RESIZE_RESOURCES.includes(k)) cpuOrMemory = true;
  }
  for (const k of sortedKeys(requests)) {
    const q = parseQuantity(requests[k]);
    resourceEntry(errs, k, q, path, 'requests');
    const lim = limits[k] === undefined ? undefined : parseQuantity(limits[k]);
    if (q && lim) {
      const c = cmpQuantity(q, lim);
      if (c !== 0 && !isOvercommitAllowed(k))
        errs.push(invalidValue(`${path}.requests`, formatQuantity(q), `must be equal to ${k} limit of ${formatQuantity(lim)}`));
      else if (c > 0)
        errs.push(
          invalidValue(`${path}.requests`, formatQuantity(q), `must be less than or equal to ${k} limit of ${formatQuantity(lim)}`),
        );
    } else if (limits[k] === undefined && !isOvercommitAllowed(k))
      errs.push(required(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
    if (isHugePages(k)) hugePages = true;
    if (RESIZE_RESOURCES.includes(k)) cpuOrMemory = true;
  }
  if (!cpuOrMemory && hugePages) errs.push(forbiddenField(path, 'HugePages require cpu or memory'));
}

/** validateResizePolicy (errors on the list's path, as the reference). */
function resizePolicy(errs: Errs, policies: readonly J[], restartPolicy: string, path: string): void {
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
}

// ---- mounts and devices ---------------------------------------------------------------------

/**
 * ValidateVolumeMounts of the container at `path` (its list is `${path}.volumeMounts`); a
 * privileged container's securityContext allows Bidirectional propagation.
 */
function validateVolumeMounts(errs: Errs, c: J, vols: Volumes, path: string): void {
  const mounts = items<J>(c.volumeMounts);
  if (mounts.length === 0) return;
  const listPath = `${path}.volumeMounts`;
  const deviceList = items<J>(c.volumeDevices);
  // By name, the last device of a name winning (its path alone counts), as the reference's map.
  const devices = deviceList.length > 0 ? new Map(deviceList.map((d) => [str(d.name), str(d.devicePath)])) : undefined;
  const devicePaths = devices ? new Set(devices.values()) : undefined;
  const privileged = obj(c.securityContext)?.privileged === true;
  const points = mounts.length > SCAN_MAX ? new Set<string>() : undefined;
  for (let i = 0; i < mounts.length; i++) {
    const m = mounts[i] as J;
    const name = str(m.name);
    const mountPath = str(m.mountPath);
    if (name === '') errs.push(required(`${listPath}[${i}].name`));
    const vol = vols.get(name);
    if (!vol) errs.push(notFound(`${listPath}[${i}].name`, name));
    if (mountPath === '') errs.push(required(`${listPath}[${i}].mountPath`));
    if (points ? points.has(mountPath) : seenBefore(mounts, i, 'mountPath', mountPath))
      errs.push(invalidValue(`${listPath}[${i}].mountPath`, mountPath, 'must be unique'));
    points?.add(mountPath);
    if (devices?.has(name)) errs.push(invalidValue(`${listPath}[${i}].name`, name, 'must not already exist in volumeDevices'));
    if (devicePaths?.has(mountPath))
      errs.push(invalidValue(`${listPath}[${i}].mountPath`, mountPath, 'must not already exist as a path in volumeDevices'));
    const subPath = str(m.subPath);
    const subPathExpr = str(m.subPathExpr);
    if (obj(vol?.image)) {
      if (subPath !== '') errs.push(invalidValue(`${listPath}[${i}].subPath`, subPath, 'not allowed in image volume sources'));
      if (subPathExpr !== '') errs.push(invalidValue(`${listPath}[${i}].subPathExpr`, subPathExpr, 'not allowed in image volume sources'));
    }
    // The reference reports these two under the list's path, not the mount's.
    if (subPath !== '') pushAll(errs, localDescendingPath(subPath, `${listPath}.subPath`));
    if (subPathExpr !== '') {
      if (subPath !== '')
        errs.push(invalidValue(`${listPath}[${i}].subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      pushAll(errs, localDescendingPath(subPathExpr, `${listPath}.subPathExpr`));
    }
    const propagation = m.mountPropagation;
    if (typeof propagation === 'string') {
      if (!PROPAGATIONS.includes(propagation)) errs.push(notSupported(`${listPath}.mountPropagation`, propagation, PROPAGATIONS));
      if (propagation === 'Bidirectional' && !privileged)
        errs.push(
          forbiddenField(`${listPath}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'),
        );
    }
    const rro = m.recursiveReadOnly;
    if (typeof rro === 'string' && rro !== 'Disabled') {
      const rp = `${listPath}.recursiveReadOnly`;
      if (rro === 'Enabled' || rro === 'IfPossible') {
        if (m.readOnly !== true) errs.push(forbiddenField(rp, 'may only be specified when readOnly is true'));
        if (typeof propagation === 'string' && propagation !== 'None')
          errs.push(forbiddenField(rp, 'may only be specified when mountPropagation is None or not specified'));
      } else errs.push(notSupported(rp, rro, RECURSIVE_READ_ONLY));
    }
  }
}

/** ValidateVolumeDevices of the container at `path` (`${path}.volumeDevices`): block devices come from claims. */
function validateVolumeDevices(errs: Errs, c: J, vols: Volumes, path: string): void {
  const devices = items<J>(c.volumeDevices);
  if (devices.length === 0) return;
  const mounts = new Map(items<J>(c.volumeMounts).map((m) => [str(m.name), str(m.mountPath)]));
  const mountPaths = new Set(mounts.values());
  const paths = new Set<string>();
  const names = new Set<string>();
  devices.forEach((d, i) => {
    const p = `${path}.volumeDevices[${i}]`;
    const name = str(d.name);
    const devicePath = str(d.devicePath);
    const v = vols.get(name);
    if (name === '') errs.push(required(`${p}.name`));
    if (names.has(name)) errs.push(invalidValue(`${p}.name`, name, 'must be unique'));
    if (v && !obj(v.persistentVolumeClaim) && !obj(v.ephemeral))
      errs.push(invalidValue(`${p}.name`, name, 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'));
    if (!v) errs.push(notFound(`${p}.name`, name));
    if (devicePath === '') errs.push(required(`${p}.devicePath`));
    if (paths.has(devicePath)) errs.push(invalidValue(`${p}.devicePath`, devicePath, 'must be unique'));
    if (devicePath !== '' && devicePath.split('/').includes('..'))
      errs.push(invalidValue(`${p}.devicePath`, devicePath, "can not contain backsteps ('..')"));
    else paths.add(devicePath);
    if (mounts.has(name)) errs.push(invalidValue(`${p}.name`, name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(devicePath))
      errs.push(invalidValue(`${p}.devicePath`, devicePath, 'must not already exist as a path in volumeMounts'));
    if (name !== '') names.add(name);
  });
}

// ---- containers -----------------------------------------------------------------------------

/** validateContainerCommon: the rules of every container, regular, init or ephemeral. */
export function validateContainerCommon(errs: Errs, c: J, ctx: PodContext, path: string): void {
  const name = str(c.name);
  if (name === '') errs.push(required(`${path}.name`));
  else {
    const msgs = dns1123Label(name);
    if (msgs.length > 0) pushEach(errs, `${path}.name`, name, msgs);
  }
  if (str(c.image) === '') errs.push(required(`${path}.image`));
  const tmp = str(c.terminationMessagePolicy);
  if (tmp === '') errs.push(required(`${path}.terminationMessagePolicy`));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp))
    errs.push(notSupported(`${path}.terminationMessagePolicy`, tmp, TERMINATION_MESSAGE_POLICIES));
  const ports = items<J>(c.ports);
  if (ports.length > 0) validateContainerPorts(errs, ports, path);
  const env = items<J>(c.env);
  if (env.length > 0) validateEnv(errs, env, `${path}.env`);
  const envFrom = items<J>(c.envFrom);
  if (envFrom.length > 0) validateEnvFrom(errs, envFrom, `${path}.envFrom`);
  validateVolumeMounts(errs, c, ctx.vols, path);
  validateVolumeDevices(errs, c, ctx.vols, path);
  const pull = str(c.imagePullPolicy);
  if (pull === '') errs.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(pull)) errs.push(notSupported(`${path}.imagePullPolicy`, pull, PULL_POLICIES));
  validateResources(errs, obj(c.resources), `${path}.resources`);
  const resize = items<J>(c.resizePolicy);
  if (resize.length > 0) resizePolicy(errs, resize, ctx.restartPolicy, `${path}.resizePolicy`);
  const sc = obj(c.securityContext);
  if (sc) validateSecurityContext(errs, sc, `${path}.securityContext`, ctx.hostUsers);
}

/** validateContainers: at least one, unique names, probes and hooks, no restartPolicy. */
export function validateContainers(errs: Errs, containers: readonly J[], ctx: PodContext, path: string): void {
  if (containers.length === 0) {
    errs.push(required(path));
    return;
  }
  const names = containers.length > SCAN_MAX ? new Set<string>() : undefined;
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i] as J;
    const p = `${path}[${i}]`;
    validateContainerCommon(errs, c, ctx, p);
    const name = str(c.name);
    if (names ? names.has(name) : seenBefore(containers, i, 'name', name)) errs.push(duplicate(`${p}.name`, name));
    else names?.add(name);
    probesAndLifecycle(errs, c, ctx.gracePeriod, p);
    if (c.restartPolicy !== undefined) errs.push(forbiddenField(`${p}.restartPolicy`, 'may not be set for non-init containers'));
  }
  hostPortConflicts(errs, containers, path);
}

/** validateInitContainers: names unique across regular and init containers; sidecars may have probes. */
export function validateInitContainers(errs: Errs, inits: readonly J[], regular: readonly J[], ctx: PodContext, path: string): void {
  if (inits.length === 0) return;
  const names = new Set(regular.map((c) => str(c.name)));
  inits.forEach((c, i) => {
    const p = `${path}[${i}]`;
    validateContainerCommon(errs, c, ctx, p);
    let always = false;
    if (c.restartPolicy !== undefined) {
      if (c.restartPolicy !== 'Always') errs.push(notSupported(`${p}.restartPolicy`, str(c.restartPolicy), ['Always']));
      always = c.restartPolicy === 'Always';
    }
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    else if (name !== '') names.add(name);
    hostPortConflicts(errs, [c], path);
    if (always) probesAndLifecycle(errs, c, ctx.gracePeriod, p);
    else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
        if (c[f] !== undefined && c[f] !== null) errs.push(forbiddenField(`${p}.${f}`, INIT_ONLY_ALWAYS));
    }
  });
}

/** validateEphemeralContainers: the common rules, unique names, an existing target, allowed fields only. */
export function validateEphemeralContainers(
  errs: Errs,
  ecs: readonly J[],
  regular: readonly J[],
  inits: readonly J[],
  ctx: PodContext,
  path: string,
): void {
  if (ecs.length === 0) return;
  const others = new Set([...regular, ...inits].map((c) => str(c.name)));
  const all = new Set(others);
  ecs.forEach((c, i) => {
    const p = `${path}[${i}]`;
    validateContainerCommon(errs, c, ctx, p);
    const image = str(c.image);
    if (image.trim().length !== image.length) errs.push(invalidValue(`${p}.image`, image, 'must not have leading or trailing whitespace'));
    const name = str(c.name);
    if (all.has(name)) errs.push(duplicate(`${p}.name`, name));
    else all.add(name);
    const target = str(c.targetContainerName);
    if (target !== '' && !others.has(target)) errs.push(notFound(`${p}.targetContainerName`, target));
    for (const f of EPHEMERAL_DISALLOWED) if (!semanticEqual(c[f], undefined)) errs.push(forbiddenField(`${p}.${f}`, EPHEMERAL_FORBIDDEN));
    items<J>(c.volumeMounts).forEach((m, j) => {
      if (str(m.subPath) !== '') errs.push(forbiddenField(`${p}.volumeMounts[${j}].subPath`, EPHEMERAL_FORBIDDEN));
      if (str(m.subPathExpr) !== '') errs.push(forbiddenField(`${p}.volumeMounts[${j}].subPathExpr`, EPHEMERAL_FORBIDDEN));
    });
  });
}
