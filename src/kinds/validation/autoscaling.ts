/**
 * HorizontalPodAutoscaler rules (pkg/apis/autoscaling/validation), on the stored autoscaling/v2
 * form: an autoscaling/v1 object is validated after its conversion, as the reference validates
 * the internal form whatever version the request spoke (so paths name v2 fields).
 */
import type { Obj } from '../../api/meta';
import { parseQuantity } from '../../api/quantity';
import { forbiddenField, invalidValue, notSupported, pathSegmentName, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { type Errs, type J, list, obj, str } from './common';

const SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const TARGET_TYPES = ['AverageValue', 'Utilization', 'Value'];

function crossVersionRef(ref: J | undefined, path: string, errs: Errs): void {
  for (const f of ['kind', 'name'] as const) {
    const v = str(ref?.[f]);
    if (v === '') errs.push(required(`${path}.${f}`));
    else for (const msg of pathSegmentName(v)) errs.push(invalidValue(`${path}.${f}`, v, msg));
  }
}

const positive = (q: unknown): boolean => (parseQuantity(q)?.mant ?? 0n) > 0n;

function metricTarget(t: J | undefined, path: string, errs: Errs): void {
  const type = str(t?.type);
  if (type === '') errs.push(required(`${path}.type`, 'must specify a metric target type'));
  else if (!TARGET_TYPES.includes(type)) errs.push(notSupported(`${path}.type`, type, TARGET_TYPES));
  if (t?.value !== undefined && !positive(t.value)) errs.push(invalidValue(`${path}.value`, t.value, 'must be positive'));
  if (t?.averageValue !== undefined && !positive(t.averageValue))
    errs.push(invalidValue(`${path}.averageValue`, t.averageValue, 'must be positive'));
  const util = t?.averageUtilization;
  if (typeof util === 'number' && util < 1) errs.push(invalidValue(`${path}.averageUtilization`, util, 'must be greater than 0'));
  const set = { Utilization: util, Value: t?.value, AverageValue: t?.averageValue }[type];
  if (TARGET_TYPES.includes(type) && set === undefined) {
    errs.push(
      required(
        `${path}.${type === 'Utilization' ? 'averageUtilization' : type === 'Value' ? 'value' : 'averageValue'}`,
        'must set a value for the given target type',
      ),
    );
  }
}

function metricSpec(m: J, path: string, errs: Errs): void {
  const type = str(m.type);
  if (type === '') errs.push(required(`${path}.type`, 'must specify a metric source type'));
  else if (!SOURCE_TYPES.includes(type)) errs.push(notSupported(`${path}.type`, type, SOURCE_TYPES));
  const present = ['object', 'pods', 'resource', 'containerResource', 'external'].filter((k) => m[k] !== undefined);
  const expected = type === '' ? '' : type[0]!.toLowerCase() + type.slice(1);
  if (expected !== '' && !present.includes(expected))
    errs.push(required(`${path}.${expected}`, 'must populate information for the given metric source'));
  if (present.length > 1) {
    for (const k of present) if (k !== expected) errs.push(forbiddenField(`${path}.${k}`, 'must populate the given metric source only'));
  }
  const src = obj(m[present[0] ?? '']);
  if (!src) return;
  const at = `${path}.${present[0]}`;
  if (present[0] === 'resource' || present[0] === 'containerResource') {
    if (str(src.name) === '') errs.push(required(`${at}.name`, 'must specify a resource name'));
    if (present[0] === 'containerResource' && str(src.container) === '') errs.push(required(`${at}.container`, 'must specify a container'));
  } else {
    if (present[0] === 'object') crossVersionRef(obj(src.describedObject), `${at}.describedObject`, errs);
    if (str(obj(src.metric)?.name) === '') errs.push(required(`${at}.metric.name`, 'must specify a metric name'));
  }
  metricTarget(obj(src.target), `${at}.target`, errs);
}

export function validateHpa(o: Obj): Errs {
  const errs: Errs = [];
  const spec = obj((o as J).spec) ?? {};
  const min = spec.minReplicas;
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0;
  if (typeof min === 'number' && min < 1) errs.push(invalidValue('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(invalidValue('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && max < min)
    errs.push(invalidValue('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  crossVersionRef(obj(spec.scaleTargetRef), 'spec.scaleTargetRef', errs);
  for (const [i, m] of list<J>(spec.metrics).entries()) metricSpec(m, `spec.metrics[${i}]`, errs);
  return errs;
}

/** autoscaling/v2: the schema's defaults, then the reference's CPU default when no metric is given. */
export const horizontalPodAutoscaler: Strategy = {
  prepareForCreate: defaultMetrics,
  prepareForUpdate: defaultMetrics,
  validate: validateHpa,
};

function defaultMetrics(o: Obj): void {
  const spec = obj((o as J).spec);
  if (spec && list(spec.metrics).length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
}
