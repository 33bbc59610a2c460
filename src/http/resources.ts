/**
 * The resource handler: one function per verb, from a parsed RequestInfo to a registry call and
 * back to an encoded response. Kind-independent: everything kind-specific is in the KindDef.
 */

import { upstreamGroup } from '../api/brand';
import { isObject, type Obj } from '../api/meta';
import { queryBool, queryInt } from '../api/query';
import type { RequestUrl, ResourceRequest } from '../api/request-info';
import { parseFieldSelector, parseLabelSelector } from '../api/selectors';
import { badRequest, invalid, methodNotAllowed, pathNotFound, StatusError, success } from '../api/status';
import type { UserInfo } from '../api/user';
import { type FieldError, forbiddenField, notSupported } from '../api/validation';
import { requestAnnotations, requestUser } from '../auth/request-user';
import type { ServiceAccountTokens } from '../auth/sa-tokens';
import { TOKEN_REQUEST_SCHEMA, tokenRequest } from '../auth/token-request';
import { type BrandView, brandView } from '../codec/brand-view';
import { CBOR_MEDIA_TYPE, type CborCodec } from '../codec/cbor';
import { type ChunkItems, inlineEncoder } from '../codec/list-chunks';
import type { ProtobufCodec } from '../codec/protobuf';
import { decodeStored, storedListJson, storedText, writtenText } from '../codec/stored';
import { partialObjectMetadata, tableHead, toTable } from '../codec/table';
import type { ApiRegistry } from '../registry/api-registry';
import { bindPod } from '../registry/binding';
import { evict } from '../registry/eviction';
import type { ResourceStore } from '../registry/generic';
import type { ListResult } from '../registry/list';
import type { DeleteOptions, FieldValidation, ListOptions, PatchType, WriteOptions } from '../registry/options';
import type { StoredItem } from '../registry/stored-item';
import type { CodecPool } from '../workers/codec-pool';
import { decodeBody, decodeText, readBody } from './body';
import { poolPays, replyListStream, STREAM_MIN_ITEMS, type StreamedList } from './list-stream';
import { chooseOutput, type Output } from './negotiate';
import { type ReplyOptions, reply, replyBytes, replyJsonText } from './respond';
import { handleScale } from './scale';
import type { WatchHandler } from './watch-handler';

export interface HandlerOptions {
  /** Gate APIResponseCompression. */
  compression: boolean;
  /** Gate AllowUnsafeMalformedObjectDeletion. */
  unsafeDelete: boolean;
  /** Protobuf encoding of the kinds that have one. */
  protobuf: ProtobufCodec;
  /** CBOR (application/cbor, apply-patch+cbor), present only with the CBORServingAndStorage gate on. */
  cbor?: CborCodec;
  /** Long lists encoded off this thread (absent: inline, still streamed). */
  codecPool?: CodecPool;
  clock?: () => number;
  /** Service account tokens (serviceaccounts/token); absent: no such subresource. */
  tokens?: ServiceAccountTokens;
  /** The answer to a virtual kind's create (access reviews). */
  review?: (kind: string, body: Obj, user: UserInfo, namespace: string) => Obj;
  /** A request named a deprecated version (apiserver_requested_deprecated_apis). */
  onDeprecated?: (def: ResourceStore['def'], subresource: string) => void;
}

const FIELD_VALIDATION = ['Ignore', 'Warn', 'Strict'] as const;

/** The field manager: `fieldManager`, else the User-Agent up to its first '/' (as the reference). */
function fieldManager(q: URLSearchParams, req: Request): string | undefined {
  const m = q.get('fieldManager');
  if (m !== null) {
    if (m.length > 128) throw badRequest(`fieldManager: Too long: may not be more than 128 bytes`);
    return m;
  }
  const ua = req.headers.get('user-agent');
  return ua ? (ua.split('/')[0] as string).slice(0, 128) : undefined;
}

export function writeOptions(q: URLSearchParams): WriteOptions {
  const dry = q.getAll('dryRun');
  for (const d of dry) {
    if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  }
  const fv = q.get('fieldValidation') ?? 'Warn';
  if (!(FIELD_VALIDATION as readonly string[]).includes(fv)) {
    throw badRequest(`fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Warn", "Strict"`);
  }
  return { dryRun: dry.length > 0, fieldValidation: fv as FieldValidation, warnings: [] };
}

/**
 * The reference's ValidateListOptions for list and deletecollection: resourceVersionMatch needs a
 * resourceVersion, no continue, a known value, and "Exact" not with "0". 422 Invalid
 * `ListOptions.meta.svc.io ""` listing every problem.
 */
export function validateListOptions(q: URLSearchParams): void {
  const match = q.get('resourceVersionMatch') ?? '';
  if (match === '') return;
  const rv = q.get('resourceVersion') ?? '';
  const errs: FieldError[] = [];
  if (rv === '') errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  if ((q.get('continue') ?? '') !== '')
    errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
  if (match === 'Exact' && rv === '0')
    errs.push(forbiddenField('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  if (errs.length === 0) return;
  const e = invalid('ListOptions', 'meta.svc.io', '', errs);
  // Issue 3 asks for 400 when resourceVersionMatch comes without a resourceVersion (the reference
  // answers 422 for every ListOptions error); the body keeps the reference's text and causes.
  if (rv === '') throw new StatusError(400, 'BadRequest', e.message, e.details);
  throw e;
}

export function listOptions(q: URLSearchParams, store: ResourceStore): ListOptions {
  // A negative limit means none, as the reference's storage treats limit <= 0.
  const limit = Math.max(0, queryInt(q, 'limit') ?? 0);
  // The reference decodes the whole ListOptions for a list too: a malformed watch option is 400.
  queryBool(q, 'allowWatchBookmarks');
  queryBool(q, 'sendInitialEvents');
  queryInt(q, 'timeoutSeconds');
  const rvm = q.get('resourceVersionMatch') ?? '';
  if (rvm !== '' && rvm !== 'Exact' && rvm !== 'NotOlderThan') {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${rvm}": supported values: "Exact", "NotOlderThan"`);
  }
  const labelSelector = parseLabelSelector(q.get('labelSelector') ?? '');
  const fieldSelector = parseFieldSelector(q.get('fieldSelector') ?? '', store.selectableFields);
  return {
    labelSelector,
    fieldSelector,
    hasSelectors: labelSelector.length > 0 || fieldSelector.length > 0,
    limit,
    continueToken: q.get('continue') ?? '',
    resourceVersion: q.get('resourceVersion') ?? '',
    resourceVersionMatch: rvm as ListOptions['resourceVersionMatch'],
  };
}

export class ResourceHandler {
  private readonly clock: () => number;

  /** A core object by plural, namespace and name (undefined when it does not exist). */
  private async findObject(plural: string, namespace: string, name: string): Promise<Obj | undefined> {
    const store = this.api.lookup('', 'v1', plural);
    if (!store) return undefined;
    try {
      return decodeStored(await store.get(namespace, name));
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  constructor(
    private readonly api: ApiRegistry,
    private readonly watches: WatchHandler,
    private readonly opts: HandlerOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  async handle(info: ResourceRequest, req: Request, url: RequestUrl): Promise<Response> {
    const store = this.api.lookup(info.group, info.version, info.resource);
    if (!store) throw pathNotFound();
    const view = brandView(store.def, info.brand);
    // A deprecated version: every answer carries its warning, errors too (as the reference).
    const deprecation = store.def.deprecation;
    const warning = deprecation === undefined ? undefined : `299 - ${JSON.stringify(deprecation)}`;
    if (deprecation !== undefined) {
      this.opts.onDeprecated?.(store.def, info.subresource);
      // As the reference's audit annotation k8s.io/deprecated, in the svc spelling.
      requestAnnotations(req)['svc.io/deprecated'] = 'true';
    }
    try {
      const res = await this.serve(store, info, req, url, view);
      if (warning) res.headers.append('Warning', warning);
      return res;
    } catch (e) {
      const err = view.error(e);
      if (warning && err instanceof StatusError) {
        const prior = err.headers?.Warning;
        err.headers = { ...err.headers, Warning: prior ? `${prior}, ${warning}` : warning };
      }
      // A Status in protobuf when that is what the client asked for (the reference negotiates
      // errors as it negotiates objects); CBOR likewise; JSON otherwise, from the chain's error renderer.
      if (err instanceof StatusError) {
        const pb = this.opts.protobuf.supports(store.def.schema);
        const out = pb || this.opts.cbor ? acceptedOutput(req.headers.get('accept'), pb, this.opts.cbor !== undefined) : undefined;
        const o = { status: err.code, headers: err.headers };
        if (out?.kind === 'protobuf') return replyBytes(this.opts.protobuf.encodeStatus(err.body()), out.mediaType, o);
        if (out?.kind === 'cbor' && this.opts.cbor) return replyBytes(this.opts.cbor.encode(err.body()), CBOR_MEDIA_TYPE, o);
      }
      throw err;
    }
  }

  private async serve(store: ResourceStore, info: ResourceRequest, req: Request, url: RequestUrl, view: BrandView): Promise<Response> {
    const def = store.def;
    if (info.namespace && !def.namespaced) throw pathNotFound();
    const sub = info.subresource;
    const finalize = sub === 'finalize' && def.finalize === true;
    const scale = sub === 'scale' && def.scale === true;
    const eviction = sub === 'eviction' && def.group === '' && def.plural === 'pods';
    const binding = sub === 'binding' && def.group === '' && def.plural === 'pods';
    const token = sub === 'token' && def.group === '' && def.plural === 'serviceaccounts' && this.opts.tokens !== undefined;
    if (sub !== '' && !(sub === 'status' && def.status) && !finalize && !scale && !eviction && !binding && !token) throw pathNotFound();
    if (finalize && info.verb !== 'update') throw methodNotAllowed();
    if (def.namespaced && !info.namespace && info.verb !== 'list' && info.verb !== 'watch') {
      // A namespaced resource addressed without a namespace.
      throw pathNotFound();
    }
    const q = url.searchParams;
    const pb = this.opts.protobuf.supports(def.schema);
    const accept = req.headers.get('accept');
    const pbDecode = pb ? (b: Uint8Array) => this.opts.protobuf.decode(b, def.schema) : undefined;
    const cborCodec = this.opts.cbor;
    const cb = cborCodec !== undefined;
    const cborDecode = cborCodec ? (b: Uint8Array) => cborCodec.decode(b, def.schema) : undefined;
    const acceptsGzip = this.opts.compression && (req.headers.get('accept-encoding') ?? '').includes('gzip');
    const base: ReplyOptions = { pretty: queryBool(q, 'pretty') === true };
    if (def.virtual) {
      // Access reviews: create only, answered from the request, nothing stored.
      if (info.verb !== 'create' || sub !== '') throw methodNotAllowed();
      const body = await decodeBody(req, ['json', 'yaml', 'protobuf', 'cbor'], pbDecode, cborDecode);
      const obj = store.checkTypeMeta(body.value);
      const user = requestUser(req);
      if (!user || !this.opts.review) throw methodNotAllowed();
      const answer = this.opts.review(def.kind, obj, user, info.namespace);
      return this.encodeObject(answer, chooseOutput(accept, false, pb, cb), { ...base, status: 201 }, view, def);
    }
    if (token && this.opts.tokens) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const trDecode = (b: Uint8Array) => this.opts.protobuf.decode(b, TOKEN_REQUEST_SCHEMA);
      const body = await decodeBody(req, ['json', 'yaml', 'protobuf'], trDecode);
      const sa = decodeStored(await store.get(info.namespace, info.name));
      const answer = await tokenRequest(sa, body.value, this.opts.tokens, (kind, namespace, name) =>
        this.findObject(`${kind.toLowerCase()}s`, namespace, name),
      );
      const out = chooseOutput(accept, false, true, false);
      if (out.kind === 'protobuf')
        return replyBytes(this.opts.protobuf.encode(answer, TOKEN_REQUEST_SCHEMA), out.mediaType, { ...base, status: 201 });
      return reply(answer, { ...base, status: 201, yaml: out.kind === 'yaml' });
    }
    if (eviction) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const body = await decodeBody(req, ['json', 'yaml']);
      const budgets = this.api.lookup('policy', 'v1', 'poddisruptionbudgets');
      await evict(store, budgets, info.namespace, info.name, body.value, writeOptions(q).dryRun, this.clock);
      return reply({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }, { ...base, status: 201 });
    }
    if (binding) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const bindingSchema = 'io.svc.api.core.v1.Binding';
      const body = await decodeBody(req, ['json', 'yaml', 'protobuf'], (b) => this.opts.protobuf.decode(b, bindingSchema));
      const w = writeOptions(q);
      w.fieldManager = fieldManager(q, req);
      w.user = requestUser(req);
      await bindPod(store, info.namespace, info.name, body.value, w);
      return reply({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, { ...base, status: 201 });
    }
    if (scale) {
      const w = writeOptions(q);
      w.fieldManager = fieldManager(q, req);
      const out = chooseOutput(accept, false);
      return this.encodeObject(await handleScale(store, info, req, w), out, { ...base, warnings: w.warnings }, view);
    }
    switch (info.verb) {
      case 'get': {
        const out = chooseOutput(accept, true, pb, cb);
        const kv = await store.get(info.namespace, info.name, q.get('resourceVersion') ?? '');
        if (out.kind === 'json') return replyJsonText(view.text(storedText(kv)), { ...base, gzip: acceptsGzip });
        return this.encodeObjects(store, view, [decodeStored(kv)], undefined, out, { ...base, gzip: acceptsGzip });
      }
      case 'list': {
        const out = chooseOutput(accept, true, pb, cb);
        validateListOptions(q);
        const r = await store.list(info.namespace, listOptions(q, store));
        return this.encodeList(store, view, r, out, { ...base, gzip: acceptsGzip });
      }
      case 'watch': {
        const out = chooseOutput(accept, true, pb, cb);
        return this.watches.serve(store, info, req, q, out, view);
      }
      case 'create': {
        if (sub !== '' || info.name !== '') throw methodNotAllowed();
        const w = writeOptions(q);
        const body = await decodeBody(req, ['json', 'yaml', 'protobuf', 'cbor'], pbDecode, cborDecode);
        w.duplicates = body.duplicates;
        w.fieldManager = fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const out = chooseOutput(accept, false, pb, cb);
        const obj = await store.create(info.namespace, body.value, w);
        return this.encodeObject(obj, out, { ...base, status: 201, warnings: w.warnings }, view, def);
      }
      case 'update': {
        const w = writeOptions(q);
        const body = await decodeBody(req, ['json', 'yaml', 'protobuf', 'cbor'], pbDecode, cborDecode);
        w.duplicates = body.duplicates;
        w.fieldManager = fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const out = chooseOutput(accept, false, pb, cb);
        const obj = await store.update(info.namespace, info.name, body.value, w, sub === 'status' || sub === 'finalize' ? sub : '');
        return this.encodeObject(obj, out, { ...base, warnings: w.warnings }, view, def);
      }
      case 'patch': {
        if (sub !== '' && sub !== 'status') throw methodNotAllowed();
        const w = writeOptions(q);
        const body = await decodeBody(
          req,
          // Custom resources have no patch strategies: strategic merge patch is 415 for them, as the reference.
          def.custom
            ? ['json-patch', 'merge-patch', 'apply-patch', 'apply-patch-cbor']
            : ['json-patch', 'merge-patch', 'strategic-merge-patch', 'apply-patch', 'apply-patch-cbor'],
          undefined,
          cborDecode,
        );
        // apply-patch+cbor is server-side apply with a CBOR body; there is no other CBOR patch type.
        const patchType = (body.type === 'apply-patch-cbor' ? 'apply-patch' : body.type) as PatchType;
        w.duplicates = body.duplicates;
        // Apply needs an explicit fieldManager; other patches fall back to the User-Agent.
        w.fieldManager = patchType === 'apply-patch' ? (q.get('fieldManager') ?? undefined) : fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const force = queryBool(q, 'force');
        if (force !== undefined && patchType !== 'apply-patch')
          throw badRequest('force: Forbidden: may not be specified for non-apply patch');
        const out = chooseOutput(accept, false, pb, cb);
        const r = await store.patch(info.namespace, info.name, patchType, body.value, w, sub, force === true);
        return this.encodeObject(r.obj, out, { ...base, status: r.created ? 201 : 200, warnings: w.warnings }, view, def);
      }
      case 'delete': {
        if (sub !== '') throw methodNotAllowed();
        const o = await deleteOptions(req, q, this.opts.unsafeDelete);
        o.user = requestUser(req);
        o.auditAnnotations = requestAnnotations(req);
        o.warnings = [];
        const out = chooseOutput(accept, false, pb, cb);
        const r = await store.delete(info.namespace, info.name, o);
        const dbase = { ...base, warnings: o.warnings };
        if (!r.deleted || def.returnDeletedObject) return this.encodeObject(r.obj, out, dbase, view, def);
        const target = { ...store.target, group: info.brand === 'k8s' ? upstreamGroup(store.target.group) : store.target.group };
        const done = success(target, info.name, r.obj.metadata.uid ?? '');
        if (out.kind === 'cbor' && cborCodec) return replyBytes(cborCodec.encode(done), CBOR_MEDIA_TYPE, dbase);
        return reply(done, { ...dbase, yaml: out.kind === 'yaml' });
      }
      case 'deletecollection': {
        if (sub !== '' || !def.deleteCollection) throw methodNotAllowed();
        const o = await deleteOptions(req, q, this.opts.unsafeDelete);
        o.user = requestUser(req);
        o.auditAnnotations = requestAnnotations(req);
        o.warnings = [];
        validateListOptions(q);
        const lo = listOptions(q, store);
        const out = chooseOutput(accept, false, pb, cb);
        const r = await store.deleteCollection(info.namespace, lo, o);
        const list = {
          kind: def.listKind,
          apiVersion: view.apiVersion,
          metadata: { resourceVersion: String(r.revision) },
          items: r.items.map(view.obj),
        };
        const lbase = { ...base, warnings: o.warnings };
        if (out.kind === 'cbor' && cborCodec) return replyBytes(cborCodec.encode(list, `${def.schema}List`), CBOR_MEDIA_TYPE, lbase);
        return reply(list, { ...lbase, yaml: out.kind === 'yaml' });
      }
      default:
        throw methodNotAllowed();
    }
  }

  private encodeObject(obj: Obj, out: Output, o: ReplyOptions, view: BrandView, def?: ResourceStore['def']): Response {
    if (out.kind === 'protobuf' && def) return replyBytes(this.opts.protobuf.encode(view.obj(obj), def.schema), out.mediaType, o);
    if (out.kind === 'cbor' && this.opts.cbor) return replyBytes(this.opts.cbor.encode(view.obj(obj), def?.schema), CBOR_MEDIA_TYPE, o);
    if (out.kind === 'json') {
      // A write's result: the text just stored, with its resourceVersion (no second stringify).
      const text = writtenText(obj);
      if (text !== undefined) return replyJsonText(view.text(text), o);
    }
    return reply(view.obj(obj), { ...o, yaml: out.kind === 'yaml' });
  }

  private encodeObjects(
    store: ResourceStore,
    view: BrandView,
    stored: Obj[],
    listMeta: Record<string, unknown> | undefined,
    out: Output,
    o: ReplyOptions,
  ): Response {
    const def = store.def;
    const objs = view.brand === 'svc' ? stored : stored.map(view.obj);
    switch (out.kind) {
      case 'table':
        return reply(toTable(def, objs, listMeta ?? {}, out.group, this.clock()), { ...o, mediaParams: asParams('Table', out) });
      case 'metadata':
        if (listMeta === undefined)
          return reply(partialObjectMetadata(objs[0] as Obj, out.group), { ...o, mediaParams: asParams('PartialObjectMetadata', out) });
        return reply(
          {
            kind: 'PartialObjectMetadataList',
            apiVersion: `${out.group}/v1`,
            metadata: listMeta,
            items: objs.map((x) => partialObjectMetadata(x, out.group)),
          },
          { ...o, mediaParams: asParams('PartialObjectMetadataList', out) },
        );
      case 'yaml':
        if (listMeta === undefined) return reply(objs[0], { ...o, yaml: true });
        return reply({ apiVersion: view.apiVersion, items: objs, kind: def.listKind, metadata: listMeta }, { ...o, yaml: true });
      case 'json':
        if (listMeta === undefined) return reply(objs[0], o);
        return reply({ kind: def.listKind, apiVersion: view.apiVersion, metadata: listMeta, items: objs }, o);
      case 'cbor': {
        const c = this.opts.cbor as CborCodec;
        if (listMeta === undefined) return replyBytes(c.encode(objs[0], def.schema), CBOR_MEDIA_TYPE, o);
        const list = { kind: def.listKind, apiVersion: view.apiVersion, metadata: listMeta, items: objs };
        return replyBytes(c.encode(list, `${def.schema}List`), CBOR_MEDIA_TYPE, o);
      }
      case 'protobuf':
        if (listMeta === undefined) return replyBytes(this.opts.protobuf.encode(objs[0] as Obj, def.schema), out.mediaType, o);
        return replyBytes(
          this.opts.protobuf.encode(
            { kind: def.listKind, apiVersion: view.apiVersion, metadata: listMeta, items: objs },
            `${def.schema}List`,
          ),
          out.mediaType,
          o,
        );
    }
  }

  private encodeList(store: ResourceStore, view: BrandView, r: ListResult, out: Output, o: ReplyOptions): Response | Promise<Response> {
    const meta: Record<string, unknown> = { resourceVersion: String(r.revision) };
    if (r.continueToken) meta.continue = r.continueToken;
    if (r.remainingItemCount !== undefined) meta.remainingItemCount = r.remainingItemCount;
    const def = store.def;
    const count = r.items.length;
    const media = o.pretty
      ? undefined
      : out.kind === 'json' || out.kind === 'protobuf' || out.kind === 'cbor' || out.kind === 'table'
        ? out.kind
        : undefined;
    if (media !== undefined) {
      const listed = r.items;
      const items: ChunkItems = {
        count,
        key: (i) => (listed[i] as StoredItem).key,
        value: (i) => (listed[i] as StoredItem).value,
        rv: (i) => (listed[i] as StoredItem).rv,
      };
      const pool = this.opts.codecPool?.supports(def.schema, def.storageVersion) === true ? this.opts.codecPool : undefined;
      const pooled = pool !== undefined && poolPays(media, o.gzip === true, items);
      if (pooled || count >= STREAM_MIN_ITEMS) {
        const table = out.kind === 'table' ? { kind: def.kind, group: out.group, nowMs: this.clock() } : undefined;
        return replyListStream({
          media,
          contentType:
            out.kind === 'protobuf'
              ? out.mediaType
              : out.kind === 'cbor'
                ? CBOR_MEDIA_TYPE
                : out.kind === 'table'
                  ? `application/json${asParams('Table', out)}`
                  : 'application/json',
          listDef: `${def.schema}List`,
          itemDef: def.schema,
          list:
            out.kind === 'table'
              ? (tableHead(def.columns, meta, out.group) as StreamedList['list'])
              : { kind: def.listKind, apiVersion: view.apiVersion, metadata: meta },
          table,
          items,
          encoder: pooled
            ? pool.encoder(def.group, def.version, view.brand)
            : inlineEncoder({ protobuf: this.opts.protobuf, cbor: this.opts.cbor, columns: () => def.columns }, view),
          protobuf: this.opts.protobuf,
          cbor: this.opts.cbor,
          reply: o,
        });
      }
      // Stored JSON as it is, in bytes: no parse, no stringify, no string per item.
      if (out.kind === 'json' && view.brand === 'svc') {
        const head = `{"kind":"${def.listKind}","apiVersion":"${view.apiVersion}","metadata":${JSON.stringify(meta)},"items":[`;
        return replyBytes(storedListJson(head, items, ']}'), 'application/json', o);
      }
    }
    if (out.kind === 'json' && !o.pretty) {
      // Serve stored (or cached) JSON text: no parse, no stringify per item.
      let parts = r.items.map((i) => i.text);
      if (view.brand !== 'svc') parts = parts.map(view.text);
      return replyJsonText(
        `{"kind":"${def.listKind}","apiVersion":"${view.apiVersion}","metadata":${JSON.stringify(meta)},"items":[${parts.join(',')}]}`,
        o,
      );
    }
    return this.encodeObjects(
      store,
      view,
      r.items.map((i) => i.obj),
      meta,
      out,
      o,
    );
  }
}

/** The output an Accept header chooses, or undefined when it chooses none (the error stays JSON). */
function acceptedOutput(accept: string | null, protobuf: boolean, cbor: boolean): Output | undefined {
  try {
    return chooseOutput(accept, false, protobuf, cbor);
  } catch {
    return undefined;
  }
}

/** The media type parameters of a Table or metadata answer: the shape and the group/version the client asked for. */
function asParams(as: string, out: { group: string; version: string }): string {
  return `;as=${as};v=${out.version};g=${out.group}`;
}

/** DeleteOptions from the body (optional) and the query. */
async function deleteOptions(req: Request, q: URLSearchParams, unsafeDeleteGate: boolean): Promise<DeleteOptions> {
  const w = writeOptions(q);
  let body: Record<string, unknown> = {};
  const text = await readBody(req);
  if (text.trim() !== '') {
    const v = decodeText(text, (req.headers.get('content-type') ?? '').includes('yaml') ? 'yaml' : 'json');
    if (!isObject(v)) throw badRequest('DeleteOptions must be an object');
    body = v;
  }
  const graceQ = queryInt(q, 'gracePeriodSeconds');
  const grace = graceQ ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
  const policy = q.get('propagationPolicy') ?? (body.propagationPolicy as string | undefined) ?? undefined;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  const bodyDry = Array.isArray(body.dryRun) ? (body.dryRun as string[]) : [];
  for (const d of bodyDry) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  const pre = isObject(body.preconditions) ? (body.preconditions as DeleteOptions['preconditions']) : undefined;
  const unsafe =
    queryBool(q, 'ignoreStoreReadErrorWithClusterBreakingPotential') ?? body.ignoreStoreReadErrorWithClusterBreakingPotential === true;
  return {
    // Without the gate the option is dropped, as the reference drops disabled fields.
    ignoreStoreReadError: unsafe && unsafeDeleteGate,
    orphanDependents: queryBool(q, 'orphanDependents') ?? (typeof body.orphanDependents === 'boolean' ? body.orphanDependents : undefined),
    dryRun: w.dryRun || bodyDry.length > 0,
    gracePeriodSeconds: grace,
    propagationPolicy: policy as DeleteOptions['propagationPolicy'],
    preconditions: pre,
  };
}
