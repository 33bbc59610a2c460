/**
 * A kind, described once. Everything generic (CRUD, lists, watch, discovery, OpenAPI, tables,
 * encodings) reads this description; a kind adds a KindDef and, where it has rules the schema
 * cannot say, a Strategy.
 */

import type { Obj } from '../api/meta';
import type { UserInfo } from '../api/user';
import type { FieldError, NameRule } from '../api/validation';
import type { Column } from '../codec/table';
import type { DefName } from '../schema/types';
import type { AsyncValueMapping } from '../store/mapped-async';

/**
 * A subresource that writes part of the object (PUT, PATCH and GET of
 * `<plural>/<name>/<subresource>`): a CertificateSigningRequest's `approval`, a Pod's
 * `ephemeralcontainers` and `resize`. What a write through it may change is picked from the
 * written object over the current one. A kind may describe its `status` this way too, where its
 * status writes keep more than the spec (the reference's status strategies).
 */
export interface StatusLike {
  /** The object a write stores: `cur` with what the subresource may change taken from `input`. */
  merge(input: Obj, cur: Obj): Obj;
  /**
   * The rules of a write through it, alone (a subresource writing part of the spec, e.g.
   * pods/ephemeralcontainers, checks only that part); absent: the kind's strategy validates the
   * object (validate, and validateUpdate with the subresource's name).
   */
  validate?(next: Obj, old: Obj): FieldError[];
  /** The fields a write through it never owns (server-side apply), as top-level field names. */
  ignored?: string[];
}

export interface Strategy {
  /**
   * A create keeps the status it carries (the reference's Node strategy: kubelets and node
   * simulators register nodes with their status); other kinds with a status drop it on create.
   */
  statusOnCreate?: boolean;
  /** Rewrite a decoded body into the stored form before the schema pass (e.g. extension key names). */
  decode?(obj: Obj): void;
  /**
   * Set server-owned initial state on create (after defaulting, before validation); `user` is
   * who asks (absent for the server's own writes), e.g. a CertificateSigningRequest's requestor.
   */
  prepareForCreate?(obj: Obj, user?: UserInfo): void;
  /** Carry server-owned state over on update of the main resource. */
  prepareForUpdate?(obj: Obj, old: Obj): void;
  /** Server-owned state of a write through the status subresource (after its status is taken). */
  prepareForStatusUpdate?(obj: Obj, old: Obj): void;
  /**
   * Kind-specific rules (ObjectMeta is validated generically), on create and on update (then
   * with the stored object as `old`).
   */
  validate?(obj: Obj, old?: Obj): FieldError[];
  /**
   * An update of the main resource also bumps metadata.generation when this says so, beyond
   * changes outside metadata and status (a Deployment's annotations, copied to its ReplicaSets).
   */
  bumpsGeneration?(obj: Obj, old: Obj): boolean;
  /**
   * Kind-specific rules on update, e.g. immutable fields (validate() runs too); `subresource` is
   * the one written through ('' for the main resource).
   */
  validateUpdate?(obj: Obj, old: Obj, subresource?: string): FieldError[];
  /**
   * Graceful deletion: called on a delete of a live object (may mutate it, e.g. a namespace's
   * phase, or add a finalizer it then waits for). `grace` > 0 keeps the object Terminating that many seconds (pods bound to a node);
   * `pending` keeps it Terminating until deletePending() turns false.
   */
  beginDelete?(obj: Obj, requestedGrace: number | undefined): { grace: number; pending: boolean };
  /** Whether a Terminating object must stay although it has no finalizers left. */
  deletePending?(obj: Obj): boolean;
  /** Why an object may never be deleted (a reason for 403 Forbidden), or undefined. */
  deleteForbidden?(name: string): string | undefined;
}

/**
 * A subresource that writes one part of the spec (the reference's pods/ephemeralcontainers and
 * pods/resize): GET answers the whole object; PUT and PATCH go through the update path, where
 * `merge` keeps everything of the stored object but what the subresource may change, and
 * `validate` replaces the kind's update rules.
 */

export interface KindDef {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  /** The schema definition of the kind. */
  schema: DefName;
  /** Subresources served (status: spec/status split as the reference's status strategies). */
  status: boolean;
  /** The scale subresource (autoscaling/v1 Scale over spec.replicas). */
  scale?: boolean;
  /**
   * Where a custom resource keeps what its Scale shows (`.spec.replicas`-style paths of its
   * CRD's subresources.scale); built-in kinds use spec.replicas, status.replicas, spec.selector.
   */
  scalePaths?: { specReplicas: string; statusReplicas: string; labelSelector?: string };
  /** Status-like subresources beyond `status` (or describing it), by name: see StatusLike. */
  subresources?: Record<string, StatusLike>;
  /**
   * spec.selector is a plain label map (ReplicationController), not a LabelSelector: the Scale's
   * status.selector is then the map as `a=b,c=d`.
   */
  scaleSelectorMap?: boolean;
  /** The finalize subresource (namespaces): PUT changes only spec.finalizers. */
  finalize?: boolean;
  /** deletecollection is served (all kinds but namespaces). */
  deleteCollection: boolean;
  nameRule: NameRule;
  /** Deletes answer with the object instead of a Status (e.g. ResourceQuota). */
  returnDeletedObject?: boolean;
  /** Generation counts changes outside metadata and status (kinds with a spec). */
  generation: boolean;
  /** Table columns after Name; empty: the default table (Name, Created At). */
  columns: Column[];
  /** Field selectors beyond metadata.name and metadata.namespace. */
  selectableFields: Record<string, (o: Obj) => string>;
  strategy: Strategy;
  /** A custom resource (from a CustomResourceDefinition): no protobuf, no strategic merge patch. */
  custom?: boolean;
  /**
   * A custom kind served in several versions: the version objects are stored in (its CRD's
   * storage version). Writes through any version store that apiVersion; answers carry the
   * version the request named (conversion None).
   */
  storageVersion?: string;
  /** A deprecated version: the Warning every response carries (a CRD version's deprecationWarning). */
  deprecation?: string;
  /**
   * A virtual kind (access reviews): create only, answered by the server from the request (the
   * object with its status), nothing stored.
   */
  virtual?: boolean;
  /**
   * A computed kind (ComponentStatus): get and list only, answered by the server at each read
   * from its own state (ResourceOptions.computed); nothing stored.
   */
  computed?: boolean;
  /**
   * A kind served in one form and stored in another (the reference's conversion between versions
   * or groups: autoscaling/v1 HorizontalPodAutoscalers stored as v2, events.k8s.io/v1 Events as
   * core/v1 Events): it shares the keys of the stored kind, and each object read is converted
   * from the stored form and each written into it. Both functions take and give whole objects,
   * apiVersion included.
   */
  storedAs?: StoredAs;
  /**
   * A custom kind's version converted by its CRD's conversion webhook: the version's resource reads
   * and writes the shared keys through this mapping (stored objects → this version, in batches;
   * this version → the storage version). Set instead of `storageVersion`.
   */
  convertedBy?: AsyncValueMapping;
}

export interface StoredAs {
  group: string;
  plural: string;
  /** The stored object in this kind's form. */
  read(stored: Obj): Obj;
  /** This kind's object in the stored form. */
  write(obj: Obj): Obj;
}

/** A kind's status-like subresource by name (own entries only: never `toString` and the like). */
export function statusLikeOf(k: Pick<KindDef, 'subresources'>, subresource: string): StatusLike | undefined {
  const all = k.subresources;
  return subresource !== '' && all && Object.hasOwn(all, subresource) ? all[subresource] : undefined;
}

/** The store key prefix of a kind: /registry/<group or core>/<plural>/ */
export function keyPrefix(k: Pick<KindDef, 'group' | 'plural' | 'storedAs'>): string {
  const at = k.storedAs ?? k;
  return `/registry/${at.group || 'core'}/${at.plural}/`;
}

/** The kind's selectable fields of an object beyond name and namespace (the watch cache's selector views). */
export function selectorFieldsOf(k: Pick<KindDef, 'selectableFields'>): (obj: Obj) => Record<string, string> | undefined {
  const fields = Object.entries(k.selectableFields);
  if (fields.length === 0) return () => undefined;
  return (obj) => {
    const out: Record<string, string> = {};
    for (const [f, get] of fields) out[f] = get(obj) ?? '';
    return out;
  };
}
