/**
 * The set of served resources: (group, version, plural) → ResourceStore, plus the group/version
 * view discovery needs. Built once at start-up from the kinds and the runtime config.
 */
import type { SchemaSet } from '../schema/engine';
import type { KV } from '../store/types';
import { ResourceStore } from './generic';
import type { KindDef } from './kind';
import { namespaceChecker } from './namespaces';
import type { RegistryOptions } from './options';

export interface GroupVersions {
  group: string;
  versions: string[];
}

/**
 * Kubernetes version priority (preferred first): GA by major version, then beta, then alpha
 * (each by major, then minor, descending), then other names alphabetically: v2, v1, v1beta2, v1beta1, v1alpha1.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0, Number(m[1]), Number(m[3] ?? 0)];
  };
  const x = rank(a);
  const y = rank(b);
  if (!x || !y) return x ? -1 : y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
}

export class ApiRegistry {
  private readonly byPath = new Map<string, ResourceStore>();
  private readonly byKind = new Map<string, ResourceStore>();
  readonly stores: ResourceStore[] = [];
  private readonly ns: ReturnType<typeof namespaceChecker>;
  /** Bumped on every add/remove (discovery and OpenAPI rebuild their documents after a change). */
  generation = 0;

  constructor(
    private readonly kv: KV,
    private readonly schemas: SchemaSet,
    kinds: KindDef[],
    private readonly opts: RegistryOptions = {},
  ) {
    this.ns = namespaceChecker(kv);
    for (const k of kinds) this.add(k);
  }

  /** Serves a kind (a custom resource version at run time); replaces one at the same path. */
  add(k: KindDef): ResourceStore {
    const old = this.lookup(k.group, k.version, k.plural);
    if (old) this.remove(k.group, k.version, k.plural);
    const s = new ResourceStore(k, this.kv, this.schemas, this.ns, this.opts);
    this.stores.push(s);
    this.byPath.set(`${k.group}/${k.version}/${k.plural}`, s);
    this.byKind.set(`${k.group}/${k.version}/${k.kind}`, s);
    this.generation++;
    return s;
  }

  /** Stops serving a kind; answers its store (its watch cache is the caller's to stop). */
  remove(group: string, version: string, plural: string): ResourceStore | undefined {
    const s = this.lookup(group, version, plural);
    if (!s) return undefined;
    this.byPath.delete(`${group}/${version}/${plural}`);
    if (this.byKind.get(`${group}/${version}/${s.def.kind}`) === s) this.byKind.delete(`${group}/${version}/${s.def.kind}`);
    this.stores.splice(this.stores.indexOf(s), 1);
    this.generation++;
    return s;
  }

  lookup(group: string, version: string, plural: string): ResourceStore | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  byGroupVersionKind(group: string, version: string, kind: string): ResourceStore | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** Served groups in a stable order (core first), each with its versions. */
  groups(): GroupVersions[] {
    const out = new Map<string, Set<string>>();
    for (const s of this.stores) {
      const g = out.get(s.def.group) ?? new Set<string>();
      g.add(s.def.version);
      out.set(s.def.group, g);
    }
    return [...out.entries()].map(([group, versions]) => ({ group, versions: [...versions].sort(compareVersions) }));
  }

  /** The resources of one group/version. */
  resources(group: string, version: string): ResourceStore[] {
    return this.stores.filter((s) => s.def.group === group && s.def.version === version);
  }
}
