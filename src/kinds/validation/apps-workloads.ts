/**
 * apps/v1: StatefulSet, DaemonSet and ControllerRevision (the reference's
 * pkg/apis/apps/validation and the apps/v1 strategies: a DaemonSet's template generation, the
 * immutable selector, the StatefulSet fields an update may change).
 */
import type { Obj } from '../../api/meta';
import { selectorMatcher } from '../../api/selectors';
import { forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { selectorImmutable } from './apps';
import {
  type Errs,
  GoValue,
  goQuote,
  immutable,
  intOrStringValue,
  type J,
  map,
  nonNegative,
  notMoreThan100Percent,
  obj,
  positiveIntOrPercent,
  STATUS_REPLICAS_MSG,
  selectorValue,
  semanticEqual,
  statusCollisionCount,
  statusCounters,
  str,
  stringMapValue,
  validateLabelSelector,
  validateLabels,
} from './common';
import { validatePodTemplateSpec } from './core-pod';

type IntOrString = number | string;
const intOrStr = (v: unknown): IntOrString | undefined => (typeof v === 'number' || typeof v === 'string' ? v : undefined);

/** getIntOrPercentValue: a valid percent's number, else the int (a non-numeric string is 0). */
function intOrPercentValue(v: IntOrString): number {
  if (typeof v === 'number') return v;
  if (/^[0-9]+%$/.test(v)) return Number(v.slice(0, -1));
  return /^[+-]?[0-9]+$/.test(v) ? Number(v) : 0;
}

/** A non-empty selector matching the template's labels (the shared part of the specs). */
function selectorAndTemplate(spec: J, kind: string, errs: Errs): { matcherOk: boolean } {
  const selector = obj(spec.selector);
  const template = obj(spec.template) ?? {};
  const labels = obj(template.metadata)?.labels;
  const matcher = selectorMatcher(spec.selector);
  if (!matcher) {
    errs.push(invalidValue('spec.selector', selectorValue(selector ?? {}), kind === 'statefulset' ? '' : 'invalid label selector'));
    return { matcherOk: false };
  }
  const mustMatch = kind === 'daemonset' || !matcher.empty;
  if (mustMatch && !matcher.matches(map<string>(labels)))
    errs.push(invalidValue('spec.template.metadata.labels', stringMapValue(labels), '`selector` does not match template `labels`'));
  return { matcherOk: true };
}

function emptySelector(selector: J | undefined, kind: string): Errs {
  if (!selector) return [];
  const n =
    Object.keys(map(selector.matchLabels)).length + (Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0);
  return n === 0 ? [invalidValue('spec.selector', selectorValue(selector), `empty selector is invalid for ${kind}`)] : [];
}

function restartAlways(tspec: J, kind: string): Errs {
  const errs: Errs = [];
  const restart = str(tspec.restartPolicy);
  if (restart !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (tspec.activeDeadlineSeconds !== undefined)
    errs.push(forbiddenField('spec.template.spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${kind} is not Supported`));
  return errs;
}

// ---- StatefulSet ----------------------------------------------------------------------------

const PVC_POLICIES = ['Retain', 'Delete'];

function statefulSetUpdateStrategy(us: J): Errs {
  const path = 'spec.updateStrategy';
  const type = str(us.type);
  const ru = obj(us.rollingUpdate);
  switch (type) {
    case '':
      return [required(path)];
    case 'OnDelete': {
      if (!ru) return [];
      const bad =
        ru.maxUnavailable === undefined
          ? new GoValue(
              `apps.RollingUpdateStatefulSetStrategy{Partition:${typeof ru.partition === 'number' ? ru.partition : 0}, MaxUnavailable:(*intstr.IntOrString)(nil)}`,
              ru,
            )
          : ru;
      return [invalidValue(`${path}.rollingUpdate`, bad, "only allowed for updateStrategy 'RollingUpdate'")];
    }
    case 'RollingUpdate': {
      if (!ru) return [];
      const errs = nonNegative(typeof ru.partition === 'number' ? ru.partition : 0, `${path}.rollingUpdate.partition`);
      const mu = intOrStr(ru.maxUnavailable);
      if (mu !== undefined) {
        const p = `${path}.rollingUpdate.maxUnavailable`;
        errs.push(...positiveIntOrPercent(mu, p));
        if (intOrPercentValue(mu) === 0) errs.push(invalidValue(p, intOrStringValue(mu), 'cannot be 0'));
        errs.push(...notMoreThan100Percent(mu, p));
      }
      return errs;
    }
    default: {
      const bad = ru
        ? us
        : new GoValue(
            `apps.StatefulSetUpdateStrategy{Type:${goQuote(type)}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}`,
            us,
          );
      return [invalidValue(path, bad, "must be 'RollingUpdate' or 'OnDelete'")];
    }
  }
}

/** ValidateStatefulSetSpec. */
export function validateStatefulSet(o: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const errs: Errs = [];
  const pmp = str(spec.podManagementPolicy);
  if (pmp === '') errs.push(required('spec.podManagementPolicy'));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
    errs.push(invalidValue('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  errs.push(...statefulSetUpdateStrategy(obj(spec.updateStrategy) ?? {}));
  const retention = obj(spec.persistentVolumeClaimRetentionPolicy);
  if (retention) {
    for (const k of ['whenDeleted', 'whenScaled']) {
      const v = str(retention[k]);
      if (!PVC_POLICIES.includes(v)) errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${k}`, v, PVC_POLICIES));
    }
  }
  errs.push(...nonNegative(typeof spec.replicas === 'number' ? spec.replicas : 0, 'spec.replicas'));
  errs.push(...nonNegative(typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0, 'spec.minReadySeconds'));
  const ordinals = obj(spec.ordinals);
  if (ordinals) errs.push(...nonNegative(typeof ordinals.start === 'number' ? ordinals.start : 0, 'spec.ordinals.start'));
  const selector = obj(spec.selector);
  if (!selector) errs.push(required('spec.selector'));
  else errs.push(...validateLabelSelector(selector, 'spec.selector'), ...emptySelector(selector, 'statefulset'));
  const template = obj(spec.template) ?? {};
  // The reference checks only the template's labels (and annotations) here, not its pod spec.
  if (selectorAndTemplate(spec, 'statefulset', errs).matcherOk)
    errs.push(...validateLabels(obj(template.metadata)?.labels, 'spec.template.labels'));
  errs.push(...restartAlways(obj(template.spec) ?? {}, 'StatefulSet'));
  return errs;
}

const STATEFULSET_MUTABLE = [
  'replicas',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'ordinals',
  'persistentVolumeClaimRetentionPolicy',
];
export const STATEFULSET_UPDATE_FORBIDDEN =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/** ValidateStatefulSetUpdate: only the fields above may change. */
export function validateStatefulSetUpdate(o: Obj, old: Obj): Errs {
  const next: J = { ...(obj(o.spec) ?? {}) };
  const prev: J = { ...(obj(old.spec) ?? {}) };
  for (const k of STATEFULSET_MUTABLE) {
    delete next[k];
    delete prev[k];
  }
  return semanticEqual(next, prev) ? [] : [forbiddenField('spec', STATEFULSET_UPDATE_FORBIDDEN)];
}

// ---- status (the status subresource's rules; on a main-resource update the status is the stored one) ----

/** ValidateStatefulSetStatusUpdate. */
function statefulSetStatus(o: Obj, old: Obj): Errs {
  const status = obj(o.status) ?? {};
  return [
    ...statusCounters(
      status,
      ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount'],
      [
        ['readyReplicas', 'replicas', STATUS_REPLICAS_MSG],
        ['currentReplicas', 'replicas', STATUS_REPLICAS_MSG],
        ['updatedReplicas', 'replicas', STATUS_REPLICAS_MSG],
        ['availableReplicas', 'replicas', STATUS_REPLICAS_MSG],
        ['availableReplicas', 'readyReplicas', 'cannot be greater than status.readyReplicas'],
      ],
    ),
    ...statusCollisionCount(status, obj(old.status) ?? {}),
  ];
}

/** ValidateDaemonSetStatusUpdate. */
function daemonSetStatus(o: Obj, old: Obj): Errs {
  const status = obj(o.status) ?? {};
  const fields = [
    'currentNumberScheduled',
    'numberMisscheduled',
    'desiredNumberScheduled',
    'numberReady',
    'observedGeneration',
    'updatedNumberScheduled',
    'numberAvailable',
    'numberUnavailable',
    'collisionCount',
  ];
  return [...statusCounters(status, fields, []), ...statusCollisionCount(status, obj(old.status) ?? {})];
}

export const statefulSet: Strategy = {
  validate: (o, old) => [...validateStatefulSet(o), ...(old ? statefulSetStatus(o, old) : [])],
  validateUpdate: validateStatefulSetUpdate,
};

// ---- DaemonSet ------------------------------------------------------------------------------

function daemonSetUpdateStrategy(us: J): Errs {
  const path = 'spec.updateStrategy';
  const type = str(us.type);
  const ru = obj(us.rollingUpdate);
  switch (type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate': {
      if (!ru) return [required(`${path}.rollingUpdate`)];
      const p = `${path}.rollingUpdate`;
      const mu = intOrStr(ru.maxUnavailable) ?? 0;
      const ms = intOrStr(ru.maxSurge) ?? 0;
      const errs = [...positiveIntOrPercent(mu, `${p}.maxUnavailable`), ...positiveIntOrPercent(ms, `${p}.maxSurge`)];
      errs.push(...notMoreThan100Percent(mu, `${p}.maxUnavailable`), ...notMoreThan100Percent(ms, `${p}.maxSurge`));
      const hasUnavailable = intOrPercentValue(mu) !== 0;
      const hasSurge = intOrPercentValue(ms) !== 0;
      if (hasUnavailable && hasSurge)
        errs.push(invalidValue(`${p}.maxSurge`, intOrStringValue(ms), 'may not be set when maxUnavailable is non-zero'));
      else if (!hasUnavailable && !hasSurge) errs.push(required(`${p}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
      return errs;
    }
    default: {
      const bad = ru
        ? us
        : new GoValue(`apps.DaemonSetUpdateStrategy{Type:${goQuote(type)}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}`, us);
      return [notSupported(path, bad, ['RollingUpdate', 'OnDelete'])];
    }
  }
}

/** ValidateDaemonSetSpec. */
export function validateDaemonSet(o: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const errs: Errs = [...validateLabelSelector(spec.selector, 'spec.selector')];
  const matcher = selectorMatcher(spec.selector);
  const template = obj(spec.template) ?? {};
  const labels = obj(template.metadata)?.labels;
  if (matcher && !matcher.matches(map<string>(labels)))
    errs.push(invalidValue('spec.template.metadata.labels', stringMapValue(labels), '`selector` does not match template `labels`'));
  errs.push(...emptySelector(obj(spec.selector), 'daemonset'));
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  errs.push(...restartAlways(obj(template.spec) ?? {}, 'DaemonSet'));
  errs.push(...nonNegative(typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0, 'spec.minReadySeconds'));
  errs.push(...daemonSetUpdateStrategy(obj(spec.updateStrategy) ?? {}));
  if (typeof spec.revisionHistoryLimit === 'number') errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  return errs;
}

/**
 * apps/v1 keeps the internal spec.templateGeneration in this annotation: 1 on create (or what
 * the writer gave, if larger), the stored value plus one when an update changes the template.
 */
export const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

function templateGeneration(o: Obj): number {
  const v = Number(o.metadata.annotations?.[TEMPLATE_GENERATION] ?? '0');
  return Number.isSafeInteger(v) ? v : 0;
}

function setTemplateGeneration(o: Obj, n: number): void {
  o.metadata.annotations = { ...o.metadata.annotations, [TEMPLATE_GENERATION]: String(n) };
}

export const daemonSet: Strategy = {
  prepareForCreate: (o) => setTemplateGeneration(o, Math.max(1, templateGeneration(o))),
  prepareForUpdate: (o, old) => {
    const changed = !semanticEqual(obj(o.spec)?.template, obj(old.spec)?.template);
    setTemplateGeneration(o, templateGeneration(old) + (changed ? 1 : 0));
  },
  validate: (o, old) => [...validateDaemonSet(o), ...(old ? daemonSetStatus(o, old) : [])],
  validateUpdate: selectorImmutable,
};

// ---- ControllerRevision ---------------------------------------------------------------------

export const controllerRevision: Strategy = {
  validate: (o) => {
    const errs: Errs = [];
    if (o.data === undefined || o.data === null) errs.push(required('data', 'data is mandatory'));
    errs.push(...nonNegative(typeof o.revision === 'number' ? o.revision : 0, 'revision'));
    return errs;
  },
  validateUpdate: (o, old) => immutable(o.data, old.data, 'data'),
};
