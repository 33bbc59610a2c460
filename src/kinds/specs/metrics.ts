/**
 * metrics.k8s.io/v1beta1 (metrics-server's API), served by this server itself as computed kinds
 * from the simulated kubelets (src/simulation/metrics.ts): PodMetrics and NodeMetrics, get and
 * list. Their schemas are the reference's (k8s.io/metrics), written here since the generated
 * definitions hold the kube-apiserver's kinds only; tables as `kubectl top` prints.
 */
import type { Obj } from '../../api/meta';
import { parseQuantity } from '../../api/quantity';
import type { Column } from '../../codec/table';
import type { Definitions, Schema } from '../../schema/types';
import { col } from '../columns';
import type { Spec } from './spec';

const PKG = 'io.svc.metrics.pkg.apis.metrics.v1beta1';
const META = 'io.svc.apimachinery.pkg.apis.meta.v1';
const GROUP = 'metrics.svc.io';

const ref = (name: string): Schema => ({ type: 'ref', ref: name });
const usage: Schema = { type: 'object', additionalProperties: ref('io.svc.apimachinery.pkg.api.resource.Quantity') };
const gvk = (kind: string) => [{ group: GROUP, version: 'v1beta1', kind }];
const kindOf = (kind: string, description: string, properties: Record<string, Schema>, required: string[]): Schema => ({
  type: 'object',
  description,
  properties: { kind: { type: 'string' }, apiVersion: { type: 'string' }, metadata: ref(`${META}.ObjectMeta`), ...properties },
  required,
  gvk: gvk(kind),
});
const listOf = (kind: string): Schema => ({
  type: 'object',
  description: `${kind}List is a list of ${kind}.`,
  properties: {
    kind: { type: 'string' },
    apiVersion: { type: 'string' },
    metadata: ref(`${META}.ListMeta`),
    items: { type: 'array', items: ref(`${PKG}.${kind}`) },
  },
  required: ['items'],
  gvk: gvk(`${kind}List`),
});

export const METRICS_DEFINITIONS: Definitions = {
  [`${PKG}.ContainerMetrics`]: {
    type: 'object',
    description: 'ContainerMetrics sets resource usage metrics of a container.',
    properties: { name: { type: 'string' }, usage },
    required: ['name', 'usage'],
  },
  [`${PKG}.PodMetrics`]: kindOf(
    'PodMetrics',
    'PodMetrics sets resource usage metrics of a pod.',
    {
      timestamp: ref(`${META}.Time`),
      window: { type: 'string' },
      containers: { type: 'array', items: ref(`${PKG}.ContainerMetrics`) },
    },
    ['timestamp', 'window', 'containers'],
  ),
  [`${PKG}.PodMetricsList`]: listOf('PodMetrics'),
  [`${PKG}.NodeMetrics`]: kindOf(
    'NodeMetrics',
    'NodeMetrics sets resource usage metrics of a node.',
    { timestamp: ref(`${META}.Time`), window: { type: 'string' }, usage },
    ['timestamp', 'window', 'usage'],
  ),
  [`${PKG}.NodeMetricsList`]: listOf('NodeMetrics'),
};

type UsageMap = Record<string, unknown> | undefined;
const num = (v: unknown): number => {
  const q = parseQuantity(v);
  return q ? Number(q.mant) * 10 ** q.exp : 0;
};
/** kubectl top's cells: millicores and Mi, rounded up as its printer. */
const cpuCell = (cores: number): string => `${Math.ceil(Math.round(cores * 1e9) / 1e6)}m`;
const memoryCell = (bytes: number): string => `${Math.ceil(Math.round(bytes) / 2 ** 20)}Mi`;
const podUsage = (o: Obj, res: string): number =>
  ((o as { containers?: { usage?: UsageMap }[] }).containers ?? []).reduce((a, c) => a + num(c.usage?.[res]), 0);
const nodeUsage = (o: Obj, res: string): number => num((o as { usage?: UsageMap }).usage?.[res]);

const columns = (usageOf: (o: Obj, res: string) => number): Column[] => [
  col('CPU(cores)', 'string', 'CPU usage, in cores', (o) => cpuCell(usageOf(o, 'cpu'))),
  col('MEMORY(bytes)', 'string', 'Memory usage, in bytes', (o) => memoryCell(usageOf(o, 'memory'))),
  col('Window', 'string', 'The interval the usage was measured over', (o) => String((o as { window?: string }).window ?? '')),
];

export const METRICS: Spec[] = [
  {
    group: GROUP,
    version: 'v1beta1',
    kind: 'PodMetrics',
    plural: 'pods',
    namespaced: true,
    pkg: 'metrics',
    schema: `${PKG}.PodMetrics`,
    computed: true,
    columns: columns(podUsage),
  },
  {
    group: GROUP,
    version: 'v1beta1',
    kind: 'NodeMetrics',
    plural: 'nodes',
    namespaced: false,
    pkg: 'metrics',
    schema: `${PKG}.NodeMetrics`,
    computed: true,
    columns: columns(nodeUsage),
  },
];
