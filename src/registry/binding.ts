/**
 * pods/binding: how a scheduler assigns a pod to a node (the reference's BindingREST). The
 * Binding names the pod and its target node; the pod gets `spec.nodeName` once (a second
 * binding is 409), the Binding's annotations, and the condition PodScheduled=True.
 */
import { isObject, type Obj } from '../api/meta';
import { badRequest, conflict, invalid } from '../api/status';
import { type FieldError, notSupported, required } from '../api/validation';
import type { ResourceStore } from './generic';
import type { WriteOptions } from './options';

const TARGET = { group: '', resource: 'pods/binding' };

/** The Binding's schema (its bodies may come as protobuf, as the reference's scheduler sends them). */
export const BINDING_SCHEMA = 'io.svc.api.core.v1.Binding';

interface Binding {
  metadata: { name?: string; uid?: string; resourceVersion?: string; annotations?: Record<string, string> };
  target: { kind?: string; name?: string };
}

/** The reference's ValidatePodBinding. */
function validateBinding(b: Binding): FieldError[] {
  const errs: FieldError[] = [];
  if (b.target.kind && b.target.kind !== 'Node') {
    errs.push(notSupported('target.kind', b.target.kind, ['Node', '<empty>']));
  }
  if (!b.target.name) errs.push(required('target.name'));
  return errs;
}

/** Binds the pod `name` as the Binding `body` says; answers the bound pod. */
export async function bindPod(pods: ResourceStore, namespace: string, name: string, body: unknown, w: WriteOptions): Promise<Obj> {
  if (!isObject(body) || !isObject(body.metadata ?? {}) || !isObject(body.target ?? {})) {
    throw badRequest('the object provided is unrecognized (must be of type Binding)');
  }
  const b = { metadata: body.metadata ?? {}, target: body.target ?? {} } as Binding;
  if (b.metadata.name !== undefined && b.metadata.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const errs = validateBinding(b);
  if (errs.length > 0) throw invalid('Binding', '', name, errs);
  const node = b.target.name as string;
  const refuse = (why: string) => conflict(TARGET, name, why);
  return pods.updateFrom(namespace, name, 'binding', w, (cur) => {
    const m = cur.metadata;
    if (b.metadata.uid && b.metadata.uid !== m.uid) {
      throw refuse(`Precondition failed: UID in precondition: ${b.metadata.uid}, UID in object meta: ${m.uid}`);
    }
    if (b.metadata.resourceVersion && b.metadata.resourceVersion !== m.resourceVersion) {
      throw refuse(
        `Precondition failed: ResourceVersion in precondition: ${b.metadata.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`,
      );
    }
    if (m.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
    const spec = (cur.spec ?? {}) as { nodeName?: string; schedulingGates?: unknown[] };
    if (spec.nodeName) throw refuse(`pod ${name} is already assigned to node "${spec.nodeName}"`);
    if (spec.schedulingGates && spec.schedulingGates.length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
    // A copy of the parts the binding changes only (`cur` is this attempt's own decode and is
    // only read): structuredClone of the whole pod was 3.7% of the server's CPU in a density run.
    type Conditions = { type: string; status: string; lastTransitionTime?: string | null; lastProbeTime?: null }[];
    const curStatus = (cur.status ?? {}) as { conditions?: Conditions };
    const next = { ...cur, metadata: { ...cur.metadata }, spec: { ...spec, nodeName: node } } as Obj;
    if (b.metadata.annotations) next.metadata.annotations = { ...next.metadata.annotations, ...b.metadata.annotations };
    const status = { ...curStatus } as { conditions?: Conditions };
    const conditions = [...(curStatus.conditions ?? [])];
    const at = conditions.findIndex((c) => c.type === 'PodScheduled');
    const stamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (at < 0) conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: stamp });
    else if (conditions[at]?.status !== 'True')
      conditions[at] = { ...conditions[at], type: 'PodScheduled', status: 'True', lastTransitionTime: stamp };
    status.conditions = conditions;
    next.status = status;
    return next;
  });
}
