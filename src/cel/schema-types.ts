/**
 * CEL types from schemas (spec 1, "Schema type to expression type"): a definition becomes a
 * cel-js message type whose fields are typed as the table says, so that the checker refuses a
 * member the schema does not have (`undefined field`) or an operation its type does not allow.
 *
 *   object with properties        message type (one per definition, named after it)
 *   object with additionalProperties  map<string, T>
 *   preserve-unknown-fields, any, int-or-string, quantity   dyn (no static type to check)
 *   array                         list<T>
 *   integer / number / boolean    int / double / bool
 *   string                        string; format byte → bytes, date-time → timestamp, duration → duration
 *
 * Types are registered on the given environment (a cel-js Environment, not yet frozen) once per
 * definition; recursive definitions and depths past MAX_DEPTH become dyn.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { SchemaSet } from '../schema/engine';
import type { DefName, Schema } from '../schema/types';

const MAX_DEPTH = 12;

export class SchemaTypes {
  private readonly names = new Map<DefName, string>();
  private readonly inProgress = new Set<DefName>();
  private n = 0;

  constructor(
    private readonly env: Environment,
    private readonly schemas: SchemaSet,
  ) {}

  /** The CEL type name of a definition (registering it and what it refers to). */
  typeOf(def: DefName): string {
    const s = this.schemas.get(def);
    if (!s) return 'dyn';
    return this.type(s, def, 0);
  }

  private type(s: Schema, hint: string, depth: number): string {
    if (depth > MAX_DEPTH || s.preserveUnknown) return 'dyn';
    switch (s.type) {
      case 'ref': {
        const known = this.names.get(s.ref);
        if (known) return known;
        if (this.inProgress.has(s.ref)) return 'dyn';
        const target = this.schemas.get(s.ref);
        if (!target) return 'dyn';
        this.inProgress.add(s.ref);
        try {
          const t = this.type(target, s.ref, depth + 1);
          // Only message types are remembered by definition: scalars and maps are spelled out.
          if (t !== 'dyn' && !t.includes('<') && target.type === 'object') this.names.set(s.ref, t);
          return t;
        } finally {
          this.inProgress.delete(s.ref);
        }
      }
      case 'object': {
        if (s.properties) {
          const fields: Record<string, string> = {};
          for (const [k, v] of Object.entries(s.properties)) fields[k] = this.type(v, `${hint}.${k}`, depth + 1);
          const name = `svc${++this.n}.${hint.replace(/[^A-Za-z0-9_.]/g, '_')}`;
          this.env.registerType(name, { fields });
          return name;
        }
        if (s.additionalProperties) return `map<string, ${this.type(s.additionalProperties, `${hint}.value`, depth + 1)}>`;
        return 'map<string, dyn>';
      }
      case 'array':
        return `list<${this.type(s.items, `${hint}.item`, depth + 1)}>`;
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'string':
        if (s.format === 'byte') return 'bytes';
        if (s.format === 'date-time') return 'google.protobuf.Timestamp';
        if (s.format === 'duration') return 'google.protobuf.Duration';
        return 'string';
      default:
        return 'dyn';
    }
  }
}
