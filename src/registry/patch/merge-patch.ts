/**
 * JSON Merge Patch (RFC 7386, `application/merge-patch+json`).
 *
 * `applyMergePatch` is the RFC's algorithm: an object patch merges member by member (null deletes,
 * objects recurse, anything else replaces), any other patch replaces the target. For a PATCH
 * request the reference first requires an object (see `checkMergePatchDocument`).
 *
 * The reference's library (evanphx/json-patch MergePatch) also drops null members of objects
 * nested inside arrays that it inserts; the RFC keeps arrays verbatim and so do we. The schema pass
 * that follows removes null struct fields anyway.
 */
import { PatchError } from './errors';
import { cloneJson, getOwn, goJsonType, hasOwn, isObject, type JsonObject, setOwn } from './json';
import type { FieldValidation } from './json-patch';

/** Merges `patch` into `doc` (RFC 7386). Neither input is modified; the result shares no structure with them. */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  return mergeInto(isObject(doc) ? (cloneJson(doc) as JsonObject) : {}, patch);
}

/** `target` is owned (mutated); `patch` is read only. */
function mergeInto(target: JsonObject, patch: JsonObject): JsonObject {
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === null) {
      if (hasOwn(target, k)) delete target[k];
    } else if (isObject(v)) {
      const cur = getOwn(target, k);
      setOwn(target, k, mergeInto(isObject(cur) ? cur : {}, v));
    } else {
      setOwn(target, k, cloneJson(v));
    }
  }
  return target;
}

/**
 * Throws what the reference answers for a merge patch body that is not a JSON object (400): with
 * fieldValidation Warn (the default) or Strict the handler decodes it strictly into a map first
 * (`error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}`);
 * `null` passes that step and the library then refuses it (`Invalid JSON Patch`). With Ignore,
 * scalars give `Invalid JSON Patch` and an array becomes the new object, which then fails to decode
 * (not handled here: an array passes).
 */
export function checkMergePatchDocument(patch: unknown, fieldValidation: FieldValidation = 'Warn'): void {
  if (isObject(patch)) return;
  if (patch !== null && fieldValidation !== 'Ignore') {
    throw new PatchError(
      'invalid',
      `error decoding patch: json: cannot unmarshal ${goJsonType(patch)} into Go value of type map[string]interface {}`,
    );
  }
  if (Array.isArray(patch)) return;
  throw new PatchError('invalid', 'Invalid JSON Patch');
}
