/**
 * What the Endpoints, EndpointSlice and EndpointSlice mirroring controllers share, as the
 * reference's pkg/controller/util/endpoint and staging endpointslice/util: which pods a Service
 * selects and which of them are endpoints (ShouldPodBeInEndpoints), a service port's target port
 * on a pod (podutil.FindPort), the trigger time of a change (the last-change-trigger-time
 * annotation), and the Service and pod informers' follow loop with a work queue keyed
 * `<namespace>/<service>`.
 */
import type { Obj } from '../api/meta';
import type { WatchCache } from '../watch/cache';
import { labelsOf, phaseOf } from './controller-utils';

export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

export interface ServicePort {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
  targetPort?: number | string;
}

export interface ServiceSpec {
  selector?: Record<string, string>;
  ports?: ServicePort[];
  clusterIP?: string;
  type?: string;
  publishNotReadyAddresses?: boolean;
}

interface ContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}

export const specOf = (svc: Obj): ServiceSpec => (svc.spec ?? {}) as ServiceSpec;

export const podIPOf = (pod: Obj): string => ((pod.status as { podIP?: string } | undefined)?.podIP ?? '') as string;

export const nodeNameOf = (pod: Obj): string => ((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '') as string;

/** A selector of a Service selects: every label equal (an empty selector selects every pod). */
export const selects = (selector: Record<string, string>, pod: Obj): boolean => {
  const l = labelsOf(pod);
  return Object.entries(selector).every(([k, v]) => l[k] === v);
};

/**
 * What the controllers keep of the last pod version seen (to find the Services that selected it
 * before a label change): its namespace and labels only. Keeping the parsed pod held one full
 * copy of every pod on the heap (~30 KB each, most of the server's heap at 100k pods).
 */
export function seenOf(pod: Obj): Obj {
  const m = pod.metadata;
  let key = m.namespace ?? '';
  const labels = m.labels as Record<string, string> | undefined;
  if (labels) for (const k in labels) key += `\u0000${k}=${labels[k]}`;
  let seen = seenShared.get(key);
  if (seen === undefined) {
    seen = { metadata: { namespace: m.namespace, labels: labels ? { ...labels } : undefined } } as Obj;
    if (seenShared.size >= 4096) seenShared.clear();
    seenShared.set(key, seen);
  }
  return seen;
}

/**
 * Pods of one namespace with the same labels share their record (read-only): the two endpoints
 * controllers keep one per pod, and at 150,000 pods two objects each and the decoded pod's labels
 * were ~5 objects of every pod's ~52 on the heap.
 */
const seenShared = new Map<string, Obj>();

/** The pods of the namespace a Service's selector selects. */
export function podsOfService(svc: Obj, podCache: WatchCache, podPrefix: string): Obj[] {
  const sel = specOf(svc).selector ?? {};
  return podCache
    .list(`${podPrefix}${svc.metadata.namespace}/`)
    .map((c) => c.obj)
    .filter((p) => selects(sel, p));
}

/**
 * ShouldPodBeInEndpoints: a pod with an IP, not being deleted (unless `includeTerminating`),
 * whose restart policy lets it run again (Never: not Succeeded or Failed; OnFailure: not
 * Succeeded).
 */
export function shouldPodBeInEndpoints(pod: Obj, includeTerminating: boolean): boolean {
  if (!podIPOf(pod)) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  const policy = (pod.spec as { restartPolicy?: string } | undefined)?.restartPolicy ?? 'Always';
  const phase = phaseOf(pod);
  if (policy === 'Never') return phase !== 'Failed' && phase !== 'Succeeded';
  if (policy === 'OnFailure') return phase !== 'Succeeded';
  return true;
}

/**
 * podutil.FindPort: a numeric target port as is; a named one looked up in the pod's containers'
 * ports of the same protocol; none: the service port's number. Undefined when the name is not
 * found.
 */
export function findPort(pod: Obj, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (typeof target === 'string' && /^\d+$/.test(target)) return Number(target);
  const protocol = sp.protocol ?? 'TCP';
  const containers = ((pod.spec as { containers?: { ports?: ContainerPort[] }[] } | undefined)?.containers ?? []) as {
    ports?: ContainerPort[];
  }[];
  for (const c of containers) {
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

/** getPodTriggerTime: when the pod last changed readiness, else its creation. */
export function podTriggerTime(pod: Obj): number {
  const c = ((pod.status as { conditions?: { type?: string; lastTransitionTime?: string }[] } | undefined)?.conditions ?? []).find(
    (x) => x.type === 'Ready',
  );
  return Date.parse(c?.lastTransitionTime ?? '') || Date.parse(pod.metadata.creationTimestamp ?? '') || 0;
}

/** Go's time.RFC3339Nano text of a moment (fraction without trailing zeros). */
export function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

/**
 * TriggerTimeTracker, simplified: the earliest trigger time of the changes of a service's pods
 * (and of the service itself) since its last sync.
 */
export class TriggerTimes {
  private readonly m = new Map<string, number>();

  note(key: string, t: number): void {
    if (t <= 0) return;
    const cur = this.m.get(key);
    if (cur === undefined || t < cur) this.m.set(key, t);
  }

  /** The time for the sync of `key` (0 when nothing changed), forgotten. */
  take(key: string): number {
    const t = this.m.get(key) ?? 0;
    this.m.delete(key);
    return t;
  }
}

/**
 * The Services a pod change concerns: those of its namespace whose selector selects the pod now
 * or selected it before (`old`, the last version the caller saw).
 */
export function servicesOfPod(pod: Obj, old: Obj | undefined, svcCache: WatchCache, svcPrefix: string): Obj[] {
  return svcCache
    .list(`${svcPrefix}${pod.metadata.namespace}/`)
    .map((c) => c.obj)
    .filter((s) => {
      const sel = specOf(s).selector;
      return sel !== undefined && (selects(sel, pod) || (old !== undefined && selects(sel, old)));
    });
}
