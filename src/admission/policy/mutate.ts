/**
 * One mutation of a mutating admission policy (the reference's mutating/patch): its expression is
 * evaluated on the object as the previous mutations left it, and the result applied:
 *
 *   ApplyConfiguration  an `Object{...}` merged as server-side apply merges (without ownership),
 *                       refusing atomic lists, maps and structs (src/registry/apply)
 *   JSONPatch           a list of `JSONPatch{op, path, from, value}` applied as an RFC 6902 patch
 *                       (src/registry/patch)
 *
 * then defaulted as the reference defaults the patched object. Errors are thrown as Error with the
 * reference's texts, for the plugin to report under the policy's failurePolicy.
 */
import { cloneJson, isObject, type JsonObject, type Obj } from '../../api/meta';
import { CostBudget, OUT_OF_BUDGET_MESSAGE, RUNTIME_CEL_COST_BUDGET } from '../../cel/budget';
import { fromCel } from '../../cel/index';
import { JSONPATCH_TYPE, typeNameMismatch, typeNameOf } from '../../cel/object-initializers';
import { mergeApplyConfiguration } from '../../registry/apply';
import { applyJsonPatch, PatchError } from '../../registry/patch';
import type { SchemaSet } from '../../schema/engine';
import type { Expr } from './compile';
import { celTypeName, lazyVariables, tryRun } from './evaluate';
import type { Mutation } from './mutating-compile';

/** The schema the mutated kind's objects are merged and defaulted by. */
export interface MutationTarget {
  schemas: SchemaSet;
  /** The kind's definition (absent: shapes deduced from the values, no defaults). */
  defName?: string;
}

/**
 * The object after one mutation (a new object). `ctx` holds the variables but `object` and
 * `variables`, which are set here from `object`.
 */
export function applyMutation(
  m: Mutation,
  variables: readonly { name: string; expr: Expr }[],
  ctx: Record<string, unknown>,
  object: Obj,
  celObject: unknown,
  target: MutationTarget,
): Obj {
  const budget = new CostBudget(RUNTIME_CEL_COST_BUDGET);
  const c: Record<string, unknown> = { ...ctx, object: celObject };
  c.variables = lazyVariables(variables, c, () => budget);
  const r = tryRun(m.expr, c, budget);
  if (budget.exhausted) throw new Error(OUT_OF_BUDGET_MESSAGE);
  if (r.error !== undefined) throw new Error(r.error);
  const out = m.patchType === 'ApplyConfiguration' ? applyConfiguration(r.value, object, target) : jsonPatch(r.value, object);
  if (target.defName && target.schemas.get(target.defName)) target.schemas.normalize(target.defName, out, { prune: false, defaults: true });
  return out;
}

function applyConfiguration(v: unknown, object: Obj, target: MutationTarget): Obj {
  if (typeNameOf(v) !== 'Object')
    throw new Error(`unsupported return type from ApplyConfiguration expression: ${typeNameOf(v) ?? celTypeName(v)}`);
  const mismatch = typeNameMismatch(v);
  if (mismatch) throw new Error(`type mismatch: ${mismatch}`);
  const patch = fromCel(v) as JsonObject;
  // The configuration is of the object's kind (patchObject.SetGroupVersionKind).
  patch.apiVersion = object.apiVersion;
  patch.kind = object.kind;
  try {
    return mergeApplyConfiguration(target.schemas, target.defName, object, patch);
  } catch (e) {
    throw new Error(`error applying patch: ${(e as Error).message}`);
  }
}

function jsonPatch(v: unknown, object: Obj): Obj {
  if (!Array.isArray(v)) throw new Error('type mismatch: JSONPatchType.expression should evaluate to array');
  const ops = v.map((op) => {
    const name = typeNameOf(op);
    if (name !== JSONPATCH_TYPE) {
      throw new Error(
        `type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of ${name ?? celTypeName(op)}`,
      );
    }
    const o = op as Record<string, unknown>;
    // An Object value's type names must follow its field names from its own type.
    const valueType = typeNameOf(o.value);
    const mismatch = valueType === undefined ? undefined : typeNameMismatch(o.value, valueType);
    if (mismatch) throw new Error(`type mismatch: ${mismatch}`);
    const out: JsonObject = { op: o.op ?? '', path: o.path ?? '' };
    if (typeof o.from === 'string' && o.from !== '') out.from = o.from;
    if (o.value !== undefined) out.value = fromCel(o.value);
    return out;
  });
  let patched: unknown;
  try {
    patched = applyJsonPatch(cloneJson(object), ops);
  } catch (e) {
    // A failed test operation leaves the object as it was, without an error (as the reference).
    if (e instanceof PatchError && e.kind === 'test-failed') return object;
    throw new Error(`JSONPath: ${e instanceof PatchError ? e.detail : (e as Error).message}`);
  }
  if (!isObject(patched)) throw new Error('JSONPath: the patched document is not an object');
  return patched as Obj;
}

/**
 * Makes `target` hold `source`'s members (the registry keeps using the object it gave the chain,
 * and its metadata object): top-level members replaced, metadata's replaced inside the same object.
 */
export function replaceInPlace(target: Obj, source: Obj): void {
  const meta = target.metadata;
  for (const k of Object.keys(target)) if (!Object.hasOwn(source, k)) delete (target as JsonObject)[k];
  for (const [k, x] of Object.entries(source)) {
    if (k === 'metadata' && isObject(meta) && isObject(x)) {
      for (const mk of Object.keys(meta)) if (!Object.hasOwn(x, mk)) delete (meta as JsonObject)[mk];
      Object.assign(meta, x);
      (target as JsonObject).metadata = meta;
    } else (target as JsonObject)[k] = x;
  }
}
