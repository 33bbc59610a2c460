/**
 * The built-in types as the server serves them: the schema set (the reference's definitions,
 * this server's overlays and defaulters) and the kinds that --runtime-config leaves enabled.
 */
import type { Obj } from '../api/meta';
import type { KindDef } from '../registry/kind';
import { defaulters } from '../schema/defaulters';
import { SchemaSet } from '../schema/engine';
import definitions from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions } from '../schema/types';
import { builtinKinds } from './builtin';
import { METRICS_DEFINITIONS } from './specs/metrics';
import { MUTATING_POLICY_DEFINITIONS, MUTATING_POLICY_OVERLAYS } from './specs/mutating-policy';
import { SYSTEM_PRIORITY_CLASSES } from './specs/scheduling';
import { TESTING_DEFINITIONS } from './specs/testing';

/** Whether --runtime-config leaves a kind enabled (the most specific key wins). */
function enabled(k: KindDef, rc: Record<string, boolean>): boolean {
  const gv = k.group ? `${k.group}/${k.version}` : k.version;
  const keys = [`${gv}/${k.plural}`, k.group ? gv : `api/${k.version}`, gv, 'api/all'];
  for (const key of keys) if (key in rc) return rc[key] as boolean;
  return true;
}

/** `featureGates`: the gates that are on (a gated kind is served only with its gate on). */
export function builtinTypes(
  runtimeConfig: Record<string, boolean>,
  featureGates: Record<string, boolean> = {},
): { schemas: SchemaSet; kinds: KindDef[] } {
  const schemas = new SchemaSet(
    { ...(definitions as unknown as Definitions), ...METRICS_DEFINITIONS, ...TESTING_DEFINITIONS, ...MUTATING_POLICY_DEFINITIONS },
    [...overlays, ...MUTATING_POLICY_OVERLAYS],
    defaulters,
  );
  const hasSpec = (name: string) => {
    const s = schemas.get(name);
    return s?.type === 'object' && s.properties?.spec !== undefined;
  };
  return { schemas, kinds: builtinKinds(hasSpec, featureGates).filter((k) => enabled(k, runtimeConfig)) };
}

/** The objects of built-in kinds every cluster has, created at start (the system PriorityClasses). */
export function systemObjects(): { group: string; plural: string; obj: Obj }[] {
  return SYSTEM_PRIORITY_CLASSES.map((c) => ({
    group: 'scheduling.svc.io',
    plural: 'priorityclasses',
    obj: {
      apiVersion: 'scheduling.svc.io/v1',
      kind: 'PriorityClass',
      metadata: { name: c.name },
      value: c.value,
      description: c.description,
    },
  }));
}
