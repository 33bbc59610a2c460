/**
 * The set of served resources: (group, version, plural) → ResourceStore, plus the group/version
 * view discovery needs. Built once at start-up from the kinds and the runtime config.
 */

import type { SchemaSet } from '../schema/engine';
import type { KV } from '../store/types';
import { plainStorage, type ResourceStorage, type StorageTarget } from '../watch/storage';
import type { AdmissionChain } from './admission';
import { conversionValues } from './conversion';
import { ResourceStore } from './generic';
import type { WriteHooks } from './hooks';
import { type KindDef, keyPrefix, selectorFieldsOf } from './kind';
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

/** What plugins built with the registry (admission's loopback) may look up: the served resources. */
export type Resources = Pick<ApiRegistry, 'lookup' | 'byGroupVersionKind' | 'stores'>;

export interface RegistryDeps {
  kv: KV;
  schemas: SchemaSet;
  /** The kinds served from the start (custom kinds are added at run time). */
  kinds: KindDef[];
  /** Each resource's storage (the store behind its watch cache); default: the store alone. */
  storage?: (t: StorageTarget) => ResourceStorage;
  /**
   * Admission, built once with the registry as the plugins' way to other resources (as the
   * reference's admission plugins get a loopback client): the chain for each kind, built-in or
   * custom alike.
   */
  admission?: (resources: Resources) => (def: KindDef) => AdmissionChain | undefined;
  /** Write hooks per kind (a Service's addresses). */
  hooks?: (def: KindDef) => WriteHooks | undefined;
  options?: RegistryOptions;
}

interface Lookup {
  group: string;
  version: string;
  plural: string;
  store: ResourceStore | undefined;
}

export class ApiRegistry {
  private readonly byPath = new Map<string, ResourceStore>();
  /** The last two lookup()s and their answers (forgotten at every change of the served resources). */
  private lastLookups: (Lookup | undefined)[] = [];
  private readonly byKind = new Map<string, ResourceStore>();
  readonly stores: ResourceStore[] = [];
  private readonly ns: ReturnType<typeof namespaceChecker>;
  private readonly storage: (t: StorageTarget) => ResourceStorage;
  private readonly admissionFor: (def: KindDef) => AdmissionChain | undefined;
  private readonly hooksFor: (def: KindDef) => WriteHooks | undefined;
  /** Bumped on every add/remove (discovery and OpenAPI rebuild their documents after a change). */
  generation = 0;
  private readonly listeners: (() => void)[] = [];

  /** Call `f` after every add or remove (e.g. to keep the APIServices in step with the groups). */
  onChange(f: () => void): void {
    this.listeners.push(f);
  }

  private changed(): void {
    this.generation++;
    this.lastLookups = [];
    for (const f of this.listeners) queueMicrotask(f);
  }

  constructor(private readonly d: RegistryDeps) {
    this.ns = namespaceChecker(d.kv, (key) => {
      const c = this.lookup('', 'v1', 'namespaces')?.cache?.get(key);
      return c && { revision: c.rv, obj: () => c.obj };
    });
    this.storage = d.storage ?? plainStorage(d.kv);
    this.admissionFor = d.admission?.(this) ?? (() => undefined);
    this.hooksFor = d.hooks ?? (() => undefined);
    for (const k of d.kinds) this.add(k);
  }

  /** Serves a kind (a custom resource version at run time); replaces one at the same path. */
  add(k: KindDef): ResourceStore {
    const old = this.lookup(k.group, k.version, k.plural);
    if (old) this.remove(k.group, k.version, k.plural);
    const prefix = keyPrefix(k);
    const s = new ResourceStore(k, {
      storage: this.storage({
        prefix,
        resource: `${k.group}/${k.plural}`,
        selectableFields: selectorFieldsOf(k),
        values: k.storedAs ? conversionValues(k.storedAs) : k.convertedBy,
      }),
      schemas: this.d.schemas,
      namespaceCheck: this.ns,
      admission: this.admissionFor(k),
      hooks: this.hooksFor(k),
      options: this.d.options,
    });
    this.stores.push(s);
    this.byPath.set(`${k.group}/${k.version}/${k.plural}`, s);
    this.byKind.set(`${k.group}/${k.version}/${k.kind}`, s);
    this.changed();
    return s;
  }

  /** Stops serving a kind, and its watch cache; answers its store. */
  remove(group: string, version: string, plural: string): ResourceStore | undefined {
    const s = this.lookup(group, version, plural);
    if (!s) return undefined;
    this.byPath.delete(`${group}/${version}/${plural}`);
    if (this.byKind.get(`${group}/${version}/${s.def.kind}`) === s) this.byKind.delete(`${group}/${version}/${s.def.kind}`);
    this.stores.splice(this.stores.indexOf(s), 1);
    s.cache?.stop();
    this.changed();
    return s;
  }

  /** Stops every resource's watch cache (shutdown). */
  close(): void {
    for (const s of this.stores) s.cache?.stop();
  }

  lookup(group: string, version: string, plural: string): ResourceStore | undefined {
    // Requests come in runs of one resource (a client's loop), their names often the very strings
    // of the last (parseRequestInfo's memo): the last two lookups (a create's own and its
    // namespace's) are compared before a key is built and hashed.
    const [a, b] = this.lastLookups;
    if (a !== undefined && a.plural === plural && a.group === group && a.version === version) return a.store;
    if (b !== undefined && b.plural === plural && b.group === group && b.version === version) return b.store;
    const store = this.byPath.get(`${group}/${version}/${plural}`);
    this.lastLookups = [{ group, version, plural, store }, a];
    return store;
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
