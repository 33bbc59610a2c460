/**
 * core/v1: ConfigMap, Secret, Service, Namespace, Node and Event (the reference's
 * pkg/apis/core/validation). Pods are in core-pod.ts, LimitRange and ResourceQuota in core-quota.ts.
 */
import type { Obj } from '../../api/meta';
import { parseCidr, validateCidr } from '../../api/net';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  type FieldError,
  forbiddenField,
  invalidValue,
  labelValue,
  notSupported,
  qualifiedName,
  required,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  configMapKey,
  type Errs,
  each,
  GoValue,
  goQuote,
  immutable,
  isValidPortName,
  isValidPortNum,
  type J,
  list,
  map,
  obj,
  semanticEqual,
  sortedKeys,
  str,
  stringsValue,
  validateLabels,
} from './common';
import { quantities, validateQuantityValue } from './core-quota';

/** core.MaxSecretSize: the total data of a ConfigMap or Secret. */
export const MAX_DATA_SIZE = 1024 * 1024;
const IMMUTABLE_SET = 'field is immutable when `immutable` is set';

const tooLong = (field: string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  detail: `may not be more than ${max} bytes`,
});

/** Bytes a base64 text decodes to. */
const base64Length = (s: string): number => Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

// ---- ConfigMap ----------------------------------------------------------------------------

export function validateConfigMap(o: Obj): Errs {
  const errs: Errs = [];
  const data = map<string>(o.data);
  const binary = map<string>(o.binaryData);
  let size = 0;
  for (const k of sortedKeys(data)) {
    errs.push(...each(`data[${k}]`, k, configMapKey(k)));
    if (Object.hasOwn(binary, k)) errs.push(invalidValue(`data[${k}]`, k, 'duplicate of key present in binaryData'));
    size += utf8Length(str(data[k]));
  }
  for (const k of sortedKeys(binary)) {
    errs.push(...each(`binaryData[${k}]`, k, configMapKey(k)));
    size += base64Length(str(binary[k]));
  }
  // The reference reports the whole object here, with an empty path (printed "[]").
  if (size > MAX_DATA_SIZE) errs.push(tooLong('[]', MAX_DATA_SIZE));
  return errs;
}

function immutableData(o: Obj, old: Obj, fields: string[]): Errs {
  if (old.immutable !== true) return [];
  const errs: Errs = [];
  if (o.immutable !== true) errs.push(forbiddenField('immutable', IMMUTABLE_SET));
  for (const f of fields) if (!semanticEqual(o[f], old[f])) errs.push(forbiddenField(f, IMMUTABLE_SET));
  return errs;
}

export const configMap: Strategy = {
  validate: validateConfigMap,
  validateUpdate: (o, old) => immutableData(o, old, ['data', 'binaryData']),
};

// ---- Secret -------------------------------------------------------------------------------

const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';

/** Secret type → the data keys it requires (one of them for basic-auth). */
function validateSecretType(o: Obj, data: Record<string, string>): Errs {
  const has = (k: string) => Object.hasOwn(data, k);
  const need = (k: string) => (has(k) ? [] : [required(`data[${k}]`)]);
  const json = (k: string) => {
    if (!has(k)) return [required(`data[${k}]`)];
    try {
      JSON.parse(Buffer.from(str(data[k]), 'base64').toString('utf8'));
      return [];
    } catch (e) {
      return [invalidValue(`data[${k}]`, '<secret contents redacted>', (e as Error).message)];
    }
  };
  switch (o.type) {
    case 'kubernetes.io/service-account-token':
      return o.metadata.annotations?.[SA_NAME_ANNOTATION] ? [] : [required(`metadata.annotations[${SA_NAME_ANNOTATION}]`)];
    case 'kubernetes.io/dockercfg':
      return json('.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return json('.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [required('data[username]'), required('data[password]')];
    case 'kubernetes.io/ssh-auth':
      return str(data['ssh-privatekey']) === '' ? [required('data[ssh-privatekey]')] : [];
    case 'kubernetes.io/tls':
      return [...need('tls.crt'), ...need('tls.key')];
    default:
      return [];
  }
}

export function validateSecret(o: Obj): Errs {
  const errs: Errs = [];
  const data = map<string>(o.data);
  let size = 0;
  for (const k of sortedKeys(data)) {
    errs.push(...each(`data[${k}]`, k, configMapKey(k)));
    size += base64Length(str(data[k]));
  }
  if (size > MAX_DATA_SIZE) errs.push(tooLong('data', MAX_DATA_SIZE));
  errs.push(...validateSecretType(o, data));
  return errs;
}

/** The reference merges stringData into data (base64) before validation and storage. */
export function mergeStringData(o: Obj): void {
  const sd = obj(o.stringData);
  if (!sd) return;
  const data = { ...map<string>(o.data) };
  for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(str(v), 'utf8').toString('base64');
  o.data = data;
  delete o.stringData;
}

export const secret: Strategy = {
  // At decoding, as the reference's conversion does: what a writer owns is `data`. A stringData
  // that is not a map of strings is left to the schema pass, which refuses it.
  decode(o) {
    const sd = o.stringData;
    if (typeof sd === 'object' && sd !== null && !Array.isArray(sd) && Object.values(sd).every((v) => typeof v === 'string')) {
      mergeStringData(o);
    }
  },
  prepareForCreate: mergeStringData,
  prepareForUpdate: mergeStringData,
  validate: validateSecret,
  validateUpdate: (o, old) => [...immutable(o.type, old.type, 'type'), ...immutableData(o, old, ['data'])],
};

// ---- Service ------------------------------------------------------------------------------

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validateServicePort(p: J, requireName: boolean, names: Set<string>, path: string): Errs {
  const errs: Errs = [];
  const name = str(p.name);
  if (requireName && name === '') errs.push(required(`${path}.name`));
  else if (name !== '') {
    errs.push(...each(`${path}.name`, name, dns1123Label(name)));
    if (names.has(name)) errs.push(duplicate(`${path}.name`, name));
    else names.add(name);
  }
  const port = typeof p.port === 'number' ? p.port : 0;
  errs.push(...each(`${path}.port`, port, isValidPortNum(port)));
  const protocol = str(p.protocol);
  if (protocol === '') errs.push(required(`${path}.protocol`));
  else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${path}.protocol`, protocol, PROTOCOLS));
  if (typeof p.targetPort === 'number' && p.targetPort !== 0)
    errs.push(...each(`${path}.targetPort`, p.targetPort, isValidPortNum(p.targetPort)));
  else if (typeof p.targetPort === 'string' && p.targetPort !== '')
    errs.push(...each(`${path}.targetPort`, p.targetPort, isValidPortName(p.targetPort)));
  if (typeof p.appProtocol === 'string') errs.push(...each(`${path}.appProtocol`, p.appProtocol, qualifiedName(p.appProtocol)));
  return errs;
}

/** core.ServicePort as Go prints it (the bad value of a duplicate (protocol, port) pair). */
function servicePortValue(protocol: string, port: number): GoValue {
  return new GoValue(
    `core.ServicePort{Name:"", Protocol:${goQuote(protocol)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
    { protocol, port },
  );
}

const AFFINITIES = ['ClientIP', 'None'];
const LB_ONLY = "may only be used when `type` is 'LoadBalancer'";

/** ValidateService (in the reference's order of checks). */
export function validateService(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const type = str(spec.type);
  const ports = list<J>(spec.ports);
  const clusterIPs = list<string>(spec.clusterIPs);
  // isHeadlessService reads clusterIPs, which NormalizeClusterIPs keeps in step with clusterIP.
  const headless = clusterIPs.length === 1 && clusterIPs[0] === 'None';
  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(required('spec.ports'));
  if ((type === 'LoadBalancer' || type === 'NodePort') && headless)
    errs.push(invalidValue('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${type} services`));
  if (type === 'ExternalName') {
    if (clusterIPs.length > 0) errs.push(forbiddenField('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (list(spec.ipFamilies).length > 0) errs.push(forbiddenField('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined) errs.push(forbiddenField('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    const cname = str(spec.externalName).replace(/\.$/, '');
    if (cname === '') errs.push(required('spec.externalName'));
    else errs.push(...each('spec.externalName', cname, dns1123Subdomain(cname)));
  }
  const names = new Set<string>();
  ports.forEach((p, i) => {
    errs.push(...validateServicePort(p, ports.length > 1, names, `spec.ports[${i}]`));
  });
  errs.push(...validateLabels(spec.selector, 'spec.selector'));
  if (spec.sessionAffinity !== undefined) {
    const affinity = str(spec.sessionAffinity);
    if (affinity === '') errs.push(required('spec.sessionAffinity'));
    else if (!AFFINITIES.includes(affinity)) errs.push(notSupported('spec.sessionAffinity', affinity, AFFINITIES));
    if (affinity === 'None' && spec.sessionAffinityConfig !== undefined)
      errs.push(forbiddenField('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  if (type === '') errs.push(required('spec.type'));
  else if (!SERVICE_TYPES.includes(type)) errs.push(notSupported('spec.type', type, SERVICE_TYPES));
  if (type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (typeof p.nodePort === 'number' && p.nodePort !== 0)
        errs.push(forbiddenField(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (typeof p.nodePort !== 'number' || p.nodePort === 0) return;
    const key = `${str(p.protocol)}/${p.nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    nodePorts.add(key);
  });
  const pairs = new Set<string>();
  ports.forEach((p, i) => {
    const port = typeof p.port === 'number' ? p.port : 0;
    const key = `${str(p.protocol)}/${port}`;
    if (pairs.has(key)) errs.push(duplicate(`spec.ports[${i}]`, servicePortValue(str(p.protocol), port)));
    pairs.add(key);
  });
  if (list(spec.loadBalancerSourceRanges).length > 0 && type !== 'LoadBalancer')
    errs.push(forbiddenField('spec.LoadBalancerSourceRanges', LB_ONLY));
  if (spec.allocateLoadBalancerNodePorts !== undefined && type !== 'LoadBalancer')
    errs.push(forbiddenField('spec.allocateLoadBalancerNodePorts', LB_ONLY));
  if (typeof spec.loadBalancerClass === 'string') {
    if (type === 'LoadBalancer')
      errs.push(...each('spec.loadBalancerClass', spec.loadBalancerClass, qualifiedName(spec.loadBalancerClass)));
    else errs.push(forbiddenField('spec.loadBalancerClass', LB_ONLY));
  }
  return errs;
}

// ---- Service updates ----------------------------------------------------------------------

const strings = (v: unknown): string[] => list<string>(v).map(str);
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The reference's NormalizeClusterIPs: clients that only know the singular `clusterIP` keep the
 * plural `clusterIPs` in step (create: seeded from it; update: kept, cleared or replaced with it).
 */
export function normalizeClusterIPs(o: Obj, old?: Obj): void {
  const spec = obj(o.spec);
  if (!spec) return;
  const ip = str(spec.clusterIP);
  const ips = strings(spec.clusterIPs);
  if (!old) {
    if (ip !== '' && ips.length === 0) spec.clusterIPs = [ip];
    else if (ip === '' && ips.length > 0) spec.clusterIP = ips[0];
    return;
  }
  const prev = obj(old.spec) ?? {};
  const oldIp = str(prev.clusterIP);
  const oldIps = strings(prev.clusterIPs);
  if (oldIps.length > 0 && ips.length === 0 && oldIp === ip) spec.clusterIPs = [...oldIps];
  if (oldIp !== ip && sameList(oldIps, strings(spec.clusterIPs))) {
    if (oldIp !== '' && ip === '') delete spec.clusterIPs;
    else spec.clusterIPs = [ip];
  }
}

/** validateUpgradeDowngradeClusterIPs: an assigned primary cluster IP never changes. */
function clusterIPsUpdate(spec: J, prev: J): Errs {
  if (spec.type === 'ExternalName' || prev.type === 'ExternalName') return [];
  const ips = strings(spec.clusterIPs);
  const oldIps = strings(prev.clusterIPs);
  const headless = (l: string[]) => l.length === 1 && l[0] === 'None';
  if (headless(ips) && headless(oldIps)) return [];
  const bad = (msg: string) => invalidValue('spec.clusterIPs[0]', stringsValue(spec.clusterIPs), msg);
  const errs: Errs = [];
  if (oldIps.length === ips.length) {
    oldIps.forEach((ip, i) => {
      if (ip !== ips[i]) errs.push(invalidValue(`spec.clusterIPs[${i}]`, stringsValue(spec.clusterIPs), 'may not change once set'));
    });
  } else if (oldIps.length > ips.length) {
    if (ips.length === 0) errs.push(bad('primary clusterIP can not be unset'));
    if (ips.length > 0 && ips[0] !== oldIps[0]) errs.push(bad('may not change once set'));
    if (ips.length === 1 && spec.ipFamilyPolicy !== 'SingleStack')
      errs.push(
        invalidValue(
          'spec.ipFamilyPolicy',
          spec.ipFamilyPolicy ?? null,
          "must be set to 'SingleStack' when releasing the secondary clusterIP",
        ),
      );
  } else if (oldIps.length > 0 && ips[0] !== oldIps[0]) errs.push(bad('may not change once set'));
  return errs;
}

/** ValidateServiceUpdate: cluster IPs once set, and a load balancer's class. */
export function validateServiceUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs = clusterIPsUpdate(spec, prev);
  if (spec.type === 'LoadBalancer' && prev.type === 'LoadBalancer' && spec.loadBalancerClass !== prev.loadBalancerClass)
    errs.push(invalidValue('spec.loadBalancerClass', spec.loadBalancerClass ?? null, 'may not change once set'));
  return errs;
}

export const service: Strategy = {
  prepareForCreate: (o) => normalizeClusterIPs(o),
  prepareForUpdate: normalizeClusterIPs,
  validate: validateService,
  validateUpdate: validateServiceUpdate,
};

// ---- Namespace ----------------------------------------------------------------------------

const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];

/** validateFinalizerName: a qualified name; without a prefix, a standard finalizer. */
export function validateFinalizerName(name: string, path: string): Errs {
  const errs = each(path, name, qualifiedName(name));
  if (!name.includes('/') && !STANDARD_FINALIZERS.includes(name))
    errs.push(invalidValue(path, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  return errs;
}

export const namespaceValidation: Strategy = {
  // SetDefaults_Namespace: a named namespace carries its name as a label from decoding on, so
  // the writer owns it (a generated name gets it from the strategy, owned by nobody).
  decode(o) {
    const meta = o.metadata as unknown;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return;
    const m = meta as { name?: unknown; labels?: unknown };
    if (typeof m.name !== 'string' || m.name === '') return;
    if (m.labels === undefined || m.labels === null) m.labels = {};
    if (typeof m.labels !== 'object' || Array.isArray(m.labels)) return;
    (m.labels as Record<string, unknown>)['kubernetes.io/metadata.name'] = m.name;
  },
  // The reference reports every finalizer on the list's own path (no index).
  validate: (o) => list<string>(obj(o.spec)?.finalizers).flatMap((f) => validateFinalizerName(f, 'spec.finalizers')),
};

// ---- Node ---------------------------------------------------------------------------------

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateNode(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj(o.spec) ?? {};
  const seen = new Set<string>();
  list<J>(spec.taints).forEach((t, i) => {
    // The reference validates node taints under metadata (ValidateNode's fldPath), not spec.
    const p = `metadata.taints[${i}]`;
    const key = str(t.key);
    errs.push(...each(`${p}.key`, key, qualifiedName(key)));
    const value = str(t.value);
    const vm = labelValue(value);
    if (vm.length > 0) errs.push(invalidValue(`${p}.value`, value, vm.join(';')));
    const effect = str(t.effect);
    if (effect === '') errs.push(required(`${p}.effect`));
    else if (!TAINT_EFFECTS.includes(effect)) errs.push(notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
    const id = `${effect}\0${key}`;
    if (seen.has(id)) errs.push({ ...duplicate(p, t), detail: 'taints must be unique by key and effect pair' });
    seen.add(id);
  });
  errs.push(...nodeResources(o));
  const cidrs = list<string>(spec.podCIDRs);
  cidrs.forEach((c, i) => {
    errs.push(...validateCidr(`spec.podCIDRs[${i}]`, c));
  });
  if (cidrs.length > 1) {
    const families = cidrs.map((c) => parseCidr(c)?.net.length);
    const dualStack = families.length === 2 && families.includes(4) && families.includes(16);
    if (!dualStack) errs.push(invalidValue('spec.podCIDRs', stringsValue(cidrs), 'may specify no more than one CIDR for each IP family'));
    const seenCidrs = new Set<string>();
    cidrs.forEach((c, i) => {
      if (seenCidrs.has(c)) errs.push(duplicate(`spec.podCIDRs[${i}]`, c));
      seenCidrs.add(c);
    });
  }
  return errs;
}

/** ValidateNodeResources: capacity and allocatable quantities (the reference's paths are dotted: status.capacity.cpu). */
function nodeResources(o: Obj): Errs {
  const status = obj(o.status) ?? {};
  const errs: Errs = [];
  for (const key of ['capacity', 'allocatable'])
    for (const [k, q] of quantities(status[key])) errs.push(...validateQuantityValue(k, q, `status.${key}.${k}`));
  return errs;
}

/** validateNodeConfigSourceSpec (the deprecated spec.configSource, still validated). */
function nodeConfigSource(source: J, path: string): Errs {
  const cm = obj(source.configMap);
  const errs: Errs = [];
  if (cm) {
    const p = `${path}.configMap`;
    if (str(cm.uid) !== '') errs.push(forbiddenField(`${p}.uid`, 'uid must not be set in spec'));
    if (str(cm.resourceVersion) !== '') errs.push(forbiddenField(`${p}.resourceVersion`, 'resourceVersion must not be set in spec'));
    const ns = str(cm.namespace);
    if (ns === '') errs.push(required(`${p}.namespace`, 'namespace must be set'));
    else errs.push(...each(`${p}.namespace`, ns, dns1123Label(ns)));
    const name = str(cm.name);
    if (name === '') errs.push(required(`${p}.name`, 'name must be set'));
    else errs.push(...each(`${p}.name`, name, dns1123Subdomain(name)));
    const key = str(cm.kubeletConfigKey);
    if (key === '') errs.push(required(`${p}.kubeletConfigKey`, 'kubeletConfigKey must be set'));
    else errs.push(...each(`${p}.kubeletConfigKey`, key, configMapKey(key)));
  } else errs.push(invalidValue(path, source, 'exactly one reference subfield must be non-nil'));
  return errs;
}

/** A NodeAddress as Go's %#v prints it. */
const addressValue = (a: J): GoValue =>
  new GoValue(`core.NodeAddress{Type:${goQuote(str(a.type))}, Address:${goQuote(str(a.address))}}`, a);

const PODCIDR_UPDATE = 'node updates may not change podCIDR except from "" to valid';

/** ValidateNodeUpdate: podCIDRs and providerID only go from unset to set. */
export function validateNodeUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs: Errs = [];
  const cidrs = strings(spec.podCIDRs);
  const oldCidrs = strings(prev.podCIDRs);
  if (oldCidrs.length > 0) {
    if (oldCidrs.length !== cidrs.length) errs.push(forbiddenField('spec.podCIDRs', PODCIDR_UPDATE));
    else
      oldCidrs.forEach((c, i) => {
        if (c !== cidrs[i]) errs.push(forbiddenField('spec.podCIDRs', PODCIDR_UPDATE));
      });
  }
  const providerID = str(prev.providerID);
  if (providerID !== '' && providerID !== str(spec.providerID))
    errs.push(forbiddenField('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  if (str(spec.externalID) !== str(prev.externalID)) errs.push(forbiddenField('spec.externalID', 'may not be updated'));
  const seen = new Set<string>();
  list<J>(obj(o.status)?.addresses).forEach((a, i) => {
    const key = `${str(a.type)}\0${str(a.address)}`;
    if (seen.has(key)) errs.push(duplicate(`status.addresses[${i}]`, addressValue(a)));
    seen.add(key);
  });
  const source = obj(spec.configSource);
  if (source) errs.push(...nodeConfigSource(source, 'spec.configSource'));
  return errs;
}

/** Nodes may carry their status on create (see Strategy.statusOnCreate). */
export const node: Strategy = { validate: validateNode, validateUpdate: validateNodeUpdate, statusOnCreate: true };

// ---- Event --------------------------------------------------------------------------------

const LIMITS = { reportingInstance: 128, action: 128, reason: 128, message: 1024 } as const;

export function validateEvent(o: Obj): Errs {
  const errs: Errs = [];
  const ns = o.metadata.namespace ?? '';
  const involvedNs = str(obj(o.involvedObject)?.namespace);
  const mismatch = () => errs.push(invalidValue('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  if (!o.eventTime) {
    if (involvedNs === '') {
      if (ns !== '' && ns !== 'default') mismatch();
    } else if (ns !== involvedNs) mismatch();
  } else {
    // "New" events (eventTime set) carry the reporting fields.
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') mismatch();
    // The reference names this field by its Go name, ReportingController.
    const controller = str(o.reportingComponent);
    if (controller === '') errs.push(required('reportingController'));
    errs.push(...each('reportingController', controller, qualifiedName(controller)));
    for (const f of ['reportingInstance', 'action', 'reason', 'message'] as const) {
      const v = str(o[f]);
      if (v === '' && f !== 'message') errs.push(required(f));
      if (v.length > LIMITS[f]) errs.push(invalidValue(f, '', `can have at most ${LIMITS[f]} characters`));
    }
  }
  errs.push(...each('namespace', ns, dns1123Subdomain(ns)));
  return errs;
}

export const event: Strategy = { validate: validateEvent };
