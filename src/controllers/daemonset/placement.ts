/**
 * Where a DaemonSet's pods go, as the reference's pkg/controller/daemon (NodeShouldRunDaemonPod)
 * and daemon/util: a node runs the daemon pod when it satisfies the template's nodeSelector and
 * required node affinity and every NoSchedule/NoExecute taint is tolerated (by the template's
 * tolerations plus those every daemon pod gets); a pod already there keeps running unless the node
 * no longer matches or has a NoExecute taint it does not tolerate. Pods are made from the
 * template with the revision labels, those tolerations and a required node affinity
 * `metadata.name In [node]` (the scheduler binds them).
 */
import { clone, type Obj } from '../../api/meta';
import { TEMPLATE_GENERATION } from '../../kinds/validation/apps-workloads';
import { matchesNodeSelectorAndAffinity, tolerates } from '../../scheduler/filters';
import { NodeInfo, type PodInfo, podInfo, type Toleration } from '../../scheduler/node-info';
import { controllerRef, intOr, labelsOf } from '../controller-utils';
import { REVISION_HASH_LABEL } from '../revisions';

export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

export interface DsSpec {
  selector?: unknown;
  template?: Obj;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } };
}

export const dsSpec = (ds: Obj): DsSpec => (ds.spec ?? {}) as DsSpec;
export const minReadyOf = (ds: Obj): number => intOr(dsSpec(ds).minReadySeconds, 0);
export const isRollingUpdate = (ds: Obj): boolean => (dsSpec(ds).updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** GetTemplateGeneration: the template generation the registry keeps in an annotation. */
export function templateGeneration(ds: Obj): string | undefined {
  const v = ds.metadata.annotations?.[TEMPLATE_GENERATION];
  return v !== undefined && /^\d+$/.test(v) ? v : undefined;
}

const tol = (key: string, effect: string): Toleration => ({ key, operator: 'Exists', effect });

/** AddOrUpdateDaemonPodTolerations: the tolerations every daemon pod has. */
export function daemonTolerations(hostNetwork: boolean): Toleration[] {
  const out = [
    tol('node.kubernetes.io/not-ready', 'NoExecute'),
    tol('node.kubernetes.io/unreachable', 'NoExecute'),
    tol('node.kubernetes.io/disk-pressure', 'NoSchedule'),
    tol('node.kubernetes.io/memory-pressure', 'NoSchedule'),
    tol('node.kubernetes.io/pid-pressure', 'NoSchedule'),
    tol('node.kubernetes.io/unschedulable', 'NoSchedule'),
  ];
  if (hostNetwork) out.push(tol('node.kubernetes.io/network-unavailable', 'NoSchedule'));
  return out;
}

const sameToleration = (a: Toleration, b: Toleration): boolean =>
  (a.key ?? '') === (b.key ?? '') &&
  (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
  (a.value ?? '') === (b.value ?? '') &&
  (a.effect ?? '') === (b.effect ?? '');

/** The template's pod spec with the daemon tolerations added (AddOrUpdateTolerationInPodSpec). */
export function withDaemonTolerations(spec: Record<string, unknown>): Record<string, unknown> {
  const out = clone(spec as Obj) as unknown as Record<string, unknown>;
  const tolerations = [...((out.tolerations ?? []) as Toleration[])];
  for (const t of daemonTolerations(out.hostNetwork === true)) if (!tolerations.some((x) => sameToleration(x, t))) tolerations.push(t);
  out.tolerations = tolerations;
  return out;
}

/** ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity is `metadata.name In [node]`. */
export function withNodeAffinity(spec: Record<string, unknown>, node: string): Record<string, unknown> {
  const affinity = { ...((spec.affinity ?? {}) as Record<string, unknown>) };
  affinity.nodeAffinity = {
    ...((affinity.nodeAffinity ?? {}) as Record<string, unknown>),
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
    },
  };
  return { ...spec, affinity };
}

/** GetTargetNodeName: the pod's node, or the one its node affinity names. */
export function targetNode(p: Obj): string {
  const spec = (p.spec ?? {}) as {
    nodeName?: string;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms?: { matchFields?: { key?: string; operator?: string; values?: string[] }[] }[];
        };
      };
    };
  };
  if (spec.nodeName) return spec.nodeName;
  for (const t of spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of t.matchFields ?? [])
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0] as string;
  }
  return '';
}

/** The template as the scheduler's filters see a pod (its daemon tolerations added): made once per sync. */
export function daemonProbe(ds: Obj): PodInfo {
  const spec = withDaemonTolerations((dsSpec(ds).template?.spec ?? {}) as Record<string, unknown>);
  delete spec.nodeName;
  return podInfo({
    metadata: { name: 'probe', namespace: ds.metadata.namespace, labels: dsSpec(ds).template?.metadata?.labels },
    spec,
  } as Obj);
}

/** NodeShouldRunDaemonPod, for the template's probe (daemonProbe). */
export function shouldRunOn(probe: PodInfo, node: Obj): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const info = new NodeInfo(node.metadata.name as string);
  info.setNode(node);
  if (!matchesNodeSelectorAndAffinity(probe, info)) return { shouldRun: false, shouldContinueRunning: false };
  let shouldRun = true;
  let shouldContinueRunning = true;
  for (const taint of info.taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (probe.tolerations.some((t) => tolerates(t, taint))) continue;
    shouldRun = false;
    if (taint.effect === 'NoExecute') shouldContinueRunning = false;
  }
  return { shouldRun, shouldContinueRunning };
}

/** The daemon pod for `node`: the template at revision `hash` and the DaemonSet's generation. */
export function newDaemonPod(ds: Obj, node: string, hash: string): Obj {
  const t = (dsSpec(ds).template ?? {}) as Obj;
  const tm = t.metadata ?? {};
  const name = ds.metadata.name as string;
  const meta: Obj['metadata'] = {
    generateName: `${name}-`,
    namespace: ds.metadata.namespace,
    labels: { ...(tm.labels ?? {}), [REVISION_HASH_LABEL]: hash },
    ownerReferences: [controllerRef(ds, 'apps/v1', 'DaemonSet')],
  };
  const generation = templateGeneration(ds);
  if (generation !== undefined) (meta.labels as Record<string, string>)[TEMPLATE_GENERATION_LABEL] = generation;
  if (tm.annotations) meta.annotations = { ...tm.annotations };
  if (tm.finalizers) meta.finalizers = [...tm.finalizers];
  const spec = withNodeAffinity(withDaemonTolerations((t.spec ?? {}) as Record<string, unknown>), node);
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec } as Obj;
}

/** IsPodUpdated: at the revision `hash` (or made from the current template generation). */
export function isPodUpdated(ds: Obj, p: Obj, hash: string): boolean {
  const l = labelsOf(p);
  const generation = templateGeneration(ds);
  return (hash !== '' && l[REVISION_HASH_LABEL] === hash) || (generation !== undefined && l[TEMPLATE_GENERATION_LABEL] === generation);
}

const created = (o: Obj): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;

/** podByCreationTimestampAndPhase: Running before others, then older first. */
export const byCreationAndPhase = (a: Obj, b: Obj): number => {
  const ra = (a.status as { phase?: string } | undefined)?.phase === 'Running' ? 0 : 1;
  const rb = (b.status as { phase?: string } | undefined)?.phase === 'Running' ? 0 : 1;
  return ra - rb || created(a) - created(b) || ((a.metadata.name as string) < (b.metadata.name as string) ? -1 : 1);
};
