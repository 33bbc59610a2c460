/**
 * scheduling.svc.io/v1 PriorityClass, as the reference's pkg/apis/scheduling (validation, the
 * system classes of pkg/apis/scheduling/v1/helpers.go, the registry's delete guard). The Priority
 * admission plugin (src/admission/priority.ts) resolves pods' priorities from these objects and
 * keeps a single globalDefault.
 */
import type { Obj } from '../../api/meta';
import { type FieldError, forbiddenField, notSupported } from '../../api/validation';
import { immutable } from '../validation/common';
import { AGE, col } from './cells';
import type { Spec } from './spec';

export const SYSTEM_PRIORITY_PREFIX = 'system-';
/** Above this only the system classes may go (scheduling.HighestUserDefinablePriority). */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;

/** The system classes every cluster has (created at start, never deleted). */
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; description: string }[] = [
  {
    name: 'system-node-critical',
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: SYSTEM_CRITICAL_PRIORITY,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

const PREEMPTION_POLICIES = ['Never', 'PreemptLowerPriority'];

/** Why a `system-` name with this value and globalDefault is not a system class, or undefined. */
function notSystemClass(name: string, value: number, globalDefault: boolean): string | undefined {
  const c = SYSTEM_PRIORITY_CLASSES.find((s) => s.name === name);
  if (!c) return `${name} is not a known system priority class`;
  if (c.value !== value) return `value of ${c.name} PriorityClass must be ${c.value}`;
  if (globalDefault) return `globalDefault of ${c.name} PriorityClass must be false`;
  return undefined;
}

function validatePriorityClass(o: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata.name ?? '';
  const value = typeof o.value === 'number' ? o.value : 0;
  if (name.startsWith(SYSTEM_PRIORITY_PREFIX)) {
    const why = notSystemClass(name, value, o.globalDefault === true);
    if (why)
      errs.push(
        forbiddenField(
          'metadata.name',
          `priority class names with '${SYSTEM_PRIORITY_PREFIX}' prefix are reserved for system use only. error: ${why}`,
        ),
      );
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(forbiddenField('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (o.preemptionPolicy !== undefined && !PREEMPTION_POLICIES.includes(String(o.preemptionPolicy))) {
    errs.push(notSupported('preemptionPolicy', o.preemptionPolicy, PREEMPTION_POLICIES));
  }
  return errs;
}

function validatePriorityClassUpdate(o: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if ((o.value ?? 0) !== (old.value ?? 0)) errs.push(forbiddenField('value', 'may not be changed in an update.'));
  errs.push(...immutable(o.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'));
  return errs;
}

export const SCHEDULING: Spec[] = [
  {
    group: 'scheduling.svc.io',
    kind: 'PriorityClass',
    plural: 'priorityclasses',
    shortNames: ['pc'],
    namespaced: false,
    pkg: 'scheduling',
    generation: false,
    rules: {
      validate: validatePriorityClass,
      validateUpdate: validatePriorityClassUpdate,
      deleteForbidden: (name) =>
        SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name) ? 'this is a system priority class and cannot be deleted' : undefined,
    },
    columns: [
      col('Value', 'integer', 'value is the integer value of this priority class.', (x) => x.value ?? 0),
      col(
        'Global-Default',
        'boolean',
        'globalDefault specifies whether this PriorityClass should be considered as the default priority.',
        (x) => x.globalDefault === true,
      ),
      AGE,
      col(
        'PreemptionPolicy',
        'string',
        'preemptionPolicy is the Policy for preempting pods with lower priority.',
        (x) => x.preemptionPolicy ?? '',
      ),
    ],
  },
];
