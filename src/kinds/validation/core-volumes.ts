/**
 * core/v1 volumes: the pod's volume sources (exactly one per volume, each source's own fields)
 * and the PersistentVolumeClaim spec (which generic ephemeral volumes embed), as the reference's
 * ValidateVolumes and ValidatePersistentVolumeClaimSpec. The containers' volume mounts and
 * devices are in core-containers.ts.
 */
import { formatQuantity, isNegative, parseQuantity } from '../../api/quantity';
import {
  dns1123Label,
  dns1123Subdomain,
  duplicate,
  forbiddenField,
  invalidValue,
  notSupported,
  qualifiedName,
  required,
} from '../../api/validation';
import { type Errs, each, items, type J, map, obj, pushAll, pushEach, str, validateLabelSelector } from './common';

export const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';
const MORE_THAN_ONE = 'may not specify more than 1 volume type';
export const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
export const VOLUME_MODES = ['Block', 'Filesystem'];

/** The volumes of a pod by name (those that validated), as ValidateVolumes returns them. */
export type Volumes = Map<string, J>;

// ---- paths ----------------------------------------------------------------------------------

/** validatePathNoBacksteps: no `..` element. */
export function noBacksteps(p: string, path: string): Errs {
  return p.split('/').includes('..') ? [invalidValue(path, p, "must not contain '..'")] : [];
}

/** validateLocalDescendingPath: relative, no `..` element. */
export function localDescendingPath(p: string, path: string): Errs {
  const errs: Errs = p.startsWith('/') ? [invalidValue(path, p, 'must be a relative path')] : [];
  return [...errs, ...noBacksteps(p, path)];
}

/** ValidateLocalNonReservedPath: a local descending path that does not start with `..`. */
export function localNonReservedPath(p: string, path: string): Errs {
  const errs = localDescendingPath(p, path);
  if (p.startsWith('..') && !p.startsWith('../')) errs.push(invalidValue(path, p, "must not start with '..'"));
  return errs;
}

/** A file mode in 0..0777, into `errs` (at `${path}.${field}`). */
function fileMode(errs: Errs, v: unknown, path: string, field: string): void {
  if (typeof v === 'number' && (v > 0o777 || v < 0)) errs.push(invalidValue(`${path}.${field}`, v, FILE_MODE));
}

function keyToPath(kp: J, path: string): Errs {
  const errs: Errs = [];
  if (str(kp.key) === '') errs.push(required(`${path}.key`));
  if (str(kp.path) === '') errs.push(required(`${path}.path`));
  pushAll(errs, localNonReservedPath(str(kp.path), `${path}.path`));
  fileMode(errs, kp.mode, path, 'mode');
  return errs;
}

// ---- sources shared with persistent volumes -------------------------------------------------

export function hostPathSource(s: J, path: string): Errs {
  const p = str(s.path);
  if (p === '') return [required(`${path}.path`)];
  const errs = noBacksteps(p, `${path}.path`);
  if (s.type !== undefined && !HOST_PATH_TYPES.includes(str(s.type))) errs.push(notSupported(`${path}.type`, str(s.type), HOST_PATH_TYPES));
  return errs;
}

export function nfsSource(s: J, path: string): Errs {
  const errs: Errs = [];
  if (str(s.server) === '') errs.push(required(`${path}.server`));
  if (str(s.path) === '') errs.push(required(`${path}.path`));
  if (!str(s.path).startsWith('/')) errs.push(invalidValue(`${path}.path`, str(s.path), 'must be an absolute path'));
  return errs;
}

/** ValidateCSIDriverName. */
export function csiDriverName(name: string, path: string): Errs {
  const errs: Errs = [];
  if (name === '') errs.push(required(path));
  if (name.length > 63) errs.push({ type: 'FieldValueTooLong', field: path, detail: 'may not be more than 63 bytes' });
  pushAll(errs, each(path, name, dns1123Subdomain(name.toLowerCase())));
  return errs;
}

const PARTITION = 'must be between 1 and 255, inclusive';
const partition = (v: unknown, path: string): Errs =>
  typeof v === 'number' && (v < 0 || v > 255) ? [invalidValue(path, v, PARTITION)] : [];

/** Sources whose rules are required fields (and a partition number), by JSON key. */
export const SIMPLE_SOURCES = {
  gitRepo: (s, p) => [
    ...(str(s.repository) === '' ? [required(`${p}.repository`)] : []),
    ...localDescendingPath(str(s.directory), `${p}.directory`),
  ],
  // The reference validates gcePersistentDisk under "persistentDisk".
  gcePersistentDisk: (s, p) => {
    const q = p.replace(/gcePersistentDisk$/, 'persistentDisk');
    return [...(str(s.pdName) === '' ? [required(`${q}.pdName`)] : []), ...partition(s.partition, `${q}.partition`)];
  },
  awsElasticBlockStore: (s, p) => [
    ...(str(s.volumeID) === '' ? [required(`${p}.volumeID`)] : []),
    ...partition(s.partition, `${p}.partition`),
  ],
  iscsi: (s, p) => {
    const errs: Errs = [];
    if (str(s.targetPortal) === '') errs.push(required(`${p}.targetPortal`));
    const iqn = str(s.iqn);
    if (iqn === '') errs.push(required(`${p}.iqn`));
    else if (!/^(iqn|eui|naa)/.test(iqn)) errs.push(invalidValue(`${p}.iqn`, iqn, 'must be valid format starting with iqn, eui, or naa'));
    if (typeof s.lun === 'number' && (s.lun < 0 || s.lun > 255))
      errs.push(invalidValue(`${p}.lun`, s.lun, 'must be between 0 and 255, inclusive'));
    if ((s.chapAuthDiscovery === true || s.chapAuthSession === true) && s.secretRef === undefined) errs.push(required(`${p}.secretRef`));
    return errs;
  },
  glusterfs: (s, p) => [
    ...(str(s.endpoints) === '' ? [required(`${p}.endpoints`)] : []),
    ...(str(s.path) === '' ? [required(`${p}.path`)] : []),
  ],
  flocker: (s, p) => {
    const name = str(s.datasetName);
    const uuid = str(s.datasetUUID);
    const errs: Errs = [];
    if (name === '' && uuid === '') errs.push(required(p, 'one of datasetName and datasetUUID is required'));
    if (name !== '' && uuid !== '')
      errs.push(invalidValue(p, 'resource', 'datasetName and datasetUUID can not be specified simultaneously'));
    if (name.includes('/')) errs.push(invalidValue(`${p}.datasetName`, name, "must not contain '/'"));
    return errs;
  },
  rbd: (s, p) => [
    ...(items(s.monitors).length === 0 ? [required(`${p}.monitors`)] : []),
    ...(str(s.image) === '' ? [required(`${p}.image`)] : []),
  ],
  cinder: (s, p) => (str(s.volumeID) === '' ? [required(`${p}.volumeID`)] : []),
  cephfs: (s, p) => (items(s.monitors).length === 0 ? [required(`${p}.monitors`)] : []),
  quobyte: (s, p) => [
    ...(str(s.registry) === '' ? [required(`${p}.registry`, 'must be a host:port pair or multiple pairs separated by commas')] : []),
    ...(str(s.volume) === '' ? [required(`${p}.volume`)] : []),
  ],
  fc: (s, p) => {
    const wwns = items(s.targetWWNs);
    const errs: Errs = [];
    if (wwns.length === 0 && items(s.wwids).length === 0)
      errs.push(required(`${p}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
    if (wwns.length > 0 && items(s.wwids).length > 0)
      errs.push(invalidValue(`${p}.targetWWNs`, wwns, 'targetWWNs and wwids can not be specified simultaneously'));
    if (wwns.length > 0 && typeof s.lun !== 'number') errs.push(required(`${p}.lun`, 'lun is required if targetWWNs is specified'));
    return errs;
  },
  flexVolume: (s, p) => (str(s.driver) === '' ? [required(`${p}.driver`)] : []),
  azureFile: (s, p) => [
    ...(str(s.secretName) === '' ? [required(`${p}.secretName`)] : []),
    ...(str(s.shareName) === '' ? [required(`${p}.shareName`)] : []),
  ],
  vsphereVolume: (s, p) => (str(s.volumePath) === '' ? [required(`${p}.volumePath`)] : []),
  photonPersistentDisk: (s, p) => (str(s.pdID) === '' ? [required(`${p}.pdID`)] : []),
  portworxVolume: (s, p) => (str(s.volumeID) === '' ? [required(`${p}.volumeID`)] : []),
  azureDisk: (s, p) => [
    ...(str(s.diskName) === '' ? [required(`${p}.diskName`)] : []),
    ...(str(s.diskURI) === '' ? [required(`${p}.diskURI`)] : []),
  ],
  storageos: (s, p) =>
    str(s.volumeName) === '' ? [required(`${p}.volumeName`)] : each(`${p}.volumeName`, str(s.volumeName), dns1123Label(str(s.volumeName))),
  scaleIO: (s, p) => ['gateway', 'system', 'volumeName'].filter((k) => str(s[k]) === '').map((k) => required(`${p}.${k}`)),
  local: (s, p) => (str(s.path) === '' ? [required(`${p}.path`)] : noBacksteps(str(s.path), `${p}.path`)),
} satisfies Record<string, (s: J, path: string) => Errs>;

// ---- pod volume sources ---------------------------------------------------------------------

const VOLUME_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.labels', 'metadata.annotations', 'metadata.uid'];
/** The pod fields ConvertDownwardAPIFieldLabel knows (the env and volume sets are subsets). */
const CONVERTIBLE_FIELDS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

/** validateObjectFieldSelector (the volume's set of field paths, or the env's), into `errs`. */
export function objectFieldSelector(errs: Errs, fs: J, allowed: readonly string[], path: string): void {
  const apiVersion = str(fs.apiVersion);
  const fp = str(fs.fieldPath);
  // The common case: every allowed path is one ConvertDownwardAPIFieldLabel knows.
  if (apiVersion === 'v1' && allowed.includes(fp)) return;
  if (apiVersion === '') {
    errs.push(required(`${path}.apiVersion`));
    return;
  }
  if (fp === '') {
    errs.push(required(`${path}.fieldPath`));
    return;
  }
  // ConvertDownwardAPIFieldLabel first: v1 and the pod fields it knows.
  const convertError = apiVersion !== 'v1' ? `unsupported pod version: ${apiVersion}` : undefined;
  const known = /^metadata\.(annotations|labels)(\[.*\])?$/.test(fp) || CONVERTIBLE_FIELDS.includes(fp);
  if (convertError || !known) {
    errs.push(invalidValue(`${path}.fieldPath`, fp, `error converting fieldPath: ${convertError ?? `field label not supported: ${fp}`}`));
    return;
  }
  const sub = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(fp);
  if (sub) {
    const key = sub[1] === 'metadata.annotations' ? (sub[2] ?? '').toLowerCase() : (sub[2] ?? '');
    pushEach(errs, path, key, qualifiedName(key));
    return;
  }
  if (!allowed.includes(fp)) errs.push(notSupported(`${path}.fieldPath`, fp, [...allowed].sort()));
}

const RESOURCE_FIELDS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];

/** validateContainerResourceFieldSelector, into `errs`. */
export function resourceFieldSelector(errs: Errs, fs: J, path: string, volume: boolean): void {
  const resource = str(fs.resource);
  if (volume && str(fs.containerName) === '') errs.push(required(`${path}.containerName`));
  else if (resource === '') errs.push(required(`${path}.resource`));
  else if (!RESOURCE_FIELDS.includes(resource) && !/^(requests|limits)\.hugepages-/.test(resource))
    errs.push(notSupported(`${path}.resource`, resource, RESOURCE_FIELDS));
}

function downwardAPIFile(file: J, path: string): Errs {
  const errs: Errs = [];
  if (str(file.path) === '') errs.push(required(`${path}.path`));
  pushAll(errs, localNonReservedPath(str(file.path), `${path}.path`));
  const fieldRef = obj(file.fieldRef);
  const resourceRef = obj(file.resourceFieldRef);
  if (fieldRef) {
    objectFieldSelector(errs, fieldRef, VOLUME_FIELD_PATHS, `${path}.fieldRef`);
    if (resourceRef) errs.push(invalidValue(path, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (resourceRef) resourceFieldSelector(errs, resourceRef, `${path}.resourceFieldRef`, true);
  else errs.push(required(path, 'one of fieldRef and resourceFieldRef is required'));
  fileMode(errs, file.mode, path, 'mode');
  return errs;
}

function projectedSource(s: J, path: string): Errs {
  const errs: Errs = [];
  fileMode(errs, s.defaultMode, path, 'defaultMode');
  const paths = new Set<string>();
  const claim = (p: string, bad: unknown) => {
    if (paths.has(p)) errs.push(invalidValue(path, bad, 'conflicting duplicate paths'));
    paths.add(p);
  };
  items<J>(s.sources).forEach((src, i) => {
    const sp = `${path}.sources[${i}]`;
    let n = 0;
    for (const key of ['secret', 'configMap'] as const) {
      const ref = obj(src[key]);
      if (!ref) continue;
      n++;
      if (str(ref.name) === '') errs.push(required(`${sp}.${key}.name`));
      items<J>(ref.items).forEach((kp, j) => {
        pushAll(errs, keyToPath(kp, `${sp}.${key}.items[${j}]`));
        if (str(kp.path) !== '') claim(str(kp.path), str(ref.name));
      });
    }
    const dapi = obj(src.downwardAPI);
    if (dapi) {
      n++;
      for (const file of items<J>(dapi.items)) {
        pushAll(errs, downwardAPIFile(file, `${sp}.downwardAPI`));
        if (str(file.path) !== '') claim(str(file.path), str(file.path));
      }
    }
    const token = obj(src.serviceAccountToken);
    if (token) {
      n++;
      const exp = typeof token.expirationSeconds === 'number' ? token.expirationSeconds : 0;
      if (exp < 600)
        errs.push(invalidValue(`${sp}.serviceAccountToken.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
      if (exp > 2 ** 32)
        errs.push(invalidValue(`${sp}.serviceAccountToken.expirationSeconds`, exp, 'may not specify a duration larger than 2^32 seconds'));
      if (str(token.path) === '') errs.push(required(`${path}.path`));
      else pushAll(errs, localNonReservedPath(str(token.path), `${path}.path`));
    }
    const bundle = obj(src.clusterTrustBundle);
    if (bundle) {
      n++;
      if (str(bundle.path) === '') errs.push(required(`${sp}.clusterTrustBundle.path`));
      else claim(str(bundle.path), str(bundle.path));
    }
    if (n > 1) errs.push(forbiddenField(sp, 'may not specify more than 1 volume type per source'));
  });
  return errs;
}

function emptyDirSource(s: J, path: string): Errs {
  const q = s.sizeLimit === undefined ? undefined : parseQuantity(s.sizeLimit);
  return q && isNegative(q) ? [forbiddenField(`${path}.sizeLimit`, 'SizeLimit field must be a valid resource quantity')] : [];
}

function secretSource(s: J, path: string): Errs {
  const errs: Errs = str(s.secretName) === '' ? [required(`${path}.secretName`)] : [];
  fileMode(errs, s.defaultMode, path, 'defaultMode');
  const keys = items<J>(s.items);
  for (let i = 0; i < keys.length; i++) pushAll(errs, keyToPath(keys[i] as J, `${path}.items[${i}]`));
  return errs;
}

function configMapSource(s: J, path: string): Errs {
  const errs: Errs = str(s.name) === '' ? [required(`${path}.name`)] : [];
  fileMode(errs, s.defaultMode, path, 'defaultMode');
  const keys = items<J>(s.items);
  for (let i = 0; i < keys.length; i++) pushAll(errs, keyToPath(keys[i] as J, `${path}.items[${i}]`));
  return errs;
}

function downwardAPISource(s: J, path: string): Errs {
  const errs: Errs = [];
  fileMode(errs, s.defaultMode, path, 'defaultMode');
  for (const file of items<J>(s.items)) pushAll(errs, downwardAPIFile(file, path));
  return errs;
}

function csiSource(s: J, path: string): Errs {
  const errs = csiDriverName(str(s.driver), `${path}.driver`);
  const ref = obj(s.nodePublishSecretRef);
  if (ref) {
    const name = str(ref.name);
    if (name === '') errs.push(required(`${path}.nodePublishSecretRef.name`));
    else pushAll(errs, each(`${path}.name`, name, dns1123Subdomain(name)));
  }
  return errs;
}

function ephemeralSource(s: J, path: string, volName: string, podName: string | undefined): Errs {
  const tmpl = obj(s.volumeClaimTemplate);
  if (!tmpl) return [required(`${path}.volumeClaimTemplate`)];
  const errs = persistentVolumeClaimSpec(obj(tmpl.spec) ?? {}, `${path}.volumeClaimTemplate.spec`);
  if (podName && volName !== '') {
    const pvc = `${podName}-${volName}`;
    for (const msg of dns1123Subdomain(pvc)) errs.push(invalidValue(`${path}.name`, volName, `PVC name ${JSON.stringify(pvc)}: ${msg}`));
  }
  return errs;
}

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

/** The pod volume sources in the reference's order, each with its rules and its error path name. */
const POD_SOURCES: { key: string; name?: string; rules: (s: J, path: string, vol: string, pod?: string) => Errs }[] = [
  { key: 'emptyDir', rules: emptyDirSource },
  { key: 'hostPath', rules: hostPathSource },
  { key: 'gitRepo', rules: SIMPLE_SOURCES.gitRepo },
  { key: 'gcePersistentDisk', rules: SIMPLE_SOURCES.gcePersistentDisk },
  { key: 'awsElasticBlockStore', rules: SIMPLE_SOURCES.awsElasticBlockStore },
  { key: 'secret', rules: secretSource },
  { key: 'nfs', rules: nfsSource },
  { key: 'iscsi', rules: SIMPLE_SOURCES.iscsi },
  { key: 'glusterfs', rules: SIMPLE_SOURCES.glusterfs },
  { key: 'flocker', rules: SIMPLE_SOURCES.flocker },
  {
    key: 'persistentVolumeClaim',
    rules: (s, p) => (str(s.claimName) === '' ? [required(`${p}.claimName`)] : []),
  },
  { key: 'rbd', rules: SIMPLE_SOURCES.rbd },
  { key: 'cinder', rules: SIMPLE_SOURCES.cinder },
  // The reference's Forbidden says "cephFS", its rules "cephfs".
  { key: 'cephfs', name: 'cephFS', rules: SIMPLE_SOURCES.cephfs },
  { key: 'quobyte', rules: SIMPLE_SOURCES.quobyte },
  // The reference's Forbidden misspells it "downwarAPI".
  { key: 'downwardAPI', name: 'downwarAPI', rules: downwardAPISource },
  { key: 'fc', rules: SIMPLE_SOURCES.fc },
  { key: 'flexVolume', rules: SIMPLE_SOURCES.flexVolume },
  { key: 'configMap', rules: configMapSource },
  { key: 'azureFile', rules: SIMPLE_SOURCES.azureFile },
  { key: 'vsphereVolume', rules: SIMPLE_SOURCES.vsphereVolume },
  { key: 'photonPersistentDisk', rules: SIMPLE_SOURCES.photonPersistentDisk },
  { key: 'portworxVolume', rules: SIMPLE_SOURCES.portworxVolume },
  { key: 'azureDisk', rules: SIMPLE_SOURCES.azureDisk },
  { key: 'storageos', rules: SIMPLE_SOURCES.storageos },
  { key: 'projected', rules: projectedSource },
  { key: 'scaleIO', rules: SIMPLE_SOURCES.scaleIO },
  { key: 'csi', rules: csiSource },
  { key: 'ephemeral', rules: ephemeralSource },
  {
    key: 'image',
    rules: (s, p) => {
      const errs: Errs = str(s.reference) === '' ? [required(`${p}.reference`)] : [];
      const pull = str(s.pullPolicy);
      if (pull !== '' && !PULL_POLICIES.includes(pull)) errs.push(notSupported(`${p}.pullPolicy`, pull, PULL_POLICIES));
      return errs;
    },
  },
];

/** The index of each pod volume source in POD_SOURCES, by JSON key. */
const POD_SOURCE_INDEX = new Map(POD_SOURCES.map((src, i) => [src.key, i]));

/** validateVolumeSource: exactly one source, and that source's rules. */
function volumeSource(v: J, path: string, podName: string | undefined): Errs {
  // The common case, a volume with one source: its rules alone, without looking up every other source.
  let only: (typeof POD_SOURCES)[number] | undefined;
  let found = 0;
  for (const key in v) {
    const i = POD_SOURCE_INDEX.get(key);
    if (i === undefined || !obj(v[key])) continue;
    found++;
    only = POD_SOURCES[i];
  }
  if (found === 1 && only) return only.rules(obj(v[only.key]) ?? {}, `${path}.${only.key}`, str(v.name), podName);
  const errs: Errs = [];
  let n = 0;
  const name = str(v.name);
  for (const src of POD_SOURCES) {
    const s = obj(v[src.key]);
    if (!s) continue;
    if (n > 0 && src.key !== 'emptyDir') {
      errs.push(forbiddenField(`${path}.${src.name ?? src.key}`, MORE_THAN_ONE));
      continue;
    }
    n++;
    pushAll(errs, src.rules(s, `${path}.${src.key}`, name, podName));
  }
  if (n === 0) errs.push(required(path, 'must specify a volume type'));
  return errs;
}

/** ValidateVolumes: names unique DNS labels, one source each; returns the valid ones by name. */
export function validateVolumes(errs: Errs, volumes: readonly J[], path: string, podName?: string): Volumes {
  const vols: Volumes = new Map();
  // The claims the pod's generic ephemeral volumes create (none in most pods: no set then).
  let ephemeralClaims: Set<string> | undefined;
  for (const v of podName ? volumes : []) {
    if (!obj(v.ephemeral)) continue;
    ephemeralClaims ??= new Set();
    ephemeralClaims.add(`${podName}-${str(v.name)}`);
  }
  for (let i = 0; i < volumes.length; i++) {
    const v = volumes[i] as J;
    const p = `${path}[${i}]`;
    const name = str(v.name);
    // The volume is valid (and mountable) when it adds no error.
    const before = errs.length;
    pushAll(errs, volumeSource(v, p, podName));
    if (name === '') errs.push(required(`${p}.name`));
    else {
      const msgs = dns1123Label(name);
      if (msgs.length > 0) pushEach(errs, `${p}.name`, name, msgs);
    }
    if (vols.has(name)) errs.push(duplicate(`${p}.name`, name));
    if (errs.length === before) vols.set(name, v);
    if (ephemeralClaims) {
      const claim = str(obj(v.persistentVolumeClaim)?.claimName);
      if (claim !== '' && ephemeralClaims.has(claim))
        errs.push(
          invalidValue(`${p}.persistentVolumeClaim.claimName`, claim, 'must not reference a PVC that gets created for an ephemeral volume'),
        );
    }
  }
  return vols;
}

// ---- PersistentVolumeClaim spec -------------------------------------------------------------

/** Access modes: known, and ReadWriteOncePod alone. */
export function accessModes(modes: string[], path: string): Errs {
  const errs: Errs = [];
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!ACCESS_MODES.includes(m)) errs.push(notSupported(path, m, ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (ACCESS_MODES.includes(m)) other = true;
  }
  if (rwop && other) errs.push(forbiddenField(path, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

function dataSource(ds: J, path: string, withNamespace: boolean): Errs {
  const errs: Errs = [];
  if (str(ds.name) === '') errs.push(required(`${path}.name`));
  const kind = str(ds.kind);
  if (kind === '') errs.push(required(`${path}.kind`));
  const group = str(ds.apiGroup);
  if (group === '' && kind !== 'PersistentVolumeClaim')
    errs.push(invalidValue(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group !== '') pushAll(errs, each(`${path}.apiGroup`, group, dns1123Subdomain(group)));
  const ns = str(ds.namespace);
  if (withNamespace && ns !== '') pushAll(errs, each(`${path}.namespace`, ns, dns1123Label(ns)));
  return errs;
}

/** ValidatePersistentVolumeClaimSpec. */
export function persistentVolumeClaimSpec(spec: J, path: string): Errs {
  const errs: Errs = [];
  const modes = items<string>(spec.accessModes).map(str);
  if (modes.length === 0) errs.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (spec.selector !== undefined) pushAll(errs, validateLabelSelector(spec.selector, `${path}.selector`));
  pushAll(errs, accessModes(modes, `${path}.accessModes`));
  const requests = map(obj(spec.resources)?.requests);
  const storagePath = `${path}.resources[storage]`;
  if (requests.storage === undefined) errs.push(required(storagePath));
  else {
    const q = parseQuantity(requests.storage);
    if (q && (isNegative(q) || q.mant === 0n)) errs.push(invalidValue(storagePath, formatQuantity(q), 'must be greater than zero'));
  }
  const sc = str(spec.storageClassName);
  if (sc !== '') pushAll(errs, each(`${path}.storageClassName`, sc, dns1123Subdomain(sc)));
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(str(spec.volumeMode)))
    errs.push(notSupported(`${path}.volumeMode`, str(spec.volumeMode), VOLUME_MODES));
  const ds = obj(spec.dataSource);
  const ref = obj(spec.dataSourceRef);
  if (ds) pushAll(errs, dataSource(ds, `${path}.dataSource`, false));
  if (ref) pushAll(errs, dataSource(ref, `${path}.dataSourceRef`, true));
  if (ref && str(ref.namespace) !== '') {
    if (ds) errs.push(invalidValue(path, `${path}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (ds && ref) {
    if (str(ds.apiGroup) !== str(ref.apiGroup) || str(ds.kind) !== str(ref.kind) || str(ds.name) !== str(ref.name))
      errs.push(invalidValue(path, `${path}.dataSource`, 'must match dataSourceRef'));
  }
  return errs;
}
