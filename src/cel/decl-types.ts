/**
 * Declared types (spec 1, "Schema type to expression type"): the one mapping from a schema to
 * CEL types, after the reference's SchemaDeclType (k8s.io/apiserver/pkg/cel/common/schemas.go).
 * It serves, with the same types and sizes:
 *
 *   custom resource rules     registry/crd/rule-types.ts: `self` and `oldSelf` of each rule's node
 *   policy type checking      admission/policy/typecheck.ts: `object`, `oldObject`, `params`
 *   the cost estimate         cel/estimate.ts: how long a string, list or map can be
 *
 * A schema comes in either form through a SchemaView: a custom resource's openAPIV3Schema as
 * stored (JSON with `x-svc-*` keys, jsonSchemaView) or a definition of the schema engine
 * (src/schema, refs resolved, modelSchemaView).
 *
 *   schema                          type                     maxElements (the estimate's size)
 *   int-or-string (and quantity)    dyn                      maxLength×4, else a request
 *   object, additionalProperties T  map<string, T>           maxProperties, else what fits in a request
 *   object with properties          an object type: fields by escaped name (src/cel/escaping.ts);
 *                                   a name that cannot be escaped is left out
 *   object without either           an object type without fields (nothing to select)
 *   resource root, embedded resource  also apiVersion, kind and metadata {name, generateName},
 *                                   unless it declares them itself (WithTypeAndObjectMeta)
 *   array                           list<T>                  maxItems, else what fits in a request
 *   string                          string                   maxLength×4 (runes to bytes), else the
 *                                                            longest enum value, else a request
 *     format byte                   bytes                    maxLength, else a request
 *     format duration               google.protobuf.Duration 32 (the longest such JSON string)
 *     format date / date-time       google.protobuf.Timestamp  12 / 32
 *   integer / number / boolean      int / double / bool
 *
 * Where this server's types differ from the reference's:
 *   - x-kubernetes-preserve-unknown-fields: dyn (the reference declares the known properties
 *     only); expressions here see the unknown fields too
 *   - a value without a type (untyped preserve-unknown-fields, the engine's `any`): dyn (the
 *     reference leaves such a property out of its object)
 *   - the values reach expressions as their JSON (rules and policies evaluate on JSON): a
 *     date-time is typed as a timestamp, as the reference types it, but is a string at run time,
 *     so `timestamp(self.at) < ...` checks and evaluates, `self.at < ...` only checks
 *
 * Depth: the reference has no limit. A custom resource's schema is a tree (no refs), and a cycle
 * among built-in definitions (only JSONSchemaProps has one) is cut where a definition repeats
 * inside itself, by an object without fields (the reference's PopulateRefs placeholder). What is
 * left is a guard against a deep schema: MAX_DEPTH, below which nothing is declared.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { isObject, type JsonObject } from '../api/meta';
import type { SchemaSet } from '../schema/engine';
import type { DefName, Schema } from '../schema/types';
import { escapeName } from './escaping';

/**
 * Levels of nesting below a variable that get a type (deeper: dyn). 250 is the parser's nesting
 * limit (cel-go's default maxRecursionDepth, cel-js's limits.maxDepth): every level an expression
 * descends costs a select, an index or a nested call, each one level of that limit, so no
 * expression the parser accepts reaches a type deeper than this, and the cut never changes a
 * check. It bounds the work on a schema nested past any use (up to the request's JSON nesting
 * limit of 10,000).
 */
export const MAX_DEPTH = 250;

/** celconfig.MaxRequestSizeBytes: no value is larger than a request. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

// The reference's size limits (k8s.io/apiserver/pkg/cel/limits.go), in bytes of JSON.
const MIN_STRING_SIZE = 2;
const MIN_BOOL_SIZE = 4;
const MIN_NUMBER_SIZE = 1;
const MIN_DURATION_SIZE_JSON = 3;
const JSON_DATE_SIZE = 12;
const MIN_DATETIME_SIZE_JSON = 21;
const MAX_DURATION_SIZE_JSON = 32;
const MAX_DATETIME_SIZE_JSON = 32;

// ---- schemas as the mapping reads them ------------------------------------------------------

/** A schema's JSON type; `int-or-string` also for quantities (a string or a number in JSON). */
export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'untyped';

/** The facts of a schema node the mapping reads (the reference's common.Schema). */
export interface SchemaView {
  readonly type: SchemaType;
  readonly format?: string;
  /** x-kubernetes-preserve-unknown-fields */
  readonly preservesUnknown: boolean;
  /** x-kubernetes-embedded-resource */
  readonly embeddedResource: boolean;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  readonly enum?: readonly unknown[];
  readonly required: readonly string[];
  readonly hasDefault: boolean;
  properties(): readonly (readonly [string, SchemaView])[] | undefined;
  additionalProperties(): SchemaView | undefined;
  items(): SchemaView | undefined;
}

const NO_CHILDREN = { properties: () => undefined, additionalProperties: () => undefined, items: () => undefined };
const plain = { preservesUnknown: false, embeddedResource: false, required: [], hasDefault: false };
const UNTYPED: SchemaView = { type: 'untyped', ...plain, ...NO_CHILDREN };
const STRING: SchemaView = { type: 'string', ...plain, ...NO_CHILDREN };
/** What the reference puts where a definition repeats inside itself: `{type: object}`. */
const EMPTY_OBJECT: SchemaView = { type: 'object', ...plain, ...NO_CHILDREN };

const JSON_TYPES = new Set<SchemaType>(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** A custom resource's schema as stored (JSONSchemaProps with `x-svc-*` extension keys). */
export function jsonSchemaView(s: JsonObject): SchemaView {
  const type: SchemaType =
    s['x-svc-int-or-string'] === true ? 'int-or-string' : JSON_TYPES.has(s.type as SchemaType) ? (s.type as SchemaType) : 'untyped';
  const sub = (v: unknown): SchemaView => (isObject(v) ? jsonSchemaView(v) : UNTYPED);
  return {
    type,
    format: typeof s.format === 'string' ? s.format : undefined,
    preservesUnknown: s['x-svc-preserve-unknown-fields'] === true,
    embeddedResource: s['x-svc-embedded-resource'] === true,
    maxLength: num(s.maxLength),
    maxItems: num(s.maxItems),
    maxProperties: num(s.maxProperties),
    enum: Array.isArray(s.enum) ? s.enum : undefined,
    required: strings(s.required),
    hasDefault: s.default !== undefined,
    properties: () => (isObject(s.properties) ? Object.entries(s.properties).map(([k, v]) => [k, sub(v)] as const) : undefined),
    additionalProperties: () => (isObject(s.additionalProperties) ? jsonSchemaView(s.additionalProperties) : undefined),
    items: () => (isObject(s.items) ? jsonSchemaView(s.items) : undefined),
  };
}

/** A definition of the schema engine, refs resolved; undefined when there is no such definition. */
export function modelSchemaView(def: DefName, schemas: SchemaSet): SchemaView | undefined {
  const s = schemas.get(def);
  return s && modelView(s, { schemas, onCycle: defsOnCycles(def, schemas), shared: new Map() }, new Set([def]));
}

interface ModelContext {
  readonly schemas: SchemaSet;
  /** Definitions that (through refs) contain themselves; only they are cut, depending on the path. */
  readonly onCycle: ReadonlySet<DefName>;
  /** The views of the other definitions, the same wherever they occur (one declared type each). */
  readonly shared: Map<string, SchemaView>;
}

/**
 * `visiting`: the definitions this node is inside of; a ref to one of them is the reference's
 * cycle placeholder. A ref's own flags (preserve-unknown, embedded, default) add to its target's.
 */
function modelView(s: Schema, cx: ModelContext, visiting: ReadonlySet<DefName>, on?: Schema): SchemaView {
  if (s.type === 'ref') {
    if (visiting.has(s.ref)) return EMPTY_OBJECT;
    const target = cx.schemas.get(s.ref);
    if (!target) return UNTYPED;
    if (cx.onCycle.has(s.ref)) return modelView(target, cx, new Set([...visiting, s.ref]), s);
    // Not on a cycle: nothing inside refers back to the path here, so the view is the same everywhere.
    const key = `${s.ref} ${s.preserveUnknown === true} ${s.embedded === true} ${s.default !== undefined}`;
    let v = cx.shared.get(key);
    if (!v) {
      v = modelView(target, cx, new Set([s.ref]), s);
      cx.shared.set(key, v);
    }
    return v;
  }
  const sub = (x: Schema | undefined): SchemaView | undefined => x && modelView(x, cx, visiting);
  const type: SchemaType = s.type === 'any' ? 'untyped' : s.type === 'quantity' || s.type === 'int-or-string' ? 'int-or-string' : s.type;
  return {
    type,
    format: 'format' in s ? s.format : undefined,
    preservesUnknown: s.preserveUnknown === true || on?.preserveUnknown === true,
    embeddedResource: s.embedded === true || on?.embedded === true,
    enum: s.enum,
    required: s.type === 'object' ? (s.required ?? []) : [],
    hasDefault: s.default !== undefined || on?.default !== undefined,
    properties: () =>
      s.type === 'object' && s.properties
        ? Object.entries(s.properties).map(([k, v]) => [k, modelView(v, cx, visiting)] as const)
        : undefined,
    additionalProperties: () => (s.type === 'object' ? sub(s.additionalProperties) : undefined),
    items: () => (s.type === 'array' ? sub(s.items) : undefined),
  };
}

/** The definitions reachable from `root` that are on a cycle of refs (Tarjan's strongly connected components). */
function defsOnCycles(root: DefName, schemas: SchemaSet): Set<DefName> {
  const refsOf = (s: Schema | undefined, out: Set<DefName>): Set<DefName> => {
    if (s?.type === 'ref') out.add(s.ref);
    else if (s?.type === 'object') {
      for (const p of Object.values(s.properties ?? {})) refsOf(p, out);
      refsOf(s.additionalProperties, out);
    } else if (s?.type === 'array') refsOf(s.items, out);
    return out;
  };
  const index = new Map<DefName, number>();
  const low = new Map<DefName, number>();
  const stack: DefName[] = [];
  const onStack = new Set<DefName>();
  const out = new Set<DefName>();
  const visit = (d: DefName): void => {
    index.set(d, index.size);
    low.set(d, index.get(d) as number);
    stack.push(d);
    onStack.add(d);
    const next = refsOf(schemas.get(d), new Set());
    for (const n of next) {
      if (!schemas.get(n)) continue;
      if (!index.has(n)) {
        visit(n);
        low.set(d, Math.min(low.get(d) as number, low.get(n) as number));
      } else if (onStack.has(n)) low.set(d, Math.min(low.get(d) as number, index.get(n) as number));
    }
    if (low.get(d) !== index.get(d)) return;
    const component: DefName[] = [];
    let x: DefName;
    do {
      x = stack.pop() as DefName;
      onStack.delete(x);
      component.push(x);
    } while (x !== d);
    if (component.length > 1 || next.has(d)) for (const c of component) out.add(c);
  };
  visit(root);
  return out;
}

/**
 * The reference's WithTypeAndObjectMeta: a resource's object declares apiVersion and kind
 * (strings) and metadata with name and generateName; unless it declares all of them itself,
 * they are added and metadata replaced by just those two.
 */
function withTypeAndObjectMeta(v: SchemaView): SchemaView {
  const props = new Map(v.properties() ?? []);
  const meta = props.get('metadata');
  const metaProps = new Map(meta?.properties() ?? []);
  const isString = (x: SchemaView | undefined) => x?.type === 'string';
  if (
    isString(props.get('kind')) &&
    isString(props.get('apiVersion')) &&
    meta?.type === 'object' &&
    isString(metaProps.get('name')) &&
    isString(metaProps.get('generateName'))
  )
    return v;
  const metadata: SchemaView = {
    ...EMPTY_OBJECT,
    properties: () => [
      ['name', STRING],
      ['generateName', STRING],
    ],
  };
  props.set('kind', STRING);
  props.set('apiVersion', STRING);
  props.set('metadata', metadata);
  return { ...v, properties: () => [...props] };
}

// ---- declared types -----------------------------------------------------------------------------

export type DeclKind = 'object' | 'map' | 'list' | 'string' | 'bytes' | 'duration' | 'timestamp' | 'int' | 'double' | 'bool' | 'dyn';

export interface DeclField {
  /** The property's name in JSON. */
  readonly name: string;
  /** Its CEL identifier (escaped); undefined when the name cannot be escaped. */
  readonly celName: string | undefined;
  readonly type: DeclType;
}

/** The reference's DeclType: a CEL type with the sizes the cost estimate reads. */
export interface DeclType {
  readonly kind: DeclKind;
  /** x-kubernetes-preserve-unknown-fields: declared dyn (see above). */
  readonly preservesUnknown: boolean;
  /** Objects: the declared properties. */
  readonly fields: readonly DeclField[] | undefined;
  /** Lists: the items; maps: the values. */
  readonly elem: DeclType | undefined;
  /**
   * Bytes of a string, items of a list, entries of a map, fields of an object (0 for other
   * scalars); Infinity where nothing bounds it (dyn without a schema).
   */
  readonly maxElements: number;
  /** The smallest JSON the value can be, in bytes. */
  readonly minSerializedSize: number;
  /** An object's field by its CEL name. */
  field(celName: string): DeclType | undefined;
}

const zeroIfNegative = (n: number): number => Math.max(0, n);

/** Below MAX_DEPTH, and where no schema says more. */
const DYN: DeclType = {
  kind: 'dyn',
  preservesUnknown: false,
  fields: undefined,
  elem: undefined,
  maxElements: Number.POSITIVE_INFINITY,
  minSerializedSize: 1,
  field: () => undefined,
};

/** Children are made on first use: the estimate reads a few sizes, not the whole tree. */
class SchemaDecl implements DeclType {
  readonly kind: DeclKind;
  readonly preservesUnknown: boolean;
  private readonly view: SchemaView;
  private fieldList?: readonly (DeclField & { readonly view: SchemaView })[];
  private byName?: Map<string, DeclType>;
  private elemType?: DeclType;
  private max?: number;
  private min?: number;

  constructor(
    view: SchemaView,
    resource: boolean,
    private readonly depth: number,
  ) {
    this.view = resource && view.type === 'object' ? withTypeAndObjectMeta(view) : view;
    this.preservesUnknown = view.preservesUnknown;
    this.kind = kindOf(this.view);
  }

  get fields(): readonly DeclField[] | undefined {
    return this.kind === 'object' ? this.entries() : undefined;
  }

  private entries(): readonly (DeclField & { readonly view: SchemaView })[] {
    this.fieldList ??= (this.view.properties() ?? []).map(([name, v]) => ({
      name,
      celName: escapeName(name),
      type: child(v, this.depth),
      view: v,
    }));
    return this.fieldList;
  }

  get elem(): DeclType | undefined {
    if (this.kind === 'list') this.elemType ??= child(this.view.items() ?? UNTYPED, this.depth);
    else if (this.kind === 'map') this.elemType ??= child(this.view.additionalProperties() ?? UNTYPED, this.depth);
    return this.elemType;
  }

  field(celName: string): DeclType | undefined {
    if (!this.byName) {
      this.byName = new Map();
      for (const f of this.fields ?? []) if (f.celName !== undefined) this.byName.set(f.celName, f.type);
    }
    return this.byName.get(celName);
  }

  get maxElements(): number {
    this.max ??= this.maxOf();
    return this.max;
  }

  get minSerializedSize(): number {
    this.min ??= this.minOf();
    return this.min;
  }

  private maxOf(): number {
    const v = this.view;
    switch (this.kind) {
      case 'dyn':
        if (v.type !== 'int-or-string') return Number.POSITIVE_INFINITY;
        return v.maxLength !== undefined ? zeroIfNegative(v.maxLength) * 4 : MAX_REQUEST_BYTES - 2;
      case 'string':
        if (v.maxLength !== undefined) return zeroIfNegative(v.maxLength) * 4;
        if (v.enum && v.enum.length > 0) return Math.max(0, ...v.enum.map((e) => (typeof e === 'string' ? Buffer.byteLength(e) : 0)));
        return MAX_REQUEST_BYTES - 2;
      case 'bytes':
        return v.maxLength !== undefined ? zeroIfNegative(v.maxLength) : MAX_REQUEST_BYTES - 2;
      case 'duration':
        return MAX_DURATION_SIZE_JSON;
      case 'timestamp':
        return v.format === 'date' ? JSON_DATE_SIZE : MAX_DATETIME_SIZE_JSON;
      case 'list':
        return v.maxItems !== undefined
          ? zeroIfNegative(v.maxItems)
          : Math.floor((MAX_REQUEST_BYTES - 2) / ((this.elem as DeclType).minSerializedSize + 1));
      case 'map':
        // A key's quotes, colon and comma, and the smallest value.
        return v.maxProperties !== undefined
          ? zeroIfNegative(v.maxProperties)
          : Math.floor((MAX_REQUEST_BYTES - 2) / ((this.elem as DeclType).minSerializedSize + 6));
      case 'object':
        return (this.fields as readonly DeclField[]).length;
      default:
        return 0;
    }
  }

  private minOf(): number {
    switch (this.kind) {
      case 'object': {
        // {} and each required property without a default (defaults are filled in by the server).
        const required = new Set(this.view.required);
        let n = 2;
        for (const f of this.entries()) {
          if (!required.has(f.name) || f.view.hasDefault || f.view.type === 'untyped') continue;
          n += f.name.length + f.type.minSerializedSize + 4;
        }
        return n;
      }
      case 'list':
      case 'map':
      case 'string':
      case 'bytes':
        return MIN_STRING_SIZE;
      case 'duration':
        return MIN_DURATION_SIZE_JSON;
      case 'timestamp':
        return this.view.format === 'date' ? JSON_DATE_SIZE : MIN_DATETIME_SIZE_JSON;
      case 'bool':
        return MIN_BOOL_SIZE;
      default:
        return MIN_NUMBER_SIZE;
    }
  }
}

function kindOf(v: SchemaView): DeclKind {
  switch (v.type) {
    case 'object':
      return v.additionalProperties() ? 'map' : 'object';
    case 'array':
      return 'list';
    case 'string':
      switch (v.format) {
        case 'byte':
          return 'bytes';
        case 'duration':
          return 'duration';
        case 'date':
        case 'date-time':
          return 'timestamp';
        default:
          return 'string';
      }
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    default:
      return 'dyn';
  }
}

/** The declared types of shared views (a definition's, wherever it occurs), by depth. */
const byView = new WeakMap<SchemaView, Map<number, DeclType>>();

function child(v: SchemaView, depth: number): DeclType {
  if (depth + 1 > MAX_DEPTH) return DYN;
  let m = byView.get(v);
  if (!m) {
    m = new Map();
    byView.set(v, m);
  }
  let t = m.get(depth + 1);
  if (!t) {
    t = new SchemaDecl(v, v.embeddedResource, depth + 1);
    m.set(depth + 1, t);
  }
  return t;
}

/**
 * The declared type of a schema node as the value of a variable. `resource`: the node is the
 * root of a resource (a custom resource's schema, a kind's definition); an embedded resource is
 * one by its own flag.
 */
export function declType(view: SchemaView | undefined, resource = false): DeclType {
  return view ? new SchemaDecl(view, resource || view.embeddedResource, 0) : DYN;
}

// ---- declaring them in an environment ------------------------------------------------------------

/**
 * How the values spell property names, so that the declared fields match them: `escaped` for
 * custom resource rules (their values are renamed, registry/crd/rules.ts escaperOf), `json` for
 * policies (objects as stored).
 */
export type FieldNames = 'escaped' | 'json';

const onlyChecked = (): never => {
  throw new Error('bug: declared object types are for type checking; evaluation is on dyn values');
};

/**
 * Registers declared types on a cel-js environment (not yet frozen) and gives their CEL type
 * names: an object type per object node, named after its path (`decl.Deployment.spec`), with
 * `==` and `!=` (CEL compares values of every type; cel-js has no equality for registered types
 * of its own).
 */
export class TypeDeclarations {
  private readonly used = new Set<string>();
  /** One object type per declared type (a definition occurring twice at one depth is one type). */
  private readonly declared = new Map<DeclType, string>();

  constructor(
    private readonly env: Environment,
    private readonly names: FieldNames,
  ) {}

  /** The CEL type name of `t`, registering the object types in it under `name`. */
  declare(t: DeclType, name: string): string {
    return this.typeName(t, `decl.${name}`);
  }

  private typeName(t: DeclType, path: string): string {
    if (t.preservesUnknown) return 'dyn';
    switch (t.kind) {
      case 'object': {
        const known = this.declared.get(t);
        if (known) return known;
        const name = this.unique(path);
        this.declared.set(t, name);
        const fields: Record<string, string> = {};
        for (const f of t.fields ?? []) {
          const key = this.names === 'escaped' ? f.celName : f.name;
          if (key !== undefined) fields[key] = this.typeName(f.type, `${name}.${key}`);
        }
        this.env.registerType(name, { fields });
        this.env.registerOperator(`${name} == ${name}`, onlyChecked);
        return name;
      }
      case 'map':
        return `map<string, ${this.typeName(t.elem ?? DYN, `${path}.value`)}>`;
      case 'list':
        return `list<${this.typeName(t.elem ?? DYN, `${path}.item`)}>`;
      case 'timestamp':
        return 'google.protobuf.Timestamp';
      case 'duration':
        return 'google.protobuf.Duration';
      default:
        return t.kind;
    }
  }

  /** A type name cel-js accepts (dotted identifiers) not yet used in this environment. */
  private unique(path: string): string {
    const base = path.replace(/[^A-Za-z0-9_.]/g, '_').replace(/\.(?=[0-9]|$)/g, '._');
    let name = base;
    for (let i = 2; this.used.has(name); i++) name = `${base}_${i}`;
    this.used.add(name);
    return name;
  }
}
