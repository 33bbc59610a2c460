/**
 * The PATCH body types other than server-side apply: JSON patch (RFC 6902), JSON merge patch
 * (RFC 7386) and strategic merge patch. Pure functions over decoded JSON; every failure is a
 * PatchError carrying the reference server's status code and message (`toStatusError()`).
 */
import type { SchemaSet } from '../../schema/engine';
import { hasOwn, isObject } from './json';
import { applyJsonPatch, type FieldValidation } from './json-patch';
import { applyMergePatch, checkMergePatchDocument } from './merge-patch';
import { applyStrategicMergePatch } from './strategic-merge-patch';

export { MAX_JSON_PATCH_OPERATIONS, PatchError, type PatchErrorKind, UNPROCESSABLE_MESSAGE } from './errors';
export { applyJsonPatch, type FieldValidation, type JsonPatchOptions, jsonPatchUnknownFields } from './json-patch';
export { applyMergePatch, checkMergePatchDocument } from './merge-patch';
export { applyStrategicMergePatch } from './strategic-merge-patch';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

export type PatchType = typeof JSON_PATCH | typeof MERGE_PATCH | typeof STRATEGIC_MERGE_PATCH;

export interface ApplyPatchOptions {
  /** The request's fieldValidation (default Warn); changes only the wording of some 400s. */
  fieldValidation?: FieldValidation;
  /** Strategic merge patch: the schemas and the definition of `doc`. */
  schemas?: SchemaSet;
  defName?: string;
}

/**
 * Applies a decoded PATCH body of media type `type` to `doc` (the current object) and returns the
 * patched object; inputs are not modified. A merge patch must be a JSON object, as the reference
 * requires. Throws PatchError.
 */
export function applyPatch(type: PatchType, doc: object, body: unknown, opts: ApplyPatchOptions = {}): unknown {
  switch (type) {
    case JSON_PATCH:
      return applyJsonPatch(doc, body, { fieldValidation: opts.fieldValidation });
    case MERGE_PATCH:
      checkMergePatchDocument(body, opts.fieldValidation);
      return applyMergePatch(doc, body);
    case STRATEGIC_MERGE_PATCH:
      if (!opts.schemas || !opts.defName) throw new Error('strategic merge patch needs schemas and defName');
      return applyStrategicMergePatch(doc, body, opts.schemas, opts.defName);
  }
}

/**
 * Whether a body of `type` leaves metadata.managedFields as they are, whatever the object it is
 * applied to: a merge or strategic merge patch whose `metadata`, if it has one, is an object
 * without `managedFields`, and (strategic) with no directive (`$patch`, `$retainKeys`,
 * `$setElementOrder/...`) there or at its top level, where one could replace or drop metadata.
 * JSON patches answer false (a path or `from` may reach the list through `/metadata`). A
 * caller can then apply the patch to the object with a placeholder in the list's place and put
 * the list itself back into the result, instead of a copy of every entry and FieldsV1 tree.
 */
export function leavesManagedFields(type: PatchType, body: unknown): boolean {
  if (type === JSON_PATCH || !isObject(body)) return false;
  const strategic = type === STRATEGIC_MERGE_PATCH;
  if (strategic && hasDirective(body)) return false;
  if (!hasOwn(body, 'metadata')) return true;
  const m = body.metadata;
  return isObject(m) && !hasOwn(m, 'managedFields') && !(strategic && hasDirective(m));
}

function hasDirective(o: object): boolean {
  for (const k of Object.keys(o)) if (k.startsWith('$')) return true;
  return false;
}
