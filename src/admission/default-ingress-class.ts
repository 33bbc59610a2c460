/**
 * DefaultIngressClass, as the reference's admission plugin (on by default): an Ingress created
 * without a class (no spec.ingressClassName, no kubernetes.io/ingress.class annotation) gets the
 * IngressClass annotated ingressclass.kubernetes.io/is-default-class: "true"; with several the
 * newest wins, then the first by name; with none the Ingress stays without a class.
 */
import type { Obj } from '../api/meta';
import type { Attributes, Operation, Plugin } from '../registry/admission';

export const DEFAULT_INGRESS_CLASS = 'ingressclass.kubernetes.io/is-default-class';
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const NETWORKING_GROUP = 'networking.svc.io';

/** getDefaultClass: the default classes, newest creation first, then by name. */
export function defaultIngressClass(classes: readonly Obj[]): Obj | undefined {
  const created = (c: Obj) => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
  return classes
    .filter((c) => c.metadata.annotations?.[DEFAULT_INGRESS_CLASS] === 'true')
    .sort((a, b) => created(b) - created(a) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1))[0];
}

export class DefaultIngressClass implements Plugin {
  readonly name = 'DefaultIngressClass';

  /** `classes` answers the IngressClasses. */
  constructor(private readonly classes: () => Obj[] | Promise<Obj[]>) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === NETWORKING_GROUP && resource === 'ingresses' && subresource === '' && op === 'CREATE';
  }

  async admit(a: Attributes): Promise<void> {
    if (a.object.metadata.annotations?.[CLASS_ANNOTATION] !== undefined) return;
    const spec = (typeof a.object.spec === 'object' && a.object.spec !== null ? a.object.spec : {}) as { ingressClassName?: string };
    if (spec.ingressClassName !== undefined && spec.ingressClassName !== null) return;
    const def = defaultIngressClass(await this.classes());
    if (!def?.metadata.name) return;
    spec.ingressClassName = def.metadata.name;
    a.object.spec = spec;
  }
}
