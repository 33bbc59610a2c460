/**
 * Validation shared by every kind: name rules, ObjectMeta (labels, annotations, finalizers,
 * owner references), and the small field-error builders the per-kind rules use. Error texts are
 * the reference's (apimachinery/pkg/util/validation).
 */
import type { ObjectMeta } from './meta';

/** A field error, rendered as a Status cause (type, field path, message) as the reference does. */
export interface FieldError {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueDuplicate'
    | 'FieldValueNotFound'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueTypeInvalid'
    | 'InternalError';
  /** Dotted path with indices, as the reference prints it: `spec.containers[0].name`, `metadata.labels[app]`. */
  field: string;
  /** The human detail (without the path prefix). */
  detail: string;
  badValue?: unknown;
  /** The reference's field.OmitValueType{}: the message names no value ("Invalid value: detail"). */
  omitValue?: true;
}

export type NameRule = 'subdomain' | 'label' | 'path-segment';

export const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
export const invalidValue = (field: string, badValue: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  detail,
  badValue,
});
/** field.Invalid(path, field.OmitValueType{}, detail). */
export const invalidOmitted = (field: string, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  detail,
  omitValue: true,
});
export const notSupported = (field: string, badValue: unknown, supported: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  detail: `supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
  badValue,
});
export const forbiddenField = (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail });
export const duplicate = (field: string, badValue: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, detail: '', badValue });
export const notFound = (field: string, badValue: unknown): FieldError => ({ type: 'FieldValueNotFound', field, detail: '', badValue });
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field,
  detail: `must have at most ${max} items`,
  badValue: actual,
});

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QUALIFIED_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** What the checks below return for a valid value: one shared empty list (most values are valid). */
const VALID: readonly string[] = Object.freeze([]);

/** Problems with a DNS-1123 label (empty array: valid). */
export function dns1123Label(v: string): readonly string[] {
  if (v.length <= 63 && DNS1123_LABEL.test(v)) return VALID;
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(v)) out.push(LABEL_MSG);
  return out;
}

export function dns1123Subdomain(v: string): readonly string[] {
  if (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) return VALID;
  const out: string[] = [];
  if (v.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(v)) out.push(SUBDOMAIN_MSG);
  return out;
}

/** The valid qualified names, without building the messages (most keys are valid). */
function isValidQualifiedName(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return v.length <= 63 && QUALIFIED_NAME_PART.test(v);
  const name = v.slice(slash + 1);
  const prefix = v.slice(0, slash);
  return name.length <= 63 && QUALIFIED_NAME_PART.test(name) && prefix.length > 0 && prefix.length <= 253 && DNS1123_SUBDOMAIN.test(prefix);
}

/** A qualified name: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
export function qualifiedName(v: string): readonly string[] {
  if (isValidQualifiedName(v)) return VALID;
  const parts = v.split('/');
  let name = v;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else for (const m of dns1123Subdomain(prefix)) out.push(`prefix part ${m}`);
  } else if (parts.length > 2) {
    return [`a qualified name ${QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > 63) out.push('name part must be no more than 63 characters');
  // The reference checks the pattern even for an empty name part (two messages then).
  if (!QUALIFIED_NAME_PART.test(name)) out.push(`name part ${QUALIFIED_MSG}`);
  return out;
}

export function labelValue(v: string): readonly string[] {
  if (v.length <= 63 && LABEL_VALUE.test(v)) return VALID;
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(v)) out.push(LABEL_VALUE_MSG);
  return out;
}

export function pathSegmentName(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const out: string[] = [];
  for (const c of ['/', '%']) if (v.includes(c)) out.push(`may not contain '${c}'`);
  return out;
}

export function validateName(rule: NameRule, name: string): readonly string[] {
  switch (rule) {
    case 'label':
      return dns1123Label(name);
    case 'subdomain':
      return dns1123Subdomain(name);
    case 'path-segment':
      return pathSegmentName(name);
  }
}

const TOTAL_ANNOTATION_SIZE = 256 * 1024;

/** ValidateAnnotations at `path`: qualified keys (case-insensitive), 256 KiB in all. */
export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of qualifiedName(k.toLowerCase())) errs.push(invalidValue(path, k, m));
    size += k.length + String(v).length;
  }
  if (size > TOTAL_ANNOTATION_SIZE)
    errs.push({ type: 'FieldValueTooLong', field: path, detail: `may not be more than ${TOTAL_ANNOTATION_SIZE} bytes` });
  return errs;
}

/** The generic ObjectMeta rules (ValidateObjectMeta): name, namespace, labels, annotations, finalizers, owners. */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, rule: NameRule): FieldError[] {
  const errs: FieldError[] = [];
  const name = meta.name ?? '';
  if (name === '') {
    errs.push(required('metadata.name', 'name or generateName is required'));
  } else {
    for (const m of validateName(rule, name)) errs.push(invalidValue('metadata.name', name, m));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(required('metadata.namespace'));
    else for (const m of dns1123Label(meta.namespace)) errs.push(invalidValue('metadata.namespace', meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(forbiddenField('metadata.namespace', 'not allowed on this type'));
  }
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    for (const m of qualifiedName(k)) errs.push(invalidValue('metadata.labels', k, m));
    for (const m of labelValue(v)) errs.push(invalidValue(`metadata.labels`, v, m));
  }
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  (meta.finalizers ?? []).forEach((f, i) => {
    for (const m of qualifiedName(f)) errs.push(invalidValue(`metadata.finalizers[${i}]`, f, m));
  });
  (meta.ownerReferences ?? []).forEach((o, i) => {
    const p = `metadata.ownerReferences[${i}]`;
    if (!o.apiVersion) errs.push(invalidValue(`${p}.apiVersion`, o.apiVersion ?? '', 'version must not be empty'));
    if (!o.kind) errs.push(invalidValue(`${p}.kind`, o.kind ?? '', 'kind must not be empty'));
    if (!o.name) errs.push(invalidValue(`${p}.name`, o.name ?? '', 'name must not be empty'));
    if (!o.uid) errs.push(invalidValue(`${p}.uid`, o.uid ?? '', 'uid must not be empty'));
  });
  const controllers = (meta.ownerReferences ?? []).filter((o) => o.controller).length;
  if (controllers > 1)
    errs.push(invalidValue('metadata.ownerReferences', meta.ownerReferences, 'Only one reference can have Controller set to true'));
  return errs;
}

/** A Go `%#v` of a []string, as the reference prints lists in messages: []string{"a", "b"}. */
function goStrings(list: string[]): string {
  return `[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`;
}

/**
 * The update-only ObjectMeta rules (ValidateObjectMetaUpdate) beyond what the registry carries over
 * from the stored object: no new finalizers once the object is being deleted.
 */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (old.deletionTimestamp) {
    const had = new Set(old.finalizers ?? []);
    const extra = [...new Set((meta.finalizers ?? []).filter((f) => !had.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        forbiddenField(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStrings(extra)}`,
        ),
      );
    }
  }
  return errs;
}
