/**
 * The schema engine: definitions + overlays, compiled once into a graph of nodes (refs resolved,
 * property maps and default lists precomputed), and `normalize`, the pass every decoded object
 * goes through on write: unknown-field detection and pruning, JSON type checking, null removal
 * and static defaulting — in place, in one walk.
 */

import { cloneJson, isObject, type JsonObject } from '../api/meta';
import { isQuantity } from '../api/quantity';
import type { Overlay } from './overlays';
import type { Definitions, DefName, ObjectSchema, Schema } from './types';

/** A JSON value whose type does not match its field, as the reference's decoder reports it. */
export interface TypeErrorInfo {
  /** Path of the field: `spec.containers[0].ports[1].containerPort`, `metadata.labels.app`. */
  field: string;
  /** 'string' | 'integer' | 'int32' | 'number' | 'boolean' | 'object' (a struct) | 'map[string]string' | 'map' | 'array' | 'int-or-string' | 'quantity' | 'date-time' | 'byte'. */
  expected: string;
  /** The JSON type found: 'string' | 'number' | 'bool' | 'object' | 'array' | 'null'. */
  got: string;
  /**
   * As Go's decoder names the field, where the reference's type is known: the innermost struct
   * with the path of struct fields from the top (no map keys, no indexes):
   * `Container.spec.containers.image`, `ConfigMap.data`.
   */
  goField?: string;
  /** Go's name of the field's type (`string`, `int32`, `map[string]string`, `[]v1.Container`, `v1.ObjectMeta`). */
  goType?: string;
  /** The found value as Go's decoder names it (`number 1.5` for an integer field). */
  goValue?: string;
  /** The number found, when it is one (whether it is integral decides Go's conversions). */
  number?: number;
}

export interface NormalizeOptions {
  /** Remove unknown fields (they are reported either way). */
  prune: boolean;
  /** Apply static defaults to absent fields. */
  defaults: boolean;
}

export interface NormalizeResult {
  /** Paths of the unknown fields, in document order. */
  unknown: string[];
  typeErrors: TypeErrorInfo[];
}

enum K {
  Any,
  Struct,
  Map,
  Array,
  String,
  Integer,
  Int32,
  Number,
  Boolean,
  IntOrString,
  Quantity,
  DateTime,
  Bytes,
}

/** What a node expects, for TypeErrorInfo.expected (indexed by K). */
const EXPECTED = [
  'any',
  'object',
  'object',
  'array',
  'string',
  'integer',
  'integer',
  'number',
  'boolean',
  'int-or-string',
  'quantity',
  'date-time',
  'byte',
];

interface Node {
  k: K;
  /** Struct fields (null-prototype object). */
  props: Record<string, Node> | null;
  /** Struct field defaults: names and values, parallel arrays. */
  defNames: string[] | null;
  defValues: unknown[] | null;
  /** Map values / array items. */
  elem: Node | null;
  /** Keep fields not in `props` (preserveUnknown). */
  keep: boolean;
  /** The definition's conditional defaulting (defaulters.ts), run after its static defaults. */
  fn: ((o: JsonObject) => void) | null;
  /** A named struct's Go type (`v1.ObjectMeta`), from its definition's name, and its bare name (`ObjectMeta`). */
  goName?: string;
  goShort?: string;
}

/** A node's Go type as the reference's decoder prints it; undefined for types with their own decoding. */
function goTypeOf(n: Node): string | undefined {
  switch (n.k) {
    case K.String:
      return 'string';
    case K.Int32:
      return 'int32';
    case K.Integer:
      return 'int64';
    case K.Number:
      return 'float64';
    case K.Boolean:
      return 'bool';
    case K.Struct:
      return n.goName;
    case K.Map: {
      const e = n.elem ? goTypeOf(n.elem) : undefined;
      return e === undefined ? undefined : `map[string]${e}`;
    }
    case K.Array: {
      const e = n.elem ? goTypeOf(n.elem) : undefined;
      return e === undefined ? undefined : `[]${e}`;
    }
    default:
      return undefined;
  }
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
/** Go's int64 range, as far as a double can tell. */
const INT64_LIMIT = 2 ** 63;

const DATE_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'boolean' ? 'bool' : t;
}

/**
 * The Go zero value a JSON null decodes to inside a list or map (the element is created anyway),
 * as Go encodes it back; a zero metav1.Time encodes as null, so null stays.
 */
function zeroValue(n: Node): unknown {
  switch (n.k) {
    case K.Struct:
    case K.Map:
      return {};
    case K.String:
    case K.Bytes:
      return '';
    case K.Integer:
    case K.Int32:
    case K.Number:
    case K.IntOrString:
      return 0;
    case K.Quantity:
      return '0';
    case K.Boolean:
      return false;
    default:
      return null;
  }
}

/**
 * The zero value Go writes for a required number or boolean field: the reference's types declare
 * these as value fields without omitempty (a PodDisruptionBudget's status counters, a
 * ReplicaSet's status.replicas), so a decoded object has them, as 0 or false, whether the client
 * sent them or not. Required strings, lists and structs are left to validation (a missing one is
 * refused there); scalars of other shapes have no such zero.
 */
function alwaysWrittenZero(p: Schema): unknown {
  switch (p.type) {
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return undefined;
  }
}

export class SchemaSet {
  private readonly defs: Definitions;
  /** Counts define() and undefine() calls: what is derived from the definitions is stale when it moves. */
  generation = 0;
  private readonly nodes = new Map<DefName, Node>();
  // Walk state (normalize is synchronous and not re-entrant).
  private path: (string | number)[] = [];
  private unknown: string[] = [];
  private typeErrors: TypeErrorInfo[] = [];
  /** The node the walk started from (Go's error context is recomputed from it, on errors only). */
  private root: Node | null = null;
  private prune = false;
  private defaults = false;

  constructor(
    definitions: Definitions,
    overlays: readonly Overlay[] = [],
    defaulters: Readonly<Record<DefName, (o: JsonObject) => void>> = {},
  ) {
    this.defs = structuredClone(definitions);
    for (const o of overlays) {
      const def = this.defs[o.def];
      if (!def) throw new Error(`overlay: no definition ${o.def}`);
      if (def.type !== 'object' || !def.properties) throw new Error(`overlay: ${o.def} is not a struct`);
      const prop = def.properties[o.field];
      if (!prop) throw new Error(`overlay: ${o.def} has no field ${o.field}`);
      prop.default = cloneJson(o.default);
    }
    // Compile everything up front; also checks every ref and every default's type.
    for (const name in this.defs) this.node(name);
    for (const name in defaulters) {
      const n = this.nodes.get(name);
      if (!n || n.k !== K.Struct) throw new Error(`defaulter: ${name} is not a struct definition`);
      n.fn = defaulters[name] as (o: JsonObject) => void;
    }
    for (const o of overlays) {
      const field = this.nodes.get(o.def)!.props![o.field]!;
      const r = this.run(field, cloneJson(o.default), { prune: false, defaults: true });
      if (r.unknown.length > 0 || r.typeErrors.length > 0) {
        throw new Error(`overlay: default of ${o.def}.${o.field} does not match its schema: ${JSON.stringify(r)}`);
      }
    }
  }

  /**
   * Adds or replaces a definition at run time (a custom resource's schema), compiled now; a bad
   * schema throws and leaves the set as it was.
   */
  define(name: DefName, schema: Schema): void {
    this.generation++;
    const old = this.defs[name];
    const oldNode = this.nodes.get(name);
    this.defs[name] = schema;
    this.nodes.delete(name);
    try {
      this.node(name);
    } catch (e) {
      if (old) this.defs[name] = old;
      else delete this.defs[name];
      if (oldNode) this.nodes.set(name, oldNode);
      else this.nodes.delete(name);
      throw e;
    }
  }

  /** Removes a definition added by define(). */
  undefine(name: DefName): void {
    this.generation++;
    delete this.defs[name];
    this.nodes.delete(name);
  }

  /** The definition (with overlay defaults applied), or undefined. */
  get(name: DefName): Schema | undefined {
    return this.defs[name];
  }

  /** Follows refs to the schema they name. */
  resolve(schema: Schema): Schema {
    let s = schema;
    for (let hops = 0; s.type === 'ref'; hops++) {
      const next = this.defs[s.ref];
      if (!next) throw new Error(`unknown definition ${s.ref}`);
      if (hops > 64) throw new Error(`ref cycle at ${s.ref}`);
      s = next;
    }
    return s;
  }

  /**
   * Walks `obj` (a decoded JSON object of definition `defName`) in place: records unknown fields
   * (removing them when `prune`), records type mismatches (leaving those values alone), removes
   * `null` struct fields, and applies defaults to absent fields when `defaults`.
   */
  normalize(defName: DefName, obj: unknown, opts: NormalizeOptions): NormalizeResult {
    const n = this.nodes.get(defName);
    if (!n) throw new Error(`unknown definition ${defName}`);
    return this.run(n, obj, opts);
  }

  private run(n: Node, value: unknown, opts: NormalizeOptions): NormalizeResult {
    this.prune = opts.prune;
    this.defaults = opts.defaults;
    const unknown: string[] = [];
    const typeErrors: TypeErrorInfo[] = [];
    this.unknown = unknown;
    this.typeErrors = typeErrors;
    this.path.length = 0;
    this.root = n;
    if (value === null) typeErrors.push({ field: '', expected: EXPECTED[n.k]!, got: 'null' });
    else this.visit(n, value);
    this.unknown = [];
    this.typeErrors = [];
    return { unknown, typeErrors };
  }

  // -------------------------------------------------------------------------------------------
  // Compilation
  // -------------------------------------------------------------------------------------------

  private node(name: DefName): Node {
    let n = this.nodes.get(name);
    if (n) return n;
    const def = this.defs[name];
    if (!def) throw new Error(`unknown definition ${name}`);
    // Register before compiling so recursive definitions (JSONSchemaProps) close the loop.
    n = { k: K.Any, props: null, defNames: null, defValues: null, elem: null, keep: false, fn: null };
    this.nodes.set(name, n);
    if (def.type === 'ref') Object.assign(n, this.node(def.ref));
    else {
      this.fill(n, def);
      const parts = name.split('.');
      if (n.k === K.Struct && parts.length >= 2) {
        n.goShort = parts[parts.length - 1]!;
        n.goName = `${parts[parts.length - 2]}.${n.goShort}`;
      }
    }
    return n;
  }

  private compile(s: Schema): Node {
    if (s.type === 'ref') return this.node(s.ref);
    const n: Node = { k: K.Any, props: null, defNames: null, defValues: null, elem: null, keep: false, fn: null };
    this.fill(n, s);
    return n;
  }

  private fill(n: Node, s: Schema): void {
    n.keep = s.preserveUnknown === true;
    switch (s.type) {
      case 'object':
        this.fillObject(n, s);
        return;
      case 'array':
        n.k = K.Array;
        n.elem = this.compile(s.items);
        return;
      case 'string':
        n.k = s.format === 'date-time' ? K.DateTime : s.format === 'byte' ? K.Bytes : K.String;
        return;
      case 'integer':
        n.k = s.format === 'int32' ? K.Int32 : K.Integer;
        return;
      case 'number':
        n.k = K.Number;
        return;
      case 'boolean':
        n.k = K.Boolean;
        return;
      case 'int-or-string':
        n.k = K.IntOrString;
        return;
      case 'quantity':
        n.k = K.Quantity;
        return;
      case 'any':
        n.k = K.Any;
        return;
      default:
        throw new Error(`cannot compile schema ${JSON.stringify(s)}`);
    }
  }

  private fillObject(n: Node, s: ObjectSchema): void {
    if (s.properties) {
      n.k = K.Struct;
      const props: Record<string, Node> = Object.create(null);
      const defNames: string[] = [];
      const defValues: unknown[] = [];
      const required = new Set(s.required);
      for (const key in s.properties) {
        const p = s.properties[key]!;
        props[key] = this.compile(p);
        const d = p.default !== undefined ? p.default : required.has(key) ? alwaysWrittenZero(p) : undefined;
        if (d !== undefined) {
          defNames.push(key);
          defValues.push(d);
        }
      }
      n.props = props;
      if (defNames.length > 0) {
        n.defNames = defNames;
        n.defValues = defValues;
      }
      // A struct that also declares additionalProperties keeps the extra fields (validated as such).
      if (s.additionalProperties) n.elem = this.compile(s.additionalProperties);
    } else if (s.additionalProperties) {
      n.k = K.Map;
      n.elem = this.compile(s.additionalProperties);
    } else {
      // No declared shape (hand-written `{type: 'object'}`): any object, contents kept.
      n.k = K.Struct;
      n.keep = true;
      n.props = Object.create(null);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Walk
  // -------------------------------------------------------------------------------------------

  private pathString(last?: string | number): string {
    let s = '';
    const p = this.path;
    for (let i = 0; i < p.length; i++) s = appendSeg(s, p[i]!);
    if (last !== undefined) s = appendSeg(s, last);
    return s;
  }

  private typeError(n: Node, v: unknown, expected?: string): void {
    this.typeErrors.push({ field: this.pathString(), expected: expected ?? EXPECTED[n.k]!, got: jsonType(v), ...this.goContext(n, v) });
  }

  /** Go's words for a type error at the current field (none where the Go type is not known). */
  private goContext(n: Node, v: unknown, last?: string): Pick<TypeErrorInfo, 'goField' | 'goType' | 'goValue' | 'number'> {
    const goType = goTypeOf(n);
    const field = this.goField(last);
    if (field === undefined || goType === undefined) return {};
    const integer = n.k === K.Int32 || n.k === K.Integer;
    return {
      goField: field,
      goType,
      goValue: integer && typeof v === 'number' ? `number ${v}` : jsonType(v),
      ...(typeof v === 'number' ? { number: v } : {}),
    };
  }

  /**
   * Go's decoder context at the current path (plus `last`): the innermost named struct a field
   * was found in, and the struct fields from the top (map keys and indexes are not part of it):
   * `Container.spec.containers.image`. Walks the nodes again, so the walk itself keeps nothing.
   */
  private goField(last?: string): string | undefined {
    let n = this.root;
    let struct: string | undefined;
    const fields: string[] = [];
    const segs = last === undefined ? this.path : [...this.path, last];
    for (const seg of segs) {
      if (n === null) return undefined;
      const prop = typeof seg === 'string' && n.k === K.Struct ? n.props?.[seg] : undefined;
      if (prop !== undefined) {
        struct = n.goShort;
        fields.push(seg as string);
        n = prop;
      } else n = n.elem;
    }
    return struct === undefined ? undefined : `${struct}.${fields.join('.')}`;
  }

  /** `v` is not null. */
  private visit(n: Node, v: unknown): void {
    switch (n.k) {
      case K.Any:
        return;
      case K.Struct:
        if (isObject(v)) this.struct(n, v);
        else this.typeError(n, v);
        return;
      case K.Map:
        if (isObject(v)) this.map(n.elem!, v);
        // Named as the reference's decoder names the Go type (labels: map[string]string).
        else this.typeError(n, v, n.elem?.k === K.String ? 'map[string]string' : 'map');
        return;
      case K.Array:
        if (Array.isArray(v)) this.array(n.elem!, v);
        else this.typeError(n, v);
        return;
      case K.String:
        if (typeof v !== 'string') this.typeError(n, v);
        return;
      case K.Integer:
        if (typeof v !== 'number' || !Number.isInteger(v) || v >= INT64_LIMIT || v < -INT64_LIMIT) this.typeError(n, v);
        return;
      case K.Int32:
        if (typeof v !== 'number' || !Number.isInteger(v)) this.typeError(n, v);
        else if (v < INT32_MIN || v > INT32_MAX) this.typeError(n, v, 'int32');
        return;
      case K.Number:
        if (typeof v !== 'number') this.typeError(n, v);
        return;
      case K.Boolean:
        if (typeof v !== 'boolean') this.typeError(n, v);
        return;
      case K.IntOrString:
        if (typeof v === 'string') return;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) this.typeError(n, v);
        return;
      case K.Quantity:
        if (typeof v === 'string' ? !isQuantity(v) : typeof v !== 'number') this.typeError(n, v);
        return;
      case K.DateTime:
        if (typeof v !== 'string' || !DATE_TIME_RE.test(v)) this.typeError(n, v);
        return;
      case K.Bytes:
        if (typeof v !== 'string' || !BASE64_RE.test(v)) this.typeError(n, v);
        return;
    }
  }

  private struct(n: Node, o: JsonObject): void {
    const props = n.props!;
    const path = this.path;
    for (const key in o) {
      const child = props[key];
      const v = o[key];
      if (child === undefined) {
        if (n.elem !== null) {
          // Declared properties plus additionalProperties: treat as a map entry.
          if (v === null) continue;
          path.push(key);
          this.visit(n.elem, v);
          path.pop();
        } else if (!n.keep) {
          this.unknown.push(this.pathString(key));
          if (this.prune) delete o[key];
        }
        continue;
      }
      if (v === null) {
        // Go's decoder leaves the field zero: drop it.
        delete o[key];
        continue;
      }
      // Fast paths for the common scalar cases; everything else (and every error) via visit.
      const k = child.k;
      if (
        k === K.Any ||
        (k === K.String && typeof v === 'string') ||
        (k === K.Int32 && typeof v === 'number' && (v | 0) === v) ||
        (k === K.Boolean && typeof v === 'boolean')
      ) {
        continue;
      }
      path.push(key);
      this.visit(child, v);
      path.pop();
    }
    if (this.defaults && n.defNames !== null) {
      const names = n.defNames;
      const values = n.defValues!;
      for (let i = 0; i < names.length; i++) {
        const key = names[i]!;
        if (o[key] !== undefined) continue;
        const d = values[i];
        const v = typeof d === 'object' && d !== null ? cloneJson(d) : d;
        o[key] = v;
        const child = props[key]!;
        // Defaulted objects get their own defaults (strategy: {} → type: RollingUpdate).
        if (child.k === K.Struct || child.k === K.Array || child.k === K.Map) {
          path.push(key);
          this.visit(child, v);
          path.pop();
        }
      }
    }
    if (this.defaults && n.fn !== null) n.fn(o);
  }

  private map(elem: Node, o: JsonObject): void {
    if (elem.k === K.String) {
      // Fast path: labels, annotations, selectors, string data.
      for (const key in o) {
        const v = o[key];
        if (typeof v === 'string') continue;
        if (v === null) o[key] = '';
        else this.typeErrors.push({ field: this.pathString(key), expected: 'string', got: jsonType(v), ...this.goContext(elem, v, key) });
      }
      return;
    }
    const path = this.path;
    for (const key in o) {
      const v = o[key];
      if (v === null) {
        o[key] = zeroValue(elem);
        continue;
      }
      path.push(key);
      this.visit(elem, v);
      path.pop();
    }
  }

  private array(elem: Node, a: unknown[]): void {
    if (elem.k === K.Any) return;
    const path = this.path;
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (v === null) {
        a[i] = zeroValue(elem);
        if (elem.k !== K.Struct) continue;
      }
      path.push(i);
      this.visit(elem, a[i]);
      path.pop();
    }
  }
}

function appendSeg(s: string, seg: string | number): string {
  if (typeof seg === 'number') return `${s}[${seg}]`;
  return s === '' ? seg : `${s}.${seg}`;
}
