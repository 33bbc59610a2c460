/**
 * core/v1 pods and pod templates: the basic PodSpec rules of the reference's ValidatePodSpec
 * (containers, init containers, ports, restart and DNS policy). Pod templates of apps kinds reuse
 * them through validatePodTemplateSpec.
 */
import type { Obj } from '../../api/meta';
import { dns1123Label, duplicate, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, isValidPortName, isValidPortNum, type J, list, obj, str, validateLabels } from './common';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];

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
  return errs;
}

/** ValidatePodTemplateSpec (basics): template labels and the pod spec. */
export function validatePodTemplateSpec(template: J, path: string): Errs {
  const meta = obj(template.metadata) ?? {};
  return [...validateLabels(meta.labels, `${path}.labels`), ...validatePodSpec(obj(template.spec) ?? {}, `${path}.spec`)];
}

export const pod: Strategy = {
  validate: (o: Obj) => validatePodSpec(obj(o.spec) ?? {}, 'spec'),
};
