/**
 * Equivalent versions of a resource (the reference's EquivalentResourceMapper, as matchPolicy
 * Equivalent uses it): the other versions this server serves the same group and resource in,
 * each with the conversions of an object between the request's version and it. A webhook whose
 * rules list only such a version is sent the request converted to it (the reference's
 * VersionedAttributes), and its patch is applied there and converted back.
 *
 * The conversions are the ones the storage already does between the two versions:
 *
 *   a CRD, strategy None      only apiVersion changes
 *   a CRD, strategy Webhook   its conversion webhook (the target version's value mapping)
 *   a kind stored as another  autoscaling/v1 HorizontalPodAutoscalers stored as v2: its read and write
 *
 * Versions between which none of these applies are not equivalent here.
 */
import { apiVersionOf, type Obj } from '../../api/meta';
import type { Resources } from '../../registry/api-registry';
import type { KindDef } from '../../registry/kind';

export interface EquivalentVersion {
  readonly version: string;
  readonly kind: string;
  /** An object of the request's version in this version. */
  to(o: Obj): Promise<Obj>;
  /** An object of this version back in the request's version. */
  back(o: Obj): Promise<Obj>;
}

/** The other served versions of a group's resource, with their conversions from `version`. */
export type Equivalents = (group: string, resource: string, version: string) => EquivalentVersion[];

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The conversion of an object of `from` into `to` (same group and resource), or undefined. */
export function converter(from: KindDef, to: KindDef): ((o: Obj) => Promise<Obj>) | undefined {
  const apiVersion = apiVersionOf(to);
  const mapping = to.convertedBy;
  if (mapping) {
    // The value mapping converts stored values (kind and apiVersion first) into its version.
    return async (o) => {
      const { kind, apiVersion: v, metadata, ...rest } = o;
      const [value] = await mapping.readMany([enc.encode(JSON.stringify({ kind, apiVersion: v, metadata, ...rest }))]);
      return JSON.parse(dec.decode(value)) as Obj;
    };
  }
  if (from.custom && to.custom && !from.convertedBy) return async (o) => ({ ...o, apiVersion });
  const storedAs = from.storedAs;
  if (storedAs && storedAs.group === to.group && storedAs.plural === to.plural && !to.storedAs) return async (o) => storedAs.write(o);
  const read = to.storedAs;
  if (read && read.group === from.group && read.plural === from.plural && !from.storedAs) return async (o) => read.read(o);
  return undefined;
}

/** Equivalent versions from the served resources (looked up at each call: CRD versions come and go). */
export function servedEquivalents(resources: Pick<Resources, 'lookup' | 'stores'>): Equivalents {
  return (group, resource, version) => {
    const self = resources.lookup(group, version, resource);
    if (!self) return [];
    const out: EquivalentVersion[] = [];
    for (const s of resources.stores) {
      const d = s.def;
      if (d.group !== group || d.plural !== resource || d.version === version) continue;
      const to = converter(self.def, d);
      const back = converter(d, self.def);
      if (to && back) out.push({ version: d.version, kind: d.kind, to, back });
    }
    return out;
  };
}
