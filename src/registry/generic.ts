/**
 * CRUD written once over the store, for every kind: create, get, list, update (incl. the status
 * subresource), delete and deletecollection, with the reference's resourceVersion semantics,
 * metadata rules and Status errors. A kind contributes only its KindDef (schema, strategy).
 *
 * Store errors are translated here, once per verb, into Status errors. Beside it: the request
 * options (options.ts), list results and continue tokens (list.ts), the deletion lifecycle's
 * decisions (deletion.ts) and namespace lookups (namespaces.ts).
 */

import { svcApiVersion } from '../api/brand';
import { apiVersionOf, clone, deepEqual, generateName, isObject, type JsonObject, newUid, now, type Obj } from '../api/meta';
import { matchesFields, matchesLabels } from '../api/selectors';
import {
  alreadyExists,
  badRequest,
  conflict,
  continueExpired,
  forbidden,
  internal,
  invalid,
  LIST_EXPIRED,
  methodNotAllowed,
  notFound,
  resourceExpired,
  STALE_OBJECT,
  StatusError,
  type Target,
  tooLargeResourceVersion,
} from '../api/status';
import type { UserInfo } from '../api/user';
import { type FieldError, invalidValue, validateObjectMeta, validateObjectMetaUpdate } from '../api/validation';
import { YAML_DUPLICATES } from '../codec/json-media';
import type { StoredObject } from '../codec/media';
import { CorruptObjectError, decodeStored, encodeStored, storedObject } from '../codec/stored';
import type { SchemaSet } from '../schema/engine';
import { type Guard, create as storeCreate, remove as storeRemove, update as storeUpdate } from '../store/ops';
import { ValueSlabs } from '../store/slabs';
import { isStoreError, type KeyValue, type KV, prefixEnd, type Revision, StoreError } from '../store/types';
import type { WatchCache } from '../watch/cache';
import { viewField } from '../watch/events';
import type { ResourceStorage } from '../watch/storage';
import type { AdmissionChain, Attributes, Operation } from './admission';
import {
  ApplyConflictError,
  applyAfterClientSideApply,
  checkApplyManagedFields,
  conflictStatus,
  FieldSet,
  fieldPE,
  recordUpdate,
} from './apply';
import { pageFromCache } from './cache-pages';
import {
  goJsonType,
  goUnmarshalError,
  patchedJsonError,
  restoreError,
  smpConversionError,
  typeMetaMismatch,
  unrecognized,
} from './decode-errors';
import {
  checkDeleteOptions,
  checkPreconditions,
  checkUnsafeDeleteOptions,
  deletionComplete,
  planDelete,
  UNSAFE_DELETE_FIELD,
} from './deletion';
import type { WriteHooks } from './hooks';
import { type KindDef, keyPrefix, type StatusLike, statusLikeOf } from './kind';
import {
  CONSISTENT_LIST_WAIT_MS,
  type ContinueToken,
  decodeContinue,
  encodeContinue,
  encodeContinueToken,
  type ListResult,
  listedObjects,
  parseResourceVersion,
} from './list';
import { type NamespaceCheck, type NamespaceState, namespaceKey } from './namespaces';
import type { DeleteOptions, ListOptions, PatchType, RegistryOptions, Subresource, WriteOptions } from './options';
import type { OwnWriteSeats } from './own-writes';
import { applyPatch, JSON_PATCH, leavesManagedFields, MERGE_PATCH, PatchError, STRATEGIC_MERGE_PATCH } from './patch';
import { unavailableStatus } from './storage-errors';
import { startWatch, type WatchRequest, type WatchStart } from './watch';

const PATCH_MEDIA: Record<Exclude<PatchType, 'apply-patch'>, typeof JSON_PATCH | typeof MERGE_PATCH | typeof STRATEGIC_MERGE_PATCH> = {
  'json-patch': JSON_PATCH,
  'merge-patch': MERGE_PATCH,
  'strategic-merge-patch': STRATEGIC_MERGE_PATCH,
};

const MAX_GENERATE_ATTEMPTS = 8;
/** Times a create checks its namespace again after the namespace changed under it. */
const MAX_NAMESPACE_RECHECKS = 8;
/** What a resource's store is built from (by the ApiRegistry). */
export interface ResourceStoreDeps {
  /** The store, decorated by the resource's watch cache (lists from memory, every watch). */
  storage: ResourceStorage;
  schemas: SchemaSet;
  namespaceCheck: NamespaceCheck;
  /** The kind's admission chain, if any plugin takes part. */
  admission?: AdmissionChain;
  /** Side effects of writes (a Service's cluster IP and node ports). */
  hooks?: WriteHooks;
  options?: RegistryOptions;
}

export class ResourceStore {
  readonly target: Target;
  readonly prefix: string;
  /** The resource's watch cache (serves "Any"/"not older than" and consistent lists, and watches). */
  readonly cache: WatchCache | undefined;
  readonly hooks: WriteHooks | undefined;
  readonly admission: AdmissionChain | undefined;
  private readonly kv: KV;
  private readonly schemas: SchemaSet;
  private readonly namespaceCheck: NamespaceCheck;
  private readonly clock: () => number;
  private readonly futureWait: number;
  private readonly continueTtl: number;
  /** The seats of the server's own writes (own-writes.ts), shared by every resource. */
  private readonly ownWrites: OwnWriteSeats | undefined;
  /** The definition of the kind's status, when it is a struct of its own (PodDisruptionBudgetStatus). */
  private readonly statusSchema: string | undefined;

  constructor(
    readonly def: KindDef,
    d: ResourceStoreDeps,
  ) {
    this.target = { group: def.group, resource: def.plural };
    this.prefix = keyPrefix(def);
    this.kv = d.storage.kv;
    this.cache = d.storage.cache;
    this.schemas = d.schemas;
    this.namespaceCheck = d.namespaceCheck;
    this.admission = d.admission;
    this.hooks = d.hooks;
    const opts = d.options ?? {};
    this.clock = opts.clock ?? Date.now;
    this.futureWait = opts.futureRevisionWait ?? 3000;
    this.continueTtl = opts.continueTtlMs ?? 5 * 60_000;
    this.ownWrites = opts.ownWrites;
    const top = d.schemas.get(def.schema);
    const status = top?.type === 'object' ? top.properties?.status : undefined;
    this.statusSchema = status?.type === 'ref' ? status.ref : undefined;
  }

  key(namespace: string, name: string): string {
    return this.def.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  /** The key range of a list: one namespace, or all of them. */
  private range(namespace: string): [string, string] {
    const start = this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
    return [start, prefixEnd(start)];
  }

  // ---- reads --------------------------------------------------------------------------

  /**
   * The object, newest by default. `at` reads it as it was at that revision (the newest version
   * at or below it; 404 when it did not exist then; 410 when the revision is compacted): a
   * lagging cache's answer, which a stale-read fault serves. With both, the later of `at` and
   * resourceVersion is read (a cache asked for a newer one waits until it has it).
   */
  async get(namespace: string, name: string, resourceVersion = '', at?: Revision): Promise<KeyValue> {
    let revision: Revision | undefined = at;
    if (resourceVersion !== '' && resourceVersion !== '0') {
      // "Not older than": wait for the store to reach it, then serve the newest.
      const rv = parseResourceVersion(resourceVersion);
      await this.waitFor(rv);
      if (revision !== undefined && rv > revision) revision = rv;
    }
    const r = await this.read(() => this.kv.range(this.key(namespace, name), revision ? { revision } : undefined));
    const kv = r.kvs[0];
    if (!kv) throw notFound(this.target, name);
    return kv;
  }

  async list(namespace: string, o: ListOptions): Promise<ListResult> {
    const [start, end] = this.range(namespace);
    // resourceVersionMatch combinations are checked by the handler (validateListOptions: 422).
    const rvSet = o.resourceVersion !== '';
    if (this.cache && !o.continueToken && o.limit === 0 && rvSet && o.resourceVersionMatch !== 'Exact') {
      return this.listFromCache(this.cache, namespace, o);
    }
    // "Most recent" without paging, on the embedded store: the watch cache once it holds the
    // store's newest revision (its objects are decoded, encoded and indexed already; the
    // reference's consistent list from cache); the store if the cache does not catch up within
    // CONSISTENT_LIST_WAIT_MS. A store shared with other replicas (etcd: `fresh`) serves these
    // lists itself, as the reference does with etcd before 3.4.31 / 3.5.13: the cache's
    // revision there comes from watch progress notifications, which those versions may send
    // ahead of events still to come (etcd-io/etcd#15220), so a cache at the newest revision
    // might not hold its objects yet (seen with Debian's etcd 3.4.23: 251 of 800 objects).
    if (this.cache && !this.kv.fresh && !rvSet && !o.continueToken && o.limit === 0) {
      const want = this.kv.currentRevision();
      if (this.cache.revision >= want || (await this.cache.waitFresh(want, CONSISTENT_LIST_WAIT_MS))) {
        return this.listFromCache(this.cache, namespace, o);
      }
    }
    let from = start;
    let revision: Revision | undefined;
    let tok: ContinueToken | undefined;
    if (o.continueToken) {
      if (rvSet && o.resourceVersion !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      tok = decodeContinue(o.continueToken);
      // rv -1: resume after the key at the newest version (the token a 410 hands out).
      if (tok.rv !== -1 && (tok.rv < this.kv.compactedRevision() || this.clock() - tok.t > this.continueTtl)) {
        throw continueExpired(encodeContinueToken(-1, tok.start, this.clock()));
      }
      from = start + tok.start;
      revision = tok.rv === -1 ? undefined : tok.rv;
    } else if (rvSet && o.resourceVersion !== '0') {
      const rv = parseResourceVersion(o.resourceVersion);
      await this.waitFor(rv);
      const exact = o.resourceVersionMatch === 'Exact' || (o.resourceVersionMatch === '' && o.limit > 0);
      if (exact) {
        if (rv < this.kv.compactedRevision()) throw resourceExpired(LIST_EXPIRED);
        revision = rv;
      }
    }
    // Pages of the newest state from the watch cache, as the reference's cache serves them
    // (ListFromCacheSnapshot): the embedded store only, as for the unpaged list above.
    const fromCache =
      this.cache && !this.kv.fresh && o.limit > 0 && (tok !== undefined || revision === undefined)
        ? await pageFromCache(this.cache, { start, from, newest: this.kv.currentRevision(), o, tok, now: this.clock() })
        : undefined;
    if (fromCache) return fromCache;
    if (!o.hasSelectors) {
      // remainingItemCount without scanning the whole range: a continuation knows how many were
      // left from its token; a first page at the newest revision takes the total from the watch
      // cache when the cache is at exactly that revision. Otherwise the store counts.
      const known = tok?.left ?? (revision === undefined && from === start ? this.cachedCount(start) : undefined);
      const r = await this.read(() =>
        this.kv.range(from, { end, revision, limit: o.limit, skipCount: known !== undefined && o.limit > 0 }),
      );
      const last = r.kvs[r.kvs.length - 1];
      const more = r.more && last !== undefined;
      const left = (known ?? r.count) - r.kvs.length;
      return {
        items: r.kvs.map(storedObject),
        revision: r.revision,
        continueToken: more ? encodeContinue(r.revision, last.key, start, this.clock(), left) : '',
        remainingItemCount: more ? left : undefined,
      };
    }
    // With selectors, read pages until `limit` matches are found (as the reference does).
    const items: StoredObject[] = [];
    const want = o.limit > 0 ? o.limit : Number.POSITIVE_INFINITY;
    const page = o.limit > 0 ? Math.max(o.limit, 100) : 0;
    let cursor = from;
    let rev = revision;
    let lastKey = '';
    let more = false;
    for (;;) {
      const r = await this.read(() => this.kv.range(cursor, { end, revision: rev, limit: page, skipCount: true }));
      rev = r.revision;
      let i = 0;
      for (; i < r.kvs.length && items.length < want; i++) {
        const kv = r.kvs[i] as KeyValue;
        lastKey = kv.key;
        if (this.matches(kv, o)) items.push(storedObject(kv));
      }
      if (items.length >= want) {
        // More only if anything is left after the last key examined.
        more = i < r.kvs.length || r.more;
        break;
      }
      if (!r.more || r.kvs.length === 0) break;
      cursor = `${(r.kvs[r.kvs.length - 1] as KeyValue).key}\0`;
    }
    return {
      items,
      revision: rev ?? this.kv.currentRevision(),
      continueToken: more ? encodeContinue(rev as Revision, lastKey, start, this.clock()) : '',
    };
  }

  /** "Any" (rv=0) and "not older than" lists, served from the watch cache without a store read. */
  private async listFromCache(cache: WatchCache, namespace: string, o: ListOptions): Promise<ListResult> {
    const rv = o.resourceVersion === '0' || o.resourceVersion === '' ? 0 : parseResourceVersion(o.resourceVersion);
    await cache.start();
    if (rv > 0 && !(await cache.waitFresh(rv, this.futureWait))) throw tooLargeResourceVersion(rv, cache.revision);
    const keyPrefix = this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : '';
    const bad = cache.corruptKeys(keyPrefix);
    if (bad.length > 0) throw new CorruptObjectError(bad.join(', '), `${bad.length} object(s) cannot be decoded`);
    // An `=` of the field selector (a kubelet's spec.nodeName) reads the cache's index by it.
    const eq = o.fieldSelector.find((r) => r.op === 'eq');
    const indexed = eq && cache.listWhere(keyPrefix, eq.field, eq.value);
    const all = indexed || cache.list(keyPrefix);
    cache.noteList(indexed && eq ? `f:${eq.field}` : '');
    const cached = o.hasSelectors
      ? all.filter((c) => matchesLabels(o.labelSelector, c.view.labels) && matchesFields(o.fieldSelector, (f) => viewField(c.view, f)))
      : all;
    const revision = cache.revision;
    const state = o.hasSelectors ? undefined : `${this.prefix}|${keyPrefix}|${revision}|${cache.stateGeneration}`;
    return { items: cached, revision, continueToken: '', state };
  }

  private matches(kv: KeyValue, o: ListOptions): boolean {
    const obj = decodeStored(kv);
    if (!matchesLabels(o.labelSelector, obj.metadata.labels)) return false;
    return matchesFields(o.fieldSelector, (f) => this.fieldValue(obj, f));
  }

  fieldValue(obj: Obj, field: string): string {
    if (field === 'metadata.name') return obj.metadata.name ?? '';
    if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
    return this.def.selectableFields[field]?.(obj) ?? '';
  }

  get selectableFields(): Set<string> {
    return new Set(['metadata.name', 'metadata.namespace', ...Object.keys(this.def.selectableFields)]);
  }

  /** Objects in a list range from the watch cache, if it is at the store's newest revision. */
  private cachedCount(start: string): number | undefined {
    const c = this.cache;
    if (!c || c.revision !== this.kv.currentRevision()) return undefined;
    return c.size(start);
  }

  /** Wait (up to futureRevisionWait) for the store to reach `rv`; then 504 Too large resource version. */
  private async waitFor(rv: Revision): Promise<void> {
    if (rv <= this.kv.currentRevision()) return;
    // A store shared with other replicas may be there already: ask it once.
    if (this.kv.fresh && rv <= (await this.read(() => (this.kv.fresh as () => Promise<Revision>)()))) return;
    const deadline = this.clock() + this.futureWait;
    while (this.clock() < deadline) {
      await Bun.sleep(25);
      if (rv <= this.kv.currentRevision()) return;
    }
    throw tooLargeResourceVersion(rv, this.kv.currentRevision());
  }

  /** Run a store read, translating store errors. */
  private async read<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      throw this.translate(e, '');
    }
  }

  translate(e: unknown, name: string): unknown {
    if (e instanceof StatusError || !isStoreError(e)) return e;
    switch (e.code) {
      case 'not-found':
        return notFound(this.target, name);
      case 'exists':
        return alreadyExists(this.target, name);
      case 'conflict':
        return conflict(this.target, name, STALE_OBJECT);
      case 'compacted':
        return resourceExpired(`too old resource version: ${e.message}`);
      case 'future-revision':
        return tooLargeResourceVersion(0, this.kv.currentRevision());
      case 'unreachable':
        return unavailableStatus(e);
      default:
        return internal(e.message);
    }
  }

  /** The resource's watch cache, for the server's own controllers (which run only on a server that has caches). */
  watchCache(): WatchCache {
    if (!this.cache) throw new Error(`bug: ${this.def.group}/${this.def.plural} has no watch cache`);
    return this.cache;
  }

  /** Start a watch (from the resource's watch cache). Throws 410 Expired, 504, or 405 without a cache. */
  async watch(r: WatchRequest): Promise<WatchStart> {
    if (!this.cache) throw methodNotAllowed();
    const keyPrefix = this.def.namespaced && r.namespace ? `${this.prefix}${r.namespace}/` : '';
    return startWatch(this.kv, this.cache, keyPrefix, r);
  }

  // ---- writes -------------------------------------------------------------------------

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
  private attributes(
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

  /**
   * PUT of the main resource or of its status subresource. The body's resourceVersion, when set,
   * must be current (else 409); without it the update is unconditional and retried on races.
   * An update that changes nothing writes nothing and keeps the resourceVersion.
   */
  async update(namespace: string, name: string, body: unknown, w: WriteOptions, subresource: Subresource): Promise<Obj> {
    const input = this.checkTypeMeta(body);
    this.admit(input, w);
    const meta = input.metadata;
    if (meta.name !== name) throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`);
    if (this.def.namespaced && meta.namespace && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const wantRv = meta.resourceVersion ? parseResourceVersion(meta.resourceVersion, 'resourceVersion') : 0;
    return (await this.guaranteedUpdate(namespace, name, w, subresource, wantRv, () => ({ input, managed: false }))).obj;
  }

  /**
   * A write computed from the current object by `f` (which throws a StatusError to refuse), as
   * the reference's GuaranteedUpdate: retried on the newer object after a race.
   */
  async updateFrom(
    namespace: string,
    name: string,
    subresource: Subresource,
    w: WriteOptions,
    f: (cur: Readonly<Obj>) => Obj,
  ): Promise<Obj> {
    return (await this.guaranteedUpdate(namespace, name, w, subresource, 0, (cur) => ({ input: f(cur), managed: false, fresh: true }))).obj;
  }

  /**
   * PATCH: the patch is applied to the current object and the result goes through the update
   * path; after a write race the patch is applied again to the newer object (unless it carried
   * a resourceVersion, which makes it conditional: 409). Server-side apply creates the object
   * when it is absent, and computes managedFields itself.
   */
  async patch(
    namespace: string,
    name: string,
    type: PatchType,
    body: unknown,
    w: WriteOptions,
    subresource: Subresource,
    force: boolean,
  ): Promise<{ obj: Obj; created: boolean }> {
    w.patch = true;
    // The apply's configuration checked and admitted for the existence check below, used as it is
    // by the update's first attempt (a retry makes its own: apply may keep parts of it).
    let firstApplied: Obj | undefined;
    if (type === 'apply-patch') {
      if (!w.fieldManager) {
        // Issue 5 asks for 400 here; the reference's text is kept (the reference answers 422 Invalid PatchOptions).
        throw badRequest('PatchOptions.meta.svc.io "" is invalid: fieldManager: Required value: is required for apply patch');
      }
      if (body === null) body = {};
      if (!isObject(body)) {
        throw badRequest(
          `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goJsonType(body)} into Go value of type map[string]interface {}`,
        );
      }
      // The reference's field manager takes only its own group, version and kind (versionCheckManager).
      const { apiVersion, kind } = body;
      if (typeof apiVersion !== 'string' || svcApiVersion(apiVersion) !== apiVersionOf(this.def) || kind !== this.def.kind) {
        const gv = typeof apiVersion === 'string' ? apiVersion : '';
        throw badRequest(`invalid object type: ${gv.includes('/') ? gv : `/${gv}`}, Kind=${typeof kind === 'string' ? kind : ''}`);
      }
      checkApplyManagedFields(body);
      const applied = this.checkTypeMeta(clone(body));
      // The applied configuration as its manager wrote it: defaults are not the manager's fields
      // (the reference defaults the object apply makes, not the configuration).
      this.admit(applied, w, undefined, false);
      if (applied.metadata.name !== undefined && applied.metadata.name !== name) {
        throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`);
      }
      applied.metadata.name = name;
      firstApplied = applied;
      // The newest version, durable or not, as the update below reads it; absent there, the
      // durable read decides (as in updateLoop).
      const key = this.key(namespace, name);
      const exists = this.latestOf(key, name) !== undefined || (await this.kv.range(key)).kvs.length > 0;
      if (!exists) {
        if (subresource !== '') throw notFound(this.target, name);
        const r = this.runApply(undefined, applied, w, subresource, force);
        return { obj: await this.create(namespace, r, w, true), created: true };
      }
    }
    const r = await this.guaranteedUpdate(namespace, name, w, subresource, 0, (cur) => {
      if (type === 'apply-patch') {
        let applied = firstApplied;
        firstApplied = undefined;
        if (!applied) {
          applied = this.checkTypeMeta(clone(body));
          this.admit(applied, { ...w, warnings: [] }, undefined, false);
          applied.metadata.name = name;
        }
        // apply() neither modifies the live object nor shares structure with it (its result is
        // built of copies: apply.test.ts applies to frozen objects and looks for shared parts),
        // but for FieldsV1 trees, which nothing writes into once made.
        const input = this.runApply(cur, applied, w, subresource, force);
        // What apply made is defaulted as any written object (fields it dropped come back as defaults).
        this.admit(input, { ...w, warnings: [] });
        return { input, managed: true, fresh: true };
      }
      let patched: unknown;
      // A patch that cannot reach managedFields (a label, a status) gets the list itself in its
      // result instead of a copy: `cur` holds an empty list while the patch copies it, and the
      // result's copy of that is replaced by the list. Copying a pod's list (every manager's
      // FieldsV1 tree), then comparing the copy with the list entry by entry to learn that the
      // request did not edit it (recordUpdate), took ~6% of a pod's merge patch (the profile in
      // bench/history.md, 2026-11-29 seventeenth session). `cur` is this attempt's own decode
      // and gets its list back at once; `input` and `cur` then share the list until
      // recordUpdate gives `input` a new one, before any admission plugin sees it. Not on other
      // subresources: a binding keeps the shared list, where a mutating webhook's edit of it
      // would reach `cur` too.
      const live = cur.metadata.managedFields;
      const lend = live !== undefined && (subresource === '' || subresource === 'status') && leavesManagedFields(PATCH_MEDIA[type], body);
      try {
        if (lend) cur.metadata.managedFields = [];
        patched = applyPatch(PATCH_MEDIA[type], cur, body, {
          fieldValidation: w.fieldValidation,
          schemas: this.schemas,
          defName: this.def.schema,
        });
      } catch (e) {
        if (e instanceof PatchError) throw e.toStatusError();
        throw e;
      } finally {
        if (lend) cur.metadata.managedFields = live;
      }
      if (lend && isObject(patched) && isObject(patched.metadata)) patched.metadata.managedFields = live;
      const input = this.checkTypeMeta(patched);
      const again = () =>
        applyPatch(PATCH_MEDIA[type], cur, body, { fieldValidation: w.fieldValidation, schemas: this.schemas, defName: this.def.schema });
      this.admit(input, { ...w, warnings: w.warnings }, type === 'strategic-merge-patch' ? { smp: body } : { json: again });
      if (input.metadata.name !== name)
        throw badRequest(`the name of the object (${input.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      const rv = input.metadata.resourceVersion;
      if (rv !== undefined && rv !== cur.metadata.resourceVersion) throw conflict(this.target, name, STALE_OBJECT);
      // The three patch kinds neither modify `cur` nor share structure with it.
      return { input, managed: false, fresh: true };
    });
    return { obj: r.obj, created: false };
  }

  /** Server-side apply of `applied` over `live` (undefined: create); conflicts become 409. */
  private runApply(live: Obj | undefined, applied: Obj, w: WriteOptions, subresource: Subresource, force: boolean): Obj {
    try {
      return applyAfterClientSideApply(live, applied, { ...this.ownership(w, subresource), force }).obj;
    } catch (e) {
      if (e instanceof ApplyConflictError) throw conflictStatus(e, this.target, applied.metadata.name);
      throw e;
    }
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
  private readonly updatedSlabs = new ValueSlabs();

  private ignoredFieldsOf(subresource: Subresource): FieldSet | undefined {
    const like = statusLikeOf(this.def, subresource);
    if (like?.ignored) return FieldSet.of(like.ignored.map((f) => fieldPE(f)));
    if (!this.def.status) return undefined;
    return FieldSet.of([subresource === 'status' ? fieldPE('spec') : fieldPE('status')]);
  }

  /** Record the write's field ownership in next.metadata.managedFields (non-apply writes). */
  private recordManaged(old: Obj | undefined, next: Obj, w: WriteOptions, subresource: Subresource): void {
    recordUpdate(old, next, this.ownership(w, subresource));
  }

  /** The managedFields options of a write: manager, version, time, schema, subresource. */
  private ownership(w: WriteOptions, subresource: Subresource) {
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

  /**
   * The update loop (the reference's GuaranteedUpdate): read the current object, compute the
   * input from it, carry server-owned state over, record ownership, validate, and write if
   * anything changed, retrying on a write race unless the caller pinned a resourceVersion.
   */
  private guaranteedUpdate(...a: Parameters<ResourceStore['guaranteedUpdateNow']>): Promise<{ obj: Obj }> {
    const run = () => this.guaranteedUpdateNow(...a);
    return a[2].user === undefined && this.ownWrites ? this.ownWrites.run(run, a[2].background) : run();
  }

  private async guaranteedUpdateNow(
    namespace: string,
    name: string,
    w: WriteOptions,
    subresource: Subresource,
    wantRv: number,
    tryUpdate: (cur: Readonly<Obj>) => { input: Obj; managed: boolean; fresh?: boolean },
  ): Promise<{ obj: Obj }> {
    if (this.kv.latest) return this.updateLoop(namespace, name, w, subresource, wantRv, tryUpdate);
    // A store without latest() (etcd) would make concurrent updates of one key from this
    // replica fail their compares against each other, each retry a round trip (100 concurrent
    // patches: thousands of txns). Queued per key here, each reads what the previous wrote;
    // writes from other replicas still meet in etcd's compare and retry.
    const key = this.key(namespace, name);
    const before = this.keyQueue.get(key);
    let done = () => {};
    const mine = new Promise<void>((r) => {
      done = r;
    });
    const tail = before ? before.then(() => mine) : mine;
    this.keyQueue.set(key, tail);
    try {
      if (before) await before;
      return await this.updateLoop(namespace, name, w, subresource, wantRv, tryUpdate);
    } finally {
      done();
      if (this.keyQueue.get(key) === tail) this.keyQueue.delete(key);
    }
  }

  /** Per key, the end of the queue of updates from this process (stores without latest()). */
  private readonly keyQueue = new Map<string, Promise<void>>();

  private async updateLoop(
    namespace: string,
    name: string,
    w: WriteOptions,
    subresource: Subresource,
    wantRv: number,
    tryUpdate: (cur: Readonly<Obj>) => { input: Obj; managed: boolean; fresh?: boolean },
  ): Promise<{ obj: Obj }> {
    const key = this.key(namespace, name);
    for (;;) {
      // On the embedded store, start from the newest version even if its write is not durable
      // yet: the txn below (no await in between) then chains after it in the log instead of
      // failing its compare and waiting a sync per retry (100 concurrent patches of one object
      // took 100 syncs). Any answer not followed by our own write waits until that version is
      // durable, so nothing not yet acknowledged reaches this client.
      // Absent there (never created, or deleted by a write not yet durable): the durable read
      // decides, so a 404 is never answered before the delete is durable.
      const curKv = this.latestOf(key, name) ?? (await this.get(namespace, name));
      let next: Obj;
      let cur: Obj;
      try {
        if (wantRv && wantRv !== curKv.modRevision) throw conflict(this.target, name, STALE_OBJECT);
        cur = decodeStored(curKv);
        // `cur` is this attempt's own decode; tryUpdate only reads it. A `fresh` input was made for
        // this attempt (a patch's result) and becomes the new object without another copy.
        const { input, managed, fresh } = tryUpdate(cur);
        next = this.merge(input, cur, subresource, managed, fresh);
        // A binding leaves managedFields alone: the reference's BindingREST writes through the
        // storage's GuaranteedUpdate, not the field manager (and the slow path of recordUpdate was
        // ~40% of a scheduled pod's server CPU in bench/scheduler.ts).
        if (!managed && subresource !== 'binding') this.recordManaged(cur, next, w, subresource);
        // Mutating admission of updates (webhooks, policies): awaited only when a mutating plugin
        // looks at the request; what it changes is not owned by the writer, as on create.
        if (this.admission?.wantsAdmit(this.def.group, this.def.plural, subresource, 'UPDATE')) {
          await this.admission.admit(
            this.attributes('UPDATE', subresource, namespace, name, next, cur, w, w.patch ? 'PatchOptions' : 'UpdateOptions'),
          );
        }
        const errs: FieldError[] = validateObjectMeta(next.metadata, this.def.namespaced, this.def.nameRule);
        errs.push(...validateObjectMetaUpdate(next.metadata, cur.metadata));
        const like = statusLikeOf(this.def, subresource);
        if (like?.validate) errs.push(...like.validate(next, cur));
        else {
          errs.push(...(this.def.strategy.validate?.(next, cur) ?? []));
          // A binding sets what updates may not (spec.nodeName), having checked it may.
          if (subresource !== 'binding') errs.push(...(this.def.strategy.validateUpdate?.(next, cur, subresource) ?? []));
        }
        if (errs.length > 0) throw invalid(this.def.kind, this.def.group, name, errs);
      } catch (e) {
        await this.durable(curKv);
        throw e;
      }
      // Validating admission of updates (policies): only when a plugin looks at them, since the
      // await gives up the chaining above (a race then retries).
      if (this.admission?.wants(this.def.group, this.def.plural, subresource, 'UPDATE')) {
        try {
          await this.admission.validate(
            this.attributes('UPDATE', subresource, namespace, name, next, cur, w, w.patch ? 'PatchOptions' : 'UpdateOptions'),
          );
        } catch (e) {
          await this.durable(curKv);
          throw e;
        }
      }
      if (deepEqual(next, cur)) {
        await this.durable(curKv);
        return { obj: cur };
      }
      const removing = deletionComplete(next, this.def.strategy);
      // Kinds with write hooks reserve what the new version needs (an await here gives up the
      // chaining above for them: a conflict retries, after giving the reservation back).
      const undo = this.hooks && !removing ? await this.hooks.reserve(next, cur, w.dryRun) : undefined;
      if (w.dryRun) {
        await this.durable(curKv);
        return { obj: next };
      }
      try {
        if (removing) {
          // The last finalizer is gone from a Terminating object: it is removed now.
          await storeRemove(this.kv, key, curKv.modRevision);
          await this.hooks?.release(cur);
          return { obj: next };
        }
        const rev = await storeUpdate(this.kv, key, encodeStored(next, this.updatedSlabs), curKv.modRevision);
        next.metadata.resourceVersion = String(rev);
        await this.hooks?.release(cur, next);
        return { obj: next };
      } catch (e) {
        await undo?.();
        if (isStoreError(e, 'conflict') && !wantRv) continue;
        throw this.translate(e, name);
      }
    }
  }

  /** The newest version of `key` where the store has KV.latest (possibly not durable yet). */
  private latestOf(key: string, name: string): KeyValue | undefined {
    if (!this.kv.latest) return undefined;
    try {
      return this.kv.latest(key);
    } catch (e) {
      throw this.translate(e, name);
    }
  }

  /** Wait until `kv` is durable before answering from it (see guaranteedUpdate). */
  private async durable(kv: KeyValue): Promise<void> {
    if (!this.kv.durable || kv.modRevision <= this.kv.currentRevision()) return;
    try {
      await this.kv.durable(kv.modRevision);
    } catch (e) {
      throw this.translate(e, '');
    }
  }

  /** The object an update stores: the input with server-owned state carried over from `cur`. */
  private merge(input: Obj, cur: Obj, subresource: Subresource, managed = false, fresh = false): Obj {
    let next: Obj;
    if (subresource === 'finalize') {
      // namespaces/finalize changes only spec.finalizers.
      next = clone(cur);
      const spec = { ...((next.spec as Record<string, unknown> | undefined) ?? {}) };
      const want = (input.spec as { finalizers?: string[] } | undefined)?.finalizers;
      if (want === undefined || want.length === 0) delete spec.finalizers;
      else spec.finalizers = want;
      next.spec = spec;
    } else if (subresource === 'binding') {
      // The binder made the new object from the current one (pods/binding: spec.nodeName).
      next = fresh ? input : clone(input);
    } else if (statusLikeOf(this.def, subresource)) {
      // A status-like subresource picks what it may change (a CertificateSigningRequest's approval).
      next = (statusLikeOf(this.def, subresource) as StatusLike).merge(input, cur);
      if (managed && input.metadata.managedFields) next.metadata.managedFields = clone(input.metadata.managedFields);
    } else if (subresource === 'status') {
      // Status writes change only status: everything else is the current object's (copied), the
      // status is the input's, taken as it is when the input was made for this attempt (a
      // patch's result) rather than copied. A kubelet's status patch of a pod copied the pod's
      // status twice (the current one with the object, then the input's over it).
      const { status: _old, ...rest } = cur;
      next = clone(rest as Obj);
      if (input.status !== undefined) next.status = fresh ? input.status : clone(input.status);
      this.def.strategy.prepareForStatusUpdate?.(next, cur);
      // Server-side apply computed the new ownership on the input: keep it.
      if (managed && input.metadata.managedFields) next.metadata.managedFields = clone(input.metadata.managedFields);
    } else {
      next = fresh ? input : clone(input);
      if (this.def.status) {
        if (cur.status === undefined) delete next.status;
        else next.status = clone(cur.status);
      }
      this.def.strategy.prepareForUpdate?.(next, cur);
    }
    const m = next.metadata;
    const c = cur.metadata;
    m.namespace = c.namespace;
    m.uid = c.uid;
    m.creationTimestamp = c.creationTimestamp;
    m.resourceVersion = c.resourceVersion;
    if (c.deletionTimestamp) m.deletionTimestamp = c.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (c.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    if (m.namespace === undefined) delete m.namespace;
    delete m.selfLink;
    if (this.def.generation) {
      const bump = specChanged(next, cur) || (subresource === '' && this.def.strategy.bumpsGeneration?.(next, cur) === true);
      m.generation = (c.generation ?? 1) + (bump ? 1 : 0);
    } else {
      delete m.generation;
    }
    return next;
  }

  /**
   * Delete, with the reference's lifecycle: preconditions (uid, resourceVersion) → 409; the
   * propagation policy adds the `orphan` / `foregroundDeletion` finalizer for the garbage
   * collector; an object with finalizers (or a graceful delete pending, see
   * Strategy.beginDelete) becomes Terminating (deletionTimestamp set) and stays until they are
   * gone; otherwise it is removed. Deleting a Terminating object again changes nothing.
   */
  delete(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    if (o.user === undefined && this.ownWrites) return this.ownWrites.run(() => this.deleteNow(namespace, name, o));
    return this.deleteNow(namespace, name, o);
  }

  private async deleteNow(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    const key = this.key(namespace, name);
    const why = this.def.strategy.deleteForbidden?.(name);
    if (why) throw forbidden(this.target, name, why);
    if (o.ignoreStoreReadError) return this.unsafeDelete(namespace, name, o);
    checkDeleteOptions(o);
    for (;;) {
      const curKv = await this.get(namespace, name);
      const cur = decodeStored(curKv);
      checkPreconditions(this.target, name, cur, o.preconditions);
      if (this.admission?.wants(this.def.group, this.def.plural, '', 'DELETE')) {
        const attrs = this.attributes('DELETE', '', namespace, name, cur, cur, o, 'DeleteOptions');
        if (this.admission.wantsAdmit(this.def.group, this.def.plural, '', 'DELETE')) await this.admission.admit(attrs);
        await this.admission.validate(attrs);
      }
      const { next, remove } = planDelete(this.def.strategy, cur, o, this.clock);
      if (remove) {
        if (o.dryRun) return { obj: cur, deleted: true };
        try {
          await storeRemove(this.kv, key, curKv.modRevision);
          await this.hooks?.release(cur);
          return { obj: cur, deleted: true };
        } catch (e) {
          if (isStoreError(e, 'conflict')) continue;
          throw this.translate(e, name);
        }
      }
      if (deepEqual(next, cur)) return { obj: cur, deleted: false };
      if (o.dryRun) return { obj: next, deleted: false };
      try {
        const rev = await storeUpdate(this.kv, key, encodeStored(next, this.updatedSlabs), curKv.modRevision);
        next.metadata.resourceVersion = String(rev);
        return { obj: next, deleted: false };
      } catch (e) {
        if (isStoreError(e, 'conflict')) continue;
        throw this.translate(e, name);
      }
    }
  }

  /**
   * Forced deletion of an object that cannot be read (spec 1, "Forced deletion (unsafe)"): the
   * other delete options must be unset; a readable object is refused; finalizers and
   * preconditions are skipped. The caller checked the gate.
   */
  private async unsafeDelete(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    checkUnsafeDeleteOptions(o);
    const key = this.key(namespace, name);
    const r = await this.read(() => this.kv.range(key));
    const kv = r.kvs[0];
    if (!kv) throw notFound(this.target, name);
    try {
      decodeStored(kv);
    } catch (e) {
      if (!(e instanceof CorruptObjectError)) throw e;
      try {
        await storeRemove(this.kv, key, kv.modRevision);
      } catch (err) {
        throw this.translate(err, name);
      }
      const obj: Obj = { apiVersion: apiVersionOf(this.def), kind: this.def.kind, metadata: { name, uid: '' } };
      if (this.def.namespaced) obj.metadata.namespace = namespace;
      return { obj, deleted: true };
    }
    throw badRequest(
      `the object ${name} of ${this.def.plural} is readable; ${UNSAFE_DELETE_FIELD} is only for objects whose stored data cannot be decoded: use a normal delete`,
    );
  }

  /** Delete everything a list with these options returns; answers the deleted objects. */
  async deleteCollection(namespace: string, lo: ListOptions, o: DeleteOptions): Promise<{ items: Obj[]; revision: Revision }> {
    const r = await this.list(namespace, { ...lo, limit: 0, continueToken: '' });
    const items: Obj[] = [];
    for (const obj of listedObjects(r)) {
      try {
        const d = await this.delete(obj.metadata.namespace ?? '', obj.metadata.name as string, { ...o, preconditions: undefined });
        items.push(d.obj);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) continue;
        throw e;
      }
    }
    return { items, revision: this.kv.currentRevision() };
  }
}

/** Whether anything outside metadata and status differs (drives metadata.generation). */
function specChanged(a: Obj, b: Obj): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === 'metadata' || k === 'status' || k === 'kind' || k === 'apiVersion') continue;
    if (!deepEqual(a[k], b[k])) return true;
  }
  return false;
}
