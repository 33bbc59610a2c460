/**
 * The schema model: one description per kind drives validation of types, defaulting, pruning,
 * unknown-field detection, apply/strategic-merge rules, CEL types, OpenAPI, protobuf and tables.
 *
 * Schemas are derived from the reference OpenAPI by scripts/gen-schemas.ts into
 * src/schema/generated/definitions.json (names rebranded `io.k8s.` → `io.svc.`, extensions
 * `x-kubernetes-*` → the fields below), then overlaid by hand-written per-kind facts (defaults,
 * validation, columns) in src/kinds/.
 */

/** A definition name, e.g. `io.svc.api.core.v1.Pod`. */
export type DefName = string;

/** Scalar protobuf types, or 'message'. */
export type ProtoType =
  | 'string'
  | 'bytes'
  | 'bool'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'double'
  | 'float'
  | 'message';

interface Base {
  /**
   * Documentation, published in OpenAPI: a custom resource's, from its schema. Built-in
   * definitions have none here; theirs are in generated/descriptions.json (see descriptions.ts).
   */
  description?: string;
  /** `x-svc-preserve-unknown-fields`: keep fields not in `properties` (CRDs, RawExtension). */
  preserveUnknown?: boolean;
  /** `x-svc-embedded-type`: an embedded object with apiVersion/kind/metadata. */
  embedded?: boolean;
  /** Default value applied when the field is absent (from per-kind overlays). */
  default?: unknown;
  /** Allowed values (strings mostly). */
  enum?: unknown[];
  /** Protobuf field number within the parent message (from the reference .proto files). */
  protoTag?: number;
  /**
   * Field of a Go-inlined struct (flat in JSON, nested in protobuf): the field numbers from the
   * parent message down, e.g. Probe.exec `[1, 1]` (ProbeHandler handler = 1, exec = 1). Such
   * fields have no `protoTag`.
   */
  protoPath?: number[];
  /**
   * Protobuf type of the field's value (of each item when repeated, of each value when a map);
   * repeated scalars are unpacked, as Kubernetes' gogo proto2 encoding writes them.
   */
  protoType?: ProtoType;
  /**
   * On a property whose protoType is 'message': the message of its value (rebranded name, e.g.
   * `io.svc.apimachinery.pkg.apis.meta.v1.Time`; also messages without a definition here, such
   * as meta v1 Duration and Verbs). On a definition: the message it is encoded as (present only
   * when a reference .proto declares one).
   */
  protoMessage?: DefName;
  /**
   * A scalar field whose zero value is a set value: a Go pointer field (or a value field without
   * `omitempty`). Go's protobuf encoding writes every value field, set or not; a zero read from
   * protobuf for a scalar field without keepZero (and not required) is left out of the JSON
   * object, as Go's JSON encoding omits it.
   */
  keepZero?: boolean;
  nullable?: boolean;
  /** `x-svc-patch-strategy` where it sits on a ref or struct (e.g. DeploymentSpec.strategy: retainKeys). */
  patchStrategy?: string;
  /** `x-svc-map-type` where it sits on a ref (e.g. PersistentVolumeSpec.claimRef: granular). */
  mapType?: 'atomic' | 'granular';
}

export interface RefSchema extends Base {
  type: 'ref';
  ref: DefName;
}

export interface ObjectSchema extends Base {
  type: 'object';
  /** Declared fields (a struct). Absent with additionalProperties: a map. */
  properties?: Record<string, Schema>;
  /** Value schema of a map (`additionalProperties`). */
  additionalProperties?: Schema;
  required?: string[];
  /** `x-svc-map-type` (also used for structs): atomic or granular (default granular). */
  mapType?: 'atomic' | 'granular';
  /** `x-svc-unions` discriminators, if any (kept for completeness). */
  unions?: unknown[];
  /** `x-svc-group-version-kind` of a top-level kind. */
  gvk?: { group: string; version: string; kind: string }[];
}

export interface ArraySchema extends Base {
  type: 'array';
  items: Schema;
  /** `x-svc-list-type` (default atomic, or `map` when patchStrategy is merge with a merge key). */
  listType?: 'atomic' | 'set' | 'map';
  /** `x-svc-list-map-keys`. */
  listMapKeys?: string[];
  /** `x-svc-patch-strategy`: 'merge', 'retainKeys', 'merge,retainKeys', 'replace'. */
  patchStrategy?: string;
  /** `x-svc-patch-merge-key`. */
  patchMergeKey?: string;
}

export interface ScalarSchema extends Base {
  type: 'string' | 'integer' | 'number' | 'boolean';
  /** 'int32' | 'int64' | 'double' | 'byte' | 'date-time' | ... */
  format?: string;
  patchStrategy?: string;
}

/** `x-svc-int-or-string` (IntOrString). */
export interface IntOrStringSchema extends Base {
  type: 'int-or-string';
}

/** A Quantity string ("100m", "1Gi"); validated by the quantity grammar. */
export interface QuantitySchema extends Base {
  type: 'quantity';
}

/** Any JSON value (RawExtension, JSON, FieldsV1 content). */
export interface AnySchema extends Base {
  type: 'any';
}

export type Schema = RefSchema | ObjectSchema | ArraySchema | ScalarSchema | IntOrStringSchema | QuantitySchema | AnySchema;

/** All definitions by name. */
export type Definitions = Record<DefName, Schema>;
