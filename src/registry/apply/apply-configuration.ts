/**
 * The merge of a mutating admission policy's apply configuration into the object under admission
 * (the reference's patch.ApplyStructuredMergeDiff): the structured merge of server-side apply
 * (typed.ts's merge: map lists and sets by item, everything else field by field) without
 * managed fields or conflicts, refusing a configuration that sets an atomic list, map or struct,
 * whose unnamed parts the merge would silently drop:
 *
 *   invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.initContainers[0].args
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import type { SchemaSet } from '../../schema/engine';
import type { Schema } from '../../schema/types';
import { typerFor } from './apply';
import { merge, type Typer } from './typed';

const ANY: Schema = { type: 'any' };

/** SMD's findAtomics: the paths (`.field`, `[index]`) of the atomic containers the value sets. */
function findAtomics(t: Typer, s: Schema, v: unknown, path: string, out: string[]): void {
  const n = t.nodeFor(s, v);
  if (isObject(v) && (n.k === 'struct' || n.k === 'map')) {
    if (n.atomic) out.push(path);
    // Only declared fields are descended (a map's values are not), as FindField.
    if (n.k === 'struct')
      for (const k in v) if (Object.hasOwn(n.fields, k)) findAtomics(t, n.fields[k] as Schema, v[k], `${path}.${k}`, out);
  } else if (Array.isArray(v) && n.k === 'list') {
    if (n.rel === 'atomic') out.push(path);
    v.forEach((x, i) => {
      findAtomics(t, n.elem, x, `${path}[${i}]`, out);
    });
  }
}

/**
 * `live` with `patch` merged in (a new object; `live` is not changed). `defName` is the kind's
 * schema (absent or unknown: the shapes are deduced from the values). Throws an Error with the
 * reference's message when the patch sets an atomic container or its lists cannot be keyed.
 */
export function mergeApplyConfiguration(schemas: SchemaSet, defName: string | undefined, live: Obj, patch: JsonObject): Obj {
  const t = typerFor(schemas);
  const root: Schema = defName && schemas.get(defName) ? t.root(defName) : ANY;
  const atomics: string[] = [];
  findAtomics(t, root, patch, '', atomics);
  if (atomics.length > 0)
    throw new Error(`invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  try {
    return merge(t, root, live, patch) as Obj;
  } catch (e) {
    throw new Error(`failed to merge patch: ${(e as Error).message}`);
  }
}
