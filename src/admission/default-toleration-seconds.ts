/**
 * DefaultTolerationSeconds, as the reference's admission plugin: a Pod created without a
 * toleration of the node.kubernetes.io/not-ready:NoExecute taint (or of unreachable) gets
 *
 *   { key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300 }
 *
 * (the seconds from --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds),
 * so that the taint eviction manager deletes its pods 5 minutes after a node is lost. A
 * toleration with that key (or no key) and the NoExecute effect (or none) counts as one.
 */
import type { Attributes, Operation, Plugin } from '../registry/admission';

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';

interface Toleration {
  key?: string;
  effect?: string;
}

export class DefaultTolerationSeconds implements Plugin {
  readonly name = 'DefaultTolerationSeconds';

  constructor(
    private readonly notReadySeconds: number,
    private readonly unreachableSeconds: number,
  ) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === '' && resource === 'pods' && subresource === '' && op === 'CREATE';
  }

  admit(a: Attributes): void {
    const spec = a.object.spec as { tolerations?: Toleration[] } | undefined;
    if (!spec || typeof spec !== 'object') return;
    const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
    const covers = (key: string) => tolerations.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
    const added: Record<string, unknown>[] = [];
    if (!covers(NOT_READY_TAINT)) {
      added.push({ key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.notReadySeconds });
    }
    if (!covers(UNREACHABLE_TAINT)) {
      added.push({ key: UNREACHABLE_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.unreachableSeconds });
    }
    if (added.length > 0) spec.tolerations = [...tolerations, ...added] as Toleration[];
  }
}
