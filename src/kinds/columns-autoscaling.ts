/** HorizontalPodAutoscaler's table (the reference's printHorizontalPodAutoscaler), over the autoscaling/v2 form. */
import type { Obj } from '../api/meta';
import type { Column } from '../codec/table';
import { AGE, canonicalQuantity } from './columns';

type J = Record<string, unknown>;
const o = (v: unknown): J => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as J) : {});
const arr = (v: unknown): J[] => (Array.isArray(v) ? (v as J[]) : []);
const UNKNOWN = '<unknown>';

/** One metric as `current/target` (formatHPAMetrics). */
function metricCell(spec: J, status: J | undefined): string {
  const pair = (source: string, cur: (c: J) => string | undefined, tgt: J, avg: boolean) =>
    `${cur(o(o(status?.[source]).current)) ?? UNKNOWN}/${canonicalQuantity(avg ? tgt.averageValue : tgt.value)}${avg ? ' (avg)' : ''}`;
  const q = (v: unknown) => (v === undefined ? undefined : canonicalQuantity(v));
  switch (spec.type) {
    case 'External':
    case 'Object': {
      const src = o(spec[spec.type === 'External' ? 'external' : 'object']);
      const t = o(src.target);
      const avg = t.averageValue !== undefined;
      return pair(spec.type === 'External' ? 'external' : 'object', (c) => q(avg ? c.averageValue : c.value), t, avg);
    }
    case 'Pods': {
      const t = o(o(spec.pods).target);
      return `${q(o(o(status?.pods).current).averageValue) ?? UNKNOWN}/${canonicalQuantity(t.averageValue)}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
      const src = o(spec[key]);
      const t = o(src.target);
      const cur = o(o(status?.[key]).current);
      if (t.averageValue !== undefined)
        return `${String(src.name)}: ${q(cur.averageValue) ?? UNKNOWN}/${canonicalQuantity(t.averageValue)}`;
      const now = typeof cur.averageUtilization === 'number' ? `${cur.averageUtilization}%` : UNKNOWN;
      const target = typeof t.averageUtilization === 'number' ? `${t.averageUtilization}%` : '<auto>';
      return `${String(src.name)}: ${now}/${target}`;
    }
    default:
      return '<unknown type>';
  }
}

export function hpaTargets(hpa: Obj): string {
  const specs = arr(o((hpa as J).spec).metrics);
  if (specs.length === 0) return '<none>';
  const statuses = arr(o((hpa as J).status).currentMetrics);
  const cells = specs.map((m, i) => metricCell(m, statuses[i]));
  const MAX = 2;
  if (cells.length <= MAX) return cells.join(', ');
  return `${cells.slice(0, MAX).join(', ')} + ${cells.length - MAX} more...`;
}

const spec = (x: Obj): J => o((x as J).spec);

export const HPA_COLUMNS: Column[] = [
  {
    name: 'Reference',
    type: 'string',
    priority: 0,
    description:
      'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
    cell: (x) => `${String(o(spec(x).scaleTargetRef).kind ?? '')}/${String(o(spec(x).scaleTargetRef).name ?? '')}`,
  },
  {
    name: 'Targets',
    type: 'string',
    priority: 0,
    description:
      'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).',
    cell: hpaTargets,
  },
  {
    name: 'MinPods',
    type: 'string',
    priority: 0,
    description: 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.',
    cell: (x) => (typeof spec(x).minReplicas === 'number' ? String(spec(x).minReplicas) : '<unset>'),
  },
  {
    name: 'MaxPods',
    type: 'integer',
    priority: 0,
    description: 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.',
    cell: (x) => Number(spec(x).maxReplicas ?? 0),
  },
  {
    name: 'Replicas',
    type: 'integer',
    priority: 0,
    description: 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.',
    cell: (x) => Number(o((x as J).status).currentReplicas ?? 0),
  },
  AGE,
];
