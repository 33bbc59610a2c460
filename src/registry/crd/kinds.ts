/**
 * The kinds of a CustomResourceDefinition: one KindDef per served version, described as a
 * built-in kind is (src/kinds/builtin.ts), so the generic registry serves it with no second code
 * path. The schema is the version's openAPIV3Schema (src/registry/crd/schema.ts), registered in
 * the SchemaSet under the reference's definition name (`com.example.v1.Widget` for
 * `example.com/v1 Widget`); the strategy validates against it; printer columns come from
 * additionalPrinterColumns (default: Age), field selectors from selectableFields.
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { type Column, since } from '../../codec/table';
import type { Schema } from '../../schema/types';
import type { KindDef } from '../kind';
import { compileRules, validateRules } from './rules';
import { listSchema, structuralSchema, validateCustomResource } from './schema';

export interface CustomKind {
  def: KindDef;
  /** The engine schema to register under def.schema. */
  schema: Schema;
  /** The schema of its list, to register under `${def.schema}List`. */
  list: Schema;
  /** Whether this version is the storage version. */
  storage: boolean;
  /** The CRD's conversion webhook (`spec.conversion.webhook`) when its strategy is Webhook. */
  webhook?: JsonObject;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The reference's OpenAPI definition name of a custom kind: the group reversed. */
export function definitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/**
 * A simple JSONPath as printer columns and selectable fields use them: `.spec.replicas`,
 * `.items[0].name`, `.status.conditions[?(@.type=="Ready")].status`. Undefined when absent.
 */
export function jsonPath(path: string, o: unknown): unknown {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  let cur: unknown = o;
  const re = /\.([A-Za-z0-9_\-/]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_-]+)\s*==\s*["']([^"']*)["']\)\]|\['([^']+)'\]/gy;
  re.lastIndex = 0;
  let consumed = 0;
  while (consumed < p.length) {
    const m = re.exec(p);
    if (m === null) break;
    consumed = re.lastIndex;
    if (m[1] !== undefined || m[5] !== undefined) cur = isObject(cur) ? cur[(m[1] ?? m[5]) as string] : undefined;
    else if (m[2] !== undefined) cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
    else cur = Array.isArray(cur) ? cur.find((x) => isObject(x) && String(x[m[3] as string]) === m[4]) : undefined;
    if (cur === undefined) return undefined;
  }
  return consumed === p.length ? cur : undefined;
}

const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function columnsOf(v: JsonObject): Column[] {
  const specs = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.filter(isObject) : [];
  const cols =
    specs.length > 0 ? specs : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: AGE_DESCRIPTION }];
  return cols.map((c) => {
    const type = str(c.type) as Column['type'];
    const path = str(c.jsonPath);
    return {
      name: str(c.name),
      type,
      format: str(c.format) || undefined,
      description: str(c.description),
      priority: typeof c.priority === 'number' ? c.priority : 0,
      cell: (o: Obj, now: number) => {
        const x = jsonPath(path, o);
        if (x === undefined || x === null) return null;
        if (type === 'date') return since(x, now);
        if (typeof x === 'object') return JSON.stringify(x);
        return x;
      },
    };
  });
}

/** What rules see of an object at the root: apiVersion, kind, metadata.name/generateName, the rest. */
function ruleView(o: Obj): JsonObject {
  const meta: JsonObject = {};
  if (o.metadata.name !== undefined) meta.name = o.metadata.name;
  if (o.metadata.generateName !== undefined) meta.generateName = o.metadata.generateName;
  return { ...o, metadata: meta } as JsonObject;
}

/** The served versions of a CRD as kinds (the stored CRD, extension keys in svc spelling). */
export function customKinds(crd: Obj): CustomKind[] {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const names = isObject(spec.names) ? spec.names : {};
  const group = str(spec.group);
  const kind = str(names.kind);
  const out: CustomKind[] = [];
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  const storage = str(versions.find((v) => v.storage === true)?.name);
  for (const v of versions) {
    if (v.served !== true) continue;
    const version = str(v.name);
    const raw = isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : { type: 'object' };
    const sub = isObject(v.subresources) ? v.subresources : {};
    const rules = compileRules(raw);
    const selectable: Record<string, (o: Obj) => string> = {};
    for (const f of Array.isArray(v.selectableFields) ? v.selectableFields.filter(isObject) : []) {
      const p = str(f.jsonPath);
      selectable[p.replace(/^\./, '')] = (o) => {
        const x = jsonPath(p, o);
        return x === undefined || x === null ? '' : String(x);
      };
    }
    const def: KindDef = {
      group,
      version,
      kind,
      listKind: str(names.listKind) || `${kind}List`,
      plural: str(names.plural),
      singular: str(names.singular) || kind.toLowerCase(),
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      namespaced: spec.scope === 'Namespaced',
      schema: definitionName(group, version, kind),
      status: isObject(sub.status),
      scale: isObject(sub.scale),
      scalePaths: isObject(sub.scale)
        ? {
            specReplicas: str(sub.scale.specReplicasPath),
            statusReplicas: str(sub.scale.statusReplicasPath),
            labelSelector: str(sub.scale.labelSelectorPath) || undefined,
          }
        : undefined,
      deleteCollection: true,
      nameRule: 'subdomain',
      generation: true,
      columns: columnsOf(v),
      selectableFields: selectable,
      strategy: {
        validate: (o, old) => {
          const errs = validateCustomResource(raw, o);
          if (rules && errs.length === 0) validateRules(rules, ruleView(o), old && ruleView(old), '', errs);
          return errs;
        },
      },
      custom: true,
      // Several versions share the objects (one key prefix), stored in the storage version.
      storageVersion: storage,
      deprecation: v.deprecated === true ? str(v.deprecationWarning) || `${group}/${version} ${kind} is deprecated` : undefined,
    };
    const gvk = { group, version, kind };
    const conversion = isObject(spec.conversion) ? spec.conversion : {};
    const webhook = conversion.strategy === 'Webhook' && isObject(conversion.webhook) ? conversion.webhook : undefined;
    out.push({ def, schema: structuralSchema(raw, gvk), list: listSchema(def.schema, gvk), storage: v.storage === true, webhook });
  }
  return out;
}

/** The CRD's names as they would be accepted (status.acceptedNames). */
export function requestedNames(crd: Obj): JsonObject {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const names = isObject(spec.names) ? spec.names : {};
  const kind = str(names.kind);
  const out: JsonObject = {
    plural: str(names.plural),
    singular: str(names.singular) || kind.toLowerCase(),
    kind,
    listKind: str(names.listKind) || `${kind}List`,
  };
  if (strings(names.shortNames).length > 0) out.shortNames = strings(names.shortNames);
  if (strings(names.categories).length > 0) out.categories = strings(names.categories);
  return out;
}
