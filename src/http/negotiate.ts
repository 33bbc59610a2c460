/**
 * Content negotiation, the one place media types are told apart: which codec (src/codec/media.ts)
 * writes a response (from Accept and ?pretty) and which one reads a request body (from
 * Content-Type). Handlers then write through the codec without asking what it is. Both brand
 * tokens are understood: `svc` as the spec names them and `k8s`/`kubernetes` as unmodified
 * upstream clients (kubectl, client-go) send them; a response echoes the brand the client asked
 * for.
 */
import { notAcceptable, unsupportedMediaType } from '../api/status';
import { cborCodec, protobufCodec } from '../codec/binary-media';
import { CBOR_MEDIA_TYPE, type CborCodec } from '../codec/cbor';
import { jsonCodec, yamlCodec } from '../codec/json-media';
import type { MediaCodec } from '../codec/media';
import { PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE_UPSTREAM, type ProtobufCodec } from '../codec/protobuf';
import { metadataCodec, tableCodec } from '../codec/table-media';

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
  // The last call's answer first (a client's loop sends one Accept header over and over): no key
  // built and hashed.
  const l = lastOutput;
  if (l !== undefined && l.accept === accept && l.allowTransform === allowTransform && l.protobuf === protobuf && l.cbor === cbor)
    return l.out;
  const out = chooseOutputMemo(accept, allowTransform, protobuf, cbor);
  lastOutput = { accept, allowTransform, protobuf, cbor, out };
  return out;
}

let lastOutput: { accept: string | null; allowTransform: boolean; protobuf: boolean; cbor: boolean; out: Output } | undefined;

function chooseOutputMemo(accept: string | null, allowTransform: boolean, protobuf: boolean, cbor: boolean): Output {
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

/** `type/subtype` of Content-Type values seen ('' when one does not parse), at most 64. */
const mediaKeys = new Map<string, string>();

function mediaKey(contentType: string): string {
  let key = mediaKeys.get(contentType);
  if (key === undefined) {
    const m = parseMediaType(contentType);
    key = m ? `${m.type}/${m.subtype}` : '';
    if (mediaKeys.size < 64) mediaKeys.set(contentType, key);
  }
  return key;
}

/** The body type of a request; 415 when unsupported for the verb. */
function bodyType(contentType: string | null, allowed: readonly BodyType[]): BodyType {
  const key = contentType ? mediaKey(contentType) : '';
  // Like the reference, a body without Content-Type is read as JSON.
  const t = key !== '' ? BODY_TYPES[key] : 'json';
  if (t === undefined || !allowed.includes(t)) {
    const accepted = Object.entries(BODY_TYPES)
      .filter(([, v]) => allowed.includes(v))
      .map(([k]) => k);
    throw unsupportedMediaType(contentType ?? '', accepted);
  }
  return t;
}

/** What a response may be: transformed (Table, metadata), in protobuf (the kind has a .proto message), in CBOR. */
export interface ResponseOptions {
  transform: boolean;
  protobuf: boolean;
  cbor: boolean;
  /** ?pretty=true: indented JSON. */
  pretty: boolean;
}

/** The body types a request may use beyond the text ones: protobuf, CBOR. */
export interface BodyOptions {
  protobuf: boolean;
  cbor: boolean;
}

export interface NegotiatedBody {
  type: BodyType;
  codec: MediaCodec;
}

const JSON_CODEC = jsonCodec(false);
const PRETTY_JSON_CODEC = jsonCodec(true);
const YAML_CODEC = yamlCodec();

/** The codec reading a body of `type`: the patch types are JSON (apply: YAML, or CBOR). */
function bodyCodec(type: BodyType, protobuf: MediaCodec | undefined, cbor: MediaCodec | undefined): MediaCodec | undefined {
  switch (type) {
    case 'json':
    case 'json-patch':
    case 'merge-patch':
    case 'strategic-merge-patch':
      return JSON_CODEC;
    case 'yaml':
    case 'apply-patch':
      return YAML_CODEC;
    case 'protobuf':
      return protobuf;
    case 'cbor':
    case 'apply-patch-cbor':
      return cbor;
  }
}

/** A request body's type and codec among `allowed` (binary ones only when given); 415 otherwise. */
export function negotiateBody(
  contentType: string | null,
  allowed: readonly BodyType[],
  binary: { protobuf?: MediaCodec; cbor?: MediaCodec } = {},
): NegotiatedBody {
  const served = allowed.filter((t) => bodyCodec(t, binary.protobuf, binary.cbor) !== undefined);
  const type = bodyType(contentType, served);
  return { type, codec: bodyCodec(type, binary.protobuf, binary.cbor) as MediaCodec };
}

/**
 * The server's codecs, chosen per request: the protobuf codec (built-in kinds) and the CBOR one
 * (present with the CBORServingAndStorage gate on).
 */
export class Negotiation {
  private readonly cbor: MediaCodec | undefined;
  /** Codecs by negotiated output: protobuf by media type, Table and metadata by group, version and pretty. */
  private readonly made = new Map<string, MediaCodec>();
  /** The codec of protobuf request bodies (made once). */
  private protobufBody: MediaCodec | undefined;

  constructor(private readonly codecs: { protobuf: ProtobufCodec; cbor?: CborCodec }) {
    this.cbor = codecs.cbor && cborCodec(codecs.cbor);
  }

  /** The codec of a response; 406 NotAcceptable when Accept names none the request may have. */
  response(accept: string | null, o: ResponseOptions): MediaCodec {
    return this.codecOf(chooseOutput(accept, o.transform, o.protobuf, o.cbor && this.cbor !== undefined), o.pretty);
  }

  /** The codec of a response, or undefined when Accept names none (an error then stays JSON). */
  responseOrUndefined(accept: string | null, o: ResponseOptions): MediaCodec | undefined {
    try {
      return this.response(accept, o);
    } catch {
      return undefined;
    }
  }

  /** A request body's type and codec; 415 when its Content-Type is not among `allowed`. */
  body(contentType: string | null, allowed: readonly BodyType[], o: BodyOptions): NegotiatedBody {
    if (o.protobuf && this.protobufBody === undefined)
      this.protobufBody = this.codecOf({ kind: 'protobuf', mediaType: PROTOBUF_MEDIA_TYPE }, false);
    return negotiateBody(contentType, allowed, {
      protobuf: o.protobuf ? this.protobufBody : undefined,
      cbor: o.cbor ? this.cbor : undefined,
    });
  }

  private codecOf(out: Output, pretty: boolean): MediaCodec {
    switch (out.kind) {
      case 'json':
        return pretty ? PRETTY_JSON_CODEC : JSON_CODEC;
      case 'yaml':
        return YAML_CODEC;
      case 'cbor':
        if (!this.cbor) throw new Error('bug: CBOR negotiated without the CBOR codec');
        return this.cbor;
      case 'protobuf':
        return this.memo(`protobuf;${out.mediaType};${pretty}`, () =>
          protobufCodec(this.codecs.protobuf, out.mediaType, pretty ? PRETTY_JSON_CODEC : JSON_CODEC),
        );
      case 'table':
        return this.memo(`table;${out.group};${out.version};${pretty}`, () => tableCodec(out.group, out.version, pretty));
      case 'metadata':
        return this.memo(`metadata;${out.group};${out.version};${pretty}`, () => metadataCodec(out.group, out.version, pretty));
    }
  }

  private memo(key: string, make: () => MediaCodec): MediaCodec {
    let c = this.made.get(key);
    if (c === undefined) {
      c = make();
      this.made.set(key, c);
    }
    return c;
  }
}
