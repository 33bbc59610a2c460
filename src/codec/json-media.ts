/**
 * The JSON and YAML encodings (src/codec/media.ts). JSON serves stored objects as their stored
 * text (src/codec/stored.ts), with the resourceVersion spliced in and never parsed: a GET is the
 * stored text, a LIST in the svc spelling is the stored bytes copied into one buffer, a watch's
 * initial events are the stored bytes written between the event's fixed parts. `?pretty=true`
 * answers are parsed and indented. YAML is written from objects, with the reference's YAML 1.1
 * scalar rules. Watches asking for YAML get JSON events, as they always have here.
 */
import YAML from 'yaml';
import { isObject, type Obj } from '../api/meta';
import { badRequest } from '../api/status';
import type { BrandView } from './brand-view';
import { findDuplicateKeys } from './json-dups';
import type { Encoded, ListItems, MediaCodec, ObjectInput, StreamCodec, WatchCodec } from './media';
import { decodeStored, storedJsonChunks, storedListJson, storedText, storedTextAt, writtenText } from './stored';
import { stringifyObject } from './stringify';

export const JSON_MEDIA_TYPE = 'application/json';
export const YAML_MEDIA_TYPE = 'application/yaml';

const enc = new TextEncoder();
const utf8 = new TextDecoder();

/**
 * JSON text of an answer, ending with a newline as Go's encoder writes every answer of the
 * reference (clients compare these bytes); indented when `pretty`. API objects keep stringify's
 * fast path.
 */
export function jsonText(v: unknown, pretty: boolean): string {
  return pretty ? `${JSON.stringify(v, null, 2)}\n` : `${isObject(v) ? stringifyObject(v as Obj) : JSON.stringify(v)}\n`;
}

/**
 * YAML text. YAML 1.1 scalar rules, as the reference's go-yaml: strings such as "on", "yes", "y"
 * or an RFC 3339 time are quoted, so YAML 1.1 readers (kubectl, client-go) keep them strings.
 * Objects sharing a value (interned managedFields) are written out in full: no anchors/aliases.
 */
export function yamlText(v: unknown): string {
  return YAML.stringify(v, { version: '1.1', aliasDuplicateObjects: false });
}

/** A JSON request body; duplicate fields are collected. Malformed JSON is 400. */
export function decodeJson(text: string, duplicates?: string[]): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
    // The scan also refuses nesting deeper than the reference's decoder takes (every later
    // pass over the object recurses).
    const dups = findDuplicateKeys(text);
    if (duplicates) duplicates.push(...dups);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  return v;
}

/** A YAML request body (one document; JSON text goes to the JSON parser). Malformed YAML is 400. */
export function decodeYaml(text: string, duplicates?: string[]): unknown {
  // YAML is a superset of JSON; JSON bodies go through the faster parser.
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) return decodeJson(text, duplicates);
  try {
    const docs = YAML.parseAllDocuments(text, { uniqueKeys: false });
    if (docs.length === 0) return null;
    const d = docs[0];
    if (!d || d.errors.length > 0) throw new Error(d?.errors[0]?.message ?? 'invalid YAML');
    if (docs.length > 1) throw new Error('expected a single YAML document');
    if (duplicates) {
      for (const e of YAML.parseDocument(text).errors) {
        if (e.code === 'DUPLICATE_KEY') duplicates.push(`line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`);
      }
    }
    return d.toJSON();
  } catch (e) {
    throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
  }
}

const textOf = (body: string | Uint8Array): string => (typeof body === 'string' ? body : utf8.decode(body));

/** The object of an input, in the request's spelling. */
export function objectOf(input: ObjectInput, view: BrandView): Obj {
  return view.obj('kv' in input ? decodeStored(input.kv) : input.obj);
}

/** The objects of a list, in the request's spelling. */
export function objectsOf(items: ListItems, view: BrandView): Obj[] {
  const objs: Obj[] = new Array(items.count);
  for (let i = 0; i < items.count; i++) objs[i] = items.obj(i);
  return view.brand === 'svc' ? objs : objs.map(view.obj);
}

const json = (body: string | Uint8Array): Encoded => ({ body, contentType: JSON_MEDIA_TYPE });

/** A watch event line is eventHead(type), the object's text, EVENT_END. */
const eventHead = (type: string): string => `{"type":"${type}","object":`;
const EVENT_END = '}\n';
/** The same parts as bytes, for initial events written around the stored bytes. */
const ADDED_HEAD = Buffer.from(eventHead('ADDED'));
const EVENT_TAIL = Buffer.from(EVENT_END);

/** A JSON watch event line carrying `text` (an object's or a Status's JSON). */
export function jsonEventLine(type: string, text: string): string {
  return `${eventHead(type)}${text}${EVENT_END}`;
}

/** Watch events as JSON lines: `{"type": ..., "object": ...}\n`. */
export const JSON_WATCH: WatchCodec = {
  contentType: JSON_MEDIA_TYPE,
  idle: ' ',
  shareKey: 'json',
  event: (type, e, ctx) => jsonEventLine(type, ctx.view.text(e.text)),
  initial(c, ctx, write) {
    if (ctx.view.brand === 'svc') {
      // The stored bytes go out as they are, with the resourceVersion spliced in, between the
      // event's two fixed parts: no per-watcher copy of the object is built (100 watches reading
      // 1,500 2 KB objects made 300 MB of short-lived strings when each built its own).
      const [before, field, after] = storedJsonChunks(c.key, c.value, c.rv);
      write(ADDED_HEAD);
      write(before);
      write(field);
      write(after);
    } else {
      write(ADDED_HEAD);
      write(ctx.view.text(c.text));
    }
    return EVENT_TAIL;
  },
  bookmark: (b) => jsonEventLine('BOOKMARK', JSON.stringify(b)),
  error: (status) => jsonEventLine('ERROR', JSON.stringify(status)),
};

/** Long JSON lists: the stored texts of each chunk joined by commas. */
const JSON_STREAM: StreamCodec = {
  media: 'json',
  contentType: JSON_MEDIA_TYPE,
  sizedHead: false,
  spec: (ctx) => ({ media: 'json', listDef: `${ctx.kind.schema}List`, itemDef: ctx.kind.schema }),
  parts(meta, ctx) {
    const whole = JSON.stringify({ kind: ctx.kind.listKind, apiVersion: ctx.view.apiVersion, metadata: meta, items: [] });
    return { head: enc.encode(whole.slice(0, -2)), tail: enc.encode(']}\n') }; // ...,"items":[  ]}\n
  },
  chunk(items, spec, ctx) {
    let text = '';
    for (let i = 0; i < items.count; i++) {
      const t = ctx.view.text(storedTextAt(items.key(i), items.value(i), items.rv(i)));
      text += i === 0 && !spec.comma ? t : `,${t}`;
    }
    return enc.encode(text);
  },
};

/** JSON answers; `pretty` (?pretty=true) indents them and is never streamed. */
export function jsonCodec(pretty: boolean): MediaCodec {
  return {
    binary: false,
    object(input, ctx) {
      // A GET: the stored text; a write's result: the text just stored (no second stringify).
      const text = 'kv' in input ? storedText(input.kv) : writtenText(input.obj);
      if (text === undefined) return json(jsonText(objectOf(input, ctx.view), pretty));
      const t = ctx.view.text(text);
      return json(pretty ? jsonText(JSON.parse(t), true) : `${t}\n`);
    },
    list(meta, items, ctx) {
      const { kind, view } = ctx;
      if (pretty)
        return json(jsonText({ kind: kind.listKind, apiVersion: view.apiVersion, metadata: meta, items: objectsOf(items, view) }, true));
      const head = `{"kind":"${kind.listKind}","apiVersion":"${view.apiVersion}","metadata":${JSON.stringify(meta)},"items":[`;
      // Stored JSON as it is, in bytes: no parse, no stringify, no string per item.
      if (view.brand === 'svc') return json(storedListJson(head, items, ']}\n'));
      const parts: string[] = new Array(items.count);
      for (let i = 0; i < items.count; i++) parts[i] = view.text(items.text(i));
      return json(`${head}${parts.join(',')}]}\n`);
    },
    value: (v) => json(jsonText(v, pretty)),
    error: () => undefined,
    watch: JSON_WATCH,
    stream: pretty ? undefined : JSON_STREAM,
    decode: (body, _def, duplicates) => decodeJson(textOf(body), duplicates),
  };
}

/** YAML answers (lists lead with apiVersion and items, as they always have here). */
export function yamlCodec(): MediaCodec {
  const yaml = (v: unknown): Encoded => ({ body: yamlText(v), contentType: YAML_MEDIA_TYPE });
  return {
    binary: false,
    object: (input, ctx) => yaml(objectOf(input, ctx.view)),
    list: (meta, items, ctx) =>
      yaml({ apiVersion: ctx.view.apiVersion, items: objectsOf(items, ctx.view), kind: ctx.kind.listKind, metadata: meta }),
    value: (v) => yaml(v),
    error: () => undefined,
    watch: JSON_WATCH,
    stream: undefined,
    decode: (body, _def, duplicates) => decodeYaml(textOf(body), duplicates),
  };
}
