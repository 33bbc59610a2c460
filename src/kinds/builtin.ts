/**
 * The built-in kinds: one Spec each in src/kinds/specs/<group>.ts. Names, scope and subresources
 * are the reference's; the schema comes from src/schema/generated; rules the schema cannot say sit
 * in the spec or in src/kinds/strategies.ts, table columns in the spec or in src/kinds/columns.ts.
 */
import type { Column } from '../codec/table';
import type { KindDef, Strategy } from '../registry/kind';
import { columnsFor } from './columns';
import { lifecycleFor } from './lifecycle';
import { ADMISSIONREGISTRATION } from './specs/admissionregistration';
import { APIREGISTRATION } from './specs/apiregistration';
import { APIS } from './specs/apis';
import { APPS } from './specs/apps';
import { AUTOSCALING } from './specs/autoscaling';
import { BATCH } from './specs/batch';
import { CERTIFICATES } from './specs/certificates';
import { CORE } from './specs/core';
import { EVENTS } from './specs/events';
import { METRICS } from './specs/metrics';
import { MUTATING_POLICY } from './specs/mutating-policy';
import { NETWORKING } from './specs/networking';
import { SCHEDULING } from './specs/scheduling';
import type { Spec } from './specs/spec';
import { STORAGE } from './specs/storage';
import { TESTING } from './specs/testing';
import { mergeStrategy, strategyFor } from './strategies';

const SPECS: Spec[] = [
  ...CORE,
  ...APPS,
  ...BATCH,
  ...APIS,
  ...NETWORKING,
  ...STORAGE,
  ...AUTOSCALING,
  ...EVENTS,
  ...SCHEDULING,
  ...CERTIFICATES,
  ...ADMISSIONREGISTRATION,
  ...APIREGISTRATION,
  ...METRICS,
  ...TESTING,
  ...MUTATING_POLICY,
];

function build(s: Spec, hasSpec: (schema: string) => boolean): KindDef {
  const version = s.version ?? 'v1';
  const schema = s.schema ?? `io.svc.api.${s.pkg}.${version}.${s.kind}`;
  const strategy: Strategy = { ...mergeStrategy(strategyFor(s.kind, s.emptyStatus), s.rules), ...lifecycleFor(s.kind) };
  return {
    group: s.group ?? '',
    version,
    kind: s.kind,
    listKind: `${s.kind}List`,
    plural: s.plural,
    singular: s.kind.toLowerCase(),
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    namespaced: s.namespaced,
    schema,
    status: s.status ?? false,
    scale: s.scale ?? false,
    scaleSelectorMap: s.scaleSelectorMap,
    finalize: s.finalize ?? false,
    deleteCollection: s.deleteCollection ?? true,
    nameRule: s.nameRule ?? 'subdomain',
    returnDeletedObject: s.returnDeletedObject,
    virtual: s.virtual,
    generation: s.generation ?? hasSpec(schema),
    columns: s.columns ?? columnsFor(s.kind),
    selectableFields: s.fields ?? {},
    strategy,
    storedAs: s.storedAs,
    computed: s.computed,
    deprecation: s.deprecation,
    subresources: s.subresources,
  };
}

/**
 * All built-in kinds; `hasSpec` tells whether a schema has a `spec` field (drives generation).
 * A kind behind a feature gate is left out unless `gates` turns its gate on.
 */
export function builtinKinds(hasSpec: (schema: string) => boolean, gates: Record<string, boolean> = {}): KindDef[] {
  return SPECS.filter((s) => s.gate === undefined || gates[s.gate] === true).map((s) => build(s, hasSpec));
}

const TABLES = new Map<string, Column[]>();
for (const s of SPECS) if (!TABLES.has(s.kind)) TABLES.set(s.kind, s.columns ?? columnsFor(s.kind));

/** The table columns of a built-in kind by name (the codec workers, which hold no KindDefs). */
export function builtinColumns(kind: string): Column[] {
  return TABLES.get(kind) ?? [];
}
