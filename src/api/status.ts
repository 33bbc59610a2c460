/**
 * API errors as typed data: a StatusError carries the Status body the client gets. Every
 * failure a request can meet becomes one of these constructors, and the HTTP layer renders them in
 * one place; anything else is a 500 InternalError that is logged. Messages follow the reference
 * API server word for word where clients or users match on them.
 */
import type { FieldError } from './validation';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'Timeout'
  | 'InternalError'
  | 'ServiceUnavailable';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** What an error refers to: the resource (plural) and group, as the reference's qualified resource. */
export interface Target {
  group: string;
  resource: string;
}

function qualified(t: Target): string {
  return t.group ? `${t.resource}.${t.group}` : t.resource;
}

export class StatusError extends Error {
  /** Extra response headers (Retry-After). */
  headers?: Record<string, string>;
  /** List metadata of the Status (the reference's ListMeta: a continue token on 410 Expired). */
  listMeta?: { continue?: string };

  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  body(): StatusBody {
    const b: StatusBody = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.listMeta ? { ...this.listMeta } : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
    } as StatusBody;
    // The reference's field order: details before code.
    if (this.details) b.details = this.details;
    b.code = this.code;
    return b;
  }
}

/** Details as the reference serializes them: empty fields are omitted. */
function details(t: Target | undefined, name: string | undefined): StatusDetails | undefined {
  if (!t) return name ? { name } : undefined;
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (t.group) d.group = t.group;
  d.kind = t.resource;
  return d;
}

export const badRequest = (message: string): StatusError => new StatusError(400, 'BadRequest', message);

export const unauthorized = (): StatusError => new StatusError(401, 'Unauthorized', 'Unauthorized');

export function forbidden(t: Target, name: string | undefined, why: string): StatusError {
  const subject = name ? `${qualified(t)} "${name}"` : qualified(t);
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, details(t, name ?? ''));
}

export const notFound = (t: Target, name: string): StatusError =>
  new StatusError(404, 'NotFound', `${qualified(t)} "${name}" not found`, details(t, name));

/** 404 for a path the server does not serve. */
export const pathNotFound = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

export const alreadyExists = (t: Target, name: string): StatusError =>
  new StatusError(409, 'AlreadyExists', `${qualified(t)} "${name}" already exists`, details(t, name));

export const conflict = (t: Target, name: string, why: string): StatusError =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(t)} "${name}": ${why}`, details(t, name));

export const STALE_OBJECT = 'the object has been modified; please apply your changes to the latest version and try again';

/** 410 for a resourceVersion older than the retained history. */
export const resourceExpired = (message: string): StatusError => new StatusError(410, 'Expired', message);

/** 410 for a list whose exact version was compacted (etcd3 store's interpretListError). */
export const LIST_EXPIRED = 'The resourceVersion for the provided list is too old.';

/**
 * 410 for an expired continue token, carrying a fresh token in the Status's list metadata that
 * resumes after the same key at the newest version (CONTINUE_EXPIRED says so).
 */
export function continueExpired(resumeToken: string): StatusError {
  const e = new StatusError(410, 'Expired', CONTINUE_EXPIRED);
  e.listMeta = { continue: resumeToken };
  return e;
}

export const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** 504 for a resourceVersion the server has not reached in time. */
export function tooLargeResourceVersion(requested: number, current: number): StatusError {
  // errors.NewTimeoutError prefixes "Timeout: ".
  const e = new StatusError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
  e.headers = { 'Retry-After': '1' };
  return e;
}

/** Render one field error as the reference's ErrorBody(): "Invalid value: \"x\": detail". */
export function fieldErrorText(e: FieldError): string {
  const bad = e.badValue === undefined ? '' : renderBadValue(e.badValue);
  switch (e.type) {
    case 'FieldValueRequired':
      return e.detail ? `Required value: ${e.detail}` : 'Required value';
    case 'FieldValueInvalid':
      if (e.omitValue) return e.detail ? `Invalid value: ${e.detail}` : 'Invalid value';
      return `Invalid value: ${bad}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${bad}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: ${bad}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueNotFound':
      return `Not found: ${bad}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueForbidden':
      return e.detail ? `Forbidden: ${e.detail}` : 'Forbidden';
    case 'FieldValueTooLong':
      return `Too long: ${e.detail}`;
    case 'FieldValueTooMany':
      return e.badValue === undefined ? `Too many: ${e.detail}` : `Too many: ${bad}: ${e.detail}`;
    case 'FieldValueTypeInvalid':
      return `Invalid value: ${bad}: ${e.detail}`;
    case 'InternalError':
      return `Internal error: ${e.detail}`;
  }
}

/** Validators may attach the Go rendering of a value (`map[string]string{"app":"web"}`) under this symbol. */
export const GO_SYNTAX = Symbol.for('svc.validation.goSyntax');

function renderBadValue(v: unknown): string {
  const go = typeof v === 'object' && v !== null ? (v as Record<symbol, unknown>)[GO_SYNTAX] : undefined;
  if (typeof go === 'string') return go;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  // Go prints a nil bad value as the string "null", quoted like any string.
  if (v === null) return '"null"';
  return JSON.stringify(v);
}

/**
 * 422 Invalid listing one cause per field error, as errors.NewInvalid: the kind qualified with its
 * group and the name always quoted (`Deployment.apps "x" is invalid: ...`, `ConfigMap "" is
 * invalid: ...`); one error alone, several as `[a: ..., b: ...]`.
 */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): StatusError {
  const texts = [...new Set(errs.map((e) => `${e.field}: ${fieldErrorText(e)}`))];
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (group) d.group = group;
  // The reference's StatusDetails omit an empty kind (a patch's 422 on the field `patch` has none).
  if (kind) d.kind = kind;
  d.causes = errs.map((e) => ({ reason: e.type, message: fieldErrorText(e), field: e.field }));
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const message =
    texts.length === 0
      ? `${qualifiedKind} ${JSON.stringify(name)} is invalid`
      : `${qualifiedKind} ${JSON.stringify(name)} is invalid: ${summary}`;
  return new StatusError(422, 'Invalid', message, d);
}

export const methodNotAllowed = (): StatusError =>
  new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});

export const notAcceptable = (accepted: string[]): StatusError =>
  new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);

/** The reference's errUnsupportedMediaType: the accepted types, no details (the type sent is not named). */
export const unsupportedMediaType = (_contentType: string, accepted: string[]): StatusError =>
  new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );

export const tooLarge = (limit: number): StatusError =>
  new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

export function tooManyRequests(retryAfter: number): StatusError {
  const e = new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: retryAfter });
  e.headers = { 'Retry-After': String(retryAfter) };
  return e;
}

export const internal = (message: string): StatusError =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

/** The Success Status returned by deletes of kinds that do not return the object. */
export function success(t: Target, name: string, uid: string): Record<string, unknown> {
  const d: StatusDetails = { name };
  if (t.group) d.group = t.group;
  d.kind = t.resource;
  d.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: d };
}
