/**
 * Decode errors worded as the reference's (clients and kubectl's tests match these texts): a body
 * that is JSON but not an object (transformDecodeError), and a strategic merge patch whose result
 * cannot be converted to the typed object (applyPatchToObject's converter errors).
 */
import { badRequest, invalid, type StatusError } from '../api/status';
import { invalidValue } from '../api/validation';
import { goFormat } from './patch/json';

/** Go's name of the struct the reference first decodes a body into (to find its kind). */
const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** A JSON value's type as Go's decoder names it in its errors. */
export const goJsonType = (v: unknown): string => (Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v);

/**
 * A body that is JSON but not an object (an array, a string, a number, a boolean), answered as
 * the reference's transformDecodeError: the kind expected, the decoder's error, and the body in
 * hex (at most 30 bytes).
 */
export function unrecognized(kind: string, body: unknown): StatusError {
  const type = goJsonType(body);
  const bytes = Buffer.from(JSON.stringify(body) ?? '');
  const summary = bytes.length > 30 ? `${bytes.subarray(0, 30).toString('hex')} ...` : bytes.toString('hex');
  return badRequest(
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${type} into Go value of type ${TYPE_META_STRUCT} (${summary})`,
  );
}

/**
 * The reference's unstructured converter's error for a value of JSON type `got` where the typed
 * object has a map, a slice or a struct (`cannot restore map from string`); undefined elsewhere.
 */
export function restoreError(expected: string, got: string): string | undefined {
  const from = got === 'array' ? 'slice' : got === 'object' ? 'map' : got === 'number' ? 'int64' : got;
  if (expected.startsWith('map')) return `cannot restore map from ${from}`;
  if (expected === 'array') return `cannot restore slice from ${from}`;
  if (expected === 'object') return `cannot restore struct from: ${from}`;
  return undefined;
}

/** The 422 of a strategic merge patch whose result the converter refuses (on the field `patch`). */
export function smpConversionError(patch: unknown, why: string): StatusError {
  return invalid('', '', '', [invalidValue('patch', goFormat(patch), why)]);
}
