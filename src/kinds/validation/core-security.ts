/**
 * core/v1 security contexts: the container's (ValidateSecurityContext) and the pod's
 * (validatePodSpecSecurityContext), with their seccomp and AppArmor profiles and sysctls.
 * Windows options are not checked. Privileged containers are allowed (the reference's
 * --allow-privileged=true, as kubeadm configures it).
 */
import { forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import { type Errs, items, type J, obj, pushAll, str } from './common';
import { localDescendingPath } from './core-volumes';

const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const APPARMOR_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const PROC_MOUNTS = ['Default', 'Unmasked'];
const FS_GROUP_POLICIES = ['Always', 'OnRootMismatch'];
const SUPPLEMENTAL_GROUPS_POLICIES = ['Merge', 'Strict'];
const SELINUX_CHANGE_POLICIES = ['MountOption', 'Recursive'];
const MAX_ID = 2147483647;
const ID_RANGE = `must be between 0 and ${MAX_ID}, inclusive`;
const SYSCTL = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const SYSCTL_MSG = `must have at most 253 characters and match regex ${SYSCTL.source}`;

/** validateSeccompProfileField. */
function seccomp(sp: J | undefined, path: string): Errs {
  if (!sp) return [];
  const errs: Errs = [];
  const type = str(sp.type);
  if (type === '') errs.push(required(`${path}.type`, 'type is required when seccompProfile is set'));
  else if (!SECCOMP_TYPES.includes(type)) errs.push(notSupported(`${path}.type`, type, SECCOMP_TYPES));
  if (type === 'Localhost') {
    if (typeof sp.localhostProfile !== 'string')
      errs.push(required(`${path}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else pushAll(errs, localDescendingPath(sp.localhostProfile, `${path}.localhostProfile`));
  } else if (sp.localhostProfile !== undefined)
    errs.push(invalidValue(`${path}.localhostProfile`, sp, 'can only be set when seccomp type is Localhost'));
  return errs;
}

/** ValidateAppArmorProfileField. */
function appArmor(p: J | undefined, path: string): Errs {
  if (!p) return [];
  const type = str(p.type);
  const local = p.localhostProfile;
  switch (type) {
    case 'Localhost': {
      if (typeof local !== 'string') return [required(`${path}.localhostProfile`, 'must be set when AppArmor type is Localhost')];
      const errs: Errs = [];
      if (local.trim() !== local) errs.push(invalidValue(`${path}.localhostProfile`, local, 'must not be padded with whitespace'));
      else if (local === '') errs.push(required(`${path}.localhostProfile`, 'must be set when AppArmor type is Localhost'));
      if (local.length > 4095)
        errs.push({ type: 'FieldValueTooLong', field: `${path}.localhostProfile`, detail: 'may not be more than 4095 bytes' });
      return errs;
    }
    case 'RuntimeDefault':
    case 'Unconfined':
      return local === undefined
        ? []
        : [invalidValue(`${path}.localhostProfile`, local, 'can only be set when AppArmor type is Localhost')];
    case '':
      return [required(`${path}.type`, 'type is required when appArmorProfile is set')];
    default:
      return [notSupported(`${path}.type`, type, APPARMOR_TYPES)];
  }
}

/** IsValidUserID / IsValidGroupID into `errs`, the path built only for a bad ID. */
function pushId(errs: Errs, v: unknown, path: string, field: string): void {
  if (typeof v === 'number' && (v < 0 || v > MAX_ID)) errs.push(invalidValue(`${path}.${field}`, v, ID_RANGE));
}

/** ValidateSecurityContext (a container's), into `errs`. */
export function validateSecurityContext(errs: Errs, sc: J, path: string, hostUsers: boolean): void {
  pushId(errs, sc.runAsUser, path, 'runAsUser');
  pushId(errs, sc.runAsGroup, path, 'runAsGroup');
  if (typeof sc.procMount === 'string') {
    if (!PROC_MOUNTS.includes(sc.procMount)) errs.push(notSupported(`${path}.procMount`, sc.procMount, PROC_MOUNTS));
    if (hostUsers && sc.procMount === 'Unmasked')
      errs.push(invalidValue(`${path}.procMount`, sc.procMount, '`hostUsers` must be false to use `Unmasked`'));
  }
  const sp = obj(sc.seccompProfile);
  if (sp) pushAll(errs, seccomp(sp, `${path}.seccompProfile`));
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true)
      errs.push(invalidValue(path, sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    if (items<string>(obj(sc.capabilities)?.add).includes('CAP_SYS_ADMIN'))
      errs.push(invalidValue(path, sc, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
  }
  const aa = obj(sc.appArmorProfile);
  if (aa) pushAll(errs, appArmor(aa, `${path}.appArmorProfile`));
}

/** The namespace a sysctl belongs to (utilsysctl.GetNamespace): net, ipc or none. */
function sysctlNamespace(name: string): 'net' | 'ipc' | '' {
  if (name.startsWith('net.')) return 'net';
  if (name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name === 'kernel.sem' || name.startsWith('fs.mqueue.'))
    return 'ipc';
  return '';
}

function sysctls(list: readonly J[], spec: J, path: string): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  list.forEach((s, i) => {
    const p = `${path}[${i}].name`;
    const name = str(s.name);
    if (name === '') errs.push(required(p));
    else if (name.length > 253 || !SYSCTL.test(name)) errs.push(invalidValue(p, name, SYSCTL_MSG));
    else if (names.has(name)) errs.push({ type: 'FieldValueDuplicate', field: p, detail: '', badValue: name });
    const ns = sysctlNamespace(name);
    if (spec.hostNetwork === true && ns === 'net') errs.push(invalidValue(p, name, "may not be specified when 'hostNetwork' is true"));
    else if (spec.hostIPC === true && ns === 'ipc') errs.push(invalidValue(p, name, "may not be specified when 'hostIPC' is true"));
    names.add(name);
  });
  return errs;
}

/**
 * validatePodSpecSecurityContext at `path` (`spec.securityContext`); the reference's internal
 * form keeps shareProcessNamespace and the host namespaces there, so their errors name it too.
 */
export function validatePodSecurityContext(errs: Errs, spec: J, path: string): void {
  const sc = obj(spec.securityContext);
  if (!sc) return;
  pushId(errs, sc.fsGroup, path, 'fsGroup');
  pushId(errs, sc.runAsUser, path, 'runAsUser');
  pushId(errs, sc.runAsGroup, path, 'runAsGroup');
  const groups = items(sc.supplementalGroups);
  for (let i = 0; i < groups.length; i++) pushId(errs, groups[i], path, `supplementalGroups[${i}]`);
  if (spec.shareProcessNamespace === true && spec.hostPID === true)
    errs.push(invalidValue(`${path}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  const sysctlList = items<J>(sc.sysctls);
  if (sysctlList.length > 0) pushAll(errs, sysctls(sysctlList, spec, `${path}.sysctls`));
  if (typeof sc.fsGroupChangePolicy === 'string' && !FS_GROUP_POLICIES.includes(sc.fsGroupChangePolicy))
    errs.push(notSupported(`${path}.fsGroupChangePolicy`, sc.fsGroupChangePolicy, FS_GROUP_POLICIES));
  const sp = obj(sc.seccompProfile);
  if (sp) pushAll(errs, seccomp(sp, `${path}.seccompProfile`));
  const aa = obj(sc.appArmorProfile);
  if (aa) pushAll(errs, appArmor(aa, `${path}.appArmorProfile`));
  if (typeof sc.supplementalGroupsPolicy === 'string' && !SUPPLEMENTAL_GROUPS_POLICIES.includes(sc.supplementalGroupsPolicy))
    errs.push(notSupported(`${path}.supplementalGroupsPolicy`, sc.supplementalGroupsPolicy, SUPPLEMENTAL_GROUPS_POLICIES));
  if (typeof sc.seLinuxChangePolicy === 'string' && !SELINUX_CHANGE_POLICIES.includes(sc.seLinuxChangePolicy))
    errs.push(notSupported(`${path}.seLinuxChangePolicy`, sc.seLinuxChangePolicy, SELINUX_CHANGE_POLICIES));
}

/** validateHostUsers: a pod in its own user namespace shares no other namespace with the host. */
export function validateHostUsers(spec: J, path: string): Errs {
  if (spec.hostUsers !== false) return [];
  const errs: Errs = [];
  if (spec.hostNetwork === true) errs.push(forbiddenField(`${path}.hostNetwork`, 'when `pod.Spec.HostUsers` is false'));
  if (spec.hostPID === true) errs.push(forbiddenField(`${path}.HostPID`, 'when `pod.Spec.HostUsers` is false'));
  if (spec.hostIPC === true) errs.push(forbiddenField(`${path}.HostIPC`, 'when `pod.Spec.HostUsers` is false'));
  return errs;
}

const WINDOWS = 'cannot be set for a windows pod';
/** The pod security context fields checked after shareProcessNamespace, in the reference's order. */
const POD_SC_NOT_ON_WINDOWS = ['runAsUser', 'runAsGroup', 'supplementalGroups', 'supplementalGroupsPolicy', 'seLinuxChangePolicy'];
const CONTAINER_SC_NOT_ON_WINDOWS = [
  'appArmorProfile',
  'seLinuxOptions',
  'seccompProfile',
  'capabilities',
  'readOnlyRootFilesystem',
  'privileged',
  'allowPrivilegeEscalation',
  'procMount',
  'runAsUser',
  'runAsGroup',
];

/** podshelper.VisitContainersWithPath's order: init, regular, ephemeral containers. */
function containersWithPath(spec: J, path: string): [J, string][] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((key) =>
    items<J>(spec[key]).map((c, i): [J, string] => [c, `${path}.${key}[${i}]`]),
  );
}

/** validateLinux / validateWindows: the security settings the pod's spec.os rules out. */
export function validateOSSecurity(spec: J, path: string): Errs {
  const os = str(obj(spec.os)?.name);
  const errs: Errs = [];
  const sc = obj(spec.securityContext);
  if (os === 'linux') {
    if (sc?.windowsOptions !== undefined)
      errs.push(forbiddenField(`${path}.securityContext.windowsOptions`, 'windows options cannot be set for a linux pod'));
    for (const [c, p] of containersWithPath(spec, path))
      if (obj(c.securityContext)?.windowsOptions !== undefined)
        errs.push(forbiddenField(`${p}.securityContext.windowsOptions`, 'windows options cannot be set for a linux pod'));
    return errs;
  }
  if (os !== 'windows') return errs;
  // The reference checks these on its internal PodSecurityContext, which holds the v1 spec's host fields.
  const checks: [boolean, string][] = [
    [sc?.appArmorProfile !== undefined, `${path}.securityContext.appArmorProfile`],
    [sc?.seLinuxOptions !== undefined, `${path}.securityContext.seLinuxOptions`],
    [spec.hostUsers !== undefined, `${path}.hostUsers`],
    [spec.hostPID === true, `${path}.hostPID`],
    [spec.hostIPC === true, `${path}.hostIPC`],
    [sc?.seccompProfile !== undefined, `${path}.securityContext.seccompProfile`],
    [sc?.fsGroup !== undefined, `${path}.securityContext.fsGroup`],
    [sc?.fsGroupChangePolicy !== undefined, `${path}.securityContext.fsGroupChangePolicy`],
    [items(sc?.sysctls).length > 0, `${path}.securityContext.sysctls`],
    [spec.shareProcessNamespace !== undefined, `${path}.shareProcessNamespace`],
  ];
  for (const f of POD_SC_NOT_ON_WINDOWS) checks.push([sc?.[f] !== undefined, `${path}.securityContext.${f}`]);
  for (const [bad, p] of checks) if (bad) errs.push(forbiddenField(p, WINDOWS));
  for (const [c, p] of containersWithPath(spec, path)) {
    const csc = obj(c.securityContext);
    if (!csc) continue;
    for (const f of CONTAINER_SC_NOT_ON_WINDOWS) if (csc[f] !== undefined) errs.push(forbiddenField(`${p}.securityContext.${f}`, WINDOWS));
  }
  return errs;
}
