/**
 * Decode errors worded as the reference's (clients and kubectl's tests match these texts): a body
 * that is JSON but not an object (transformDecodeError), and a strategic merge patch whose result
 * cannot be converted to the typed object (applyPatchToObject's converter errors).
 */

import { svcApiVersion } from '../api/brand';
import { isObject } from '../api/meta';
import { badRequest, invalid, type StatusError } from '../api/status';
import { invalidValue } from '../api/validation';
import { summarizeBody } from '../codec/go-json-syntax';
import type { BodySyntaxError } from '../codec/json-media';
import type { SchemaSet, TypeErrorInfo } from '../schema/engine';
import type { FieldValidation } from './options';
import { goFormat } from './patch/json';

/** Go's name of the struct the reference first decodes a body into (to find its kind). */
const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** A JSON value's type as Go's decoder names it in its errors. */
export const goJsonType = (v: unknown): string => (Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v);

/**
 * A body that is JSON but not an object (an array, a string, a number, a boolean), answered as
 * the reference's transformDecodeError: the kind expected, the decoder's error, and the body as
 * sent (`text`; else as JSON) in hex (at most 30 bytes).
 */
export function unrecognized(kind: string, body: unknown, text?: string): StatusError {
  const type = goJsonType(body);
  const summary = summarizeBody(text ?? JSON.stringify(body) ?? '');
  return badRequest(
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${type} into Go value of type ${TYPE_META_STRUCT} (${summary})`,
  );
}

/** Go's numeric kinds among the types goTypeOf names. */
const GO_NUMBERS = new Set(['int32', 'int64', 'float64']);

/**
 * The reference's unstructured converter's error (FromUnstructured, what a strategic merge
 * patch's result goes through) for a value of JSON type `got` where the typed object has a map,
 * a slice, a struct (`cannot restore map from string`) or, given its Go type, a scalar
 * (`cannot convert int64 to string`, `unrecognized type: int32`); undefined elsewhere.
 */
export function restoreError(expected: string, got: string, t?: TypeErrorInfo): string | undefined {
  const integral = t?.number !== undefined && Number.isInteger(t.number);
  const from = got === 'array' ? 'slice' : got === 'object' ? 'map' : got === 'number' ? (t && !integral ? 'float64' : 'int64') : got;
  if (expected.startsWith('map')) return `cannot restore map from ${from}`;
  if (expected === 'array') return `cannot restore slice from ${from}`;
  if (expected === 'object') return `cannot restore struct from: ${from}`;
  const dt = t?.goType;
  if (dt === undefined || !(dt === 'string' || dt === 'bool' || GO_NUMBERS.has(dt))) return undefined;
  // fromUnstructured's simple types: numbers convert among themselves (a float only when
  // integral), an int64 is ConvertibleTo a string but refused, anything else is unrecognized.
  if (from === 'int64' && dt === 'string') return 'cannot convert int64 to string';
  if (from === 'int64' && GO_NUMBERS.has(dt)) return undefined;
  if (from === 'float64' && GO_NUMBERS.has(dt) && dt !== 'float64') return `cannot convert float64 to ${dt}`;
  return `unrecognized type: ${dt}`;
}

/** The 422 of a strategic merge patch whose result the converter refuses (on the field `patch`). */
export function smpConversionError(patch: unknown, why: string): StatusError {
  return invalid('', '', '', [invalidValue('patch', goFormat(patch), why)]);
}

/**
 * A create or update body that does not parse, as the reference's transformDecodeError words it
 * when the decoder found no kind: the kind expected, the serializer's error, and the body (text
 * when it starts with `{`, else hex; at most 30 bytes).
 */
export function unrecognizedBody(kind: string, e: BodySyntaxError): StatusError {
  return badRequest(`the object provided is unrecognized (must be of type ${kind}): ${e.message} (${summarizeBody(e.raw)})`);
}

/**
 * A patch body that does not parse, as the reference's patch handler words it: JSON and merge
 * patches are first decoded strictly (`error decoding patch: ...`, unless fieldValidation=Ignore,
 * where the patch library's own error or `Invalid JSON Patch` answers), a strategic merge patch
 * answers the decoder's error alone, an apply patch `error decoding YAML: ...`.
 */
export function patchSyntaxError(type: string, validation: FieldValidation, e: BodySyntaxError): StatusError {
  if (type === 'apply-patch' || type === 'apply-patch-cbor') {
    return badRequest(
      `error decoding YAML: error converting YAML to JSON: ${e.format === 'yaml' ? e.parseError : `yaml: ${e.parseError}`}`,
    );
  }
  if (type === 'strategic-merge-patch') return badRequest(e.parseError);
  if (validation !== 'Ignore') return badRequest(`error decoding patch: ${e.parseError}`);
  return badRequest(type === 'merge-patch' ? 'Invalid JSON Patch' : e.parseError);
}

/** The name of the reference's scheme every built-in kind is registered in, as its errors print it. */
const LEGACY_SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/** The Go package of a group's internal types (core for the legacy group, else its first label). */
const internalPackage = (group: string): string => (group === '' ? 'core' : (group.split('.')[0] ?? group));

/**
 * A body whose apiVersion/kind is not the kind the URL names (`want`, of `wantKind` in internal
 * package `pkg`), worded as the reference's decoder fails on it: a kind its scheme does not know
 * in that version (`no kind "Foo" is registered for version "v1" in scheme ...`), or a known kind
 * that does not convert to the URL's (`converting (v1.Pod) to (core.Namespace): unknown
 * conversion`), both through transformDecodeError; another version of the same kind decodes
 * there and is refused by the API version check. Undefined when apiVersion and kind are the URL's.
 */
export function typeMetaMismatch(
  want: { apiVersion: string; kind: string; pkg: string },
  apiVersion: string,
  kind: string,
  schemas: SchemaSet,
): string | undefined {
  if (svcApiVersion(apiVersion) === want.apiVersion && kind === want.kind) return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : svcApiVersion(apiVersion).slice(0, svcApiVersion(apiVersion).indexOf('/'));
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const def = schemas.get(`io.svc.api.${internalPackage(group)}.${version}.${kind}`);
  const registered = def?.type === 'object' && def.properties?.apiVersion !== undefined && def.properties?.kind !== undefined;
  if (registered && kind === want.kind) {
    return `the API version in the data (${apiVersion}) does not match the expected API version (${want.apiVersion})`;
  }
  const why = registered
    ? `converting (${version}.${kind}) to (${want.pkg}.${want.kind}): unknown conversion`
    : `no kind "${kind}" is registered for version "${apiVersion}" in scheme "${LEGACY_SCHEME}"`;
  return `${kind} in version "${version}" cannot be handled as a ${want.kind}: ${why}`;
}

/** Go's UnmarshalTypeError for a type error (`json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string`). */
export function goUnmarshalError(t: TypeErrorInfo): string {
  return `json: cannot unmarshal ${t.goValue ?? t.got} into Go struct field ${t.goField ?? t.field} of type ${t.goType ?? t.expected}`;
}

/** Go's json.Marshal of a decoded JSON value: map keys sorted, `<`, `>` and `&` escaped. */
export function goMarshal(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goMarshal).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${goMarshal(k)}:${goMarshal(v[k])}`)
      .join(',')}}`;
  }
  if (typeof v === 'string')
    return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return JSON.stringify(v) ?? 'null';
}

/**
 * The 422 of a JSON or merge patch whose result does not decode (or decodes with unknown or
 * duplicate fields under fieldValidation=Strict): the field `patch` with the patched document as
 * the patch library wrote it (keys sorted), as the reference's jsonPatcher.
 */
export function patchedJsonError(patched: unknown, why: string): StatusError {
  return invalid('', '', '', [invalidValue('patch', goMarshal(patched), why)]);
}
