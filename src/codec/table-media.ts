/**
 * The Table and PartialObjectMetadata encodings (src/codec/media.ts): JSON in another shape,
 * asked for with `Accept: application/json;as=Table;v=v1;g=meta.svc.io` (or meta.k8s.io, or
 * as=PartialObjectMetadata / PartialObjectMetadataList). The answer's media type carries the
 * shape and the group and version the client asked for. Rows come from the kind's columns
 * (src/codec/table.ts); ages count to the request's clock. Their watches: Table rows per event
 * (built per watch, as ages change), PartialObjectMetadata as plain JSON events.
 */

import type { Obj } from '../api/meta';
import { decodeJson, JSON_MEDIA_TYPE, JSON_WATCH, jsonEventLine, jsonText, objectOf, objectsOf } from './json-media';
import type { EncodeContext, Encoded, MediaCodec, StreamCodec, WatchCodec } from './media';
import { decodeStoredItems } from './stored';
import { partialObjectMetadata, tableHead, tableRows, toTable } from './table';

const enc = new TextEncoder();
const utf8 = new TextDecoder();

/** The media type parameters of a Table or metadata answer: the shape and the group/version asked for. */
const asParams = (as: string, group: string, version: string): string => `;as=${as};v=${version};g=${group}`;

const decode = (body: string | Uint8Array, duplicates: string[]): unknown =>
  decodeJson(typeof body === 'string' ? body : utf8.decode(body), duplicates);

/** Tables of group `group` (meta.svc.io or meta.k8s.io) and `version`; `pretty` indents them and is never streamed. */
export function tableCodec(group: string, version: string, pretty: boolean): MediaCodec {
  /** A watch event's Table: the object's row, at the object's resourceVersion. */
  const rowOf = (o: Obj, ctx: EncodeContext): string =>
    JSON.stringify(
      toTable(ctx.kind, [ctx.view.obj(o)], { resourceVersion: o.metadata.resourceVersion }, group, ctx.now(), ctx.includeObject),
    );
  const contentType = `${JSON_MEDIA_TYPE}${asParams('Table', group, version)}`;
  const table = (t: object): Encoded => ({ body: jsonText(t, pretty), contentType });
  const watch: WatchCodec = {
    ...JSON_WATCH,
    shareKey: undefined,
    // One row per event, in the request's spelling of the kind (an included object carries it).
    event: (type, e, ctx) => jsonEventLine(type, rowOf(e.obj, ctx)),
    initial: (c, ctx) => jsonEventLine('ADDED', rowOf(c.obj, ctx)),
  };
  const stream: StreamCodec = {
    media: 'table',
    contentType,
    sizedHead: false,
    spec: (ctx) => ({
      media: 'table',
      listDef: `${ctx.kind.schema}List`,
      itemDef: ctx.kind.schema,
      table: { kind: ctx.kind.kind, group, nowMs: ctx.now(), include: ctx.includeObject },
    }),
    parts(meta, ctx) {
      const whole = JSON.stringify({ ...tableHead(ctx.kind.columns, meta, group), rows: [] });
      return { head: enc.encode(whole.slice(0, -2)), tail: enc.encode(']}\n') }; // ...,"rows":[  ]}\n
    },
    chunk(items, spec, ctx) {
      const t = spec.table;
      if (!t) throw new Error('bug: a Table chunk without its table');
      const rows = JSON.stringify(tableRows(ctx.columns, decodeStoredItems(items).map(ctx.view.obj), t.group, t.nowMs, t.include));
      return enc.encode(spec.comma ? `,${rows.slice(1, -1)}` : rows.slice(1, -1));
    },
  };
  return {
    binary: false,
    object: (input, ctx) => table(toTable(ctx.kind, [objectOf(input, ctx.view)], {}, group, ctx.now(), ctx.includeObject)),
    list: (meta, items, ctx) => table(toTable(ctx.kind, objectsOf(items, ctx.view), meta, group, ctx.now(), ctx.includeObject)),
    value: (v) => ({ body: jsonText(v, pretty), contentType: JSON_MEDIA_TYPE }),
    error: () => undefined,
    watch,
    stream: pretty ? undefined : stream,
    decode: (body, _def, duplicates) => decode(body, duplicates),
  };
}

/** PartialObjectMetadata (one object) and PartialObjectMetadataList (a list) of group `group`. */
export function metadataCodec(group: string, version: string, pretty: boolean): MediaCodec {
  const one = `${JSON_MEDIA_TYPE}${asParams('PartialObjectMetadata', group, version)}`;
  const many = `${JSON_MEDIA_TYPE}${asParams('PartialObjectMetadataList', group, version)}`;
  return {
    binary: false,
    object: (input, ctx) => ({ body: jsonText(partialObjectMetadata(objectOf(input, ctx.view), group), pretty), contentType: one }),
    list: (meta, items, ctx) => ({
      body: jsonText(
        {
          kind: 'PartialObjectMetadataList',
          apiVersion: `${group}/v1`,
          metadata: meta,
          items: objectsOf(items, ctx.view).map((x) => partialObjectMetadata(x, group)),
        },
        pretty,
      ),
      contentType: many,
    }),
    value: (v) => ({ body: jsonText(v, pretty), contentType: JSON_MEDIA_TYPE }),
    error: () => undefined,
    watch: JSON_WATCH,
    stream: undefined,
    decode: (body, _def, duplicates) => decode(body, duplicates),
  };
}
