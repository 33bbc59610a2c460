/**
 * /openapi/v2 and /openapi/v3, built from the schemas and the kinds.
 *
 * One model drives both documents: the schema set (src/schema) converted back to OpenAPI, and one
 * list of operations per served kind (as the reference's endpoint installer registers them). Every
 * extension is published under both brand tokens: `x-svc-*` as the spec names them and
 * `x-kubernetes-*` as unmodified clients look for them (kubectl explain finds a kind by
 * `x-kubernetes-group-version-kind`; its field-validation check looks for the `fieldValidation`
 * query parameter on the PATCH operation carrying the kind's `x-kubernetes-group-version-kind`).
 *
 *   GET /openapi/v2                        Swagger 2.0, every served kind
 *   GET /openapi/v3                        index: {"paths": {"api/v1": {"serverRelativeURL": ...}}}
 *   GET /openapi/v3/api/v1                 OpenAPI 3.0 of one group/version
 *   GET /openapi/v3/apis/<group>/<version>
 *
 * Documents are built on the first request after the set of served kinds changed (the registry's
 * generation: custom resources come and go at run time), and kept as bytes with their ETag
 * (uppercase hex SHA-512, as the reference) and, when large, gzipped.
 */
import { upstreamGroup } from '../../api/brand';
import { notAcceptable, pathNotFound } from '../../api/status';
import type { ApiRegistry } from '../../registry/api-registry';
import type { KindDef } from '../../registry/kind';
import type { Descriptions } from '../../schema/descriptions';
import type { SchemaSet } from '../../schema/engine';
import { parseAccept } from '../negotiate';
import { GZIP_THRESHOLD } from '../respond';
import { buildV2, buildV3 } from './documents';
import { gvPrefix } from './paths';
import { swaggerToProto, V2_PROTO_TYPE, V2_PROTO_TYPE_DEPRECATED, V2_PROTO_TYPES } from './proto';
import type { Json } from './schema';

/** A built document in one encoding: its bytes, ETag value (uppercase hex SHA-512) and, once asked for, gzipped bytes. */
class Doc {
  readonly hash: string;
  private gz?: Uint8Array;

  constructor(
    readonly bytes: Uint8Array,
    readonly contentType: string,
  ) {
    this.hash = new Bun.CryptoHasher('sha512').update(bytes).digest('hex').toUpperCase();
  }

  static json(doc: unknown): Doc {
    return new Doc(new TextEncoder().encode(JSON.stringify(doc)), 'application/json');
  }

  gzipped(): Uint8Array {
    this.gz ??= Bun.gzipSync(this.bytes as Uint8Array<ArrayBuffer>);
    return this.gz;
  }
}

interface V2 {
  doc: Json;
  json: Doc;
  proto?: Doc;
}

interface V3 {
  index: Doc;
  /** 'api/v1', 'apis/apps/v1' → document. */
  docs: Map<string, Doc>;
}

/** Whether `If-None-Match` names `etag` (a list of quoted tags, weak or not, or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === '*' || v === etag;
  });
}

/**
 * The encoding a client accepts: JSON always, gnostic protobuf where `proto` (/openapi/v2); 406
 * when it accepts neither. No Accept header means JSON.
 */
export function chooseEncoding(accept: string | null, proto: boolean): 'json' | 'proto' {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'json';
  for (const r of ranges) {
    if (r.type === '*' || (r.type === 'application' && (r.subtype === '*' || r.subtype === 'json'))) return 'json';
    if (proto && V2_PROTO_TYPES.has(`${r.type}/${r.subtype}`)) return 'proto';
  }
  throw notAcceptable(proto ? ['application/json', V2_PROTO_TYPE_DEPRECATED, V2_PROTO_TYPE] : ['application/json']);
}

export class OpenApi {
  private v2Docs?: V2;
  private v3Docs?: V3;

  private docs?: Descriptions;

  /**
   * `loadDescriptions` gives the built-in definitions' documentation; it is called once, when the
   * first document is built (the data is large and nothing else needs it).
   */
  constructor(
    readonly api: ApiRegistry,
    readonly schemas: SchemaSet,
    private readonly loadDescriptions: () => Descriptions = () => ({}),
  ) {}

  private descriptions(): Descriptions {
    this.docs ??= this.loadDescriptions();
    return this.docs;
  }

  private kinds(): KindDef[] {
    return this.api.stores.map((s) => s.def);
  }

  private built = -1;

  /** Drops documents built before the registry last changed (custom resources come and go). */
  private fresh(): void {
    if (this.built === this.api.generation) return;
    this.built = this.api.generation;
    this.v2Docs = undefined;
    this.v3Docs = undefined;
  }

  private v2(): V2 {
    this.fresh();
    if (this.v2Docs) return this.v2Docs;
    const doc = buildV2(this.schemas, this.kinds(), this.descriptions());
    this.v2Docs = { doc, json: Doc.json(doc) };
    return this.v2Docs;
  }

  private v3(): V3 {
    this.fresh();
    if (this.v3Docs) return this.v3Docs;
    const docs = new Map<string, Doc>();
    const paths: Json = {};
    for (const g of this.api.groups()) {
      // A branded group is published under both names, as discovery lists both: kubectl explain
      // and its validation look a kind up in the document of the group discovery mapped it to.
      const upstream = upstreamGroup(g.group);
      for (const group of upstream === g.group ? [g.group] : [g.group, upstream]) {
        for (const v of g.versions) {
          const key = gvPrefix(group, v).slice(1);
          const kinds = this.api.resources(g.group, v).map((s) => (group === g.group ? s.def : { ...s.def, group }));
          const doc = Doc.json(buildV3(this.schemas, group, v, kinds, this.descriptions()));
          docs.set(key, doc);
          paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` };
        }
      }
    }
    this.v3Docs = { index: Doc.json({ paths }), docs };
    return this.v3Docs;
  }

  /**
   * Serve `path`. `extraV3`: entries the /openapi/v3 index lists besides the served group
   * versions (aggregated APIs: their documents are their backends', proxied).
   */
  handle(path: string, query: URLSearchParams, req: Request, extraV3?: Record<string, { serverRelativeURL: string }>): Response {
    if (path === '/openapi/v2') {
      const v2 = this.v2();
      if (chooseEncoding(req.headers.get('accept'), true) === 'json') return this.serve(v2.json, req, false);
      v2.proto ??= new Doc(swaggerToProto(v2.doc), V2_PROTO_TYPE);
      return this.serve(v2.proto, req, false);
    }
    if (path === '/openapi/v3' || path === '/openapi/v3/') {
      chooseEncoding(req.headers.get('accept'), false);
      const v3 = this.v3();
      if (extraV3 && Object.keys(extraV3).length > 0) {
        const paths = JSON.parse(new TextDecoder().decode(v3.index.bytes)).paths as Json;
        return this.serve(Doc.json({ paths: { ...paths, ...extraV3 } }), req, false);
      }
      return this.serve(v3.index, req, false);
    }
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length).replace(/\/$/, '');
      const doc = this.v3().docs.get(key);
      if (!doc) throw pathNotFound();
      chooseEncoding(req.headers.get('accept'), false);
      const hash = query.get('hash');
      if (hash !== null && hash !== '' && hash !== doc.hash) {
        // As the reference: an outdated hash redirects to the current one.
        return new Response(null, { status: 301, headers: { Location: `/openapi/v3/${key}?hash=${doc.hash}` } });
      }
      return this.serve(doc, req, hash === doc.hash);
    }
    throw pathNotFound();
  }

  /** The document with its ETag (304 on If-None-Match), gzipped when large and accepted. */
  private serve(doc: Doc, req: Request, immutable: boolean): Response {
    const etag = `"${doc.hash}"`;
    const headers = new Headers({ ETag: etag, Vary: 'Accept, Accept-Encoding' });
    if (immutable) {
      headers.set('Cache-Control', 'public, immutable');
      headers.set('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
    } else {
      headers.set('Cache-Control', 'no-cache, private');
    }
    if (matches(req.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers });
    headers.set('Content-Type', doc.contentType);
    let body = doc.bytes;
    if (body.length >= GZIP_THRESHOLD && /\bgzip\b/i.test(req.headers.get('accept-encoding') ?? '')) {
      body = doc.gzipped();
      headers.set('Content-Encoding', 'gzip');
    }
    return new Response(req.method.toUpperCase() === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>), { status: 200, headers });
  }
}
