/**
 * storage.svc.io: StorageClass, CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment (the
 * reference's pkg/apis/storage/validation).
 */
import type { Obj } from '../../api/meta';
import { formatQuantity, isNegative, parseQuantity } from '../../api/quantity';
import {
  dns1123Subdomain,
  duplicate,
  type FieldError,
  forbiddenField,
  invalidValue,
  notSupported,
  qualifiedName,
  required,
} from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  each,
  FIELD_IMMUTABLE,
  GoValue,
  IS_NEGATIVE,
  immutable,
  type J,
  list,
  map,
  nonNegative,
  obj,
  selectorValue,
  semanticEqual,
  str,
  validateLabelSelector,
} from './common';

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Ephemeral', 'Persistent'];
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;
/** csiNodeIDLongerMaxLength: the CSINode strategy allows long node IDs. */
const MAX_NODE_ID = 256;

const tooLong = (field: string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  detail: `may not be more than ${max} bytes`,
});

// ---- StorageClass -----------------------------------------------------------------------------

/** validateParameters: at most 512 entries, no empty key, 256 KiB in all. */
function validateParameters(params: Record<string, string>, path: string): Errs {
  const keys = Object.keys(params);
  // The reference reports the count with TooLong, whose text says bytes.
  if (keys.length > MAX_PARAMETERS) return [tooLong(path, MAX_PARAMETERS)];
  const errs: Errs = [];
  let size = 0;
  for (const k of keys) {
    if (k.length < 1) errs.push(invalidValue(path, k, 'field can not be empty.'));
    size += k.length + String(params[k]).length;
  }
  if (size > MAX_PARAMETERS_SIZE) errs.push(tooLong(path, MAX_PARAMETERS_SIZE));
  return errs;
}

/** validateProvisioner: required, a qualified name in lower case (the bad value printed lowered). */
function validateProvisioner(v: string, path: string): Errs {
  if (v === '') return [required(path)];
  return each(path, v.toLowerCase(), qualifiedName(v.toLowerCase()));
}

/**
 * validateAllowedTopologies (ValidateTopologySelectorTerm per term): each expression has values,
 * unique ones, and a label-name key used once per term; no two terms alike.
 */
function validateAllowedTopologies(terms: J[]): Errs {
  const errs: Errs = [];
  const seen: string[] = [];
  terms.forEach((t, i) => {
    const p = `allowedTopologies[${i}].matchLabelExpressions`;
    const byKey = new Map<string, string[]>();
    list<J>(t.matchLabelExpressions).forEach((e, j) => {
      const key = str(e.key);
      const values = list<string>(e.values);
      if (values.length === 0) errs.push(required(`${p}[${j}].values`));
      const set = new Set<string>();
      values.forEach((v, k) => {
        if (set.has(v)) errs.push(duplicate(`${p}[${j}].values[${k}]`, v));
        set.add(v);
      });
      errs.push(...each(`${p}[${j}].key`, key, qualifiedName(key)));
      if (byKey.has(key)) errs.push(duplicate(`${p}[${j}].key`, key));
      byKey.set(key, [...set].sort());
    });
    const canonical = JSON.stringify([...byKey.entries()].sort());
    if (seen.includes(canonical)) errs.push(duplicate(p, ''));
    seen.push(canonical);
  });
  return errs;
}

export function validateStorageClass(o: J): Errs {
  const errs = validateProvisioner(str(o.provisioner), 'provisioner');
  errs.push(...validateParameters(map<string>(o.parameters), 'parameters'));
  const reclaim = str(o.reclaimPolicy);
  if (reclaim !== '' && !RECLAIM_POLICIES.includes(reclaim)) errs.push(notSupported('reclaimPolicy', reclaim, RECLAIM_POLICIES));
  if (o.volumeBindingMode === undefined) errs.push(required('volumeBindingMode'));
  else if (!BINDING_MODES.includes(str(o.volumeBindingMode)))
    errs.push(notSupported('volumeBindingMode', str(o.volumeBindingMode), BINDING_MODES));
  errs.push(...validateAllowedTopologies(list<J>(o.allowedTopologies)));
  return errs;
}

function validateStorageClassUpdate(o: J, old: J): Errs {
  const errs: Errs = [];
  if (!semanticEqual(o.parameters, old.parameters)) errs.push(forbiddenField('parameters', 'updates to parameters are forbidden.'));
  if (str(o.provisioner) !== str(old.provisioner)) errs.push(forbiddenField('provisioner', 'updates to provisioner are forbidden.'));
  if (str(o.reclaimPolicy) !== str(old.reclaimPolicy))
    errs.push(forbiddenField('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  errs.push(...immutable(o.volumeBindingMode, old.volumeBindingMode, 'volumeBindingMode'));
  return errs;
}

export const storageClass: Strategy = {
  validate: (o) => validateStorageClass(o as unknown as J),
  validateUpdate: (o, old) => validateStorageClassUpdate(o as unknown as J, old as unknown as J),
};

// ---- CSIDriver ----------------------------------------------------------------------------------

/** ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain in lower case. */
export function validateCSIDriverName(v: string, path: string): Errs {
  const errs: Errs = [];
  if (v === '') errs.push(required(path));
  if (v.length > 63) errs.push(tooLong(path, 63));
  errs.push(...each(path, v, dns1123Subdomain(v.toLowerCase())));
  return errs;
}

function validateTokenRequests(requests: J[], path: string): Errs {
  const errs: Errs = [];
  const audiences = new Set<string>();
  requests.forEach((r, i) => {
    const p = `${path}[${i}]`;
    const audience = str(r.audience);
    if (audiences.has(audience)) {
      errs.push(duplicate(`${p}.audience`, audience));
      return;
    }
    audiences.add(audience);
    const seconds = r.expirationSeconds;
    if (typeof seconds === 'number') {
      if (seconds < 600) errs.push(invalidValue(`${p}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes'));
      if (seconds > 2 ** 32)
        errs.push(invalidValue(`${p}.expirationSeconds`, seconds, 'may not specify a duration larger than 2^32 seconds'));
    }
  });
  return errs;
}

function validateCSIDriverSpec(spec: J): Errs {
  const errs: Errs = [];
  if (spec.attachRequired === undefined) errs.push(required('spec.attachedRequired'));
  if (spec.podInfoOnMount === undefined) errs.push(required('spec.podInfoOnMount'));
  if (spec.storageCapacity === undefined) errs.push(required('spec.storageCapacity'));
  if (spec.fsGroupPolicy !== undefined && !FS_GROUP_POLICIES.includes(str(spec.fsGroupPolicy)))
    errs.push(notSupported('spec.fsGroupPolicy', str(spec.fsGroupPolicy), FS_GROUP_POLICIES));
  errs.push(...validateTokenRequests(list<J>(spec.tokenRequests), 'spec.tokenRequests'));
  list<string>(spec.volumeLifecycleModes).forEach((m) => {
    if (!LIFECYCLE_MODES.includes(m)) errs.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
  });
  if (spec.seLinuxMount === undefined) errs.push(required('spec.seLinuxMount'));
  const period = spec.nodeAllocatableUpdatePeriodSeconds;
  if (typeof period === 'number' && period < 10)
    errs.push(invalidValue('spec.nodeAllocatableUpdatePeriodSeconds', period, 'must be greater than or equal to 10 seconds'));
  return errs;
}

export const csiDriver: Strategy = {
  // The name is a DNS subdomain (the generic metadata rules).
  validate: (o) => validateCSIDriverSpec(map(o.spec)),
  // attachRequired and volumeLifecycleModes never change (the reference's path says attachedRequired).
  validateUpdate: (o, old) => [
    ...immutable(map(o.spec).attachRequired, map(old.spec).attachRequired, 'spec.attachedRequired'),
    ...immutable(
      map(o.spec).volumeLifecycleModes,
      map(old.spec).volumeLifecycleModes,
      'spec.volumeLifecycleModes',
      new GoValue(goModes(map(o.spec).volumeLifecycleModes), map(o.spec).volumeLifecycleModes ?? null),
    ),
  ],
};

function goModes(v: unknown): string {
  if (!Array.isArray(v)) return '[]storage.VolumeLifecycleMode(nil)';
  return `[]storage.VolumeLifecycleMode{${v.map((m) => JSON.stringify(String(m))).join(', ')}}`;
}

// ---- CSINode ------------------------------------------------------------------------------------

function validateCSINodeDrivers(drivers: J[]): Errs {
  const errs: Errs = [];
  const names = new Set<string>();
  drivers.forEach((d, i) => {
    const p = `spec.drivers[${i}]`;
    const name = str(d.name);
    errs.push(...validateCSIDriverName(name, `${p}.name`));
    const nodeID = str(d.nodeID);
    if (nodeID === '') errs.push(required(`${p}.nodeID`));
    if (nodeID.length > MAX_NODE_ID) errs.push(invalidValue(`${p}.nodeID`, nodeID, `must be ${MAX_NODE_ID} characters or less`));
    const count = obj(d.allocatable)?.count;
    if (typeof count === 'number') errs.push(...nonNegative(count, `${p}.allocatable.count`));
    if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
    names.add(name);
    const keys = new Set<string>();
    for (const k of list<string>(d.topologyKeys)) {
      if (k === '') errs.push(required(p, k));
      if (keys.has(k)) errs.push(duplicate(p, k));
      keys.add(k);
      errs.push(...each(p, k, qualifiedName(k)));
    }
  });
  return errs;
}

const goStrings = (v: unknown): string =>
  Array.isArray(v) ? `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}` : '[]string(nil)';

/** A CSINodeDriver as Go's %#v prints it (the bad value of a changed entry; pointers by value). */
function goDriver(d: J): string {
  const count = obj(d.allocatable)?.count;
  const alloc = obj(d.allocatable)
    ? `&storage.VolumeNodeResources{Count:${typeof count === 'number' ? count : 'nil'}}`
    : '(*storage.VolumeNodeResources)(nil)';
  return `storage.CSINodeDriver{Name:${JSON.stringify(str(d.name))}, NodeID:${JSON.stringify(str(d.nodeID))}, TopologyKeys:${goStrings(d.topologyKeys)}, Allocatable:${alloc}}`;
}

/** ValidateCSINodeUpdate: an existing driver entry never changes, allocatable included (drivers may come and go). */
function validateCSINodeUpdate(o: Obj, old: Obj): Errs {
  const errs: Errs = [];
  const next = list<J>(map(o.spec).drivers);
  for (const prev of list<J>(map(old.spec).drivers)) {
    for (const d of next) {
      if (d.name === prev.name && !semanticEqual(d, prev))
        errs.push(invalidValue('spec.drivers', new GoValue(goDriver(d), d), FIELD_IMMUTABLE));
    }
  }
  return errs;
}

export const csiNode: Strategy = {
  validate: (o) => validateCSINodeDrivers(list<J>(map(o.spec).drivers)),
  validateUpdate: validateCSINodeUpdate,
};

// ---- CSIStorageCapacity -------------------------------------------------------------------------

export const csiStorageCapacity: Strategy = {
  validate: (o) => {
    const j = o as unknown as J;
    const errs = validateLabelSelector(j.nodeTopology, 'nodeTopology');
    // ValidateClassName: an empty name fails the subdomain pattern (no Required).
    const sc = str(j.storageClassName);
    errs.push(...each('storageClassName', sc, dns1123Subdomain(sc)));
    const q = parseQuantity(j.capacity);
    if (q && isNegative(q)) errs.push(invalidValue('capacity', formatQuantity(q), IS_NEGATIVE));
    return errs;
  },
  // The inputs of the CSI GetCapacity call never change.
  validateUpdate: (o, old) => {
    const [j, prev] = [o as unknown as J, old as unknown as J];
    const errs: Errs = [];
    if (!semanticEqual(j.nodeTopology, prev.nodeTopology)) {
      const bad = j.nodeTopology === undefined ? null : selectorValue(map(j.nodeTopology));
      errs.push(invalidValue('nodeTopology', bad, FIELD_IMMUTABLE));
    }
    if (str(j.storageClassName) !== str(prev.storageClassName))
      errs.push(invalidValue('storageClassName', str(j.storageClassName), FIELD_IMMUTABLE));
    return errs;
  },
};

// ---- VolumeAttachment ---------------------------------------------------------------------------

const SOURCE_ONE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';

function validateVolumeAttachmentSpec(spec: J): Errs {
  const errs: Errs = [];
  const attacher = str(spec.attacher);
  if (attacher === '') errs.push(required('spec.attacher'));
  const source = map(spec.source);
  const pv = source.persistentVolumeName;
  const inline = source.inlineVolumeSpec;
  if (inline === undefined && pv === undefined) errs.push(required('spec.source', SOURCE_ONE));
  else if (inline !== undefined && pv !== undefined) errs.push(forbiddenField('spec.source', SOURCE_ONE));
  else if (pv !== undefined && str(pv) === '')
    errs.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  const node = str(spec.nodeName);
  errs.push(...each('spec.nodeName', node, dns1123Subdomain(node)));
  return errs;
}

/** validateVolumeError: a message of at most 1024 bytes (the text names the 256 KiB metadata limit, as the reference's). */
function validateVolumeError(e: unknown, path: string): Errs {
  const err = obj(e);
  if (!err) return [];
  const errs: Errs = [];
  if (str(err.message).length > 1024) errs.push(tooLong(`${path}.message`, MAX_PARAMETERS_SIZE));
  if (typeof err.errorCode === 'number' && err.errorCode < 0)
    errs.push(invalidValue(`${path}.errorCode`, err.errorCode, 'must be between 0 and 2147483647, inclusive'));
  return errs;
}

function validateVolumeAttachmentStatus(status: J): Errs {
  const errs: Errs = [];
  let size = 0;
  for (const [k, v] of Object.entries(map<string>(status.attachmentMetadata))) size += k.length + String(v).length;
  if (size > MAX_PARAMETERS_SIZE) errs.push(tooLong('status.attachmentMetadata', MAX_PARAMETERS_SIZE));
  errs.push(...validateVolumeError(status.attachError, 'status.attachError'));
  errs.push(...validateVolumeError(status.detachError, 'status.detachError'));
  return errs;
}

/** ValidateVolumeAttachment and its v1 additions (the attacher a CSI driver name, a PV name a subdomain). */
export function validateVolumeAttachment(o: Obj): Errs {
  const spec = map(o.spec);
  const errs = [...validateVolumeAttachmentSpec(spec), ...validateVolumeAttachmentStatus(map(o.status))];
  errs.push(...validateCSIDriverName(str(spec.attacher), 'spec.attacher'));
  const pv = map(spec.source).persistentVolumeName;
  if (typeof pv === 'string' && pv !== '') errs.push(...each('spec.source.persistentVolumeName', pv, dns1123Subdomain(pv)));
  return errs;
}

/** The spec as Go's %#v prints it, pointers shown by their values (the reference prints addresses). */
function goAttachmentSpec(spec: J): string {
  const source = map(spec.source);
  const pv = typeof source.persistentVolumeName === 'string' ? JSON.stringify(source.persistentVolumeName) : '(*string)(nil)';
  const inline = source.inlineVolumeSpec === undefined ? '(*core.PersistentVolumeSpec)(nil)' : '&core.PersistentVolumeSpec{...}';
  return `storage.VolumeAttachmentSpec{Attacher:${JSON.stringify(str(spec.attacher))}, Source:storage.VolumeAttachmentSource{PersistentVolumeName:${pv}, InlineVolumeSpec:${inline}}, NodeName:${JSON.stringify(str(spec.nodeName))}}`;
}

export const volumeAttachment: Strategy = {
  prepareForCreate(o) {
    o.status = { attached: false };
  },
  validate: validateVolumeAttachment,
  validateUpdate: (o, old) =>
    semanticEqual(o.spec, old.spec)
      ? []
      : [invalidValue('spec', new GoValue(goAttachmentSpec(map(o.spec)), o.spec ?? null), FIELD_IMMUTABLE)],
};
