/**
 * core/v1 ReplicationController, PodTemplate and Endpoints (the reference's
 * ValidateReplicationController(StatusUpdate), ValidatePodTemplate and ValidateEndpoints).
 */
import type { Obj } from '../../api/meta';
import { parseIP } from '../../api/net';
import { dns1123Label, dns1123Subdomain, forbiddenField, invalidValue, notSupported, qualifiedName, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, IS_NEGATIVE, isValidPortNum, type J, list, map, obj, str, stringMapValue } from './common';
import { validatePodTemplateSpec, validIP } from './core-pod';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

const nonNegative = (v: unknown, path: string): Errs => (typeof v === 'number' && v < 0 ? [invalidValue(path, v, IS_NEGATIVE)] : []);

// ---- ReplicationController ------------------------------------------------------------------

/** ValidateReplicationControllerSpec. */
export function validateReplicationControllerSpec(spec: J): Errs {
  const errs = nonNegative(spec.minReadySeconds, 'spec.minReadySeconds');
  const selector = map<string>(spec.selector);
  if (Object.keys(selector).length === 0) errs.push(required('spec.selector'));
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  const template = obj(spec.template);
  if (!template) {
    errs.push(required('spec.template'));
    return errs;
  }
  const labels = map<string>(obj(template.metadata)?.labels);
  if (Object.keys(selector).length > 0 && Object.entries(selector).some(([k, v]) => labels[k] !== v))
    errs.push(
      invalidValue(
        'spec.template.metadata.labels',
        stringMapValue(obj(template.metadata)?.labels),
        '`selector` does not match template `labels`',
      ),
    );
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const tspec = obj(template.spec) ?? {};
  if (str(tspec.restartPolicy) !== 'Always')
    errs.push(notSupported('spec.template.spec.restartPolicy', str(tspec.restartPolicy), ['Always']));
  if (tspec.activeDeadlineSeconds !== undefined)
    errs.push(
      forbiddenField('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicationController is not Supported'),
    );
  return errs;
}

/** ValidateReplicationControllerStatus. */
export function validateReplicationControllerStatus(status: J): Errs {
  const n = (k: string) => (typeof status[k] === 'number' ? (status[k] as number) : 0);
  const errs: Errs = [];
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'])
    errs.push(...nonNegative(status[k], `status.${k}`));
  const msg = 'cannot be greater than status.replicas';
  for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'])
    if (n(k) > n('replicas')) errs.push(invalidValue(`status.${k}`, n(k), msg));
  if (n('availableReplicas') > n('readyReplicas'))
    errs.push(invalidValue('status.availableReplicas', n('availableReplicas'), 'cannot be greater than readyReplicas'));
  return errs;
}

export const replicationController: Strategy = {
  validate: (o) => [...validateReplicationControllerSpec(obj(o.spec) ?? {}), ...validateReplicationControllerStatus(obj(o.status) ?? {})],
};

// ---- PodTemplate ----------------------------------------------------------------------------

export const podTemplate: Strategy = {
  validate: (o) => validatePodTemplateSpec(obj(o.template) ?? {}, 'template'),
};

// ---- Endpoints ------------------------------------------------------------------------------

/** ValidateNonSpecialIP. */
export function nonSpecialIP(ip: string, path: string): Errs {
  const parsed = parseIP(ip);
  if (!parsed) return [invalidValue(path, ip, 'must be a valid IP address')];
  const b = parsed.bytes;
  const v4 =
    b.length === 4
      ? b
      : b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255
        ? b.slice(12)
        : undefined;
  const errs: Errs = [];
  if (v4) {
    if (v4.every((x) => x === 0)) errs.push(invalidValue(path, ip, `may not be unspecified (${ip})`));
    if (v4[0] === 127) errs.push(invalidValue(path, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
    if (v4[0] === 169 && v4[1] === 254) errs.push(invalidValue(path, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
    if (v4[0] === 224 && v4[1] === 0 && v4[2] === 0)
      errs.push(invalidValue(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
    return errs;
  }
  if (b.every((x) => x === 0)) errs.push(invalidValue(path, ip, `may not be unspecified (${ip})`));
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1)
    errs.push(invalidValue(path, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (b[0] === 0xfe && ((b[1] ?? 0) & 0xc0) === 0x80)
    errs.push(invalidValue(path, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (b[0] === 0xff && ((b[1] ?? 0) & 0x0f) === 0x02)
    errs.push(invalidValue(path, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}

function endpointAddress(a: J, path: string): Errs {
  const ip = str(a.ip);
  const errs = validIP(ip, `${path}.ip`);
  const hostname = str(a.hostname);
  if (hostname !== '') errs.push(...each(`${path}.hostname`, hostname, dns1123Label(hostname)));
  if (typeof a.nodeName === 'string') errs.push(...each(`${path}.nodeName`, a.nodeName, dns1123Subdomain(a.nodeName)));
  errs.push(...nonSpecialIP(ip, `${path}.ip`));
  return errs;
}

function endpointPort(p: J, requireName: boolean, path: string): Errs {
  const errs: Errs = [];
  const name = str(p.name);
  if (requireName && name === '') errs.push(required(`${path}.name`));
  else if (name !== '') errs.push(...each(`${path}.name`, name, dns1123Label(name)));
  const port = typeof p.port === 'number' ? p.port : 0;
  errs.push(...each(`${path}.port`, port, isValidPortNum(port)));
  const protocol = str(p.protocol);
  if (protocol === '') errs.push(required(`${path}.protocol`));
  else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${path}.protocol`, protocol, PROTOCOLS));
  if (typeof p.appProtocol === 'string') errs.push(...each(`${path}.appProtocol`, p.appProtocol, qualifiedName(p.appProtocol)));
  return errs;
}

/** validateEndpointSubsets. */
export function validateEndpoints(o: Obj): Errs {
  const errs: Errs = [];
  list<J>(o.subsets).forEach((ss, i) => {
    const p = `subsets[${i}]`;
    const addresses = list<J>(ss.addresses);
    const notReady = list<J>(ss.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0) errs.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => {
      errs.push(...endpointAddress(a, `${p}.addresses[${j}]`));
    });
    notReady.forEach((a, j) => {
      errs.push(...endpointAddress(a, `${p}.notReadyAddresses[${j}]`));
    });
    const ports = list<J>(ss.ports);
    ports.forEach((port, j) => {
      errs.push(...endpointPort(port, ports.length > 1, `${p}.ports[${j}]`));
    });
  });
  return errs;
}

export const endpoints: Strategy = { validate: validateEndpoints };
