/**
 * Message descriptors of the protobuf codec (see ./protobuf): each definition of the schema set
 * with a protobuf encoding becomes a `Msg` (its `Field`s by number and by JSON name, Go-inlined
 * structs as nested messages, the schema order when it differs from field-number order), built
 * once per DefName and cached by a `MessageTable`, which also finds a definition from an
 * envelope's apiVersion and kind.
 */
import { svcApiVersion } from '../api/brand';
import type { SchemaSet } from '../schema/engine';
import type { DefName, Schema } from '../schema/types';
import { I32, I64, keyBytes, LEN, VARINT, type Writer } from '../wire/protobuf';
import type { TypeMeta } from './protobuf-envelope';

const META = 'io.svc.apimachinery.pkg.apis.meta.v1';
const APIEXT = 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1';

/** What a field's value is on the wire and in JSON. */
export enum V {
  String,
  Bytes,
  Bool,
  /** int32, int64, uint32, uint64 (JSON number). */
  Varint,
  /** sint32, sint64 (zigzag). */
  ZigZag,
  Double,
  Float,
  Struct,
  /** A Go-inlined struct: a nested message whose fields live in the parent JSON object. */
  Inline,
  Time,
  MicroTime,
  Duration,
  IntOrString,
  Quantity,
  /** `{raw = 1}` holding JSON text: RawExtension, FieldsV1, apiextensions JSON. */
  RawJson,
  /** `{items = 1}`, repeated string, a JSON array: meta v1 Verbs, ExtraValue. */
  StringList,
  /** apiextensions JSONSchemaPropsOrArray `{schema = 1, jSONSchemas = 2}`: a JSON schema object or an array of them. */
  SchemaOrArray,
  /** apiextensions JSONSchemaPropsOrBool `{allows = 1, schema = 2}`: a JSON boolean or a schema object. */
  SchemaOrBool,
  /** apiextensions JSONSchemaPropsOrStringArray `{schema = 1, property = 2}`: a schema object or a string array. */
  SchemaOrStringArray,
}

export enum Card {
  Single,
  Repeated,
  Map,
}

export interface Field {
  /** JSON property name ('' for an Inline group). */
  name: string;
  tag: number;
  /** The field key's varint bytes for the wire type this field is written with. */
  key: Uint8Array;
  kind: V;
  card: Card;
  /** Struct / Inline message. */
  msg: Msg | null;
  /** Wire type a single value has (repeated scalars also accept LEN: packed). */
  wt: number;
  /**
   * A scalar value field with omitempty (not keepZero, not required): Go writes it to protobuf
   * even when zero, and its JSON omits a zero, so the decoder leaves a zero out.
   */
  dropZero: boolean;
}

export interface Msg {
  name: string;
  /** Fields by number, ascending. */
  fields: Field[];
  /** Fields by number (sparse). */
  byTag: (Field | undefined)[];
  /**
   * Position of each property in schema (Go struct) order, when decoding in field-number order
   * would not give that order.
   */
  order: Map<string, number> | null;
  /** The same order as a list of names (when `order` is set). */
  orderNames: string[];
  /** Fields by JSON name (not the Inline ones): encoding walks the object's own keys, usually far fewer than the fields. */
  byName: Map<string, Field>;
  /** The Inline fields (always written), by number. */
  inlines: Field[];
  /** Scalar fields written as their zero value when absent (ALWAYS_WRITTEN). */
  zeros: Set<Field> | null;
  /** The encoder's compiled writer of this message (protobuf-encode.ts), once it has written one. */
  write: MessageWriter | undefined;
}

/**
 * Go value fields that the encoder writes even when the JSON object lacks them, by message. Go
 * writes every value field; elsewhere leaving a zero out decodes the same in Go and costs less,
 * but CRD schemas nest many empty schemas (`items: {}`, `properties: {x: {}}`) and are compared
 * byte for byte with the reference's encoding of them.
 */
const ALWAYS_WRITTEN: Record<string, readonly string[]> = {
  [`${APIEXT}.JSONSchemaProps`]: [
    'id',
    '$schema',
    'description',
    'type',
    'format',
    'title',
    'exclusiveMaximum',
    'exclusiveMinimum',
    'pattern',
    'uniqueItems',
    'nullable',
    'x-svc-embedded-resource',
    'x-svc-int-or-string',
  ],
};

/** Special messages, by (rebranded) message name. */
const SPECIAL: Record<string, V> = {
  [`${META}.Time`]: V.Time,
  [`${META}.MicroTime`]: V.MicroTime,
  [`${META}.Duration`]: V.Duration,
  [`${META}.FieldsV1`]: V.RawJson,
  [`${META}.Verbs`]: V.StringList,
  'io.svc.apimachinery.pkg.util.intstr.IntOrString': V.IntOrString,
  'io.svc.apimachinery.pkg.api.resource.Quantity': V.Quantity,
  'io.svc.apimachinery.pkg.api.resource.QuantityValue': V.Quantity,
  'io.svc.apimachinery.pkg.runtime.RawExtension': V.RawJson,
  [`${APIEXT}.JSON`]: V.RawJson,
  'io.svc.api.authentication.v1.ExtraValue': V.StringList,
  'io.svc.api.authentication.v1.AttestationValue': V.StringList,
  'io.svc.api.authorization.v1.ExtraValue': V.StringList,
  'io.svc.api.certificates.v1.ExtraValue': V.StringList,
  [`${APIEXT}.JSONSchemaPropsOrArray`]: V.SchemaOrArray,
  [`${APIEXT}.JSONSchemaPropsOrBool`]: V.SchemaOrBool,
  [`${APIEXT}.JSONSchemaPropsOrStringArray`]: V.SchemaOrStringArray,
};

/** The kinds whose message wraps a JSONSchemaProps. */
function wrapsSchema(kind: V): boolean {
  return kind === V.SchemaOrArray || kind === V.SchemaOrBool || kind === V.SchemaOrStringArray;
}

/** Seconds of Go's zero time (0001-01-01T00:00:00Z) since the Unix epoch. */
export const ZERO_TIME_SECONDS = -62135596800;

export type Json = Record<string, unknown>;

/** A message's compiled writer (protobuf-encode.ts): given the encoder, its Writer and the object. */
export type MessageWriter = (enc: unknown, w: Writer, obj: Json) => void;

/** Wire type a single value of `kind` is written with. */
function wireType(kind: V): number {
  switch (kind) {
    case V.Bool:
    case V.Varint:
    case V.ZigZag:
      return VARINT;
    case V.Double:
      return I64;
    case V.Float:
      return I32;
    default:
      return LEN;
  }
}

/** The descriptors of one schema set, built on first use and cached per definition name. */
/** A message without fields yet (every Msg made with the same properties: one shape for all). */
function emptyMsg(name: string): Msg {
  return { name, fields: [], byTag: [], order: null, orderNames: [], byName: new Map(), inlines: [], zeros: null, write: undefined };
}

export class MessageTable {
  private readonly msgs = new Map<DefName, Msg>();
  /** Definition name by `apiVersion/kind` (the kinds' gvk), for envelopes inside RawExtensions. */
  private gvkIndex: Map<string, DefName> | null = null;

  constructor(readonly schemas: SchemaSet) {}

  msg(defName: DefName): Msg {
    const m = this.msgs.get(defName);
    if (m) return m;
    const def = this.schemas.get(defName);
    if (!def) throw new Error(`protobuf: unknown definition ${defName}`);
    const s = this.schemas.resolve(def);
    if (s.type !== 'object' || s.protoMessage === undefined || !s.properties) {
      throw new Error(`protobuf: ${defName} has no protobuf encoding`);
    }
    const msg = emptyMsg(defName);
    // Register first: recursive messages close the loop.
    this.msgs.set(defName, msg);
    try {
      this.fill(defName, s.properties, s.required ?? [], msg);
      const always = ALWAYS_WRITTEN[defName];
      if (always) msg.zeros = new Set(always.map((n) => msg.byName.get(n)!));
    } catch (e) {
      this.msgs.delete(defName);
      throw e;
    }
    return msg;
  }

  private fill(defName: DefName, properties: Record<string, Schema>, required: readonly string[], msg: Msg): void {
    const groups = new Map<string, Msg>();
    const group = (path: number[]): Msg => {
      if (path.length === 0) return msg;
      const key = path.join('.');
      let g = groups.get(key);
      if (g) return g;
      g = emptyMsg(`${defName}.${key}`);
      groups.set(key, g);
      const parent = group(path.slice(0, -1));
      const tag = path[path.length - 1]!;
      addField(parent, {
        name: '',
        tag,
        key: keyBytes(tag, LEN),
        kind: V.Inline,
        card: Card.Single,
        msg: g,
        wt: LEN,
        dropZero: false,
      });
      return g;
    };
    const addField = (m: Msg, f: Field) => {
      if (m.byTag[f.tag]) throw new Error(`protobuf: ${defName}: field number ${f.tag} used twice`);
      m.byTag[f.tag] = f;
      m.fields.push(f);
    };
    const names: string[] = [];
    for (const name in properties) {
      const p = properties[name]!;
      const path = p.protoTag !== undefined ? [p.protoTag] : p.protoPath;
      if (!path || path.length === 0) continue;
      names.push(name);
      const tag = path[path.length - 1]!;
      addField(group(path.slice(0, -1)), this.field(defName, name, p, tag, required.includes(name)));
    }
    const sortFields = (m: Msg): string[] => {
      m.fields.sort((a, b) => a.tag - b.tag);
      for (const f of m.fields) {
        if (f.kind === V.Inline) m.inlines.push(f);
        else m.byName.set(f.name, f);
      }
      const wire: string[] = [];
      for (const f of m.fields) {
        if (f.kind === V.Inline) wire.push(...sortFields(f.msg!));
        else wire.push(f.name);
      }
      return wire;
    };
    const wire = sortFields(msg);
    if (wire.some((n, i) => n !== names[i])) {
      msg.order = new Map(names.map((n, i) => [n, i]));
      msg.orderNames = names;
    }
  }

  private field(defName: DefName, name: string, p: Schema, tag: number, required: boolean): Field {
    const where = `${defName}.${name}`;
    let card = Card.Single;
    let value: Schema = p;
    if (p.type === 'array') {
      card = Card.Repeated;
      value = p.items;
    } else if (p.type === 'object' && !p.properties && p.additionalProperties) {
      card = Card.Map;
      value = p.additionalProperties;
    }
    const pt = p.protoType;
    let kind: V;
    let msg: Msg | null = null;
    switch (pt) {
      case 'string':
        kind = V.String;
        break;
      case 'bytes':
        kind = V.Bytes;
        break;
      case 'bool':
        kind = V.Bool;
        break;
      case 'int32':
      case 'int64':
      case 'uint32':
      case 'uint64':
        kind = V.Varint;
        break;
      case 'sint32':
      case 'sint64':
        kind = V.ZigZag;
        break;
      case 'double':
        kind = V.Double;
        break;
      case 'float':
        kind = V.Float;
        break;
      case 'message': {
        const special = SPECIAL[p.protoMessage ?? ''];
        if (special !== undefined) {
          kind = special;
          // A named []string wrapped in a message: the JSON array is one message, not repeated.
          if (special === V.StringList && card === Card.Repeated) card = Card.Single;
          if (wrapsSchema(special)) msg = this.msg(`${APIEXT}.JSONSchemaProps`);
          break;
        }
        kind = V.Struct;
        const ref = value.type === 'ref' ? value.ref : undefined;
        const target = ref ?? p.protoMessage;
        if (!target) throw new Error(`protobuf: ${where}: no message for a message field`);
        msg = this.msg(target);
        break;
      }
      default:
        throw new Error(`protobuf: ${where}: no protoType`);
    }
    const wt = wireType(kind);
    const scalar = kind <= V.Float;
    const dropZero = scalar && card === Card.Single && !required && p.keepZero !== true;
    return { name, tag, key: keyBytes(tag, card === Card.Map ? LEN : wt), kind, card, msg, wt, dropZero };
  }

  defOf(tm: TypeMeta): DefName {
    if (!this.gvkIndex) {
      const idx = new Map<string, DefName>();
      // SchemaSet has no public listing: its definitions record is read directly (empty if absent).
      const all = (this.schemas as unknown as { defs?: Record<DefName, Schema> }).defs ?? {};
      for (const name in all) {
        const d = all[name]!;
        if (d.type !== 'object' || !d.gvk || d.protoMessage === undefined) continue;
        for (const g of d.gvk) {
          const key = `${g.group === '' ? g.version : `${g.group}/${g.version}`}/${g.kind}`;
          if (!idx.has(key)) idx.set(key, name);
        }
      }
      this.gvkIndex = idx;
    }
    // The index holds svc group names; an envelope may name the upstream group (the reference's clients).
    const def = this.gvkIndex.get(`${svcApiVersion(tm.apiVersion)}/${tm.kind}`);
    if (!def)
      throw new Error(`protobuf: no protobuf definition for apiVersion ${JSON.stringify(tm.apiVersion)}, kind ${JSON.stringify(tm.kind)}`);
    return def;
  }
}
