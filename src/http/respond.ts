/**
 * Building responses: encodings (JSON, YAML), pretty printing, Warning headers, gzip, and the one
 * place Status errors become HTTP responses.
 */
import YAML from 'yaml';
import { isObject, type Obj } from '../api/meta';
import { internal, StatusError } from '../api/status';
import { stringifyObject } from '../codec/stringify';
import { storageStatus } from '../registry/errors';

/** Compress only responses at least this large, as the reference (defaultGzipThresholdBytes). */
export const GZIP_THRESHOLD = 128 * 1024;

export interface ReplyOptions {
  status?: number;
  pretty?: boolean;
  yaml?: boolean;
  gzip?: boolean;
  warnings?: string[];
  headers?: Record<string, string>;
  /** Media type parameters of a JSON answer in another shape (`;as=Table;v=v1;g=meta.k8s.io`). */
  mediaParams?: string;
}

/** Header pairs (a plain array is much cheaper for Response than a Headers object). */
export function headersFor(contentType: string, o: ReplyOptions): [string, string][] {
  const h: [string, string][] = [
    ['Content-Type', contentType],
    ['Cache-Control', 'no-cache, private'],
  ];
  // One Warning field per warning. Bun.serve joins fields of one name into one line
  // (`299 - "a", 299 - "b"`, the list form RFC 9110 §5.3 makes equivalent) and refuses CR/LF in
  // a value, so clients see one header with each warning as a list element; client-go, kubectl
  // and the Python client split it as they split separate fields.
  if (o.warnings) for (const w of o.warnings) h.push(['Warning', `299 - ${JSON.stringify(w)}`]);
  if (o.headers) for (const k in o.headers) h.push([k, o.headers[k] as string]);
  return h;
}

/**
 * The common case (no warnings, no extra headers, no gzip): one Headers object per content type,
 * shared by every response (Response copies it; building headers from pairs per response cost
 * about twice as much).
 */
const plainHeaders = new Map<string, Headers>();

function finish(body: string | Uint8Array<ArrayBuffer>, contentType: string, o: ReplyOptions): Response {
  if (!o.warnings?.length && !o.headers && !(o.gzip && body.length >= GZIP_THRESHOLD)) {
    let shared = plainHeaders.get(contentType);
    if (!shared) {
      shared = new Headers(headersFor(contentType, {}));
      plainHeaders.set(contentType, shared);
    }
    return new Response(body, { status: o.status ?? 200, headers: shared });
  }
  const h = headersFor(contentType, o);
  if (o.gzip && body.length >= GZIP_THRESHOLD) {
    h.push(['Content-Encoding', 'gzip'], ['Vary', 'Accept-Encoding']);
    // Level 1, as the reference's gzip writer (defaultGzipContentEncodingLevel).
    return new Response(Bun.gzipSync(body, { level: 1 }), { status: o.status ?? 200, headers: h });
  }
  return new Response(body, { status: o.status ?? 200, headers: h });
}

/** An object (or list, Status, discovery document) in the chosen encoding. */
export function reply(obj: unknown, o: ReplyOptions = {}): Response {
  // YAML 1.1 scalar rules, as the reference's go-yaml: strings such as "on", "yes", "y" or an
  // RFC 3339 time are quoted, so YAML 1.1 readers (kubectl, client-go) keep them strings.
  // Objects sharing a value (interned managedFields) are written out in full: no anchors/aliases.
  if (o.yaml) return finish(YAML.stringify(obj, { version: '1.1', aliasDuplicateObjects: false }), 'application/yaml', o);
  const contentType = o.mediaParams ? `application/json${o.mediaParams}` : 'application/json';
  const text = o.pretty ? `${JSON.stringify(obj, null, 2)}\n` : isObject(obj) ? stringifyObject(obj as Obj) : JSON.stringify(obj);
  return finish(text, contentType, o);
}

/** Binary bodies (protobuf). */
export function replyBytes(body: Uint8Array, contentType: string, o: ReplyOptions = {}): Response {
  return finish(body as Uint8Array<ArrayBuffer>, contentType, o);
}

/** Pre-encoded JSON text (stored objects served without parsing). */
export function replyJsonText(text: string, o: ReplyOptions = {}): Response {
  if (o.pretty || o.yaml) return reply(JSON.parse(text), o);
  return finish(text, 'application/json', o);
}

/** Plain text (health checks, metrics). */
export function replyText(text: string, status = 200, contentType = 'text/plain; charset=utf-8'): Response {
  return new Response(text, { status, headers: { 'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff' } });
}

/** The only place errors become responses: a StatusError as its Status, anything else a logged 500. */
export function replyError(e: unknown, o: ReplyOptions = {}, log: (msg: string) => void = console.error): Response {
  let err: StatusError;
  const stored = storageStatus(e);
  if (e instanceof StatusError) err = e;
  else if (stored) err = stored;
  else {
    log(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    err = internal(e instanceof Error ? e.message : String(e));
  }
  return reply(err.body(), { ...o, status: err.code, headers: { ...o.headers, ...err.headers } });
}
