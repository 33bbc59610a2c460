/**
 * /openapi/v2 and /openapi/v3, built from the schemas and the kinds.
 *
 * One model drives both documents: the schema set (src/schema) converted back to OpenAPI, and one
 * list of operations per served kind (as the reference's endpoint installer registers them). Every
 * extension is published under both brand tokens: `x-svc-*` as the spec names them and
 * `x-kubernetes-*` as unmodified clients look for them (kubectl explain finds a kind by
 * `x-kubernetes-group-version-kind`; its field-validation check looks for the `fieldValidation`
 * query parameter on the PATCH operation carrying the kind's `x-kubernetes-group-version-kind`).
 *
 *   GET /openapi/v2                        Swagger 2.0, every served kind
 *   GET /openapi/v3                        index: {"paths": {"api/v1": {"serverRelativeURL": ...}}}
 *   GET /openapi/v3/api/v1                 OpenAPI 3.0 of one group/version
 *   GET /openapi/v3/apis/<group>/<version>
 *
 * Documents are built once, on first request (the set of kinds is fixed at start-up), and kept
 * as bytes with their ETag (uppercase hex SHA-512, as the reference) and, when large, gzipped.
 */
import { notAcceptable, pathNotFound } from '../api/status';
import type { ApiRegistry } from '../registry/api-registry';
import type { KindDef } from '../registry/kind';
import type { SchemaSet } from '../schema/engine';
import type { DefName, Schema } from '../schema/types';
import { VERSION_INFO } from './discovery';
import { parseAccept } from './negotiate';
import { GZIP_THRESHOLD } from './respond';

type Json = Record<string, unknown>;

export type Flavor = 'v2' | 'v3';

const REF_PREFIX: Record<Flavor, string> = { v2: '#/definitions/', v3: '#/components/schemas/' };

const META = 'io.svc.apimachinery.pkg.apis.meta.v1';
const STATUS = `${META}.Status`;
const DELETE_OPTIONS = `${META}.DeleteOptions`;
const PATCH = `${META}.Patch`;
const API_RESOURCE_LIST = `${META}.APIResourceList`;

/** Definitions the schema set does not hold but the operations name (the reference's meta/v1 Patch). */
const SYNTHETIC: Record<DefName, Json> = { [PATCH]: { type: 'object' } };

export const PATCH_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];
const PRODUCES = ['application/json', 'application/yaml'];
const PRODUCES_WATCH = [...PRODUCES, 'application/json;stream=watch'];

// ---------------------------------------------------------------------------------------------
// Schemas

/** Sets an extension under both brand tokens (`x-svc-<name>` and `x-kubernetes-<upstream ?? name>`). */
function ext(o: Json, name: string, value: unknown, upstream = name): void {
  o[`x-svc-${name}`] = value;
  o[`x-kubernetes-${upstream}`] = value;
}

/** The `x-kubernetes-group-version-kind` entry, keys in the reference's order. */
function gvkOf(g: { group: string; version: string; kind: string }): Json {
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
  if (s.type !== 'ref') return o;
  const ref = { $ref: `${REF_PREFIX[flavor]}${s.ref}` };
  if (Object.keys(o).length === 0) return ref;
  // A $ref with siblings: Swagger 2.0 keeps them beside it (as the reference publishes);
  // OpenAPI 3.0 ignores siblings of $ref, so the reference wraps the ref in allOf.
  return flavor === 'v3' ? { allOf: [ref], ...o } : { ...ref, ...o };
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

/** The published definitions `names`; a served kind's (and its list's) group-version-kind is always present. */
function definitions(schemas: SchemaSet, names: DefName[], kinds: KindDef[], flavor: Flavor): Json {
  const gvks = new Map<DefName, { group: string; version: string; kind: string }[]>();
  const add = (name: DefName, g: { group: string; version: string; kind: string }) => {
    const list = gvks.get(name) ?? [];
    list.push(g);
    gvks.set(name, list);
  };
  for (const k of kinds) {
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
    const o = toOpenApi(s, flavor);
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
function listSchema(k: KindDef): DefName {
  return `${k.schema.slice(0, k.schema.length - k.kind.length)}${k.listKind}`;
}

// ---------------------------------------------------------------------------------------------
// Operations

interface Param {
  name: string;
  in: 'query' | 'path';
  type: 'string' | 'integer' | 'boolean';
}

export type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';

interface Op {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  operationId: string;
  action: Action;
  kind: KindDef;
  params: Param[];
  /** Request body: a definition, and whether it is required. PATCH bodies take the patch types. */
  body?: { def: DefName; required: boolean };
  /** Response code → definition. */
  responses: [string, DefName][];
  produces: string[];
  consumes: string[];
}

interface PathItem {
  path: string;
  params: Param[];
  ops: Op[];
}

const query = (name: string, type: Param['type'] = 'string'): Param => ({ name, in: 'query', type });
const NAME: Param = { name: 'name', in: 'path', type: 'string' };
const NAMESPACE: Param = { name: 'namespace', in: 'path', type: 'string' };
const PRETTY = query('pretty');
const LIST_QUERY = [
  query('allowWatchBookmarks', 'boolean'),
  query('continue'),
  query('fieldSelector'),
  query('labelSelector'),
  query('limit', 'integer'),
  query('resourceVersion'),
  query('resourceVersionMatch'),
  query('sendInitialEvents', 'boolean'),
  query('timeoutSeconds', 'integer'),
  query('watch', 'boolean'),
];
const WRITE_QUERY = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
const PATCH_QUERY = [...WRITE_QUERY, query('force', 'boolean')];
const DELETE_QUERY = [
  query('dryRun'),
  query('gracePeriodSeconds', 'integer'),
  query('orphanDependents', 'boolean'),
  query('propagationPolicy'),
];
const DELETECOLLECTION_QUERY = [...DELETE_QUERY, ...LIST_QUERY.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks')].sort(
  (a, b) => (a.name < b.name ? -1 : 1),
);

const RESPONSE_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '401': 'Unauthorized' };

/** `networking.svc.io` → `Networking`, `flowcontrol.apiserver.svc.io` → `FlowcontrolApiserver`, '' → `Core`. */
export function groupPart(group: string): string {
  if (!group) return 'Core';
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  return group
    .replace(/\.(svc|k8s)\.io$/, '')
    .split(/[.-]/)
    .map(cap)
    .join('');
}

/** The operation tag of a group/version: `core_v1`, `apps_v1`, `flowcontrol_apiserver_v1`. */
function tag(group: string, version: string): string {
  return `${group ? group.replace(/\.(svc|k8s)\.io$/, '').replace(/[.-]/g, '_') : 'core'}_${version}`;
}

/** The path prefix of a group/version: /api/v1 or /apis/<group>/<version>. */
export function gvPrefix(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** The operations of one kind, as the reference's installer registers them. */
export function kindPaths(k: KindDef): PathItem[] {
  const p = `${groupPart(k.group)}${k.version.charAt(0).toUpperCase()}${k.version.slice(1)}`;
  const scope = k.namespaced ? 'Namespaced' : '';
  const base = `${gvPrefix(k.group, k.version)}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}`;
  const scopeParams = k.namespaced ? [NAMESPACE] : [];
  const list = listSchema(k);
  const deleted = k.returnDeletedObject ? k.schema : STATUS;
  const op = (o: Omit<Op, 'kind' | 'produces' | 'consumes'> & Partial<Pick<Op, 'produces' | 'consumes'>>): Op => ({
    kind: k,
    produces: PRODUCES,
    consumes: ['*/*'],
    ...o,
  });
  const item = (s: string, writeResponses: [string, DefName][]): Op[] => [
    op({ method: 'get', operationId: `read${p}${scope}${k.kind}${s}`, action: 'get', params: [], responses: [['200', k.schema]] }),
    op({
      method: 'put',
      operationId: `replace${p}${scope}${k.kind}${s}`,
      action: 'put',
      params: WRITE_QUERY,
      body: { def: k.schema, required: true },
      responses: writeResponses,
    }),
    op({
      method: 'patch',
      operationId: `patch${p}${scope}${k.kind}${s}`,
      action: 'patch',
      params: PATCH_QUERY,
      body: { def: PATCH, required: true },
      responses: writeResponses,
      consumes: PATCH_TYPES,
    }),
  ];
  const written: [string, DefName][] = [
    ['200', k.schema],
    ['201', k.schema],
  ];
  const create = op({
    method: 'post',
    operationId: `create${p}${scope}${k.kind}`,
    action: 'post',
    params: WRITE_QUERY,
    body: { def: k.schema, required: true },
    responses: [...written, ['202', k.schema]],
  });
  // A virtual kind (access reviews) has one operation: create.
  if (k.virtual) return [{ path: base, params: [...scopeParams, PRETTY], ops: [create] }];
  const out: PathItem[] = [
    {
      path: base,
      params: [...scopeParams, PRETTY],
      ops: [
        op({
          method: 'get',
          operationId: `list${p}${scope}${k.kind}`,
          action: 'list',
          params: LIST_QUERY,
          responses: [['200', list]],
          produces: PRODUCES_WATCH,
        }),
        create,
        ...(k.deleteCollection
          ? [
              op({
                method: 'delete',
                operationId: `delete${p}Collection${scope}${k.kind}`,
                action: 'deletecollection',
                params: DELETECOLLECTION_QUERY,
                body: { def: DELETE_OPTIONS, required: false },
                responses: [['200', STATUS]],
              }),
            ]
          : []),
      ],
    },
    {
      path: `${base}/{name}`,
      params: [NAME, ...scopeParams, PRETTY],
      ops: [
        ...item('', written),
        op({
          method: 'delete',
          operationId: `delete${p}${scope}${k.kind}`,
          action: 'delete',
          params: DELETE_QUERY,
          body: { def: DELETE_OPTIONS, required: false },
          responses: [
            ['200', deleted],
            ['202', deleted],
          ],
        }),
      ],
    },
  ];
  if (k.status) out.push({ path: `${base}/{name}/status`, params: [NAME, ...scopeParams, PRETTY], ops: item('Status', written) });
  if (k.namespaced) {
    out.push({
      path: `${gvPrefix(k.group, k.version)}/${k.plural}`,
      params: [PRETTY],
      ops: [
        op({
          method: 'get',
          operationId: `list${p}${k.kind}ForAllNamespaces`,
          action: 'list',
          params: LIST_QUERY,
          responses: [['200', list]],
          produces: PRODUCES_WATCH,
        }),
      ],
    });
  }
  return out;
}

function v2Param(p: Param): Json {
  const o: Json = { name: p.name, in: p.in, type: p.type, uniqueItems: true };
  if (p.in === 'path') o.required = true;
  return o;
}

function v3Param(p: Param): Json {
  const o: Json = { name: p.name, in: p.in, schema: { type: p.type, uniqueItems: true } };
  if (p.in === 'path') o.required = true;
  return o;
}

function renderOp(o: Op, flavor: Flavor): Json {
  const ref = (def: DefName) => ({ $ref: `${REF_PREFIX[flavor]}${def}` });
  const out: Json = { operationId: o.operationId, tags: [tag(o.kind.group, o.kind.version)] };
  const params: Json[] = [];
  if (flavor === 'v2') {
    out.consumes = o.consumes;
    out.produces = o.produces;
    out.schemes = ['https'];
    if (o.body) params.push({ name: 'body', in: 'body', required: o.body.required, schema: ref(o.body.def) });
    params.push(...o.params.map(v2Param));
    const responses: Json = {};
    for (const [code, def] of o.responses) responses[code] = { description: RESPONSE_TEXT[code], schema: ref(def) };
    responses['401'] = { description: RESPONSE_TEXT['401'] };
    out.responses = responses;
  } else {
    params.push(...o.params.map(v3Param));
    if (o.body) {
      const content: Json = {};
      for (const t of o.consumes) content[t] = { schema: ref(o.body.def) };
      out.requestBody = o.body.required ? { content, required: true } : { content };
    }
    const responses: Json = {};
    for (const [code, def] of o.responses) {
      const content: Json = {};
      for (const t of o.produces) content[t] = { schema: ref(def) };
      responses[code] = { description: RESPONSE_TEXT[code], content };
    }
    responses['401'] = { description: RESPONSE_TEXT['401'] };
    out.responses = responses;
  }
  if (params.length > 0) out.parameters = params;
  ext(out, 'action', o.action);
  ext(out, 'group-version-kind', gvkOf(o.kind));
  return out;
}

function renderPaths(items: PathItem[], flavor: Flavor): Json {
  const out: Json = {};
  for (const it of items) {
    const p: Json = {};
    for (const o of it.ops) p[o.method] = renderOp(o, flavor);
    p.parameters = it.params.map(flavor === 'v2' ? v2Param : v3Param);
    out[it.path] = p;
  }
  return out;
}

/** The group/version's resource list (GET /api/v1/, /apis/<group>/<version>/). */
function resourcesPath(group: string, version: string, flavor: Flavor): Json {
  const ref = { $ref: `${REF_PREFIX[flavor]}${API_RESOURCE_LIST}` };
  const op: Json = {
    operationId: `get${groupPart(group)}${version.charAt(0).toUpperCase()}${version.slice(1)}APIResources`,
    tags: [tag(group, version)],
  };
  if (flavor === 'v2') {
    Object.assign(op, {
      consumes: PRODUCES,
      produces: PRODUCES,
      schemes: ['https'],
      responses: { '200': { description: 'OK', schema: ref }, '401': { description: 'Unauthorized' } },
    });
  } else {
    const content: Json = {};
    for (const t of PRODUCES) content[t] = { schema: ref };
    op.responses = { '200': { description: 'OK', content }, '401': { description: 'Unauthorized' } };
  }
  return { [`${gvPrefix(group, version)}/`]: { get: op } };
}

const BEARER = { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' };
const INFO = { title: 'svc-apiserver', version: VERSION_INFO.gitVersion.replace(/\+.*$/, '') };

/** Roots of a document's definitions: what its operations name. */
function roots(kinds: KindDef[]): DefName[] {
  return [...kinds.flatMap((k) => (k.virtual ? [k.schema] : [k.schema, listSchema(k)])), STATUS, DELETE_OPTIONS, PATCH, API_RESOURCE_LIST];
}

/** The Swagger 2.0 document of all served kinds. */
export function buildV2(schemas: SchemaSet, kinds: KindDef[]): Json {
  const paths: Json = {};
  const gvs = new Set<string>();
  for (const k of kinds) {
    const gv = `${k.group}/${k.version}`;
    if (!gvs.has(gv)) {
      gvs.add(gv);
      Object.assign(paths, resourcesPath(k.group, k.version, 'v2'));
    }
    Object.assign(paths, renderPaths(kindPaths(k), 'v2'));
  }
  return {
    swagger: '2.0',
    info: INFO,
    paths,
    definitions: definitions(schemas, reachable(schemas, roots(kinds)), kinds, 'v2'),
    securityDefinitions: { BearerToken: BEARER },
    security: [{ BearerToken: [] }],
  };
}

/** The OpenAPI 3.0 document of one group/version (`kinds` all of that group/version). */
export function buildV3(schemas: SchemaSet, group: string, version: string, kinds: KindDef[]): Json {
  const paths: Json = resourcesPath(group, version, 'v3');
  for (const k of kinds) Object.assign(paths, renderPaths(kindPaths(k), 'v3'));
  return {
    openapi: '3.0.0',
    info: INFO,
    paths,
    components: {
      schemas: definitions(schemas, reachable(schemas, roots(kinds)), kinds, 'v3'),
      securitySchemes: { BearerToken: BEARER },
    },
    security: [{ BearerToken: [] }],
  };
}

// ---------------------------------------------------------------------------------------------
// Swagger 2.0 as protobuf (gnostic's openapi.v2.Document), as the reference serves /openapi/v2 to
// clients asking for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (kubectl's
// OpenAPI v2 getter asks for nothing else). Encoded from the JSON document as gnostic's
// ParseDocument reads JSON: extensions, defaults and enum values are `Any{yaml}`, where JSON text
// is the YAML.

export const V2_PROTO_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The name clients ask for; `@` is no token character, so responses carry V2_PROTO_TYPE (as the reference). */
const V2_PROTO_TYPE_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const V2_PROTO_TYPES = new Set([V2_PROTO_TYPE, V2_PROTO_TYPE_DEPRECATED]);

/** A protobuf message being written: fields appended in order, nested messages length-prefixed. */
class Pb {
  private buf = new Uint8Array(256);
  private n = 0;
  private static readonly enc = new TextEncoder();

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }

  private varint(v: number): void {
    this.room(10);
    while (v > 0x7f) {
      this.buf[this.n++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.n++] = v;
  }

  private raw(field: number, bytes: Uint8Array): void {
    this.varint(field * 8 + 2);
    this.varint(bytes.length);
    this.room(bytes.length);
    this.buf.set(bytes, this.n);
    this.n += bytes.length;
  }

  /** A string field (proto3: the empty string is not written). */
  str(field: number, s: unknown): this {
    if (typeof s === 'string' && s !== '') this.raw(field, Pb.enc.encode(s));
    return this;
  }

  strs(field: number, list: unknown): this {
    if (Array.isArray(list)) for (const s of list) this.raw(field, Pb.enc.encode(String(s)));
    return this;
  }

  bool(field: number, b: unknown): this {
    if (b === true) {
      this.varint(field * 8);
      this.varint(1);
    }
    return this;
  }

  msg(field: number, m: Pb | undefined): this {
    if (m) this.raw(field, m.bytes());
    return this;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Any{yaml}: JSON text is YAML. */
const pbAny = (v: unknown): Pb => new Pb().str(2, JSON.stringify(v));

/** The `x-*` keys of an object as repeated NamedAny. */
function pbExtensions(m: Pb, field: number, o: Json): void {
  for (const [k, v] of Object.entries(o)) if (k.startsWith('x-')) m.msg(field, new Pb().str(1, k).msg(2, pbAny(v)));
}

function pbSchema(s: Json): Pb {
  const m = new Pb().str(1, s.$ref).str(2, s.format).str(3, s.title).str(4, s.description);
  if (s.default !== undefined) m.msg(5, pbAny(s.default));
  m.strs(19, s.required);
  if (Array.isArray(s.enum)) for (const v of s.enum) m.msg(20, pbAny(v));
  const ap = s.additionalProperties;
  if (isObj(ap)) m.msg(21, new Pb().msg(1, pbSchema(ap)));
  if (typeof s.type === 'string') m.msg(22, new Pb().str(1, s.type));
  if (isObj(s.items)) m.msg(23, new Pb().msg(1, pbSchema(s.items)));
  if (Array.isArray(s.allOf)) for (const x of s.allOf) m.msg(24, pbSchema(x as Json));
  if (isObj(s.properties)) {
    const props = new Pb();
    for (const [k, v] of Object.entries(s.properties)) props.msg(1, new Pb().str(1, k).msg(2, pbSchema(v as Json)));
    m.msg(25, props);
  }
  pbExtensions(m, 31, s);
  return m;
}

function pbParameter(p: Json): Pb {
  if (p.in === 'body') {
    const body = new Pb().str(1, p.description).str(2, p.name).str(3, p.in).bool(4, p.required);
    if (isObj(p.schema)) body.msg(5, pbSchema(p.schema));
    return new Pb().msg(1, new Pb().msg(1, body));
  }
  // Query and path sub-schemas share fields 1-4; then type/format/unique_items differ by one.
  const path = p.in === 'path';
  const sub = new Pb()
    .bool(1, p.required)
    .str(2, p.in)
    .str(3, p.description)
    .str(4, p.name)
    .str(path ? 5 : 6, p.type)
    .str(path ? 6 : 7, p.format)
    .bool(path ? 19 : 20, p.uniqueItems);
  return new Pb().msg(1, new Pb().msg(2, new Pb().msg(path ? 4 : 3, sub)));
}

function pbOperation(o: Json): Pb {
  const m = new Pb().strs(1, o.tags).str(2, o.summary).str(3, o.description).str(5, o.operationId).strs(6, o.produces).strs(7, o.consumes);
  for (const p of (o.parameters as Json[] | undefined) ?? []) m.msg(8, pbParameter(p));
  const responses = new Pb();
  for (const [code, r] of Object.entries((o.responses as Record<string, Json> | undefined) ?? {})) {
    const resp = new Pb().str(1, r.description);
    if (isObj(r.schema)) resp.msg(2, new Pb().msg(1, pbSchema(r.schema)));
    responses.msg(1, new Pb().str(1, code).msg(2, new Pb().msg(1, resp)));
  }
  m.msg(9, responses).strs(10, o.schemes);
  pbExtensions(m, 13, o);
  return m;
}

const PATH_ITEM_FIELDS: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

/** gnostic's openapi.v2.Document of a Swagger 2.0 document (the subset this module writes). */
export function swaggerToProto(doc: Json): Uint8Array {
  const info = doc.info as Json;
  const m = new Pb()
    .str(1, doc.swagger)
    .msg(2, new Pb().str(1, info.title).str(2, info.version))
    .strs(5, doc.schemes)
    .strs(6, doc.consumes)
    .strs(7, doc.produces);
  const paths = new Pb();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const pi = new Pb();
    for (const [method, field] of Object.entries(PATH_ITEM_FIELDS)) if (isObj(item[method])) pi.msg(field, pbOperation(item[method]));
    for (const p of (item.parameters as Json[] | undefined) ?? []) pi.msg(9, pbParameter(p));
    paths.msg(2, new Pb().str(1, path).msg(2, pi));
  }
  m.msg(8, paths);
  const defs = new Pb();
  for (const [name, s] of Object.entries(doc.definitions as Record<string, Json>)) defs.msg(1, new Pb().str(1, name).msg(2, pbSchema(s)));
  m.msg(9, defs);
  for (const req of (doc.security as Record<string, string[]>[] | undefined) ?? []) {
    const r = new Pb();
    for (const [name, scopes] of Object.entries(req)) r.msg(1, new Pb().str(1, name).msg(2, new Pb().strs(1, scopes)));
    m.msg(12, r);
  }
  const secDefs = new Pb();
  for (const [name, d] of Object.entries((doc.securityDefinitions as Record<string, Json> | undefined) ?? {})) {
    if (d.type !== 'apiKey') continue;
    const key = new Pb().str(1, d.type).str(2, d.name).str(3, d.in).str(4, d.description);
    secDefs.msg(1, new Pb().str(1, name).msg(2, new Pb().msg(2, key)));
  }
  m.msg(13, secDefs);
  pbExtensions(m, 16, doc);
  return m.bytes();
}

// ---------------------------------------------------------------------------------------------
// Serving

/** A built document in one encoding: its bytes, ETag value (uppercase hex SHA-512) and, once asked for, gzipped bytes. */
class Doc {
  readonly hash: string;
  private gz?: Uint8Array;

  constructor(
    readonly bytes: Uint8Array,
    readonly contentType: string,
  ) {
    this.hash = new Bun.CryptoHasher('sha512').update(bytes).digest('hex').toUpperCase();
  }

  static json(doc: unknown): Doc {
    return new Doc(new TextEncoder().encode(JSON.stringify(doc)), 'application/json');
  }

  gzipped(): Uint8Array {
    this.gz ??= Bun.gzipSync(this.bytes as Uint8Array<ArrayBuffer>);
    return this.gz;
  }
}

interface V2 {
  doc: Json;
  json: Doc;
  proto?: Doc;
}

interface V3 {
  index: Doc;
  /** 'api/v1', 'apis/apps/v1' → document. */
  docs: Map<string, Doc>;
}

/** Whether `If-None-Match` names `etag` (a list of quoted tags, weak or not, or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === '*' || v === etag;
  });
}

/**
 * The encoding a client accepts: JSON always, gnostic protobuf where `proto` (/openapi/v2); 406
 * when it accepts neither. No Accept header means JSON.
 */
export function chooseEncoding(accept: string | null, proto: boolean): 'json' | 'proto' {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'json';
  for (const r of ranges) {
    if (r.type === '*' || (r.type === 'application' && (r.subtype === '*' || r.subtype === 'json'))) return 'json';
    if (proto && V2_PROTO_TYPES.has(`${r.type}/${r.subtype}`)) return 'proto';
  }
  throw notAcceptable(proto ? ['application/json', V2_PROTO_TYPE_DEPRECATED, V2_PROTO_TYPE] : ['application/json']);
}

export class OpenApi {
  private v2Docs?: V2;
  private v3Docs?: V3;

  constructor(
    readonly api: ApiRegistry,
    readonly schemas: SchemaSet,
  ) {}

  private kinds(): KindDef[] {
    return this.api.stores.map((s) => s.def);
  }

  private built = -1;

  /** Drops documents built before the registry last changed (custom resources come and go). */
  private fresh(): void {
    if (this.built === this.api.generation) return;
    this.built = this.api.generation;
    this.v2Docs = undefined;
    this.v3Docs = undefined;
  }

  private v2(): V2 {
    this.fresh();
    if (this.v2Docs) return this.v2Docs;
    const doc = buildV2(this.schemas, this.kinds());
    this.v2Docs = { doc, json: Doc.json(doc) };
    return this.v2Docs;
  }

  private v3(): V3 {
    this.fresh();
    if (this.v3Docs) return this.v3Docs;
    const docs = new Map<string, Doc>();
    const paths: Json = {};
    for (const g of this.api.groups()) {
      for (const v of g.versions) {
        const key = gvPrefix(g.group, v).slice(1);
        const kinds = this.api.resources(g.group, v).map((s) => s.def);
        const doc = Doc.json(buildV3(this.schemas, g.group, v, kinds));
        docs.set(key, doc);
        paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` };
      }
    }
    this.v3Docs = { index: Doc.json({ paths }), docs };
    return this.v3Docs;
  }

  handle(path: string, query: URLSearchParams, req: Request): Response {
    if (path === '/openapi/v2') {
      const v2 = this.v2();
      if (chooseEncoding(req.headers.get('accept'), true) === 'json') return this.serve(v2.json, req, false);
      v2.proto ??= new Doc(swaggerToProto(v2.doc), V2_PROTO_TYPE);
      return this.serve(v2.proto, req, false);
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      chooseEncoding(req.headers.get('accept'), false);
      return this.serve(this.v3().index, req, false);
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length).replace(/\/$/, '');
      const doc = this.v3().docs.get(key);
      if (!doc) throw pathNotFound();
      chooseEncoding(req.headers.get('accept'), false);
      const hash = query.get('hash');
      if (hash !== null && hash !== '' && hash !== doc.hash) {
        // As the reference: an outdated hash redirects to the current one.
        return new Response(null, { status: 301, headers: { Location: `/openapi/v3/${key}?hash=${doc.hash}` } });
      }
      return this.serve(doc, req, hash === doc.hash);
    }
    throw pathNotFound();
  }

  /** The document with its ETag (304 on If-None-Match), gzipped when large and accepted. */
  private serve(doc: Doc, req: Request, immutable: boolean): Response {
    const etag = `"${doc.hash}"`;
    const headers = new Headers({ ETag: etag, Vary: 'Accept, Accept-Encoding' });
    if (immutable) {
      headers.set('Cache-Control', 'public, immutable');
      headers.set('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
    } else {
      headers.set('Cache-Control', 'no-cache, private');
    }
    if (matches(req.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers });
    headers.set('Content-Type', doc.contentType);
    let body = doc.bytes;
    if (body.length >= GZIP_THRESHOLD && /\bgzip\b/i.test(req.headers.get('accept-encoding') ?? '')) {
      body = doc.gzipped();
      headers.set('Content-Encoding', 'gzip');
    }
    return new Response(req.method.toUpperCase() === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>), { status: 200, headers });
  }
}
