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
import { StatusError } from '../api/status';
import type { BrandView } from './brand-view';
import { goJsonSyntaxError } from './go-json-syntax';
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

/**
 * A request body that does not parse: 400. `parseError` is the parser's error as the reference's Go
 * parser words it (`unexpected end of JSON input`, `yaml: line 1: mapping values are not allowed
 * in this context`); the message is the reference's serializer's error for a body whose kind is
 * unknown. A handler that knows what it decodes rewords it (the kind expected, a patch).
 */
export class BodySyntaxError extends StatusError {
  constructor(
    readonly format: 'json' | 'yaml' | 'protobuf',
    readonly parseError: string,
    readonly raw: string | Uint8Array,
  ) {
    super(
      400,
      'BadRequest',
      format === 'json'
        ? `couldn't get version/kind; json parse error: ${parseError}`
        : format === 'yaml'
          ? `error converting YAML to JSON: ${parseError}`
          : parseError,
    );
  }
}

/** A JSON request body; duplicate fields are collected. Malformed JSON is 400 (BodySyntaxError). */
export function decodeJson(text: string, duplicates?: string[]): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new BodySyntaxError('json', goJsonSyntaxError(text) ?? (e as Error).message, text);
  }
  // The scan also refuses nesting deeper than the reference's decoder takes (every later
  // pass over the object recurses).
  let dups: string[];
  try {
    dups = findDuplicateKeys(text);
  } catch (e) {
    throw new BodySyntaxError('json', (e as Error).message, text);
  }
  if (duplicates) duplicates.push(...dups);
  return v;
}

/**
 * How the duplicate keys of a YAML body are reported among `duplicates`: one entry, go-yaml's
 * strict error (`yaml: unmarshal errors:\n  line 5: key "name" already set in map`), where a JSON
 * body has one field path per duplicate.
 */
export const YAML_DUPLICATES = 'yaml: unmarshal errors:';

/** go-yaml's words for the parse errors that have a counterpart here. */
const GO_YAML_ERRORS: Record<string, string> = {
  BLOCK_AS_IMPLICIT_KEY: 'mapping values are not allowed in this context',
  TAB_AS_INDENT: 'found character that cannot start any token',
};

/** A parse error as go-yaml words it: `yaml: line N: ...` (the text where it has no counterpart). */
function goYamlError(e: YAML.YAMLError): string {
  const line = e.linePos?.[0]?.line;
  const text = GO_YAML_ERRORS[e.code] ?? e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  return line === undefined ? `yaml: ${text}` : `yaml: line ${line}: ${text}`;
}

/** A YAML request body (one document; JSON text goes to the JSON parser). Malformed YAML is 400. */
export function decodeYaml(text: string, duplicates?: string[]): unknown {
  // YAML is a superset of JSON; JSON bodies go through the faster parser (and malformed ones
  // through the YAML parser, for its error).
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return decodeJson(text, duplicates);
    } catch (e) {
      if (!(e instanceof BodySyntaxError)) throw e;
    }
  }
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: false });
  if (docs.length === 0) return null;
  const d = docs[0];
  if (!d || d.errors.length > 0) throw new BodySyntaxError('yaml', d?.errors[0] ? goYamlError(d.errors[0]) : 'yaml: invalid YAML', text);
  if (docs.length > 1) throw new BodySyntaxError('yaml', 'yaml: expected a single YAML document', text);
  if (duplicates) {
    // One entry for all of them, as go-yaml's strict decoder reports them (YAML_DUPLICATES).
    const lines: string[] = [];
    for (const e of YAML.parseDocument(text).errors) {
      if (e.code !== 'DUPLICATE_KEY') continue;
      const key = /^(?:"([^"]*)"|'([^']*)'|([^:\n]*?))\s*:/.exec(text.slice(e.pos[0]));
      lines.push(`  line ${e.linePos?.[0]?.line ?? '?'}: key "${key?.[1] ?? key?.[2] ?? key?.[3] ?? ''}" already set in map`);
    }
    if (lines.length > 0) duplicates.push(`${YAML_DUPLICATES}\n${lines.join('\n')}`);
  }
  try {
    return d.toJSON();
  } catch (e) {
    // Aliases resolved while building the value, worded as go-yaml's.
    const m = (e as Error).message;
    const anchor = /^Unresolved alias \(the anchor must be set before the alias\): (.*)$/.exec(m);
    const why = anchor
      ? `yaml: unknown anchor '${anchor[1]}' referenced`
      : m.startsWith('Excessive alias count')
        ? 'yaml: document contains excessive aliasing'
        : `yaml: ${m}`;
    throw new BodySyntaxError('yaml', why, text);
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
    // The stored bytes as they are, joined in bytes (as a whole list is): no text per item.
    if (ctx.view.brand === 'svc') return storedListJson(spec.comma ? ',' : '', items, '');
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
