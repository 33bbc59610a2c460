/**
 * A kind's schema as OpenAPI: one schema of the set (src/schema) converted back to Swagger 2.0 or
 * OpenAPI 3.0, and the definitions a document needs (those its operations name and all they reach).
 */
import type { KindDef } from '../../registry/kind';
import type { DefDescription, Descriptions } from '../../schema/descriptions';
import type { SchemaSet } from '../../schema/engine';
import type { DefName, Schema } from '../../schema/types';

export type Json = Record<string, unknown>;

export type Flavor = 'v2' | 'v3';

export const REF_PREFIX: Record<Flavor, string> = { v2: '#/definitions/', v3: '#/components/schemas/' };

const META = 'io.svc.apimachinery.pkg.apis.meta.v1';
export const STATUS = `${META}.Status`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const PATCH = `${META}.Patch`;
export const API_RESOURCE_LIST = `${META}.APIResourceList`;

/** Definitions the schema set does not hold but the operations name (the reference's meta/v1 Patch). */
const SYNTHETIC: Record<DefName, Json> = { [PATCH]: { type: 'object' } };

/** Sets an extension under both brand tokens (`x-svc-<name>` and `x-kubernetes-<upstream ?? name>`). */
export function ext(o: Json, name: string, value: unknown, upstream = name): void {
  o[`x-svc-${name}`] = value;
  o[`x-kubernetes-${upstream}`] = value;
}

/** The `x-kubernetes-group-version-kind` entry, keys in the reference's order. */
export function gvkOf(g: { group: string; version: string; kind: string }): Json {
  return { group: g.group, kind: g.kind, version: g.version };
}

/** Converts one schema of the set back to OpenAPI (`$ref`s point into the flavor's section). */
export function toOpenApi(s: Schema, flavor: Flavor): Json {
  const o: Json = {};
  switch (s.type) {
    case 'ref':
      break;
    case 'object':
      o.type = 'object';
      if (s.properties) {
        const props: Json = {};
        for (const [k, v] of Object.entries(s.properties)) props[k] = toOpenApi(v, flavor);
        o.properties = props;
      }
      if (s.additionalProperties) o.additionalProperties = toOpenApi(s.additionalProperties, flavor);
      if (s.required && s.required.length > 0) o.required = [...s.required];
      if (s.unions) ext(o, 'unions', s.unions);
      if (s.gvk) ext(o, 'group-version-kind', s.gvk.map(gvkOf));
      break;
    case 'array':
      o.type = 'array';
      o.items = toOpenApi(s.items, flavor);
      if (s.listType) ext(o, 'list-type', s.listType);
      if (s.listMapKeys) ext(o, 'list-map-keys', [...s.listMapKeys]);
      if (s.patchMergeKey) ext(o, 'patch-merge-key', s.patchMergeKey);
      break;
    case 'int-or-string':
      o.type = 'string';
      o.format = 'int-or-string';
      ext(o, 'int-or-string', true);
      break;
    case 'quantity':
      o.type = 'string';
      break;
    case 'any':
      o.type = 'object';
      ext(o, 'preserve-unknown-fields', true);
      break;
    default:
      o.type = s.type;
      if (s.format) o.format = s.format;
  }
  if (s.enum) o.enum = structuredClone(s.enum);
  if (s.default !== undefined) o.default = structuredClone(s.default);
  if (s.nullable) o[flavor === 'v3' ? 'nullable' : 'x-nullable'] = true;
  if (s.preserveUnknown) ext(o, 'preserve-unknown-fields', true);
  if (s.embedded) ext(o, 'embedded-type', true, 'embedded-resource');
  if (s.mapType) ext(o, 'map-type', s.mapType);
  if (s.patchStrategy) ext(o, 'patch-strategy', s.patchStrategy);
  if (s.type !== 'ref') return withDescription(o, s.description);
  const ref = { $ref: `${REF_PREFIX[flavor]}${s.ref}` };
  if (Object.keys(o).length === 0 && s.description === undefined) return ref;
  // A $ref with siblings: Swagger 2.0 keeps them beside it (as the reference publishes);
  // OpenAPI 3.0 ignores siblings of $ref, so the reference wraps the ref in allOf.
  return withDescription(flavor === 'v3' ? { allOf: [ref], ...o } : { ...ref, ...o }, s.description);
}

function collectRefs(s: Schema, out: DefName[]): void {
  switch (s.type) {
    case 'ref':
      out.push(s.ref);
      break;
    case 'object':
      for (const p of Object.values(s.properties ?? {})) collectRefs(p, out);
      if (s.additionalProperties) collectRefs(s.additionalProperties, out);
      break;
    case 'array':
      collectRefs(s.items, out);
      break;
  }
}

/** The definitions reachable from `roots` (roots included), sorted by name. */
export function reachable(schemas: SchemaSet, roots: Iterable<DefName>): DefName[] {
  const seen = new Set<DefName>();
  const todo = [...roots];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const s = schemas.get(name);
    if (s) collectRefs(s, todo);
    else if (!(name in SYNTHETIC)) throw new Error(`bug: openapi: unknown definition ${name}`);
  }
  return [...seen].sort();
}

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

/**
 * A custom resource's Swagger 2.0 schema as the reference publishes it for kubectl's client-side
 * validation (apiextensions-apiserver, controller/openapi: builder.buildKubeNative and
 * v2.ToStructuralOpenAPIV2). kubectl's v2 validator (used for `kind: List` files and by clients
 * without server-side field validation) rejects every field not in `properties` and cannot cope
 * with untyped values, so:
 *
 *  - a root with x-kubernetes-preserve-unknown-fields is published as `{type: object}` alone
 *    (not even apiVersion, kind and metadata: kubectl would reject anything else);
 *  - below it, a preserving schema loses `properties` and `items` (and `type: object`), a
 *    nullable one its type, `properties` and `items` (and its name leaves the parent's
 *    `required`), and an array left without items its type.
 *
 * OpenAPI 3.0 documents keep the whole schema (kubectl explain reads them). `o` is changed in place.
 */
export function forKubectlV2(o: Json, root = true): Json {
  // The caller adds the kind's group-version-kind.
  if (root && o[PRESERVE] === true) return { type: 'object' };
  const props = o.properties as Record<string, Json> | undefined;
  const ap = o.additionalProperties as Json | undefined;
  if (Array.isArray(o.required)) {
    const nullable = new Set(Object.entries(props ?? {}).flatMap(([k, p]) => (p['x-nullable'] === true ? [k] : [])));
    const required = ap?.['x-nullable'] === true ? [] : o.required.filter((r: string) => !nullable.has(r));
    if (required.length > 0) o.required = required;
    else delete o.required;
  }
  if (o['x-nullable'] === true) {
    delete o['x-nullable'];
    delete o.type;
    delete o.items;
    delete o.properties;
  }
  if (o[PRESERVE] === true) {
    delete o.items;
    delete o.properties;
    if (o.type === 'object') delete o.type;
  }
  if (o.type === 'array' && o.items === undefined) delete o.type;
  for (const p of Object.values((o.properties as Record<string, Json> | undefined) ?? {})) forKubectlV2(p, false);
  if (o.items) forKubectlV2(o.items as Json, false);
  if (ap) forKubectlV2(ap, false);
  return o;
}

/** `o` with `description` first (where the reference's documents have it). */
function withDescription(o: Json, description: string | undefined): Json {
  return description === undefined ? o : { description, ...o };
}

/**
 * A definition with the reference's documentation: the type's description and its properties'.
 * A property that is a bare `$ref` keeps it beside the ref in Swagger 2.0 and wraps the ref in
 * `allOf` in OpenAPI 3.0 (which ignores siblings of `$ref`), as the reference publishes them.
 */
export function describe(o: Json, doc: DefDescription | undefined, flavor: Flavor): Json {
  if (!doc) return o;
  const props = o.properties as Record<string, Json> | undefined;
  if (props && doc.properties) {
    for (const [k, text] of Object.entries(doc.properties)) {
      let p = props[k];
      if (!p) continue;
      if (flavor === 'v3' && typeof p.$ref === 'string') {
        const { $ref, ...rest } = p;
        p = { allOf: [{ $ref }], ...rest };
      }
      props[k] = withDescription(p, text);
    }
  }
  return withDescription(o, doc.description);
}

/**
 * The published definitions `names`, with the reference's documentation from `docs`; a served
 * kind's (and its list's) group-version-kind is always present.
 */
export function definitions(schemas: SchemaSet, names: DefName[], kinds: KindDef[], flavor: Flavor, docs: Descriptions = {}): Json {
  const gvks = new Map<DefName, { group: string; version: string; kind: string }[]>();
  const add = (name: DefName, g: { group: string; version: string; kind: string }) => {
    const list = gvks.get(name) ?? [];
    list.push(g);
    gvks.set(name, list);
  };
  const custom = new Set<DefName>();
  for (const k of kinds) {
    if (k.custom) custom.add(k.schema);
    add(k.schema, k);
    if (!k.virtual) add(listSchema(k), { group: k.group, version: k.version, kind: k.listKind });
  }
  const out: Json = {};
  for (const name of names) {
    const s = schemas.get(name);
    if (!s) {
      out[name] = structuredClone(SYNTHETIC[name]);
      continue;
    }
    let o = describe(toOpenApi(s, flavor), docs[name], flavor);
    if (flavor === 'v2' && custom.has(name)) o = forKubectlV2(o);
    const served = gvks.get(name);
    if (served) {
      const list = s.type === 'object' && s.gvk ? s.gvk.map(gvkOf) : [];
      for (const g of served) {
        if (!list.some((x) => x.group === g.group && x.version === g.version && x.kind === g.kind)) list.push(gvkOf(g));
      }
      ext(o, 'group-version-kind', list);
    }
    out[name] = o;
  }
  return out;
}

/** The list kind's definition: the kind's name with the list kind in place of the kind. */
export function listSchema(k: KindDef): DefName {
  return `${k.schema.slice(0, k.schema.length - k.kind.length)}${k.listKind}`;
}
