/**
 * core/v1 storage: PersistentVolume and PersistentVolumeClaim (the reference's
 * ValidatePersistentVolume(Update) and ValidatePersistentVolumeClaim(Update), with the
 * strategies' preparation: a new volume is Pending since now, a claim's status is the server's).
 */
import { now, type Obj } from '../../api/meta';
import { cmpQuantity, formatQuantity, isNegative, parseQuantity, quantityValue } from '../../api/quantity';
import { dns1123Subdomain, forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, each, GoValue, goQuote, type J, list, map, obj, semanticEqual, sortedKeys, str } from './common';
import { specDiff } from './core-pod';
import { validateNodeSelector } from './core-scheduling';
import {
  accessModes,
  csiDriverName,
  hostPathSource,
  nfsSource,
  persistentVolumeClaimSpec,
  SIMPLE_SOURCES,
  VOLUME_MODES,
} from './core-volumes';

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const MORE_THAN_ONE = 'may not specify more than 1 volume type';

/** A ResourceList as Go's %#v prints it. */
const resourceListValue = (m: Record<string, unknown>): GoValue =>
  new GoValue(
    `core.ResourceList{${sortedKeys(m)
      .map((k) => `${goQuote(k)}:${goQuote(String(m[k]))}`)
      .join(', ')}}`,
    m,
  );

function pvSecretRef(ref: J, path: string): Errs {
  const errs: Errs = [];
  const name = str(ref.name);
  if (name === '') errs.push(required(`${path}.name`));
  else errs.push(...each(`${path}.name`, name, dns1123Subdomain(name)));
  if (str(ref.namespace) === '') errs.push(required(`${path}.namespace`));
  return errs;
}

function csiPersistentSource(s: J, path: string): Errs {
  const errs = csiDriverName(str(s.driver), `${path}.driver`);
  if (str(s.volumeHandle) === '') errs.push(required(`${path}.volumeHandle`));
  for (const key of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef']) {
    const ref = obj(s[key]);
    if (ref) errs.push(...pvSecretRef(ref, `${path}.${key}`));
  }
  return errs;
}

/** The persistent volume sources in the reference's order (flexVolume counts without the one-source check). */
const PV_SOURCES: { key: string; rules: (s: J, path: string) => Errs }[] = [
  { key: 'hostPath', rules: hostPathSource },
  { key: 'gcePersistentDisk', rules: SIMPLE_SOURCES.gcePersistentDisk },
  { key: 'awsElasticBlockStore', rules: SIMPLE_SOURCES.awsElasticBlockStore },
  { key: 'glusterfs', rules: SIMPLE_SOURCES.glusterfs },
  { key: 'flocker', rules: SIMPLE_SOURCES.flocker },
  { key: 'nfs', rules: nfsSource },
  { key: 'rbd', rules: SIMPLE_SOURCES.rbd },
  { key: 'quobyte', rules: SIMPLE_SOURCES.quobyte },
  { key: 'cephfs', rules: SIMPLE_SOURCES.cephfs },
  { key: 'iscsi', rules: SIMPLE_SOURCES.iscsi },
  { key: 'cinder', rules: SIMPLE_SOURCES.cinder },
  { key: 'fc', rules: SIMPLE_SOURCES.fc },
  { key: 'flexVolume', rules: SIMPLE_SOURCES.flexVolume },
  { key: 'azureFile', rules: SIMPLE_SOURCES.azureFile },
  { key: 'vsphereVolume', rules: SIMPLE_SOURCES.vsphereVolume },
  { key: 'photonPersistentDisk', rules: SIMPLE_SOURCES.photonPersistentDisk },
  { key: 'portworxVolume', rules: SIMPLE_SOURCES.portworxVolume },
  { key: 'azureDisk', rules: SIMPLE_SOURCES.azureDisk },
  { key: 'scaleIO', rules: SIMPLE_SOURCES.scaleIO },
  { key: 'local', rules: SIMPLE_SOURCES.local },
  { key: 'storageos', rules: SIMPLE_SOURCES.storageos },
  { key: 'csi', rules: csiPersistentSource },
];
const PV_SOURCE_KEYS = PV_SOURCES.map((s) => s.key);

/** ValidatePersistentVolumeSpec (not inline). */
export function validatePersistentVolumeSpec(spec: J): Errs {
  const errs: Errs = [];
  const modes = list<string>(spec.accessModes).map(str);
  if (modes.length === 0) errs.push(required('spec.accessModes'));
  errs.push(...accessModes(modes, 'spec.accessModes'));
  const capacity = map(spec.capacity);
  if (Object.keys(capacity).length === 0) errs.push(required('spec.capacity'));
  if (capacity.storage === undefined || Object.keys(capacity).length > 1)
    errs.push(notSupported('spec.capacity', resourceListValue(capacity), ['storage']));
  for (const k of sortedKeys(capacity)) {
    const q = parseQuantity(capacity[k]);
    if (!q) continue;
    if (isNegative(q)) errs.push(invalidValue(`spec.capacity[${k}]`, Number(quantityValue(q)), 'must be a valid resource quantity'));
    if (isNegative(q) || q.mant === 0n) errs.push(invalidValue(`spec.capacity[${k}]`, formatQuantity(q), 'must be greater than zero'));
  }
  const reclaim = str(spec.persistentVolumeReclaimPolicy);
  if (reclaim !== '' && !RECLAIM_POLICIES.includes(reclaim))
    errs.push(notSupported('spec.persistentVolumeReclaimPolicy', reclaim, RECLAIM_POLICIES));
  const affinity = obj(spec.nodeAffinity);
  if (affinity) {
    const req = obj(affinity.required);
    if (req) errs.push(...validateNodeSelector(req, 'spec.nodeAffinity.required'));
    else errs.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
  }
  let n = 0;
  for (const src of PV_SOURCES) {
    const s = obj(spec[src.key]);
    if (!s) continue;
    if (n > 0 && src.key !== 'flexVolume') {
      errs.push(forbiddenField(`spec.${src.key}`, MORE_THAN_ONE));
      continue;
    }
    n++;
    errs.push(...src.rules(s, `spec.${src.key}`));
    if (src.key === 'local' && !affinity) errs.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (n === 0) errs.push(required('spec', 'must specify a volume type'));
  const hostPath = obj(spec.hostPath);
  if (hostPath && str(hostPath.path).replace(/\/+$/, '') === '' && str(hostPath.path) !== '' && reclaim === 'Recycle')
    errs.push(forbiddenField('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'"));
  const sc = str(spec.storageClassName);
  if (sc !== '') errs.push(...each('spec.storageClassName', sc, dns1123Subdomain(sc)));
  if (spec.volumeMode !== undefined && !VOLUME_MODES.includes(str(spec.volumeMode)))
    errs.push(notSupported('spec.volumeMode', str(spec.volumeMode), VOLUME_MODES));
  return errs;
}

/** The PersistentVolumeSource part of a spec (the reference's embedded struct). */
function pvSource(spec: J): J {
  const out: J = {};
  for (const k of PV_SOURCE_KEYS) if (spec[k] !== undefined) out[k] = spec[k];
  return out;
}

/** ValidatePersistentVolumeUpdate: the source and volume mode never change. */
export function validatePersistentVolumeUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs: Errs = [];
  const next = pvSource(spec);
  const before = pvSource(prev);
  // A CSI controllerExpandSecretRef may be added.
  const csi = obj(next.csi);
  if (obj(before.csi) && obj(before.csi)?.controllerExpandSecretRef === undefined && csi?.controllerExpandSecretRef !== undefined) {
    const { controllerExpandSecretRef: _, ...rest } = csi;
    next.csi = rest;
  }
  if (!semanticEqual(next, before))
    errs.push(
      forbiddenField(
        'spec.persistentvolumesource',
        `spec.persistentvolumesource is immutable after creation\n${specDiff(before, next, 'spec').join('\n')}`,
      ),
    );
  if (!semanticEqual(spec.volumeMode, prev.volumeMode)) errs.push(invalidValue('volumeMode', str(spec.volumeMode), 'field is immutable'));
  return errs;
}

/** The status strategy: a phase change stamps lastPhaseTransitionTime unless the writer set a new one. */
export function stampPhaseTransition(o: Obj, old: Obj): void {
  const status = obj(o.status);
  const prev = obj(old.status) ?? {};
  if (!status) return;
  if (status.phase === prev.phase) {
    if (status.lastPhaseTransitionTime === undefined && prev.lastPhaseTransitionTime !== undefined)
      status.lastPhaseTransitionTime = prev.lastPhaseTransitionTime;
  } else if (status.lastPhaseTransitionTime === undefined || status.lastPhaseTransitionTime === prev.lastPhaseTransitionTime)
    status.lastPhaseTransitionTime = now();
}

export const persistentVolume: Strategy = {
  prepareForCreate(o) {
    o.status = { phase: 'Pending', lastPhaseTransitionTime: now() };
  },
  prepareForStatusUpdate: stampPhaseTransition,
  validate: (o) => validatePersistentVolumeSpec(obj(o.spec) ?? {}),
  validateUpdate: validatePersistentVolumeUpdate,
};

// ---- PersistentVolumeClaim ------------------------------------------------------------------

const PVC_IMMUTABLE = 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';

/** ValidatePersistentVolumeClaimUpdate. */
export function validatePersistentVolumeClaimUpdate(o: Obj, old: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const prev = obj(old.spec) ?? {};
  const errs: Errs = [];
  const next: J = structuredClone(spec);
  const before: J = structuredClone(prev);
  // volumeName may be set once (the binder).
  if (str(prev.volumeName) === '') {
    if (next.volumeName === undefined) delete before.volumeName;
    else before.volumeName = next.volumeName;
  }
  // A storage class may be set on a claim that had none.
  if (next.storageClassName !== undefined && before.storageClassName === undefined) before.storageClassName = next.storageClassName;
  const bound = str(obj(o.status)?.phase) === 'Bound';
  const requests = obj(obj(next.resources)?.requests);
  if (bound && requests) requests.storage = map(obj(prev.resources)?.requests).storage as string;
  if (!semanticEqual(next, before)) errs.push(forbiddenField('spec', `${PVC_IMMUTABLE}\n${specDiff(before, next, 'spec').join('\n')}`));
  const size = parseQuantity(map(obj(spec.resources)?.requests).storage);
  const oldSize = parseQuantity(map(obj(prev.resources)?.requests).storage);
  const statusSize = parseQuantity(map(obj(old.status)?.capacity).storage);
  // RecoverVolumeExpansionFailure (on by default): a claim may shrink back down to above its status capacity.
  if (size && oldSize && cmpQuantity(size, oldSize) < 0 && (!statusSize || cmpQuantity(size, statusSize) <= 0))
    errs.push(forbiddenField('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  if (!semanticEqual(spec.volumeMode, prev.volumeMode)) errs.push(invalidValue('volumeMode', str(spec.volumeMode), 'field is immutable'));
  return errs;
}

export const persistentVolumeClaim: Strategy = {
  prepareForCreate(o) {
    o.status = { phase: 'Pending' };
  },
  validate: (o) => persistentVolumeClaimSpec(obj(o.spec) ?? {}, 'spec'),
  validateUpdate: validatePersistentVolumeClaimUpdate,
};
