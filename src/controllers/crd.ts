/**
 * The CustomResourceDefinition controller (the reference's naming, establishing and finalizing
 * controllers in one): from the CRDs' watch cache it
 *
 *   names       accepts the CRD's names unless another CRD of the group or a built-in kind
 *               already uses its plural, singular, kind, list kind or short names:
 *               NamesAccepted True/NoConflicts or False/<plural> is already in use
 *   serves      each served version as a kind in the registry (src/registry/crd/kinds.ts):
 *               Established True/InitialNamesAccepted once it is served
 *   finalizes   a deleted CRD (customresourcecleanup finalizer): deletes its custom resources,
 *               stops serving it, then removes the finalizer (Terminating
 *               InstanceDeletionCompleted), and the registry removes the CRD
 *
 * start() serves every stored CRD before it resolves, so after a restart custom resources are
 * back before /readyz passes. Status is written through the registry's status subresource.
 */
import { deepEqual, isObject, type JsonObject, now, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { CRD_CLEANUP_FINALIZER } from '../kinds/validation/apiextensions';
import { type CustomKind, customKinds, requestedNames } from '../registry/crd/kinds';
import type { ResourceStore } from '../registry/generic';
import { ALL_OBJECTS } from '../registry/list';
import type { WatchCache } from '../watch/cache';

export const CRD_CONTROLLER = 'apiextensions-controller';

/** What the controller needs of the server: serve and stop serving kinds. */
export interface CustomKindHost {
  /** Serves the kind (its schemas registered under def.schema and `${def.schema}List`); answers its store. */
  install(k: CustomKind): ResourceStore;
  /** Stops serving group/version/plural. */
  uninstall(group: string, version: string, plural: string): void;
  /** Whether a built-in kind of the group uses this plural or kind (names conflict). */
  builtinConflict(group: string, plural: string, kind: string): boolean;
}

interface Served {
  /** `version` → the installed store, for the CRD's current generation. */
  stores: Map<string, ResourceStore>;
  generation: number;
  group: string;
  plural: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export class CrdController {
  private readonly served = new Map<string, Served>();
  private readonly queue = new Map<string, Obj>();
  private draining = false;
  private stopped = false;

  constructor(
    private readonly crds: ResourceStore,
    private readonly cache: WatchCache,
    private readonly host: CustomKindHost,
    private readonly log: (msg: string) => void = () => {},
    private readonly clock: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    await this.cache.start();
    const w = this.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of w.initial) this.queue.set(c.obj.metadata.name as string, c.obj);
    await this.drain();
    void (async () => {
      while (!this.stopped && !w.watcher.ended) {
        for (const e of await w.watcher.next(Number.POSITIVE_INFINITY)) {
          if (e.type === 'DELETED') {
            this.stopServing(e.obj.metadata.name as string);
            // Names it held may now go to a CRD that was refused them.
            for (const c of this.cache.list()) if (!this.served.has(c.obj.metadata.name as string)) this.enqueue(c.obj);
          } else this.enqueue(e.obj);
        }
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  private enqueue(o: Obj): void {
    this.queue.set(o.metadata.name as string, o);
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [name, o] = this.queue.entries().next().value as [string, Obj];
        this.queue.delete(name);
        try {
          await this.reconcile(o);
        } catch (e) {
          this.log(`crd controller: ${name}: ${(e as Error).message}`);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async reconcile(crd: Obj): Promise<void> {
    const name = crd.metadata.name as string;
    if (crd.metadata.deletionTimestamp) {
      await this.finalize(crd);
      return;
    }
    const conflict = this.namesConflict(crd);
    const status = isObject(crd.status) ? { ...crd.status } : {};
    const conds: JsonObject[] = Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
    const set = (type: string, s: string, reason: string, message: string) => {
      const i = conds.findIndex((c) => c.type === type);
      const prev = i >= 0 ? conds[i] : undefined;
      const c: JsonObject = {
        type,
        status: s,
        lastTransitionTime: prev && prev.status === s ? prev.lastTransitionTime : now(this.clock),
        reason,
        message,
      };
      if (i >= 0) conds[i] = c;
      else conds.push(c);
    };
    if (conflict) {
      set('NamesAccepted', 'False', 'NameConflict', conflict);
      set('Established', 'False', 'NotAccepted', 'not all names are accepted');
      this.stopServing(name);
    } else {
      this.serve(crd);
      set('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found');
      set('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted');
      status.acceptedNames = requestedNames(crd);
    }
    status.conditions = conds;
    if (!deepEqual(status, crd.status)) await this.writeStatus(crd, status);
  }

  /** A names conflict with another served CRD of the group or a built-in kind, as its message. */
  private namesConflict(crd: Obj): string | undefined {
    const spec = isObject(crd.spec) ? crd.spec : {};
    const group = str(spec.group);
    const names = requestedNames(crd);
    const plural = str(names.plural);
    const kind = str(names.kind);
    if (this.host.builtinConflict(group, plural, kind)) return `"${plural}" is already in use`;
    // Against the names other CRDs of the group have been given (status.acceptedNames), as the
    // reference: whichever was accepted first keeps them, whatever order CRDs are looked at in.
    for (const c of this.cache.list()) {
      const other = c.obj;
      if (other.metadata.name === crd.metadata.name) continue;
      const ospec = isObject(other.spec) ? other.spec : {};
      if (str(ospec.group) !== group) continue;
      const accepted = isObject(other.status) && isObject(other.status.acceptedNames) ? other.status.acceptedNames : {};
      if (str(accepted.plural) === '') continue;
      if (str(accepted.plural) === plural) return `"${plural}" is already in use`;
      if (str(accepted.kind) === kind) return `"${kind}" is already in use`;
    }
    return undefined;
  }

  /** Serves every served version of the CRD (again when its generation changed). */
  private serve(crd: Obj): void {
    const name = crd.metadata.name as string;
    const generation = crd.metadata.generation ?? 0;
    const cur = this.served.get(name);
    if (cur && cur.generation === generation) return;
    const kinds = customKinds(crd);
    const stores = new Map<string, ResourceStore>();
    for (const k of kinds) stores.set(k.def.version, this.host.install(k));
    // Versions no longer served, or served under other names, stop.
    if (cur) {
      for (const [v, s] of cur.stores) {
        const now = stores.get(v);
        if (!now || now.def.plural !== s.def.plural) this.host.uninstall(s.def.group, v, s.def.plural);
      }
    }
    const spec = isObject(crd.spec) ? crd.spec : {};
    const names = isObject(spec.names) ? spec.names : {};
    this.served.set(name, { stores, generation, group: str(spec.group), plural: str(names.plural) });
  }

  private stopServing(name: string): void {
    const cur = this.served.get(name);
    if (!cur) return;
    for (const [v, s] of cur.stores) this.host.uninstall(s.def.group, v, s.def.plural);
    this.served.delete(name);
  }

  /** Deletes the CRD's custom resources, stops serving it, removes the cleanup finalizer. */
  private async finalize(crd: Obj): Promise<void> {
    const name = crd.metadata.name as string;
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    const cur = this.served.get(name);
    // A version served through its stored form (not through a conversion webhook that may be gone).
    const stores = cur ? [...cur.stores.values()] : [];
    const store = stores.find((s) => !s.def.convertedBy) ?? stores[0];
    if (store) {
      // Every object, in every namespace; those with finalizers of their own stay Terminating
      // until their finalizers are gone (the CRD waits, as the reference's does).
      for (let round = 0; ; round++) {
        const r = await store.deleteCollection('', ALL_OBJECTS, { dryRun: false });
        const left = await store.list('', ALL_OBJECTS);
        if (left.items.length === 0) break;
        if (this.stopped) return;
        if (round > 0 && r.items.length === 0) {
          // Objects held by finalizers: look again later.
          setTimeout(() => this.enqueue(crd), 1000).unref?.();
          return;
        }
      }
    }
    this.stopServing(name);
    const status = isObject(crd.status) ? { ...crd.status } : {};
    const conds = (Array.isArray(status.conditions) ? status.conditions.filter(isObject) : []).filter((c) => c.type !== 'Terminating');
    conds.push({
      type: 'Terminating',
      status: 'False',
      lastTransitionTime: now(this.clock),
      reason: 'InstanceDeletionCompleted',
      message: 'removed all instances',
    });
    try {
      await this.crds.update(
        '',
        name,
        {
          ...crd,
          metadata: { ...crd.metadata, finalizers: (crd.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER) },
          status: { ...status, conditions: conds },
        },
        { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: CRD_CONTROLLER },
        '',
      );
    } catch (e) {
      if (!(e instanceof StatusError) || (e.code !== 409 && e.code !== 404)) throw e;
    }
  }

  private async writeStatus(crd: Obj, status: JsonObject): Promise<void> {
    try {
      await this.crds.update(
        '',
        crd.metadata.name as string,
        { ...crd, status },
        { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: CRD_CONTROLLER },
        'status',
      );
    } catch (e) {
      // 409: changed meanwhile (its next event brings it back); 404: deleted.
      if (!(e instanceof StatusError) || (e.code !== 409 && e.code !== 404)) throw e;
    }
  }
}
