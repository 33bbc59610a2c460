/**
 * Issue 34 item 6, the audit: every decode and patch failure of a write (create, update, the four
 * patch types), sent over HTTP, answered with the reference's status code, reason and message
 * (kubernetes/kubernetes endpoints/handlers create.go, update.go, patch.go, rest.go's
 * transformDecodeError; apimachinery's JSON serializer, Go's encoding/json, strategicpatch,
 * the field manager). Each case names where its text comes from; a message that embeds a whole
 * object (uid, timestamps) is checked by its start and end.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });

/** The Status fields checked. */
interface StatusBody {
  kind: string;
  status: string;
  code: number;
  reason?: string;
  message: string;
  details?: { causes?: unknown[] };
}

const NS = '/api/v1/namespaces';
const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const J = 'application/json';
const JP = 'application/json-patch+json';
const MP = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const AP = 'application/apply-patch+yaml';
/** The reference's body summary in transformDecodeError: hex unless the body starts with `{`. */
const hex = (s: string) => Buffer.from(s).toString('hex');
const unrecognized = (kind: string, why: string, summary: string) =>
  `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; json parse error: ${why} (${summary})`;
/** Go's name of the struct the reference's decoder first reads a body into (to find its kind). */
const TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
const SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';
const GENERIC_422 = 'the server rejected our request due to an error in our request';
const cm = (extra: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t"}${extra}}`;
const applyCm = (lines: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n${lines}`;

interface Case {
  /** What is wrong, and where the reference's text comes from. */
  name: string;
  method: string;
  path: string;
  type: string;
  body: string;
  code: number;
  /** Omitted: the reference's reason-less 500 (StatusReasonUnknown). */
  reason?: string;
  /** The exact message, or its start (`prefix`) where the reference's embeds a whole object. */
  message?: string;
  prefix?: string;
  suffix?: string;
}

const CASES: Case[] = [
  // create/update bodies that do not parse: json.go's Interpret (Go's scanner), then transformDecodeError.
  {
    name: 'JSON cut short',
    method: 'POST',
    path: NS,
    type: J,
    body: '{',
    code: 400,
    message: unrecognized('Namespace', 'unexpected end of JSON input', '{'),
  },
  {
    name: 'empty body',
    method: 'POST',
    path: CM,
    type: J,
    body: '',
    code: 400,
    message: unrecognized('ConfigMap', 'unexpected end of JSON input', '<empty>'),
  },
  {
    name: 'not JSON',
    method: 'POST',
    path: NS,
    type: J,
    body: 'hello',
    code: 400,
    message: unrecognized('Namespace', "invalid character 'h' looking for beginning of value", hex('hello')),
  },
  {
    name: 'trailing comma',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":1,}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '}' looking for beginning of object key string", '{"a":1,}'),
  },
  {
    name: 'missing colon',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a" 1}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '1' after object key", '{"a" 1}'),
  },
  {
    name: 'missing comma',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":1 "b":2}',
    code: 400,
    message: unrecognized('ConfigMap', `invalid character '"' after object key:value pair`, '{"a":1 "b":2}'),
  },
  {
    name: 'array element',
    method: 'POST',
    path: CM,
    type: J,
    body: '[1 2]',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '2' after array element", hex('[1 2]')),
  },
  {
    name: 'after the value',
    method: 'POST',
    path: CM,
    type: J,
    body: '{} x',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character 'x' after top-level value", '{} x'),
  },
  {
    name: 'bad literal',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":tru}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '}' in literal true (expecting 'e')", '{"a":tru}'),
  },
  {
    name: 'bad escape',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":"\\q"}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character 'q' in string escape code", '{"a":"\\q"}'),
  },
  {
    name: 'bad number',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":1.}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '}' after decimal point in numeric literal", '{"a":1.}'),
  },
  {
    name: 'control character',
    method: 'POST',
    path: CM,
    type: J,
    body: '{"a":"\n"}',
    code: 400,
    message: unrecognized('ConfigMap', "invalid character '\\n' in string literal", '{"a":"\n"}'),
  },
  {
    name: 'long body summarized (30 bytes)',
    method: 'POST',
    path: CM,
    type: J,
    body: `{"metadata":{"name":"a-long-name-here"}`,
    code: 400,
    message: unrecognized('ConfigMap', 'unexpected end of JSON input', '{"metadata":{"name":"a-long-na ...'),
  },
  {
    name: 'update cut short',
    method: 'PUT',
    path: `${NS}/default`,
    type: J,
    body: '{"kind":',
    code: 400,
    message: unrecognized('Namespace', 'unexpected end of JSON input', '{"kind":'),
  },
  // YAML: the YAML serializer's YAMLToJSON error (go-yaml's words), then transformDecodeError.
  {
    name: 'YAML nested mapping',
    method: 'POST',
    path: CM,
    type: 'application/yaml',
    body: 'a: b: c',
    code: 400,
    message: `the object provided is unrecognized (must be of type ConfigMap): error converting YAML to JSON: yaml: line 1: mapping values are not allowed in this context (${hex('a: b: c')})`,
  },
  {
    name: 'YAML tab',
    method: 'POST',
    path: CM,
    type: 'application/yaml',
    body: 'a: b\n\tc: d',
    code: 400,
    message: `the object provided is unrecognized (must be of type ConfigMap): error converting YAML to JSON: yaml: line 2: found character that cannot start any token (${hex('a: b\n\tc: d')})`,
  },
  {
    name: 'YAML alias without its anchor',
    method: 'POST',
    path: CM,
    type: 'application/yaml',
    body: 'a: *x',
    code: 400,
    message: `the object provided is unrecognized (must be of type ConfigMap): error converting YAML to JSON: yaml: unknown anchor 'x' referenced (${hex('a: *x')})`,
  },
  // JSON that is no object: the decoder's error into its TypeMeta struct, the body quoted as sent.
  {
    name: 'a list, spaced',
    method: 'POST',
    path: CM,
    type: J,
    body: '[ 1 ]',
    code: 400,
    message: unrecognized('ConfigMap', `json: cannot unmarshal array into Go value of type ${TYPE_META}`, hex('[ 1 ]')),
  },
  {
    name: 'a YAML list',
    method: 'POST',
    path: CM,
    type: 'application/yaml',
    body: '- a',
    code: 400,
    message: unrecognized('ConfigMap', `json: cannot unmarshal array into Go value of type ${TYPE_META}`, hex('- a')),
  },
  // Protobuf without the envelope's prefix: the protobuf serializer's error, then transformDecodeError.
  {
    name: 'protobuf without its prefix',
    method: 'POST',
    path: CM,
    type: 'application/vnd.kubernetes.protobuf',
    body: 'garbage',
    code: 400,
    message: `the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (${hex('garbage')})`,
  },
  // Another kind or version in the body: the decoder creates that kind (or cannot) and converts.
  {
    name: 'another kind',
    method: 'POST',
    path: NS,
    type: J,
    body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}',
    code: 400,
    message: 'Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): unknown conversion',
  },
  {
    name: "another group's kind",
    method: 'POST',
    path: CM,
    type: J,
    body: '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}',
    code: 400,
    message:
      'Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion',
  },
  {
    name: 'an unknown kind',
    method: 'POST',
    path: NS,
    type: J,
    body: '{"apiVersion":"v1","kind":"pod","metadata":{"name":"x"}}',
    code: 400,
    message: `pod in version "v1" cannot be handled as a Namespace: no kind "pod" is registered for version "v1" in scheme "${SCHEME}"`,
  },
  {
    name: 'an unknown version',
    method: 'POST',
    path: NS,
    type: J,
    body: '{"apiVersion":"v2","kind":"Namespace","metadata":{"name":"x"}}',
    code: 400,
    message: `Namespace in version "v2" cannot be handled as a Namespace: no kind "Namespace" is registered for version "v2" in scheme "${SCHEME}"`,
  },
  {
    name: 'another version of the kind',
    method: 'POST',
    path: '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
    type: J,
    body: '{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"x"}}',
    code: 400,
    message: 'the API version in the data (autoscaling/v2) does not match the expected API version (autoscaling/v1)',
  },
  {
    name: 'update with another kind',
    method: 'PUT',
    path: `${NS}/default`,
    type: J,
    body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"default"}}',
    code: 400,
    message: 'Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): unknown conversion',
  },
  // Type errors: Go's UnmarshalTypeError (innermost struct, struct fields from the top, no map keys).
  {
    name: 'a string field',
    method: 'POST',
    path: NS,
    type: J,
    body: '{"metadata":{"name":1}}',
    code: 400,
    message:
      'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string',
  },
  {
    name: 'a map value',
    method: 'POST',
    path: CM,
    type: J,
    body: cm(',"data":{"x":1}'),
    code: 400,
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
  },
  {
    name: 'a map',
    method: 'POST',
    path: CM,
    type: J,
    body: cm(',"data":"s"'),
    code: 400,
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string',
  },
  {
    name: 'a field in a list item',
    method: 'POST',
    path: DEP,
    type: J,
    body: '{"metadata":{"name":"t"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":5}]}}}}',
    code: 400,
    message:
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string',
  },
  {
    name: 'a list',
    method: 'POST',
    path: DEP,
    type: J,
    body: '{"metadata":{"name":"t"},"spec":{"template":{"spec":{"containers":"c"}}}}',
    code: 400,
    message:
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container',
  },
  {
    name: 'an int32',
    method: 'POST',
    path: DEP,
    type: J,
    body: '{"metadata":{"name":"t"},"spec":{"replicas":1.5}}',
    code: 400,
    message:
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
  },
  // fieldValidation=Strict: create.go's transformDecodeError of the strict decoding error.
  {
    name: 'strict: unknown and duplicate fields',
    method: 'POST',
    path: `${CM}?fieldValidation=Strict`,
    type: J,
    body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","name":"s"},"foo":1,"data":{"a":"b"}}',
    code: 400,
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", unknown field "foo"',
  },
  // A YAML body's duplicate keys: the YAML serializer's strict YAMLToJSON error, after the decoder's.
  {
    name: 'strict: YAML duplicate keys',
    method: 'POST',
    path: `${CM}?fieldValidation=Strict`,
    type: 'application/yaml',
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  name: y\ndata:\n  a: b\n  a: c\n',
    code: 400,
    message:
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 8: key "a" already set in map',
  },
  // Options: ValidateCreateOptions / ValidatePatchOptions → 422 Invalid on the options kind.
  {
    name: 'fieldValidation value',
    method: 'POST',
    path: `${CM}?fieldValidation=Nope`,
    type: J,
    body: cm(''),
    code: 422,
    reason: 'Invalid',
    message:
      'CreateOptions.meta.svc.io "" is invalid: fieldValidation: Unsupported value: "Nope": supported values: "", "Ignore", "Strict", "Warn"',
  },
  {
    name: 'force without apply',
    method: 'PATCH',
    path: `${NS}/default?force=true`,
    type: MP,
    body: '{}',
    code: 422,
    reason: 'Invalid',
    message: 'PatchOptions.meta.svc.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
  },
  // Patch bodies that do not parse (patch.go): strict pre-decode for JSON and merge patches, the bare error for SMP.
  {
    name: 'JSON patch cut short',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '[',
    code: 400,
    message: 'error decoding patch: unexpected end of JSON input',
  },
  {
    name: 'JSON patch not a list',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '{}',
    code: 400,
    message: 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
  },
  {
    name: 'merge patch cut short',
    method: 'PATCH',
    path: `${NS}/default`,
    type: MP,
    body: '{"a":',
    code: 400,
    message: 'error decoding patch: unexpected end of JSON input',
  },
  {
    name: 'merge patch cut short, Ignore',
    method: 'PATCH',
    path: `${NS}/default?fieldValidation=Ignore`,
    type: MP,
    body: '{"a":',
    code: 400,
    message: 'Invalid JSON Patch',
  },
  {
    name: 'merge patch not an object',
    method: 'PATCH',
    path: `${NS}/default`,
    type: MP,
    body: '[]',
    code: 400,
    message: 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}',
  },
  {
    name: 'SMP cut short',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '{',
    code: 400,
    message: 'unexpected end of JSON input',
  },
  {
    name: 'SMP not an object',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '[]',
    code: 400,
    message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
  },
  // JSON patch operations that fail: NewGenericServerResponse(422) drops the library's text.
  {
    name: 'JSON patch unknown op',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '[{"op":"frob","path":"/a"}]',
    code: 422,
    reason: 'Invalid',
    message: GENERIC_422,
  },
  {
    name: 'JSON patch missing path',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '[{"op":"remove","path":"/metadata/nope"}]',
    code: 422,
    reason: 'Invalid',
    message: GENERIC_422,
  },
  {
    name: 'JSON patch test failed',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '[{"op":"test","path":"/metadata/name","value":"x"}]',
    code: 422,
    reason: 'Invalid',
    message: GENERIC_422,
  },
  {
    name: 'JSON patch bad index',
    method: 'PATCH',
    path: `${NS}/default`,
    type: JP,
    body: '[{"op":"add","path":"/spec/finalizers/9","value":"x"}]',
    code: 422,
    reason: 'Invalid',
    message: GENERIC_422,
  },
  // A JSON or merge patch whose result does not decode: 422 on `patch` showing the patched JSON (keys
  // sorted, as the patch library writes it); its middle is the whole object (uid, times): prefix and suffix.
  {
    name: 'merge patch result of the wrong type',
    method: 'PATCH',
    path: `${NS}/default`,
    type: MP,
    body: '{"metadata":{"labels":"x"}}',
    code: 422,
    reason: 'Invalid',
    prefix: ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Namespace\\",\\"metadata\\":{',
    suffix: '": json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
  },
  {
    name: 'JSON patch result with an unknown field, Strict',
    method: 'PATCH',
    path: `${NS}/default?fieldValidation=Strict`,
    type: JP,
    body: '[{"op":"add","path":"/foo","value":1}]',
    code: 422,
    reason: 'Invalid',
    prefix: ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"foo\\":1,\\"kind\\":\\"Namespace\\",',
    suffix: '": strict decoding error: unknown field "foo"',
  },
  // Strategic merge patch: the patch map in Go's %v; the library's errors (interpretStrategicMergePatchError).
  {
    name: 'SMP unknown field, Strict',
    method: 'PATCH',
    path: `${NS}/default?fieldValidation=Strict`,
    type: SMP,
    body: '{"foo":1}',
    code: 422,
    reason: 'Invalid',
    message: ' "" is invalid: patch: Invalid value: "map[foo:1]": strict decoding error: unknown field "foo"',
  },
  {
    name: 'SMP unknown $patch',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '{"metadata":{"$patch":"frob"}}',
    code: 500,
    message: 'unknown patch type: frob in map: map[$patch:frob]',
  },
  {
    name: 'SMP list item without its merge key',
    method: 'PATCH',
    path: `${DEP}/d`,
    type: SMP,
    body: '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}',
    code: 500,
    message: 'map: map[image:x] does not contain declared merge key: name',
  },
  {
    name: 'SMP $retainKeys not a list',
    method: 'PATCH',
    path: `${DEP}/d`,
    type: SMP,
    body: '{"spec":{"strategy":{"$retainKeys":"x"}}}',
    code: 400,
    message: 'invalid patch format of retainKeys',
  },
  {
    name: 'SMP field outside $retainKeys',
    method: 'PATCH',
    path: `${DEP}/d`,
    type: SMP,
    body: '{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{"maxSurge":1}}}}',
    code: 400,
    message: 'invalid patch format of retainKeys',
  },
  {
    name: 'SMP list made a map',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '{"spec":{"finalizers":{"a":1}}}',
    code: 422,
    reason: 'Invalid',
    message: ' "" is invalid: patch: Invalid value: "map[spec:map[finalizers:map[a:1]]]": cannot restore slice from map',
  },
  // The converter's simple types (fromUnstructured): unrecognized, or a refused conversion.
  {
    name: 'SMP string field made a map',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '{"metadata":{"generateName":{"a":1}}}',
    code: 422,
    reason: 'Invalid',
    message: ' "" is invalid: patch: Invalid value: "map[metadata:map[generateName:map[a:1]]]": unrecognized type: string',
  },
  {
    name: 'SMP string field made a number',
    method: 'PATCH',
    path: `${NS}/default`,
    type: SMP,
    body: '{"metadata":{"generateName":5}}',
    code: 422,
    reason: 'Invalid',
    message: ' "" is invalid: patch: Invalid value: "map[metadata:map[generateName:5]]": cannot convert int64 to string',
  },
  {
    name: 'SMP int32 made a fraction',
    method: 'PATCH',
    path: `${DEP}/d`,
    type: SMP,
    body: '{"spec":{"replicas":1.5}}',
    code: 422,
    reason: 'Invalid',
    message: ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:1.5]]": cannot convert float64 to int32',
  },
  // Server-side apply (patch.go applyPatcher, the field manager's versionCheckManager).
  {
    name: 'apply without fieldManager (400: issue 5)',
    method: 'PATCH',
    path: `${CM}/applied`,
    type: AP,
    body: applyCm(''),
    code: 400,
    message: 'PatchOptions.meta.svc.io "" is invalid: fieldManager: Required value: is required for apply patch',
  },
  {
    name: 'apply bad YAML',
    method: 'PATCH',
    path: `${CM}/applied?fieldManager=m`,
    type: AP,
    body: 'a: b: c',
    code: 400,
    message: 'error decoding YAML: error converting YAML to JSON: yaml: line 1: mapping values are not allowed in this context',
  },
  {
    name: 'apply a list',
    method: 'PATCH',
    path: `${CM}/applied?fieldManager=m`,
    type: AP,
    body: '- a',
    code: 400,
    message:
      'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}',
  },
  {
    name: 'apply without apiVersion',
    method: 'PATCH',
    path: `${CM}/applied?fieldManager=m`,
    type: AP,
    body: 'kind: ConfigMap\nmetadata:\n  name: applied\n',
    code: 400,
    message: 'invalid object type: /, Kind=ConfigMap',
  },
  {
    name: 'apply of another kind',
    method: 'PATCH',
    path: `${CM}/applied?fieldManager=m`,
    type: AP,
    body: 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: applied\n',
    code: 400,
    message: 'invalid object type: /v1, Kind=Secret',
  },
  {
    name: 'apply of another version',
    method: 'PATCH',
    path: `${DEP}/d?fieldManager=m`,
    type: AP,
    body: 'apiVersion: apps/v2\nkind: Deployment\nmetadata:\n  name: d\n',
    code: 400,
    message: 'invalid object type: apps/v2, Kind=Deployment',
  },
  {
    name: 'apply with duplicate keys, Strict',
    method: 'PATCH',
    path: `${CM}/applied?fieldManager=m&fieldValidation=Strict`,
    type: AP,
    body: applyCm('data:\n  x: "1"\n  x: "2"\n'),
    code: 400,
    message: 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "x" already set in map',
  },
  // Sizes and media types.
  {
    name: 'body too large',
    method: 'POST',
    path: CM,
    type: J,
    body: `{"a":"${'x'.repeat(3 * 1024 * 1024)}"}`,
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: 'Request entity too large: limit is 3145728',
  },
  {
    name: 'patch of an unknown type',
    method: 'PATCH',
    path: `${NS}/default`,
    type: J,
    body: '{}',
    code: 415,
    reason: 'UnsupportedMediaType',
    message:
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
  },
];

describe('decode and patch errors, as the reference answers them', () => {
  test.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    if (c.path.startsWith(DEP) && (await srv.json('GET', `${DEP}/d`)).status === 404) {
      const d = {
        metadata: { name: 'd' },
        spec: {
          selector: { matchLabels: { a: 'd' } },
          template: { metadata: { labels: { a: 'd' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      };
      expect((await srv.json('POST', DEP, d)).status).toBe(201);
    }
    const r = await srv.fetch(c.path, { method: c.method, headers: { 'content-type': c.type }, body: c.body });
    const s = (await r.json()) as StatusBody;
    expect({ code: r.status, kind: s.kind, status: s.status }).toEqual({ code: c.code, kind: 'Status', status: 'Failure' });
    expect(s.code).toBe(c.code);
    // The reference's 415 and 400s carry no details.
    if (c.code === 415 || c.code === 400) expect(s.details).toBeUndefined();
    expect(s.reason).toBe(c.reason ?? (c.code === 400 ? 'BadRequest' : undefined));
    if (c.message !== undefined) expect(s.message).toBe(c.message);
    if (c.prefix !== undefined) expect(s.message).toStartWith(c.prefix);
    if (c.suffix !== undefined) expect(s.message).toEndWith(c.suffix);
  });

  test('nothing was written by any of them', async () => {
    expect((await srv.json('GET', `${CM}/t`)).status).toBe(404);
    expect((await srv.json('GET', `${CM}/s`)).status).toBe(404);
    expect((await srv.json('GET', `${CM}/applied`)).status).toBe(404);
    expect((await srv.json('GET', `${NS}/x`)).status).toBe(404);
  });

  test("apply conflicts: one, several, and with an Update manager (the reference's printManager)", async () => {
    const ap = (manager: string, data: string) =>
      srv.fetch(`${CM}/owned?fieldManager=${manager}`, {
        method: 'PATCH',
        headers: { 'content-type': AP },
        body: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n${data}`,
      });
    expect((await ap('one', '  x: "1"\n  y: "1"\n')).status).toBe(201);
    const one = (await (await ap('two', '  x: "2"\n')).json()) as StatusBody;
    expect(one).toMatchObject({ code: 409, reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "one": .data.x' });
    expect(one.details?.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.data.x' }]);
    const two = (await (await ap('two', '  x: "2"\n  y: "2"\n')).json()) as StatusBody;
    expect(two.message).toBe('Apply failed with 2 conflicts: conflicts with "one":\n- .data.x\n- .data.y');
    // An Update manager is named with the apiVersion it wrote (its time is not part of its identity).
    const put = await srv.json('POST', `${CM}?fieldManager=writer`, { metadata: { name: 'written' }, data: { x: '1' } });
    expect(put.status).toBe(201);
    const r = await srv.fetch(`${CM}/written?fieldManager=two`, {
      method: 'PATCH',
      headers: { 'content-type': AP },
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: written\ndata:\n  x: "2"\n',
    });
    expect(r.status).toBe(409);
    expect(((await r.json()) as StatusBody).message).toBe('Apply failed with 1 conflict: conflict with "writer" using v1: .data.x');
  });
});
