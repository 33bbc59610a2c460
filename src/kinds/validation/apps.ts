/**
 * apps/v1: Deployment and ReplicaSet (the reference's pkg/apis/apps/validation, plus the
 * apps/v1 strategies' rule that spec.selector is immutable).
 */
import type { Obj } from '../../api/meta';
import { selectorMatcher } from '../../api/selectors';
import { badRequest } from '../../api/status';
import { forbiddenField, invalidValue, notSupported, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import {
  type Errs,
  FIELD_IMMUTABLE,
  GoValue,
  goQuote,
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
} from './common';
import { validatePodTemplateSpec } from './core-pod';

/**
 * The replica, selector and template rules shared by Deployment and ReplicaSet; `afterReplicas`
 * are reported right after the replica count (the ReplicaSet's minReadySeconds).
 */
function validateReplicatedSpec(spec: J, afterReplicas: Errs = []): Errs {
  const errs: Errs = [];
  errs.push(...nonNegative(typeof spec.replicas === 'number' ? spec.replicas : 0, 'spec.replicas'), ...afterReplicas);
  const selector = obj(spec.selector);
  if (!selector) errs.push(required('spec.selector'));
  else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (
      Object.keys(map(selector.matchLabels)).length + (Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0) ===
      0
    )
      errs.push(invalidValue('spec.selector', selectorValue(selector), 'empty selector is invalid for deployment'));
  }
  const matcher = selectorMatcher(spec.selector);
  if (!matcher) {
    errs.push(invalidValue('spec.selector', selectorValue(selector ?? {}), 'invalid label selector'));
    return errs;
  }
  const template = obj(spec.template) ?? {};
  const labels = map<string>(obj(template.metadata)?.labels);
  if (!matcher.empty && !matcher.matches(labels))
    errs.push(
      invalidValue(
        'spec.template.metadata.labels',
        stringMapValue(obj(template.metadata)?.labels),
        '`selector` does not match template `labels`',
      ),
    );
  errs.push(...validatePodTemplateSpec(template, 'spec.template'));
  const tspec = obj(template.spec) ?? {};
  const restart = str(tspec.restartPolicy);
  if (restart !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  // Deployments share ValidatePodTemplateSpecForReplicaSet, message included.
  if (tspec.activeDeadlineSeconds !== undefined)
    errs.push(forbiddenField('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  return errs;
}

function validateRollingUpdate(ru: J): Errs {
  const path = 'spec.strategy.rollingUpdate';
  const errs: Errs = [];
  const mu = typeof ru.maxUnavailable === 'number' || typeof ru.maxUnavailable === 'string' ? ru.maxUnavailable : 0;
  const ms = typeof ru.maxSurge === 'number' || typeof ru.maxSurge === 'string' ? ru.maxSurge : 0;
  errs.push(...positiveIntOrPercent(mu, `${path}.maxUnavailable`), ...positiveIntOrPercent(ms, `${path}.maxSurge`));
  const value = (v: number | string) => (typeof v === 'number' ? v : /^[0-9]+%$/.test(v) ? Number(v.slice(0, -1)) : 0);
  if (value(mu) === 0 && value(ms) === 0)
    errs.push(invalidValue(`${path}.maxUnavailable`, intOrStringValue(mu), 'may not be 0 when `maxSurge` is 0'));
  errs.push(...notMoreThan100Percent(mu, `${path}.maxUnavailable`));
  return errs;
}

function validateDeploymentStrategy(strategy: J): Errs {
  const type = str(strategy.type);
  const ru = obj(strategy.rollingUpdate);
  switch (type) {
    case 'Recreate':
      return ru ? [forbiddenField('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'")] : [];
    case 'RollingUpdate':
      // Defaulted to 25%/25% by the reference; absent here means those defaults, which are valid.
      return ru ? validateRollingUpdate(ru) : [];
    default: {
      // Go prints the struct; with a rollingUpdate its pointer address, which JSON stands in for.
      const bad = ru
        ? strategy
        : new GoValue(`apps.DeploymentStrategy{Type:${goQuote(type)}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`, strategy);
      return [notSupported('spec.strategy', bad, ['Recreate', 'RollingUpdate'])];
    }
  }
}

export function validateDeployment(o: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  const errs = validateReplicatedSpec(spec);
  errs.push(...validateDeploymentStrategy(obj(spec.strategy) ?? {}));
  const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
  errs.push(...nonNegative(minReady, 'spec.minReadySeconds'));
  if (typeof spec.revisionHistoryLimit === 'number') errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (typeof spec.progressDeadlineSeconds === 'number') {
    errs.push(...nonNegative(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= minReady)
      errs.push(invalidValue('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  return errs;
}

export function validateReplicaSet(o: Obj): Errs {
  const spec = obj(o.spec) ?? {};
  return validateReplicatedSpec(
    spec,
    nonNegative(typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0, 'spec.minReadySeconds'),
  );
}

/** apps/v1 forbids changing spec.selector. */
export function selectorImmutable(o: Obj, old: Obj): Errs {
  const next = obj(o.spec)?.selector;
  const prev = obj(old.spec)?.selector;
  if (semanticEqual(next, prev)) return [];
  const sel = obj(next);
  return [invalidValue('spec.selector', sel ? selectorValue(sel) : null, FIELD_IMMUTABLE)];
}

/**
 * apps/v1 keeps the internal spec.rollbackTo in the annotation deprecated.deployment.rollback.to:
 * the conversion rejects a value that is not an int64 (400), validation a negative one.
 */
export const ROLLBACK_TO = 'deprecated.deployment.rollback.to';

function rollbackRevision(o: Obj): number | undefined {
  const v = o.metadata.annotations?.[ROLLBACK_TO];
  if (v === undefined || v === '') return undefined;
  if (!/^[+-]?[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw badRequest(`failed to parse annotation[${ROLLBACK_TO}]=${v} as int64: strconv.ParseInt: parsing ${goQuote(v)}: invalid syntax`);
  return Number(v);
}

const READY_MSG = 'cannot be greater than readyReplicas';

/** ValidateDeploymentStatusUpdate. */
function deploymentStatus(o: Obj, old: Obj): Errs {
  const status = obj(o.status) ?? {};
  const fields = [
    'observedGeneration',
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
    'collisionCount',
  ];
  return [
    ...statusCounters(status, fields, [
      ['updatedReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['readyReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['availableReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['availableReplicas', 'readyReplicas', READY_MSG],
    ]),
    ...statusCollisionCount(status, obj(old.status) ?? {}),
  ];
}

/** ValidateReplicaSetStatusUpdate. */
function replicaSetStatus(o: Obj): Errs {
  return statusCounters(
    obj(o.status) ?? {},
    ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'],
    [
      ['fullyLabeledReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['readyReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['availableReplicas', 'replicas', STATUS_REPLICAS_MSG],
      ['availableReplicas', 'readyReplicas', READY_MSG],
    ],
  );
}

export const deployment: Strategy = {
  decode: (o) => {
    rollbackRevision(o);
  },
  validate: (o, old) => {
    const errs = validateDeployment(o);
    const rev = rollbackRevision(o);
    if (rev !== undefined) errs.push(...nonNegative(rev, 'spec.rollback.version'));
    if (old) errs.push(...deploymentStatus(o, old));
    return errs;
  },
  validateUpdate: selectorImmutable,
  // The Deployment strategy: annotation changes bump the generation (they are copied to its ReplicaSets).
  bumpsGeneration: (o, old) => !semanticEqual(o.metadata.annotations, old.metadata.annotations),
};
export const replicaSet: Strategy = {
  validate: (o, old) => [...validateReplicaSet(o), ...(old ? replicaSetStatus(o) : [])],
  validateUpdate: selectorImmutable,
};
