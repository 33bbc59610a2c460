/**
 * The resource handler: one function per verb, from a parsed RequestInfo to a registry call and
 * back to an encoded response. Kind-independent: everything kind-specific is in the KindDef.
 */

import { upstreamGroup } from '../api/brand';
import { isObject, type Obj } from '../api/meta';
import { includeObject, prettyPrint, queryBool, queryInt } from '../api/query';
import type { RequestUrl, ResourceRequest } from '../api/request-info';
import { matchesFields, matchesLabels } from '../api/selectors';
import { badRequest, invalid, methodNotAllowed, notFound, pathNotFound, StatusError, success } from '../api/status';
import type { UserInfo } from '../api/user';
import { forbiddenField, notSupported } from '../api/validation';
import { warningHeader } from '../api/warning';
import { requestAnnotations, requestUser } from '../auth/request-user';
import type { ServiceAccountTokens } from '../auth/sa-tokens';
import { TOKEN_REQUEST_SCHEMA, tokenRequest } from '../auth/token-request';
import { type BrandView, brandView } from '../codec/brand-view';
import type { CborCodec } from '../codec/cbor';
import { BodySyntaxError, decodeJson, decodeYaml } from '../codec/json-media';
import { adaptiveEncoder, inlineEncoder, sharedEncoder } from '../codec/list-chunks';
import type { CodecKind, EncodeContext, ListItems, MediaCodec, StoredObject } from '../codec/media';
import type { ProtobufCodec } from '../codec/protobuf';
import { decodeStored } from '../codec/stored';
import { staleReadOf } from '../faults/read';
import type { ApiRegistry } from '../registry/api-registry';
import { BINDING_SCHEMA, bindPod } from '../registry/binding';
import { patchSyntaxError, unrecognized, unrecognizedBody } from '../registry/decode-errors';
import { evict } from '../registry/eviction';
import type { ResourceStore } from '../registry/generic';
import { statusLikeOf } from '../registry/kind';
import type { ListResult } from '../registry/list';
import type { DeleteOptions, FieldValidation, PatchType, WriteOptions } from '../registry/options';
import type { CodecPool } from '../workers/codec-pool';
import { decodeBody, readBody } from './body';
import { ListMemo } from './list-memo';
import { listOptions, validateListOptions } from './list-options';
import { poolPays, replyListStream, STREAM_MIN_ITEMS, writtenWhole } from './list-stream';
import { type BodyType, Negotiation } from './negotiate';
import { contention, type ReplyOptions, reply, replyEncoded } from './respond';
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
  /**
   * The objects of a computed kind (ComponentStatus, PodMetrics), made at each read; `namespace`
   * narrows a namespaced kind's ('' for all).
   */
  computed?: (kind: string, namespace: string) => Promise<Obj[]>;
  /** The answer to a virtual kind's create (access reviews). */
  review?: (kind: string, body: Obj, user: UserInfo, namespace: string) => Obj | Promise<Obj>;
  /** A request named a deprecated version (apiserver_requested_deprecated_apis). */
  onDeprecated?: (def: ResourceStore['def'], subresource: string) => void;
}

const FIELD_VALIDATION = ['Ignore', 'Warn', 'Strict'] as const;

/** What the codecs need of serviceaccounts/token's answer (a TokenRequest). */
const TOKEN_REQUEST_KIND: CodecKind = { kind: 'TokenRequest', listKind: 'TokenRequestList', schema: TOKEN_REQUEST_SCHEMA, columns: [] };

/** A create or update body that does not parse, worded for the kind it should be (a `.catch` handler). */
const unparsed =
  (kind: string) =>
  (e: unknown): never => {
    throw e instanceof BodySyntaxError ? unrecognizedBody(kind, e) : e;
  };

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

/**
 * The write options of a request. `optionsKind` names the options the reference validates (422
 * Invalid `CreateOptions.meta.svc.io "" is invalid: fieldValidation: ...`, its sorted list of
 * values with the empty one, which means Warn); a bad dryRun is 400 (issue 5's decision).
 */
export function writeOptions(q: URLSearchParams, optionsKind?: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): WriteOptions {
  const dry = q.getAll('dryRun');
  for (const d of dry) {
    if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  }
  const fv = q.get('fieldValidation') || 'Warn';
  if (!(FIELD_VALIDATION as readonly string[]).includes(fv)) {
    if (optionsKind) throw invalid(optionsKind, 'meta.svc.io', '', [notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn'])]);
    throw badRequest(`fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Warn", "Strict"`);
  }
  return { dryRun: dry.length > 0, fieldValidation: fv as FieldValidation, warnings: [] };
}

export class ResourceHandler {
  private readonly clock: () => number;
  private readonly negotiation: Negotiation;
  /** Recent whole lists' JSON answers (list-memo.ts). */
  private readonly listMemo = new ListMemo();

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
    this.negotiation = new Negotiation({ protobuf: opts.protobuf, cbor: opts.cbor });
  }

  async handle(info: ResourceRequest, req: Request, url: RequestUrl): Promise<Response> {
    const store = this.api.lookup(info.group, info.version, info.resource);
    if (!store) throw pathNotFound();
    const view = brandView(store.def, info.brand);
    // A deprecated version: every answer carries its warning, errors too (as the reference).
    const deprecation = store.def.deprecation;
    const warning = deprecation === undefined ? undefined : warningHeader(deprecation);
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
        const protobuf = this.opts.protobuf.supports(store.def.schema);
        const codec = this.negotiation.responseOrUndefined(req.headers.get('accept'), {
          transform: false,
          protobuf,
          cbor: true,
          pretty: false,
        });
        const encoded = codec?.error(err.body());
        if (encoded) return replyEncoded(encoded, { status: err.code, headers: err.headers });
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
    // Status-like subresources of the kind (a CertificateSigningRequest's approval): as status.
    const statusLike = statusLikeOf(def, sub) !== undefined;
    if (sub !== '' && !(sub === 'status' && def.status) && !statusLike && !finalize && !scale && !eviction && !binding && !token)
      throw pathNotFound();
    if (statusLike && info.verb !== 'get' && info.verb !== 'update' && info.verb !== 'patch') throw methodNotAllowed();
    if (finalize && info.verb !== 'update') throw methodNotAllowed();
    if (def.namespaced && !info.namespace && info.verb !== 'list' && info.verb !== 'watch') {
      // A namespaced resource addressed without a namespace.
      throw pathNotFound();
    }
    const q = url.searchParams;
    const pb = this.opts.protobuf.supports(def.schema);
    const accept = req.headers.get('accept');
    const contentType = req.headers.get('content-type');
    const acceptsGzip = this.opts.compression && (req.headers.get('accept-encoding') ?? '').includes('gzip');
    const pretty = prettyPrint(q, req.headers.get('user-agent'));
    const base: ReplyOptions = { pretty };
    // The answer's codec (406 when Accept names none), chosen where each verb has always chosen it.
    const respond = (transform: boolean): MediaCodec => this.negotiation.response(accept, { transform, protobuf: pb, cbor: true, pretty });
    const bodyIn = (allowed: readonly BodyType[]) => this.negotiation.body(contentType, allowed, { protobuf: pb, cbor: true });
    const ctx: EncodeContext = { kind: def, view, now: this.clock, includeObject: includeObject(q) };
    if (def.virtual && def.group === '' && def.plural === 'bindings') {
      // POST /api/v1/namespaces/{ns}/bindings: pods/binding of the pod the Binding names.
      if (info.verb !== 'create' || sub !== '') throw methodNotAllowed();
      const pods = this.api.lookup('', 'v1', 'pods');
      if (!pods) throw methodNotAllowed();
      const body = await decodeBody(
        req,
        this.negotiation.body(contentType, ['json', 'yaml', 'protobuf'], { protobuf: true, cbor: false }),
        BINDING_SCHEMA,
      );
      const name = (body.value as { metadata?: { name?: unknown } } | null)?.metadata?.name;
      const w = writeOptions(q);
      w.fieldManager = fieldManager(q, req);
      w.user = requestUser(req);
      await bindPod(pods, info.namespace, typeof name === 'string' ? name : '', body.value, w);
      return reply({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, { ...base, status: 201 });
    }
    if (def.virtual) {
      // Access reviews: create only, answered from the request, nothing stored.
      if (info.verb !== 'create' || sub !== '') throw methodNotAllowed();
      const body = await decodeBody(req, bodyIn(['json', 'yaml', 'protobuf', 'cbor']), def.schema);
      const obj = store.checkTypeMeta(body.value);
      const user = requestUser(req);
      if (!user || !this.opts.review) throw methodNotAllowed();
      const answer = await this.opts.review(def.kind, obj, user, info.namespace);
      return replyEncoded(respond(false).object({ obj: answer }, ctx), { ...base, status: 201 });
    }
    if (def.computed) {
      if ((info.verb !== 'get' && info.verb !== 'list') || sub !== '') throw methodNotAllowed();
      const objs = (await this.opts.computed?.(def.kind, info.namespace)) ?? [];
      if (info.verb === 'get') {
        const obj = objs.find((o) => o.metadata.name === info.name);
        if (!obj) throw notFound({ group: def.group, resource: def.plural }, info.name);
        return replyEncoded(respond(true).object({ obj }, ctx), base);
      }
      const lo = listOptions(q, store);
      const field = (o: Obj) => (f: string) =>
        f === 'metadata.name' ? (o.metadata.name ?? '') : f === 'metadata.namespace' ? (o.metadata.namespace ?? '') : '';
      const items = objs
        .filter((o) => matchesLabels(lo.labelSelector, o.metadata.labels) && matchesFields(lo.fieldSelector, field(o)))
        .map((obj) => computedItem(store.key(obj.metadata.namespace ?? '', obj.metadata.name ?? ''), obj));
      return this.encodeList(store, ctx, { items, revision: 0, continueToken: '' }, respond(true), base);
    }
    if (token && this.opts.tokens) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const tr = this.negotiation.body(contentType, ['json', 'yaml', 'protobuf'], { protobuf: true, cbor: false });
      const body = await decodeBody(req, tr, TOKEN_REQUEST_SCHEMA);
      const sa = decodeStored(await store.get(info.namespace, info.name));
      const answer = await tokenRequest(sa, body.value, this.opts.tokens, (kind, namespace, name) =>
        this.findObject(`${kind.toLowerCase()}s`, namespace, name),
      );
      const codec = this.negotiation.response(accept, { transform: false, protobuf: true, cbor: false, pretty });
      return replyEncoded(codec.object({ obj: answer }, { ...ctx, kind: TOKEN_REQUEST_KIND }), { ...base, status: 201 });
    }
    if (eviction) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const body = await decodeBody(req, bodyIn(['json', 'yaml']));
      const budgets = this.api.lookup('policy', 'v1', 'poddisruptionbudgets');
      await evict(store, budgets, info.namespace, info.name, body.value, writeOptions(q).dryRun, this.clock);
      return reply({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }, { ...base, status: 201 });
    }
    if (binding) {
      if (info.verb !== 'create') throw methodNotAllowed();
      const body = await decodeBody(
        req,
        this.negotiation.body(contentType, ['json', 'yaml', 'protobuf'], { protobuf: true, cbor: false }),
        BINDING_SCHEMA,
      );
      const w = writeOptions(q);
      w.fieldManager = fieldManager(q, req);
      w.user = requestUser(req);
      await bindPod(store, info.namespace, info.name, body.value, w);
      return reply({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, { ...base, status: 201 });
    }
    if (scale) {
      const w = writeOptions(q);
      w.fieldManager = fieldManager(q, req);
      const codec = this.negotiation.response(accept, { transform: false, protobuf: false, cbor: false, pretty });
      return replyEncoded(codec.object({ obj: await handleScale(store, info, req, w) }, ctx), { ...base, warnings: w.warnings });
    }
    switch (info.verb) {
      case 'get': {
        const codec = respond(true);
        const kv = await store.get(info.namespace, info.name, q.get('resourceVersion') ?? '', staleReadOf(req));
        return replyEncoded(codec.object({ kv }, ctx), { ...base, gzip: acceptsGzip });
      }
      case 'list': {
        const codec = respond(true);
        validateListOptions(q);
        const r = await store.list(info.namespace, listOptions(q, store));
        return this.encodeList(store, ctx, r, codec, { ...base, gzip: acceptsGzip });
      }
      case 'watch': {
        return this.watches.serve(store, info, req, q, respond(true), view);
      }
      case 'create': {
        if (sub !== '' || info.name !== '') throw methodNotAllowed();
        const w = writeOptions(q, 'CreateOptions');
        const body = await decodeBody(req, bodyIn(['json', 'yaml', 'protobuf', 'cbor']), def.schema).catch(unparsed(def.kind));
        // A body that is JSON but no object: the reference's summary quotes it as sent.
        if (body.text !== undefined && body.value !== null && !isObject(body.value)) throw unrecognized(def.kind, body.value, body.text);
        w.duplicates = body.duplicates;
        w.fieldManager = fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const codec = respond(false);
        const obj = await store.create(info.namespace, body.value, w);
        return replyEncoded(codec.object({ obj }, ctx), { ...base, status: 201, warnings: w.warnings });
      }
      case 'update': {
        const w = writeOptions(q, 'UpdateOptions');
        const body = await decodeBody(req, bodyIn(['json', 'yaml', 'protobuf', 'cbor']), def.schema).catch(unparsed(def.kind));
        // A body that is JSON but no object: the reference's summary quotes it as sent.
        if (body.text !== undefined && body.value !== null && !isObject(body.value)) throw unrecognized(def.kind, body.value, body.text);
        w.duplicates = body.duplicates;
        w.fieldManager = fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const codec = respond(false);
        const obj = await store.update(
          info.namespace,
          info.name,
          body.value,
          w,
          sub === 'status' || sub === 'finalize' || statusLike ? sub : '',
        );
        return replyEncoded(codec.object({ obj }, ctx), { ...base, warnings: w.warnings });
      }
      case 'patch': {
        if (sub !== '' && sub !== 'status' && !statusLike) throw methodNotAllowed();
        const w = writeOptions(q, 'PatchOptions');
        // Custom resources have no patch strategies: strategic merge patch is 415 for them, as the reference.
        const patchBody = bodyIn(
          def.custom
            ? ['json-patch', 'merge-patch', 'apply-patch', 'apply-patch-cbor']
            : ['json-patch', 'merge-patch', 'strategic-merge-patch', 'apply-patch', 'apply-patch-cbor'],
        );
        const body = await decodeBody(req, patchBody, def.schema).catch((e) => {
          throw e instanceof BodySyntaxError ? patchSyntaxError(patchBody.type, w.fieldValidation, e) : e;
        });
        // apply-patch+cbor is server-side apply with a CBOR body; there is no other CBOR patch type.
        const patchType = (body.type === 'apply-patch-cbor' ? 'apply-patch' : body.type) as PatchType;
        w.duplicates = body.duplicates;
        // Apply needs an explicit fieldManager; other patches fall back to the User-Agent.
        w.fieldManager = patchType === 'apply-patch' ? (q.get('fieldManager') ?? undefined) : fieldManager(q, req);
        w.user = requestUser(req);
        w.auditAnnotations = requestAnnotations(req);
        const force = queryBool(q, 'force');
        if (force !== undefined && patchType !== 'apply-patch') {
          throw invalid('PatchOptions', 'meta.svc.io', '', [forbiddenField('force', 'may not be specified for non-apply patch')]);
        }
        const codec = respond(false);
        const r = await store.patch(info.namespace, info.name, patchType, body.value, w, sub, force === true);
        return replyEncoded(codec.object({ obj: r.obj }, ctx), { ...base, status: r.created ? 201 : 200, warnings: w.warnings });
      }
      case 'delete': {
        if (sub !== '') throw methodNotAllowed();
        const o = await deleteOptions(req, q, this.opts.unsafeDelete);
        o.user = requestUser(req);
        o.auditAnnotations = requestAnnotations(req);
        o.warnings = [];
        const codec = respond(false);
        const r = await store.delete(info.namespace, info.name, o);
        const dbase = { ...base, warnings: o.warnings };
        if (!r.deleted || def.returnDeletedObject) return replyEncoded(codec.object({ obj: r.obj }, ctx), dbase);
        const target = { ...store.target, group: info.brand === 'k8s' ? upstreamGroup(store.target.group) : store.target.group };
        const done = success(target, info.name, r.obj.metadata.uid ?? '');
        return replyEncoded(codec.value(done, undefined), dbase);
      }
      case 'deletecollection': {
        if (sub !== '' || !def.deleteCollection) throw methodNotAllowed();
        const o = await deleteOptions(req, q, this.opts.unsafeDelete);
        o.user = requestUser(req);
        o.auditAnnotations = requestAnnotations(req);
        o.warnings = [];
        validateListOptions(q);
        const lo = listOptions(q, store);
        const codec = respond(false);
        const r = await store.deleteCollection(info.namespace, lo, o);
        const list = {
          kind: def.listKind,
          apiVersion: view.apiVersion,
          metadata: { resourceVersion: String(r.revision) },
          items: r.items.map(view.obj),
        };
        return replyEncoded(codec.value(list, `${def.schema}List`), { ...base, warnings: o.warnings });
      }
      default:
        throw methodNotAllowed();
    }
  }

  /** A list: streamed when long (or when the codec pool pays), else written whole by the codec. */
  private encodeList(
    store: ResourceStore,
    ctx: EncodeContext,
    r: ListResult,
    codec: MediaCodec,
    o: ReplyOptions,
  ): Response | Promise<Response> {
    const meta: Record<string, unknown> = { resourceVersion: String(r.revision) };
    if (r.continueToken) meta.continue = r.continueToken;
    if (r.remainingItemCount !== undefined) meta.remainingItemCount = r.remainingItemCount;
    const def = store.def;
    const listed = r.items;
    const count = listed.length;
    const items: ListItems = {
      count,
      key: (i) => (listed[i] as StoredObject).key,
      value: (i) => {
        const o = listed[i] as StoredObject;
        return o.served ?? o.value;
      },
      rv: (i) => (listed[i] as StoredObject).rv,
      size: (i) => {
        const o = listed[i] as StoredObject;
        return o.size ?? o.value.length;
      },
      held: (i) => {
        const o = listed[i] as StoredObject;
        return o.servedHeld ?? o.heldValue ?? o.value;
      },
      text: (i) => (listed[i] as StoredObject).text,
      obj: (i) => (listed[i] as StoredObject).obj,
    };
    // ?pretty answers are written whole.
    const stream = o.pretty ? undefined : codec.stream;
    if (stream && !writtenWhole(stream.media, items)) {
      const pool = this.opts.codecPool?.supports(def.schema, def.storageVersion) === true ? this.opts.codecPool : undefined;
      const pooled = pool !== undefined && poolPays(stream.media, o.gzip === true, items);
      if (pooled || count >= STREAM_MIN_ITEMS) {
        const inline = inlineEncoder(stream, { view: ctx.view, columns: def.columns });
        return replyListStream({
          codec: stream,
          ctx,
          meta,
          items,
          // While no other request comes in, JSON's chunks go inline (they cost this thread
          // little more than sent: POOL_MIN_BYTES), the others' every other one (both cores).
          encoder: pooled
            ? (stream.media === 'json' ? adaptiveEncoder : sharedEncoder)(
                inline,
                pool.encoder(def.group, def.version, ctx.view.brand),
                contention(),
              )
            : inline,
          reply: o,
        });
      }
    }
    // The same whole list of the same state, in plain JSON: encoded once (list-memo.ts).
    if (r.state !== undefined && stream?.media === 'json') {
      const key = `${r.state}|${def.listKind}|${ctx.view.apiVersion}|${ctx.view.brand}`;
      return replyEncoded(
        this.listMemo.get(key, () => codec.list(meta, items, ctx)),
        o,
      );
    }
    return replyEncoded(codec.list(meta, items, ctx), o);
  }
}

/** DeleteOptions from the body (optional) and the query. */
async function deleteOptions(req: Request, q: URLSearchParams, unsafeDeleteGate: boolean): Promise<DeleteOptions> {
  const w = writeOptions(q);
  let body: Record<string, unknown> = {};
  const text = await readBody(req);
  if (text.trim() !== '') {
    const v = ((req.headers.get('content-type') ?? '').includes('yaml') ? decodeYaml : decodeJson)(text);
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

/** A computed object as a list item (no revision: it is not stored). */
function computedItem(key: string, obj: Obj): StoredObject {
  const text = JSON.stringify(obj);
  return { key, value: new TextEncoder().encode(text), rv: 0, text, obj };
}
