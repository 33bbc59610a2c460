/**
 * The MutatingAdmissionPolicy plugin as the admission builder (../builder.ts) wires it: its
 * policies and bindings from the v1beta1 stores (served only with the MutatingAdmissionPolicy
 * gate on; without them the plugin is never started and takes part in nothing), params,
 * namespaces and the authorizer shared with the ValidatingAdmissionPolicy plugin, and the
 * kinds' schemas from the registry.
 */
import type { Resources } from '../../registry/api-registry';
import type { SchemaSet } from '../../schema/engine';
import { MutatingPolicyAdmission, type MutationCheck } from './mutating-plugin';
import { ADMISSION_GROUP, type PolicySources } from './plugin';

const VERSION = 'v1beta1';
const POLICIES = 'mutatingadmissionpolicies';
const BINDINGS = 'mutatingadmissionpolicybindings';

/** Whether the registry serves MutatingAdmissionPolicy (the gate is on). */
export function mutatingPolicyServed(resources: Resources): boolean {
  return (
    resources.lookup(ADMISSION_GROUP, VERSION, POLICIES) !== undefined && resources.lookup(ADMISSION_GROUP, VERSION, BINDINGS) !== undefined
  );
}

/** The plugin (resolving its stores when started: the registry is built with it). */
export function mutatingPolicyPlugin(
  resources: Resources,
  schemas: SchemaSet,
  shared: PolicySources,
  onCheck?: (c: MutationCheck) => void,
): MutatingPolicyAdmission {
  const served = (plural: string) => {
    const s = resources.lookup(ADMISSION_GROUP, VERSION, plural);
    if (!s) throw new Error(`bug: ${ADMISSION_GROUP}/${VERSION}/${plural} is not served`);
    return s.watchCache();
  };
  return new MutatingPolicyAdmission({
    policies: () => served(POLICIES),
    bindings: () => served(BINDINGS),
    params: (apiVersion, kind) => shared.params(apiVersion, kind),
    namespace: (name) => shared.namespace(name),
    decider: shared.decider,
    log: shared.log,
    onCheck,
    schemas,
    schemaOf: (group, version, resource) => resources.lookup(group, version, resource)?.def.schema,
  });
}
