/**
 * Priority, as the reference's admission plugin (plugin/pkg/admission/priority):
 *
 *   Pod create      spec.priorityClassName names a PriorityClass (403 when there is none); without
 *                   one, the globalDefault class's name and value, or priority 0 and
 *                   PreemptLowerPriority. spec.priority and spec.preemptionPolicy are set from it;
 *                   a pod that gives other values is refused (403).
 *   PriorityClass   create or update with globalDefault while another class is the default: 403.
 *
 * (The reference no longer restricts the system classes to kube-system.) The classes are read
 * through `classes`, which the admission builder resolves over the registry.
 */
import type { Obj } from '../api/meta';
import { forbidden } from '../api/status';
import type { Attributes, Operation, Plugin } from '../registry/admission';

const SCHEDULING_GROUP = 'scheduling.svc.io';

export interface PriorityClasses {
  /** The class by name (the store decides when the cache has not seen it yet), or undefined. */
  get(name: string): Promise<Obj | undefined>;
  list(): Promise<Obj[]>;
}

export class PriorityAdmission implements Plugin {
  readonly name = 'Priority';

  constructor(private readonly classes: PriorityClasses) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    if (subresource !== '') return false;
    if (group === '' && resource === 'pods') return op === 'CREATE';
    return group === SCHEDULING_GROUP && resource === 'priorityclasses' && (op === 'CREATE' || op === 'UPDATE');
  }

  async admit(a: Attributes): Promise<void> {
    if (a.group !== '' || a.operation !== 'CREATE') return;
    const spec = a.object.spec as Record<string, unknown> | undefined;
    if (!spec || typeof spec !== 'object') return;
    const target = { group: '', resource: 'pods' };
    let priority = 0;
    let policy: unknown = 'PreemptLowerPriority';
    const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
    if (className === '') {
      const def = this.defaultClass(await this.classes.list());
      if (def) {
        spec.priorityClassName = def.metadata.name;
        priority = Number(def.value ?? 0);
        policy = def.preemptionPolicy;
      }
    } else {
      const pc = await this.classes.get(className);
      if (!pc) throw forbidden(target, a.name, `no PriorityClass with name ${className} was found`);
      priority = Number(pc.value ?? 0);
      policy = pc.preemptionPolicy;
    }
    if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
      throw forbidden(
        target,
        a.name,
        `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (typeof policy === 'string') {
      if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
        throw forbidden(
          target,
          a.name,
          `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
  }

  async validate(a: Attributes): Promise<void> {
    if (a.group !== SCHEDULING_GROUP || a.object.globalDefault !== true) return;
    const def = this.defaultClass(await this.classes.list());
    if (def && (a.operation === 'CREATE' || def.metadata.name !== a.object.metadata.name)) {
      throw forbidden(
        { group: SCHEDULING_GROUP, resource: 'priorityclasses' },
        a.name,
        `PriorityClass ${def.metadata.name} is already marked as default. Only one default can exist`,
      );
    }
  }

  /** The globalDefault class; after a race that made several, the one of lowest value (as the reference). */
  private defaultClass(all: Obj[]): Obj | undefined {
    let best: Obj | undefined;
    for (const pc of all) {
      if (pc.globalDefault === true && (!best || Number(best.value ?? 0) > Number(pc.value ?? 0))) best = pc;
    }
    return best;
  }
}
