/**
 * Content negotiation: which encoding a response uses (from Accept) and how a request body is
 * read (from Content-Type). Both brand tokens are understood: `svc` as the spec names them and
 * `k8s`/`kubernetes` as unmodified upstream clients (kubectl, client-go) send them; a response
 * echoes the brand the client asked for.
 */
import { notAcceptable, unsupportedMediaType } from '../api/status';
import { CBOR_MEDIA_TYPE } from '../codec/cbor';
import { PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE_UPSTREAM } from '../codec/protobuf';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export type Output =
  | { kind: 'json' }
  | { kind: 'protobuf'; mediaType: string }
  | { kind: 'yaml' }
  | { kind: 'cbor' }
  | { kind: 'table'; group: string; version: string }
  | { kind: 'metadata'; group: string; version: string };

export const SERVED_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

/** Both brands of the protobuf media type (spec 1 "Protobuf envelope"). */
const PROTOBUF_TYPES = new Set([PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE_UPSTREAM]);

export function parseMediaType(s: string): MediaRange | undefined {
  const parts = s.split(';').map((p) => p.trim());
  const [type, subtype] = (parts[0] ?? '').toLowerCase().split('/');
  if (!type || !subtype) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (k === 'q') q = Number(v);
    else params[k] = v;
  }
  return { type, subtype, params, q: Number.isFinite(q) ? q : 0 };
}

/** Media ranges of an Accept header, best first (stable for equal q). */
export function parseAccept(header: string | null): MediaRange[] {
  if (!header) return [];
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const m = parseMediaType(part);
    if (m && m.q > 0) out.push(m);
  }
  return out
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map((x) => x.m);
}

const META_GROUPS = new Set(['meta.svc.io', 'meta.k8s.io']);

const outputCache = new Map<string, Output | Error>();

/**
 * Choose the response encoding. `allowTransform`: Table/metadata conversions make sense here
 * (get/list/watch of resources, not of Status or discovery). `protobuf`: the kind has a protobuf
 * encoding (built-in kinds, not custom resources); otherwise the next acceptable type is used.
 */
export function chooseOutput(accept: string | null, allowTransform: boolean, protobuf = false, cbor = false): Output {
  // Clients send the same few Accept headers over and over: remember the answers.
  const key = `${allowTransform ? 't' : 'f'}${protobuf ? 'p' : 'n'}${cbor ? 'c' : 'n'}${accept ?? ''}`;
  let hit = outputCache.get(key);
  if (hit === undefined) {
    try {
      hit = chooseOutputUncached(accept, allowTransform, protobuf, cbor);
    } catch (e) {
      hit = e as Error;
    }
    if (outputCache.size < 256) outputCache.set(key, hit);
  }
  if (hit instanceof Error) throw hit;
  return hit;
}

function chooseOutputUncached(accept: string | null, allowTransform: boolean, protobuf: boolean, cbor: boolean): Output {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return { kind: 'json' };
  for (const r of ranges) {
    const as = r.params.as;
    if (as !== undefined) {
      if (!allowTransform || r.type !== 'application' || r.subtype !== 'json') continue;
      const g = r.params.g ?? '';
      const v = r.params.v ?? '';
      if (!META_GROUPS.has(g) || v !== 'v1') continue;
      if (as === 'Table') return { kind: 'table', group: g, version: v };
      if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { kind: 'metadata', group: g, version: v };
      continue;
    }
    if (r.type === '*' || (r.type === 'application' && (r.subtype === '*' || r.subtype === 'json'))) return { kind: 'json' };
    if (r.type === 'application' && r.subtype === 'yaml') return { kind: 'yaml' };
    if (protobuf && r.type === 'application' && PROTOBUF_TYPES.has(`application/${r.subtype}`))
      return { kind: 'protobuf', mediaType: `application/${r.subtype}` };
    // CBOR behind its gate (CBORServingAndStorage): otherwise the type is not served at all (406).
    if (cbor && r.type === 'application' && r.subtype === 'cbor') return { kind: 'cbor' };
  }
  throw notAcceptable(cbor ? [...SERVED_TYPES, CBOR_MEDIA_TYPE] : SERVED_TYPES);
}

export type BodyType =
  | 'json'
  | 'yaml'
  | 'protobuf'
  | 'cbor'
  | 'json-patch'
  | 'merge-patch'
  | 'strategic-merge-patch'
  | 'apply-patch'
  | 'apply-patch-cbor';

const BODY_TYPES: Record<string, BodyType> = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  [PROTOBUF_MEDIA_TYPE]: 'protobuf',
  [PROTOBUF_MEDIA_TYPE_UPSTREAM]: 'protobuf',
  'application/json-patch+json': 'json-patch',
  'application/merge-patch+json': 'merge-patch',
  'application/strategic-merge-patch+json': 'strategic-merge-patch',
  'application/apply-patch+yaml': 'apply-patch',
  [CBOR_MEDIA_TYPE]: 'cbor',
  'application/apply-patch+cbor': 'apply-patch-cbor',
};

/** The body type of a request; 415 when unsupported for the verb. */
export function bodyType(contentType: string | null, allowed: readonly BodyType[]): BodyType {
  const m = contentType ? parseMediaType(contentType) : undefined;
  // Like the reference, a body without Content-Type is read as JSON.
  const t = m ? BODY_TYPES[`${m.type}/${m.subtype}`] : 'json';
  if (t === undefined || !allowed.includes(t)) {
    const accepted = Object.entries(BODY_TYPES)
      .filter(([, v]) => allowed.includes(v))
      .map(([k]) => k);
    throw unsupportedMediaType(contentType ?? '', accepted);
  }
  return t;
}
