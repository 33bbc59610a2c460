/**
 * The create path, and the steps of it every later write takes again: a body's type meta
 * (checkTypeMeta), the schema pass (admit: types, unknown fields, defaults), admission's view of
 * a write (attributes) and the write's field ownership (managedFields). The classes of update,
 * patch and delete extend this one to reuse those steps; nothing here knows them.
 *
 * Create is a hot path (every pod, every event): the usual body is checked without extra work,
 * and no await is taken for a kind without write hooks, a kind no admission plugin looks at, or
 * a namespace the watch cache holds active.
 */

import { svcApiVersion } from '../api/brand';
import { apiVersionOf, generateName, isObject, type JsonObject, newUid, now, type Obj } from '../api/meta';
import { badRequest, forbidden, invalid, notFound } from '../api/status';
import type { UserInfo } from '../api/user';
import { type FieldError, invalidValue, validateObjectMeta } from '../api/validation';
import { YAML_DUPLICATES } from '../codec/json-media';
import { encodeStored } from '../codec/stored';
import type { SchemaSet } from '../schema/engine';
import { type Guard, create as storeCreate } from '../store/ops';
import { ValueSlabs } from '../store/slabs';
import { isStoreError, StoreError } from '../store/types';
import type { AdmissionChain, Attributes, Operation } from './admission';
import { FieldSet, fieldPE, recordUpdate } from './apply';
import {
  goJsonType,
  goUnmarshalError,
  patchedJsonError,
  restoreError,
  smpConversionError,
  typeMetaMismatch,
  unrecognized,
} from './decode-errors';
import type { WriteHooks } from './hooks';
import { type KindDef, statusLikeOf } from './kind';
import { type NamespaceCheck, type NamespaceState, namespaceKey } from './namespaces';
import type { Subresource, WriteOptions } from './options';
import type { OwnWriteSeats } from './own-writes';
import { type ReadDeps, ResourceReads } from './reads';

const MAX_GENERATE_ATTEMPTS = 8;
/** Times a create checks its namespace again after the namespace changed under it. */
const MAX_NAMESPACE_RECHECKS = 8;
/** What a resource's store is built from (by the ApiRegistry). */
export interface ResourceStoreDeps extends ReadDeps {
  schemas: SchemaSet;
  namespaceCheck: NamespaceCheck;
  /** The kind's admission chain, if any plugin takes part. */
  admission?: AdmissionChain;
  /** Side effects of writes (a Service's cluster IP and node ports). */
  hooks?: WriteHooks;
}

export class ResourceCreates extends ResourceReads {
  readonly hooks: WriteHooks | undefined;
  readonly admission: AdmissionChain | undefined;
  protected readonly schemas: SchemaSet;
  private readonly namespaceCheck: NamespaceCheck;
  /** The seats of the server's own writes (own-writes.ts), shared by every resource. */
  protected readonly ownWrites: OwnWriteSeats | undefined;
  /** The definition of the kind's status, when it is a struct of its own (PodDisruptionBudgetStatus). */
  private readonly statusSchema: string | undefined;

  constructor(def: KindDef, d: ResourceStoreDeps) {
    super(def, d);
    this.schemas = d.schemas;
    this.namespaceCheck = d.namespaceCheck;
    this.admission = d.admission;
    this.hooks = d.hooks;
    this.ownWrites = d.options?.ownWrites;
    const top = d.schemas.get(def.schema);
    const status = top?.type === 'object' ? top.properties?.status : undefined;
    this.statusSchema = status?.type === 'ref' ? status.ref : undefined;
  }

  /**
   * Schema pass over a decoded body: types (fatal), unknown fields (per fieldValidation),
   * defaults. The errors are worded as the reference's: a body's as its decoder's (400 `... cannot
   * be handled as a ...`), a patch's result's as its patch handler's (422 on the field `patch`,
   * showing the patch map (strategic merge patch) or the patched JSON (JSON and merge patches);
   * `patch.json` recomputes that JSON, the object here being pruned by then).
   */
  admit(obj: Obj, w: WriteOptions, patch?: { smp: unknown } | { json: () => unknown }, defaults = true): void {
    this.def.strategy.decode?.(obj);
    const r = this.schemas.normalize(this.def.schema, obj, { prune: true, defaults });
    const patchError = (why: string) =>
      patch && 'smp' in patch ? smpConversionError(patch.smp, why) : patch ? patchedJsonError(patch.json(), why) : undefined;
    // Custom resources: a wrong type is a validation error (422, from the kind's strategy), as the reference.
    if (r.typeErrors.length > 0 && !this.def.custom) {
      const t = r.typeErrors[0]!;
      // A strategic merge patch's result is converted to the typed object from its map
      // (applyPatchToObject's converter errors); JSON and merge patches' results are decoded.
      if (patch && 'smp' in patch) {
        const restore = restoreError(t.expected, t.got, t);
        if (restore) throw smpConversionError(patch.smp, restore);
      } else if (patch) throw patchError(goUnmarshalError(t));
      throw badRequest(`${this.def.kind} in version "${this.def.version}" cannot be handled as a ${this.def.kind}: ${goUnmarshalError(t)}`);
    }
    // JSON duplicates and unknown fields, then a YAML body's duplicate keys (the reference's YAML
    // serializer adds its strict YAML error after the decoder's).
    const dups = w.duplicates ?? [];
    // The usual body: nothing duplicated, nothing unknown.
    if (dups.length === 0 && r.unknown.length === 0) return;
    const yamlDups = dups.filter((f) => f.startsWith(YAML_DUPLICATES));
    const problems = [
      ...dups.filter((f) => !f.startsWith(YAML_DUPLICATES)).map((f) => `duplicate field "${f}"`),
      ...r.unknown.map((f) => `unknown field "${f}"`),
      ...yamlDups,
    ];
    if (problems.length > 0 && w.fieldValidation !== 'Ignore') {
      if (w.fieldValidation === 'Strict') {
        const why = `strict decoding error: ${problems.join(', ')}`;
        // An apply patch's own strict errors are not the reference's (its YAML decoder's and the
        // structured merge's); they keep the decoder's words.
        if (w.patch && !patch) {
          // The apply patcher's strict YAML decoding (into a map: duplicates only).
          if (yamlDups.length > 0) throw badRequest(`error strict decoding YAML: error converting YAML to JSON: ${yamlDups[0]}`);
          throw badRequest(why);
        }
        throw (
          patchError(why) ?? badRequest(`${this.def.kind} in version "${this.def.version}" cannot be handled as a ${this.def.kind}: ${why}`)
        );
      }
      w.warnings.push(...problems);
    }
  }

  /**
   * The kind's apiVersion (`want`), the one its objects are stored in (`stored`: a custom kind's
   * storage version) and the Go package of its type (for decode errors), worked out once.
   */
  private get typeMeta(): { want: string; stored: string; pkg: string } {
    if (this.typeMetaMemo === undefined) {
      const want = apiVersionOf(this.def);
      // Either spelling of the group (coordination.k8s.io/v1 or coordination.svc.io/v1); the store keeps the svc one.
      // A custom kind's patched or re-sent object may carry its storage version.
      const stored = this.def.storageVersion ? apiVersionOf({ group: this.def.group, version: this.def.storageVersion }) : want;
      const parts = this.def.schema.split('.');
      this.typeMetaMemo = { want, stored, pkg: parts[parts.length - 3] ?? '' };
    }
    return this.typeMetaMemo;
  }
  private typeMetaMemo: { want: string; stored: string; pkg: string } | undefined;

  /** Check apiVersion/kind of a body (filling them when absent) and its metadata shape. */
  checkTypeMeta(obj: unknown): Obj {
    // JSON null decodes as an empty object (the kind comes from the URL), as the reference's.
    if (obj === null) return this.checkTypeMeta({});
    if (!isObject(obj)) throw unrecognized(this.def.kind, obj);
    const { want, stored, pkg } = this.typeMeta;
    // The usual body names exactly this kind and version: nothing to compare or to word.
    if (obj.apiVersion === want && obj.kind === this.def.kind && isObject(obj.metadata)) {
      obj.apiVersion = stored;
      return obj as Obj;
    }
    if (
      !this.def.custom &&
      (typeof obj.apiVersion === 'string' || obj.apiVersion === undefined) &&
      (typeof obj.kind === 'string' || obj.kind === undefined)
    ) {
      const why = typeMetaMismatch(
        { apiVersion: want, kind: this.def.kind, pkg },
        obj.apiVersion ?? want,
        obj.kind ?? this.def.kind,
        this.schemas,
      );
      if (why) throw badRequest(why);
    }
    if (
      obj.apiVersion !== undefined &&
      (typeof obj.apiVersion !== 'string' || (svcApiVersion(obj.apiVersion) !== want && obj.apiVersion !== stored))
    ) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${want})`);
    }
    if (obj.kind !== undefined && obj.kind !== this.def.kind) {
      // A custom resource decodes whatever its kind; the reference's customResourceValidator refuses it.
      if (this.def.custom) {
        const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
        throw invalid(this.def.kind, this.def.group, name, [invalidValue('kind', obj.kind, `must be ${this.def.kind}`)]);
      }
      throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${this.def.kind})`);
    }
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (!isObject(obj.metadata)) {
      throw badRequest(
        `${this.def.kind} in version "${this.def.version}" cannot be handled as a ${this.def.kind}: json: cannot unmarshal ${goJsonType(obj.metadata)} into Go struct field ${this.def.kind}.metadata of type v1.ObjectMeta`,
      );
    }
    // A custom kind is stored in its storage version whichever version the request named.
    obj.apiVersion = stored;
    obj.kind = this.def.kind;
    return obj as Obj;
  }

  private validateCreate(obj: Obj): void {
    const errs: FieldError[] = validateObjectMeta(obj.metadata, this.def.namespaced, this.def.nameRule);
    errs.push(...(this.def.strategy.validate?.(obj) ?? []));
    if (errs.length > 0) throw invalid(this.def.kind, this.def.group, obj.metadata.name ?? '', errs);
  }

  /** Create; `managed`: managedFields were computed by the caller (server-side apply). */
  create(namespace: string, body: unknown, w: WriteOptions, managed = false): Promise<Obj> {
    // The server's own writes take a seat (own-writes.ts); an apply's create runs in its patch's.
    if (w.user === undefined && !managed && this.ownWrites)
      return this.ownWrites.run(() => this.createNow(namespace, body, w, managed), w.background);
    return this.createNow(namespace, body, w, managed);
  }

  private async createNow(namespace: string, body: unknown, w: WriteOptions, managed: boolean): Promise<Obj> {
    const obj = this.checkTypeMeta(body);
    this.admit(obj, w);
    const meta = obj.metadata;
    if (this.def.namespaced) {
      if (meta.namespace && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
    if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName as string);
    meta.uid = newUid();
    meta.creationTimestamp = now(this.clock);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (this.def.generation) meta.generation = 1;
    else delete meta.generation;
    if (this.def.status && !this.def.strategy.statusOnCreate) delete obj.status;
    // The reference's order (endpoints/handlers/create.go): the writer's managedFields from the
    // decoded object, then mutating admission, then the strategy (BeforeCreate). What admission
    // or the strategy set is not owned by the writer (a LimitRange's defaults, a Pod's status),
    // and the strategy sees admission's changes (a Pod's qosClass counts defaulted resources).
    if (!managed) this.recordManaged(undefined, obj, w, '');
    const admission = this.admission?.wants(this.def.group, this.def.plural, '', 'CREATE') ? this.admission : undefined;
    const attrs = admission && this.attributes('CREATE', '', namespace, meta.name as string, obj, undefined, w, 'CreateOptions');
    if (admission && attrs) await admission.admit(attrs);
    this.def.strategy.prepareForCreate?.(obj, w.user);
    // A status the strategy set (`{}` for a new PodDisruptionBudget) is decoded as the reference
    // decodes it: its defaults and always-written zeros (status counters 0).
    if (this.statusSchema && isObject(obj.status)) this.schemas.normalize(this.statusSchema, obj.status, { prune: false, defaults: true });
    this.validateCreate(obj);
    if (admission && attrs) await admission.validate(attrs);
    let guard: Guard | undefined;
    if (this.def.namespaced) {
      const g = this.checkNamespace(namespace, meta.name as string);
      guard = g instanceof Promise ? await g : g;
    }
    if (w.dryRun) {
      // Every check of a real create runs, the store's too: a name in use is 409 AlreadyExists;
      // addresses a Service asks for must be free (nothing is reserved).
      await this.hooks?.reserve(obj, undefined, true);
      const key = this.key(namespace, meta.name as string);
      const existing = await this.kv.range(key);
      if (existing.kvs.length > 0)
        throw this.translate(new StoreError('exists', `key ${key} exists`, existing.kvs[0]), meta.name as string);
      return obj;
    }
    // Most kinds have no write hooks: no await (a turn of the microtask queue) for them.
    const undo = this.hooks ? await this.hooks.reserve(obj, undefined, false) : undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        const rev = await storeCreate(this.kv, this.key(namespace, meta.name as string), encodeStored(obj, this.createdSlabs), guard);
        meta.resourceVersion = String(rev);
        return obj;
      } catch (e) {
        if (generated && isStoreError(e, 'exists') && attempt < MAX_GENERATE_ATTEMPTS) {
          meta.name = generateName(meta.generateName as string);
          continue;
        }
        // The namespace changed since it was checked: check it again, from the store.
        if (guard && isStoreError(e, 'conflict') && attempt < MAX_NAMESPACE_RECHECKS) {
          try {
            guard = await this.checkNamespace(namespace, meta.name as string, true);
            continue;
          } catch (again) {
            await undo?.();
            throw again;
          }
        }
        await undo?.();
        throw this.translate(e, meta.name as string);
      }
    }
  }

  /** Admission's view of a write. */
  protected attributes(
    operation: Operation,
    subresource: string,
    namespace: string,
    name: string,
    object: Obj,
    oldObject: Obj | undefined,
    w: { dryRun: boolean; user?: UserInfo; warnings?: string[]; fieldManager?: string; auditAnnotations?: Record<string, string> },
    optionsKind: string,
  ): Attributes {
    const options: JsonObject = { kind: optionsKind, apiVersion: 'meta.svc.io/v1' };
    if (w.dryRun) options.dryRun = ['All'];
    if (w.fieldManager !== undefined && optionsKind !== 'DeleteOptions') options.fieldManager = w.fieldManager;
    return {
      operation,
      group: this.def.group,
      version: this.def.version,
      kind: this.def.kind,
      resource: this.def.plural,
      subresource,
      namespace,
      name,
      object,
      oldObject,
      dryRun: w.dryRun,
      user: w.user,
      fieldManager: w.fieldManager,
      options,
      warnings: w.warnings,
      annotations: w.auditAnnotations,
      decode: (o) => {
        this.def.strategy.decode?.(o);
        const r = this.schemas.normalize(this.def.schema, o, { prune: true, defaults: true });
        const t = r.typeErrors[0];
        if (t && !this.def.custom) throw badRequest(goUnmarshalError(t));
      },
    };
  }

  /** The namespace must exist and not be terminating; the create's guard holds it at that version. */
  private checkNamespace(namespace: string, name: string, live = false): Guard | Promise<Guard> {
    const got = this.namespaceCheck(namespace, live);
    // An active namespace from the watch cache is known at once: no await for the usual create.
    return got instanceof Promise ? got.then((s) => this.namespaceGuard(s, namespace, name)) : this.namespaceGuard(got, namespace, name);
  }

  private namespaceGuard({ state, revision }: NamespaceState, namespace: string, name: string): Guard {
    if (state === 'missing') throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (state === 'terminating') {
      throw forbidden(this.target, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
    return { key: namespaceKey(namespace), revision };
  }

  /** Fields a write through `subresource` cannot set (the strategy resets them): never owned. */
  private ignoredFields(subresource: Subresource): FieldSet | undefined {
    if (this.ignored.has(subresource)) return this.ignored.get(subresource);
    const set = this.ignoredFieldsOf(subresource);
    this.ignored.set(subresource, set);
    return set;
  }

  /** ignoredFields per subresource: one set each (sets are values), made on first use. */
  private readonly ignored = new Map<Subresource, FieldSet | undefined>();
  /**
   * The slabs of this resource's values (src/store/slabs.ts), one set for creates and one for
   * updates. A slab is freed only when all its values are gone, and a created version is often
   * superseded within seconds (a pod's first status) while its update lives on: in shared slabs
   * each dead first version sat between live ones. 150,000 simulated pods kept ~1 GB of slabs.
   */
  private readonly createdSlabs = new ValueSlabs();
  protected readonly updatedSlabs = new ValueSlabs();

  private ignoredFieldsOf(subresource: Subresource): FieldSet | undefined {
    const like = statusLikeOf(this.def, subresource);
    if (like?.ignored) return FieldSet.of(like.ignored.map((f) => fieldPE(f)));
    if (!this.def.status) return undefined;
    return FieldSet.of([subresource === 'status' ? fieldPE('spec') : fieldPE('status')]);
  }

  /** Record the write's field ownership in next.metadata.managedFields (non-apply writes). */
  protected recordManaged(old: Obj | undefined, next: Obj, w: WriteOptions, subresource: Subresource): void {
    recordUpdate(old, next, this.ownership(w, subresource));
  }

  /** The managedFields options of a write: manager, version, time, schema, subresource. */
  protected ownership(w: WriteOptions, subresource: Subresource) {
    return {
      manager: w.fieldManager ?? '',
      apiVersion: apiVersionOf(this.def),
      now: now(this.clock),
      schemas: this.schemas,
      defName: this.def.schema,
      subresource: subresource || undefined,
      ignoredFields: this.ignoredFields(subresource),
    };
  }
}
