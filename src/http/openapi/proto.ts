/**
 * Swagger 2.0 as protobuf (gnostic's openapi.v2.Document), as the reference serves /openapi/v2 to
 * clients asking for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (kubectl's
 * OpenAPI v2 getter asks for nothing else). Encoded from the JSON document as gnostic's
 * ParseDocument reads JSON: extensions, defaults and enum values are `Any{yaml}`, where JSON text
 * is the YAML.
 */
import { LEN, VARINT, Writer } from '../../wire/protobuf';
import type { Json } from './schema';

export const V2_PROTO_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The name clients ask for; `@` is no token character, so responses carry V2_PROTO_TYPE (as the reference). */
export const V2_PROTO_TYPE_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const V2_PROTO_TYPES = new Set([V2_PROTO_TYPE, V2_PROTO_TYPE_DEPRECATED]);

/** A protobuf message being written: fields appended in order, nested messages length-prefixed. */
class Pb {
  private readonly w = new Writer(256);

  /** A string field (proto3: the empty string is not written). */
  str(field: number, s: unknown): this {
    if (typeof s === 'string' && s !== '') {
      this.w.tag(field, LEN);
      this.w.string(s);
    }
    return this;
  }

  strs(field: number, list: unknown): this {
    if (Array.isArray(list))
      for (const s of list) {
        this.w.tag(field, LEN);
        this.w.string(String(s));
      }
    return this;
  }

  bool(field: number, b: unknown): this {
    if (b === true) {
      this.w.tag(field, VARINT);
      this.w.uvarint(1);
    }
    return this;
  }

  msg(field: number, m: Pb | undefined): this {
    if (m) {
      this.w.tag(field, LEN);
      this.w.bytes(m.bytes());
    }
    return this;
  }

  bytes(): Uint8Array {
    return this.w.buf.subarray(0, this.w.pos);
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
